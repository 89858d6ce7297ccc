/*
 * Profiles other tools wrote, read as perfloop's own (pl_prof).
 *
 * A user comes with the profile they have: py-spy's or perfloop's
 * collapsed stacks or speedscope file, Austin's collapsed samples, the
 * text of `perf script`, a Chrome trace (torch.profiler's
 * export_chrome_trace, Chrome's own). The format is told from the content,
 * not the name:
 *
 * - speedscope JSON ("$schema" .../speedscope...): sampled profiles, each
 *   sample's frames and weight; evented ones, open/close events, as self
 *   time in its unit.
 * - Chrome trace JSON ({"traceEvents": [...]} or a bare array of events):
 *   complete ("X") and begin/end ("B"/"E") events nested per pid and tid
 *   by time, each stack weighted by its self time in microseconds.
 * - Austin's collapsed samples ("P<pid>;T<iid>:<tid>;file:function:line;...
 *   METRIC"): the process and thread frames dropped, each frame made
 *   'function (file:line)', the metric (time in us, or samples) the count.
 * - cProfile's saved statistics (pstats, `python -m cProfile -o x.prof`):
 *   a marshalled dict, its stacks rebuilt from the call graph (pstats.h),
 *   in microseconds.
 * - perf script's text (a header line per sample, then its frames, leaf
 *   first, "ADDR symbol+0xOFF (dso)", a blank line after): one sample each,
 *   frames 'symbol (dso)'.
 * - otherwise collapsed stacks, 'frame;frame;... COUNT' (pl_prof_read_folded).
 *
 * Weights that are times become counts of microseconds; every count is
 * capped as the folded reader caps it.
 */
#ifndef PL_PROFREAD_H
#define PL_PROFREAD_H

#include "error.h"
#include "profdata.h"

/* The format of a profile's text (NUL-terminated), as above, from its
 * start: "folded", "speedscope", "chrome-trace", "austin", "perf-script",
 * "pstats" (a JSON document is speedscope's or a trace's until parsed). */
const char *pl_prof_format(const char *text);

/* Which format path holds ("folded", "speedscope", "chrome-trace",
 * "austin", "perf-script", "pstats"), read into p. PL_EINPUT with the file and
 * line or field where it is not one of them. */
int pl_prof_read_any(const char *path, struct pl_prof *p, const char **format,
		     struct pl_error *err);

#endif
