/*
 * The physical floor for a benchmark harness: posix_spawn + wait4 in a loop,
 * timing each run with the monotonic clock and nothing else. bench/overhead.sh
 * compares perfloop and hyperfine against it.
 *
 * usage: spawnloop RUNS CMD [ARG...]
 * prints: runs=N median_s=X mean_s=Y total_s=Z
 */
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <time.h>

extern char **environ;

static double now_s(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static int cmp(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return (x > y) - (x < y);
}

int main(int argc, char **argv)
{
	if (argc < 3) {
		fprintf(stderr, "usage: spawnloop RUNS CMD [ARG...]\n");
		return 2;
	}
	int runs = atoi(argv[1]);
	if (runs < 1)
		return 2;
	double *w = malloc((size_t)runs * sizeof(*w));
	double sum = 0, start = now_s();
	for (int i = 0; i < runs; i++) {
		pid_t pid;
		int st;
		double t0 = now_s();
		if (posix_spawnp(&pid, argv[2], NULL, NULL, argv + 2, environ) != 0) {
			perror("posix_spawn");
			return 1;
		}
		wait4(pid, &st, 0, NULL);
		w[i] = now_s() - t0;
		sum += w[i];
	}
	double total = now_s() - start;
	qsort(w, (size_t)runs, sizeof(*w), cmp);
	double med = runs % 2 ? w[runs / 2] : (w[runs / 2 - 1] + w[runs / 2]) / 2;
	printf("runs=%d median_s=%.9f mean_s=%.9f total_s=%.6f\n", runs, med, sum / runs, total);
	free(w);
	return 0;
}
