/*
 * Choosing exactly one candidate from findings (SPEC.md §3): algorithm
 * first, the stop gate, the level-7 guard. Every finding not chosen gets the
 * reason it was passed over, so `select --explain` can show the decision.
 */
#ifndef PL_SELECT_H
#define PL_SELECT_H

#include <stddef.h>

#include "findings.h"

/* complexity_exponent, call_amplification, data_reuse, write_amplification,
 * allocation_churn, multiplicative_paths */
int pl_metric_is_algorithmic(const char *metric_name);

/* The measured data-loading share above which level 7 is never chosen. */
#define PL_DATA_LOADING_SHARE_MAX 0.3

/* Whether a finding names interpreter or framework machinery (Python's
 * import system, the autograd engine's entry points, thread bootstrap and
 * the waits of queues and locks, the interpreter loop itself): where time
 * is spent but nothing to change there. *what says which (static text).
 * Such a finding is context for the work it runs, never the candidate. */
int pl_finding_machinery(const struct pl_finding *f, const char **what);
/* The same for one frame: its function's name and its file. */
int pl_frame_machinery(const char *function, const char *path, const char **what);

/* Whether a finding is a measured bottleneck of a training step (data
 * loading above PL_DATA_LOADING_SHARE_MAX of the step, a straggler rank,
 * a GPU waiting for input): it ranks above any hot function, which is
 * inside the step it slows. */
int pl_finding_step_bottleneck(const struct pl_finding *f);

/* The ranking select uses (<0: a first), for report's order too. */
int pl_select_rank_cmp(const struct pl_finding *a, const struct pl_finding *b);

struct pl_selection {
	long chosen;	   /* index into the findings, -1 for none */
	int stop_gate;	   /* a high-severity algorithmic finding restricts the choice */
	long stop_gate_by; /* the finding that closed the gate */
	char **why;	   /* per finding: why it was passed over (NULL for the chosen) */
	size_t n;
};

int pl_select(const struct pl_findings *f, const char *const *exclude, size_t nexclude,
	      struct pl_selection *out);
void pl_selection_release(struct pl_selection *s);

#endif
