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
 */
#include "benchrun.h"
#include "allocprof.h"

#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>
#include <unistd.h>
#include <sys/mman.h>
#include <sys/stat.h>

#include "metric.h"
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

static int split_command(const struct pl_bench_config *cfg, const char *command,
			 struct pl_argv *argv, struct pl_error *err)
{
	if (!cfg->shell)
		return pl_words_split(command, argv, err);
	argv->v = calloc(4, sizeof(char *));
	if (!argv->v)
		return PL_ENOMEM;
	argv->v[0] = strdup("/bin/sh");
	argv->v[1] = strdup("-c");
	argv->v[2] = strdup(command);
	argv->n = 3;
	if (!argv->v[0] || !argv->v[1] || !argv->v[2]) {
		pl_argv_release(argv);
		return PL_ENOMEM;
	}
	return PL_OK;
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
	int rc = split_command(&run->cfg, command, &b->argv, err);
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

/* {NAME} substitution of a hook command for benchmark b. */
static char *substitute_params(const struct pl_bench *b, const char *s)
{
	char *cur = strdup(s);
	for (size_t i = 0; cur && i < b->nparams; i++) {
		char *next = pl_words_substitute(cur, b->param_names[i], b->param_values[i]);
		free(cur);
		cur = next;
	}
	return cur;
}

struct io {
	int in_fd;   /* -1: /dev/null */
	int out_fd;  /* -1: /dev/null, -2: inherit */
	int null_fd; /* opened once, not per run */
	int metric_fd; /* --metric: the run's output, read back after it; -1 off */
};

static int fd_or_null(const struct io *io, int fd)
{
	return fd == -1 ? io->null_fd : fd;
}

static int run_hook(struct pl_bench_run *run, const struct pl_bench *b, const char *what,
		    const char *hook, const struct io *io, struct pl_error *err)
{
	if (!hook)
		return PL_OK;
	char *cmd = substitute_params(b, hook);
	if (!cmd)
		return PL_ENOMEM;
	struct pl_argv argv;
	int rc = split_command(&run->cfg, cmd, &argv, err);
	if (rc != PL_OK) {
		if (rc == PL_EINPUT)
			pl_error_set(err, PL_EINPUT, "option '--%s': %s", what,
				     err ? err->msg : "");
		free(cmd);
		return rc;
	}
	struct pl_spawn_opts o = {.argv = argv.v,
				  .stdin_fd = io->null_fd,
				  .stdout_fd = fd_or_null(io, io->out_fd),
				  .stderr_fd = fd_or_null(io, io->out_fd),
				  .timeout_s = run->cfg.timeout_s,
				  .interrupted = run->interrupt_flag};
	struct pl_run_result r;
	rc = pl_spawn_run(&o, &r, err);
	if (rc == PL_ENOEXEC) {
		pl_error_set(err, PL_ENOEXEC, "--%s %s", what, err ? err->msg : "");
	} else if (rc == PL_OK && (r.timed_out || r.signal || r.exit_code)) {
		char sig[32];
		if (r.timed_out)
			rc =
			    pl_error_set(err, PL_EFAILED, "--%s command '%s' timed out", what, cmd);
		else if (r.stopped)
			rc = pl_error_set(err, PL_EFAILED,
					  "--%s command '%s' was stopped by %s and killed", what,
					  cmd, pl_signal_name(r.stopped, sig, sizeof(sig)));
		else if (r.signal)
			rc = pl_error_set(err, PL_EFAILED, "--%s command '%s' was killed by %s",
					  what, cmd, pl_signal_name(r.signal, sig, sizeof(sig)));
		else
			rc = pl_error_set(err, PL_EFAILED, "--%s command '%s' exited with code %d",
					  what, cmd, r.exit_code);
	}
	pl_argv_release(&argv);
	free(cmd);
	return rc;
}

int pl_bench_hook(struct pl_bench_run *run, const struct pl_bench *b, const char *what,
		  const char *hook, struct pl_error *err)
{
	if (!hook)
		return PL_OK;
	struct io io = {.in_fd = -1,
			.out_fd = -1,
			.null_fd = open("/dev/null", O_RDWR | O_CLOEXEC),
			.metric_fd = -1};
	if (io.null_fd < 0)
		return pl_error_set(err, PL_ESYS, "cannot open '/dev/null': %s", strerror(errno));
	int rc = run_hook(run, b, what, hook, &io, err);
	close(io.null_fd);
	return rc;
}

static void plan(const struct pl_bench_config *cfg, struct pl_bench *b, double first_wall)
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

int pl_bench_parse_batch(const char *s)
{
	if (strcmp(s, "auto") == 0)
		return 0;
	char *end;
	errno = 0;
	long k = strtol(s, &end, 10);
	return errno || end == s || *end || k < 1 || k > 1000000 ? -1 : (int)k;
}

size_t pl_bench_batch_for(double exec_cv, size_t max_batch)
{
	if (!(exec_cv > 0) || max_batch < 1)
		return 1;
	double k = ceil(pow(exec_cv / PL_BATCH_TARGET_CV, 2));
	if (k < 1)
		k = 1;
	if (k > (double)max_batch)
		k = (double)max_batch;
	return (size_t)k;
}

static int counted(const struct pl_sample *s)
{
	return s->counted;
}

static int value(const struct pl_sample *s, int metric, double *v)
{
	switch (metric) {
	case -1:
		*v = s->wall_s;
		return 1;
	case -2:
		*v = s->user_s;
		return 1;
	case -3:
		*v = s->sys_s;
		return 1;
	case -4:
		*v = s->user_s + s->sys_s;
		return 1;
	case -5:
		*v = (double)s->max_rss_kb * 1024.0;
		return 1;
	case -6:
		*v = (double)s->minflt;
		return 1;
	case -7:
		*v = (double)s->majflt;
		return 1;
	case -8:
		*v = s->alloc_bytes;
		return s->alloc_bytes >= 0;
	case -9:
		*v = s->alloc_calls;
		return s->alloc_calls >= 0;
	case -10:
		*v = s->metric;
		return !isnan(s->metric);
	default:
		*v = s->counter[metric];
		return s->counter_ok[metric];
	}
}

size_t pl_bench_values(const struct pl_bench *b, int metric, size_t batch, double *out)
{
	if (batch < 1)
		batch = 1;
	size_t k = 0, in = 0, ok = 1;
	double sum = 0;
	for (size_t i = 0; i < b->n; i++) {
		const struct pl_sample *s = &b->samples[i];
		if (!counted(s))
			continue;
		double v;
		if (value(s, metric, &v))
			sum += v;
		else
			ok = 0;
		if (++in == batch) {
			if (ok)
				out[k++] = sum / (double)batch;
			in = 0;
			ok = 1;
			sum = 0;
		}
	}
	return k;
}

static size_t collect(const struct pl_bench *b, double *out, int metric)
{
	return pl_bench_values(b, metric, b->batch, out);
}

double pl_bench_current_median(const struct pl_bench *b)
{
	if (b->n == 0)
		return NAN;
	double *x = malloc(b->n * sizeof(*x));
	if (!x)
		return NAN;
	size_t k = collect(b, x, -1);
	double m = k ? pl_stats_median_inplace(x, k) : NAN;
	free(x);
	return m;
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
	size_t k = collect(b, x, -1);
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

static int push_sample(struct pl_bench *b, const struct pl_sample *s)
{
	if (b->n == b->cap) {
		size_t cap = b->cap ? b->cap * 2 : 16;
		struct pl_sample *ns = realloc(b->samples, cap * sizeof(*ns));
		if (!ns)
			return PL_ENOMEM;
		b->samples = ns;
		b->cap = cap;
	}
	b->samples[b->n++] = *s;
	return PL_OK;
}

/* The program's number from the run's output (held in fd). */
static void read_metric(const struct pl_metric *m, int fd, double *value, size_t *count,
			char *why, size_t wlen)
{
	struct stat st;
	if (fstat(fd, &st) != 0 || st.st_size < 0) {
		snprintf(why, wlen, "its output could not be read back");
		return;
	}
	size_t len = (size_t)st.st_size;
	char *text = malloc(len + 1);
	if (!text) {
		snprintf(why, wlen, "out of memory");
		return;
	}
	size_t got = 0;
	while (got < len) {
		ssize_t n = pread(fd, text + got, len - got, (off_t)got);
		if (n <= 0)
			break;
		got += (size_t)n;
	}
	text[got] = '\0';
	double v;
	if (pl_metric_extract(m, text, got, &v, count, why, wlen))
		*value = v;
	free(text);
}

/* One run (measured or warm-up) with its prepare/conclude hooks. */
static int one_run(struct pl_bench_run *run, struct pl_bench *b, const struct io *io, int measured,
		   struct pl_error *err)
{
	const struct pl_bench_config *cfg = &run->cfg;
	int rc = run_hook(run, b, "prepare", cfg->prepare, io, err);
	if (rc != PL_OK)
		return rc;
	if (io->in_fd >= 0)
		lseek(io->in_fd, 0, SEEK_SET);
	struct pl_spawn_opts o = {.argv = b->argv.v,
				  .stdin_fd = fd_or_null(io, io->in_fd),
				  .stdout_fd = fd_or_null(io, io->out_fd),
				  .stderr_fd = fd_or_null(io, io->out_fd),
				  .timeout_s = cfg->timeout_s,
				  .interrupted = run->interrupt_flag,
				  .counters = cfg->counters.n ? &cfg->counters : NULL};
	if (io->metric_fd >= 0) { /* the output is read back for the number */
		if (ftruncate(io->metric_fd, 0) != 0 || lseek(io->metric_fd, 0, SEEK_SET) != 0)
			return pl_error_set(err, PL_ESYS, "--metric: cannot reset its buffer: %s",
					    strerror(errno));
		o.stdout_fd = o.stderr_fd = io->metric_fd;
	}
	/* Linux counts the address space that exec replaces in the child's
	 * ru_maxrss, and a CLONE_VM child's is ours: our peak is a floor under
	 * every measured RSS, recorded so the memory dimension can say so. */
	struct rusage self;
	if (getrusage(RUSAGE_SELF, &self) == 0 && self.ru_maxrss > b->rss_floor_kb)
		b->rss_floor_kb = self.ru_maxrss;
	struct pl_run_result r;
	if (cfg->alloc_dir) /* what the prepare hook allocated is not the run's */
		pl_alloc_totals(cfg->alloc_dir, NULL, NULL);
	rc = pl_spawn_run(&o, &r, err);
	double abytes = -1, acalls = -1;
	if (cfg->alloc_dir && rc == PL_OK) {
		uint64_t c = 0, by = 0;
		if (pl_alloc_totals(cfg->alloc_dir, &c, &by) > 0) {
			abytes = (double)by;
			acalls = (double)c;
		}
	}
	if (rc == PL_EINTR) {
		run->interrupted = 1;
		return rc;
	}
	if (rc != PL_OK)
		return rc;
	double mval = NAN;
	size_t mcount = 0;
	char mwhy[600] = "";
	if (io->metric_fd >= 0 && !r.timed_out && !r.stopped)
		read_metric(cfg->metric, io->metric_fd, &mval, &mcount, mwhy, sizeof(mwhy));

	char sig[32];
	if (r.timed_out) {
		snprintf(b->failure, sizeof(b->failure),
			 "timed out after %g s (process group killed)", cfg->timeout_s);
		b->state = PL_BENCH_FAILED;
		run->failed = 1;
	} else if (r.stopped) {
		snprintf(b->failure, sizeof(b->failure),
			 "was stopped by %s and killed (a program stopped this way waits for "
			 "ever: SIGTTOU/SIGTTIN mean it used the terminal; give it </dev/null "
			 "or its own terminal)",
			 pl_signal_name(r.stopped, sig, sizeof(sig)));
		b->state = PL_BENCH_FAILED;
		run->failed = 1;
	} else if (!cfg->ignore_failure && r.signal) {
		snprintf(b->failure, sizeof(b->failure), "crashed: killed by %s",
			 pl_signal_name(r.signal, sig, sizeof(sig)));
		b->state = PL_BENCH_FAILED;
		run->failed = 1;
	} else if (!cfg->ignore_failure && r.exit_code != 0) {
		snprintf(b->failure, sizeof(b->failure),
			 "exited with code %d (use -i/--ignore-failure to benchmark it anyway)",
			 r.exit_code);
		b->state = PL_BENCH_FAILED;
		run->failed = 1;
	} else if (measured && !cfg->ignore_failure && io->metric_fd >= 0 && isnan(mval)) {
		/* the number is the measurement: a run without it measured nothing */
		snprintf(b->failure, sizeof(b->failure), "--metric: %.480s", mwhy);
		b->state = PL_BENCH_FAILED;
		run->failed = 1;
	}
	/* CPUs at once, for every run (warm-ups record no sample): over the
	 * span the CPU times cover. Over wall_s, which starts at exec, a child's
	 * work before exec (slow under ASan) made `true` look parallel: t113
	 * failed once in a CI's ASan run. */
	run->last_cpus = r.span_s > 0 ? (r.user_s + r.sys_s) / r.span_s : 0;
	if (measured || b->state == PL_BENCH_FAILED) {
		struct pl_sample s = {.wall_s = r.wall_s,
				      .user_s = r.user_s,
				      .sys_s = r.sys_s,
				      .max_rss_kb = r.max_rss_kb,
				      .minflt = r.minflt,
				      .majflt = r.majflt,
				      .alloc_bytes = abytes,
				      .alloc_calls = acalls,
				      .metric = mval,
				      .metric_n = mcount,
				      .exit_code = r.exit_code,
				      .signal = r.signal,
				      .timed_out = r.timed_out,
				      .counted = measured && b->state != PL_BENCH_FAILED};
		for (size_t i = 0; i < cfg->counters.n; i++) {
			s.counter[i] = r.counter[i];
			s.counter_ok[i] = (unsigned char)r.counter_ok[i];
		}
		if ((rc = push_sample(b, &s)) != PL_OK)
			return rc;
		if (measured && b->state != PL_BENCH_FAILED)
			plan(cfg, b, r.wall_s);
	}
	if (b->state == PL_BENCH_FAILED)
		return PL_OK;
	return run_hook(run, b, "conclude", cfg->conclude, io, err);
}

/* alone: this command's precision alone may end it. Interleaved commands
 * under --precision stop together (see pl_bench_execute), so that their
 * samples cover the same stretch of time and a drifting machine cannot
 * favour the one that ran longer. */
static int finished(const struct pl_bench_config *cfg, const struct pl_bench *b, int alone)
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
	/* On a busy machine a parallel command gets fewer CPUs than it could
	 * use (seen: a 2-worker DataLoader beside two CPU hogs ran on 1.2 CPUs,
	 * was pinned, and measured 1.75x slower than 0 workers). So its CPUs
	 * are compared with what one task alone would have had beside the
	 * other runnable tasks, counted before and after the run. */
	int before = procs_running();
	int rc = one_run(run, b, io, 0, err);
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
	 * (ratio 1), two busy ones measured 1.2-1.5 times it beside two hogs */
	double limit = share < 1 ? PARALLEL_CPUS_LOADED * share : PARALLEL_CPUS;
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
							  : one_run(run, b, io, 0, err);
		if (rc != PL_OK)
			return rc;
		if (run->progress)
			run->progress(run->progress_arg, b, idx, PL_PROGRESS_WARMUP);
	}
	return PL_OK;
}

static int interrupted(const struct pl_bench_run *run);

/* The longest bench waits, before one sample, for a contended CPU to
 * recover: the host's phases measured here last 1 to 10 s */
#define PROBE_MAX_WAIT_S 2.0

static int contended_reading(const struct pl_speedprobe *sp, struct pl_probe_reading r)
{
	return pl_speedprobe_slowdown(sp, r) > PL_PROBE_CONTENDED;
}

/* Executions between two probes: about this much of the command's time,
 * so that probing costs at most a few percent and a segment stays short
 * beside the host's phases */
#define PROBE_SEGMENT_S 0.010

/* Judge the executions [from, b->n) by the probes around them. Returns how
 * many counted executions it took out. */
static size_t judge_segment(struct pl_bench_run *run, struct pl_bench *b, size_t from,
			    struct pl_probe_reading pre, struct pl_probe_reading post)
{
	struct pl_probe_reading worst = {fmax(pre.lat_s, post.lat_s), fmax(pre.thr_s, post.thr_s)};
	int slow = contended_reading(&run->sp, worst);
	/* past the cap (half as many runs measured again as counted, and
	 * never more than half the planned runs), contended runs are counted:
	 * a machine contended throughout must not make the run last for ever,
	 * nor --precision's large planned count let it */
	size_t counted = b->n - b->replaced, cap = counted / 2 + 5;
	if (cap > b->target / 2)
		cap = b->target / 2;
	int replace = !run->cfg.contention_keep && b->replaced < cap;
	size_t out = 0;
	for (size_t i = from; i < b->n; i++) {
		struct pl_sample *s = &b->samples[i];
		s->probe = worst;
		if (!slow || !s->counted)
			continue;
		s->contended = 1;
		if (replace) {
			s->counted = 0;
			b->replaced++;
			out++;
		}
	}
	return out;
}

/* Close the run's open probe segment: a probe now judges every execution
 * since the segment opened, of every benchmark in it. */
static void close_segment(struct pl_bench_run *run)
{
	if (!run->seg_open)
		return;
	struct pl_probe_reading post = pl_speedprobe_take(&run->sp);
	for (size_t i = 0; i < run->nbench; i++) {
		struct pl_bench *b = &run->bench[i];
		if (b->in_seg)
			judge_segment(run, b, b->seg_from, run->seg_pre, post);
		b->in_seg = 0;
	}
	run->seg_open = 0;
	run->seg_s = 0;
}

static double probe_wait_s(const struct pl_bench_run *run)
{
	return run->cfg.wait_quiet_s > 0 && !run->cfg.contention_keep ? PROBE_MAX_WAIT_S : 0;
}

static void sample_done(struct pl_bench_run *run, struct pl_bench *b, size_t idx, int alone)
{
	if (b->state == PL_BENCH_PENDING && finished(&run->cfg, b, alone)) {
		/* its last executions judged before it is called done */
		if (b->in_seg) {
			close_segment(run);
			if (!finished(&run->cfg, b, alone))
				goto report;
		}
		b->state = PL_BENCH_DONE;
	}
report:
	if (run->progress)
		run->progress(run->progress_arg, b, idx,
			      b->state == PL_BENCH_PENDING ? PL_PROGRESS_RUN : PL_PROGRESS_END);
}

/* A sample of one execution. Its probe segment stays open across samples
 * (and the interleaved commands') until it holds PROBE_SEGMENT_S of runs:
 * a probe around every execution of a 1 ms command cost as much as the
 * command (--batch 1 on /bin/true: 2.4x hyperfine's time). */
static int single_run(struct pl_bench_run *run, struct pl_bench *b, const struct io *io,
		      size_t idx, int alone, struct pl_error *err)
{
	if (!run->seg_open) {
		run->seg_pre = pl_speedprobe_wait(&run->sp, probe_wait_s(run), run->interrupt_flag);
		run->seg_open = 1;
		run->seg_s = 0;
	}
	if (!b->in_seg) {
		b->in_seg = 1;
		b->seg_from = b->n;
	}
	int rc = one_run(run, b, io, 1, err);
	if (rc != PL_OK)
		return rc;
	run->seg_s += b->samples[b->n - 1].wall_s;
	if (run->seg_s >= PROBE_SEGMENT_S || b->state != PL_BENCH_PENDING)
		close_segment(run);
	sample_done(run, b, idx, alone);
	return PL_OK;
}

/* One sample: a batch of k executions on a CPU that was not contended.
 * Probes taken every PROBE_SEGMENT_S of the command's time (and before and
 * after the batch) judge the executions between them; contended ones are
 * kept but not counted, and measured again. */
static int measured_run(struct pl_bench_run *run, struct pl_bench *b, const struct io *io,
			size_t idx, int alone, struct pl_error *err)
{
	size_t k = b->batch ? b->batch : 1, got = 0;
	if (k == 1)
		return single_run(run, b, io, idx, alone, err);
	close_segment(run);
	double wait = probe_wait_s(run);
	double seg_s = 0;
	struct pl_probe_reading pre = pl_speedprobe_wait(&run->sp, wait, run->interrupt_flag);
	size_t seg = b->n;
	while (got < k && b->state == PL_BENCH_PENDING && !interrupted(run)) {
		int rc = one_run(run, b, io, 1, err);
		if (rc != PL_OK)
			return rc;
		const struct pl_sample *s = &b->samples[b->n - 1];
		got += s->counted;
		seg_s += s->wall_s;
		if (got < k && seg_s < PROBE_SEGMENT_S && b->state == PL_BENCH_PENDING)
			continue;
		struct pl_probe_reading post = pl_speedprobe_take(&run->sp);
		got -= judge_segment(run, b, seg, pre, post);
		seg = b->n;
		seg_s = 0;
		pre = run->sp.last_contended && got < k
			  ? pl_speedprobe_wait(&run->sp, wait, run->interrupt_flag)
			  : post;
		if (run->progress && got < k && b->state == PL_BENCH_PENDING)
			run->progress(run->progress_arg, b, idx, PL_PROGRESS_RUN);
	}
	sample_done(run, b, idx, alone);
	return PL_OK;
}

/* The calibration: executions of b one at a time (about 0.3 s, 5 to 30 of
 * them, no more than --runs), kept as b's first samples. Sets b->exec_cv
 * and returns the batch they call for in *k. */
static int calibrate(struct pl_bench_run *run, struct pl_bench *b, const struct io *io,
		     size_t idx, size_t *k, struct pl_error *err)
{
	const struct pl_bench_config *cfg = &run->cfg;
	b->batch = 1;
	*k = 1;
	size_t want = 5;
	for (size_t e = 0; e < want && b->state == PL_BENCH_PENDING && !interrupted(run); e++) {
		int rc = measured_run(run, b, io, idx, 0, err);
		if (rc != PL_OK)
			return rc;
		if (e == 0 && b->n > 0) {
			double first = b->samples[b->n - 1].wall_s;
			double c = first > 0 ? ceil(0.3 / first) : 30;
			want = c < 5 ? 5 : c > 30 ? 30 : (size_t)c;
			if (cfg->runs > 0 && want > (size_t)cfg->runs)
				want = (size_t)cfg->runs;
		}
	}
	close_segment(run);
	double *x = malloc((b->n + 1) * sizeof(*x));
	if (!x)
		return PL_ENOMEM;
	size_t n = pl_bench_values(b, -1, 1, x);
	struct pl_describe d;
	b->exec_cv = NAN;
	if (n >= 2 && pl_stats_describe(x, n, &d) == PL_OK && d.mean > 0) {
		b->exec_cv = d.stdev / d.mean;
		/* the batch that lets the planned samples fit in --max-time */
		double per = d.mean > 0 ? d.mean : 1e-9;
		double samples = cfg->runs > 0 ? cfg->runs : cfg->min_runs > 5 ? cfg->min_runs : 5;
		double room = cfg->max_time_s > 0 ? cfg->max_time_s / (samples * per) : 1e9;
		size_t max_batch = room < 1 ? 1 : room > 1e6 ? 1000000 : (size_t)room;
		b->max_batch = max_batch;
		*k = pl_bench_batch_for(b->exec_cv, max_batch);
		snprintf(b->batch_why, sizeof(b->batch_why),
			 "per-execution CV %.1f%% in %zu calibration runs%s", b->exec_cv * 100, n,
			 *k < pl_bench_batch_for(b->exec_cv, 1000000) ? ", batch capped by --max-time"
								       : "");
	} else {
		snprintf(b->batch_why, sizeof(b->batch_why), "too few calibration runs");
	}
	free(x);
	return PL_OK;
}

/* Use batches of k from now on; the calibration's single executions are
 * dropped when k > 1 (a sample must be a whole batch). */
static void set_batch(struct pl_bench *b, size_t k, const char *why)
{
	if (b->state == PL_BENCH_FAILED) /* its failing run stays on record */
		k = 1;
	if (k > 1 && b->batch != k) {
		b->n = 0;
		b->target = 0;
		b->contended = b->replaced = 0;
		if (b->state == PL_BENCH_DONE)
			b->state = PL_BENCH_PENDING;
	}
	b->batch = k;
	if (why)
		snprintf(b->batch_why, sizeof(b->batch_why), "%s", why);
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
		close_segment(run);
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

static int interrupted(const struct pl_bench_run *run)
{
	return run->interrupted || (run->interrupt_flag && *run->interrupt_flag);
}

static int open_io(const struct pl_bench_config *cfg, struct io *io, struct pl_error *err)
{
	io->in_fd = -1;
	io->out_fd = -1;
	io->metric_fd = -1;
	io->null_fd = open("/dev/null", O_RDWR | O_CLOEXEC);
	if (io->null_fd < 0)
		return pl_error_set(err, PL_ESYS, "cannot open '/dev/null': %s", strerror(errno));
	if (cfg->input) {
		io->in_fd = open(cfg->input, O_RDONLY | O_CLOEXEC);
		if (io->in_fd < 0) {
			int e = errno;
			close(io->null_fd);
			errno = e;
			return pl_error_set(err, PL_EINPUT,
					    "option '--input': cannot open '%s': %s", cfg->input,
					    strerror(errno));
		}
	}
	if (cfg->metric) {
		io->metric_fd = memfd_create("perfloop-metric", MFD_CLOEXEC);
		if (io->metric_fd < 0) {
			int e = errno;
			if (io->in_fd >= 0)
				close(io->in_fd);
			close(io->null_fd);
			return pl_error_set(err, PL_ESYS, "--metric: cannot hold the output: %s",
					    strerror(e));
		}
	}
	if (!cfg->output || strcmp(cfg->output, "null") == 0) {
		io->out_fd = -1;
	} else if (strcmp(cfg->output, "inherit") == 0) {
		io->out_fd = -2;
	} else {
		io->out_fd = open(cfg->output, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
		if (io->out_fd < 0) {
			int e = errno;
			if (io->in_fd >= 0)
				close(io->in_fd);
			if (io->metric_fd >= 0)
				close(io->metric_fd);
			close(io->null_fd);
			return pl_error_set(err, PL_EINPUT,
					    "option '--output': cannot open '%s': %s", cfg->output,
					    strerror(e));
		}
	}
	return PL_OK;
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
	int rc = open_io(&run->cfg, &io, err);
	if (rc != PL_OK)
		return rc;

	if (run->cfg.order == PL_ORDER_SEQUENTIAL || run->nbench == 1) {
		for (size_t i = 0; i < run->nbench && rc == PL_OK && !interrupted(run); i++) {
			struct pl_bench *b = &run->bench[i];
			rc = run_hook(run, b, "setup", run->cfg.setup, &io, err);
			if (rc == PL_OK)
				rc = warm_up(run, b, &io, i, err);
			if (rc == PL_OK && run->cfg.batch == 0) {
				size_t k;
				if ((rc = calibrate(run, b, &io, i, &k, err)) == PL_OK)
					set_batch(b, k, NULL);
			}
			while (rc == PL_OK && b->state == PL_BENCH_PENDING && !interrupted(run))
				rc = measured_run(run, b, &io, i, 1, err);
			if (rc == PL_OK)
				rc = run_hook(run, b, "cleanup", run->cfg.cleanup, &io, err);
		}
	} else {
		for (size_t i = 0; i < run->nbench && rc == PL_OK && !interrupted(run); i++) {
			rc = run_hook(run, &run->bench[i], "setup", run->cfg.setup, &io, err);
			if (rc == PL_OK)
				rc = warm_up(run, &run->bench[i], &io, i, err);
		}
		/* one batch for all: the largest any command calls for */
		size_t common = 1, which = 0;
		for (size_t i = 0; i < run->nbench && rc == PL_OK && run->cfg.batch == 0 &&
				   !interrupted(run);
		     i++) {
			size_t k;
			rc = calibrate(run, &run->bench[i], &io, i, &k, err);
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
		/* written once: set_batch changes the noisiest's own reason */
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
			set_batch(&run->bench[i], common, i == which && !capped ? NULL : why);
		for (size_t ext = 0;; ext++) {
			for (size_t round = 0; rc == PL_OK && !interrupted(run); round++) {
				int any = 0;
				for (size_t k = 0;
				     k < run->nbench && rc == PL_OK && !interrupted(run); k++) {
					size_t i = (k + round) % run->nbench;
					struct pl_bench *b = &run->bench[i];
					if (b->state != PL_BENCH_PENDING)
						continue;
					any = 1;
					rc = measured_run(run, b, &io, i, 0, err);
				}
				if (!any)
					break;
				if (run->cfg.precision_pct > 0 && rc == PL_OK)
					stop_together(run);
			}
			if (rc != PL_OK || interrupted(run) || ext == CLOSE_CALL_EXTENSIONS ||
			    !pl_bench_close_call(run))
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
		for (size_t i = 0; i < run->nbench && rc == PL_OK && !interrupted(run); i++)
			rc = run_hook(run, &run->bench[i], "cleanup", run->cfg.cleanup, &io, err);
	}
	close_segment(run);
	/* enough readings to tell the machine's speed (the fingerprint's
	 * speed_probe), however few the runs */
	while (run->sp.n < 5 && !interrupted(run))
		pl_speedprobe_take(&run->sp);
	if (io.in_fd >= 0)
		close(io.in_fd);
	if (io.out_fd >= 0)
		close(io.out_fd);
	if (io.metric_fd >= 0)
		close(io.metric_fd);
	close(io.null_fd);
	if (interrupted(run)) {
		run->interrupted = 1;
		return pl_error_set(err, PL_EINTR, "interrupted");
	}
	return rc;
}

/* The bootstrap interval is computed for wall time only (it is what the
 * comparisons and --precision use); it is the costly part of finishing a
 * long benchmark. The other metrics report their median as the interval. */
static void metric(const struct pl_bench_config *cfg, const struct pl_bench *b, int which,
		   double *scratch, struct pl_metric_stats *m, uint64_t seed)
{
	memset(m, 0, sizeof(*m));
	size_t k = collect(b, scratch, which);
	if (k == 0 || pl_stats_describe(scratch, k, &m->d) != PL_OK)
		return;
	m->present = 1;
	if (which != -1 || pl_stats_bootstrap_median_ci(scratch, k, cfg->resamples, seed, 0.95,
							&m->ci_lo, &m->ci_hi) != PL_OK)
		m->ci_lo = m->ci_hi = m->d.p50;
}

void pl_bench_noise_cause(const struct pl_bench_config *cfg, const struct pl_bench *b, char *out,
			  size_t len)
{
	size_t k = b->batch ? b->batch : 1;
	double cv = b->wall.d.cv;
	if (b->contended_kept && !cfg->contention_keep) {
		snprintf(out, len,
			 "the host's other work slowed this CPU during %zu of the runs, too many "
			 "to leave out (perfloop's speed probe, measured around every run: a "
			 "busy sibling hyperthread or stolen time, for seconds at a time); "
			 "measure when the host is idle, or on a machine with dedicated CPUs "
			 "(no setting of this machine, 'perfloop system tune' included, changes "
			 "the host's)",
			 b->contended);
		return;
	}
	if (b->contended) {
		int w = snprintf(out, len, "with %zu runs on a contended CPU left out, ",
				 b->contended);
		if (w > 0 && (size_t)w < len) {
			out += w;
			len -= (size_t)w;
		}
	}
	double *x = malloc((b->n + 1) * sizeof(*x));
	size_t n = x ? pl_bench_values(b, -1, k, x) : 0;
	double trend = n >= 5 ? pl_stats_trend(x, n) : NAN;
	free(x);
	/* a drift, beyond chance: a rank correlation's sd is 1/sqrt(n-1) with
	 * no trend, so |rho| sqrt(n-1) >= 2.58 is p < 0.01 (5 random runs
	 * reached 0.70 one bench in three, and were told more runs would not
	 * help); never under 10 samples */
	if (fabs(trend) >= 0.6 && fabs(trend) * sqrt((double)n - 1) >= 2.58) {
		snprintf(out, len,
			 "the times %s over the run (rank correlation with time %+.2f): the machine's "
			 "speed changed or the command's work grows run after run; more runs will "
			 "not help, a quieter or pinned machine (taskset -c N) may; 'perfloop "
			 "system show' lists what disturbs this one, 'system tune' (root) fixes "
			 "the CPU frequency",
			 trend > 0 ? "grew" : "shrank", trend);
	} else if (k > 1 && b->exec_cv > 0 && cv > 2 * b->exec_cv / sqrt((double)k)) {
		snprintf(out, len,
			 "batching did not lower the noise (per execution %.1f%%, expected %.1f%% "
			 "for batches of %zu, measured %.1f%%): the machine is disturbed in bursts "
			 "(other processes, frequency changes); a quieter or pinned machine "
			 "(taskset -c N) helps",
			 b->exec_cv * 100, b->exec_cv / sqrt((double)k) * 100, k, cv * 100);
	} else if (k > 1 && strstr(b->batch_why, "capped")) {
		snprintf(out, len,
			 "batches of %zu are the most that --max-time %g s allows and are not "
			 "enough; a larger --max-time or a quieter machine helps",
			 k, cfg->max_time_s);
	} else if (k == 1) {
		/* will batches help? only if the runs' noise is independent */
		double *r = malloc((b->n + 1) * sizeof(*r));
		size_t m = r ? pl_bench_values(b, -1, 1, r) : 0;
		double ac = m >= 10 ? pl_stats_autocorr1(r, m) : NAN;
		free(r);
		if (ac >= 0.3)
			snprintf(out, len,
				 "the noise comes in stretches (lag-1 correlation of the runs "
				 "%.2f): the machine slows down for a while, then recovers, so "
				 "batches of consecutive runs average little of it out; pinning "
				 "(taskset -c N) or a quieter machine helps",
				 ac);
		else if (!isnan(ac))
			snprintf(out, len,
				 "the runs' noise is independent (lag-1 correlation %.2f): batches "
				 "average it out (--batch auto, or --batch K: a sample's CV falls as "
				 "1/sqrt(K))",
				 ac);
		else /* under 10 runs: said as unknown (it once read "independent0.00") */
			snprintf(out, len,
				 "too few runs (%zu) to tell whether the noise comes in stretches; "
				 "where it does not, batches average it out (--batch auto, or "
				 "--batch K: a sample's CV falls as 1/sqrt(K))",
				 m);
	} else {
		snprintf(out, len,
			 "more samples (--runs), batches (--batch K), a quieter machine or pinning "
			 "(taskset -c N) help");
	}
}

int pl_bench_compare(const double *cand, size_t nc, const double *ref, size_t nr, size_t resamples,
		     uint64_t seed, struct pl_comparison *out)
{
	double *a = malloc(nc * sizeof(*a)), *b = malloc(nr * sizeof(*b));
	if (!a || !b) {
		free(a);
		free(b);
		return PL_ENOMEM;
	}
	memcpy(a, cand, nc * sizeof(*a));
	memcpy(b, ref, nr * sizeof(*b));
	double ma = pl_stats_median_inplace(a, nc), mb = pl_stats_median_inplace(b, nr);
	free(a);
	free(b);
	out->ratio = mb > 0 ? ma / mb : NAN;
	int rc = pl_stats_bootstrap_ratio_ci(cand, nc, ref, nr, resamples, seed, 0.95, &out->ci_lo,
					     &out->ci_hi);
	struct pl_mwu u;
	if (rc == PL_OK)
		rc = pl_stats_mann_whitney(cand, nc, ref, nr, &u);
	if (rc != PL_OK) {
		out->p = 1;
		out->change = PL_CHANGE_NONE;
		return rc;
	}
	out->p = u.p;
	out->change = pl_stats_change(u.p, out->ci_lo, out->ci_hi, 0.05, 0.01);
	return PL_OK;
}

/* Judge every execution again against the fastest probes of the whole run
 * (during the run, against the fastest so far): those found only now are
 * left out where the planned samples remain without them, and contended
 * ones are counted back in where fewer than three samples (or the runs
 * asked, if fewer) would be left. */
void pl_bench_judge_contention(const struct pl_speedprobe *sp, struct pl_bench *b, int keep)
{
	size_t k = b->batch ? b->batch : 1, counted = 0, newly = 0;
	for (size_t i = 0; i < b->n; i++) {
		const struct pl_sample *s = &b->samples[i];
		counted += s->counted != 0;
		newly += s->counted && !s->contended && s->probe.lat_s > 0 &&
			 contended_reading(sp, s->probe);
	}
	/* leave the newly found out only where the planned samples remain */
	size_t planned = b->target / k > 3 ? b->target / k : 3;
	int leave_out = !keep && (counted - newly) / k >= planned;
	for (size_t i = 0; i < b->n; i++) {
		struct pl_sample *s = &b->samples[i];
		if (s->counted && !s->contended && s->probe.lat_s > 0 &&
		    contended_reading(sp, s->probe)) {
			s->contended = 1;
			s->counted = !leave_out;
			counted -= leave_out;
		}
	}
	/* too few left to stand on their own (three, or the runs asked where
	 * fewer were): count them all. Not where the runs measured again have
	 * made up the count asked: --runs 2 would count four. */
	size_t least = b->target && b->target / k < 3 ? b->target / k : 3;
	if (least == 0)
		least = 1;
	if (counted / k < least)
		for (size_t i = 0; i < b->n; i++)
			if (b->samples[i].contended)
				b->samples[i].counted = 1;
	b->contended = b->contended_kept = 0;
	for (size_t i = 0; i < b->n; i++) {
		b->contended += b->samples[i].contended != 0;
		b->contended_kept += b->samples[i].contended && b->samples[i].counted;
	}
}

/* The CV of wall-time samples of batch k. */
static double cv_at(const struct pl_bench *b, size_t k, double *scratch, size_t *n)
{
	struct pl_describe d;
	*n = pl_bench_values(b, -1, k, scratch);
	return *n >= 2 && pl_stats_describe(scratch, *n, &d) == PL_OK ? d.cv : NAN;
}

/* The calibration sees a fraction of a second of the machine; the run sees
 * all of it. Where its samples are over the noise gate, consecutive
 * batches are taken together (all commands alike, so that compared
 * samples still cover the same stretches of time) in the fewest that
 * bring every command under the gate while leaving each its --min-runs
 * samples; where none does, the batches stay as they were. Larger samples
 * of the same executions: nothing is dropped but the last incomplete one,
 * and a noise that does not average out (drift, phases) stays refused. */
size_t pl_bench_regroup(struct pl_bench_run *run, double *scratch)
{
	if (run->cfg.batch != 0 || run->nbench == 0)
		return 1;
	size_t k = run->bench[0].batch ? run->bench[0].batch : 1, least = SIZE_MAX;
	int over = 0;
	for (size_t i = 0; i < run->nbench; i++) {
		const struct pl_bench *b = &run->bench[i];
		size_t n;
		double cv = cv_at(b, k, scratch, &n);
		if (b->state == PL_BENCH_FAILED || (b->batch ? b->batch : 1) != k || !(cv == cv))
			return 1;
		over |= cv > PL_NOISE_CV_MAX;
		if (n < least)
			least = n;
	}
	size_t floor = run->cfg.min_runs > 5 ? (size_t)run->cfg.min_runs : 5;
	for (size_t m = 2; over && least / m >= floor; m++) {
		int ok = 1;
		for (size_t i = 0; i < run->nbench && ok; i++) {
			size_t n;
			double cv = cv_at(&run->bench[i], k * m, scratch, &n);
			ok = cv == cv && cv <= PL_NOISE_CV_MAX;
		}
		if (!ok)
			continue;
		for (size_t i = 0; i < run->nbench; i++) {
			struct pl_bench *b = &run->bench[i];
			size_t n;
			double was = cv_at(b, k, scratch, &n);
			size_t len = strlen(b->batch_why);
			snprintf(b->batch_why + len, sizeof(b->batch_why) - len,
				 "; then %zu batches taken together after the run (samples of %zu "
				 "runs had CV %.1f%%)",
				 m, k, was * 100);
			b->batch = k * m;
		}
		return m;
	}
	return 1;
}

int pl_bench_finish(struct pl_bench_run *run)
{
	size_t maxn = 1;
	for (size_t i = 0; i < run->nbench; i++)
		if (run->bench[i].n > maxn)
			maxn = run->bench[i].n;
	double *scratch = malloc(maxn * sizeof(*scratch));
	if (!scratch)
		return PL_ENOMEM;
	/* the fastest readings (5th percentile): the loops' time when nothing
	 * interrupted or contended them, which is the speed the counted runs
	 * were measured at; a machine slowed throughout a run raises it */
	run->probe_fast = pl_speedprobe_fast(&run->sp);
	run->probe_slowest = 1;
	for (size_t i = 0; i < run->sp.n; i++)
		run->probe_slowest = fmax(run->probe_slowest,
					  pl_speedprobe_slowdown(&run->sp, run->sp.r[i]));
	for (size_t i = 0; i < run->nbench; i++)
		pl_bench_judge_contention(&run->sp, &run->bench[i], run->cfg.contention_keep);
	pl_bench_regroup(run, scratch);
	for (size_t i = 0; i < run->nbench; i++) {
		struct pl_bench *b = &run->bench[i];
		uint64_t seed = run->cfg.seed + i;
		metric(&run->cfg, b, -1, scratch, &b->wall, seed);
		memset(&b->wall_exec, 0, sizeof(b->wall_exec));
		size_t ne = pl_bench_values(b, -1, 1, scratch);
		if (ne && pl_stats_describe(scratch, ne, &b->wall_exec.d) == PL_OK) {
			b->wall_exec.present = 1;
			b->wall_exec.ci_lo = b->wall_exec.ci_hi = b->wall_exec.d.p50;
		}
		metric(&run->cfg, b, -2, scratch, &b->user, seed);
		metric(&run->cfg, b, -3, scratch, &b->sys, seed);
		metric(&run->cfg, b, -4, scratch, &b->cpu, seed);
		metric(&run->cfg, b, -5, scratch, &b->rss, seed);
		metric(&run->cfg, b, -6, scratch, &b->minflt, seed);
		metric(&run->cfg, b, -7, scratch, &b->majflt, seed);
		metric(&run->cfg, b, -8, scratch, &b->alloc_bytes, seed);
		metric(&run->cfg, b, -9, scratch, &b->alloc_calls, seed);
		metric(&run->cfg, b, -10, scratch, &b->reported, seed);
		for (size_t c = 0; c < run->cfg.counters.n; c++)
			if (run->cfg.counters.supported[c])
				metric(&run->cfg, b, (int)c, scratch, &b->counter[c], seed);
		free(b->outlier);
		b->outlier = calloc(b->n ? b->n : 1, 1);
		size_t k = pl_bench_values(b, -1, 1, scratch);
		if (b->outlier && k > 0) {
			unsigned char *flags = calloc(k, 1);
			if (flags) {
				pl_stats_outliers(scratch, k, flags);
				for (size_t s = 0, j = 0; s < b->n; s++)
					if (counted(&b->samples[s]))
						b->outlier[s] = flags[j++];
				free(flags);
			}
		}
	}
	free(run->cmp);
	run->cmp = NULL;
	run->ncmp = 0;
	const struct pl_bench *ref = run->nbench ? &run->bench[run->reference] : NULL;
	if (run->nbench > 1 && ref->wall.present) {
		run->cmp = calloc(run->nbench, sizeof(*run->cmp));
		double *rs = malloc((ref->n ? ref->n : 1) * sizeof(*rs));
		if (!run->cmp || !rs) {
			free(rs);
			free(scratch);
			return PL_ENOMEM;
		}
		for (size_t i = 0; i < run->nbench; i++) {
			if (i == run->reference || !run->bench[i].wall.present)
				continue;
			/* batches of different sizes (--order sequential calibrates
			 * each command alone): compared per execution */
			size_t k = run->bench[i].batch == ref->batch ? ref->batch : 1;
			/* --metric: the program's number is what is compared */
			int which = run->cfg.metric ? -10 : -1;
			size_t nr = pl_bench_values(ref, which, k, rs);
			size_t nc = pl_bench_values(&run->bench[i], which, k, scratch);
			struct pl_comparison *c = &run->cmp[run->ncmp];
			c->bench = i;
			c->reference = run->reference;
			if (pl_bench_compare(scratch, nc, rs, nr, run->cfg.resamples,
					     run->cfg.seed ^ (i + 1), c) == PL_OK &&
			    isfinite(c->ratio) && isfinite(c->ci_lo) && isfinite(c->ci_hi)) {
				if (run->cfg.metric) {
					c->dimension = run->cfg.metric->name;
					/* a larger number of samples/s is the faster one */
					if (run->cfg.metric->higher && c->change != PL_CHANGE_NONE)
						c->change = c->change == PL_CHANGE_FASTER
								? PL_CHANGE_SLOWER
								: PL_CHANGE_FASTER;
				}
				run->ncmp++;
			}
		}
		free(rs);
	}
	free(scratch);
	return PL_OK;
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
