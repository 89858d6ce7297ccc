/*
 * The cost-model intake (docs/intake.md): docs/perf/intake-NAME.yaml, the
 * primary KPI and the workload's shape, how often the code runs, rough
 * counts of what it does per run, the expected dominant cost and the
 * largest plausible improvement, written before optimizing so that a
 * measurement is checked against an expectation. perfloop writes the
 * template, pre-filled with what a benchmark summary measured; the rest
 * are the user's estimates. `report --style review` shows it as the Cost
 * model.
 */
#ifndef PL_INTAKE_H
#define PL_INTAKE_H

#include <jansson.h>
#include <stddef.h>

#include "error.h"

#define PL_INTAKE_SCHEMA "perfloop.intake/1"

enum pl_intake_count {
	PL_IN_BYTES,
	PL_IN_ALLOCS,
	PL_IN_LAUNCHES,
	PL_IN_SYNCS,
	PL_IN_CROSSINGS,
	PL_IN_IO,
	PL_IN_NCOUNTS
};

enum pl_intake_measure { PL_IM_WALL, PL_IM_CPU, PL_IM_RSS, PL_IM_INSN, PL_IM_N };

struct pl_intake {
	char *name, *benchmark;
	char *kpi, *workload, *frequency;
	double counts[PL_IN_NCOUNTS]; /* NAN: not estimated */
	char *dominant_cost, *improvement;
	char *measured_from;	  /* or NULL */
	double measured[PL_IM_N]; /* NAN: not measured */
	char missing[400];	  /* the empty fields, comma-separated */
	int missing_line;	  /* the first one's line */
};

/* The template for name as YAML text (malloc'd), measured from summary
 * (perfloop.bench/1, its benchmark bench or the first; both may be NULL). */
char *pl_intake_template(const char *name, json_t *summary, const char *summary_path,
			 const char *bench);

/* Read path: PL_EINPUT (one line: file, line, key) for a malformed file;
 * empty fields are allowed and listed in missing. */
int pl_intake_load(const char *path, struct pl_intake *out, struct pl_error *err);
void pl_intake_release(struct pl_intake *in);

/* The Cost model line of a review: KPI, workload, frequency, counts,
 * dominant cost, the largest plausible improvement, what was measured. */
void pl_intake_describe(const struct pl_intake *in, char *buf, size_t len);

#endif
