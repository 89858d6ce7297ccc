/*
 * Findings, `perfloop.findings/1` (docs/schemas/findings-1.md): what scan,
 * profile and bench produce and select, report consume. One reader that
 * validates every field and names the first bad one by its JSON path, one
 * writer, and the stable id rule.
 */
#ifndef PL_FINDINGS_H
#define PL_FINDINGS_H

#include <jansson.h>
#include <stddef.h>

#include "error.h"

#define PL_FINDINGS_SCHEMA "perfloop.findings/1"

enum pl_severity { PL_SEV_CRITICAL, PL_SEV_HIGH, PL_SEV_MEDIUM, PL_SEV_LOW };
enum pl_fstatus { PL_FST_STATIC, PL_FST_PROFILING, PL_FST_MEASURED };

struct pl_finding {
	char *id, *leaf, *signal, *path, *function, *suggested_action;
	enum pl_severity severity;
	enum pl_fstatus status;
	long line, column; /* 0 when unknown */
	long end_line;	   /* the last line of what was flagged (a loop's body); 0: line */
	json_t *also_lines; /* the rule's other lines grouped into it (its loop's); NULL */
	char *metric_name, *metric_unit;
	double metric_value;
	int has_metric_value;
	char *evidence_text;
	char *severity_note; /* why the rule's severity was lowered here; NULL */
	json_t *evidence_numbers; /* object name -> number, may be NULL */
	double ratio;		  /* evidence.numbers.ratio: measured impact */
	int has_ratio;
	double confidence; /* 0..1 */
	int level;	   /* 1..8 */
	int advisory;	   /* a best-practice option, not a defect */
	char *source;	   /* file it was read from */
	/* scan only, never written: the finding holds if a training step loop
	 * of another file calls this function (its name); see scanrun.c */
	char *needs_caller;
	/* scan only, never written: the top-level def or class it is in is
	 * named by no file of a whole-project scan (scanrun.c); its name */
	char *unreferenced;
};

struct pl_findings {
	struct pl_finding *v;
	size_t n;
};

const char *pl_severity_name(enum pl_severity s);
const char *pl_fstatus_name(enum pl_fstatus s);

/* Read and validate one findings file, appending to *out. */
int pl_findings_load(const char *path, struct pl_findings *out, struct pl_error *err);
void pl_findings_release(struct pl_findings *f);
/* The share of a profile's samples a static finding was measured at
 * (`scan --profile`: metric profile_share, status measured), or -1. */
double pl_finding_profile_share(const struct pl_finding *f);
/* Release finding i and close the gap (the order of the rest kept). */
void pl_findings_remove(struct pl_findings *f, size_t i);
/* A new zeroed finding at the end of f (counted: pl_findings_release frees
 * what the caller fills in), or NULL when out of memory. */
struct pl_finding *pl_findings_push(struct pl_findings *f);
/* A new `measured` finding with its texts copied, its metric's value, and
 * its id from leaf, path and key; the caller sets severity, level,
 * confidence and the evidence numbers. NULL when out of memory (what was
 * added is released with f). */
struct pl_finding *pl_findings_add_measured(struct pl_findings *f, const char *leaf,
					    const char *path, const char *key, const char *signal,
					    const char *evidence, const char *action,
					    const char *metric, const char *unit, double value);

/* The stable id of a problem: "PF-" and 12 hex digits of a hash of the leaf,
 * the path, the function and the signal (not the line, which moves as the
 * file is edited). */
void pl_finding_id(const char *leaf, const char *path, const char *function, const char *signal,
		   char out[16]);

json_t *pl_finding_to_json(const struct pl_finding *f);
/* One finding object (as pl_finding_to_json writes it) into *f; on an
 * error nothing is kept and err names file and field. */
int pl_finding_from_json(json_t *o, const char *file, struct pl_finding *f, struct pl_error *err);
/* A whole document with these findings; tool names the producer. */
json_t *pl_findings_doc(const char *tool, const struct pl_findings *f);

#endif
