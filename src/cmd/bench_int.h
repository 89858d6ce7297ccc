/*
 * Private to perfloop bench (src/cmd/bench*.c): the option codes that the
 * option table (benchopts.c) and the option switch (bench.c) share, the
 * progress state, and the functions these files share; main.c reaches the
 * command through cmd.h only. bench.c is the command itself; benchopts.c
 * its usage text and options; benchout.c progress and output files;
 * benchcmp.c --baseline and --fail-on-regression.
 */
#ifndef PL_BENCH_INT_H
#define PL_BENCH_INT_H

#include <getopt.h>
#include <jansson.h>
#include <stddef.h>

#include "benchrun.h"
#include "error.h"
#include "render.h"

/* ---- the command line (benchopts.c) ---- */

enum {
	OPT_MIN_RUNS = 256,
	OPT_MAX_RUNS,
	OPT_TIME_BUDGET,
	OPT_PRECISION,
	OPT_SETUP,
	OPT_PREPARE,
	OPT_CONCLUDE,
	OPT_CLEANUP,
	OPT_ORDER,
	OPT_TIMEOUT,
	OPT_BATCH,
	OPT_MAX_TIME,
	OPT_INPUT,
	OPT_OUTPUT,
	OPT_REFERENCE,
	OPT_COUNTERS,
	OPT_BASELINE,
	OPT_MD,
	OPT_CSV,
	OPT_HYPERFINE,
	OPT_QUIET,
	OPT_JSON,
	OPT_SHELL,
	OPT_NO_HISTORY,
	OPT_PIN,
	OPT_WAIT_QUIET,
	OPT_CONTENTION,
	OPT_MEMORY,
	OPT_ALLOC,
	OPT_SYSCALLS,
	OPT_GPU,
	OPT_GPU_HZ,
	OPT_FAIL_REGRESSION,
	OPT_REGRESSION_THRESHOLD,
	OPT_SHOW_OUTPUT,
	OPT_STYLE,
	OPT_SORT,
	OPT_EXPECT,
	OPT_FINDINGS,
	OPT_PLOT,
	OPT_ALL,
	OPT_NO_SHELL,
	OPT_SIM,
	OPT_SIM_RUNS,
	OPT_METRIC,
	OPT_METRIC_NAME,
	OPT_HIGHER,
};

extern const struct option bench_longopts[];

/* An integer (strtol's), for hyperfine's -P NAME LO HI. */
int bench_is_int(const char *s);
/* An option's integer >= min or a number > 0; -1 (said) if not. */
int bench_parse_int(const char *opt, const char *arg, long min, int *out);
int bench_parse_pos(const char *opt, const char *arg, double *out);
/* Quote an argv word so that pl_words_split gives it back unchanged. */
void bench_append_quoted(char **s, size_t *len, const char *w);

/* ---- progress and output files (benchout.c) ---- */

/* Progress on stderr, redrawn in place (the engine's progress callback). */
struct progress_state {
	struct pl_style st;
	const struct pl_bench_run *run;
	double last_draw;
	size_t drawn; /* lines on screen */
};

void bench_on_progress(void *arg, const struct pl_bench *b, size_t index,
		       enum pl_progress_event ev);
void bench_progress_clear(struct progress_state *ps);
/* The unsupported-counters notice was said on this machine: 1 to keep quiet. */
int bench_counters_said(const struct pl_counter_set *cs);
/* An output that cannot be written, said before the run; -1 if so. */
int bench_check_writable(const char *opt, const char *path);
/* Write text (freed) to path; PL_ENOMEM where text is NULL. */
int bench_write_text(const char *path, char *text, struct pl_error *err);
/* The run into .perfloop/history.db inside a git repository (a warning if not). */
void bench_record_history(json_t *doc);

/* ---- --baseline and --fail-on-regression (benchcmp.c) ---- */

/* Each benchmark against the same-named one in a saved summary. */
json_t *bench_compare_baseline(const struct pl_bench_run *run, json_t *base, const char *file);
/* The regressions past pct percent, one line each on stderr; how many. */
int bench_regressions(const struct pl_bench_run *run, json_t *base_cmp, const char *base_path,
		      double pct);

#endif
