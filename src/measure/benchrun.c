/*
 * The benchmark engine (see benchrun.h).
 *
 * Run-count policy, decided after each command's first measured run:
 *   --runs N                      exactly N;
 *   --precision PCT               until the 95% CI of the median is within
 *                                 +-PCT% (checked with a cheaper bootstrap as
 *                                 runs come in), between min and max runs;
 *   otherwise                     max(min-runs, time-budget / first run),
 *                                 capped by max-runs.
 * Interleaved order runs one batch of each pending command per round,
 * starting the round one command later each time, so slow drifts of the
 * machine (heat, a neighbour's job) spread evenly over the commands instead
 * of biasing one.
 *
 * Samples are batch means (as pyperf's values are means over loops and
 * criterion's samples are iterations): a sample is the mean time of k
 * consecutive executions, so the sample CV falls as 1/sqrt(k) where the
 * executions' noise is independent, and both more runs and --precision
 * work. k is --batch, or calibrated: after the warm-up, a few executions
 * of each command estimate the per-execution CV c, and k = (c / 2.5%)^2,
 * one k for all the commands compared (medians of means over different k
 * are not comparable), kept small enough for the planned samples (--runs,
 * else --min-runs) to fit in --max-time.
 * Run counts (--runs, the budget, --precision) count samples. Every
 * execution is kept; outliers are flagged per execution.
 *
 * This file is the run loop: the configuration, the run-count policy, the
 * pin (and --pin auto's check for a parallel command in the warm-up), the
 * two orders and the close call's extra rounds. One execution with its
 * hooks and I/O is benchexec.c; a sample between speed probes and the
 * contention they find, benchprobe.c; the batch size, benchbatch.c; the
 * statistics after the run, benchstats.c. benchrun_int.h is what they share.
 */
#include "benchrun_int.h"

#include <math.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "spawn.h"

#define PRECISION_DEFAULT_MAX 1000
#define PRECISION_CHECK_RESAMPLES 2000

void pl_bench_config_defaults(struct pl_bench_config *cfg)
{
	memset(cfg, 0, sizeof(*cfg));
	cfg->warmup = 1;
	cfg->min_runs = 10;
	cfg->time_budget_s = 3.0;
	cfg->max_time_s = 60.0;
	cfg->batch = 0; /* calibrated (--batch auto); --batch 1: every run a sample */
	cfg->pin = PL_PIN_AUTO;
	cfg->wait_quiet_s = 5.0;
	const char *wq = getenv("PERFLOOP_WAIT_QUIET");
	if (wq && *wq) {
		char *end;
		double v = strtod(wq, &end);
		if (!*end && v >= 0 && v <= 3600)
			cfg->wait_quiet_s = v;
	}
	cfg->order = PL_ORDER_INTERLEAVED;
	cfg->output = "null";
	cfg->resamples = 10000;
	cfg->seed = 20261202;
}

int pl_bench_add(struct pl_bench_run *run, const char *name, const char *command, size_t nparams,
		 const char **param_names, char **param_values, struct pl_error *err)
{
	struct pl_bench *nb = realloc(run->bench, (run->nbench + 1) * sizeof(*nb));
	if (!nb)
		return PL_ENOMEM;
	run->bench = nb;
	struct pl_bench *b = &run->bench[run->nbench];
	memset(b, 0, sizeof(*b));
	int rc = pl_bench_split_command(&run->cfg, command, &b->argv, err);
	if (rc != PL_OK) {
		if (rc == PL_EINPUT && err)
			pl_error_set(err, PL_EINPUT, "command '%s': %s", command, err->msg);
		return rc;
	}
	b->name = strdup(name ? name : command);
	b->command = strdup(command);
	b->nparams = nparams;
	b->param_names = param_names;
	b->param_values = param_values;
	if (!b->name || !b->command) {
		free(b->name);
		free(b->command);
		pl_argv_release(&b->argv);
		return PL_ENOMEM;
	}
	run->nbench++;
	return PL_OK;
}

void pl_bench_plan(const struct pl_bench_config *cfg, struct pl_bench *b, double first_wall)
{
	if (b->target)
		return;
	size_t k = b->batch ? b->batch : 1;
	size_t target;
	if (cfg->runs > 0) {
		target = (size_t)cfg->runs;
	} else if (cfg->precision_pct > 0) {
		target = cfg->max_runs > 0 ? (size_t)cfg->max_runs : PRECISION_DEFAULT_MAX;
		/* batched, a precision never reached ends at --max-time too (200
		 * samples of a minute's batch each were 40 minutes) */
		double per = first_wall * (double)k;
		if (k > 1 && per > 0 && cfg->max_time_s > 0) {
			size_t cap = (size_t)(cfg->max_time_s / per);
			if (cap < (size_t)cfg->min_runs)
				cap = (size_t)cfg->min_runs;
			if (target > cap)
				target = cap < 5 ? 5 : cap;
		}
	} else {
		double per = first_wall * (double)k;
		double by_budget = per > 0 ? cfg->time_budget_s / per : 1e9;
		if (by_budget > 1e9)
			by_budget = 1e9;
		target = (size_t)ceil(by_budget);
		if (target < (size_t)cfg->min_runs)
			target = (size_t)cfg->min_runs;
		/* a batched command keeps within --max-time, 5 samples at least */
		if (k > 1 && per > 0 && cfg->max_time_s > 0) {
			size_t cap = (size_t)(cfg->max_time_s / per);
			if (target > cap)
				target = cap < 5 ? 5 : cap;
		}
		if (cfg->max_runs > 0 && target > (size_t)cfg->max_runs)
			target = (size_t)cfg->max_runs;
	}
	b->target = (target ? target : 1) * k;
}

static int precision_reached(const struct pl_bench_config *cfg, const struct pl_bench *b)
{
	size_t per = b->batch ? b->batch : 1, nc = b->n - b->replaced, ns = nc / per;
	if (nc % per != 0 || ns < (size_t)cfg->min_runs || ns < 3)
		return 0;
	/* checking costs a bootstrap: every sample early, every ~10% later */
	if (ns > 30 && ns % (ns / 10) != 0)
		return 0;
	double *x = malloc(b->n * sizeof(*x));
	if (!x)
		return 0;
	size_t k = pl_bench_collect(b, x, -1);
	double lo, hi;
	int ok = 0;
	if (k >= 3 && pl_stats_bootstrap_median_ci(x, k, PRECISION_CHECK_RESAMPLES, cfg->seed, 0.95,
						   &lo, &hi) == PL_OK) {
		double med = pl_stats_median_inplace(x, k);
		double half = fmax(med - lo, hi - med);
		ok = med > 0 && half / med * 100.0 <= cfg->precision_pct;
	}
	free(x);
	return ok;
}

/* alone: this command's precision alone may end it. Interleaved commands
 * under --precision stop together (see pl_bench_execute), so that their
 * samples cover the same stretch of time and a drifting machine cannot
 * favour the one that ran longer. */
int pl_bench_finished(const struct pl_bench_config *cfg, const struct pl_bench *b, int alone)
{
	if (b->state != PL_BENCH_PENDING)
		return 1;
	if (b->target && b->n - b->replaced >= b->target)
		return 1;
	size_t k = b->batch ? b->batch : 1;
	if (alone && cfg->precision_pct > 0 && (b->n - b->replaced) % k == 0 &&
	    precision_reached(cfg, b))
		return 1;
	return 0;
}

/* A command that ran on this many CPUs at once (CPU time over wall time)
 * is parallel: pinned to one CPU, its processes or threads would queue */
#define PARALLEL_CPUS 1.3
#define PARALLEL_CPUS_LOADED 1.15
/* the shortest warm-up run whose share of a busy machine is read (the
 * scheduler's slices are milliseconds; a shorter run got whole CPUs or
 * none) */
#define PARALLEL_LOADED_MIN_SPAN_S 0.05

/* The first warm-up run of each command under --pin auto runs on every
 * allowed CPU; if it is parallel (a DataLoader's workers, make -j, a
 * thread pool), the pin is dropped for the whole run and the reason kept. */
/* Tasks runnable on the machine now, perfloop's own reading one of them
 * (/proc/stat's procs_running); -1 where unknown. */
static int procs_running(void)
{
	FILE *f = fopen("/proc/stat", "r");
	if (!f)
		return -1;
	char line[256];
	int n = -1;
	while (fgets(line, sizeof(line), f))
		if (sscanf(line, "procs_running %d", &n) == 1)
			break;
	fclose(f);
	return n;
}

/* The share of a CPU one task of its own could have had beside `others`
 * runnable tasks on `ncpu` CPUs (the scheduler shares them out evenly). */
static double one_task_share(int ncpu, double others)
{
	double share = ncpu / (1.0 + (others > 0 ? others : 0));
	return share < 1 ? share : 1;
}

static int parallel_check(struct pl_bench_run *run, struct pl_bench *b, const struct io *io,
			  struct pl_error *err)
{
	pl_machine_unpin(&run->autopin_saved);
	run->last_cpus = 0;
	run->last_span = 0;
	/* On a busy machine a parallel command gets fewer CPUs than it could
	 * use (seen: a 2-worker DataLoader beside two CPU hogs ran on 1.2 CPUs,
	 * was pinned, and measured 1.75x slower than 0 workers). So its CPUs
	 * are compared with what one task alone would have had beside the
	 * other runnable tasks, counted before and after the run. */
	int before = procs_running();
	int rc = pl_bench_one_run(run, b, io, 0, err);
	int after = procs_running();
	double cpus = run->last_cpus; /* a warm-up run records no sample */
	cpu_set_t allowed;
	int ncpu = sched_getaffinity(0, sizeof(allowed), &allowed) == 0 ? CPU_COUNT(&allowed) : 1;
	double others = before >= 1 && after >= 1 ? (before - 1 + after - 1) / 2.0 : 0;
	/* procs_running counts the whole machine's tasks: those on the CPUs
	 * perfloop may use are their share of them (a cpuset, taskset) */
	long online = sysconf(_SC_NPROCESSORS_ONLN);
	if (online > ncpu && ncpu > 0)
		others = others * ncpu / (double)online;
	double share = one_task_share(ncpu, others);
	/* under load the margin is narrower: a single task gets about its share
	 * (ratio 1), two busy ones measured 1.2-1.5 times it beside two hogs;
	 * but a run too short to have had a share (`true`, a millisecond, beside
	 * four busy tests: share 0.4, measured 0.5, let go; t113 on a loaded
	 * clone) is held to the quiet machine's margin */
	double limit = share < 1 && run->last_span >= PARALLEL_LOADED_MIN_SPAN_S
			   ? PARALLEL_CPUS_LOADED * share
			   : PARALLEL_CPUS;
	if (rc == PL_OK && cpus >= limit) {
		if (share < 1)
			snprintf(run->unpinned_why, sizeof(run->unpinned_why),
				 "'%.80s' ran on %.1f CPUs at once in its warm-up run, beside %.1f "
				 "other busy tasks on %d CPUs where one task gets %.2f; pinned to "
				 "one CPU it would queue (--pin N pins it anyway)",
				 b->name, cpus, others, ncpu, share);
		else
			snprintf(run->unpinned_why, sizeof(run->unpinned_why),
				 "'%.80s' ran on %.1f CPUs at once in its warm-up run; pinned to "
				 "one CPU it would queue (--pin N pins it anyway)",
				 b->name, cpus);
		run->autopin_cpu = -1;
		return rc;
	}
	cpu_set_t ignored;
	struct pl_error e2;
	if (pl_machine_pin(run->autopin_cpu, &ignored, &e2) != PL_OK)
		run->autopin_cpu = -1; /* cannot happen: it was allowed a moment ago */
	return rc;
}

static int warm_up(struct pl_bench_run *run, struct pl_bench *b, const struct io *io, size_t idx,
		   struct pl_error *err)
{
	for (int w = 0; w < run->cfg.warmup && b->state == PL_BENCH_PENDING; w++) {
		int rc = w == 0 && run->autopin_cpu >= 0 ? parallel_check(run, b, io, err)
							  : pl_bench_one_run(run, b, io, 0, err);
		if (rc != PL_OK)
			return rc;
		if (run->progress)
			run->progress(run->progress_arg, b, idx, PL_PROGRESS_WARMUP);
	}
	return PL_OK;
}

/* Under --precision, interleaved commands end when all have reached it,
 * or one its most samples. */
static void stop_together(struct pl_bench_run *run)
{
	int pending = 0, capped = 0;
	for (size_t i = 0; i < run->nbench; i++)
		capped |= run->bench[i].state == PL_BENCH_DONE;
	for (size_t i = 0; i < run->nbench; i++) {
		struct pl_bench *b = &run->bench[i];
		if (b->state != PL_BENCH_PENDING)
			continue;
		pending = 1;
		/* one that reached its most samples (--max-runs, or --max-time
		 * for a batch) ends the others' round too */
		if (!capped && !precision_reached(&run->cfg, b))
			return;
	}
	if (!pending)
		return;
	/* the last executions judged first: some may be left out */
	if (run->seg_open) {
		pl_bench_close_segment(run);
		for (size_t i = 0; !capped && i < run->nbench; i++)
			if (run->bench[i].state == PL_BENCH_PENDING &&
			    !precision_reached(&run->cfg, &run->bench[i]))
				return;
	}
	for (size_t i = 0; pending && i < run->nbench; i++) {
		struct pl_bench *b = &run->bench[i];
		if (b->state == PL_BENCH_PENDING) {
			b->state = PL_BENCH_DONE;
			if (run->progress)
				run->progress(run->progress_arg, b, i, PL_PROGRESS_END);
		}
	}
}

/* A close call: a command differs from the reference significantly (p <
 * 0.05) but the ratio's interval straddles the 1% line the verdict needs
 * wholly crossed. Twice the samples narrow the interval by about 1/sqrt(2)
 * and settle most of them (a 2% difference at 200 ms: 11 of 20 found with
 * the planned samples alone). Only for a planned count (not --runs,
 * --max-runs or --precision), twice at most, within --max-time. */
#define CLOSE_CALL_EXTENSIONS 2

int pl_bench_close_call(const struct pl_bench_run *run)
{
	const struct pl_bench_config *cfg = &run->cfg;
	if (cfg->runs > 0 || cfg->max_runs > 0 || cfg->precision_pct > 0 || run->nbench < 2)
		return 0;
	const struct pl_bench *ref = &run->bench[run->reference];
	size_t cap = 0;
	for (size_t i = 0; i < run->nbench; i++)
		cap = run->bench[i].n > cap ? run->bench[i].n : cap;
	double *x = malloc((cap + 1) * sizeof(*x)), *y = malloc((cap + 1) * sizeof(*y));
	int close = 0;
	size_t k = ref->batch ? ref->batch : 1;
	size_t ny = x && y ? pl_bench_values(ref, -1, k, y) : 0;
	for (size_t i = 0; ny >= 5 && i < run->nbench && !close; i++) {
		const struct pl_bench *b = &run->bench[i];
		if (i == run->reference || b->state == PL_BENCH_FAILED)
			continue;
		double spent = 0;
		for (size_t j = 0; j < b->n; j++)
			spent += b->samples[j].wall_s;
		if (cfg->max_time_s > 0 && 3 * spent > cfg->max_time_s)
			continue; /* doubling would pass --max-time */
		size_t nx = pl_bench_values(b, -1, k, x);
		struct pl_comparison c;
		if (nx < 5 || pl_bench_compare(x, nx, y, ny, 2000, cfg->seed, &c) != PL_OK)
			continue;
		close = c.p < 0.05 && ((c.ci_lo < 1.01 && c.ci_hi > 1.01) ||
				       (c.ci_lo < 1 / 1.01 && c.ci_hi > 1 / 1.01));
	}
	free(x);
	free(y);
	return close;
}

int pl_bench_interrupted(const struct pl_bench_run *run)
{
	return run->interrupted || (run->interrupt_flag && *run->interrupt_flag);
}

static int execute_pinned(struct pl_bench_run *run, struct pl_error *err);

/* Pin (--pin), wait for the CPU to be quiet (--wait-quiet), measure, and
 * give perfloop its CPUs back. */
int pl_bench_execute(struct pl_bench_run *run, struct pl_error *err)
{
	const struct pl_bench_config *cfg = &run->cfg;
	int cpu = cfg->pin >= 0 ? cfg->pin : cfg->pin == PL_PIN_AUTO ? pl_machine_auto_cpu() : -1;
	cpu_set_t saved;
	int pinned = 0;
	run->autopin_cpu = -1;
	run->unpinned_why[0] = '\0';
	if (cpu >= 0) {
		int rc = pl_machine_pin(cpu, &saved, err);
		if (rc != PL_OK)
			return rc;
		pinned = 1;
		if (cfg->pin == PL_PIN_AUTO) {
			run->autopin_cpu = cpu;
			run->autopin_saved = saved;
		}
		if (cfg->pin >= 0)
			snprintf(run->pinned_by, sizeof(run->pinned_by), "--pin %d", cpu);
		else
			snprintf(run->pinned_by, sizeof(run->pinned_by), "--pin auto");
	} else if (cfg->pin != PL_PIN_NONE && sched_getaffinity(0, sizeof(saved), &saved) == 0 &&
		   CPU_COUNT(&saved) == 1) {
		for (int c = 0; c < CPU_SETSIZE; c++) /* pinned from outside (taskset) */
			if (CPU_ISSET(c, &saved))
				cpu = c;
		snprintf(run->pinned_by, sizeof(run->pinned_by), "the caller");
	}
	pl_machine_wait_quiet(cpu, cfg->wait_quiet_s, run->interrupt_flag, &run->quiet);
	int rc = execute_pinned(run, err);
	if (run->unpinned_why[0]) { /* --pin auto let go of a parallel command */
		cpu = -1;
		run->pinned_by[0] = '\0';
	}
	run->fp.pinned_cpu = cpu;
	if (pinned)
		pl_machine_unpin(&saved);
	return rc;
}

static int execute_pinned(struct pl_bench_run *run, struct pl_error *err)
{
	time_t t = time(NULL);
	struct tm tm;
	gmtime_r(&t, &tm);
	strftime(run->started, sizeof(run->started), "%Y-%m-%dT%H:%M:%SZ", &tm);
	/* waiting out a contended CPU: up to twice the wait for an idle one in
	 * all (--wait-quiet 0: never) */
	pl_speedprobe_release(&run->sp);
	pl_speedprobe_init(&run->sp, 2 * run->cfg.wait_quiet_s);
	run->seg_open = 0;
	run->extended = 0;

	/* A command that cannot be started is bad input: say so before
	 * anything runs. */
	for (size_t i = 0; i < run->nbench; i++) {
		char *path = pl_spawn_which(run->bench[i].argv.v[0]);
		if (!path)
			return pl_error_set(err, PL_ENOEXEC, "cannot start '%s': command not found",
					    run->bench[i].argv.v[0]);
		free(path);
	}
	for (size_t i = 0; i < run->nbench; i++) {
		run->bench[i].batch = run->cfg.batch > 0 ? (size_t)run->cfg.batch : 1;
		run->bench[i].exec_cv = NAN;
		run->bench[i].max_batch = 0;
		run->bench[i].in_seg = 0;
		if (run->cfg.batch > 0)
			snprintf(run->bench[i].batch_why, sizeof(run->bench[i].batch_why),
				 "--batch %d", run->cfg.batch);
	}
	pl_fingerprint_read(&run->fp);
	if (run->nbench > 0)
		pl_fingerprint_toolchain(&run->fp, run->bench[0].argv.v);

	struct io io;
	int rc = pl_bench_open_io(&run->cfg, &io, err);
	if (rc != PL_OK)
		return rc;

	if (run->cfg.order == PL_ORDER_SEQUENTIAL || run->nbench == 1) {
		for (size_t i = 0; i < run->nbench && rc == PL_OK && !pl_bench_interrupted(run);
		     i++) {
			struct pl_bench *b = &run->bench[i];
			rc = pl_bench_run_hook(run, b, "setup", run->cfg.setup, &io, err);
			if (rc == PL_OK)
				rc = warm_up(run, b, &io, i, err);
			if (rc == PL_OK && run->cfg.batch == 0) {
				size_t k;
				if ((rc = pl_bench_calibrate(run, b, &io, i, &k, err)) == PL_OK)
					pl_bench_set_batch(b, k, NULL);
			}
			while (rc == PL_OK && b->state == PL_BENCH_PENDING &&
			       !pl_bench_interrupted(run))
				rc = pl_bench_measured_run(run, b, &io, i, 1, err);
			if (rc == PL_OK)
				rc = pl_bench_run_hook(run, b, "cleanup", run->cfg.cleanup, &io,
						       err);
		}
	} else {
		for (size_t i = 0; i < run->nbench && rc == PL_OK && !pl_bench_interrupted(run);
		     i++) {
			rc = pl_bench_run_hook(run, &run->bench[i], "setup", run->cfg.setup, &io,
					       err);
			if (rc == PL_OK)
				rc = warm_up(run, &run->bench[i], &io, i, err);
		}
		/* one batch for all: the largest any command calls for */
		size_t common = 1, which = 0;
		for (size_t i = 0; i < run->nbench && rc == PL_OK && run->cfg.batch == 0 &&
				   !pl_bench_interrupted(run);
		     i++) {
			size_t k;
			rc = pl_bench_calibrate(run, &run->bench[i], &io, i, &k, err);
			if (k > common) {
				common = k;
				which = i;
			}
		}
		/* ... but within every command's --max-time: the noisiest is often
		 * the fastest, and its batch would make a slow command's samples
		 * take minutes (seen: a 1 ms command's batch of 144 on a 50 ms one) */
		size_t capped = 0;
		for (size_t i = 0; i < run->nbench && run->cfg.batch == 0; i++) {
			size_t mb = run->bench[i].max_batch;
			if (mb && common > mb) {
				common = mb;
				capped = i + 1;
			}
		}
		/* written once: pl_bench_set_batch changes the noisiest's own reason */
		char why[320] = "";
		if (run->nbench && capped)
			snprintf(why, sizeof(why),
				 "%.160s; the batch of '%.40s', the noisiest, capped by "
				 "--max-time for '%.40s'",
				 run->bench[which].batch_why, run->bench[which].name,
				 run->bench[capped - 1].name);
		else if (run->nbench)
			snprintf(why, sizeof(why), "%.200s; the batch of '%.60s', the noisiest, for all",
				 run->bench[which].batch_why, run->bench[which].name);
		for (size_t i = 0; i < run->nbench && rc == PL_OK && run->cfg.batch == 0; i++)
			pl_bench_set_batch(&run->bench[i], common,
					   i == which && !capped ? NULL : why);
		for (size_t ext = 0;; ext++) {
			for (size_t round = 0; rc == PL_OK && !pl_bench_interrupted(run); round++) {
				int any = 0;
				for (size_t k = 0;
				     k < run->nbench && rc == PL_OK && !pl_bench_interrupted(run);
				     k++) {
					size_t i = (k + round) % run->nbench;
					struct pl_bench *b = &run->bench[i];
					if (b->state != PL_BENCH_PENDING)
						continue;
					any = 1;
					rc = pl_bench_measured_run(run, b, &io, i, 0, err);
				}
				if (!any)
					break;
				if (run->cfg.precision_pct > 0 && rc == PL_OK)
					stop_together(run);
			}
			if (rc != PL_OK || pl_bench_interrupted(run) ||
			    ext == CLOSE_CALL_EXTENSIONS || !pl_bench_close_call(run))
				break;
			/* a close call: every command measured as much again */
			run->extended++;
			for (size_t i = 0; i < run->nbench; i++) {
				struct pl_bench *b = &run->bench[i];
				if (b->state != PL_BENCH_DONE)
					continue;
				b->target += b->target / (ext + 1);
				b->state = PL_BENCH_PENDING;
			}
		}
		for (size_t i = 0; i < run->nbench && rc == PL_OK && !pl_bench_interrupted(run);
		     i++)
			rc = pl_bench_run_hook(run, &run->bench[i], "cleanup", run->cfg.cleanup,
					       &io, err);
	}
	pl_bench_close_segment(run);
	/* enough readings to tell the machine's speed (the fingerprint's
	 * speed_probe), however few the runs */
	while (run->sp.n < 5 && !pl_bench_interrupted(run))
		pl_speedprobe_take(&run->sp);
	pl_bench_close_io(&io);
	if (pl_bench_interrupted(run)) {
		run->interrupted = 1;
		return pl_error_set(err, PL_EINTR, "interrupted");
	}
	return rc;
}

void pl_bench_run_release(struct pl_bench_run *run)
{
	for (size_t i = 0; i < run->nbench; i++) {
		struct pl_bench *b = &run->bench[i];
		free(b->name);
		free(b->command);
		pl_argv_release(&b->argv);
		for (size_t p = 0; p < b->nparams; p++)
			free(b->param_values[p]);
		free(b->param_values);
		free(b->samples);
		free(b->outlier);
	}
	free(run->bench);
	free(run->cmp);
	pl_speedprobe_release(&run->sp);
	run->bench = NULL;
	run->cmp = NULL;
	run->nbench = run->ncmp = 0;
}
