/*
 * One turn of the loop (pl_loop_try, see loop.h). The change is what
 * differs from the loop's checkpoint before anything runs; it is measured
 * as the baseline was (loop.c) and verified against it benchmark by
 * benchmark. An accept commits exactly the touched files and the ledger's
 * new line, built in a private index; a reject keeps the evidence and the
 * change as a patch, and reverts it. Both are journaled first
 * (loopjournal.c), so a turn killed half-way is completed or dropped.
 */
#include "loop_int.h"

#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "fsio.h"
#include "gitrun.h"
#include "history.h"
#include "render.h"
#include "strbuf.h"
#include "summary.h"

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
static int commit_change(const struct pl_git *g, char *const *paths, size_t n, const char *ledger,
			 const char *line, const char *message, char *commit, size_t clen,
			 struct pl_error *err)
{
	char idx[4300], list[4300], msgf[4300];
	pl_loop_scratch(g, "commit.index", idx, sizeof(idx));
	pl_loop_scratch(g, "commit.paths", list, sizeof(list));
	pl_loop_scratch(g, "commit.msg", msgf, sizeof(msgf));
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
	if (rc == PL_OK && (rc = pl_gitrun(&r, err, "read-tree", "HEAD", NULL)) == PL_OK && nadd) {
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
		struct pl_gitrun u = {
		    .dir = g->top, .index = idx, .in = b.s ? b.s : "", .inlen = b.len};
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
				rc = pl_gitrun(&u, err, "update-index", "--add", "--cacheinfo",
					       info, NULL);
				pl_gitrun_release(&u);
			}
			pl_gitrun_release(&h);
			free(pl_strbuf_take(&b));
		}
	}
	/* git commit runs the user's hooks; with the private index it commits
	 * exactly what was staged above */
	if (rc == PL_OK &&
	    (rc = pl_fsio_write_atomic(msgf, message, strlen(message), err)) == PL_OK) {
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

/* Whether the checkpoint on disk is still the loop's (a 'perfloop
 * checkpoint' in the middle of a change would make the turn the difference
 * from a tree the baseline never measured). Loops older than this record
 * pass. */
static int checkpoint_is_loops(const struct pl_git *g, json_t *state, struct pl_error *err)
{
	const char *want = json_string_value(json_object_get(state, "checkpoint"));
	if (!want) /* a loop.json no baseline here wrote (a clone's) */
		return pl_error_set(err, PL_EINPUT,
				    ".perfloop/loop.json names no checkpoint: it is not a loop "
				    "'perfloop baseline' started in this clone; start one (no "
				    "iteration was used)");
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
	pl_loop_state_path(g, name, path, sizeof(path));
	if (pl_gitrunv(&r, args, &gerr) == PL_OK && r.outlen > 0 &&
	    pl_fsio_write_atomic(path, r.out, r.outlen, &gerr) == PL_OK) {
		snprintf(out, len, ".perfloop/%s", name);
		json_t *turns = json_object_get(state, "turns");
		json_t *last = json_array_get(turns, json_array_size(turns) - 1);
		if (last && json_integer_value(json_object_get(last, "iteration")) == it) {
			json_object_set_new(last, "patch", json_string(out));
			struct pl_error serr;
			pl_loop_save_state(g, state, &serr);
		}
	}
	pl_gitrun_release(&r);
	free(args);
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
	if (!cont && pl_loop_done(state, why, sizeof(why))) {
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
		for (size_t i = 0; i < touched.nunstored; i++) {
			size_t l = strlen(o->unkept);
			char *q = pl_git_quote(touched.unstored[i]); /* never raw bytes */
			snprintf(o->unkept + l, sizeof o->unkept - l, "%s%s", l ? ", " : "",
				 q ? q : "?");
			free(q);
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
	pl_loop_state_path(g, "baseline.json", bpath, sizeof(bpath));
	if ((rc = pl_summary_load(bpath, &baseline, err)) != PL_OK)
		goto out;
	int it = (int)json_integer_value(json_object_get(state, "iteration")) + 1;
	const char *suite = json_string_value(json_object_get(state, "suite"));
	int code;
	if (suite)
		pl_loop_phase("running the suite: %.200s", suite);
	if ((rc = pl_loop_run_suite(suite, pl_loop_suite_timeout(state), intr, &code, err)) !=
	    PL_OK)
		goto out;
	char file[64];
	snprintf(file, sizeof(file), "try-%d.json", it);
	rc = pl_loop_measure(g, state, file, intr, &summary, err);
	if (rc == PL_EFAILED) {
		/* the change broke a benchmark: that is a reject, not an error */
		summary = NULL;
	} else if (rc != PL_OK) {
		goto out;
	}
	char apath[4300];
	pl_loop_state_path(g, file, apath, sizeof(apath));
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
	if (ventry && json_is_string(json_object_get(state, "loop_id")))
		json_object_set(ventry, "loop", json_object_get(state, "loop_id"));
	{
		/* the turn's run in the history gets its verdict: a rejected one is
		 * not what any commit is (history regressions leaves it out) */
		char from[32], to[48];
		struct pl_error herr;
		snprintf(from, sizeof(from), "turn:%d", it);
		snprintf(to, sizeof(to), "turn:%d:%s", it,
			 o->kind == PL_ACCEPT ? "accept" : "reject");
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
		pl_loop_hold_signals(&oldmask);
		held = 1;
		if ((rc = pl_loop_journal_write(g, j, err)) != PL_OK)
			goto out;
		pl_loop_fault_point("accept-journal");
		rc = commit_change(g, paths, npaths,
				   json_string_value(json_object_get(state, "ledger")),
				   json_string_value(json_object_get(j, "line")), msg, o->commit,
				   sizeof(o->commit), err);
		if (rc != PL_OK) {
			/* nothing was changed: the turn never happened */
			char jp[4300];
			pl_loop_journal_path(g, jp, sizeof(jp));
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
		pl_loop_fault_point("accept-commit");
		/* the turn's run stays beside its verdict (the next accept
		 * replaces baseline.json): a second name for the same file */
		char kept[64], kpath[4300];
		snprintf(kept, sizeof(kept), "accepted-%d.json", it);
		pl_loop_state_path(g, kept, kpath, sizeof(kpath));
		unlink(kpath);
		int linked = summary && link(apath, kpath) == 0;
		if ((rc = pl_loop_journal_write(g, j, err)) != PL_OK ||
		    (rc = pl_loop_finish_accept(g, state, j, o->warning, sizeof(o->warning),
						err)) != PL_OK)
			goto out;
		/* and the verdict, as a rejected turn's is kept: report lists
		 * every turn in its order (evidence only: a failure to write it
		 * changes nothing of the turn) */
		if (linked) {
			in.after_path = kpath;
			json_t *vdoc = pl_verdict_to_json(&o->verdict, &in);
			char vpath[4400];
			snprintf(vpath, sizeof(vpath), "%s/.perfloop/accepted-%d.verdict.json",
				 g->top, it);
			struct pl_error verr;
			if (!vdoc || pl_fsio_write_json(vpath, vdoc, &verr) != PL_OK)
				snprintf(o->warning + strlen(o->warning),
					 sizeof(o->warning) - strlen(o->warning),
					 "%sthe verdict could not be kept in '%s'",
					 o->warning[0] ? "; " : "", vpath);
			json_decref(vdoc);
		}
	} else {
		/* the evidence first: it changes nothing of the user's */
		char kept[64], kpath[4300];
		snprintf(kept, sizeof(kept), "rejected-%d.json", it);
		pl_loop_state_path(g, kept, kpath, sizeof(kpath));
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
				      "refs/perfloop/checkpoint", NULL) == PL_OK &&
			    r.out)
				snprintf(from, sizeof(from), "%.*s", (int)strcspn(r.out, "\n"),
					 r.out);
			pl_gitrun_release(&r);
		}
		pl_loop_hold_signals(&oldmask);
		held = 1;
		if ((rc = pl_loop_journal_write(g, j, err)) != PL_OK)
			goto out;
		pl_loop_fault_point("reject-journal");
		if ((rc = pl_loop_finish_reject(g, state, j, &o->reverted, err)) != PL_OK)
			goto out;
		keep_patch(g, state, it, from, &o->reverted, o->patch, sizeof(o->patch));
	}
	pl_loop_fault_point("state");
	char jp[4300];
	pl_loop_journal_path(g, jp, sizeof(jp));
	unlink(jp);
	o->done = pl_loop_done(state, o->why_done, sizeof(o->why_done));
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
