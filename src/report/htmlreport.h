/*
 * `perfloop report --format html`: one self-contained page (no network, no
 * external script, style or font) of the evidence report reads: the
 * verdicts with each rule's numbers and the confidence, the benchmarks'
 * run times as strip plots with boxes on one axis per page (before and
 * after side by side), their comparisons and dimensions, the flame graphs
 * of the collapsed-stack files given (zoom, search, reset), and the
 * findings in a table sortable by severity, level and file whose rows open
 * to the report's template. Every chart is SVG written here; every string
 * from the inputs is escaped for where it goes (HTML text and attributes;
 * the page's data block as JSON with <, > and & as \u escapes).
 */
#ifndef PL_HTMLREPORT_H
#define PL_HTMLREPORT_H

#include "profdata.h"
#include "report.h"

struct pl_html_profile {
	const char *file; /* as given */
	struct pl_prof prof;
};

/* The page, malloc'd (NULL out of memory). */
char *pl_report_html(const struct pl_report_input *in, const struct pl_html_profile *profs,
		     size_t nprofs);

#endif
