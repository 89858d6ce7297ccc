/*
 * Count the distinct values among N pseudo-random integers by sorting
 * first (O(n log n)); same input and output as distinct_naive.c.
 *
 * usage: distinct_sorted N
 */
#include <stdio.h>
#include <stdlib.h>

static int cmp(const void *a, const void *b)
{
	unsigned x = *(const unsigned *)a, y = *(const unsigned *)b;
	return (x > y) - (x < y);
}

int main(int argc, char **argv)
{
	long n = argc > 1 ? atol(argv[1]) : 20000;
	if (n <= 0) {
		fprintf(stderr, "usage: distinct_sorted N\n");
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
	qsort(v, (size_t)n, sizeof(*v), cmp);
	long distinct = n > 0;
	for (long i = 1; i < n; i++)
		distinct += v[i] != v[i - 1];
	printf("%ld\n", distinct);
	free(v);
	return 0;
}
