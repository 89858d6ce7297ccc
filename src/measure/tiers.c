/*
 * The tier table (see tiers.h). Bounds are inclusive and read in the
 * dimension's good direction: for a lower-is-better rate, tier 1 is
 * value <= bound[0]; for ipc (higher is better), tier 1 is value >= bound[0].
 */
#include "tiers.h"

#include <math.h>
#include <string.h>

const struct pl_tier_rule pl_tier_table[] = {
    {"ipc", 1, {2.0, 1.5, 1.0, 0.5}},
    {"l1_miss_rate", 0, {0.01, 0.03, 0.05, 0.10}},
    {"branch_miss_rate", 0, {0.005, 0.01, 0.02, 0.05}},
    {"cache_miss_rate", 0, {0.05, 0.10, 0.20, 0.40}},
    {"complexity_exponent", 0, {1.05, 1.3, 1.7, 2.3}},
    {"data_loading_share", 0, {0.05, 0.10, 0.20, 0.30}},
    {NULL, 0, {0, 0, 0, 0}},
};

const struct pl_tier_rule *pl_tier_rule_for(const char *dimension)
{
	for (const struct pl_tier_rule *r = pl_tier_table; r->dimension; r++)
		if (strcmp(r->dimension, dimension) == 0)
			return r;
	return NULL;
}

int pl_dimension_higher_is_better(const char *dimension)
{
	const struct pl_tier_rule *r = pl_tier_rule_for(dimension);
	return r ? r->higher_is_better : 0;
}

int pl_tier_absolute(const char *dimension, double value)
{
	const struct pl_tier_rule *r = pl_tier_rule_for(dimension);
	if (!r)
		return 0;
	for (int t = 0; t < 4; t++)
		if (r->higher_is_better ? value >= r->bound[t] : value <= r->bound[t])
			return t + 1;
	return 5;
}

int pl_tier_relative(const char *dimension, double before, double after)
{
	if (!(before > 0) || !isfinite(after))
		return 3;
	double worse = (after - before) / before; /* > 0: after is larger */
	if (pl_dimension_higher_is_better(dimension))
		worse = -worse;
	/* one tier per whole 10% step; the epsilon keeps 10.0% from reading 9.99% */
	int steps = (int)floor(fabs(worse) / 0.10 + 1e-9);
	int tier = 3 + (worse > 0 ? steps : -steps);
	return tier < 1 ? 1 : tier > 5 ? 5 : tier;
}
