/*
 * The floor under any sampler's CPU use on this machine: a loop that only
 * sleeps to absolute deadlines (clock_nanosleep(TIMER_ABSTIME)) at RATE Hz
 * for SECONDS, as perfloop profile's loop does, and reads nothing. Prints
 * its own CPU time as a share of one core.
 *     ticker RATE SECONDS
 */
#include <stdio.h>
#include <stdlib.h>
#include <sys/resource.h>
#include <time.h>

int main(int argc, char **argv)
{
	double rate = argc > 1 ? atof(argv[1]) : 10000, secs = argc > 2 ? atof(argv[2]) : 3;
	if (rate <= 0 || secs <= 0)
		return 2;
	long period = (long)(1e9 / rate), n = (long)(rate * secs);
	struct timespec t;
	clock_gettime(CLOCK_MONOTONIC, &t);
	for (long i = 0; i < n; i++) {
		t.tv_nsec += period;
		while (t.tv_nsec >= 1000000000L) {
			t.tv_nsec -= 1000000000L;
			t.tv_sec++;
		}
		clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &t, NULL);
	}
	struct rusage ru;
	getrusage(RUSAGE_SELF, &ru);
	double cpu = (double)ru.ru_utime.tv_sec + (double)ru.ru_utime.tv_usec * 1e-6 +
		     (double)ru.ru_stime.tv_sec + (double)ru.ru_stime.tv_usec * 1e-6;
	printf("%.1f\n", 100.0 * cpu / secs);
	return 0;
}
