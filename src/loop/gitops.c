/*
 * The repository (see gitops.h) and what the checkpoint (checkpoint.c) and
 * the revert (revert.c) share through gitops_int.h: finding the work tree
 * and refusing one in the middle of a merge or rebase, .perfloop/, paths as
 * bytes (quoted for people, hex in JSON where a name is not UTF-8), git run
 * as a program, the manifest model and its loader, and which paths are
 * ignored now or were at the checkpoint. Names are any bytes throughout.
 */
#include "gitops_int.h"

#include <dirent.h>
#include <errno.h>
#include <ftw.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "fsio.h"
#include "gitrun.h"
#include "grow.h"
#include "strbuf.h"

/* ---- the manifest (gitops_int.h) -------------------------------------- */

const char *const pl_git_kind_name[] = {"file", "symlink", "repository", "other"};

void pl_git_manifest_release(struct manifest *m)
{
	for (size_t i = 0; i < m->n; i++)
		free(m->v[i].path);
	free(m->v);
	for (size_t i = 0; i < m->nignored; i++)
		free(m->ignored[i]);
	free(m->ignored);
	memset(m, 0, sizeof(*m));
}

long long pl_git_max_stored(void)
{
	const char *v = getenv("PERFLOOP_CHECKPOINT_MAX_FILE");
	char *end = NULL;
	double x = v && *v ? strtod(v, &end) : -1;
	if (x < 0 || !end || end == v)
		return 64LL << 20;
	double unit = *end == 'K' || *end == 'k'   ? 1024.0
		      : *end == 'M' || *end == 'm' ? 1048576.0
		      : *end == 'G' || *end == 'g' ? 1073741824.0
						   : 1.0;
	return x * unit > 9e18 ? (long long)9e18 : (long long)(x * unit);
}

int pl_git_cmp_entry(const void *a, const void *b)
{
	return strcmp(((const struct entry *)a)->path, ((const struct entry *)b)->path);
}

int pl_git_cmp_str(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

struct entry *pl_git_find_entry(const struct manifest *m, const char *path)
{
	struct entry key = {.path = (char *)path};
	return m->n ? bsearch(&key, m->v, m->n, sizeof(*m->v), pl_git_cmp_entry) : NULL;
}

struct entry *pl_git_add_entry(struct manifest *m, const char *path, size_t len, int tracked)
{
	if (pl_grow((void **)&m->v, &m->cap, m->n + 1, sizeof *m->v, 64) != 0)
		return NULL;
	struct entry *e = &m->v[m->n];
	memset(e, 0, sizeof(*e));
	e->path = strndup(path, len);
	if (!e->path)
		return NULL;
	e->tracked = tracked;
	m->n++;
	return e;
}

/* Under a path the checkpoint recorded as ignored (a file, or a directory
 * ending in '/')? */
int pl_git_under_ignored(const struct manifest *m, const char *path)
{
	if (!m->nignored)
		return 0;
	char buf[4200];
	size_t n = strlen(path);
	if (n >= sizeof(buf) - 1)
		return 0;
	memcpy(buf, path, n + 1);
	const char *key = buf;
	if (bsearch(&key, m->ignored, m->nignored, sizeof(char *), pl_git_cmp_str))
		return 1;
	for (size_t i = 1; i <= n; i++)
		if (path[i - 1] == '/') {
			char c = buf[i];
			buf[i] = '\0';
			int hit = bsearch(&key, m->ignored, m->nignored, sizeof(char *),
					  pl_git_cmp_str) != NULL;
			buf[i] = c;
			if (hit)
				return 1;
		}
	return 0;
}

/* ---- paths as bytes ---------------------------------------------------- */

static int utf8_printable(const char *s)
{
	const unsigned char *p = (const unsigned char *)s;
	while (*p) {
		if (*p < 0x20 || *p == 0x7f || *p == '"' || *p == '\\')
			return 0;
		if (*p < 0x80) {
			p++;
			continue;
		}
		int n = (*p & 0xe0) == 0xc0   ? 1
			: (*p & 0xf0) == 0xe0 ? 2
			: (*p & 0xf8) == 0xf0 ? 3
					      : -1;
		if (n < 0 || (n == 1 && *p < 0xc2))
			return 0;
		for (int i = 1; i <= n; i++)
			if ((p[i] & 0xc0) != 0x80)
				return 0;
		p += n + 1;
	}
	return 1;
}

char *pl_git_quote(const char *path)
{
	if (utf8_printable(path))
		return strdup(path);
	struct pl_strbuf b = {0};
	pl_strbuf_puts(&b, "\"");
	for (const unsigned char *p = (const unsigned char *)path; *p; p++) {
		if (*p == '"' || *p == '\\')
			pl_strbuf_printf(&b, "\\%c", *p);
		else if (*p == '\n')
			pl_strbuf_puts(&b, "\\n");
		else if (*p == '\t')
			pl_strbuf_puts(&b, "\\t");
		else if (*p < 0x20 || *p >= 0x7f)
			pl_strbuf_printf(&b, "\\%03o", *p);
		else
			pl_strbuf_append(&b, p, 1);
	}
	pl_strbuf_puts(&b, "\"");
	return pl_strbuf_take(&b);
}

static char *get_path(json_t *o);

json_t *pl_git_path_json(const char *path)
{
	json_t *s = json_string(path);
	if (s)
		return s;
	json_t *o = json_object();
	pl_git_set_path(o, path);
	return o;
}

char *pl_git_path_of(json_t *v)
{
	if (json_is_string(v))
		return *json_string_value(v) ? strdup(json_string_value(v)) : NULL;
	return json_is_object(v) ? get_path(v) : NULL;
}

/* JSON strings must be UTF-8: other names are stored as hex. */
void pl_git_set_path(json_t *o, const char *path)
{
	json_t *s = json_string(path);
	if (s) {
		json_object_set_new(o, "path", s);
		return;
	}
	size_t n = strlen(path);
	char *hex = malloc(2 * n + 1);
	if (!hex)
		return;
	for (size_t i = 0; i < n; i++)
		snprintf(hex + 2 * i, 3, "%02x", (unsigned char)path[i]);
	json_object_set_new(o, "path_hex", json_string(hex));
	free(hex);
}

static char *get_path(json_t *o)
{
	const char *p = json_string_value(json_object_get(o, "path"));
	if (p)
		return *p ? strdup(p) : NULL;
	const char *h = json_string_value(json_object_get(o, "path_hex"));
	size_t n = h ? strlen(h) : 0;
	if (!n || n % 2)
		return NULL;
	char *out = malloc(n / 2 + 1);
	if (!out)
		return NULL;
	for (size_t i = 0; i < n / 2; i++) {
		unsigned v;
		if (sscanf(h + 2 * i, "%2x", &v) != 1 || v == 0) {
			free(out);
			return NULL;
		}
		out[i] = (char)v;
	}
	out[n / 2] = '\0';
	return out;
}

/* ---- git --------------------------------------------------------------- */

/* git ARGS, with stdin (in: NULL for none) and its stdout kept in *out */
int pl_git_cmd_in(const struct pl_git *g, const char *index, const char *in, size_t inlen,
		  char **out, size_t *len, struct pl_error *err, char *const *args)
{
	struct pl_gitrun r = {.dir = g->top, .index = index, .in = in, .inlen = inlen};
	int rc = pl_gitrunv(&r, args, err);
	if (rc == PL_OK && out) {
		*out = r.out;
		r.out = NULL;
		if (len)
			*len = r.outlen;
	}
	pl_gitrun_release(&r);
	return rc;
}

int pl_git_cmd(const struct pl_git *g, const char *index, char **out, size_t *len,
	       struct pl_error *err, ...)
{
	char *args[64];
	int n = 0;
	va_list ap;
	va_start(ap, err);
	const char *a;
	while ((a = va_arg(ap, const char *)) && n < 63)
		args[n++] = (char *)a;
	va_end(ap);
	args[n] = NULL;
	return pl_git_cmd_in(g, index, NULL, 0, out, len, err, args);
}

void pl_git_chomp(char *s)
{
	size_t n = strlen(s);
	while (n > 0 && (s[n - 1] == '\n' || s[n - 1] == '\r'))
		s[--n] = '\0';
}

static int git_path(const struct pl_git *g, const char *what, char *out, size_t len,
		    struct pl_error *err)
{
	char *p;
	int rc = pl_git_cmd(g, NULL, &p, NULL, err, "rev-parse", "--path-format=absolute",
			    "--git-path", what, NULL);
	if (rc != PL_OK)
		return rc;
	pl_git_chomp(p);
	snprintf(out, len, "%s", p);
	free(p);
	return PL_OK;
}

/* The files whose presence says git is in the middle of something. */
static const char *const busy[][2] = {
    {"MERGE_HEAD", "a merge"},		{"rebase-merge", "a rebase"},
    {"rebase-apply", "a rebase or am"}, {"CHERRY_PICK_HEAD", "a cherry-pick"},
    {"REVERT_HEAD", "a revert"},	{"BISECT_LOG", "a bisect"},
};
#define NBUSY (sizeof(busy) / sizeof(busy[0]))

static int refuse_busy(const char *path, size_t i, struct pl_error *err)
{
	struct stat st;
	if (stat(path, &st) == 0)
		return pl_error_set(
		    err, PL_EINPUT,
		    "the repository is in the middle of %s: finish or abort it first", busy[i][1]);
	return PL_OK;
}

/* pl_git_open one question at a time: where the one-call form fails, to
 * say why (no work tree, no commit), or where its answer cannot be split
 * into lines (a path with a newline in it). */
static int open_each(struct pl_git *g, const char *dir, struct pl_error *err)
{
	memset(g, 0, sizeof(*g));
	snprintf(g->top, sizeof(g->top), "%s", dir);
	char *top;
	struct pl_error ignore;
	if (pl_git_cmd(g, NULL, &top, NULL, &ignore, "rev-parse", "--show-toplevel", NULL) != PL_OK)
		return pl_error_set(err, PL_EINPUT, "'%s' is not inside a git work tree", dir);
	pl_git_chomp(top);
	snprintf(g->top, sizeof(g->top), "%s", top);
	free(top);
	if (pl_git_cmd(g, NULL, NULL, NULL, &ignore, "rev-parse", "--verify", "-q", "HEAD", NULL) !=
	    PL_OK)
		return pl_error_set(err, PL_EINPUT,
				    "the repository in '%s' has no commit yet: commit once first",
				    g->top);
	for (size_t i = 0; i < NBUSY; i++) {
		char p[4200];
		int rc = git_path(g, busy[i][0], p, sizeof(p), err);
		if (rc != PL_OK)
			return rc;
		if ((rc = refuse_busy(p, i, err)) != PL_OK)
			return rc;
	}
	return PL_OK;
}

/* One git for every question (top, index, the busy markers, whether HEAD
 * is a commit): checkpoint and revert each ran 17-19 gits, 8 of them
 * these; a git costs 5-10 ms here, more on a big repository. */
int pl_git_open(struct pl_git *g, const char *dir, struct pl_error *err)
{
	memset(g, 0, sizeof(*g));
	snprintf(g->top, sizeof(g->top), "%s", dir);
	const char *args[9 + 2 * NBUSY];
	size_t n = 0;
	args[n++] = "rev-parse";
	args[n++] = "--show-toplevel";
	args[n++] = "--path-format=absolute";
	args[n++] = "--git-path";
	args[n++] = "index";
	for (size_t i = 0; i < NBUSY; i++) {
		args[n++] = "--git-path";
		args[n++] = busy[i][0];
	}
	args[n++] = "--verify";
	args[n++] = "-q";
	args[n++] = "HEAD";
	args[n] = NULL;
	char *out = NULL;
	struct pl_error ignore;
	if (pl_git_cmd_in(g, NULL, NULL, 0, &out, NULL, &ignore, (char *const *)args) != PL_OK)
		return open_each(g, dir, err);
	/* top, index, NBUSY paths, HEAD: one a line */
	char *line[3 + NBUSY], *s = out;
	size_t k = 0;
	for (char *nl; k < 3 + NBUSY && (nl = strchr(s, '\n')); s = nl + 1) {
		*nl = '\0';
		line[k++] = s;
	}
	if (k != 3 + NBUSY || *s || !*line[0] || !*line[1] || strlen(line[0]) >= sizeof(g->top) ||
	    strlen(line[1]) >= sizeof(g->index)) {
		free(out);
		return open_each(g, dir, err);
	}
	snprintf(g->top, sizeof(g->top), "%s", line[0]);
	snprintf(g->index, sizeof(g->index), "%s", line[1]);
	int rc = PL_OK;
	for (size_t i = 0; i < NBUSY && rc == PL_OK; i++)
		rc = refuse_busy(line[2 + i], i, err);
	free(out);
	return rc;
}

/* The temporaries (.perfloop/restore.PID) of reverts killed before they
 * could remove them: a restored symlink among them would otherwise make
 * every later state check refuse. Removed without following a link; a live
 * process's are left alone. */
void pl_git_sweep_scratch(const struct pl_git *g)
{
	char dir[4300];
	snprintf(dir, sizeof dir, "%s/.perfloop", g->top);
	struct stat st;
	if (lstat(dir, &st) != 0 || !S_ISDIR(st.st_mode))
		return;
	DIR *d = opendir(dir);
	if (!d)
		return;
	struct dirent *de;
	while ((de = readdir(d))) {
		long pid;
		char rest;
		if (sscanf(de->d_name, "restore.%ld%c", &pid, &rest) != 1 || pid <= 0 ||
		    pid == (long)getpid() || kill((pid_t)pid, 0) == 0 || errno != ESRCH)
			continue;
		char sub[4600];
		snprintf(sub, sizeof sub, "%s/%s", dir, de->d_name);
		nftw(sub, pl_git_rm_one, 16, FTW_DEPTH | FTW_PHYS);
	}
	closedir(d);
}

const char *pl_git_state_problem(const struct pl_git *g, char *why, size_t len)
{
	pl_git_sweep_scratch(g);
	return pl_fsio_state_problem(g->top, why, len);
}

int pl_perfloop_dir(const struct pl_git *g, char *out, size_t len, struct pl_error *err)
{
	snprintf(out, len, "%s/.perfloop", g->top);
	struct stat st;
	if (lstat(out, &st) == 0 && !S_ISDIR(st.st_mode))
		return pl_error_set(err, PL_EINPUT, "'%s' exists and is not a directory", out);
	if (mkdir(out, 0755) != 0 && errno != EEXIST)
		return pl_error_set(err, PL_EINPUT, "cannot create '%s': %s", out, strerror(errno));
	char why[600];
	if (pl_git_state_problem(g, why, sizeof why))
		return pl_error_set(err, PL_EINPUT, "%s", why);
	char ign[4300];
	snprintf(ign, sizeof(ign), "%s/.gitignore", out);
	if (stat(ign, &st) != 0)
		return pl_fsio_write_atomic(ign, "*\n", 2, err);
	return PL_OK;
}

int pl_git_index_file(const struct pl_git *g, char *out, size_t len, struct pl_error *err)
{
	const char *env = getenv("GIT_INDEX_FILE");
	if (env && *env) {
		if (env[0] == '/')
			snprintf(out, len, "%s", env);
		else
			snprintf(out, len, "%s/%s", g->top, env);
		return PL_OK;
	}
	if (g->index[0]) {
		snprintf(out, len, "%s", g->index);
		return PL_OK;
	}
	return git_path(g, "index", out, len, err);
}

/* ---- the checkpoint document, read ----------------------------------- */

/* An ignored path as git lists it (a directory ends in '/'), confined. */
static int ignored_ok(const char *p)
{
	size_t n = strlen(p);
	if (n == 0 || n >= 4096)
		return 0;
	char buf[4096];
	memcpy(buf, p, n + 1);
	if (buf[n - 1] == '/')
		buf[n - 1] = '\0';
	return pl_relpath_check(buf, 0) == NULL;
}

int pl_git_manifest_load(json_t *doc, const char *file, struct manifest *m, struct pl_error *err)
{
	memset(m, 0, sizeof(*m));
	json_t *a = json_object_get(doc, "entries");
	json_t *ign = json_object_get(doc, "ignored");
	if (!json_is_array(a) || !json_is_array(ign))
		return pl_error_set(err, PL_EINPUT, "%s: entries, ignored: expected arrays", file);
	m->taken_ns = json_integer_value(json_object_get(doc, "taken_ns"));
	size_t i;
	json_t *o;
	json_array_foreach(a, i, o)
	{
		char *p = get_path(o);
		const char *t = json_string_value(json_object_get(o, "type"));
		const char *oid = json_string_value(
		    json_object_get(o, json_object_get(o, "head") ? "head" : "blob"));
		int k = -1;
		for (int j = 0; t && j < 4; j++)
			if (strcmp(t, pl_git_kind_name[j]) == 0)
				k = j;
		if (!p || k < 0 || !oid) {
			free(p);
			pl_git_manifest_release(m);
			return pl_error_set(
			    err, PL_EINPUT,
			    "%s: entries[%zu]: path, type or blob missing or invalid", file, i);
		}
		/* a revert writes each path: none may leave the tree or reach
		 * into .git (hooks) */
		const char *why = pl_relpath_check(p, 0);
		if (why) {
			char *q = pl_git_quote(p);
			free(p);
			pl_git_manifest_release(m);
			pl_error_set(err, PL_EINPUT, "%s: entries[%zu].path: %s is %s; refused",
				     file, i, q ? q : "?", why);
			free(q);
			return PL_EINPUT;
		}
		struct entry *e =
		    pl_git_add_entry(m, p, strlen(p), json_is_true(json_object_get(o, "tracked")));
		free(p);
		if (!e) {
			pl_git_manifest_release(m);
			return PL_ENOMEM;
		}
		e->kind = (enum kind)k;
		e->leftover = json_is_true(json_object_get(o, "leftover"));
		e->unstored = json_is_false(json_object_get(o, "stored"));
		/* permission bits only: never set-user-ID from a file's word */
		e->mode = (unsigned)json_integer_value(json_object_get(o, "mode")) & 0777;
		snprintf(e->oid, sizeof(e->oid), "%s", oid);
		snprintf(e->state, sizeof(e->state), "%s",
			 json_string_value(json_object_get(o, "state")) ?: "");
		json_t *st = json_object_get(o, "stat");
		for (size_t s = 0; s < 4; s++)
			e->st[s] = json_integer_value(json_array_get(st, s));
		e->hashed = 1;
	}
	qsort(m->v, m->n, sizeof(*m->v), pl_git_cmp_entry);
	json_array_foreach(ign, i, o)
	{
		const char *p = json_string_value(o);
		if (p && ignored_ok(p) &&
		    pl_grow((void **)&m->ignored, &m->ignored_cap, m->nignored + 1, sizeof(char *),
			    16) == 0)
			m->ignored[m->nignored++] = strdup(p);
	}
	if (m->nignored)
		qsort(m->ignored, m->nignored, sizeof(char *), pl_git_cmp_str);
	return PL_OK;
}

/* ---- ignored paths --------------------------------------------------- */

int pl_git_rm_one(const char *p, const struct stat *st, int flag, struct FTW *f)
{
	(void)st;
	(void)f;
	return flag == FTW_DP ? rmdir(p) : unlink(p);
}

/* Mark in ignored[] the paths that the checkpoint's own .gitignore files
 * ignore. git judges ignores by the files in a work tree, and the change
 * may have edited or emptied them (then a .env made afterwards would count
 * as the change's), so they are rebuilt from the checkpoint's commit in a
 * scratch repository and asked there. Best effort: the rules of now and
 * the checkpoint's list of ignored paths still apply if this cannot run. */
static void ignored_at_checkpoint(const struct pl_git *g, const char *commit,
				  const struct pl_strbuf *in, char *const *paths, size_t n,
				  unsigned char *ignored)
{
	struct pl_error ignore;
	struct pl_gitrun ls = {.dir = g->top, .plain = 1};
	char *lsargs[] = {"ls-tree", "-r", "-z", "--full-tree", (char *)commit, NULL};
	if (pl_gitrunv(&ls, lsargs, &ignore) != PL_OK || !ls.outlen) {
		pl_gitrun_release(&ls);
		return;
	}
	const char *tmpdir = getenv("TMPDIR");
	char scratch[4200];
	snprintf(scratch, sizeof(scratch), "%s/perfloop-ignores.XXXXXX",
		 tmpdir && *tmpdir ? tmpdir : "/tmp");
	if (!mkdtemp(scratch)) {
		pl_gitrun_release(&ls);
		return;
	}
	struct pl_gitrun init = {.dir = scratch, .plain = 1};
	char *initargs[] = {"init", "-q", NULL};
	int ok = pl_gitrunv(&init, initargs, &ignore) == PL_OK;
	pl_gitrun_release(&init);
	size_t rules = 0;
	/* "mode type oid\tpath" */
	for (size_t k = 0; ok && k < ls.outlen;) {
		char *rec = ls.out + k;
		k += strlen(rec) + 1;
		char *tab = strchr(rec, '\t'), oid[72];
		const char *path = tab ? tab + 1 : "";
		const char *base = strrchr(path, '/');
		base = base ? base + 1 : path;
		if (!tab || strcmp(base, ".gitignore") != 0 || pl_relpath_check(path, 0) ||
		    sscanf(rec, "%*o blob %71s", oid) != 1)
			continue;
		struct pl_gitrun cat = {.dir = g->top, .plain = 1};
		char *catargs[] = {"cat-file", "blob", oid, NULL};
		char full[8400];
		snprintf(full, sizeof(full), "%s/%s", scratch, path);
		for (char *p = full + strlen(scratch) + 1; *p; p++)
			if (*p == '/') {
				*p = '\0';
				mkdir(full, 0700);
				*p = '/';
			}
		if (pl_gitrunv(&cat, catargs, &ignore) == PL_OK &&
		    pl_fsio_write_atomic(full, cat.out, cat.outlen, &ignore) == PL_OK)
			rules++;
		pl_gitrun_release(&cat);
	}
	pl_gitrun_release(&ls);
	if (ok && rules) {
		char *args[] = {"check-ignore", "-z", "--stdin", NULL};
		struct pl_gitrun r = {
		    .dir = scratch, .plain = 1, .in = in->s ? in->s : "", .inlen = in->len};
		pl_gitrunv(&r, args, &ignore);
		for (size_t k = 0; k < r.outlen;) {
			const char *p = r.out + k;
			k += strlen(p) + 1;
			for (size_t i = 0; i < n; i++)
				if (!ignored[i] && strcmp(paths[i], p) == 0)
					ignored[i] = 1;
		}
		pl_gitrun_release(&r);
	}
	nftw(scratch, pl_git_rm_one, 16, FTW_DEPTH | FTW_PHYS);
}

int pl_git_ignored(const struct pl_git *g, char *const *paths, size_t n, unsigned char *ignored,
		   struct pl_error *err)
{
	memset(ignored, 0, n);
	if (!n)
		return PL_OK;
	char cpath[4300];
	snprintf(cpath, sizeof(cpath), "%s/.perfloop/checkpoint.json", g->top);
	json_t *cp = NULL;
	struct manifest before = {0};
	struct pl_error ignore;
	char commit[72] = "";
	if (pl_json_load(cpath, &cp, &ignore) == PL_OK) {
		pl_git_manifest_load(cp, cpath, &before, &ignore);
		snprintf(commit, sizeof(commit), "%s",
			 json_string_value(json_object_get(cp, "commit")) ?: "");
	}
	json_decref(cp);
	struct pl_strbuf in = {0};
	for (size_t i = 0; i < n; i++)
		pl_strbuf_append(&in, paths[i], strlen(paths[i]) + 1);
	if (commit[0] && strspn(commit, "0123456789abcdef") == strlen(commit))
		ignored_at_checkpoint(g, commit, &in, paths, n, ignored);
	/* check-ignore exits 1 when nothing is ignored: not a failure */
	char *args[] = {"check-ignore", "-z", "--stdin", NULL}; /* a tracked path is not ignored */
	struct pl_gitrun r = {.dir = g->top, .plain = 1, .in = in.s ? in.s : "", .inlen = in.len};
	int rc = pl_gitrunv(&r, args, &ignore);
	if (rc != PL_OK && r.errtxt && r.errtxt[0]) {
		rc = pl_error_set(err, PL_ESYS, "%s", ignore.msg);
		goto out;
	}
	rc = PL_OK;
	for (size_t k = 0; k < r.outlen;) {
		const char *p = r.out + k;
		k += strlen(p) + 1;
		for (size_t i = 0; i < n; i++)
			if (!ignored[i] && strcmp(paths[i], p) == 0)
				ignored[i] = 1;
	}
	for (size_t i = 0; i < n; i++)
		if (pl_git_under_ignored(&before, paths[i]))
			ignored[i] = 1;
out:
	pl_gitrun_release(&r);
	free(pl_strbuf_take(&in));
	pl_git_manifest_release(&before);
	return rc;
}
