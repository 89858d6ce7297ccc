/* The machine's speed, watched while bench measures (see speedprobe.c). */
#ifndef PL_SPEEDPROBE_H
#define PL_SPEEDPROBE_H

#include <signal.h>
#include <stddef.h>

/* A probe this much slower than the fastest seen in the run: the CPU was
 * slowed by something outside the measured command. */
#define PL_PROBE_CONTENDED 1.3

struct pl_probe_reading {
	double lat_s; /* a chain of dependent operations: frequency, steal */
	double thr_s; /* independent operations: a busy sibling hyperthread */
};

struct pl_speedprobe {
	struct pl_probe_reading *r; /* every reading, in order */
	size_t n, cap;
	struct pl_probe_reading min; /* the fastest of each kind so far */
	double last_at;		     /* pl_now_s() when the last reading ended */
	int last_contended;
	double waited_s;	/* spent waiting for the CPU to recover */
	size_t waits;		/* waits begun */
	double wait_budget_s;	/* the most pl_speedprobe_wait may spend in all */
};

void pl_speedprobe_init(struct pl_speedprobe *p, double wait_budget_s);
void pl_speedprobe_release(struct pl_speedprobe *p);

/* Time both loops now (about 0.3 ms together) and record the reading. */
struct pl_probe_reading pl_speedprobe_take(struct pl_speedprobe *p);

/* Record a reading made elsewhere (tests). */
void pl_speedprobe_record(struct pl_speedprobe *p, struct pl_probe_reading r);

/* How much slower than the fastest seen a reading is (>= 1), the larger of
 * its two ratios. */
double pl_speedprobe_slowdown(const struct pl_speedprobe *p, struct pl_probe_reading r);

/* Probe, and while the CPU is contended wait (up to max_s, and within the
 * run's budget) for it to recover. Returns the reading it ended with. A
 * recent uncontended reading (under 2 ms old) is reused. */
struct pl_probe_reading pl_speedprobe_wait(struct pl_speedprobe *p, double max_s,
					   const volatile sig_atomic_t *interrupted);

/* The machine's uncontended speed: the 5th percentile of each kind (0 with
 * fewer than 5 readings). Not a quartile: a run contended most of the time
 * has a slow lower quartile, though what it counted ran at the fast speed. */
struct pl_probe_reading pl_speedprobe_fast(const struct pl_speedprobe *p);

#endif
