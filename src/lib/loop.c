/*
 * The loop (see loop.h). Measuring reuses the bench engine with the
 * settings stored at baseline time, so every turn is measured exactly as
 * the baseline was; verifying reuses verify's rules; keeping or undoing the
 * change reuses the checkpoint. The policy: at most max_iterations turns,
 * and a stop when the last accepted gain was under min_gain over the
 * previous baseline (diminishing returns); `--continue` goes on anyway.
 */
#include "loop.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>

#include "benchrun.h"
#include "fsio.h"
#include "history.h"
#include "ledger.h"
#include "spawn.h"
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

static int run_suite(const char *suite, const volatile sig_atomic_t *intr, int *code,
		     struct pl_error *err)
{
	*code = 0;
	if (!suite)
		return PL_OK;
	int rc = pl_spawn_suite(suite, intr, code, err);
	if (rc == PL_ENOEXEC || rc == PL_EINPUT)
		return pl_error_set(err, PL_EINPUT, "suite '%s': %s", suite, err->msg);
	return rc;
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
	if (run.cfg.min_runs < 3)
		run.cfg.min_runs = 3;
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
	*summary = pl_summary_build(&run, NULL);
	char p[4300];
	state_path(g, file, p, sizeof(p));
	rc = *summary ? pl_summary_write(p, *summary, err) : PL_ENOMEM;
	if (rc == PL_OK) {
		/* the loop's runs are bench runs: they go into the history too */
		struct pl_error herr;
		if (pl_history_record_here(g->top, *summary, &herr) != PL_OK)
			fprintf(stderr, "perfloop: warning: history not recorded: %s\n", herr.msg);
	}
out:
	pl_bench_run_release(&run);
	return rc;
}

static int noisy(json_t *summary, char *why, size_t len)
{
	size_t i;
	json_t *b;
	json_array_foreach(json_object_get(summary, "benchmarks"), i, b)
	{
		json_t *t = json_object_get(json_object_get(b, "dimensions"), "timing");
		if (!json_is_true(json_object_get(t, "scored"))) {
			snprintf(why, len,
				 "'%s' is too noisy to compare (timing CV %.1f%% > 5%%): more runs "
				 "(--runs), a quieter machine, pinning (taskset -c) or a longer "
				 "workload help",
				 json_string_value(json_object_get(b, "name")),
				 json_number_value(json_object_get(t, "cv")) * 100);
			return 1;
		}
	}
	return 0;
}

static int save_state(const struct pl_git *g, json_t *state, struct pl_error *err)
{
	char p[4300];
	state_path(g, "loop.json", p, sizeof(p));
	return pl_fsio_write_json(p, state, err);
}

int pl_loop_baseline(const struct pl_git *g, const struct pl_loop_settings *s,
		     const volatile sig_atomic_t *intr, json_t **out, struct pl_error *err)
{
	*out = NULL;
	if (s->runs != 0 && s->runs < 3)
		return pl_error_set(err, PL_EINPUT, "option '--runs': a baseline needs at least 3");
	json_t *benches = json_array();
	for (size_t i = 0; i < s->nbench; i++)
		json_array_append_new(benches, json_pack("{s:s, s:s}", "name",
							 i < s->nnames ? s->names[i] : s->bench[i],
							 "command", s->bench[i]));
	json_t *state =
	    json_pack("{s:s, s:o, s:s?, s:i, s:i, s:f, s:s, s:i, s:[], s:n}", "schema",
		      PL_LOOP_SCHEMA, "benchmarks", benches, "suite", s->suite, "runs", s->runs,
		      "max_iterations", s->max_iterations > 0 ? s->max_iterations : 3, "min_gain",
		      s->min_gain > 0 ? s->min_gain : 0.05, "ledger",
		      s->ledger ? s->ledger : PL_LEDGER_DEFAULT, "iteration", 0, "turns",
		      "last_accepted_gain");
	char pdir[4300];
	int code, rc = pl_perfloop_dir(g, pdir, sizeof(pdir), err);
	if (rc == PL_OK)
		rc = run_suite(s->suite, intr, &code, err);
	if (rc == PL_OK && code != 0)
		rc = pl_error_set(err, PL_EFAILED,
				  "the suite must pass before a baseline: '%s' exited %d", s->suite,
				  code);
	json_t *summary = NULL;
	char why[300];
	if (rc == PL_OK)
		rc = measure(g, state, "baseline.json", intr, &summary, err);
	if (rc == PL_OK && noisy(summary, why, sizeof(why)))
		rc = pl_error_set(err, PL_ENOTSUP, "%s", why);
	json_t *cp = NULL;
	if (rc == PL_OK)
		rc = pl_checkpoint_create(g, &cp, err);
	json_decref(cp);
	if (rc == PL_OK)
		rc = save_state(g, state, err);
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

/* Commit exactly the touched paths plus the ledger. */
static int commit_change(const struct pl_git *g, const struct pl_revert_result *touched,
			 const char *ledger, const char *message, char *commit, size_t clen,
			 struct pl_error *err)
{
	size_t n = touched->nrestored + touched->ncreated;
	char **argv = calloc(n + 16, sizeof(char *));
	if (!argv)
		return PL_ENOMEM;
	/* new files must be known to git before `commit -- paths` */
	size_t k = 0;
	argv[k++] = "git";
	argv[k++] = "-C";
	argv[k++] = (char *)g->top;
	argv[k++] = "--literal-pathspecs";
	argv[k++] = "add";
	argv[k++] = "-A";
	argv[k++] = "--";
	size_t first = k;
	for (size_t i = 0; i < touched->nrestored; i++)
		argv[k++] = touched->restored[i];
	for (size_t i = 0; i < touched->ncreated; i++)
		argv[k++] = touched->created[i];
	argv[k++] = (char *)ledger;
	argv[k] = NULL;
	char *out;
	size_t len;
	int code = pl_spawn_output(argv, 0, &out, &len);
	free(out);
	if (code != 0) {
		free(argv);
		return pl_error_set(err, PL_ESYS, "git add of the changed files failed");
	}
	char **cargv = calloc(n + 16, sizeof(char *));
	size_t c = 0;
	cargv[c++] = "git";
	cargv[c++] = "-C";
	cargv[c++] = (char *)g->top;
	cargv[c++] = "--literal-pathspecs";
	cargv[c++] = "commit";
	cargv[c++] = "-q";
	cargv[c++] = "-m";
	cargv[c++] = (char *)message;
	cargv[c++] = "--";
	for (size_t i = first; i < k; i++)
		cargv[c++] = argv[i];
	cargv[c] = NULL;
	code = pl_spawn_output(cargv, 0, &out, &len);
	free(out);
	free(argv);
	free(cargv);
	if (code != 0)
		return pl_error_set(err, PL_ESYS, "git commit of the accepted change failed");
	pl_git_head(commit, clen);
	return PL_OK;
}

int pl_loop_try(const struct pl_git *g, const char *message, int cont,
		const volatile sig_atomic_t *intr, struct pl_try_outcome *o, struct pl_error *err)
{
	memset(o, 0, sizeof(*o));
	json_t *state;
	int rc = pl_loop_state(g, &state, err);
	if (rc != PL_OK)
		return rc;
	char why[256];
	json_t *baseline = NULL, *summary = NULL, *ventry = NULL;
	if (!cont && loop_done(state, why, sizeof(why))) {
		rc = pl_error_set(err, PL_ENOTSUP,
				  "the loop is done: %s; 'perfloop try --continue' goes on", why);
		goto out;
	}
	char bpath[4300];
	state_path(g, "baseline.json", bpath, sizeof(bpath));
	if ((rc = pl_summary_load(bpath, &baseline, err)) != PL_OK)
		goto out;
	int it = (int)json_integer_value(json_object_get(state, "iteration")) + 1;
	const char *suite = json_string_value(json_object_get(state, "suite"));
	int code;
	if ((rc = run_suite(suite, intr, &code, err)) != PL_OK)
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
	/* the ledger line, for the first benchmark's verdict */
	char ledger[4300];
	snprintf(ledger, sizeof(ledger), "%s/%s", g->top,
		 json_string_value(json_object_get(state, "ledger")));
	char *slash = strrchr(ledger, '/');
	if (slash) {
		*slash = '\0';
		char mk[4400];
		snprintf(mk, sizeof(mk), "%s", ledger);
		for (char *p = mk + strlen(g->top) + 1; *p; p++)
			if (*p == '/') {
				*p = '\0';
				mkdir(mk, 0755);
				*p = '/';
			}
		mkdir(mk, 0755);
		*slash = '/';
	}
	char head[64];
	pl_git_head(head, sizeof(head));
	o->verdict.kind = o->kind;
	if (o->verdict.nrules == 0)
		snprintf(o->verdict.target, sizeof(o->verdict.target), "timing");
	ventry = pl_verdict_ledger_entry(&o->verdict, head);
	json_object_set_new(ventry, "iteration", json_integer(it));

	json_t *turn = json_pack("{s:i, s:s, s:f}", "iteration", it, "verdict",
				 pl_verdict_name(o->kind), "gain", o->gain);
	if (o->kind == PL_ACCEPT) {
		struct pl_revert_result touched;
		if ((rc = pl_checkpoint_revert(g, 1, &touched, err)) != PL_OK ||
		    (rc = pl_ledger_append(ledger, ventry, err)) != PL_OK) {
			json_decref(turn);
			goto out;
		}
		char msg[1024];
		snprintf(msg, sizeof(msg),
			 "%s\n\nperfloop: %s of '%s' improved %.1f%% (p50 %.6g -> %.6g)",
			 message ? message : "perf: accepted change", o->verdict.target,
			 o->verdict.bench, o->gain * 100, o->verdict.before_p50,
			 o->verdict.after_p50);
		rc = commit_change(g, &touched, json_string_value(json_object_get(state, "ledger")),
				   msg, o->commit, sizeof(o->commit), err);
		pl_revert_result_release(&touched);
		if (rc != PL_OK) {
			json_decref(turn);
			goto out;
		}
		json_object_set_new(turn, "commit", json_string(o->commit));
		if (rename(apath, bpath) != 0) {
			rc = pl_error_set(err, PL_ESYS, "cannot make '%s' the baseline", apath);
			json_decref(turn);
			goto out;
		}
		json_t *cp;
		if ((rc = pl_checkpoint_create(g, &cp, err)) != PL_OK) {
			json_decref(turn);
			goto out;
		}
		json_decref(cp);
		json_object_set_new(state, "last_accepted_gain", json_real(o->gain));
	} else {
		if ((rc = pl_checkpoint_revert(g, 0, &o->reverted, err)) != PL_OK) {
			json_decref(turn);
			goto out;
		}
		char kept[64];
		snprintf(kept, sizeof(kept), "rejected-%d.json", it);
		char kpath[4300];
		state_path(g, kept, kpath, sizeof(kpath));
		if (summary && rename(apath, kpath) == 0) {
			snprintf(o->evidence, sizeof(o->evidence), ".perfloop/%s", kept);
			json_object_set_new(turn, "evidence", json_string(o->evidence));
			/* and the verdict beside it */
			in.after_path = kpath;
			json_t *vdoc = pl_verdict_to_json(&o->verdict, &in);
			char vpath[4400];
			snprintf(vpath, sizeof(vpath), "%s/.perfloop/rejected-%d.verdict.json",
				 g->top, it);
			if (vdoc && pl_fsio_write_json(vpath, vdoc, err) != PL_OK) {
				json_decref(vdoc);
				json_decref(turn);
				rc = PL_EINPUT;
				goto out;
			}
			json_decref(vdoc);
		}
		/* the ledger line is the next turn's starting state: checkpoint it,
		 * or a later revert would take it back */
		json_t *cp = NULL;
		if ((rc = pl_ledger_append(ledger, ventry, err)) != PL_OK ||
		    (rc = pl_checkpoint_create(g, &cp, err)) != PL_OK) {
			json_decref(turn);
			goto out;
		}
		json_decref(cp);
	}
	json_array_append_new(json_object_get(state, "turns"), turn);
	json_object_set_new(state, "iteration", json_integer(it));
	rc = save_state(g, state, err);
	o->done = loop_done(state, o->why_done, sizeof(o->why_done));
out:
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
