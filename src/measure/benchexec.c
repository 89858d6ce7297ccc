/*
 * One execution of a benchmark (see benchrun.c for the engine as a whole):
 * its command split into words, the hooks around it with their {NAME}
 * parameters, the standard input and output every run shares (opened
 * once), the run itself through spawn, and what it leaves: a sample with
 * its times, faults, counters, --alloc totals and --metric number read
 * back from its output, or the reason it failed.
 */
#include "benchrun_int.h"

#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

#include "allocprof.h"
#include "metric.h"
#include "spawn.h"

int pl_bench_split_command(const struct pl_bench_config *cfg, const char *command,
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

static int fd_or_null(const struct io *io, int fd)
{
	return fd == -1 ? io->null_fd : fd;
}

int pl_bench_run_hook(struct pl_bench_run *run, const struct pl_bench *b, const char *what,
		      const char *hook, const struct io *io, struct pl_error *err)
{
	if (!hook)
		return PL_OK;
	char *cmd = substitute_params(b, hook);
	if (!cmd)
		return PL_ENOMEM;
	struct pl_argv argv;
	int rc = pl_bench_split_command(&run->cfg, cmd, &argv, err);
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
	int rc = pl_bench_run_hook(run, b, what, hook, &io, err);
	close(io.null_fd);
	return rc;
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
int pl_bench_one_run(struct pl_bench_run *run, struct pl_bench *b, const struct io *io,
		     int measured, struct pl_error *err)
{
	const struct pl_bench_config *cfg = &run->cfg;
	int rc = pl_bench_run_hook(run, b, "prepare", cfg->prepare, io, err);
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
	/* --metric steps: the run's Python times its optimizer's steps */
	int steps = io->steps.dir[0] != '\0';
	struct pl_stepclock_env env = {0};
	if (steps && pl_stepclock_arm(&io->steps, &env) != PL_OK) {
		pl_stepclock_disarm(&env);
		return PL_ENOMEM;
	}
	rc = pl_spawn_run(&o, &r, err);
	pl_stepclock_disarm(&env);
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
	double ms, mcpu = NAN;
	if (steps && !r.timed_out && !r.stopped &&
	    pl_stepclock_read(&io->steps, cfg->metric->steps == 2, &ms, &mcpu, &mcount, mwhy,
			      sizeof(mwhy)))
		mval = ms;

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
	} else if (measured && !cfg->ignore_failure && (io->metric_fd >= 0 || steps) &&
		   isnan(mval)) {
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
	run->last_span = r.span_s;
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
				      .metric_cpu = mcpu,
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
			pl_bench_plan(cfg, b, r.wall_s);
	}
	if (b->state == PL_BENCH_FAILED)
		return PL_OK;
	return pl_bench_run_hook(run, b, "conclude", cfg->conclude, io, err);
}

int pl_bench_open_io(const struct pl_bench_config *cfg, struct io *io, struct pl_error *err)
{
	io->in_fd = -1;
	io->out_fd = -1;
	io->metric_fd = -1;
	memset(&io->steps, 0, sizeof io->steps);
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
	if (cfg->metric && cfg->metric->steps) {
		if (pl_stepclock_open(&io->steps, err) != PL_OK) {
			if (io->in_fd >= 0)
				close(io->in_fd);
			close(io->null_fd);
			return PL_ESYS;
		}
	} else if (cfg->metric) {
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
			pl_stepclock_close(&io->steps);
			close(io->null_fd);
			return pl_error_set(err, PL_EINPUT,
					    "option '--output': cannot open '%s': %s", cfg->output,
					    strerror(e));
		}
	}
	return PL_OK;
}

void pl_bench_close_io(struct io *io)
{
	if (io->in_fd >= 0)
		close(io->in_fd);
	if (io->out_fd >= 0)
		close(io->out_fd);
	if (io->metric_fd >= 0)
		close(io->metric_fd);
	if (io->null_fd >= 0)
		close(io->null_fd);
	pl_stepclock_close(&io->steps);
	io->in_fd = io->out_fd = io->metric_fd = io->null_fd = -1;
}
