/*
 * The number the user cares about: a metric the measured program reports
 * in its own output (`step_time_ms=12.3`, `samples/s: 4100`, a Google
 * Benchmark or pytest-benchmark JSON document), read from each run's
 * output instead of timing the whole process, whose start-up (a 2 s torch
 * import, worker processes) can hide a 45% faster training step. bench
 * --metric makes it a dimension of its own, gated by its own CV, which
 * decides the comparisons and verify (docs/bench.md "The program's own
 * number"). `--metric steps` needs nothing printed: a PyTorch program's
 * optimizer steps are timed in it (stepclock.h).
 */
#ifndef PL_METRIC_H
#define PL_METRIC_H

#include <regex.h>
#include <stddef.h>

#include "error.h"

struct pl_metric {
	char name[48];	 /* the dimension's name: [a-z][a-z0-9_]*, not a built-in one */
	char expr[512];	 /* as given: a regular expression, or json:PATH */
	int json;	 /* expr is json:PATH (dots, and [N] or .N for array items) */
	int steps;	 /* expr is "steps" (1): the time between optimizer steps
			  * (stepclock.h); "steps:cpu" (2): the process's CPU time */
	int higher;	 /* higher is better (samples/s); else lower (step time) */
	regex_t re;	 /* compiled (not json) */
	int compiled;
};

/* Parse --metric SPEC (a POSIX extended regular expression whose first
 * group, or whole match, is the number; or json:PATH) with its name
 * (NULL: "metric") and direction. PL_EINPUT with why in err. */
int pl_metric_init(struct pl_metric *m, const char *spec, const char *name, int higher,
		   struct pl_error *err);
void pl_metric_release(struct pl_metric *m);

/* One run's value from its output text: with a regular expression, the
 * median of every match (a training loop prints one per step: the median
 * keeps a slow first step from moving it), *count how many; with json:PATH
 * the number at PATH in the output's JSON document (the last line that
 * parses, or the whole text). 0 and why in `why` where none is found. */
int pl_metric_extract(const struct pl_metric *m, const char *text, size_t len, double *value,
		      size_t *count, char *why, size_t wlen);

/* Whether name is one of the dimensions perfloop itself fills. */
int pl_metric_name_taken(const char *name);

#endif
