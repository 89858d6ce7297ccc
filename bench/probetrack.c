/* Does a probe loop track the host's slow phases? For SECONDS, pinned to
 * one CPU: time a dependent xorshift chain and a loop of independent
 * compares (the two loops of src/measure/speedprobe.c, written out here so
 * that the benchmark does not depend on the library), then one run of the
 * command; print one line per run: chain_ms ports_ms run_ms. */
#define _GNU_SOURCE
#include <sched.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static double now(void)
{
	struct timespec t;
	clock_gettime(CLOCK_MONOTONIC, &t);
	return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}

static double chain(void)
{
	volatile uint64_t sink;
	uint64_t x = 88172645463325252ULL;
	double a = now();
	for (int i = 0; i < 100000; i++) {
		x ^= x << 13;
		x ^= x >> 7;
		x ^= x << 17;
	}
	sink = x;
	(void)sink;
	return now() - a;
}

static int data[900];

static double ports(void)
{
	const int *volatile v = data;
	const int *d = v;
	volatile long sink;
	long c = 0;
	double a = now();
	for (int i = 0; i < 900; i++)
		for (int j = 0; j < i; j++)
			c += d[j] == d[i];
	sink = c;
	(void)sink;
	return now() - a;
}

int main(int argc, char **argv)
{
	if (argc < 4) {
		fprintf(stderr, "usage: probetrack CPU SECONDS COMMAND [ARG...]\n");
		return 2;
	}
	cpu_set_t set;
	CPU_ZERO(&set);
	CPU_SET(atoi(argv[1]), &set);
	sched_setaffinity(0, sizeof(set), &set);
	for (int i = 0; i < 900; i++)
		data[i] = (i * 7919) % 4096;
	double end = now() + atof(argv[2]);
	while (now() < end) {
		double c = chain(), p = ports();
		fflush(stdout);
		double a = now();
		pid_t k = fork();
		if (k == 0) {
			if (!freopen("/dev/null", "w", stdout))
				_exit(127);
			execvp(argv[3], argv + 3);
			_exit(127);
		}
		int st;
		waitpid(k, &st, 0);
		printf("%.4f %.4f %.4f\n", c * 1e3, p * 1e3, (now() - a) * 1e3);
	}
	return 0;
}
