/*
 * The benchmark summary, `perfloop.bench/1` (docs/schemas/bench-1.md):
 * building it from a finished run, writing it atomically, and reading one
 * back with full validation (the first bad field is named by its JSON path).
 */
#ifndef PL_SUMMARY_H
#define PL_SUMMARY_H

#include <jansson.h>

#include "benchrun.h"
#include "error.h"

#define PL_SUMMARY_SCHEMA "perfloop.bench/1"

struct pl_dimension {
	char name[40];
	const char *unit;
	double value;
	double cv;
	int scored;
	char reason[128];  /* why not scored */
	int tier;	   /* 1 best .. 5 worst */
	int tier_absolute; /* from the threshold table; else relative (3 alone) */
};

/* The dimensions of one benchmark: timing, cpu, memory, and one per
 * supported counter plus the derived rates. Returns how many were filled. */
size_t pl_summary_dimensions(const struct pl_bench_run *run, const struct pl_bench *b,
			     struct pl_dimension *out, size_t max);

/* Build the summary document. baseline_cmp may be NULL. */
json_t *pl_summary_build(const struct pl_bench_run *run, json_t *baseline_cmp);
int pl_summary_write(const char *path, json_t *doc, struct pl_error *err);

/* Load and validate a summary file. */
int pl_summary_load(const char *path, json_t **out, struct pl_error *err);
/* The benchmark named `name` in a loaded summary (the first where name is
 * NULL), its position in *index where index is not NULL; NULL if none. */
json_t *pl_summary_bench(json_t *doc, const char *name, size_t *index);
/* The wall-time samples of benchmark `name` in a loaded summary: the mean
 * of each batch of its counted runs ("batch", 1 when absent); *x is
 * malloc'd. Returns PL_EINPUT when there is no such benchmark. */
int pl_summary_wall_samples(json_t *doc, const char *name, double **x, size_t *n);
/* The same of the runs' CPU time (user_s + sys_s). */
int pl_summary_cpu_samples(json_t *doc, const char *name, double **x, size_t *n);
/* A summary benchmark's runs per sample (1 for unbatched or older ones). */
size_t pl_summary_batch(json_t *bench);

/* The most two measurements' speed probes may differ: the probe's lower
 * quartile varied by up to 3.3% between twelve quiet runs here (sd about
 * 1%); the host's slow phases move it by 10% and more. */
#define PL_SPEED_CHANGE_MAX 0.04
/* A change of speed can explain a difference of about its own size in
 * compute-bound code and, measured here, up to three times it in
 * memory-bound code. */
#define PL_SPEED_EXPLAINS 3.0

/* The larger relative change *d (after/before - 1) between two
 * fingerprints' speed_probe objects, over the loops both recorded, with
 * the two times in *b and *a. Returns 0 where they share none. */
int pl_summary_speed_change(json_t *pb, json_t *pa, double *b, double *a, double *d);

#endif
