/*
 * The deterministic measure: the instructions a command executes, counted
 * by running it under Valgrind's cachegrind (a simulated CPU) with its
 * child processes followed, as iai-callgrind and CodSpeed's "CPU
 * simulation" do for CI. Wall time on a shared machine varies by 10-40%
 * from run to run; these counts vary by less than 0.01%, so a comparison
 * can be decided where the wall time cannot. With the cache simulated too
 * (--sim cycles), an estimate of the cycles: every access costs 1, an
 * access that misses L1 but hits the last level 5 more, one that goes to
 * memory 35 (iai-callgrind's weights), over a fixed cache so that two
 * machines estimate alike. Its source is always said: no one must take it
 * for a hardware counter. See docs/bench.md "The deterministic measure".
 */
#ifndef PL_SIMCOUNT_H
#define PL_SIMCOUNT_H

#include <stddef.h>

#include "benchrun.h"
#include "error.h"

enum pl_sim_mode {
	PL_SIM_AUTO = 0,     /* simulate where the wall time is over the noise gate */
	PL_SIM_OFF,	     /* never */
	PL_SIM_INSTRUCTIONS, /* always: instructions (no cache simulation) */
	PL_SIM_CYCLES,	     /* always, with the cache simulated: estimated cycles */
	PL_SIM_EVIDENCE,     /* the loop's baseline: always where affordable, so
			      * that a later turn on a noisy machine can decide */
};

/* "auto", "off", "instructions" or "cycles": the mode, or -1. */
int pl_sim_parse_mode(const char *s);
const char *pl_sim_mode_name(int mode);

#define PL_SIM_RUNS_DEFAULT 3
/* auto leaves out a command one simulated run of which would take longer */
#define PL_SIM_AUTO_MAX_S 120.0
/* where the counts can decide, the wait for a quiet CPU bench makes first
 * (--wait-quiet, 5 s otherwise) */
#define PL_SIM_WAIT_QUIET_S 1.0
/* the slowdown under cachegrind that estimate assumes: measured 10x (a C
 * loop), 22x (a torch training script), 27-32x (Python scripts whose
 * start-up dominates) */
#define PL_SIM_SLOWDOWN 40.0
/* a simulated run's time limit: --timeout times this (the cache simulated
 * can cost 100x in memory-bound code) */
#define PL_SIM_TIMEOUT_FACTOR 100.0
/* How long a command's wrappers may run natively before the program they
 * start is found (os/execchain.h); past it the command is simulated as given. */
#define PL_SIM_RESOLVE_S 10.0

/* The totals of a cachegrind run, every process of it added up. */
struct pl_sim_counts {
	double ir, dr, dw;	  /* instructions, data reads and writes */
	double i1mr, d1mr, d1mw;  /* L1 misses */
	double ilmr, dlmr, dlmw;  /* last-level misses */
	int cache;		  /* the cache was simulated (the misses are known) */
};

/* Add the totals (its "summary:" line, by its "events:" line) of one
 * cachegrind output file's text to c. PL_EINPUT, with why in err, where
 * the text has neither or a malformed one. */
int pl_sim_parse(const char *text, struct pl_sim_counts *c, struct pl_error *err);

/* Estimated cycles: L1 hits + 5 x last-level hits + 35 x memory accesses. */
double pl_sim_est_cycles(const struct pl_sim_counts *c);

/* 1 and Valgrind's version ("valgrind-3.19.0") where it can run, else 0. */
int pl_sim_available(char *version, size_t len);

/* Whether b's wall time can decide: measured and within the noise gate. */
int pl_sim_timing_decides(const struct pl_bench *b);

/* The comparison of two deterministic measurements: the ratio of the
 * medians, its interval from the extremes (the least and the most either
 * could be), and faster or slower only where that whole interval lies
 * beyond +-1%. p is NAN: no test of samples applies to counts that do not
 * vary. */
void pl_sim_compare(const double *cand, size_t nc, const double *ref, size_t nr,
		    struct pl_comparison *out);

/* After pl_bench_finish: simulate the benchmarks that run->cfg.sim asks
 * for (cfg.sim_runs executions each, several at once where the hooks
 * allow: the counts do not depend on the load), fill their sim_* fields,
 * and compare on the simulated dimension where a comparison's wall time
 * cannot decide. Not simulating (Valgrind missing, too slow for auto) is
 * not an error: b->sim_why says why. PL_EINTR, PL_EFAILED (a command or
 * hook failed under Valgrind: err says how), PL_ESYS. */
int pl_sim_measure(struct pl_bench_run *run, struct pl_error *err);

#endif
