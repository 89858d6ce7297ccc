/*
 * `perfloop report`: one readable report from any mix of findings, bench
 * summaries, verdicts and ledgers, as terminal text or Markdown. The output
 * depends only on the inputs (no clock, no machine), so golden files can
 * pin it.
 */
#ifndef PL_REPORT_H
#define PL_REPORT_H

#include <jansson.h>

#include "error.h"
#include "findings.h"
#include "intake.h"

enum pl_report_format { PL_REPORT_TEXT, PL_REPORT_MD };
enum pl_report_style { PL_REPORT_FINDINGS, PL_REPORT_REVIEW };

struct pl_report_input {
	struct pl_findings findings;
	json_t *summaries;	   /* array of {file, doc} */
	json_t *verdicts;	   /* array of {file, doc} */
	json_t *ledger;		   /* array of ledger lines */
	json_t *series;		   /* array of {file, doc}: perfloop.memory/1, perfloop.gpu/1 and
				    * perfloop.steps/1 documents (drawn by the HTML page) */
	json_t *merges;		   /* array of {file, doc}: perfloop.merge/1 (the HTML page's
				    * per-rank tables) */
	json_t *refused;	   /* array of {file, reason}: summaries a verdict names
				    * that could not be read (filled while rendering) */
	struct pl_intake *intakes; /* cost models (docs/perf/intake-*.yaml) */
	size_t nintakes;
};

void pl_report_input_init(struct pl_report_input *in);
void pl_report_input_release(struct pl_report_input *in);
/* Add one file, recognised by its "schema" (or as JSON lines of
 * perfloop.ledger/1; a .yaml file as a perfloop.intake/1 cost model).
 * Memory, GPU and step documents go to series (the HTML page's). */
int pl_report_add_file(struct pl_report_input *in, const char *path, struct pl_error *err);

/* The report, malloc'd. */
char *pl_report_render(const struct pl_report_input *in, enum pl_report_format fmt,
		       enum pl_report_style style);

/* Findings ranked as the report ranks them (defects, or advisories),
 * malloc'd array of n pointers into f. */
const struct pl_finding **pl_report_ranked(const struct pl_findings *f, size_t *n, int advisory);
/* One finding as the text report's template block, malloc'd. */
char *pl_report_finding_text(const struct pl_report_input *in, const struct pl_finding *f,
			     size_t rank);

/* The closing confidence and its reason (exposed for tests). */
double pl_report_confidence(const struct pl_findings *f, int nverdicts, int nsummaries,
			    const char **reason);

#endif
