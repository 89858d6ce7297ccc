/*
 * The benchmark engine behind `perfloop bench`: warm-up, the run-count
 * policy (fixed, time budget, or --precision), interleaved or sequential
 * order, prepare/conclude/setup/cleanup hooks, failure handling, and the
 * statistics and comparisons computed from the samples. It measures and
 * computes; it never prints. Progress goes through a callback so the command
 * decides how (and whether) to draw it.
 */
#ifndef PL_BENCHRUN_H
#define PL_BENCHRUN_H

#include <signal.h>
#include <stddef.h>

#include "error.h"
#include "fingerprint.h"
#include "speedprobe.h"
#include "machine.h"
#include "counters.h"
#include "stats.h"
#include "words.h"

struct pl_metric;

/* the most simulated executions per command (--sim-runs) */
#define PL_SIM_MAX_RUNS 20

enum pl_order { PL_ORDER_INTERLEAVED, PL_ORDER_SEQUENTIAL };

struct pl_bench_config {
	int warmup;	      /* default 1 */
	int runs;	      /* exact number, 0: decided by the policy */
	int min_runs;	      /* default 10 */
	int max_runs;	      /* 0: no cap (1000 with --precision) */
	double time_budget_s; /* default 3 */
	double precision_pct; /* 0: off */
	const char *setup, *prepare, *conclude, *cleanup;
	int shell;
	enum pl_order order;
	double timeout_s;
	const char *input;  /* NULL: /dev/null */
	const char *output; /* "null", "inherit" or a file name */
	int ignore_failure;
	struct pl_counter_set counters;
	size_t resamples; /* bootstrap resamples, default 10000 */
	uint64_t seed;
	int batch;	   /* executions per sample; 0: calibrated (see benchrun.c) */
	double max_time_s; /* per command, bounds the calibrated batch; default 60 */
	int pin;	   /* a CPU, PL_PIN_AUTO (default) or PL_PIN_NONE (machine.h) */
	double wait_quiet_s; /* wait up to this long for the CPU to be idle; default 5
			      * (PERFLOOP_WAIT_QUIET sets the default) */
	int contention_keep; /* count runs on a contended CPU (--contention keep) */
	int memory;	     /* --memory: page faults per run are scored dimensions */
	const char *alloc_dir; /* --alloc: where the preloaded counter writes (see
				* bench.c), NULL off */
	int sim;	       /* --sim: enum pl_sim_mode (simcount.h); 0 auto */
	const struct pl_metric *metric; /* --metric: the program's own number, NULL off */
	int sim_runs;	       /* simulated executions per command (default 3) */
	int sim_cache;	       /* simulate the cache too (as a baseline did) */
};

/* A dimension is scored (comparable) only when its CV is at most this. */
#define PL_NOISE_CV_MAX 0.05

/* A calibrated batch aims at this CV of a sample, half the noise gate. */
#define PL_BATCH_TARGET_CV 0.025

struct pl_sample {
	double wall_s, user_s, sys_s;
	long max_rss_kb;
	long minflt, majflt; /* page faults (getrusage of the run) */
	double alloc_bytes, alloc_calls; /* --alloc: counted by the preload; -1 unknown */
	double metric;	  /* --metric: the run's value (NAN: none found) */
	size_t metric_n;  /* ... from this many matches */
	double metric_cpu; /* --metric steps: the step's CPU time (ms; NAN: not timed) */
	int exit_code, signal, timed_out;
	int counted; /* in the statistics: a measured run that did not fail,
		      * on a CPU that was not contended */
	int contended;	/* measured while the CPU ran slow (see speedprobe.c) */
	struct pl_probe_reading probe; /* the slower of the probes around its batch */
	double counter[PL_CTR_COUNT];
	unsigned char counter_ok[PL_CTR_COUNT];
};

enum pl_bench_state { PL_BENCH_PENDING, PL_BENCH_DONE, PL_BENCH_FAILED };

struct pl_metric_stats {
	int present;
	struct pl_describe d;
	double ci_lo, ci_hi; /* 95% bootstrap CI of the median */
};

struct pl_bench {
	char *name;
	char *command;	     /* after parameter substitution */
	struct pl_argv argv; /* what is executed */
	size_t nparams;
	const char **param_names;
	char **param_values;
	struct pl_sample *samples;
	size_t n, cap;
	size_t target; /* planned runs, 0 before the first run */
	enum pl_bench_state state;
	char failure[512]; /* why it stopped early */
	/* after pl_bench_finish */
	struct pl_metric_stats wall, user, sys, cpu, rss, minflt, majflt, alloc_bytes, alloc_calls;
	struct pl_metric_stats counter[PL_CTR_COUNT];
	struct pl_metric_stats wall_exec; /* wall time per execution, unbatched */
	struct pl_metric_stats reported;  /* --metric: the program's number */
	unsigned char *outlier; /* per execution, wall time */
	size_t batch;		/* executions per sample (>= 1) */
	double exec_cv;		/* the calibration's per-execution CV; NAN if none */
	size_t max_batch;	/* the largest batch its planned samples fit in --max-time */
	char batch_why[320];	/* how the batch was chosen */
	long rss_floor_kb;	/* perfloop's own peak RSS when it started a run */
	size_t contended;	/* executions measured on a contended CPU */
	size_t replaced;	/* ... left out and measured again, during the run */
	size_t contended_kept;	/* ... counted anyway: past the cap or too few others */
	int in_seg;		/* has executions in the run's open probe segment */
	size_t seg_from;	/* ... from this one on */
	/* the deterministic measure (simcount.c): executions under Valgrind */
	size_t sim_n;			  /* how many were simulated, 0: none */
	double sim_ir[PL_SIM_MAX_RUNS];	  /* instructions executed, all processes */
	double sim_cyc[PL_SIM_MAX_RUNS];  /* estimated cycles (cache simulated) */
	double sim_wall[PL_SIM_MAX_RUNS]; /* how long each took under Valgrind */
	int sim_cache;			  /* the cache was simulated (sim_cyc valid) */
	struct pl_metric_stats sim_ir_st, sim_cyc_st;
	char sim_why[256]; /* why it was simulated, or why not */
	char sim_as[512];  /* the program simulated past its wrappers ("": the
			    * command as given), see os/execchain.h */
	int sim_skipped;   /* ... the wrappers' processes left out */
};

struct pl_comparison {
	size_t bench, reference;
	double ratio, ci_lo, ci_hi, p; /* p: NAN where no test applies (simulated) */
	enum pl_change change;
	/* the dimension compared: "timing", or a simulated one (sim_instructions,
	 * sim_cycles) where the wall time could not decide */
	const char *dimension;
};

enum pl_progress_event { PL_PROGRESS_WARMUP, PL_PROGRESS_RUN, PL_PROGRESS_END };
typedef void (*pl_progress_fn)(void *arg, const struct pl_bench *b, size_t index,
			       enum pl_progress_event ev);

struct pl_bench_run {
	struct pl_bench_config cfg;
	struct pl_bench *bench;
	size_t nbench;
	size_t reference;
	/* the order the table and the Markdown/CSV exports list commands in
	 * (hyperfine's --sort): 0 as given, 1 by median time, 2 by mean */
	int sort;
	struct pl_comparison *cmp;
	size_t ncmp;
	struct pl_fingerprint fp;
	struct pl_quiet quiet; /* what the wait for a quiet CPU found */
	char pinned_by[32];    /* "--pin auto", "--pin N" or "the caller" (taskset) */
	/* --pin auto is dropped for a command that runs on several CPUs at
	 * once (its first warm-up run, unpinned, says so) */
	int autopin_cpu;       /* the CPU --pin auto chose; -1 if none */
	cpu_set_t autopin_saved;
	char unpinned_why[256]; /* why --pin auto let go; "" if it did not */
	double last_cpus;	/* the last run's CPU time over its wall time */
	double last_span;	/* and that wall time (the span the CPU times cover), s */
	/* the machine's speed over the run: fixed in-process loops timed on
	 * the measured CPU around each sample (see speedprobe.c) */
	struct pl_speedprobe sp;
	/* single executions (batches of 1) share a probe segment across
	 * benchmarks and calls: a probe every ~10 ms of runs, not every run */
	int seg_open;
	double seg_s;
	struct pl_probe_reading seg_pre;
	struct pl_probe_reading probe_fast; /* after pl_bench_finish; 0 if none */
	double probe_slowest;		   /* the largest slow-down seen */
	int interrupted;
	int extended; /* times a close call had every command measured again */
	int quiet_counters; /* the unsupported-counters notice was said before */
	int failed; /* some benchmark failed, timed out or crashed */
	char started[32];
	char sim_tool[96]; /* "valgrind-3.19.0 cachegrind" where anything was simulated */
	const volatile sig_atomic_t *interrupt_flag;
	pl_progress_fn progress;
	void *progress_arg;
};

void pl_bench_config_defaults(struct pl_bench_config *cfg);

/* Add a benchmark for a command string (parameters already substituted). */
int pl_bench_add(struct pl_bench_run *run, const char *name, const char *command, size_t nparams,
		 const char **param_names, char **param_values, struct pl_error *err);

/* Judge b's executions by their probes against the run's fastest (sp):
 * contended ones are left out of the statistics where the planned samples
 * remain without them (never with keep: --contention keep), and counted
 * back in where fewer than three samples would be left. */
void pl_bench_judge_contention(const struct pl_speedprobe *sp, struct pl_bench *b, int keep);

/* Where the samples are over the noise gate (PL_NOISE_CV_MAX), take m
 * consecutive batches together, the least m that brings every command
 * under it with --min-runs samples left (--batch auto only). Returns m, 1
 * if none. scratch holds the largest bench's executions. */
size_t pl_bench_regroup(struct pl_bench_run *run, double *scratch);

/* A close call: some command differs from the reference significantly
 * (p < 0.05) but the ratio's 95% interval straddles the 1% line a verdict
 * needs crossed, so that measuring as much again would likely settle it.
 * Never for --runs, --max-runs or --precision, nor past a third of
 * --max-time spent. */
int pl_bench_close_call(const struct pl_bench_run *run);

/* Run every benchmark. Returns PL_OK, PL_EINTR (summary still valid),
 * PL_ENOEXEC (a command could not be started), PL_EFAILED (a hook failed).
 * A benchmark whose command fails is marked PL_BENCH_FAILED and the others
 * go on; run->failed says so. */
int pl_bench_execute(struct pl_bench_run *run, struct pl_error *err);

/* Statistics and comparisons over what was measured. */
int pl_bench_finish(struct pl_bench_run *run);

/* Sample values of one metric (-1 wall, -2 user, -3 sys, -4 cpu, -5 rss
 * bytes, -10 the program's number (--metric), >= 0 a counter): the mean of each run of `batch` consecutive
 * counted executions; a last, incomplete batch is left out. Returns how
 * many were written to out (room for b->n). batch 1: per execution. */
size_t pl_bench_values(const struct pl_bench *b, int metric, size_t batch, double *out);

/* A --batch value: "auto" is 0, K is 1..1000000; -1 for anything else. */
int pl_bench_parse_batch(const char *s);

/* The batch that aims at PL_BATCH_TARGET_CV for a per-execution CV, kept
 * to at most max_batch (>= 1). */
size_t pl_bench_batch_for(double exec_cv, size_t max_batch);

/* Why b's timing is too noisy, from what was measured: a drift over the
 * run, noise that batching did not lower, a batch capped by --max-time,
 * or per-execution noise with no batching. One sentence with what helps. */
void pl_bench_noise_cause(const struct pl_bench_config *cfg, const struct pl_bench *b, char *out,
			  size_t len);

/* Compare two sample sets (e.g. against a saved baseline). */
int pl_bench_compare(const double *cand, size_t nc, const double *ref, size_t nr, size_t resamples,
		     uint64_t seed, struct pl_comparison *out);

void pl_bench_run_release(struct pl_bench_run *run);

/* Run one of the hooks (what: "prepare", "conclude", ...) for b, its
 * output to /dev/null; PL_EFAILED where it fails. */
int pl_bench_hook(struct pl_bench_run *run, const struct pl_bench *b, const char *what,
		  const char *hook, struct pl_error *err);

/* Median of a sample's metric over the planned runs so far (for progress). */
double pl_bench_current_median(const struct pl_bench *b);

#endif
