/*
 * More threads ready to run than the job has CPUs: read from the kernel.
 *
 * A PyTorch job sizes its intra-op pool (OpenMP) to the machine's CPUs in
 * every process: with DataLoader workers, several ranks, or an OpenBLAS
 * that starts its own pool, a 2-CPU machine can hold 8 threads ready to
 * run, which then take turns (and spin in OpenMP barriers). No stack
 * shows it. So while a profile runs, the job's threads (the process and
 * its descendants) are counted every 100 ms by their state in
 * /proc/PID/task/TID/stat ('R': running or ready to run), and the mean is
 * set against the CPUs the job may use (its affinity). A mean of 1.25x
 * that (and half a thread more) with more runnable threads than CPUs in
 * 40% of the readings is the finding env.oversubscribed-threads. Measured
 * here (2 CPUs, torch.exp over 4M floats): 8 intra-op threads gave a mean
 * of 3.05 and 55% of readings over 2 (an OpenMP pool sleeps between its
 * parallel regions, so the mean stays well under 8); 2 threads gave 2.0
 * in every reading.
 */
#ifndef PL_RUNQ_H
#define PL_RUNQ_H

#include <sys/types.h>

#include "findings.h"

#define PL_RUNQ_OVER 1.25     /* mean runnable threads per allowed CPU that make the finding */
#define PL_RUNQ_OVER_SHARE 0.4 /* ... with this share of readings over the CPUs */

struct pl_runq {
	int ncpu;		  /* CPUs the job may use (0: not read yet) */
	double sum;		  /* runnable threads, summed over the readings */
	unsigned long readings;	  /* readings with at least one runnable thread */
	unsigned long over;	  /* readings over ncpu runnable */
	unsigned max_threads;	  /* the most threads seen at once */
	double last;		  /* when last read (seconds, the caller's clock) */
};

/* Count the runnable threads of root and its descendants, at most every
 * 100 ms of `now` (seconds). */
void pl_runq_tick(struct pl_runq *q, pid_t root, double now);

/* env.oversubscribed-threads where the readings show it: 1 added, 0 not,
 * -1 out of memory. */
int pl_runq_findings(const struct pl_runq *q, struct pl_findings *out);

#endif
