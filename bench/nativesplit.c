/*
 * A native program with a known split, for `perfloop profile --mode native`
 * tests and bench/native.sh: main -> run -> phase_X -> middle_X -> deep_X
 * -> leaf_X, two such chains (five deep), the CPU time between them split
 * by the first argument (the share of chain A), for the seconds of CPU
 * time given by the second, or for a fixed number of chunks of work given
 * by the third (for a profiler's slowdown). leaf_b is built without a frame pointer of its own even where
 * the rest has them: the case frame-pointer unwinding gets wrong. The
 * program times itself and prints the truth: {"a_s": .., "b_s": ..}.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

static volatile uint64_t sink;

static double now(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

__attribute__((noinline)) static uint64_t leaf_a(uint64_t n, uint64_t x)
{
	for (uint64_t i = 0; i < n; i++) {
		x ^= x << 13;
		x ^= x >> 7;
		x ^= x << 17;
	}
	return x;
}

__attribute__((noinline, optimize("omit-frame-pointer"))) static uint64_t leaf_b(uint64_t n,
										  uint64_t x)
{
	for (uint64_t i = 0; i < n; i++) {
		x ^= x << 11;
		x ^= x >> 9;
		x ^= x << 19;
	}
	return x;
}

#define CHAIN(X)                                                                                   \
	__attribute__((noinline)) static uint64_t deep_##X(uint64_t n, uint64_t x)                 \
	{                                                                                          \
		uint64_t r = leaf_##X(n, x);                                                       \
		sink += r;                                                                         \
		return r;                                                                          \
	}                                                                                          \
	__attribute__((noinline)) static uint64_t middle_##X(uint64_t n, uint64_t x)               \
	{                                                                                          \
		uint64_t r = deep_##X(n, x + 1);                                                   \
		sink += r;                                                                         \
		return r;                                                                          \
	}                                                                                          \
	__attribute__((noinline)) static uint64_t phase_##X(uint64_t n, uint64_t x)                \
	{                                                                                          \
		uint64_t r = middle_##X(n, x + 1);                                                 \
		sink += r;                                                                         \
		return r;                                                                          \
	}
CHAIN(a)
CHAIN(b)

/* Until `seconds` of CPU time, or `chunks` chunks when that is not 0 (a
 * fixed amount of work, for measuring a profiler's slowdown). */
__attribute__((noinline)) static void run(double share_a, double seconds, long chunks, double *ta,
					  double *tb)
{
	double start = now();
	long done = 0;
	uint64_t x = 88172645463325252ULL, r = 0x9E3779B97F4A7C15ULL;
	*ta = *tb = 0;
	while (chunks ? done++ < chunks : now() - start < seconds) {
		/* chunks of random length (0.05-0.6 ms), so that a sampler's fixed
		 * period cannot fall in step with them */
		r ^= r << 13;
		r ^= r >> 7;
		r ^= r << 17;
		uint64_t chunk = 50000 + r % 550000;
		/* keep the measured split on target: run whichever is behind */
		double total = *ta + *tb;
		if (total == 0 || *ta / total < share_a) {
			double t = now();
			x = phase_a(chunk, x);
			*ta += now() - t;
		} else {
			double t = now();
			x = phase_b(chunk, x);
			*tb += now() - t;
		}
	}
	sink += x;
}

int main(int argc, char **argv)
{
	double share = argc > 1 ? atof(argv[1]) : 0.7;
	double seconds = argc > 2 ? atof(argv[2]) : 2.0;
	long chunks = argc > 3 ? atol(argv[3]) : 0;
	struct timespec t0, t1;
	clock_gettime(CLOCK_MONOTONIC, &t0);
	double ta, tb;
	run(share, seconds, chunks, &ta, &tb);
	clock_gettime(CLOCK_MONOTONIC, &t1);
	printf("{\"a_s\": %.6f, \"b_s\": %.6f, \"wall_s\": %.6f}\n", ta, tb,
	       (double)(t1.tv_sec - t0.tv_sec) + (double)(t1.tv_nsec - t0.tv_nsec) * 1e-9);
	return 0;
}
