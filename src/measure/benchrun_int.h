/*
 * Private to the bench engine (benchrun.c, benchexec.c, benchprobe.c,
 * benchbatch.c, benchstats.c): the I/O every execution shares and the
 * functions these files share. Callers outside them use benchrun.h.
 */
#ifndef PL_BENCHRUN_INT_H
#define PL_BENCHRUN_INT_H

#include <stddef.h>

#include "benchrun.h"
#include "stepclock.h"

struct io {
	int in_fd;   /* -1: /dev/null */
	int out_fd;  /* -1: /dev/null, -2: inherit */
	int null_fd; /* opened once, not per run */
	int metric_fd; /* --metric: the run's output, read back after it; -1 off */
	struct pl_stepclock steps; /* --metric steps (steps.dir "" off) */
};

/* Close what pl_bench_open_io opened, and remove --metric steps' folder. */
void pl_bench_close_io(struct io *io);

/* ---- the run loop (benchrun.c) ---- */

/* The run-count policy (benchrun.c's opening comment), decided after b's
 * first measured run. */
void pl_bench_plan(const struct pl_bench_config *cfg, struct pl_bench *b, double first_wall);
/* b has its samples (or failed); alone: its precision alone may end it. */
int pl_bench_finished(const struct pl_bench_config *cfg, const struct pl_bench *b, int alone);
/* The run was interrupted (SIGINT, or a run that saw it). */
int pl_bench_interrupted(const struct pl_bench_run *run);

/* ---- one execution (benchexec.c) ---- */

/* A command string as argv: words, or sh -c with --shell. */
int pl_bench_split_command(const struct pl_bench_config *cfg, const char *command,
			   struct pl_argv *argv, struct pl_error *err);
/* Run a hook (what: "setup", "prepare", ...) for b; none: PL_OK. */
int pl_bench_run_hook(struct pl_bench_run *run, const struct pl_bench *b, const char *what,
		      const char *hook, const struct io *io, struct pl_error *err);
/* One run (measured or warm-up) with its prepare/conclude hooks. */
int pl_bench_one_run(struct pl_bench_run *run, struct pl_bench *b, const struct io *io,
		     int measured, struct pl_error *err);
/* Open --input, --output and --metric's buffer for the whole run. */
int pl_bench_open_io(const struct pl_bench_config *cfg, struct io *io, struct pl_error *err);

/* ---- samples under the speed probe (benchprobe.c) ---- */

/* One sample of b: a batch of executions on a CPU that was not contended. */
int pl_bench_measured_run(struct pl_bench_run *run, struct pl_bench *b, const struct io *io,
			  size_t idx, int alone, struct pl_error *err);
/* Close the run's open probe segment, judging the executions in it. */
void pl_bench_close_segment(struct pl_bench_run *run);

/* ---- the batch (benchbatch.c) ---- */

/* Single executions of b (its first samples); the batch they call for in *k. */
int pl_bench_calibrate(struct pl_bench_run *run, struct pl_bench *b, const struct io *io,
		       size_t idx, size_t *k, struct pl_error *err);
/* Use batches of k from now on (why: the reason, NULL to keep b's own). */
void pl_bench_set_batch(struct pl_bench *b, size_t k, const char *why);

/* ---- statistics (benchstats.c) ---- */

/* b's values of a metric in its own batches (pl_bench_values). */
size_t pl_bench_collect(const struct pl_bench *b, double *out, int metric);

#endif
