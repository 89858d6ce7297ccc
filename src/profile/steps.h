/*
 * Per-step timing logs of a training loop (`perfloop steps`): JSON lines or
 * CSV with a data-wait time and a step time per row, read into the data vs
 * compute split: shares, per-step distributions, the warm-up steps apart,
 * and the `ml.data-loading-bound` finding when waiting for data is more
 * than 0.3 of the time.
 */
#ifndef PL_STEPS_H
#define PL_STEPS_H

#include <jansson.h>
#include <stddef.h>

#include "error.h"
#include "findings.h"

struct pl_steps_opts {
	const char *data_field;	   /* default "data_time" */
	const char *total_field;   /* the whole step, data included; default step_time, or
				    * batch_time / iter_time when those are what the log has */
	const char *compute_field; /* instead of total: the step without the data wait */
	long warmup;		   /* first steps reported apart; -1: auto (3, fewer on
				    * short logs) */
};

struct pl_steps_dist {
	double sum, p50, p90, max;
};

struct pl_steps {
	size_t n, warmup;	 /* rows read; of them, warm-up */
	char data_field[64], total_field[64], compute_field[64];
	int format_csv;
	/* over the steps after warm-up */
	struct pl_steps_dist data, compute, total;
	double data_share;
	/* the warm-up steps */
	struct pl_steps_dist w_data, w_total;
	double w_data_share;
	/* what a profile saw of the DataLoader (pl_steps_set_loader): the
	 * advice then says how many workers the measured loading needs */
	int loader_known;     /* 0: a log, nothing known of its loader */
	int workers;	      /* worker processes seen */
	double worker_load_s; /* their time inside the fetcher, all of them */
	int ncpu;	      /* the CPUs the job may use */
};

/* Say what a profile saw of the loader: `workers` processes that spent
 * load_s loading (0 and 0: the main process loads), on ncpu CPUs. */
void pl_steps_set_loader(struct pl_steps *s, int workers, double load_s, int ncpu);

/* What to do about a data-bound step: from what was measured of its
 * loader where known (how many workers keep up), else the general advice. */
void pl_steps_advice(const struct pl_steps *s, char *out, size_t len);

/* How many workers keep a step of compute_s fed where one batch takes
 * load_s to load: ceil(load / compute), at least 1. */
int pl_steps_workers_needed(double load_s, double compute_s);

/* Read path and compute. PL_EINPUT with "FILE:LINE: field 'x': ..." for
 * bad input. */
int pl_steps_read(const char *path, const struct pl_steps_opts *o, struct pl_steps *out,
		  struct pl_error *err);

/* The same from arrays: per step, the data wait and the whole step
 * (seconds); warmup as in pl_steps_opts. PL_EINPUT when n is 0. */
int pl_steps_compute(struct pl_steps *out, const double *data, const double *total, size_t n,
		     long warmup);

json_t *pl_steps_to_json(const struct pl_steps *s, const char *path);

/* The ml.data-loading-bound finding when the data share is above 0.3
 * (0 or 1 added to *out). */
int pl_steps_findings(const struct pl_steps *s, const char *path, struct pl_findings *out);

#endif
