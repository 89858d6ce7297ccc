/* Fit "n cost" lines (stdin) two ways, for bench/complexity.sh: perfloop's
 * (a constant plus each class, relative errors; the exponent with its 95%
 * interval) and Google Benchmark's BigO (each class alone, plain least
 * squares). Prints: CLASS EXPONENT LO HI BIGO_CLASS */
#include <math.h>
#include <stdio.h>

#include "complexity.h"

int main(void)
{
	double n[256], y[256];
	size_t k = 0;
	while (k < 256 && scanf("%lf %lf", &n[k], &y[k]) == 2)
		k++;
	struct pl_cx_fit f;
	if (pl_cx_fit(n, y, k, &f) < 0)
		return 2;
	printf("%s|%.3f|%.3f|%.3f|%s\n", pl_cx_name(f.best), f.exponent, f.exp_lo, f.exp_hi,
	       pl_cx_name(pl_cx_bigo(n, y, k)));
	return 0;
}
