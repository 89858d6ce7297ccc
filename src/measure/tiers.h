/*
 * Tiers: a dimension's value on a 1 (best) .. 5 (worst) scale, so that
 * `verify` can say "no other dimension regressed by a tier or more" across
 * dimensions of every unit. Dimensions with an absolute scale (ipc, miss
 * rates, complexity exponent, data-loading share) have a threshold table;
 * magnitudes (time, memory, counts) have no absolute scale, so their tier
 * is relative: 3 in a lone summary, and for a later run, 3 plus one tier
 * per 10% worse (minus one per 10% better) than the earlier run.
 * docs/schemas/bench-1.md prints the same table.
 */
#ifndef PL_TIERS_H
#define PL_TIERS_H

struct pl_tier_rule {
	const char *dimension;
	int higher_is_better;
	double bound[4]; /* tier 1 up to bound[0], tier 2 up to bound[1], ... */
};

/* The threshold table (NULL-terminated). */
extern const struct pl_tier_rule pl_tier_table[];

const struct pl_tier_rule *pl_tier_rule_for(const char *dimension);
int pl_dimension_higher_is_better(const char *dimension);
/* Tier from the table, 0 when the dimension has no absolute scale. */
int pl_tier_absolute(const char *dimension, double value);
/* Tier of `after` relative to `before` (3 = the same within 10%). */
int pl_tier_relative(const char *dimension, double before, double after);

#endif
