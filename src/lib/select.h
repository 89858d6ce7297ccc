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
