/*
 * A calibrated CPU workload for the trust benchmarks: `busy ITERATIONS`
 * spins a data-dependent integer loop ITERATIONS times, so "5% more work" is
 * exactly 1.05 times the iterations, with no I/O and no allocation.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

int main(int argc, char **argv)
{
	if (argc != 2) {
		fprintf(stderr, "usage: busy ITERATIONS\n");
		return 2;
	}
	uint64_t n = strtoull(argv[1], NULL, 10);
	volatile uint64_t sink;
	uint64_t x = 88172645463325252ULL;
	for (uint64_t i = 0; i < n; i++) {
		x ^= x << 13;
		x ^= x >> 7;
		x ^= x << 17;
	}
	sink = x;
	(void)sink;
	return 0;
}
