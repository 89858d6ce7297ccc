/* Programs of known complexity for bench/complexity.sh: the same task,
 * counting the distinct values among n pseudo-random integers, done by
 * sorting (O(n log n)), by comparing every pair (O(n^2)) and by a hash set
 * (O(n), 400 times over); a linear scan (O(n): summing the values, 200
 * times over); and an O(n^3) loop nest (a matrix product of n x n, the
 * second matrix transposed so that every loop reads memory in order).
 * The linear ones repeat their pass so that their sizes stay within the
 * caches, where a step costs the same at every n: past them, a random
 * access costs more as n grows, which no complexity class describes.
 *     cxprog scan|sort|pairs|hash|cubic N */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int cmp(const void *a, const void *b)
{
	unsigned x = *(const unsigned *)a, y = *(const unsigned *)b;
	return (x > y) - (x < y);
}

int main(int argc, char **argv)
{
	if (argc != 3)
		return 2;
	long n = atol(argv[2]);
	if (n <= 0)
		return 2;
	if (!strcmp(argv[1], "cubic")) {
		double *a = calloc((size_t)(n * n), sizeof *a), *b = calloc((size_t)(n * n), sizeof *b);
		double *c = calloc((size_t)(n * n), sizeof *c);
		if (!a || !b || !c)
			return 1;
		for (long i = 0; i < n * n; i++)
			a[i] = b[i] = (double)(i % 7);
		for (long i = 0; i < n; i++) /* b holds the transpose */
			for (long j = 0; j < n; j++) {
				double s = 0;
				for (long k = 0; k < n; k++)
					s += a[i * n + k] * b[j * n + k];
				c[i * n + j] = s;
			}
		printf("%g\n", c[n * n - 1]);
		return 0;
	}
	unsigned *v = malloc((size_t)n * sizeof *v), x = 12345;
	if (!v)
		return 1;
	for (long i = 0; i < n; i++) {
		x = x * 1103515245u + 12345u;
		v[i] = (x >> 8) % (unsigned)(n / 2 + 1);
	}
	long distinct = 0;
	if (!strcmp(argv[1], "scan")) {
		unsigned long sum = 0;
		for (int r = 0; r < 200; r++)
			for (long i = 0; i < n; i++)
				sum += v[i] ^ (unsigned)r;
		distinct = (long)(sum & 1);
	} else if (!strcmp(argv[1], "sort")) {
		qsort(v, (size_t)n, sizeof *v, cmp);
		for (long i = 0; i < n; i++)
			distinct += i == 0 || v[i] != v[i - 1];
	} else if (!strcmp(argv[1], "pairs")) {
		for (long i = 0; i < n; i++) {
			long j = 0;
			while (j < i && v[j] != v[i])
				j++;
			distinct += j == i;
		}
	} else if (!strcmp(argv[1], "hash")) { /* open addressing, load <= 1/2 */
		size_t cap = 1;
		while (cap < (size_t)n * 2)
			cap <<= 1;
		unsigned *t = malloc(cap * sizeof *t);
		for (int r = 0; r < 400; r++) {
			memset(t, 0xff, cap * sizeof *t);
			distinct = 0;
			for (long i = 0; i < n; i++) {
				size_t h = (v[i] * 2654435761u) & (cap - 1);
				while (t[h] != 0xffffffffu && t[h] != v[i])
					h = (h + 1) & (cap - 1);
				if (t[h] == 0xffffffffu) {
					t[h] = v[i];
					distinct++;
				}
			}
		}
	} else {
		return 2;
	}
	printf("%ld\n", distinct);
	return 0;
}
