/*
 * The loop (see loop.h). Measuring reuses the bench engine with the
 * settings stored at baseline time, so every turn is measured exactly as
 * the baseline was; verifying reuses verify's rules; keeping or undoing the
 * change reuses the checkpoint. The policy: at most max_iterations turns,
 * and a stop when the last accepted gain was under min_gain over the
 * previous baseline (diminishing returns); `--continue` goes on anyway.
 */
#include "loop.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "benchrun.h"
#include "fsio.h"
#include "gitrun.h"
#include "history.h"
#include "ledger.h"
#include "render.h"
#include "spawn.h"
#include "strbuf.h"
#include "metric.h"
#include "simcount.h"
#include "summary.h"

static void state_path(const struct pl_git *g, const char *name, char *out, size_t len)
{
	snprintf(out, len, "%s/.perfloop/%s", g->top, name);
}

int pl_loop_state(const struct pl_git *g, json_t **state, struct pl_error *err)
{
	char p[4300];
	state_path(g, "loop.json", p, sizeof(p));
	FILE *f = fopen(p, "re");
	if (!f)
		return pl_error_set(err, PL_EINPUT,
				    "no loop in '%s': start one with 'perfloop baseline'", g->top);
	fclose(f);
	int rc = pl_json_load(p, state, err);
	if (rc == PL_OK && !json_is_array(json_object_get(*state, "benchmarks"))) {
		json_decref(*state);
		*state = NULL;
		return pl_error_set(err, PL_EINPUT, "%s: benchmarks: expected an array", p);
	}
	return rc;
}

/* The time limits: each benchmark run, and the suite (4x as long). */
static double run_timeout(json_t *state)
{
	json_t *t = json_object_get(state, "timeout_s");
	return json_is_number(t) ? json_number_value(t) : PL_LOOP_TIMEOUT_DEFAULT;
}

static double suite_timeout(json_t *state)
{
	return 4 * run_timeout(state);
}

static int run_suite(const char *suite, double timeout_s, const volatile sig_atomic_t *intr,
		     int *code, struct pl_error *err)
{
	*code = 0;
	if (!suite)
		return PL_OK;
	int rc = pl_spawn_suite(suite, timeout_s, intr, code, err);
	if (rc == PL_ENOEXEC || rc == PL_EINPUT)
		return pl_error_set(err, PL_EINPUT, "suite '%s': %s", suite, err->msg);
	return rc;
}

static struct pl_loop_progress progress;

void pl_loop_set_progress(const struct pl_loop_progress *p)
{
	if (p)
		progress = *p;
	else
		memset(&progress, 0, sizeof(progress));
}

static void phase(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static void phase(const char *fmt, ...)
{
	if (!progress.phase)
		return;
	char buf[300];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(buf, sizeof(buf), fmt, ap);
	va_end(ap);
	progress.phase(progress.arg, buf);
}

static void on_runs(void *arg, const struct pl_bench *b, size_t index,
		    enum pl_progress_event ev)
{
	(void)arg;
	if (progress.runs)
		progress.runs(progress.arg, b, index, (int)ev);
}

/* Bench every stored command with the stored settings; write `file`. */
static int measure(const struct pl_git *g, json_t *state, const char *file,
		   const volatile sig_atomic_t *intr, json_t **summary, struct pl_error *err)
{
	struct pl_bench_run run;
	memset(&run, 0, sizeof(run));
	pl_bench_config_defaults(&run.cfg);
	int runs = (int)json_integer_value(json_object_get(state, "runs"));
	run.cfg.runs = runs;
	run.cfg.timeout_s = run_timeout(state);
	/* every turn batched as the baseline was (or as its calibration chose) */
	json_t *batch = json_object_get(state, "batch");
	run.cfg.batch = json_is_integer(batch) && json_integer_value(batch) > 0
			    ? (int)json_integer_value(batch)
			    : 0;
	/* a warm-up and a least run count given at baseline (perfloop.yaml) */
	json_t *warm = json_object_get(state, "warmup"), *minr = json_object_get(state, "min_runs");
	if (json_is_integer(warm))
		run.cfg.warmup = (int)json_integer_value(warm);
	if (json_is_integer(minr) && json_integer_value(minr) > run.cfg.min_runs)
		run.cfg.min_runs = (int)json_integer_value(minr);
	if (run.cfg.min_runs < 3)
		run.cfg.min_runs = 3;
	/* the deterministic measure: the baseline's "auto" simulates where it
	 * can afford to (evidence for a turn measured on a noisier machine);
	 * each turn then simulates as the baseline did */
	/* a loop from before the deterministic measure has no "sim": its
	 * baseline has no counts, so its turns take none */
	const char *sim = json_string_value(json_object_get(state, "sim"));
	int mode = sim ? pl_sim_parse_mode(sim)
		   : strncmp(file, "try-", 4) == 0 ? PL_SIM_OFF
						   : PL_SIM_AUTO;
	/* the program's own number, as the baseline read it: it decides, and
	 * the process is not simulated */
	struct pl_metric metric = {0};
	json_t *mj = json_object_get(state, "metric");
	if (json_is_object(mj)) {
		int mrc = pl_metric_init(&metric,
					 json_string_value(json_object_get(mj, "expr")) ?: "",
					 json_string_value(json_object_get(mj, "name")),
					 json_is_true(json_object_get(mj, "higher_is_better")), err);
		if (mrc != PL_OK)
			return mrc;
		run.cfg.metric = &metric;
		if (mode == PL_SIM_AUTO)
			mode = PL_SIM_OFF;
	}
	run.cfg.sim = mode == PL_SIM_AUTO ? PL_SIM_EVIDENCE : mode < 0 ? PL_SIM_OFF : mode;
	/* as bench does: where the counts can decide, a noisy wall time gets
	 * its time budget, not minutes of batches */
	if (run.cfg.sim != PL_SIM_OFF && pl_sim_available(NULL, 0)) {
		run.cfg.max_time_s = run.cfg.time_budget_s;
		if (!getenv("PERFLOOP_WAIT_QUIET") && run.cfg.wait_quiet_s > PL_SIM_WAIT_QUIET_S)
			run.cfg.wait_quiet_s = PL_SIM_WAIT_QUIET_S;
	}
	run.interrupt_flag = intr;
	pl_counters_parse(&run.cfg.counters, "auto", NULL);
	pl_counters_probe(&run.cfg.counters, pl_perf_open);
	size_t i;
	json_t *b;
	int rc = PL_OK;
	json_array_foreach(json_object_get(state, "benchmarks"), i, b)
	{
		rc = pl_bench_add(&run, json_string_value(json_object_get(b, "name")),
				  json_string_value(json_object_get(b, "command")), 0, NULL, NULL,
				  err);
		if (rc != PL_OK)
			goto out;
	}
	if (progress.runs) {
		run.progress = on_runs;
		run.progress_arg = NULL;
	}
	phase("measuring %zu benchmark%s", run.nbench, run.nbench == 1 ? "" : "s");
	rc = pl_bench_execute(&run, err);
	if (rc != PL_OK)
		goto out;
	for (i = 0; i < run.nbench; i++)
		if (run.bench[i].state == PL_BENCH_FAILED) {
			rc = pl_error_set(err, PL_EFAILED, "'%s' %s", run.bench[i].name,
					  run.bench[i].failure);
			goto out;
		}
	if ((rc = pl_bench_finish(&run)) != PL_OK)
		goto out;
	if (run.cfg.sim != PL_SIM_OFF && progress.phase) {
		/* about PL_SIM_SLOWDOWN times a run, the runs two at a time here */
		double est = 0;
		for (i = 0; i < run.nbench; i++)
			est += run.bench[i].wall_exec.present ? run.bench[i].wall_exec.d.min : 0;
		if (run.cfg.sim != PL_SIM_EVIDENCE || est * PL_SIM_SLOWDOWN <= PL_SIM_AUTO_MAX_S)
			phase("counting instructions under Valgrind: about %.0f s",
			      est * PL_SIM_SLOWDOWN * PL_SIM_RUNS_DEFAULT / 2 + 1);
	}
	if ((rc = pl_sim_measure(&run, err)) != PL_OK)
		goto out;
	if (mode == PL_SIM_AUTO) {
		/* decided once, at baseline: every turn simulates as it did */
		int simulated = run.nbench > 0, cache = 0;
		for (i = 0; i < run.nbench; i++) {
			simulated &= run.bench[i].sim_n > 0;
			cache |= run.bench[i].sim_cache;
		}
		json_object_set_new(state, "sim",
				    json_string(!simulated ? "off"
						: cache	   ? "cycles"
							   : "instructions"));
	}
	if (!json_is_integer(batch) && run.nbench > 0)
		json_object_set_new(state, "batch", json_integer((json_int_t)run.bench[0].batch));
	*summary = pl_summary_build(&run, NULL);
	char p[4300];
	state_path(g, file, p, sizeof(p));
	rc = *summary ? pl_summary_write(p, *summary, err) : PL_ENOMEM;
	if (rc == PL_OK) {
		/* the loop's runs are bench runs: they go into the history too */
		struct pl_error herr;
		int turn = 0;
		char tag[32];
		if (sscanf(file, "try-%d.json", &turn) != 1)
			turn = 0; /* the baseline: the tree's own state */
		snprintf(tag, sizeof(tag), "turn:%d", turn);
		if (pl_history_record_here(g->top, *summary, turn ? tag : NULL, &herr) != PL_OK)
			fprintf(stderr, "perfloop: warning: history not recorded: %s\n", herr.msg);
	}
out:
	pl_bench_run_release(&run);
	pl_metric_release(&metric);
	return rc;
}

/* Too noisy to start a loop: a benchmark whose wall time is over the gate
 * and that has no simulated count to decide on instead. */
static int noisy(json_t *summary, char *why, size_t len)
{
	size_t i;
	json_t *b;
	json_array_foreach(json_object_get(summary, "benchmarks"), i, b)
	{
		json_t *t = json_object_get(json_object_get(b, "dimensions"), "timing");
		const char *dec =
		    json_string_value(json_object_get(json_object_get(b, "decides"), "dimension"));
		json_t *dd = dec ? json_object_get(json_object_get(b, "dimensions"), dec) : NULL;
		if (dd && json_object_get(b, "metric") && !json_is_null(json_object_get(b, "metric"))) {
			if (json_is_true(json_object_get(dd, "scored")))
				continue;
			snprintf(why, len,
				 "'%s' is too noisy to compare: its %s (the program's own number) has a "
				 "CV of %.1f%% > 5%%: more runs (--runs) or a quieter machine help",
				 json_string_value(json_object_get(b, "name")), dec,
				 json_number_value(json_object_get(dd, "cv")) * 100);
			return 1;
		}
		if (!json_is_true(json_object_get(t, "scored")) && !pl_dimension_simulated(dec)) {
			const char *cause = json_string_value(json_object_get(t, "cause"));
			const char *nosim = json_string_value(
			    json_object_get(json_object_get(b, "sim"), "why"));
			snprintf(why, len,
				 "'%s' is too noisy to compare (timing CV %.1f%% > 5%%): %s%s%.200s",
				 json_string_value(json_object_get(b, "name")),
				 json_number_value(json_object_get(t, "cv")) * 100,
				 cause ? cause : "a quieter machine or pinning (taskset -c N) helps",
				 nosim ? "; simulated instructions could not decide instead: " : "",
				 nosim ? nosim : "");
			return 1;
		}
	}
	return 0;
}

int pl_loop_lock(const struct pl_git *g, struct pl_error *err)
{
	char dir[4300], p[4400];
	int rc = pl_perfloop_dir(g, dir, sizeof(dir), err);
	if (rc != PL_OK)
		return rc;
	snprintf(p, sizeof(p), "%s/lock", dir);
	/* deliberately left open: the lock lasts as long as this process */
	int fd = open(p, O_RDWR | O_CREAT | O_CLOEXEC, 0644);
	if (fd < 0)
		return pl_error_set(err, PL_EINPUT, "cannot open '%s': %s", p, strerror(errno));
	if (flock(fd, LOCK_EX | LOCK_NB) != 0) {
		close(fd);
		return pl_error_set(err, PL_EINPUT,
				    "another perfloop (checkpoint, revert, baseline or try) is "
				    "working in '%s': wait for it to finish",
				    g->top);
	}
	return PL_OK;
}

static int save_state(const struct pl_git *g, json_t *state, struct pl_error *err)
{
	char p[4300];
	state_path(g, "loop.json", p, sizeof(p));
	return pl_fsio_write_json(p, state, err);
}

/* The ledger's path relative to the top of the work tree; one outside
 * the repository could never be committed. */
static int ledger_rel(const struct pl_git *g, const char *ledger, char *out, size_t len,
		      struct pl_error *err)
{
	if (!ledger)
		ledger = PL_LEDGER_DEFAULT;
	if (ledger[0] != '/') {
		snprintf(out, len, "%s", ledger);
	} else {
		size_t tl = strlen(g->top);
		if (strncmp(ledger, g->top, tl) != 0 || ledger[tl] != '/' || !ledger[tl + 1])
			return pl_error_set(err, PL_EINPUT,
					    "option '--ledger': '%s' is outside the repository '%s', "
					    "where accepted changes are committed with it",
					    ledger, g->top);
		snprintf(out, len, "%s", ledger + tl + 1);
	}
	if (strstr(out, "..") || strncmp(out, ".perfloop/", 10) == 0 || strncmp(out, ".git/", 5) == 0)
		return pl_error_set(err, PL_EINPUT,
				    "option '--ledger': '%s' must name a file inside the work tree "
				    "(not under .git or .perfloop, no '..')",
				    ledger);
	return PL_OK;
}

/* A new baseline keeps the loop it replaces: its state, baseline, turns'
 * runs, verdicts and rejected patches move to .perfloop/loops/STAMP/ (the
 * previous loop's start), named in out ("" where there was none). */
static int archive_loop(const struct pl_git *g, char *out, size_t len, struct pl_error *err)
{
	out[0] = '\0';
	char lp[4300], dir[4300], sub[4400];
	state_path(g, "loop.json", lp, sizeof(lp));
	struct stat st;
	if (stat(lp, &st) != 0)
		return PL_OK;
	char stamp[32];
	struct tm tm;
	gmtime_r(&st.st_mtime, &tm);
	strftime(stamp, sizeof(stamp), "%Y%m%dT%H%M%SZ", &tm);
	state_path(g, "loops", dir, sizeof(dir));
	if (mkdir(dir, 0755) != 0 && errno != EEXIST)
		return pl_error_set(err, PL_ESYS, "cannot create '%s': %s", dir, strerror(errno));
	for (int k = 0;; k++) {
		if (k == 0)
			snprintf(sub, sizeof(sub), "%s/%s", dir, stamp);
		else
			snprintf(sub, sizeof(sub), "%s/%s-%d", dir, stamp, k);
		if (mkdir(sub, 0755) == 0)
			break;
		if (errno != EEXIST || k > 100)
			return pl_error_set(err, PL_ESYS, "cannot create '%s': %s", sub,
					    strerror(errno));
	}
	char top[4300];
	state_path(g, "", top, sizeof(top));
	DIR *d = opendir(top);
	if (!d)
		return pl_error_set(err, PL_ESYS, "cannot read '%s': %s", top, strerror(errno));
	struct dirent *e;
	int rc = PL_OK;
	json_t *moved = json_array(); /* to put back where one cannot move */
	while (rc == PL_OK && (e = readdir(d))) {
		const char *n = e->d_name;
		int ours = !strcmp(n, "loop.json") || !strcmp(n, "baseline.json") ||
			   (!strncmp(n, "try-", 4) && strstr(n, ".json")) ||
			   !strncmp(n, "rejected-", 9);
		if (!ours)
			continue;
		char from[4600], to[4700];
		snprintf(from, sizeof(from), "%s/%s", top, n);
		snprintf(to, sizeof(to), "%s/%s", sub, n);
		if (rename(from, to) != 0)
			rc = pl_error_set(err, PL_ESYS, "cannot move '%s' to '%s': %s", from, to,
					  strerror(errno));
		else
			json_array_append_new(moved, json_string(n));
	}
	closedir(d);
	if (rc != PL_OK) { /* the old loop stays whole where it was */
		size_t i;
		json_t *n;
		json_array_foreach(moved, i, n)
		{
			char from[4700], to[4600];
			snprintf(from, sizeof(from), "%s/%s", sub, json_string_value(n));
			snprintf(to, sizeof(to), "%s/%s", top, json_string_value(n));
			rename(from, to);
		}
		rmdir(sub);
	}
	json_decref(moved);
	size_t tl = strlen(g->top);
	snprintf(out, len, "%.4000s", strncmp(sub, g->top, tl) == 0 ? sub + tl + 1 : sub);
	return rc;
}

/* The checkpoint a loop's baseline or last turn was measured from: a try
 * is the difference from it, and from no other. */
static void note_checkpoint(json_t *state, json_t *cp)
{
	const char *c = json_string_value(json_object_get(cp, "commit"));
	if (c)
		json_object_set_new(state, "checkpoint", json_string(c));
}

int pl_loop_baseline(const struct pl_git *g, const struct pl_loop_settings *s,
		     const volatile sig_atomic_t *intr, json_t **out, struct pl_error *err)
{
	*out = NULL;
	if (s->runs != 0 && s->runs < 3)
		return pl_error_set(err, PL_EINPUT, "option '--runs': a baseline needs at least 3");
	char lrel[4096];
	int rc = ledger_rel(g, s->ledger, lrel, sizeof(lrel), err);
	if (rc != PL_OK)
		return rc;
	char note[1200];
	if ((rc = pl_loop_recover(g, note, sizeof(note), err)) != PL_OK)
		return rc;
	if (note[0])
		fprintf(stderr, "perfloop: %s\n", note);
	json_t *benches = json_array();
	for (size_t i = 0; i < s->nbench; i++)
		json_array_append_new(benches, json_pack("{s:s, s:s}", "name",
							 i < s->nnames ? s->names[i] : s->bench[i],
							 "command", s->bench[i]));
	/* commands run where the baseline was started, whichever directory a
	 * later `try -C` is run from */
	char cwd[4096], workdir[4096] = ".";
	size_t tl = strlen(g->top);
	if (getcwd(cwd, sizeof(cwd)) && strncmp(cwd, g->top, tl) == 0 && cwd[tl] == '/')
		snprintf(workdir, sizeof(workdir), "%s", cwd + tl + 1);
	json_t *state =
	    json_pack("{s:s, s:s, s:o, s:s?, s:i, s:i, s:f, s:s, s:f, s:i, s:[], s:n}", "schema",
		      PL_LOOP_SCHEMA, "workdir", workdir,
		      "benchmarks", benches, "suite", s->suite, "runs", s->runs,
		      "max_iterations", s->max_iterations > 0 ? s->max_iterations : 3, "min_gain",
		      s->min_gain > 0 ? s->min_gain : 0.05, "ledger", lrel, "timeout_s",
		      s->timeout_s > 0 ? s->timeout_s : PL_LOOP_TIMEOUT_DEFAULT, "iteration", 0,
		      "turns", "last_accepted_gain");
	/* K given, or calibrated (auto) by this baseline and kept for every turn;
	 * --runs N alone is N executions (bench's -r), not N batches */
	if (s->batch > 0)
		json_object_set_new(state, "batch", json_integer(s->batch));
	else if (s->runs > 0 && s->batch == 0 && !s->batch_auto)
		json_object_set_new(state, "batch", json_integer(1));
	if (s->warmup >= 0)
		json_object_set_new(state, "warmup", json_integer(s->warmup));
	if (s->min_runs > 0)
		json_object_set_new(state, "min_runs", json_integer(s->min_runs));
	json_object_set_new(state, "sim", json_string(pl_sim_mode_name(s->sim)));
	if (s->metric) {
		struct pl_metric m;
		if ((rc = pl_metric_init(&m, s->metric, s->metric_name, s->metric_higher, err)) !=
		    PL_OK) {
			json_decref(state);
			return rc;
		}
		json_object_set_new(state, "metric",
				    json_pack("{s:s, s:s, s:b}", "expr", m.expr, "name", m.name,
					      "higher_is_better", m.higher));
		pl_metric_release(&m);
	}
	char pdir[4300];
	int code;
	rc = pl_perfloop_dir(g, pdir, sizeof(pdir), err);
	if (rc == PL_OK)
	{
		if (s->suite)
			phase("running the suite: %.200s", s->suite);
		rc = run_suite(s->suite, suite_timeout(state), intr, &code, err);
	}
	if (rc == PL_OK && code != 0)
		rc = pl_error_set(err, PL_EFAILED,
				  "the suite must pass before a baseline: '%s' exited %d", s->suite,
				  code);
	/* measured aside: a refused baseline leaves the loop it would replace
	 * as it was */
	json_t *summary = NULL;
	char why[900], next[4300], bpath[4300];
	state_path(g, "baseline.next.json", next, sizeof(next));
	state_path(g, "baseline.json", bpath, sizeof(bpath));
	if (rc == PL_OK)
		rc = measure(g, state, "baseline.next.json", intr, &summary, err);
	if (rc == PL_OK && noisy(summary, why, sizeof(why)))
		rc = pl_error_set(err, PL_ENOTSUP, "%s", why);
	json_t *cp = NULL;
	if (rc == PL_OK)
		rc = pl_checkpoint_create(g, &cp, err);
	if (rc == PL_OK)
		note_checkpoint(state, cp);
	json_decref(cp);
	char archived[4300] = "";
	if (rc == PL_OK)
		rc = archive_loop(g, archived, sizeof(archived), err);
	if (rc == PL_OK && archived[0])
		json_object_set_new(state, "previous_loop", json_string(archived));
	if (rc == PL_OK && rename(next, bpath) != 0)
		rc = pl_error_set(err, PL_ESYS, "cannot write '%s': %s", bpath, strerror(errno));
	if (rc == PL_OK)
		rc = save_state(g, state, err);
	unlink(next);
	json_decref(summary);
	if (rc != PL_OK) {
		json_decref(state);
		return rc;
	}
	*out = state;
	return PL_OK;
}

static int loop_done(json_t *state, char *why, size_t len)
{
	int it = (int)json_integer_value(json_object_get(state, "iteration"));
	int max = (int)json_integer_value(json_object_get(state, "max_iterations"));
	double min_gain = json_number_value(json_object_get(state, "min_gain"));
	json_t *last = json_object_get(state, "last_accepted_gain");
	if (it >= max) {
		snprintf(why, len, "%d iterations done (max_iterations %d)", it, max);
		return 1;
	}
	if (json_is_number(last) && json_number_value(last) < min_gain) {
		snprintf(
		    why, len,
		    "diminishing returns: the last accepted gain was %.1f%%, under %.0f%% over "
		    "the previous baseline",
		    json_number_value(last) * 100, min_gain * 100);
		return 1;
	}
	return 0;
}

/* A scratch file under .perfloop with this process's id in its name. */
static void scratch(const struct pl_git *g, const char *what, char *out, size_t len)
{
	snprintf(out, len, "%s/.perfloop/%s.%ld", g->top, what, (long)getpid());
}

static int write_nul_list(const char *file, char *const *v, size_t n, struct pl_error *err)
{
	struct pl_strbuf b = {0};
	for (size_t i = 0; i < n; i++)
		pl_strbuf_append(&b, v[i], strlen(v[i]) + 1);
	size_t len = b.len;
	char *text = pl_strbuf_take(&b);
	int rc = pl_fsio_write_atomic(file, text ? text : "", len, err);
	free(text);
	return rc;
}

/*
 * Commit the change's paths and the ledger with its new line, in a private
 * index built from HEAD: the user's index and the ledger in the working tree
 * are not touched until the commit exists, so a failing hook or a full disk
 * leaves the state before the turn. Ignored paths are never among `paths`.
 */
static int commit_change(const struct pl_git *g, char *const *paths, size_t n,
			 const char *ledger, const char *line, const char *message, char *commit,
			 size_t clen, struct pl_error *err)
{
	char idx[4300], list[4300], msgf[4300];
	scratch(g, "commit.index", idx, sizeof(idx));
	scratch(g, "commit.paths", list, sizeof(list));
	scratch(g, "commit.msg", msgf, sizeof(msgf));
	unlink(idx);
	char **add = calloc(n + 1, sizeof(char *)), **gone = calloc(n + 1, sizeof(char *));
	size_t nadd = 0, ngone = 0;
	char *old = NULL;
	int rc = add && gone ? PL_OK : PL_ENOMEM;
	for (size_t i = 0; rc == PL_OK && i < n; i++) {
		char full[8300];
		snprintf(full, sizeof(full), "%s/%s", g->top, paths[i]);
		struct stat st;
		if (lstat(full, &st) != 0)
			gone[ngone++] = paths[i];
		else if (!S_ISDIR(st.st_mode)) /* a nested repository is not committed */
			add[nadd++] = paths[i];
	}
	struct pl_gitrun r = {.dir = g->top, .index = idx};
	if (rc == PL_OK && (rc = pl_gitrun(&r, err, "read-tree", "HEAD", NULL)) == PL_OK &&
	    nadd) {
		pl_gitrun_release(&r);
		char spec[4400];
		snprintf(spec, sizeof(spec), "--pathspec-from-file=%s", list);
		if ((rc = write_nul_list(list, add, nadd, err)) == PL_OK)
			rc = pl_gitrun(&r, err, "add", "-A", spec, "--pathspec-file-nul", NULL);
	}
	pl_gitrun_release(&r);
	if (rc == PL_OK && ngone) {
		struct pl_strbuf b = {0};
		for (size_t i = 0; i < ngone; i++)
			pl_strbuf_append(&b, gone[i], strlen(gone[i]) + 1);
		struct pl_gitrun u = {.dir = g->top, .index = idx, .in = b.s ? b.s : "",
				      .inlen = b.len};
		char *args[] = {"update-index", "-z", "--force-remove", "--stdin", NULL};
		rc = pl_gitrunv(&u, args, err);
		pl_gitrun_release(&u);
		free(pl_strbuf_take(&b));
	}
	/* the ledger: the working tree's lines (uncommitted rejects included)
	 * and the new one, as a blob */
	if (rc == PL_OK) {
		char lpath[8300];
		snprintf(lpath, sizeof(lpath), "%s/%s", g->top, ledger);
		size_t olen;
		int missing;
		old = pl_fsio_read(lpath, &olen, &missing);
		if (!old && !missing) {
			rc = pl_error_set(err, PL_EINPUT, "cannot read '%s': %s", ledger,
					  strerror(errno));
		} else {
			struct pl_strbuf b = {0};
			if (old && olen) {
				pl_strbuf_append(&b, old, olen);
				if (old[olen - 1] != '\n')
					pl_strbuf_append(&b, "\n", 1);
			}
			pl_strbuf_printf(&b, "%s\n", line);
			struct pl_gitrun h = {.dir = g->top, .in = b.s, .inlen = b.len};
			char *args[] = {"hash-object", "-w", "--no-filters", "--stdin", NULL};
			rc = pl_gitrunv(&h, args, err);
			if (rc == PL_OK) {
				char *nl = strchr(h.out, '\n');
				if (nl)
					*nl = '\0';
				char info[8500];
				snprintf(info, sizeof(info), "100644,%s,%s", h.out, ledger);
				struct pl_gitrun u = {.dir = g->top, .index = idx};
				rc = pl_gitrun(&u, err, "update-index", "--add", "--cacheinfo", info,
					       NULL);
				pl_gitrun_release(&u);
			}
			pl_gitrun_release(&h);
			free(pl_strbuf_take(&b));
		}
	}
	/* git commit runs the user's hooks; with the private index it commits
	 * exactly what was staged above */
	if (rc == PL_OK && (rc = pl_fsio_write_atomic(msgf, message, strlen(message), err)) ==
			       PL_OK) {
		char fmsg[4400];
		snprintf(fmsg, sizeof(fmsg), "--file=%s", msgf);
		struct pl_gitrun c = {.dir = g->top, .index = idx};
		rc = pl_gitrun(&c, err, "commit", "-q", fmsg, NULL);
		pl_gitrun_release(&c);
		if (rc == PL_OK)
			pl_git_head_of(g->top, commit, clen);
	}
	unlink(idx);
	unlink(list);
	unlink(msgf);
	free(add);
	free(gone);
	free(old);
	return rc;
}

/*
 * The journal: .perfloop/turn.json is written before a turn changes the
 * repository (commit, revert, ledger, checkpoint) and removed when all is
 * done. A turn killed in between is completed, or rolled back, when the
 * next `try` starts: an accept whose commit landed (HEAD carries its
 * Perfloop-Turn trailer) is finished; one whose commit did not is dropped,
 * leaving the state before it; a reject is finished, its revert redone
 * only when the journal does not say it was complete.
 */
static void journal_path(const struct pl_git *g, char *out, size_t len)
{
	state_path(g, "turn.json", out, len);
}

static int journal_write(const struct pl_git *g, json_t *j, struct pl_error *err)
{
	char p[4300];
	journal_path(g, p, sizeof(p));
	return pl_fsio_write_json(p, j, err);
}

/* Has HEAD the commit of turn `id`? */
static int head_has_turn(const struct pl_git *g, const char *id)
{
	struct pl_gitrun r = {.dir = g->top};
	struct pl_error ignore;
	int found = 0;
	if (pl_gitrun(&r, &ignore, "log", "-1", "--format=%B", "HEAD", NULL) == PL_OK) {
		char want[128];
		snprintf(want, sizeof(want), "Perfloop-Turn: %s", id);
		found = strstr(r.out, want) != NULL;
	}
	pl_gitrun_release(&r);
	return found;
}

/* The ledger in the working tree ends with this line? */
static int ledger_has(const char *path, const char *line)
{
	size_t len;
	int missing;
	char *text = pl_fsio_read(path, &len, &missing);
	if (!text)
		return 0;
	size_t ll = strlen(line);
	int has = len >= ll + 1 && text[len - 1] == '\n' &&
		  memcmp(text + len - 1 - ll, line, ll) == 0 &&
		  (len == ll + 1 || text[len - ll - 2] == '\n');
	free(text);
	return has;
}

static void record_turn(json_t *state, json_t *j)
{
	int it = (int)json_integer_value(json_object_get(j, "iteration"));
	if (json_integer_value(json_object_get(state, "iteration")) >= it)
		return;
	json_array_append(json_object_get(state, "turns"), json_object_get(j, "turn"));
	json_object_set_new(state, "iteration", json_integer(it));
	if (strcmp(json_string_value(json_object_get(j, "kind")), "accept") == 0)
		json_object_set(state, "last_accepted_gain", json_object_get(j, "gain"));
}

/* The fault test (t505) kills a turn at each named step with
 * PERFLOOP_FAULT_KILL=STEP, as a power cut or SIGKILL would. */
static void fault_point(const char *step)
{
	const char *at = getenv("PERFLOOP_FAULT_KILL");
	if (at && strcmp(at, step) == 0)
		raise(SIGKILL);
}

/* The directories above the ledger (a path under top), made as needed. */
static void ledger_dirs(const struct pl_git *g, char *lpath)
{
	char *slash = strrchr(lpath, '/');
	if (!slash)
		return;
	*slash = '\0';
	for (char *p = lpath + strlen(g->top) + 1; *p; p++)
		if (*p == '/') {
			*p = '\0';
			mkdir(lpath, 0755);
			*p = '/';
		}
	mkdir(lpath, 0755);
	*slash = '/';
}

/* Whether the checkpoint on disk is still the loop's (a 'perfloop
 * checkpoint' in the middle of a change would make the turn the difference
 * from a tree the baseline never measured). Loops older than this record
 * pass. */
static int checkpoint_is_loops(const struct pl_git *g, json_t *state, struct pl_error *err)
{
	const char *want = json_string_value(json_object_get(state, "checkpoint"));
	if (!want)
		return PL_OK;
	char cpath[4300];
	snprintf(cpath, sizeof(cpath), "%s/.perfloop/checkpoint.json", g->top);
	json_t *cp = NULL;
	struct pl_error ignore;
	const char *have = NULL;
	if (pl_json_load(cpath, &cp, &ignore) == PL_OK)
		have = json_string_value(json_object_get(cp, "commit"));
	int same = have && strcmp(have, want) == 0;
	json_decref(cp);
	if (same)
		return PL_OK;
	return pl_error_set(err, PL_EINPUT,
			    "the checkpoint was taken again since the loop's baseline or last "
			    "turn ('perfloop checkpoint' ran): the baseline measured the tree of "
			    "%.12s, and a turn is the change from that tree only; run 'perfloop "
			    "baseline' to start a loop from the tree as it is (no iteration was "
			    "used)",
			    want);
}

/* A turn's last steps, either verdict: the new checkpoint, the turn in
 * the loop's state. */
static int end_turn(const struct pl_git *g, json_t *state, json_t *j, const char *step,
		    struct pl_error *err)
{
	json_t *cp, *created = json_object_get(j, "created");
	size_t n = json_array_size(created), k = 0;
	char **left = calloc(n + 1, sizeof(*left));
	if (!left)
		return PL_ENOMEM;
	for (size_t i = 0; i < n; i++) /* a name that is not UTF-8 too */
		if ((left[k] = pl_git_path_of(json_array_get(created, i))))
			k++;
	int rc = pl_checkpoint_create_ex(g, (const char *const *)left, k, &cp, err);
	for (size_t i = 0; i < k; i++)
		free(left[i]);
	free(left);
	if (rc != PL_OK)
		return rc;
	note_checkpoint(state, cp);
	json_decref(cp);
	fault_point(step);
	record_turn(state, j);
	return save_state(g, state, err);
}

/* The steps after an accepted commit, each safe to repeat. */
static int finish_accept(const struct pl_git *g, json_t *state, json_t *j, char *warn,
			 size_t wlen, struct pl_error *err)
{
	const char *ledger = json_string_value(json_object_get(state, "ledger"));
	char lpath[8300], spec[128];
	snprintf(lpath, sizeof(lpath), "%s/%s", g->top, ledger);
	snprintf(spec, sizeof(spec), "HEAD:%s", ledger);
	/* the working tree's ledger becomes the committed one */
	struct pl_gitrun r = {.dir = g->top};
	int rc = pl_gitrun(&r, err, "cat-file", "blob", spec, NULL);
	if (rc == PL_OK) {
		ledger_dirs(g, lpath);
		rc = pl_fsio_write_atomic(lpath, r.out, r.outlen, err);
	}
	pl_gitrun_release(&r);
	if (rc != PL_OK)
		return rc;
	fault_point("accept-ledger");
	/* the user's index follows the commit for the committed paths */
	struct pl_gitrun d = {.dir = g->top};
	if (pl_gitrun(&d, err, "diff-tree", "--no-commit-id", "--name-only", "-r", "-z",
		      "--no-renames", "HEAD", NULL) == PL_OK &&
	    d.outlen) {
		char list[4300], sp[4400];
		scratch(g, "reset.paths", list, sizeof(list));
		snprintf(sp, sizeof(sp), "--pathspec-from-file=%s", list);
		struct pl_error rerr;
		struct pl_gitrun x = {.dir = g->top};
		if (pl_fsio_write_atomic(list, d.out, d.outlen, &rerr) != PL_OK ||
		    pl_gitrun(&x, &rerr, "reset", "-q", "HEAD", sp, "--pathspec-file-nul", NULL) !=
			PL_OK)
			snprintf(warn, wlen,
				 "the commit is made, but git's index could not follow it (%s): "
				 "'git reset -q' does",
				 rerr.msg);
		pl_gitrun_release(&x);
		unlink(list);
	}
	pl_gitrun_release(&d);
	fault_point("accept-reset");
	char apath[4300], bpath[4300], file[64];
	snprintf(file, sizeof(file), "try-%lld.json",
		 (long long)json_integer_value(json_object_get(j, "iteration")));
	state_path(g, file, apath, sizeof(apath));
	state_path(g, "baseline.json", bpath, sizeof(bpath));
	struct stat st;
	if (stat(apath, &st) == 0 && rename(apath, bpath) != 0)
		return pl_error_set(err, PL_ESYS, "cannot make '%s' the baseline: %s", apath,
				    strerror(errno));
	fault_point("accept-baseline");
	return end_turn(g, state, j, "accept-checkpoint", err);
}

/* A rejected change, kept so that it can be applied again: the binary
 * diff between the checkpoint it was measured from (`from`) and the tree
 * the revert saved, over the paths it restored and the files the change
 * created, as .perfloop/rejected-N.patch (`git apply` takes it from the
 * top of the work tree), named in the turn. Best effort: a patch that
 * cannot be written leaves the turn as it is (the saved tree stays under
 * refs/perfloop/reverted until the next reject). */
static void keep_patch(const struct pl_git *g, json_t *state, int it, const char *from,
		       const struct pl_revert_result *rv, char *out, size_t len)
{
	out[0] = '\0';
	size_t n = rv->nrestored + rv->ncreated;
	if (!from[0] || !rv->saved[0] || n == 0)
		return;
	char **args = calloc(n + 12, sizeof(*args));
	if (!args)
		return;
	size_t k = 0;
	args[k++] = "diff";
	args[k++] = "--binary";
	args[k++] = "--no-renames";
	args[k++] = "--no-color";
	args[k++] = "--no-ext-diff";
	args[k++] = "--full-index";
	args[k++] = (char *)from;
	args[k++] = (char *)rv->saved;
	args[k++] = "--";
	for (size_t i = 0; i < rv->nrestored; i++)
		args[k++] = rv->restored[i];
	for (size_t i = 0; i < rv->ncreated; i++)
		args[k++] = rv->created[i];
	args[k] = NULL;
	struct pl_gitrun r = {.dir = g->top};
	struct pl_error gerr;
	char name[64], path[4300];
	snprintf(name, sizeof(name), "rejected-%d.patch", it);
	state_path(g, name, path, sizeof(path));
	if (pl_gitrunv(&r, args, &gerr) == PL_OK && r.outlen > 0 &&
	    pl_fsio_write_atomic(path, r.out, r.outlen, &gerr) == PL_OK) {
		snprintf(out, len, ".perfloop/%s", name);
		json_t *turns = json_object_get(state, "turns");
		json_t *last = json_array_get(turns, json_array_size(turns) - 1);
		if (last && json_integer_value(json_object_get(last, "iteration")) == it) {
			json_object_set_new(last, "patch", json_string(out));
			struct pl_error serr;
			save_state(g, state, &serr);
		}
	}
	pl_gitrun_release(&r);
	free(args);
}

/* The steps of a reject, each safe to repeat. */
static int finish_reject(const struct pl_git *g, json_t *state, json_t *j,
			 struct pl_revert_result *reverted, struct pl_error *err)
{
	int rc;
	if (!json_is_true(json_object_get(j, "reverted"))) {
		if ((rc = pl_checkpoint_revert(g, 0, reverted, err)) != PL_OK)
			return rc;
		fault_point("reject-revert");
		json_object_set_new(j, "reverted", json_true());
		/* left in place, as said: the next checkpoint marks them */
		json_t *created = json_array();
		for (size_t i = 0; created && i < reverted->ncreated; i++)
			json_array_append_new(created, pl_git_path_json(reverted->created[i]));
		json_object_set_new(j, "created", created);
		if ((rc = journal_write(g, j, err)) != PL_OK)
			return rc;
	}
	const char *ledger = json_string_value(json_object_get(state, "ledger"));
	const char *line = json_string_value(json_object_get(j, "line"));
	char lpath[8300];
	snprintf(lpath, sizeof(lpath), "%s/%s", g->top, ledger);
	if (!ledger_has(lpath, line)) {
		ledger_dirs(g, lpath);
		json_t *entry = json_loads(line, 0, NULL);
		rc = entry ? pl_ledger_append(lpath, entry, err) : PL_ENOMEM;
		json_decref(entry);
		if (rc != PL_OK)
			return rc;
	}
	fault_point("reject-ledger");
	/* the ledger line is the next turn's starting state: the checkpoint
	 * takes it in, or a later revert would take it back */
	return end_turn(g, state, j, "reject-checkpoint", err);
}

/* Signals that would cut a turn's last steps in two wait until they end. */
static void hold_signals(sigset_t *old)
{
	sigset_t s;
	sigemptyset(&s);
	sigaddset(&s, SIGINT);
	sigaddset(&s, SIGTERM);
	sigaddset(&s, SIGHUP);
	sigaddset(&s, SIGQUIT);
	sigaddset(&s, SIGTSTP);
	sigprocmask(SIG_BLOCK, &s, old);
}

int pl_loop_recover(const struct pl_git *g, char *note, size_t len, struct pl_error *err)
{
	note[0] = '\0';
	char jp[4300];
	journal_path(g, jp, sizeof(jp));
	struct stat st;
	if (stat(jp, &st) != 0)
		return PL_OK;
	json_t *j = NULL, *state = NULL;
	int rc = pl_json_load(jp, &j, err);
	if (rc != PL_OK)
		return rc;
	const char *kind = json_string_value(json_object_get(j, "kind"));
	const char *id = json_string_value(json_object_get(j, "id"));
	int it = (int)json_integer_value(json_object_get(j, "iteration"));
	if (!kind || !id || !json_is_string(json_object_get(j, "line"))) {
		json_decref(j);
		return pl_error_set(err, PL_EINPUT, "%s: kind, id, line: missing", jp);
	}
	if ((rc = pl_loop_state(g, &state, err)) != PL_OK)
		goto out;
	sigset_t old;
	hold_signals(&old);
	if (strcmp(kind, "accept") == 0 && !head_has_turn(g, id)) {
		snprintf(note, len,
			 "turn %d was interrupted before its commit: nothing of it was kept "
			 "(your change is still in the working tree)",
			 it);
	} else if (strcmp(kind, "accept") == 0) {
		char warn[1200] = "", commit[64];
		pl_git_head_of(g->top, commit, sizeof(commit));
		json_object_set_new(json_object_get(j, "turn"), "commit", json_string(commit));
		rc = finish_accept(g, state, j, warn, sizeof(warn), err);
		snprintf(note, len, "turn %d (accept) was interrupted after its commit and is now complete%s%s",
			 it, warn[0] ? "; " : "", warn);
	} else {
		struct pl_revert_result rr;
		memset(&rr, 0, sizeof(rr));
		rc = finish_reject(g, state, j, &rr, err);
		pl_revert_result_release(&rr);
		snprintf(note, len, "turn %d (reject) was interrupted and is now complete", it);
	}
	if (rc == PL_OK)
		unlink(jp);
	sigprocmask(SIG_SETMASK, &old, NULL);
out:
	json_decref(state);
	json_decref(j);
	return rc;
}

int pl_loop_pending(const struct pl_git *g, char *what, size_t len)
{
	char jp[4300];
	journal_path(g, jp, sizeof(jp));
	json_t *j = json_load_file(jp, 0, NULL);
	if (!j)
		return 0;
	const char *kind = json_string_value(json_object_get(j, "kind"));
	const char *id = json_string_value(json_object_get(j, "id"));
	int it = (int)json_integer_value(json_object_get(j, "iteration"));
	if (kind && strcmp(kind, "accept") == 0)
		snprintf(what, len,
			 "turn %d (accept) was interrupted %s; the next 'perfloop try' %s it",
			 it, id && head_has_turn(g, id) ? "after its commit" : "before its commit",
			 id && head_has_turn(g, id) ? "completes" : "drops");
	else
		snprintf(what, len,
			 "turn %d (reject) was interrupted; the next 'perfloop try' completes it", it);
	json_decref(j);
	return 1;
}

static int cmp_strp(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/* s in v, sorted with cmp_strp */
static int in_list(char *const *v, size_t n, const char *s)
{
	return n && bsearch(&s, v, n, sizeof(*v), cmp_strp) != NULL;
}

int pl_loop_try(const struct pl_git *g, const char *message, int cont,
		const volatile sig_atomic_t *intr, struct pl_try_outcome *o, struct pl_error *err)
{
	memset(o, 0, sizeof(*o));
	int rc = pl_loop_recover(g, o->recovered, sizeof(o->recovered), err);
	if (rc != PL_OK)
		return rc;
	json_t *state;
	rc = pl_loop_state(g, &state, err);
	if (rc != PL_OK)
		return rc;
	char why[256], wd[8300];
	json_t *baseline = NULL, *summary = NULL, *ventry = NULL, *j = NULL;
	snprintf(wd, sizeof(wd), "%s/%s", g->top,
		 json_string_value(json_object_get(state, "workdir")) ?: ".");
	if (chdir(wd) != 0) {
		json_decref(state);
		return pl_error_set(err, PL_EINPUT, "cannot enter '%s', where the baseline ran: %s",
				    wd, strerror(errno));
	}
	char **paths = NULL, **change = NULL;
	size_t npaths = 0, nchange = 0;
	unsigned char *ign = NULL;
	int held = 0;
	sigset_t oldmask;
	if (!cont && loop_done(state, why, sizeof(why))) {
		rc = pl_error_set(err, PL_ENOTSUP,
				  "the loop is done: %s; 'perfloop try --continue' goes on", why);
		goto out;
	}
	if ((rc = checkpoint_is_loops(g, state, err)) != PL_OK)
		goto out;
	/* the change is what differs from the checkpoint now, before anything
	 * runs: what a benchmark writes while measured is not the change's */
	{
		struct pl_revert_result touched;
		if ((rc = pl_checkpoint_revert(g, 1, &touched, err)) != PL_OK)
			goto out;
		size_t changed = touched.nrestored + touched.ncreated;
		if (touched.nkept) {
			/* perfloop neither commits nor reverts inside a submodule: a
			 * turn there would credit a commit without the change */
			rc = pl_error_set(err, PL_EINPUT,
					  "the change reaches into %s; a turn commits and reverts "
					  "only this repository's own files: make the change "
					  "here, or commit it in the submodule and 'perfloop "
					  "baseline' again (no iteration was used)",
					  touched.kept[0]);
			pl_revert_result_release(&touched);
			goto out;
		}
		change = calloc(changed + 1, sizeof(char *));
		for (size_t i = 0; change && i < touched.nrestored; i++)
			change[nchange++] = strdup(touched.restored[i]);
		for (size_t i = 0; change && i < touched.ncreated; i++)
			change[nchange++] = strdup(touched.created[i]);
		pl_revert_result_release(&touched);
		for (size_t i = 0; change && i < nchange; i++)
			if (!change[i]) {
				rc = PL_ENOMEM;
				goto out;
			}
		if (!change) {
			rc = PL_ENOMEM;
			goto out;
		}
		qsort(change, nchange, sizeof(*change), cmp_strp);
		if (changed == 0) {
			rc = pl_error_set(err, PL_EINPUT,
					  "nothing changed since the last checkpoint (the baseline "
					  "or the last accepted turn): make one change, then "
					  "'perfloop try'; no iteration was used");
			goto out;
		}
	}
	char bpath[4300];
	state_path(g, "baseline.json", bpath, sizeof(bpath));
	if ((rc = pl_summary_load(bpath, &baseline, err)) != PL_OK)
		goto out;
	int it = (int)json_integer_value(json_object_get(state, "iteration")) + 1;
	const char *suite = json_string_value(json_object_get(state, "suite"));
	int code;
	if (suite)
		phase("running the suite: %.200s", suite);
	if ((rc = run_suite(suite, suite_timeout(state), intr, &code, err)) != PL_OK)
		goto out;
	char file[64];
	snprintf(file, sizeof(file), "try-%d.json", it);
	rc = measure(g, state, file, intr, &summary, err);
	if (rc == PL_EFAILED) {
		/* the change broke a benchmark: that is a reject, not an error */
		summary = NULL;
	} else if (rc != PL_OK) {
		goto out;
	}
	char apath[4300];
	state_path(g, file, apath, sizeof(apath));
	struct pl_verify_input in = {.before = baseline,
				     .after = summary,
				     .before_path = bpath,
				     .after_path = apath,
				     .min_gain =
					 json_number_value(json_object_get(state, "min_gain")),
				     .suite_given = 1,
				     .suite_exit = suite ? code : 0,
				     .suite_what = suite ? suite : "no suite configured"};
	o->kind = PL_ACCEPT;
	if (!summary) {
		o->kind = PL_REJECT;
		snprintf(o->failure, sizeof(o->failure), "%s", err->msg);
		snprintf(o->verdict.bench, sizeof(o->verdict.bench), "%s",
			 json_string_value(json_object_get(
			     json_array_get(json_object_get(state, "benchmarks"), 0), "name")));
	} else {
		size_t i;
		json_t *b;
		json_array_foreach(json_object_get(state, "benchmarks"), i, b)
		{
			struct pl_verdict v;
			in.bench = json_string_value(json_object_get(b, "name"));
			if ((rc = pl_verify(&in, &v, err)) != PL_OK)
				goto out;
			if (v.kind == PL_REJECT ||
			    (v.kind == PL_NO_FEASIBLE_WIN && o->kind == PL_ACCEPT))
				o->kind = v.kind;
			if (i == 0) {
				o->verdict = v;
				o->gain = v.gain;
			} else {
				pl_verdict_release(&v);
			}
		}
	}
	char head[64];
	pl_git_head_of(g->top, head, sizeof(head));
	o->verdict.kind = o->kind;
	if (o->verdict.nrules == 0)
		snprintf(o->verdict.target, sizeof(o->verdict.target), "timing");
	ventry = pl_verdict_ledger_entry(&o->verdict, head);
	{
		/* the turn's run in the history gets its verdict: a rejected one is
		 * not what any commit is (history regressions leaves it out) */
		char from[32], to[48];
		struct pl_error herr;
		snprintf(from, sizeof(from), "turn:%d", it);
		snprintf(to, sizeof(to), "turn:%d:%s", it, o->kind == PL_ACCEPT ? "accept" : "reject");
		if (pl_history_retag_here(g->top, from, to, &herr) != PL_OK)
			fprintf(stderr, "perfloop: warning: history not updated: %s\n", herr.msg);
	}
	json_object_set_new(ventry, "iteration", json_integer(it));
	char *line = json_dumps(ventry, JSON_COMPACT | JSON_REAL_PRECISION(12));
	if (!line) {
		rc = PL_ENOMEM;
		goto out;
	}
	char id[64];
	struct timespec ts;
	clock_gettime(CLOCK_REALTIME, &ts);
	snprintf(id, sizeof(id), "%lx-%lx-%x", (long)ts.tv_sec, ts.tv_nsec, (unsigned)getpid());
	/* measured_on: the commit the change was measured on top of, which is
	 * what the ledger's line calls "commit" (a line cannot name the commit
	 * it is part of); "commit" here, once accepted, is the turn's own */
	json_t *turn = json_pack("{s:i, s:s, s:f, s:s, s:s}", "iteration", it, "verdict",
				 pl_verdict_name(o->kind), "gain", o->gain, "measured_on", head,
				 "target", o->verdict.target);
	j = json_pack("{s:s, s:s, s:i, s:s, s:s, s:o, s:f, s:b}", "id", id, "kind",
		      o->kind == PL_ACCEPT ? "accept" : "reject", "iteration", it, "line", line,
		      "head_before", head, "turn", turn, "gain", o->gain, "reverted", 0);
	free(line);
	if (!j) {
		rc = PL_ENOMEM;
		goto out;
	}
	if (o->kind == PL_ACCEPT) {
		/* the paths the change touched, less any ignored before or now */
		struct pl_revert_result touched;
		if ((rc = pl_checkpoint_revert(g, 1, &touched, err)) != PL_OK)
			goto out;
		paths = calloc(touched.nrestored + touched.ncreated + 1, sizeof(char *));
		ign = calloc(touched.nrestored + touched.ncreated + 1, 1);
		for (size_t i = 0; paths && i < touched.nrestored; i++)
			paths[npaths++] = strdup(touched.restored[i]);
		for (size_t i = 0; paths && i < touched.ncreated; i++)
			paths[npaths++] = strdup(touched.created[i]);
		pl_revert_result_release(&touched);
		if (!paths || !ign) {
			rc = PL_ENOMEM;
			goto out;
		}
		if ((rc = pl_git_ignored(g, paths, npaths, ign, err)) != PL_OK)
			goto out;
		size_t keep = 0;
		for (size_t i = 0; i < npaths; i++) {
			int unmade = !in_list(change, nchange, paths[i]);
			if (unmade || ign[i]) {
				char *list = unmade ? o->unmade : o->excluded;
				size_t cap = unmade ? sizeof(o->unmade) : sizeof(o->excluded);
				size_t l = strlen(list);
				char *q = pl_git_quote(paths[i]); /* never raw bytes */
				snprintf(list + l, cap - l, "%s%s", l ? ", " : "", q ? q : "?");
				free(q);
				free(paths[i]);
			} else {
				paths[keep++] = paths[i];
			}
		}
		npaths = keep;
		char msg[1400], before[48], after[48];
		pl_fmt_dim(before, sizeof(before), o->verdict.target, o->verdict.before_p50);
		pl_fmt_dim(after, sizeof(after), o->verdict.target, o->verdict.after_p50);
		snprintf(msg, sizeof(msg),
			 "%s\n\nperfloop: %s of '%s' improved %.1f%% (p50 %s -> %s)\n\n"
			 "Perfloop-Turn: %s\n",
			 message ? message : "perf: accepted change", o->verdict.target,
			 o->verdict.bench, o->gain * 100, before, after, id);
		hold_signals(&oldmask);
		held = 1;
		if ((rc = journal_write(g, j, err)) != PL_OK)
			goto out;
		fault_point("accept-journal");
		rc = commit_change(g, paths, npaths, json_string_value(json_object_get(state, "ledger")),
				   json_string_value(json_object_get(j, "line")), msg, o->commit,
				   sizeof(o->commit), err);
		if (rc != PL_OK) {
			/* nothing was changed: the turn never happened */
			char jp[4300];
			journal_path(g, jp, sizeof(jp));
			unlink(jp);
			char m2[1024];
			snprintf(m2, sizeof(m2), "%s", err->msg);
			rc = pl_error_set(err, PL_EFAILED,
					  "the change was accepted but not committed: %s (nothing "
					  "was changed: fix it and run 'perfloop try' again)",
					  m2);
			goto out;
		}
		json_object_set_new(turn, "commit", json_string(o->commit));
		fault_point("accept-commit");
		if ((rc = journal_write(g, j, err)) != PL_OK ||
		    (rc = finish_accept(g, state, j, o->warning, sizeof(o->warning), err)) != PL_OK)
			goto out;
	} else {
		/* the evidence first: it changes nothing of the user's */
		char kept[64], kpath[4300];
		snprintf(kept, sizeof(kept), "rejected-%d.json", it);
		state_path(g, kept, kpath, sizeof(kpath));
		if (summary && rename(apath, kpath) == 0) {
			snprintf(o->evidence, sizeof(o->evidence), ".perfloop/%s", kept);
			json_object_set_new(turn, "evidence", json_string(o->evidence));
			in.after_path = kpath;
			json_t *vdoc = pl_verdict_to_json(&o->verdict, &in);
			char vpath[4400];
			snprintf(vpath, sizeof(vpath), "%s/.perfloop/rejected-%d.verdict.json",
				 g->top, it);
			rc = vdoc ? pl_fsio_write_json(vpath, vdoc, err) : PL_ENOMEM;
			json_decref(vdoc);
			if (rc != PL_OK)
				goto out;
		}
		/* the checkpoint the change is measured from, before the reject
		 * takes the next one: the rejected patch is the difference */
		char from[64] = "";
		{
			struct pl_gitrun r = {.dir = g->top};
			struct pl_error gerr;
			if (pl_gitrun(&r, &gerr, "rev-parse", "--verify", "-q",
				      "refs/perfloop/checkpoint", NULL) == PL_OK && r.out)
				snprintf(from, sizeof(from), "%.*s", (int)strcspn(r.out, "\n"),
					 r.out);
			pl_gitrun_release(&r);
		}
		hold_signals(&oldmask);
		held = 1;
		if ((rc = journal_write(g, j, err)) != PL_OK)
			goto out;
		fault_point("reject-journal");
		if ((rc = finish_reject(g, state, j, &o->reverted, err)) != PL_OK)
			goto out;
		keep_patch(g, state, it, from, &o->reverted, o->patch, sizeof(o->patch));
	}
	fault_point("state");
	char jp[4300];
	journal_path(g, jp, sizeof(jp));
	unlink(jp);
	o->done = loop_done(state, o->why_done, sizeof(o->why_done));
out:
	if (held)
		sigprocmask(SIG_SETMASK, &oldmask, NULL);
	for (size_t i = 0; i < npaths; i++)
		free(paths[i]);
	free(paths);
	for (size_t i = 0; i < nchange; i++)
		free(change[i]);
	free(change);
	free(ign);
	json_decref(j);
	json_decref(ventry);
	json_decref(summary);
	json_decref(baseline);
	json_decref(state);
	return rc;
}

void pl_try_outcome_release(struct pl_try_outcome *o)
{
	pl_verdict_release(&o->verdict);
	pl_revert_result_release(&o->reverted);
}
