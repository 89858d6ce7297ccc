/*
 * Checkpoint and revert (see gitops.h).
 *
 * A checkpoint is:
 *   - W: `git stash create` (a commit of the tracked working tree whose
 *     second parent I holds the index), or HEAD when nothing tracked is
 *     modified; kept alive by refs/perfloop/checkpoint (never refs/stash);
 *   - the untracked, non-ignored files, each stored as a blob with
 *     `git hash-object -w` and recorded with its mode;
 * in TOP/.perfloop/checkpoint.json, a directory that ignores itself through
 * its own .gitignore ("*").
 *
 * A revert finds the touched paths: worktree vs W, index vs I, and the
 * recorded untracked files whose bytes or mode differ (or that are gone).
 * Each touched path that existed at the checkpoint is restored (tracked
 * ones with `git restore --source=W --worktree`, untracked ones from their
 * blob); the index entries of touched paths go back to I; a path that did
 * not exist at the checkpoint was created by the change and is only listed.
 * Ignored files are not part of a checkpoint and are never touched.
 */
#include "gitops.h"

#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "fsio.h"
#include "spawn.h"
#include "strbuf.h"

#define MAX_ARGS 64

/* git -C TOP --literal-pathspecs ARGS...; *out gets stdout (may be NULL).
 * Returns PL_OK or an error naming the git command. */
static int git(const struct pl_git *g, char **out, size_t *len, struct pl_error *err, ...)
{
	char *argv[MAX_ARGS];
	int n = 0;
	argv[n++] = "git";
	argv[n++] = "-C";
	argv[n++] = (char *)g->top;
	argv[n++] = "--literal-pathspecs";
	va_list ap;
	va_start(ap, err);
	const char *a;
	while ((a = va_arg(ap, const char *)) && n < MAX_ARGS - 1)
		argv[n++] = (char *)a;
	va_end(ap);
	argv[n] = NULL;
	char *buf;
	size_t blen;
	int code = pl_spawn_output(argv, 0, &buf, &blen);
	if (code != 0) {
		free(buf);
		if (code < 0)
			return pl_error_set(err, PL_ESYS, "cannot run 'git %s' (is git installed?)",
					    argv[4]);
		return pl_error_set(err, PL_EINPUT, "'git %s %s' failed with exit status %d",
				    argv[4], argv[5] ? argv[5] : "", code);
	}
	if (out) {
		*out = buf;
		if (len)
			*len = blen;
	} else {
		free(buf);
	}
	return PL_OK;
}

static void chomp(char *s)
{
	size_t n = strlen(s);
	while (n > 0 && (s[n - 1] == '\n' || s[n - 1] == '\r'))
		s[--n] = '\0';
}

int pl_git_toplevel(const char *dir, char *out, size_t len)
{
	struct pl_git g;
	snprintf(g.top, sizeof(g.top), "%s", dir);
	char *top;
	if (git(&g, &top, NULL, NULL, "rev-parse", "--show-toplevel", NULL) != PL_OK)
		return -1;
	chomp(top);
	snprintf(out, len, "%s", top);
	free(top);
	return *out ? 0 : -1;
}

int pl_git_open(struct pl_git *g, const char *dir, struct pl_error *err)
{
	memset(g, 0, sizeof(*g));
	snprintf(g->top, sizeof(g->top), "%s", dir);
	char *top;
	if (git(g, &top, NULL, NULL, "rev-parse", "--show-toplevel", NULL) != PL_OK)
		return pl_error_set(err, PL_EINPUT, "'%s' is not inside a git work tree", dir);
	chomp(top);
	snprintf(g->top, sizeof(g->top), "%s", top);
	free(top);
	if (git(g, NULL, NULL, NULL, "rev-parse", "--verify", "-q", "HEAD", NULL) != PL_OK)
		return pl_error_set(err, PL_EINPUT,
				    "the repository in '%s' has no commit yet: commit once first",
				    g->top);
	static const char *busy[][2] = {
	    {"MERGE_HEAD", "a merge"},		{"rebase-merge", "a rebase"},
	    {"rebase-apply", "a rebase or am"}, {"CHERRY_PICK_HEAD", "a cherry-pick"},
	    {"REVERT_HEAD", "a revert"},	{"BISECT_LOG", "a bisect"},
	};
	for (size_t i = 0; i < sizeof(busy) / sizeof(busy[0]); i++) {
		char *p;
		if (git(g, &p, NULL, err, "rev-parse", "--path-format=absolute", "--git-path",
			busy[i][0], NULL) != PL_OK)
			return PL_EINPUT;
		chomp(p);
		struct stat st;
		int there = stat(p, &st) == 0;
		free(p);
		if (there)
			return pl_error_set(
			    err, PL_EINPUT,
			    "the repository is in the middle of %s: finish or abort "
			    "it first",
			    busy[i][1]);
	}
	return PL_OK;
}

int pl_perfloop_dir(const struct pl_git *g, char *out, size_t len, struct pl_error *err)
{
	snprintf(out, len, "%s/.perfloop", g->top);
	if (mkdir(out, 0755) != 0 && errno != EEXIST)
		return pl_error_set(err, PL_EINPUT, "cannot create '%s': %s", out, strerror(errno));
	char ign[4300];
	snprintf(ign, sizeof(ign), "%s/.gitignore", out);
	struct stat st;
	if (stat(ign, &st) != 0)
		return pl_fsio_write_atomic(ign, "*\n", 2, err);
	return PL_OK;
}

/* Split NUL-separated output into a vector of paths. */
static char **split_nul(char *buf, size_t len, size_t *n)
{
	*n = 0;
	for (size_t i = 0; i < len; i++)
		*n += buf[i] == '\0';
	char **v = calloc(*n + 1, sizeof(char *));
	if (!v)
		return NULL;
	size_t k = 0;
	for (size_t i = 0; i < len && k < *n;) {
		v[k++] = buf + i;
		i += strlen(buf + i) + 1;
	}
	return v;
}

/* Blob ids of paths (relative to top), by `git hash-object`, one per path. */
static int hash_paths(const struct pl_git *g, char **paths, size_t n, int write, char ***ids,
		      struct pl_error *err)
{
	*ids = calloc(n + 1, sizeof(char *));
	if (!*ids)
		return PL_ENOMEM;
	const size_t chunk = 40;
	for (size_t i = 0; i < n; i += chunk) {
		char *argv[MAX_ARGS];
		int k = 0;
		argv[k++] = "git";
		argv[k++] = "-C";
		argv[k++] = (char *)g->top;
		argv[k++] = "hash-object";
		argv[k++] = "--no-filters";
		if (write)
			argv[k++] = "-w";
		argv[k++] = "--";
		for (size_t j = i; j < n && j < i + chunk; j++)
			argv[k++] = paths[j];
		argv[k] = NULL;
		char *out;
		size_t len;
		if (pl_spawn_output(argv, 0, &out, &len) != 0) {
			free(out);
			return pl_error_set(err, PL_ESYS, "git hash-object failed");
		}
		char *save = NULL;
		size_t j = i;
		for (char *tok = strtok_r(out, "\n", &save); tok && j < n;
		     tok = strtok_r(NULL, "\n", &save))
			(*ids)[j++] = strdup(tok);
		free(out);
	}
	return PL_OK;
}

static void free_strv(char **v, size_t n)
{
	if (!v)
		return;
	for (size_t i = 0; i < n; i++)
		free(v[i]);
	free(v);
}

int pl_checkpoint_create(const struct pl_git *g, json_t **out, struct pl_error *err)
{
	*out = NULL;
	char dir[4200];
	int rc = pl_perfloop_dir(g, dir, sizeof(dir), err);
	if (rc != PL_OK)
		return rc;
	char *head = NULL, *stash = NULL, *untracked = NULL;
	char **paths = NULL, **ids = NULL;
	size_t npaths = 0;
	json_t *doc = NULL;
	if ((rc = git(g, &head, NULL, err, "rev-parse", "HEAD", NULL)) != PL_OK)
		goto out;
	/* `git stash create` exits 1, silently, when there is nothing to
	 * stash (seen with git 2.39 right after the index was rewritten):
	 * that is a clean tree, not an error. */
	char *sargv[] = {"git", "-C", (char *)g->top, "stash", "create", NULL};
	size_t slen;
	int scode = pl_spawn_output(sargv, 0, &stash, &slen);
	if (!stash) {
		rc = PL_ENOMEM;
		goto out;
	}
	chomp(stash);
	if (scode != 0 && !(scode == 1 && stash[0] == '\0')) {
		rc = pl_error_set(err, PL_EINPUT, "'git stash create' failed with exit status %d",
				  scode);
		goto out;
	}
	chomp(head);
	const char *w = *stash ? stash : head;
	if ((rc = git(g, NULL, NULL, err, "update-ref", "-m", "perfloop checkpoint",
		      "refs/perfloop/checkpoint", w, NULL)) != PL_OK)
		goto out;
	size_t ulen;
	if ((rc = git(g, &untracked, &ulen, err, "ls-files", "--others", "--exclude-standard", "-z",
		      NULL)) != PL_OK)
		goto out;
	paths = split_nul(untracked, ulen, &npaths);
	if (!paths) {
		rc = PL_ENOMEM;
		goto out;
	}
	if (npaths && (rc = hash_paths(g, paths, npaths, 1, &ids, err)) != PL_OK)
		goto out;
	json_t *ulist = json_array();
	for (size_t i = 0; i < npaths; i++) {
		char full[8300];
		snprintf(full, sizeof(full), "%s/%s", g->top, paths[i]);
		struct stat st;
		if (lstat(full, &st) != 0 || !ids || !ids[i])
			continue;
		json_array_append_new(ulist, json_pack("{s:s, s:s, s:i}", "path", paths[i], "blob",
						       ids[i], "mode", (int)(st.st_mode & 07777)));
	}
	char created[32];
	time_t t = time(NULL);
	struct tm tm;
	gmtime_r(&t, &tm);
	strftime(created, sizeof(created), "%Y-%m-%dT%H:%M:%SZ", &tm);
	doc = json_pack("{s:s, s:s, s:s, s:s, s:s, s:o}", "schema", PL_CHECKPOINT_SCHEMA, "created",
			created, "head", head, "worktree", w, "index", *stash ? "" : head,
			"untracked", ulist);
	if (*stash) {
		/* the stash commit's second parent holds the index */
		char *idx;
		char spec[128];
		snprintf(spec, sizeof(spec), "%s^2", stash);
		if ((rc = git(g, &idx, NULL, err, "rev-parse", spec, NULL)) != PL_OK)
			goto out;
		chomp(idx);
		json_object_set_new(doc, "index", json_string(idx));
		free(idx);
	}
	char path[4300];
	snprintf(path, sizeof(path), "%s/checkpoint.json", dir);
	if ((rc = pl_fsio_write_json(path, doc, err)) != PL_OK)
		goto out;
	*out = doc;
	doc = NULL;
out:
	json_decref(doc);
	free(head);
	free(stash);
	free(untracked);
	free(paths);
	free_strv(ids, npaths);
	return rc;
}

struct pathset {
	char **v;
	size_t n, cap;
};

static int has(const struct pathset *s, const char *p)
{
	for (size_t i = 0; i < s->n; i++)
		if (strcmp(s->v[i], p) == 0)
			return 1;
	return 0;
}

static void add(struct pathset *s, const char *p)
{
	if (has(s, p))
		return;
	if (s->n == s->cap) {
		size_t cap = s->cap ? s->cap * 2 : 32;
		char **nv = realloc(s->v, cap * sizeof(char *));
		if (!nv)
			return;
		s->v = nv;
		s->cap = cap;
	}
	s->v[s->n] = strdup(p);
	if (s->v[s->n])
		s->n++;
}

static void add_nul_list(struct pathset *s, char *buf, size_t len)
{
	for (size_t i = 0; i < len;) {
		if (buf[i])
			add(s, buf + i);
		i += strlen(buf + i) + 1;
	}
}

static int git_nul_list(const struct pl_git *g, struct pathset *s, struct pl_error *err, ...)
{
	/* at most 8 arguments, as the callers need */
	const char *a[9] = {0};
	va_list ap;
	va_start(ap, err);
	for (int i = 0; i < 8; i++)
		if (!(a[i] = va_arg(ap, const char *)))
			break;
	va_end(ap);
	char *out;
	size_t len;
	int rc = git(g, &out, &len, err, a[0], a[1], a[2], a[3], a[4], a[5], a[6], a[7], NULL);
	if (rc != PL_OK)
		return rc;
	add_nul_list(s, out, len);
	free(out);
	return PL_OK;
}

static int write_pathspec(const char *file, const struct pathset *s, struct pl_error *err)
{
	struct pl_strbuf b = {0};
	for (size_t i = 0; i < s->n; i++)
		pl_strbuf_append(&b, s->v[i], strlen(s->v[i]) + 1);
	size_t len = b.len;
	char *text = pl_strbuf_take(&b);
	if (!text && len)
		return PL_ENOMEM;
	int rc = pl_fsio_write_atomic(file, text ? text : "", len, err);
	free(text);
	return rc;
}

static int restore_blob(const struct pl_git *g, const char *path, const char *blob, int mode,
			struct pl_error *err)
{
	char *data;
	size_t len;
	int rc = git(g, &data, &len, err, "cat-file", "blob", blob, NULL);
	if (rc != PL_OK)
		return rc;
	char full[8300];
	snprintf(full, sizeof(full), "%s/%s", g->top, path);
	/* the parent directory may have been removed by the change */
	char *slash = strrchr(full, '/');
	if (slash) {
		*slash = '\0';
		char cmd_dir[8300];
		snprintf(cmd_dir, sizeof(cmd_dir), "%s", full);
		for (char *p = cmd_dir + strlen(g->top) + 1; *p; p++)
			if (*p == '/') {
				*p = '\0';
				mkdir(cmd_dir, 0755);
				*p = '/';
			}
		mkdir(cmd_dir, 0755);
		*slash = '/';
	}
	rc = pl_fsio_write_atomic(full, data, len, err);
	free(data);
	if (rc == PL_OK && chmod(full, (mode_t)mode) != 0)
		rc = pl_error_set(err, PL_ESYS, "cannot chmod '%s': %s", path, strerror(errno));
	return rc;
}

int pl_checkpoint_revert(const struct pl_git *g, int dry_run, struct pl_revert_result *res,
			 struct pl_error *err)
{
	memset(res, 0, sizeof(*res));
	char cpath[4300];
	snprintf(cpath, sizeof(cpath), "%s/.perfloop/checkpoint.json", g->top);
	struct stat st;
	if (stat(cpath, &st) != 0)
		return pl_error_set(err, PL_EINPUT,
				    "no checkpoint in '%s': run 'perfloop checkpoint' before "
				    "changing anything",
				    g->top);
	json_t *cp;
	int rc = pl_json_load(cpath, &cp, err);
	if (rc != PL_OK)
		return rc;
	const char *w = json_string_value(json_object_get(cp, "worktree"));
	const char *idx = json_string_value(json_object_get(cp, "index"));
	json_t *ulist = json_object_get(cp, "untracked");
	if (!w || !idx || !json_is_array(ulist)) {
		json_decref(cp);
		return pl_error_set(err, PL_EINPUT, "%s: worktree, index, untracked: missing",
				    cpath);
	}
	if (!*idx)
		idx = w;

	struct pathset touched = {0}, in_w = {0}, in_i = {0}, in_index = {0}, now_untracked = {0};
	struct pathset restore_tracked = {0}, restore_index = {0};
	if ((rc = git_nul_list(g, &touched, err, "diff", "--name-only", "-z", "--no-renames", w,
			       "--", NULL)) ||
	    (rc = git_nul_list(g, &touched, err, "diff", "--cached", "--name-only", "-z",
			       "--no-renames", idx, "--", NULL)) ||
	    (rc = git_nul_list(g, &in_w, err, "ls-tree", "-r", "-z", "--name-only", w, NULL)) ||
	    (rc = git_nul_list(g, &in_i, err, "ls-tree", "-r", "-z", "--name-only", idx, NULL)) ||
	    (rc = git_nul_list(g, &in_index, err, "ls-files", "-z", NULL)) ||
	    (rc = git_nul_list(g, &now_untracked, err, "ls-files", "--others", "--exclude-standard",
			       "-z", NULL)))
		goto out;

	/* recorded untracked files whose bytes or mode changed, or that went */
	size_t nu = json_array_size(ulist);
	char **upaths = calloc(nu + 1, sizeof(char *)), **present = calloc(nu + 1, sizeof(char *));
	size_t npresent = 0;
	for (size_t i = 0; i < nu; i++) {
		const char *p =
		    json_string_value(json_object_get(json_array_get(ulist, i), "path"));
		upaths[i] = (char *)p;
		char full[8300];
		snprintf(full, sizeof(full), "%s/%s", g->top, p);
		if (lstat(full, &st) != 0 || !S_ISREG(st.st_mode)) {
			add(&touched, p);
			continue;
		}
		int mode =
		    (int)json_integer_value(json_object_get(json_array_get(ulist, i), "mode"));
		if ((int)(st.st_mode & 07777) != mode)
			add(&touched, p);
		present[npresent++] = (char *)p;
	}
	char **ids = NULL;
	if (npresent && (rc = hash_paths(g, present, npresent, 0, &ids, err)) != PL_OK) {
		free(upaths);
		free(present);
		goto out;
	}
	for (size_t i = 0, k = 0; i < nu && k < npresent; i++) {
		if (upaths[i] != present[k])
			continue;
		const char *blob =
		    json_string_value(json_object_get(json_array_get(ulist, i), "blob"));
		if (!ids[k] || strcmp(ids[k], blob) != 0)
			add(&touched, upaths[i]);
		k++;
	}
	free_strv(ids, npresent);
	free(present);

	/* created: in neither W nor the recorded untracked files */
	for (size_t i = 0; i < now_untracked.n; i++) {
		int recorded = 0;
		for (size_t k = 0; k < nu && !recorded; k++)
			recorded = strcmp(upaths[k], now_untracked.v[i]) == 0;
		if (!recorded && !has(&in_w, now_untracked.v[i]))
			add(&touched, now_untracked.v[i]);
	}

	for (size_t i = 0; i < touched.n; i++) {
		const char *p = touched.v[i];
		int recorded = -1;
		for (size_t k = 0; k < nu && recorded < 0; k++)
			if (strcmp(upaths[k], p) == 0)
				recorded = (int)k;
		if (has(&in_w, p)) {
			add(&restore_tracked, p);
		} else if (recorded >= 0) {
			if (!dry_run) {
				json_t *u = json_array_get(ulist, (size_t)recorded);
				rc = restore_blob(
				    g, p, json_string_value(json_object_get(u, "blob")),
				    (int)json_integer_value(json_object_get(u, "mode")), err);
				if (rc != PL_OK)
					break;
			}
		} else {
			res->created = realloc(res->created, (res->ncreated + 1) * sizeof(char *));
			res->created[res->ncreated++] = strdup(p);
			/* unstaged, never deleted: the file stays where it is */
			if (has(&in_index, p))
				add(&restore_index, p);
			continue;
		}
		res->restored = realloc(res->restored, (res->nrestored + 1) * sizeof(char *));
		res->restored[res->nrestored++] = strdup(p);
		if (has(&in_i, p) || has(&in_index, p))
			add(&restore_index, p);
	}
	free(upaths);
	if (rc != PL_OK || dry_run)
		goto out;

	char spec[4300];
	snprintf(spec, sizeof(spec), "%s/.perfloop/revert.pathspec", g->top);
	char srcw[128], srci[128];
	snprintf(srcw, sizeof(srcw), "--source=%s", w);
	snprintf(srci, sizeof(srci), "--source=%s", idx);
	char specarg[4400];
	snprintf(specarg, sizeof(specarg), "--pathspec-from-file=%s", spec);
	if (restore_tracked.n) {
		if ((rc = write_pathspec(spec, &restore_tracked, err)) != PL_OK ||
		    (rc = git(g, NULL, NULL, err, "restore", srcw, "--worktree", specarg,
			      "--pathspec-file-nul", NULL)) != PL_OK)
			goto out;
	}
	if (restore_index.n) {
		if ((rc = write_pathspec(spec, &restore_index, err)) != PL_OK ||
		    (rc = git(g, NULL, NULL, err, "restore", srci, "--staged", specarg,
			      "--pathspec-file-nul", NULL)) != PL_OK)
			goto out;
	}
	unlink(spec);
out:
	free_strv(touched.v, touched.n);
	free_strv(in_w.v, in_w.n);
	free_strv(in_i.v, in_i.n);
	free_strv(in_index.v, in_index.n);
	free_strv(now_untracked.v, now_untracked.n);
	free_strv(restore_tracked.v, restore_tracked.n);
	free_strv(restore_index.v, restore_index.n);
	json_decref(cp);
	return rc;
}

void pl_revert_result_release(struct pl_revert_result *r)
{
	free_strv(r->restored, r->nrestored);
	free_strv(r->created, r->ncreated);
	memset(r, 0, sizeof(*r));
}
