/*
 * profile --memory: the resident set size of the sampled processes, read
 * from /proc/PID/statm at every tick beside the stacks, out of process.
 * Each rise of a process's RSS between two ticks is charged to the stack
 * sampled in it at the second (scalene's idea of a memory-growth profile,
 * done from outside): the stacks that made the memory grow, as a flame
 * graph in KiB. Also the RSS over time (the followed processes' total)
 * and its peak with the stack running when it was reached.
 */
#ifndef PL_MEMTRACK_H
#define PL_MEMTRACK_H

#include <jansson.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "profdata.h"

struct pl_memtrack {
	struct pl_prof growth;	 /* KiB of RSS growth by stack */
	uint32_t *map;		 /* a profile's frame id -> growth's, + 1 (0: none yet) */
	size_t capmap;
	double *t, *rss;	 /* the series: seconds since the start, bytes */
	size_t n, cap;
	double peak_rss, peak_t; /* the largest total sampled, and when */
	char *peak_stack;	 /* the stack charged then ("a;b;c"), or NULL */
	double grown, charged;	 /* bytes of RSS growth seen, and charged to a stack */
	double released;	 /* bytes of RSS given back (falls between ticks): growth
				  * that was a temporary's, RSS churn, not retained */
	/* PSS and USS, from smaps_rollup a few times a second */
	double *rt, *pss, *uss;
	size_t rn, rcap;
	double peak_pss, peak_uss, rollup_last, rollup_rss; /* when last read, the RSS peak then */
};

/* A process's RSS in bytes from /proc/PID/statm (fd kept open in *fd, -1
 * to open it), or -1 once it is gone. */
double pl_memtrack_rss(pid_t pid, int *fd);

/* A process's PSS (its resident pages, each shared one divided among its
 * sharers) and USS (the pages only it maps: what ending it frees), bytes,
 * from /proc/PID/smaps_rollup (Linux 4.14). The kernel walks the page
 * tables to answer: read it a few times a second (pl_memtrack_rollup_due),
 * not at every tick. 0, or -1 when it cannot be read. */
int pl_memtrack_rollup(pid_t pid, double *pss, double *uss);
/* 1 when a PSS/USS reading is due at t (every 0.25 s, and when the RSS
 * peak rose 5% since the last reading), else 0. */
int pl_memtrack_rollup_due(struct pl_memtrack *m, double t);
/* The followed processes' summed PSS and USS at t: 0 or -1 (memory). */
int pl_memtrack_rollup_point(struct pl_memtrack *m, double t, double pss, double uss);

/* bytes of growth charged to the stack ids (root first) of prof; with no
 * stack (n 0) the growth is counted but not charged. 0 or -1 (memory). */
int pl_memtrack_charge(struct pl_memtrack *m, const struct pl_prof *prof, const uint32_t *ids,
		       size_t n, double bytes);

/* bytes of RSS a process gave back between two ticks (its RSS fell) */
void pl_memtrack_release_bytes(struct pl_memtrack *m, double bytes);
/* RSS churn: the growth that rose and fell again before the peak, bytes:
 * every rise summed, less what the peak holds above the first reading
 * (the teardown's falls at exit are not churn). 0 without a series. */
double pl_memtrack_churn(const struct pl_memtrack *m);

/* The total RSS at t seconds (a point every 10 ms at most) and the stack
 * then (for the peak). 0 or -1. */
int pl_memtrack_point(struct pl_memtrack *m, double t, double rss, const struct pl_prof *prof,
		      const uint32_t *ids, size_t n);

/* The stack (root first) running at the peak, when it is known only
 * later (native mode symbolizes at the end). 0 or -1. */
int pl_memtrack_peak_stack(struct pl_memtrack *m, const struct pl_prof *prof, const uint32_t *ids,
			   size_t n);

/* perfloop.memory/1: peak_rss_bytes (sampled) and its time and stack,
 * max_rss_bytes (the kernel's high-water mark of a launched program, or
 * null), grown and charged bytes, the series [[t, rss], ...], the PSS and
 * USS peaks (null where never read) and their series [[t, pss, uss], ...]. */
json_t *pl_memtrack_json(const struct pl_memtrack *m, double max_rss_bytes, const char *title);

void pl_memtrack_release(struct pl_memtrack *m);

#endif
