/* profile --alloc's benchmark program (bench/alloc.sh).
 *   sites N:  site_x allocates N MiB in 1 KiB blocks, site_y N/2 MiB in
 *             16 KiB blocks, site_z N/4 MiB in 200 B blocks, each freed at
 *             once: the truth per site for the accuracy check
 *   churn N:  N million allocations of 16 B to 4 KiB (a fixed pseudo-random
 *             sequence) into a ring of 4096 live blocks: allocation-heavy,
 *             for the slowdown */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static volatile char sink;

__attribute__((noinline)) static char *site_x(void)
{
	char *p = malloc(1024);
	p[1] = 1;
	return p;
}
__attribute__((noinline)) static char *site_y(void)
{
	char *p = malloc(16384);
	p[1] = 1;
	return p;
}
__attribute__((noinline)) static char *site_z(void)
{
	char *p = malloc(200);
	p[1] = 1;
	return p;
}

static void run(char *(*f)(void), long n)
{
	for (long i = 0; i < n; i++) {
		char *p = f();
		sink += p[1];
		free(p);
	}
}

int main(int argc, char **argv)
{
	if (argc < 3)
		return 2;
	long n = atol(argv[2]);
	if (strcmp(argv[1], "sites") == 0) {
		run(site_x, n * 1024);
		run(site_y, n * 1024 / 2 / 16);
		run(site_z, n * 1048576L / 4 / 200);
		return 0;
	}
	static char *ring[4096];
	uint64_t x = 88172645463325252ULL;
	for (long i = 0; i < n * 1000000; i++) {
		x ^= x << 13;
		x ^= x >> 7;
		x ^= x << 17;
		size_t k = x & 4095, size = 16 + (x >> 20) % 4080;
		free(ring[k]);
		ring[k] = malloc(size);
		ring[k][0] = 1;
	}
	for (int k = 0; k < 4096; k++)
		free(ring[k]);
	return 0;
}
