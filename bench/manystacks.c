/*
 * A program whose samples fall in a million distinct stacks (issue #18's
 * limit case for profile): for every k below 2^BITS it walks BITS calls
 * deep, calling go_a or go_b at each level by k's bits, and spins ITERS
 * iterations in the last one (a function with a frame of its own, so that
 * a frame-pointer walk sees every level). Built with frame pointers and
 * without sibling calls, every path is its own stack: 2^BITS of them.
 *   manystacks BITS ITERS
 */
#include <stdio.h>
#include <stdlib.h>

static volatile unsigned long sink;
static long iters = 200;

static void go_a(unsigned long k, int d);
static void go_b(unsigned long k, int d);

static inline __attribute__((always_inline)) void walk(unsigned long k, int d)
{
	if (d == 0) /* the bottom: spin in the last go_a or go_b */
		for (long i = 0; i < iters; i++)
			sink += (unsigned long)i;
	else if (k & 1)
		go_a(k >> 1, d - 1);
	else
		go_b(k >> 1, d - 1);
}

static void __attribute__((noinline)) go_a(unsigned long k, int d)
{
	walk(k, d);
	sink++;
}

static void __attribute__((noinline)) go_b(unsigned long k, int d)
{
	walk(k, d);
	sink += 2;
}

int main(int argc, char **argv)
{
	int bits = argc > 1 ? atoi(argv[1]) : 20;
	if (argc > 2)
		iters = atol(argv[2]);
	if (bits < 1 || bits > 40 || iters < 1) {
		fprintf(stderr, "usage: manystacks BITS ITERS\n");
		return 2;
	}
	for (unsigned long k = 0; k < (1UL << bits); k++)
		walk(k, bits);
	printf("%lu\n", sink);
	return 0;
}
