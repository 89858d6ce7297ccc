/*
 * The journal of a turn (see loop_int.h): .perfloop/turn.json is written
 * before a turn changes the repository (commit, revert, ledger, checkpoint)
 * and removed when all is done. A turn killed in between is completed, or
 * rolled back, when the next `try` starts: an accept whose commit landed
 * (HEAD carries its Perfloop-Turn trailer) is finished; one whose commit
 * did not is dropped, leaving the state before it; a reject is finished,
 * its revert redone only when the journal does not say it was complete.
 * The steps after the verdict live here, each safe to repeat, so that a
 * turn (loopturn.c) and its recovery run the very same code.
 */
#include "loop_int.h"

#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "fsio.h"
#include "gitrun.h"
#include "ledger.h"

void pl_loop_journal_path(const struct pl_git *g, char *out, size_t len)
{
	pl_loop_state_path(g, "turn.json", out, len);
}

int pl_loop_journal_write(const struct pl_git *g, json_t *j, struct pl_error *err)
{
	char p[4300];
	pl_loop_journal_path(g, p, sizeof(p));
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
void pl_loop_fault_point(const char *step)
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
	pl_loop_note_checkpoint(state, cp);
	json_decref(cp);
	pl_loop_fault_point(step);
	record_turn(state, j);
	return pl_loop_save_state(g, state, err);
}

/* The steps after an accepted commit, each safe to repeat. */
int pl_loop_finish_accept(const struct pl_git *g, json_t *state, json_t *j, char *warn, size_t wlen,
			  struct pl_error *err)
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
	pl_loop_fault_point("accept-ledger");
	/* the user's index follows the commit for the committed paths */
	struct pl_gitrun d = {.dir = g->top};
	if (pl_gitrun(&d, err, "diff-tree", "--no-commit-id", "--name-only", "-r", "-z",
		      "--no-renames", "HEAD", NULL) == PL_OK &&
	    d.outlen) {
		char list[4300], sp[4400];
		pl_loop_scratch(g, "reset.paths", list, sizeof(list));
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
	pl_loop_fault_point("accept-reset");
	char apath[4300], bpath[4300], file[64];
	snprintf(file, sizeof(file), "try-%lld.json",
		 (long long)json_integer_value(json_object_get(j, "iteration")));
	pl_loop_state_path(g, file, apath, sizeof(apath));
	pl_loop_state_path(g, "baseline.json", bpath, sizeof(bpath));
	struct stat st;
	if (stat(apath, &st) == 0 && rename(apath, bpath) != 0)
		return pl_error_set(err, PL_ESYS, "cannot make '%s' the baseline: %s", apath,
				    strerror(errno));
	pl_loop_fault_point("accept-baseline");
	return end_turn(g, state, j, "accept-checkpoint", err);
}

/* The steps of a reject, each safe to repeat. */
int pl_loop_finish_reject(const struct pl_git *g, json_t *state, json_t *j,
			  struct pl_revert_result *reverted, struct pl_error *err)
{
	int rc;
	if (!json_is_true(json_object_get(j, "reverted"))) {
		if ((rc = pl_checkpoint_revert(g, 0, reverted, err)) != PL_OK)
			return rc;
		pl_loop_fault_point("reject-revert");
		json_object_set_new(j, "reverted", json_true());
		/* left in place, as said: the next checkpoint marks them */
		json_t *created = json_array();
		for (size_t i = 0; created && i < reverted->ncreated; i++)
			json_array_append_new(created, pl_git_path_json(reverted->created[i]));
		json_object_set_new(j, "created", created);
		if ((rc = pl_loop_journal_write(g, j, err)) != PL_OK)
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
	pl_loop_fault_point("reject-ledger");
	/* the ledger line is the next turn's starting state: the checkpoint
	 * takes it in, or a later revert would take it back */
	return end_turn(g, state, j, "reject-checkpoint", err);
}

/* Signals that would cut a turn's last steps in two wait until they end. */
void pl_loop_hold_signals(sigset_t *old)
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
	pl_loop_journal_path(g, jp, sizeof(jp));
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
	pl_loop_hold_signals(&old);
	if (strcmp(kind, "accept") == 0 && !head_has_turn(g, id)) {
		snprintf(note, len,
			 "turn %d was interrupted before its commit: nothing of it was kept "
			 "(your change is still in the working tree)",
			 it);
	} else if (strcmp(kind, "accept") == 0) {
		char warn[1200] = "", commit[64];
		pl_git_head_of(g->top, commit, sizeof(commit));
		json_object_set_new(json_object_get(j, "turn"), "commit", json_string(commit));
		rc = pl_loop_finish_accept(g, state, j, warn, sizeof(warn), err);
		snprintf(
		    note, len,
		    "turn %d (accept) was interrupted after its commit and is now complete%s%s", it,
		    warn[0] ? "; " : "", warn);
	} else {
		struct pl_revert_result rr;
		memset(&rr, 0, sizeof(rr));
		rc = pl_loop_finish_reject(g, state, j, &rr, err);
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
	pl_loop_journal_path(g, jp, sizeof(jp));
	json_t *j = json_load_file(jp, 0, NULL);
	if (!j)
		return 0;
	const char *kind = json_string_value(json_object_get(j, "kind"));
	const char *id = json_string_value(json_object_get(j, "id"));
	int it = (int)json_integer_value(json_object_get(j, "iteration"));
	if (kind && strcmp(kind, "accept") == 0)
		snprintf(what, len,
			 "turn %d (accept) was interrupted %s; the next 'perfloop try' %s it", it,
			 id && head_has_turn(g, id) ? "after its commit" : "before its commit",
			 id && head_has_turn(g, id) ? "completes" : "drops");
	else
		snprintf(what, len,
			 "turn %d (reject) was interrupted; the next 'perfloop try' completes it",
			 it);
	json_decref(j);
	return 1;
}
