/*
 * Static findings weighed by a profile (`perfloop scan --profile P`): a
 * rule can only say "this may be slow"; a profile says whether it is.
 *
 * P is folded stacks as `perfloop profile` writes them (PREFIX.folded:
 * `frame;frame;... COUNT`, each frame `name (file:line)`), best taken
 * with `--lines` so that a frame's line is the line it was running. Each
 * finding gets the share of samples whose stack runs its lines (what the
 * rule flagged, a loop with its body: line share, where the profile has
 * lines) and its enclosing function
 * (function share), counted once per stack however deep the recursion.
 * Its severity then comes from the measured share (PL_WEIGH_* below) and
 * its status becomes measured; a finding in code the profile never ran is
 * kept, marked "not seen in the profile", and ranked last.
 */
#ifndef PL_SCANWEIGH_H
#define PL_SCANWEIGH_H

#include <stddef.h>

#include "error.h"
#include "scan.h"

/* The share of samples (line share where the profile has lines, else
 * function share) that makes a finding critical, high, medium; under
 * the last it is low. */
#define PL_WEIGH_CRITICAL 0.25
#define PL_WEIGH_HIGH 0.10
#define PL_WEIGH_MEDIUM 0.02

struct pl_weigh_summary {
	double samples;	  /* in the profile */
	double explained; /* samples whose stack runs some finding's line (or
			   * function, without lines) */
	int has_lines;	  /* the profile was taken with --lines */
	size_t measured, unseen;
	size_t cold_advisory; /* advisory findings left out (pl_scan_weigh_hot) */
};

/* Read the folded profile at path and weigh every finding of files[0..n).
 * lines: 1 the profile was taken with --lines, 0 without, -1 unknown (told
 * from its frames: a function seen at two lines). PL_EINPUT with
 * "PATH:LINE: ..." for a profile that is not folded stacks. */
int pl_scan_weigh(struct pl_scan_file *files, size_t n, const char *path, int lines,
		  struct pl_weigh_summary *sum, struct pl_error *err);

/* The same, and where hot_only is given (the rules the files were
 * scanned with), a finding of a rule it holds as advisory is kept only
 * where the profile measured it at PL_WEIGH_MEDIUM or more (line share,
 * else function share): the rules too often wrong to be on by default
 * are reported where the program spends its time. The summary counts
 * the kept findings only. */
int pl_scan_weigh_hot(struct pl_scan_file *files, size_t n, const char *path, int lines,
		      const struct pl_rules *hot_only, struct pl_weigh_summary *sum,
		      struct pl_error *err);

/* A weighed finding's share: pl_finding_profile_share (findings.h). */

#endif
