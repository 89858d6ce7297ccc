/*
 * Counting instructions under Valgrind (see simcount.h). Each simulated
 * execution runs `valgrind --tool=cachegrind --trace-children=yes` around
 * the command with every process's totals written to a file of its own in
 * a private directory, and adds them up. What could make two runs of the
 * same code differ is pinned where it can be: address-space randomisation
 * is off (personality ADDR_NO_RANDOMIZE, inherited by every process), and
 * Python's string hashing is seeded (PYTHONHASHSEED=0, unless the caller
 * set it): with a random seed one script's count moved by 8% from run to
 * run (its globals' dict probes), with a fixed one it was identical to the
 * instruction. The price is one hash layout: a rename that changes nothing
 * else moved that script's count by 2.8% (under the 5% a win needs), and a
 * seed per run would have put 2-4% of spread into every Python figure.
 * Time-dependent code and threads racing are not pinned: the runs' spread
 * (their CV, noise-gated like any dimension) shows them.
 *
 * The counts do not depend on how busy the machine is, so the executions
 * run several at once (one per allowed CPU), unpinned, unless a
 * --prepare/--conclude hook has to run around each.
 */

#include "simcount.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/personality.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "execchain.h"
#include "fsio.h"
#include "monotime.h"
#include "spawn.h"
#include "stats.h"

extern char **environ;

/* The fixed cache the cycles are estimated over (bytes, ways, line): a
 * typical desktop core's L1s and an 8 MiB last level. Valgrind would
 * otherwise take the host's (here a 256 MiB direct-mapped "L3" that a VM
 * reported), and two machines would estimate differently. */
#define SIM_I1 "--I1=32768,8,64"
#define SIM_D1 "--D1=32768,8,64"
#define SIM_LL "--LL=8388608,16,64"

int pl_sim_parse_mode(const char *s)
{
	static const char *names[] = {"auto", "off", "instructions", "cycles"};
	for (int i = 0; i < 4; i++)
		if (!strcmp(s, names[i]))
			return i;
	return -1;
}

const char *pl_sim_mode_name(int mode)
{
	switch (mode) {
	case PL_SIM_OFF:
		return "off";
	case PL_SIM_INSTRUCTIONS:
		return "instructions";
	case PL_SIM_CYCLES:
		return "cycles";
	default:
		return "auto";
	}
}

/* The value of event `name` on a summary line, by the events line. */
static int event_value(const char *events, const char *summary, const char *name, double *out)
{
	char ev[512], su[512];
	snprintf(ev, sizeof ev, "%s", events);
	snprintf(su, sizeof su, "%s", summary);
	char *s1 = NULL, *s2 = NULL;
	char *e = strtok_r(ev, " \t\r\n", &s1), *v = strtok_r(su, " \t\r\n", &s2);
	for (; e && v; e = strtok_r(NULL, " \t\r\n", &s1), v = strtok_r(NULL, " \t\r\n", &s2))
		if (!strcmp(e, name)) {
			char *end;
			double x = strtod(v, &end);
			if (*end || !isfinite(x) || x < 0)
				return -1;
			*out = x;
			return 1;
		}
	return 0;
}

/* The rest of the line after `key` where a line starts with it. */
static int line_after(const char *text, const char *key, char *out, size_t len)
{
	size_t kl = strlen(key);
	for (const char *p = text; p && *p;) {
		const char *nl = strchr(p, '\n');
		size_t ll = nl ? (size_t)(nl - p) : strlen(p);
		if (ll >= kl && !strncmp(p, key, kl)) {
			size_t n = ll - kl;
			if (n >= len)
				n = len - 1;
			memcpy(out, p + kl, n);
			out[n] = '\0';
			return 1;
		}
		p = nl ? nl + 1 : NULL;
	}
	return 0;
}

int pl_sim_parse(const char *text, struct pl_sim_counts *c, struct pl_error *err)
{
	char events[512], summary[512];
	if (!line_after(text, "events:", events, sizeof events))
		return pl_error_set(err, PL_EINPUT, "no 'events:' line");
	if (!line_after(text, "summary:", summary, sizeof summary))
		return pl_error_set(err, PL_EINPUT,
				    "no 'summary:' line (the process was killed before it "
				    "finished?)");
	static const char *names[] = {"Ir", "Dr", "Dw", "I1mr", "D1mr", "D1mw", "ILmr", "DLmr",
				      "DLmw"};
	double v[9] = {0};
	int have[9] = {0};
	for (int i = 0; i < 9; i++) {
		int r = event_value(events, summary, names[i], &v[i]);
		if (r < 0)
			return pl_error_set(err, PL_EINPUT, "summary: bad value of event '%s'",
					    names[i]);
		have[i] = r;
	}
	if (!have[0])
		return pl_error_set(err, PL_EINPUT, "no 'Ir' (instructions) event");
	int cache = 1;
	for (int i = 1; i < 9; i++)
		cache &= have[i];
	c->ir += v[0];
	if (cache) {
		c->dr += v[1];
		c->dw += v[2];
		c->i1mr += v[3];
		c->d1mr += v[4];
		c->d1mw += v[5];
		c->ilmr += v[6];
		c->dlmr += v[7];
		c->dlmw += v[8];
	}
	c->cache = cache;
	return PL_OK;
}

double pl_sim_est_cycles(const struct pl_sim_counts *c)
{
	double access = c->ir + c->dr + c->dw;
	double l1miss = c->i1mr + c->d1mr + c->d1mw;
	double llmiss = c->ilmr + c->dlmr + c->dlmw;
	return (access - l1miss) + 5 * (l1miss - llmiss) + 35 * llmiss;
}

int pl_sim_available(char *version, size_t len)
{
	static char cached[64];
	static int known = -1;
	if (known < 0) {
		char *argv[] = {"valgrind", "--version", NULL};
		char out[64] = "";
		known = pl_spawn_capture(argv, 10, out, sizeof out) == 0 &&
			!strncmp(out, "valgrind", 8);
		snprintf(cached, sizeof cached, "%s", known ? out : "");
	}
	if (version && len)
		snprintf(version, len, "%s", cached);
	return known;
}

int pl_sim_timing_decides(const struct pl_bench *b)
{
	return b->wall.present && b->wall.d.n >= 3 && b->wall.d.cv <= PL_NOISE_CV_MAX;
}

static double median_of(const double *x, size_t n)
{
	double t[PL_SIM_MAX_RUNS];
	if (n > PL_SIM_MAX_RUNS)
		n = PL_SIM_MAX_RUNS;
	memcpy(t, x, n * sizeof(*t));
	return pl_stats_median_inplace(t, n);
}

void pl_sim_compare(const double *cand, size_t nc, const double *ref, size_t nr,
		    struct pl_comparison *out)
{
	double cmin = INFINITY, cmax = 0, rmin = INFINITY, rmax = 0;
	for (size_t i = 0; i < nc; i++) {
		cmin = fmin(cmin, cand[i]);
		cmax = fmax(cmax, cand[i]);
	}
	for (size_t i = 0; i < nr; i++) {
		rmin = fmin(rmin, ref[i]);
		rmax = fmax(rmax, ref[i]);
	}
	double mr = nr ? median_of(ref, nr) : 0, mc = nc ? median_of(cand, nc) : 0;
	out->p = NAN;
	out->change = PL_CHANGE_NONE;
	if (!nc || !nr || mr <= 0 || rmin <= 0) {
		out->ratio = out->ci_lo = out->ci_hi = NAN;
		return;
	}
	out->ratio = mc / mr;
	out->ci_lo = cmin / rmax;
	out->ci_hi = cmax / rmin;
	if (out->ci_hi < 0.99)
		out->change = PL_CHANGE_FASTER;
	else if (out->ci_lo > 1.01)
		out->change = PL_CHANGE_SLOWER;
}

/* ---- running under Valgrind ---- */

struct job {
	pid_t pid;
	struct pl_bench *b;
	const struct pl_exec_chain *chain; /* b's program past its wrappers */
	char dir[4200];	 /* where its processes write */
	double t0;
};

static void remove_dir(const char *dir)
{
	DIR *d = opendir(dir);
	if (d) {
		struct dirent *e;
		char p[4600];
		while ((e = readdir(d)))
			if (strcmp(e->d_name, ".") && strcmp(e->d_name, "..")) {
				snprintf(p, sizeof p, "%s/%s", dir, e->d_name);
				unlink(p);
			}
		closedir(d);
	}
	rmdir(dir);
}

/* The environment of an execution: ours, with PYTHONHASHSEED=0 unless it
 * is set. Built before the fork (no allocation in the child). */
static char **job_env(char *seedvar, size_t len)
{
	size_t n = 0;
	while (environ[n])
		n++;
	char **env = calloc(n + 2, sizeof(*env));
	if (!env)
		return NULL;
	memcpy(env, environ, n * sizeof(*env));
	if (!getenv("PYTHONHASHSEED")) {
		snprintf(seedvar, len, "PYTHONHASHSEED=0");
		env[n++] = seedvar;
	}
	env[n] = NULL;
	return env;
}

static int start(const struct pl_bench_run *run, struct job *j, const char *valgrind,
		 int null_fd, struct pl_error *err)
{
	/* each run reads --input from its start: its own open file, since runs
	 * at once would share (and move) one offset */
	int in_fd = -1;
	if (run->cfg.input && (in_fd = open(run->cfg.input, O_RDONLY | O_CLOEXEC)) < 0)
		return pl_error_set(err, PL_EINPUT, "option '--input': cannot open '%s': %s",
				    run->cfg.input, strerror(errno));
	const char *tmp = getenv("TMPDIR");
	snprintf(j->dir, sizeof j->dir, "%s/perfloop-sim-XXXXXX", tmp && *tmp ? tmp : "/tmp");
	if (!mkdtemp(j->dir)) {
		int e = errno;
		if (in_fd >= 0)
			close(in_fd);
		return pl_error_set(err, PL_ESYS, "cannot create a directory in '%s': %s",
				    tmp && *tmp ? tmp : "/tmp", strerror(e));
	}
	int cache = run->cfg.sim == PL_SIM_CYCLES || run->cfg.sim_cache;
	char outfile[4300], logfile[4300], seedvar[40];
	snprintf(outfile, sizeof outfile, "--cachegrind-out-file=%s/cg.%%p.%%n", j->dir);
	snprintf(logfile, sizeof logfile, "--log-file=%s/valgrind.%%p.log", j->dir);
	const char *pre[] = {valgrind,
			     "--tool=cachegrind",
			     "--trace-children=yes",
			     cache ? "--cache-sim=yes" : "--cache-sim=no",
			     outfile,
			     logfile,
			     SIM_I1,
			     SIM_D1,
			     SIM_LL};
	size_t npre = cache ? 9 : 6;
	const struct pl_exec_chain *ch = j->chain && j->chain->resolved ? j->chain : NULL;
	const struct pl_argv *cmd = ch ? &ch->argv : &j->b->argv;
	char **argv = calloc(npre + cmd->n + 1, sizeof(*argv));
	char **env = ch ? ch->envp.v : job_env(seedvar, sizeof seedvar);
	if (!argv || !env) {
		free(argv);
		if (!ch)
			free(env);
		remove_dir(j->dir);
		if (in_fd >= 0)
			close(in_fd);
		return PL_ENOMEM;
	}
	for (size_t i = 0; i < npre; i++)
		argv[i] = (char *)pre[i];
	for (size_t i = 0; i < cmd->n; i++)
		argv[npre + i] = cmd->v[i];
	/* the program by the file it is, where its argv[0] names no path
	 * (Valgrind looks a bare name up in PATH, which may find the wrapper) */
	if (ch && !strchr(argv[npre], '/'))
		argv[npre] = (char *)ch->exe;
	j->t0 = pl_now_s();
	pid_t pid = fork();
	if (pid == 0) {
		setpgid(0, 0);
		if (ch && chdir(ch->cwd) != 0)
			_exit(127);
		dup2(in_fd >= 0 ? in_fd : null_fd, 0);
		dup2(null_fd, 1);
		dup2(null_fd, 2);
		personality(ADDR_NO_RANDOMIZE);
		execve(valgrind, argv, env);
		_exit(127);
	}
	int e = errno;
	free(argv);
	if (!ch)
		free(env);
	if (in_fd >= 0)
		close(in_fd);
	if (pid < 0) {
		remove_dir(j->dir);
		return pl_error_set(err, PL_ESYS, "cannot start Valgrind: %s", strerror(e));
	}
	setpgid(pid, pid);
	j->pid = pid;
	return PL_OK;
}

/* Valgrind's first complaint in its logs, for a failure's message. */
static void valgrind_says(const char *dir, char *out, size_t len)
{
	out[0] = '\0';
	DIR *d = opendir(dir);
	if (!d)
		return;
	struct dirent *e;
	char p[4600];
	while ((e = readdir(d)) && !out[0]) {
		if (strncmp(e->d_name, "valgrind.", 9))
			continue;
		snprintf(p, sizeof p, "%s/%s", dir, e->d_name);
		FILE *f = fopen(p, "r");
		char line[512];
		while (f && fgets(line, sizeof line, f)) {
			/* "==123== " prefixed lines are the banner; "valgrind: ..." and
			 * "vex: ..." are what went wrong */
			if (!strncmp(line, "valgrind:", 9) || strstr(line, "unhandled instruction") ||
			    !strncmp(line, "vex", 3)) {
				line[strcspn(line, "\n")] = '\0';
				snprintf(out, len, "%s", line);
				break;
			}
		}
		if (f)
			fclose(f);
	}
	closedir(d);
}

/* A finished job: its counts into its benchmark, or why not in err. */
static int collect(const struct pl_bench_run *run, struct job *j, int status,
		   struct pl_error *err)
{
	struct pl_bench *b = j->b;
	double wall = pl_now_s() - j->t0;
	char says[520], sig[32];
	int rc = PL_OK;
	if (WIFSIGNALED(status) ||
	    (WIFEXITED(status) && WEXITSTATUS(status) != 0 && !run->cfg.ignore_failure)) {
		valgrind_says(j->dir, says, sizeof says);
		if (WIFSIGNALED(status))
			rc = pl_error_set(err, PL_EFAILED, "under Valgrind was killed by %s%s%s",
					  pl_signal_name(WTERMSIG(status), sig, sizeof sig),
					  says[0] ? ": " : "", says);
		else
			rc = pl_error_set(err, PL_EFAILED, "under Valgrind exited with code %d%s%s",
					  WEXITSTATUS(status), says[0] ? ": " : "", says);
		remove_dir(j->dir);
		return rc;
	}
	struct pl_sim_counts c = {0};
	size_t files = 0;
	DIR *d = opendir(j->dir);
	struct dirent *e;
	while (rc == PL_OK && d && (e = readdir(d))) {
		if (strncmp(e->d_name, "cg.", 3))
			continue;
		char p[4600];
		size_t len = 0;
		snprintf(p, sizeof p, "%s/%s", j->dir, e->d_name);
		struct pl_error perr;
		int missing;
		char *text = pl_fsio_read(p, &len, &missing);
		if (!text)
			continue;
		/* a process killed mid-way writes no summary: its count is lost,
		 * and the total would be short of it */
		if (pl_sim_parse(text, &c, &perr) != PL_OK)
			rc = pl_error_set(err, PL_EFAILED,
					  "under Valgrind: a process's counts are incomplete (%s)",
					  perr.msg);
		else
			files++;
		free(text);
	}
	if (d)
		closedir(d);
	if (rc == PL_OK && files == 0) {
		valgrind_says(j->dir, says, sizeof says);
		rc = pl_error_set(err, PL_EFAILED, "under Valgrind wrote no counts%s%s",
				  says[0] ? ": " : "", says);
	}
	remove_dir(j->dir);
	if (rc != PL_OK)
		return rc;
	size_t k = b->sim_n++;
	b->sim_ir[k] = c.ir;
	b->sim_cyc[k] = c.cache ? pl_sim_est_cycles(&c) : NAN;
	b->sim_wall[k] = wall;
	b->sim_cache = c.cache;
	return PL_OK;
}

static void kill_all(struct job *jobs, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (jobs[i].pid > 0) {
			kill(-jobs[i].pid, SIGKILL);
			waitpid(jobs[i].pid, NULL, 0);
			remove_dir(jobs[i].dir);
			jobs[i].pid = 0;
		}
}

static int allowed_cpus(void)
{
	cpu_set_t s;
	if (sched_getaffinity(0, sizeof s, &s) != 0)
		return 1;
	int n = CPU_COUNT(&s);
	return n > 0 ? n : 1;
}

/* b's program past its wrappers, found once by running the wrappers (not
 * the program) natively: see os/execchain.h. PERFLOOP_SIM_WRAPPERS=keep
 * simulates the command as given. */
static void resolve(const struct pl_bench_run *run, struct pl_bench *b, struct pl_exec_chain *ch)
{
	memset(ch, 0, sizeof *ch);
	const char *keep = getenv("PERFLOOP_SIM_WRAPPERS");
	if ((keep && !strcmp(keep, "keep")) || b->argv.n == 0)
		return;
	char seedvar[40];
	char **env = job_env(seedvar, sizeof seedvar);
	int in_fd = run->cfg.input ? open(run->cfg.input, O_RDONLY | O_CLOEXEC) : -1;
	if (env && (!run->cfg.input || in_fd >= 0))
		pl_exec_chain(b->argv.v, env, in_fd, PL_SIM_RESOLVE_S, ch);
	free(env);
	if (in_fd >= 0)
		close(in_fd);
	if (!ch->resolved)
		return;
	size_t len = 0;
	for (size_t i = 0; i < ch->argv.n && len < sizeof b->sim_as; i++)
		len += (size_t)snprintf(b->sim_as + len, sizeof b->sim_as - len, "%s%s",
					i ? " " : "", i ? ch->argv.v[i] : ch->exe);
	b->sim_skipped = ch->skipped;
}

/* Simulate the listed benchmarks' executions, `width` at once. */
static int simulate(struct pl_bench_run *run, struct pl_bench **list, size_t nlist,
		    const char *valgrind, struct pl_error *err)
{
	const struct pl_bench_config *cfg = &run->cfg;
	size_t per = cfg->sim_runs > 0 ? (size_t)cfg->sim_runs : PL_SIM_RUNS_DEFAULT;
	if (per > PL_SIM_MAX_RUNS)
		per = PL_SIM_MAX_RUNS;
	int hooks = cfg->prepare || cfg->conclude || cfg->setup || cfg->cleanup;
	size_t width = hooks ? 1 : (size_t)allowed_cpus();
	if (width > 8)
		width = 8;
	int null_fd = open("/dev/null", O_RDWR | O_CLOEXEC);
	if (null_fd < 0)
		return pl_error_set(err, PL_ESYS, "cannot open '/dev/null': %s", strerror(errno));
	struct pl_exec_chain *chains = calloc(nlist, sizeof *chains);
	if (!chains) {
		close(null_fd);
		return PL_ENOMEM;
	}
	for (size_t i = 0; i < nlist; i++)
		resolve(run, list[i], &chains[i]);
	struct job jobs[8];
	memset(jobs, 0, sizeof jobs);
	size_t next = 0, total = nlist * per, running = 0;
	/* a run's limit: the command's own timeout, times the slowdown */
	double limit = cfg->timeout_s > 0 ? cfg->timeout_s * PL_SIM_TIMEOUT_FACTOR : 0;
	int rc = PL_OK;
	struct pl_bench *last = NULL;
	while (rc == PL_OK && (next < total || running)) {
		if (run->interrupt_flag && *run->interrupt_flag) {
			run->interrupted = 1;
			rc = pl_error_set(err, PL_EINTR, "interrupted");
			break;
		}
		/* start what fits */
		for (size_t s = 0; rc == PL_OK && next < total && running < width && s < width;
		     s++) {
			if (jobs[s].pid)
				continue;
			struct pl_bench *b = list[next / per];
			if (hooks) {
				if (b != last) {
					if (last)
						rc = pl_bench_hook(run, last, "cleanup", cfg->cleanup,
								   err);
					if (rc == PL_OK)
						rc = pl_bench_hook(run, b, "setup", cfg->setup, err);
					last = b;
				}
				if (rc == PL_OK)
					rc = pl_bench_hook(run, b, "prepare", cfg->prepare, err);
				if (rc != PL_OK)
					break;
			}
			jobs[s].b = b;
			jobs[s].chain = &chains[next / per];
			if ((rc = start(run, &jobs[s], valgrind, null_fd, err)) != PL_OK)
				break;
			next++;
			running++;
		}
		/* reap what finished */
		int any = 0;
		for (size_t s = 0; rc == PL_OK && s < width; s++) {
			if (!jobs[s].pid)
				continue;
			int st;
			pid_t w = waitpid(jobs[s].pid, &st, WNOHANG);
			if (w == 0 && limit > 0 && pl_now_s() - jobs[s].t0 > limit) {
				kill(-jobs[s].pid, SIGKILL);
				waitpid(jobs[s].pid, NULL, 0);
				remove_dir(jobs[s].dir);
				jobs[s].pid = 0;
				running--;
				rc = pl_error_set(err, PL_EFAILED,
						  "'%s' under Valgrind timed out after %g s (--timeout "
						  "%g times %g, room for Valgrind's slowdown)",
						  jobs[s].b->name, limit, cfg->timeout_s,
						  PL_SIM_TIMEOUT_FACTOR);
				break;
			}
			if (w == 0)
				continue;
			any = 1;
			jobs[s].pid = 0;
			running--;
			if (w < 0) {
				remove_dir(jobs[s].dir);
				rc = pl_error_set(err, PL_ESYS, "waitpid: %s", strerror(errno));
				break;
			}
			kill(-w, SIGKILL); /* what it left running */
			struct pl_error cerr;
			if (collect(run, &jobs[s], st, &cerr) != PL_OK) {
				rc = pl_error_set(err, PL_EFAILED, "'%s' %s", jobs[s].b->name,
						  cerr.msg);
				break;
			}
			if (hooks)
				rc = pl_bench_hook(run, jobs[s].b, "conclude", cfg->conclude, err);
		}
		if (!any && rc == PL_OK) {
			struct timespec ts = {0, 5000000};
			nanosleep(&ts, NULL);
		}
	}
	kill_all(jobs, width);
	if (rc == PL_OK && hooks && last)
		rc = pl_bench_hook(run, last, "cleanup", cfg->cleanup, err);
	for (size_t i = 0; i < nlist; i++)
		pl_exec_chain_release(&chains[i]);
	free(chains);
	close(null_fd);
	return rc;
}

static void sim_stats(struct pl_bench *b)
{
	memset(&b->sim_ir_st, 0, sizeof b->sim_ir_st);
	memset(&b->sim_cyc_st, 0, sizeof b->sim_cyc_st);
	if (b->sim_n && pl_stats_describe(b->sim_ir, b->sim_n, &b->sim_ir_st.d) == PL_OK) {
		b->sim_ir_st.present = 1;
		b->sim_ir_st.ci_lo = b->sim_ir_st.ci_hi = b->sim_ir_st.d.p50;
	}
	if (b->sim_n && b->sim_cache &&
	    pl_stats_describe(b->sim_cyc, b->sim_n, &b->sim_cyc_st.d) == PL_OK) {
		b->sim_cyc_st.present = 1;
		b->sim_cyc_st.ci_lo = b->sim_cyc_st.ci_hi = b->sim_cyc_st.d.p50;
	}
}

/* Compare on the simulated dimension where the wall time cannot decide:
 * either side over the noise gate, and both simulated. */
static void recompare(struct pl_bench_run *run)
{
	if (run->cfg.metric) /* the program's own number decides, not the counts */
		return;
	for (size_t i = 0; i < run->ncmp; i++) {
		struct pl_comparison *c = &run->cmp[i];
		const struct pl_bench *x = &run->bench[c->bench], *r = &run->bench[c->reference];
		if ((pl_sim_timing_decides(x) && pl_sim_timing_decides(r)) || !x->sim_n ||
		    !r->sim_n)
			continue;
		int cyc = x->sim_cache && r->sim_cache;
		struct pl_comparison s = *c;
		pl_sim_compare(cyc ? x->sim_cyc : x->sim_ir, x->sim_n, cyc ? r->sim_cyc : r->sim_ir,
			       r->sim_n, &s);
		if (!isfinite(s.ratio))
			continue;
		s.dimension = cyc ? "sim_cycles" : "sim_instructions";
		*c = s;
	}
}

int pl_sim_measure(struct pl_bench_run *run, struct pl_error *err)
{
	int mode = run->cfg.sim;
	run->sim_tool[0] = '\0';
	for (size_t i = 0; i < run->nbench; i++) {
		run->bench[i].sim_n = 0;
		run->bench[i].sim_why[0] = '\0';
		run->bench[i].sim_as[0] = '\0';
		run->bench[i].sim_skipped = 0;
	}
	if (mode == PL_SIM_OFF || run->nbench == 0 || run->interrupted)
		return PL_OK;
	int forced = mode == PL_SIM_INSTRUCTIONS || mode == PL_SIM_CYCLES;
	/* auto: where some command's wall time cannot decide, every command is
	 * simulated (a comparison needs both sides) */
	int need = forced || mode == PL_SIM_EVIDENCE;
	const struct pl_bench *noisy = NULL;
	for (size_t i = 0; i < run->nbench; i++)
		if (run->bench[i].state == PL_BENCH_DONE && !pl_sim_timing_decides(&run->bench[i])) {
			need = 1;
			noisy = noisy ? noisy : &run->bench[i];
		}
	if (!need)
		return PL_OK;
	char version[64];
	if (!pl_sim_available(version, sizeof version)) {
		for (size_t i = 0; i < run->nbench; i++)
			snprintf(run->bench[i].sim_why, sizeof run->bench[i].sim_why,
				 "not simulated: Valgrind is not installed (Debian: apt-get "
				 "install valgrind)");
		if (forced)
			return pl_error_set(err, PL_EINPUT,
					    "option '--sim': Valgrind is not installed here (Debian: "
					    "apt-get install valgrind)");
		return PL_OK;
	}
	char *valgrind = pl_spawn_which("valgrind");
	if (!valgrind)
		return pl_error_set(err, PL_ENOEXEC, "cannot start 'valgrind'");
	struct pl_bench **list = calloc(run->nbench, sizeof(*list));
	if (!list) {
		free(valgrind);
		return PL_ENOMEM;
	}
	size_t nlist = 0;
	for (size_t i = 0; i < run->nbench; i++) {
		struct pl_bench *b = &run->bench[i];
		if (b->state != PL_BENCH_DONE) {
			snprintf(b->sim_why, sizeof b->sim_why, "not simulated: %s",
				 b->state == PL_BENCH_FAILED ? "the command failed" : "not measured");
			continue;
		}
		double per_run = b->wall_exec.present ? b->wall_exec.d.min : b->wall.d.min;
		double est = per_run * PL_SIM_SLOWDOWN;
		if (!forced && est > PL_SIM_AUTO_MAX_S) {
			snprintf(b->sim_why, sizeof b->sim_why,
				 "not simulated: one run would take about %.0f s under Valgrind "
				 "(auto stops at %.0f s; --sim instructions forces it)",
				 est, PL_SIM_AUTO_MAX_S);
			continue;
		}
		if (forced)
			snprintf(b->sim_why, sizeof b->sim_why, "asked for (--sim %s)",
				 pl_sim_mode_name(mode));
		else if (!pl_sim_timing_decides(b))
			snprintf(b->sim_why, sizeof b->sim_why,
				 "the wall time's CV is %.1f%% here, over the %.0f%% gate",
				 b->wall.d.cv * 100, PL_NOISE_CV_MAX * 100);
		else if (noisy)
			snprintf(b->sim_why, sizeof b->sim_why,
				 "compared with '%.80s', whose wall time's CV is %.1f%%", noisy->name,
				 noisy->wall.d.cv * 100);
		else
			snprintf(b->sim_why, sizeof b->sim_why,
				 "kept as evidence: a comparison with a simulated baseline, or a "
				 "later turn on a noisier machine, can decide on it");
		list[nlist++] = b;
	}
	int rc = nlist ? simulate(run, list, nlist, valgrind, err) : PL_OK;
	free(list);
	free(valgrind);
	if (rc == PL_OK && nlist)
		snprintf(run->sim_tool, sizeof run->sim_tool, "%s cachegrind", version);
	if (rc != PL_OK && rc != PL_EINTR && !forced) {
		/* auto: the wall time stands as measured; say why nothing else does */
		for (size_t i = 0; i < run->nbench; i++) {
			run->bench[i].sim_n = 0;
			if (run->bench[i].sim_why[0] && strncmp(run->bench[i].sim_why, "not ", 4))
				snprintf(run->bench[i].sim_why, sizeof run->bench[i].sim_why,
					 "not simulated: %.200s", err->msg);
		}
		rc = PL_OK;
	}
	for (size_t i = 0; i < run->nbench; i++)
		sim_stats(&run->bench[i]);
	if (rc == PL_OK)
		recompare(run);
	return rc;
}
