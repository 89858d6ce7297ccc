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
/* Which dimension decides for a benchmark (its object, with dimensions
 * and metric): the program's own number where --metric gave one, else
 * timing where scored, else a scored simulated one (sim_cycles, then
 * sim_instructions), else timing (which then cannot decide); why in buf. */
const char *pl_summary_decides(json_t *bench, char *why, size_t len);
/* The program's own number (--metric) of each counted run of benchmark
 * `name`: malloc'd in *x; PL_EINPUT where it has none. */
int pl_summary_metric_samples(json_t *doc, const char *name, double **x, size_t *n);
/* The simulated executions' counts of benchmark `name` (dim: sim_instructions
 * or sim_cycles): malloc'd in *x; PL_EINPUT where it has none. */
int pl_summary_sim_samples(json_t *doc, const char *name, const char *dim, double **x,
			   size_t *n);

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

/* Two separate measurements of one benchmark (a saved baseline and this
 * run; two recordings in the history) may differ by more than the command
 * did: a machine that ran slower through one of them (a contended CPU, a
 * host's slow phase) moves all of that side's times together, which no
 * interval from within each side can see. Such a comparison is in doubt
 * where either side's timing is over the noise gate (CV past
 * PL_NOISE_CV_MAX) or the speed probe ran more than PL_SPEED_CHANGE_MAX
 * slower in the later one. Writes why into buf, naming the sides `before`
 * and `after` ("this run's timing is N/A ..."), and returns it; NULL where
 * not in doubt. *speed: how much slower the probe ran after (0 where
 * within PL_SPEED_CHANGE_MAX, faster, or unknown). A probe may be NULL. */
const char *pl_summary_doubt(double cv_before, double cv_after, json_t *probe_before,
			     json_t *probe_after, const char *before, const char *after, char *buf,
			     size_t len, double *speed);

/* In doubt, a slowdown stands only on the CPU time, and only where it
 * grew by more than contention alone adds to it: with three busy loops
 * beside it on this 2-CPU VM, a CPU-bound command's wall time grew 2.8x
 * (95% CI 2.5-3.7, p 0.0002) while its CPU time grew 1.21-1.24x (user +
 * sys; task-clock 1.15x): the cache and TLB refills after each switch; a
 * shell's and sleep's CPU time, a few milliseconds, moved 0.65-1.5x from
 * one bench of 6 runs to the next under that load. So the whole 95%
 * interval of the CPU time's ratio must lie past twice. */
#define PL_DOUBT_CPU_MIN 2.0

/* Whether a slowdown in doubt stands on its CPU time: cpu, the CPU time's
 * comparison (NULL where either side lacks it), its whole 95% interval
 * past PL_DOUBT_CPU_MIN times (1 + speed), speed being the probe's
 * slowdown (a slower CPU runs all CPU time slower by as much in
 * compute-bound code; the 2x covers 3x that for memory-bound code while
 * it is under 100%), and the CPU time added (the medians' difference as a
 * share of the before side's fastest run, which contention stretched
 * least) past threshold (a fraction). Where not, says why in `why`
 * ("its CPU time changed ..."), naming the before side. */
int pl_summary_cpu_stands(const struct pl_comparison *cpu, double added, double speed,
			  double threshold, const char *before, char *why, size_t len);

#endif
