/*
 * Count the distinct values among N pseudo-random integers by sorting them
 * in place first (heapsort: O(n log n), no extra memory), then counting the
 * value changes; same input and output as distinct_naive.c.
 *
 * usage: distinct_sorted N
 */
#include <stdio.h>
#include <stdlib.h>

static void sift_down(unsigned *v, long start, long end)
{
	long root = start;
	while (2 * root + 1 <= end) {
		long child = 2 * root + 1;
		if (child + 1 <= end && v[child] < v[child + 1])
			child++;
		if (v[root] >= v[child])
			return;
		unsigned t = v[root];
		v[root] = v[child];
		v[child] = t;
		root = child;
	}
}

static void heapsort_u(unsigned *v, long n)
{
	for (long start = n / 2 - 1; start >= 0; start--)
		sift_down(v, start, n - 1);
	for (long end = n - 1; end > 0; end--) {
		unsigned t = v[0];
		v[0] = v[end];
		v[end] = t;
		sift_down(v, 0, end - 1);
	}
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
	heapsort_u(v, n);
	long distinct = n > 0;
	for (long i = 1; i < n; i++)
		distinct += v[i] != v[i - 1];
	printf("%ld\n", distinct);
	free(v);
	return 0;
}
