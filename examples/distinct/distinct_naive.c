/*
 * Count the distinct values among N pseudo-random integers, the slow way:
 * for each value, scan everything before it (O(n^2)). The demo benchmarks
 * this against distinct_sorted.c, which does the same job in O(n log n).
 *
 * usage: distinct_naive N
 */
#include <stdio.h>
#include <stdlib.h>

int main(int argc, char **argv)
{
	long n = argc > 1 ? atol(argv[1]) : 20000;
	if (n <= 0) {
		fprintf(stderr, "usage: distinct_naive N\n");
		return 2;
	}
	unsigned *v = malloc((size_t)n * sizeof(*v));
	if (!v)
		return 1;
	unsigned x = 12345;
	for (long i = 0; i < n; i++) {
		x = x * 1103515245u + 12345u;
		v[i] = (x >> 8) % (unsigned)(n / 2 + 1);
	}
	long distinct = 0;
	for (long i = 0; i < n; i++) {
		int seen = 0;
		for (long j = 0; j < i; j++) {
			if (v[j] == v[i]) {
				seen = 1;
				break;
			}
		}
		distinct += !seen;
	}
	printf("%ld\n", distinct);
	free(v);
	return 0;
}
