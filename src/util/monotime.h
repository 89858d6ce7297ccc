/* Seconds on the monotonic clock: for elapsed times and deadlines. */
#ifndef PL_MONOTIME_H
#define PL_MONOTIME_H

#include <time.h>

static inline double pl_now_s(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

#endif
