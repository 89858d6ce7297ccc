/*
 * The loop (see loop.h): its state, measuring, and the baseline. Measuring
 * reuses the bench engine with the settings stored at baseline time, so
 * every turn is measured exactly as the baseline was; verifying reuses
 * verify's rules; keeping or undoing the change reuses the checkpoint. The
 * policy: at most max_iterations turns, and a stop when the last accepted
 * gain was under min_gain over the previous baseline (diminishing
 * returns); `--continue` goes on anyway. A turn is loopturn.c; the journal
 * that completes an interrupted one is loopjournal.c (loop_int.h joins them).
 */
#include "loop_int.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
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
#include "history.h"
#include "metric.h"
#include "simcount.h"
#include "spawn.h"
#include "summary.h"

void pl_loop_state_path(const struct pl_git *g, const char *name, char *out, size_t len)
{
	snprintf(out, len, "%s/.perfloop/%s", g->top, name);
}

const char *pl_loop_ledger_problem(const char *top, const char *rel)
{
	const char *why = pl_relpath_check(rel, 1);
	if (why)
		return why;
	/* each directory on the way a real one (or not there yet), the file a
	 * regular one (or not there yet): a committed `docs -> ../elsewhere`
	 * would carry the ledger's writes out of the tree */
	char p[8300];
	size_t tl = strlen(top);
	snprintf(p, sizeof p, "%s/%s", top, rel);
	for (char *s = p + tl + 1;; s++) {
		int last = (s = strchr(s, '/')) == NULL;
		if (!last)
			*s = '\0';
		struct stat st;
		int there = lstat(p, &st) == 0;
		if (!last)
			*s = '/';
		if (!there)
			return NULL;
		if (S_ISLNK(st.st_mode))
			return "a path through a symlink";
		if (last)
			return S_ISREG(st.st_mode) ? NULL : "not a regular file";
		if (!S_ISDIR(st.st_mode))
			return "a path through something that is not a directory";
	}
}

int pl_loop_state(const struct pl_git *g, json_t **state, struct pl_error *err)
{
	char p[4300], why[600];
	if (pl_git_state_problem(g, why, sizeof why))
		return pl_error_set(err, PL_EINPUT, "%s", why);
	pl_loop_state_path(g, "loop.json", p, sizeof(p));
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
	/* where a turn writes and runs: inside this tree, whatever the file
	 * says (a cloned loop.json named ../elsewhere) */
	const char *ledger = rc == PL_OK ? json_string_value(json_object_get(*state, "ledger")) : NULL;
	const char *wd = rc == PL_OK ? json_string_value(json_object_get(*state, "workdir")) : NULL;
	const char *lwhy = ledger ? pl_loop_ledger_problem(g->top, ledger) : NULL;
	const char *wwhy = wd && strcmp(wd, ".") ? pl_relpath_check(wd, 1) : NULL;
	if (rc == PL_OK && (lwhy || wwhy || (json_object_get(*state, "ledger") && !ledger))) {
		/* said before the document (which holds the strings) is let go */
		rc = pl_error_set(err, PL_EINPUT, "%s: %s: '%.200s' is %s; refused", p,
				  wwhy ? "workdir" : "ledger", wwhy ? wd : ledger ? ledger : "?",
				  wwhy ? wwhy : lwhy ? lwhy : "not a string");
		json_decref(*state);
		*state = NULL;
	}
	return rc;
}

/* The time limits: each benchmark run, and the suite (4x as long). */
static double run_timeout(json_t *state)
{
	json_t *t = json_object_get(state, "timeout_s");
	return json_is_number(t) ? json_number_value(t) : PL_LOOP_TIMEOUT_DEFAULT;
}

double pl_loop_suite_timeout(json_t *state)
{
	return 4 * run_timeout(state);
}

int pl_loop_run_suite(const char *suite, double timeout_s, const volatile sig_atomic_t *intr,
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

void pl_loop_phase(const char *fmt, ...)
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

static void on_runs(void *arg, const struct pl_bench *b, size_t index, enum pl_progress_event ev)
{
	(void)arg;
	if (progress.runs)
		progress.runs(progress.arg, b, index, (int)ev);
}

/* Bench every stored command with the stored settings; write `file`. */
int pl_loop_measure(const struct pl_git *g, json_t *state, const char *file,
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
	int mode = sim				   ? pl_sim_parse_mode(sim)
		   : strncmp(file, "try-", 4) == 0 ? PL_SIM_OFF
						   : PL_SIM_AUTO;
	/* the program's own number, as the baseline read it: it decides, and
	 * the process is not simulated */
	struct pl_metric metric = {0};
	json_t *mj = json_object_get(state, "metric");
	if (json_is_object(mj)) {
		int mrc =
		    pl_metric_init(&metric, json_string_value(json_object_get(mj, "expr")) ?: "",
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
	pl_loop_phase("measuring %zu benchmark%s", run.nbench, run.nbench == 1 ? "" : "s");
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
			pl_loop_phase("counting instructions under Valgrind: about %.0f s",
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
	pl_loop_state_path(g, file, p, sizeof(p));
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
		if (dd && json_object_get(b, "metric") &&
		    !json_is_null(json_object_get(b, "metric"))) {
			if (json_is_true(json_object_get(dd, "scored")))
				continue;
			const char *expr = json_string_value(
			    json_object_get(json_object_get(b, "metric"), "expr"));
			snprintf(
			    why, len,
			    "'%s' is too noisy to compare: its %s (the program's own number) has a "
			    "CV of %.1f%% > 5%%: %s",
			    json_string_value(json_object_get(b, "name")), dec,
			    json_number_value(json_object_get(dd, "cv")) * 100,
			    expr && !strcmp(expr, "steps")
				? "a step's wall time waits for the CPU on a busy machine; a "
				  "training loop on the CPU is steadier by the CPU time of its "
				  "steps (--metric steps:cpu: CV 0.5% beside two CPU hogs where "
				  "the wall time's was 22.6%), or more runs (--runs)"
				: "more runs (--runs) or a quieter machine help");
			return 1;
		}
		if (!json_is_true(json_object_get(t, "scored")) && !pl_dimension_simulated(dec)) {
			const char *cause = json_string_value(json_object_get(t, "cause"));
			const char *nosim =
			    json_string_value(json_object_get(json_object_get(b, "sim"), "why"));
			snprintf(
			    why, len,
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
	int fd = open(p, O_RDWR | O_CREAT | O_NOFOLLOW | O_CLOEXEC, 0644);
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

int pl_loop_save_state(const struct pl_git *g, json_t *state, struct pl_error *err)
{
	char p[4300];
	pl_loop_state_path(g, "loop.json", p, sizeof(p));
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
			return pl_error_set(
			    err, PL_EINPUT,
			    "option '--ledger': '%s' is outside the repository '%s', "
			    "where accepted changes are committed with it",
			    ledger, g->top);
		snprintf(out, len, "%s", ledger + tl + 1);
	}
	while (!strncmp(out, "./", 2)) /* ./docs/l.jsonl is docs/l.jsonl */
		memmove(out, out + 2, strlen(out + 2) + 1);
	const char *why = pl_loop_ledger_problem(g->top, out);
	if (why)
		return pl_error_set(err, PL_EINPUT,
				    "option '--ledger': '%s' must name a file inside the work tree, "
				    "not under .git or .perfloop, reached through real directories: "
				    "it is %s",
				    ledger, why);
	return PL_OK;
}

/* A new baseline keeps the loop it replaces: its state, baseline, turns'
 * runs, verdicts and rejected patches move to .perfloop/loops/STAMP/ (the
 * previous loop's start), named in out ("" where there was none). */
static int archive_loop(const struct pl_git *g, char *out, size_t len, struct pl_error *err)
{
	out[0] = '\0';
	char lp[4300], dir[4300], sub[4400];
	pl_loop_state_path(g, "loop.json", lp, sizeof(lp));
	struct stat st;
	if (stat(lp, &st) != 0)
		return PL_OK;
	char stamp[32];
	struct tm tm;
	gmtime_r(&st.st_mtime, &tm);
	strftime(stamp, sizeof(stamp), "%Y%m%dT%H%M%SZ", &tm);
	pl_loop_state_path(g, "loops", dir, sizeof(dir));
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
	pl_loop_state_path(g, "", top, sizeof(top));
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
			   !strncmp(n, "rejected-", 9) || !strncmp(n, "accepted-", 9);
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
void pl_loop_note_checkpoint(json_t *state, json_t *cp)
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
	json_t *state = json_pack("{s:s, s:s, s:o, s:s?, s:i, s:i, s:f, s:s, s:f, s:i, s:[], s:n}",
				  "schema", PL_LOOP_SCHEMA, "workdir", workdir, "benchmarks",
				  benches, "suite", s->suite, "runs", s->runs, "max_iterations",
				  s->max_iterations > 0 ? s->max_iterations : 3, "min_gain",
				  s->min_gain > 0 ? s->min_gain : 0.05, "ledger", lrel, "timeout_s",
				  s->timeout_s > 0 ? s->timeout_s : PL_LOOP_TIMEOUT_DEFAULT,
				  "iteration", 0, "turns", "last_accepted_gain");
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
	{
		/* the loop's id, on each of its ledger lines: a ledger outlives
		 * loops, and report shows one loop's lines, never two mixed */
		struct timespec ts;
		clock_gettime(CLOCK_REALTIME, &ts);
		struct tm tm;
		gmtime_r(&ts.tv_sec, &tm);
		char id[64], day[32];
		strftime(day, sizeof day, "%Y%m%dT%H%M%S", &tm);
		snprintf(id, sizeof id, "%s.%09ldZ-%ld", day, (long)ts.tv_nsec, (long)getpid());
		json_object_set_new(state, "loop_id", json_string(id));
	}
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
	if (rc == PL_OK) {
		if (s->suite)
			pl_loop_phase("running the suite: %.200s", s->suite);
		rc = pl_loop_run_suite(s->suite, pl_loop_suite_timeout(state), intr, &code, err);
	}
	if (rc == PL_OK && code != 0)
		rc = pl_error_set(err, PL_EFAILED,
				  "the suite must pass before a baseline: '%s' exited %d", s->suite,
				  code);
	/* measured aside: a refused baseline leaves the loop it would replace
	 * as it was */
	json_t *summary = NULL;
	char why[900], next[4300], bpath[4300];
	pl_loop_state_path(g, "baseline.next.json", next, sizeof(next));
	pl_loop_state_path(g, "baseline.json", bpath, sizeof(bpath));
	if (rc == PL_OK)
		rc = pl_loop_measure(g, state, "baseline.next.json", intr, &summary, err);
	if (rc == PL_OK && noisy(summary, why, sizeof(why)))
		rc = pl_error_set(err, PL_ENOTSUP, "%s", why);
	json_t *cp = NULL;
	if (rc == PL_OK)
		rc = pl_checkpoint_create(g, &cp, err);
	if (rc == PL_OK)
		pl_loop_note_checkpoint(state, cp);
	json_decref(cp);
	char archived[4300] = "";
	if (rc == PL_OK)
		rc = archive_loop(g, archived, sizeof(archived), err);
	if (rc == PL_OK && archived[0])
		json_object_set_new(state, "previous_loop", json_string(archived));
	if (rc == PL_OK && rename(next, bpath) != 0)
		rc = pl_error_set(err, PL_ESYS, "cannot write '%s': %s", bpath, strerror(errno));
	if (rc == PL_OK)
		rc = pl_loop_save_state(g, state, err);
	unlink(next);
	json_decref(summary);
	if (rc != PL_OK) {
		json_decref(state);
		return rc;
	}
	*out = state;
	return PL_OK;
}

int pl_loop_done(json_t *state, char *why, size_t len)
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
void pl_loop_scratch(const struct pl_git *g, const char *what, char *out, size_t len)
{
	snprintf(out, len, "%s/.perfloop/%s.%ld", g->top, what, (long)getpid());
}
