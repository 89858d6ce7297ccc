/*
 * The differential flame graph (Brendan Gregg's difffolded.pl with
 * flamegraph.pl): two profiles of one program, before and after a change
 * or one rank against another, drawn as one flame graph whose frames and
 * widths are the after profile's and whose colours say how each frame's
 * own share of the samples moved; and the table of the functions whose
 * own share moved most. Shares, not counts: two runs' lengths differ.
 */
#ifndef PL_FLAMEDIFF_H
#define PL_FLAMEDIFF_H

#include <stddef.h>
#include <stdint.h>

#include "error.h"
#include "profdata.h"

struct pl_strbuf;

/* The two profiles and the names they are shown by (their files). */
struct pl_flamediff_in {
	const struct pl_prof *before, *after;
	const char *before_name, *after_name;
};

/* A function (frames of one name, file and line) and its own samples in
 * each profile, with their shares of that profile's total. */
struct pl_flamediff_mover {
	char *label; /* "name (file:line)", as the flame graph shows it */
	uint64_t before, after;
	double before_share, after_share;
};

/* Every function with samples of its own in either profile, the largest
 * move of its own share first (after_share - before_share, either sign;
 * ties by label). *out malloc'd (pl_flamediff_movers_free), *n entries.
 * PL_OK, PL_EINPUT (a profile without samples), PL_ENOMEM. */
int pl_flamediff_movers(const struct pl_flamediff_in *in, struct pl_flamediff_mover **out,
			size_t *n);
void pl_flamediff_movers_free(struct pl_flamediff_mover *m, size_t n);

/* The first max movers as a terminal table (markdown 0) or a Markdown one,
 * under a line naming both profiles and their totals; malloc'd, NULL out
 * of memory. */
char *pl_flamediff_table(const struct pl_flamediff_in *in, const struct pl_flamediff_mover *m,
			 size_t n, size_t max, int markdown);

/* The SVG with its own zoom and search script (flamegraph.pl's), appended
 * to b (spilled as it goes where b writes to a file). PL_OK, PL_EINPUT (a
 * profile without samples), PL_ENOMEM or PL_ESYS (a failed write). */
int pl_flamediff_svg_to(const struct pl_flamediff_in *in, struct pl_strbuf *b);
/* That SVG into path atomically (a temporary file, then rename). */
int pl_flamediff_write_svg(const struct pl_flamediff_in *in, const char *path,
			   struct pl_error *err);
/* For an HTML page: the graph as an <svg class="flame diff"> driven by
 * pl_html_flame_js, then a table of the first max movers; malloc'd, NULL
 * out of memory or for a profile without samples. */
char *pl_flamediff_html(const struct pl_flamediff_in *in, size_t max);

#endif
