/*
 * The acceptance rules of `verify` (SPEC.md §3), each a function that
 * returns its outcome and the numbers behind it, and the verdict they add up
 * to: accept, reject, or no feasible win. `perfloop.verdict/1` carries all
 * of it (docs/schemas/verdict-1.md).
 */
#ifndef PL_VERDICT_H
#define PL_VERDICT_H

#include <jansson.h>

#include "error.h"

#define PL_VERDICT_SCHEMA "perfloop.verdict/1"

enum pl_verdict_kind { PL_ACCEPT, PL_REJECT, PL_NO_FEASIBLE_WIN };

struct pl_verify_input {
	json_t *before, *after; /* loaded perfloop.bench/1 documents */
	const char *before_path, *after_path;
	const char *bench;	/* benchmark name, NULL: the first */
	const char *target;	/* dimension; NULL or "auto": the one that can decide
				 * (timing where both runs' is scored, else a
				 * simulated one both runs scored) */
	double min_gain;	/* default 0.05 */
	int suite_given;	/* a suite result is known */
	int suite_exit;		/* its exit status (-1: did not run) */
	const char *suite_what; /* "exit code given" or the command */
};

#define PL_MAX_RULES 8

struct pl_rule {
	const char *name;
	int passed;
	char detail[512];
	json_t *numbers; /* owned */
};

struct pl_verdict {
	enum pl_verdict_kind kind;
	char bench[256];
	char target[64];
	char target_why[480]; /* why this dimension decides, what it does not cover */
	double before_p50, after_p50, gain, min_gain;
	struct pl_rule rule[PL_MAX_RULES];
	int nrules;
};

const char *pl_verdict_name(enum pl_verdict_kind k);

/* A dimension counted under simulation (sim_instructions, sim_cycles):
 * deterministic, so the machine's noise and speed do not bear on it. */
int pl_dimension_simulated(const char *dim);

/* PL_EINPUT (with the file and JSON path) when the summaries cannot be
 * compared: different benchmarks, a missing target dimension, bad fields. */
int pl_verify(const struct pl_verify_input *in, struct pl_verdict *out, struct pl_error *err);
void pl_verdict_release(struct pl_verdict *v);
/* The dimension verify decides on where none is asked for (see
 * pl_verify_input.target) for a benchmark's before and after objects
 * (either may be NULL); why, and what it does not cover, in why. */
const char *pl_verdict_auto_target(json_t *bb, json_t *ab, char *why, size_t len);
json_t *pl_verdict_to_json(const struct pl_verdict *v, const struct pl_verify_input *in);
/* The ledger line for a verdict. */
json_t *pl_verdict_ledger_entry(const struct pl_verdict *v, const char *commit);

#endif
