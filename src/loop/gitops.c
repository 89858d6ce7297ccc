/*
 * Checkpoint and revert (see gitops.h), by bytes.
 *
 * A checkpoint is a manifest of every path git would show the user: the
 * index's paths and the untracked, non-ignored ones. Each is recorded as
 * what it is on disk (a regular file with its exact mode, a symlink with
 * its target, a submodule or nested repository by its HEAD and a digest
 * of its status) with the id of a blob holding its bytes, hashed with
 * --no-filters so that no attribute or filter rewrites them. Names are
 * any bytes. The blobs are kept alive by a commit of those entries
 * (refs/perfloop/checkpoint), built in a private index; the user's index
 * file is copied as it was, and the ignored paths are listed so that a
 * change to .gitignore can neither hide nor expose a file. Nothing of the
 * user's is written: no index lock is taken, no stash is made.
 *
 * A revert takes the same manifest of the tree as it is now (kept as
 * refs/perfloop/reverted, so even the undone edits can be had back), merges
 * the two sorted lists, and for each path that differs writes the recorded
 * bytes back through real directories only, never through a symlink;
 * whatever is in the way (a directory where a file was) is moved under
 * .perfloop/displaced/, never deleted. Paths the change created are listed
 * and left. The index is put back whole under git's own lock, which is
 * taken before anything is written, so a busy index refuses the revert
 * with nothing changed. Linear in the paths after one sort.
 */
#include "gitops.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <ftw.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "fsio.h"
#include "gitrun.h"
#include "grow.h"
#include "hash.h"
#include "strbuf.h"

enum kind { K_FILE, K_LINK, K_REPO, K_OTHER };
static const char *const kind_name[] = {"file", "symlink", "repository", "other"};

struct entry {
	char *path;
	enum kind kind;
	unsigned mode;	 /* st_mode & 07777 for files */
	char oid[48];	 /* blob (file, symlink) or HEAD (repository) */
	char state[24];	 /* repository: digest of its status */
	long long st[4]; /* size, mtime ns, ctime ns, inode: the hash cache key */
	int tracked;
	int hashed; /* oid known */
	int leftover; /* created by a rejected turn and left in place: if the
		       * user deletes it, that is not a change to undo */
};

struct manifest {
	struct entry *v;
	size_t n, cap;
	char **ignored; /* sorted; directories end in '/' */
	size_t nignored, ignored_cap;
	long long taken_ns;
};

static void manifest_release(struct manifest *m)
{
	for (size_t i = 0; i < m->n; i++)
		free(m->v[i].path);
	free(m->v);
	for (size_t i = 0; i < m->nignored; i++)
		free(m->ignored[i]);
	free(m->ignored);
	memset(m, 0, sizeof(*m));
}

static int cmp_entry(const void *a, const void *b)
{
	return strcmp(((const struct entry *)a)->path, ((const struct entry *)b)->path);
}

static int cmp_str(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

static long long now_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_REALTIME, &ts);
	return (long long)ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

static struct entry *find_entry(const struct manifest *m, const char *path)
{
	struct entry key = {.path = (char *)path};
	return m->n ? bsearch(&key, m->v, m->n, sizeof(*m->v), cmp_entry) : NULL;
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
		int n = (*p & 0xe0) == 0xc0 ? 1 : (*p & 0xf0) == 0xe0 ? 2 : (*p & 0xf8) == 0xf0 ? 3 : -1;
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

static void set_path(json_t *o, const char *path);
static char *get_path(json_t *o);

json_t *pl_git_path_json(const char *path)
{
	json_t *s = json_string(path);
	if (s)
		return s;
	json_t *o = json_object();
	set_path(o, path);
	return o;
}

char *pl_git_path_of(json_t *v)
{
	if (json_is_string(v))
		return *json_string_value(v) ? strdup(json_string_value(v)) : NULL;
	return json_is_object(v) ? get_path(v) : NULL;
}

/* JSON strings must be UTF-8: other names are stored as hex. */
static void set_path(json_t *o, const char *path)
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
static int git_in(const struct pl_git *g, const char *index, const char *in, size_t inlen,
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

static int git(const struct pl_git *g, const char *index, char **out, size_t *len,
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
	return git_in(g, index, NULL, 0, out, len, err, args);
}

static void chomp(char *s)
{
	size_t n = strlen(s);
	while (n > 0 && (s[n - 1] == '\n' || s[n - 1] == '\r'))
		s[--n] = '\0';
}

static int git_path(const struct pl_git *g, const char *what, char *out, size_t len,
		    struct pl_error *err)
{
	char *p;
	int rc = git(g, NULL, &p, NULL, err, "rev-parse", "--path-format=absolute", "--git-path",
		     what, NULL);
	if (rc != PL_OK)
		return rc;
	chomp(p);
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
		return pl_error_set(err, PL_EINPUT,
				    "the repository is in the middle of %s: finish or abort it first",
				    busy[i][1]);
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
	if (git(g, NULL, &top, NULL, &ignore, "rev-parse", "--show-toplevel", NULL) != PL_OK)
		return pl_error_set(err, PL_EINPUT, "'%s' is not inside a git work tree", dir);
	chomp(top);
	snprintf(g->top, sizeof(g->top), "%s", top);
	free(top);
	if (git(g, NULL, NULL, NULL, &ignore, "rev-parse", "--verify", "-q", "HEAD", NULL) !=
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
	if (git_in(g, NULL, NULL, 0, &out, NULL, &ignore, (char *const *)args) != PL_OK)
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

int pl_perfloop_dir(const struct pl_git *g, char *out, size_t len, struct pl_error *err)
{
	snprintf(out, len, "%s/.perfloop", g->top);
	struct stat st;
	if (lstat(out, &st) == 0 && !S_ISDIR(st.st_mode))
		return pl_error_set(err, PL_EINPUT, "'%s' exists and is not a directory", out);
	if (mkdir(out, 0755) != 0 && errno != EEXIST)
		return pl_error_set(err, PL_EINPUT, "cannot create '%s': %s", out, strerror(errno));
	char ign[4300];
	snprintf(ign, sizeof(ign), "%s/.gitignore", out);
	if (stat(ign, &st) != 0)
		return pl_fsio_write_atomic(ign, "*\n", 2, err);
	return PL_OK;
}

/* ---- reading the tree -------------------------------------------------- */

/* Is every directory above path (relative to top) a real directory, not a
 * symlink? last caches the deepest prefix already checked. */
static int parents_real(const char *top, const char *path, char *last, size_t lastlen)
{
	const char *slash = strrchr(path, '/');
	if (!slash)
		return 1;
	size_t dl = (size_t)(slash - path);
	if (dl < lastlen && strncmp(last, path, dl) == 0 && last[dl] == '\0')
		return 1;
	char full[8300];
	int tl = snprintf(full, sizeof(full), "%s/", top);
	for (size_t i = 0; i <= dl && (size_t)tl + i < sizeof(full) - 1; i++) {
		if (i == dl || path[i] == '/') {
			full[tl + i] = '\0';
			struct stat st;
			if (lstat(full, &st) != 0 || !S_ISDIR(st.st_mode))
				return 0;
		}
		full[tl + i] = path[i];
	}
	if (dl < lastlen) {
		memcpy(last, path, dl);
		last[dl] = '\0';
	}
	return 1;
}

static struct entry *add_entry(struct manifest *m, const char *path, size_t len, int tracked)
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

/* A submodule's or nested repository's state: its HEAD and a digest of its
 * `git status`, so that any edit inside it is seen. */
static void repo_state(const struct pl_git *g, struct entry *e)
{
	struct pl_git sub;
	sub.index[0] = '\0';
	if ((size_t)snprintf(sub.top, sizeof(sub.top), "%s/%s", g->top, e->path) >=
	    sizeof(sub.top)) {
		snprintf(e->oid, sizeof(e->oid), "path-too-long");
		return;
	}
	char gitp[8400];
	snprintf(gitp, sizeof(gitp), "%s/.git", sub.top);
	struct stat st;
	if (lstat(gitp, &st) != 0) {
		snprintf(e->oid, sizeof(e->oid), "uninitialized");
		return;
	}
	pl_git_head_of(sub.top, e->oid, sizeof(e->oid));
	if (!e->oid[0])
		snprintf(e->oid, sizeof(e->oid), "no-commit");
	char *out = NULL;
	size_t len = 0;
	struct pl_error ignore;
	uint64_t h = 0;
	if (git(&sub, NULL, &out, &len, &ignore, "status", "--porcelain=v1", "-z",
		"--untracked-files=all", NULL) == PL_OK)
		h = pl_fnv1a_bytes(PL_FNV_INIT, out, len);
	free(out);
	snprintf(e->state, sizeof(e->state), "%016llx", (unsigned long long)h);
}

/* A --stdin-paths line: quoted as git unquotes it when a plain line would
 * not survive (a newline in the name, or a leading quote). */
static void stdin_path(struct pl_strbuf *b, const char *p)
{
	if (!strchr(p, '\n') && p[0] != '"') {
		pl_strbuf_puts(b, p);
		pl_strbuf_puts(b, "\n");
		return;
	}
	pl_strbuf_puts(b, "\"");
	for (const unsigned char *c = (const unsigned char *)p; *c; c++) {
		if (*c == '"' || *c == '\\')
			pl_strbuf_printf(b, "\\%c", *c);
		else if (*c == '\n')
			pl_strbuf_puts(b, "\\n");
		else
			pl_strbuf_append(b, c, 1);
	}
	pl_strbuf_puts(b, "\"\n");
}

/* Hash (and store) the bytes of every entry not known yet: files by path,
 * symlinks by their target written to a scratch file. */
static int hash_entries(const struct pl_git *g, struct manifest *m, struct pl_error *err)
{
	char scratch[4300];
	snprintf(scratch, sizeof(scratch), "%s/.perfloop/links.%ld", g->top, (long)getpid());
	struct pl_strbuf in = {0};
	size_t *which = calloc(m->n + 1, sizeof(size_t));
	size_t nw = 0, nlinks = 0;
	int rc = which ? PL_OK : PL_ENOMEM;
	for (size_t i = 0; rc == PL_OK && i < m->n; i++) {
		struct entry *e = &m->v[i];
		if (e->hashed || (e->kind != K_FILE && e->kind != K_LINK))
			continue;
		if (e->kind == K_LINK) {
			char full[8300], target[4097];
			snprintf(full, sizeof(full), "%s/%s", g->top, e->path);
			ssize_t n = readlink(full, target, sizeof(target) - 1);
			if (n < 0) {
				rc = pl_error_set(err, PL_EINPUT, "cannot read the symlink '%s': %s",
						  e->path, strerror(errno));
				break;
			}
			if (nlinks == 0 && mkdir(scratch, 0700) != 0 && errno != EEXIST) {
				rc = pl_error_set(err, PL_ESYS, "cannot create '%s': %s", scratch,
						  strerror(errno));
				break;
			}
			char lp[4400];
			snprintf(lp, sizeof(lp), "%s/%zu", scratch, nlinks++);
			if ((rc = pl_fsio_write_atomic(lp, target, (size_t)n, err)) != PL_OK)
				break;
			char rel[4400];
			snprintf(rel, sizeof(rel), ".perfloop/links.%ld/%zu", (long)getpid(),
				 nlinks - 1);
			stdin_path(&in, rel);
		} else {
			stdin_path(&in, e->path);
		}
		which[nw++] = i;
	}
	if (rc == PL_OK && nw) {
		char *args[] = {"hash-object", "-w", "--no-filters", "--stdin-paths", NULL};
		char *out = NULL;
		size_t len = 0;
		rc = git_in(g, NULL, in.s, in.len, &out, &len, err, args);
		char *save = NULL, *tok = rc == PL_OK ? strtok_r(out, "\n", &save) : NULL;
		size_t k = 0;
		for (; tok && k < nw; tok = strtok_r(NULL, "\n", &save), k++) {
			snprintf(m->v[which[k]].oid, sizeof(m->v[which[k]].oid), "%s", tok);
			m->v[which[k]].hashed = 1;
		}
		if (rc == PL_OK && k != nw)
			rc = pl_error_set(err, PL_ESYS, "git hash-object gave %zu ids for %zu paths",
					  k, nw);
		free(out);
	}
	for (size_t i = 0; i < nlinks; i++) {
		char lp[4400];
		snprintf(lp, sizeof(lp), "%s/%zu", scratch, i);
		unlink(lp);
	}
	if (nlinks)
		rmdir(scratch);
	free(which);
	free(pl_strbuf_take(&in));
	return rc;
}

/* Reuse a cached id when the file's stat is as cached and the cache was
 * taken well after the file last changed (a change within the same clock
 * tick could otherwise hide behind an equal stat). */
static void use_cache(struct entry *e, const struct manifest *cache)
{
	if (!cache || e->kind != K_FILE)
		return;
	const struct entry *c = find_entry(cache, e->path);
	if (!c || c->kind != K_FILE || !c->hashed || memcmp(c->st, e->st, sizeof(e->st)) != 0)
		return;
	const long long tick = 2000000000LL;
	if (e->st[1] + tick > cache->taken_ns || e->st[2] + tick > cache->taken_ns)
		return;
	memcpy(e->oid, c->oid, sizeof(e->oid));
	e->hashed = 1;
}

/* Under a path the checkpoint recorded as ignored (a file, or a directory
 * ending in '/')? */
static int under_ignored(const struct manifest *m, const char *path)
{
	if (!m->nignored)
		return 0;
	char buf[4200];
	size_t n = strlen(path);
	if (n >= sizeof(buf) - 1)
		return 0;
	memcpy(buf, path, n + 1);
	const char *key = buf;
	if (bsearch(&key, m->ignored, m->nignored, sizeof(char *), cmp_str))
		return 1;
	for (size_t i = 1; i <= n; i++)
		if (path[i - 1] == '/') {
			char c = buf[i];
			buf[i] = '\0';
			int hit = bsearch(&key, m->ignored, m->nignored, sizeof(char *), cmp_str) != NULL;
			buf[i] = c;
			if (hit)
				return 1;
		}
	return 0;
}

/* Add the files at or under `path` (ignored now, not at the checkpoint
 * `before`) that the checkpoint did not ignore, unless m has them. */
static int add_newly_ignored(const struct pl_git *g, const struct manifest *before,
			     struct manifest *m, size_t nsorted, const char *path,
			     struct pl_error *err)
{
	char *out = NULL;
	size_t len = 0;
	int rc = git(g, NULL, &out, &len, err, "ls-files", "-z", "--others", "--", path, NULL);
	for (size_t k = 0; rc == PL_OK && k < len;) {
		const char *p = out + k;
		size_t pl = strlen(p);
		k += pl + 1;
		if (!pl || under_ignored(before, p))
			continue;
		/* m's first nsorted entries are sorted; the others, added here,
		 * come from ignored entries that do not overlap */
		struct manifest sorted = {.v = m->v, .n = nsorted};
		char *name = strndup(p, p[pl - 1] == '/' ? pl - 1 : pl);
		int dup = !name || find_entry(&sorted, name);
		free(name);
		if (dup)
			continue;
		struct entry *e = add_entry(m, p, p[pl - 1] == '/' ? pl - 1 : pl, 0);
		if (!e)
			rc = PL_ENOMEM;
		else if (p[pl - 1] == '/')
			e->kind = K_REPO;
	}
	free(out);
	return rc;
}

/*
 * The manifest of the tree now, as git's index `index` (a path) sees it.
 * strict: refuse what cannot be recorded (checkpoint); otherwise record it
 * as K_OTHER, which differs from anything (revert). extra: paths to look at
 * even when git no longer lists them (the checkpoint's, for a revert).
 */
static int take_manifest(const struct pl_git *g, const char *index, int strict,
			 const struct manifest *cache, const struct manifest *extra,
			 struct manifest *m, struct pl_error *err)
{
	memset(m, 0, sizeof(*m));
	m->taken_ns = now_ns();
	char *staged = NULL, *others = NULL, *ign = NULL;
	size_t slen = 0, olen = 0, ilen = 0;
	int rc;
	if ((rc = git(g, index, &staged, &slen, err, "ls-files", "-z", "-s", NULL)) != PL_OK ||
	    (rc = git(g, index, &others, &olen, err, "ls-files", "-z", "--others",
		      "--exclude-standard", NULL)) != PL_OK ||
	    (rc = git(g, index, &ign, &ilen, err, "ls-files", "-z", "--others", "--ignored",
		      "--exclude-standard", "--directory", NULL)) != PL_OK)
		goto out;
	/* index entries: "mode oid stage\tpath" */
	for (size_t i = 0; i < slen;) {
		char *rec = staged + i;
		size_t rl = strlen(rec);
		i += rl + 1;
		char *tab = strchr(rec, '\t');
		unsigned mode = 0;
		int stage = 0;
		if (!tab || sscanf(rec, "%o %*s %d", &mode, &stage) != 2)
			continue;
		const char *path = tab + 1;
		if (strncmp(path, ".perfloop/", 10) == 0)
			continue; /* perfloop's own state, even committed, is not the tree's */
		if (stage != 0) {
			if (m->n && strcmp(m->v[m->n - 1].path, path) == 0)
				continue;
			rc = pl_error_set(err, PL_EINPUT,
					  "'%s' has an unresolved conflict in the index: resolve it "
					  "first",
					  path);
			goto out;
		}
		struct entry *e = add_entry(m, path, strlen(path), 1);
		if (!e) {
			rc = PL_ENOMEM;
			goto out;
		}
		if (mode == 0160000)
			e->kind = K_REPO;
	}
	for (size_t i = 0; i < olen;) {
		char *p = others + i;
		size_t pl = strlen(p);
		i += pl + 1;
		if (!pl || strncmp(p, ".perfloop/", 10) == 0)
			continue;
		struct entry *e = add_entry(m, p, p[pl - 1] == '/' ? pl - 1 : pl, 0);
		if (!e) {
			rc = PL_ENOMEM;
			goto out;
		}
		if (p[pl - 1] == '/')
			e->kind = K_REPO;
	}
	qsort(m->v, m->n, sizeof(*m->v), cmp_entry);
	/* room for all first: the sorted part is searched while m grows */
	if (extra && pl_grow((void **)&m->v, &m->cap, m->n + extra->n + 1, sizeof *m->v, 64) != 0) {
		rc = PL_ENOMEM;
		goto out;
	}
	struct manifest listed = *m;
	for (size_t i = 0; extra && i < extra->n; i++)
		if (!find_entry(&listed, extra->v[i].path)) {
			struct entry *e =
			    add_entry(m, extra->v[i].path, strlen(extra->v[i].path), 0);
			if (!e) {
				rc = PL_ENOMEM;
				goto out;
			}
			e->kind = extra->v[i].kind == K_REPO ? K_REPO : K_FILE;
		}
	qsort(m->v, m->n, sizeof(*m->v), cmp_entry);
	for (size_t i = 0; i < ilen;) {
		char *p = ign + i;
		i += strlen(p) + 1;
		if (*p && strncmp(p, ".perfloop/", 10) != 0 &&
		    pl_grow((void **)&m->ignored, &m->ignored_cap, m->nignored + 1, sizeof(char *), 16) == 0)
			m->ignored[m->nignored++] = strdup(p);
	}
	if (m->nignored)
		qsort(m->ignored, m->nignored, sizeof(char *), cmp_str);
	/* a revert: paths ignored now but not at the checkpoint (the change
	 * edited .gitignore) are the change's like any other */
	size_t nsorted = m->n;
	for (size_t i = 0; extra && rc == PL_OK && i < m->nignored; i++)
		if (!under_ignored(extra, m->ignored[i]))
			rc = add_newly_ignored(g, extra, m, nsorted, m->ignored[i], err);
	if (rc != PL_OK)
		goto out;
	qsort(m->v, m->n, sizeof(*m->v), cmp_entry);

	/* what each path is on disk; absent ones drop out */
	char last[4096] = "";
	size_t keep = 0;
	for (size_t i = 0; i < m->n; i++) {
		struct entry *e = &m->v[i];
		char full[8300];
		snprintf(full, sizeof(full), "%s/%s", g->top, e->path);
		struct stat st;
		int was_repo = e->kind == K_REPO;
		if (!parents_real(g->top, e->path, last, sizeof(last)) || lstat(full, &st) != 0) {
			free(e->path);
			continue;
		}
		e->st[0] = (long long)st.st_size;
		e->st[1] = (long long)st.st_mtim.tv_sec * 1000000000LL + st.st_mtim.tv_nsec;
		e->st[2] = (long long)st.st_ctim.tv_sec * 1000000000LL + st.st_ctim.tv_nsec;
		e->st[3] = (long long)st.st_ino;
		if (S_ISREG(st.st_mode)) {
			e->kind = K_FILE;
			e->mode = st.st_mode & 0777;
			use_cache(e, cache);
		} else if (S_ISLNK(st.st_mode)) {
			e->kind = K_LINK;
			e->mode = 0;
		} else if (S_ISDIR(st.st_mode) && was_repo) {
			e->kind = K_REPO;
			repo_state(g, e);
		} else if (S_ISDIR(st.st_mode)) {
			/* a tracked file replaced by a directory: git lists its
			 * contents as untracked paths of their own */
			free(e->path);
			continue;
		} else if (strict) {
			rc = pl_error_set(err, PL_EINPUT,
					  "cannot record '%s': not a file, symlink or directory (a "
					  "FIFO, socket or device); move it out of the tree or ignore "
					  "it in .gitignore",
					  e->path);
			for (size_t k = i; k < m->n; k++)
				m->v[keep++] = m->v[k];
			goto out;
		} else {
			e->kind = K_OTHER;
			snprintf(e->oid, sizeof(e->oid), "other");
			e->hashed = 1;
		}
		m->v[keep++] = *e;
	}
	m->n = keep;
	rc = hash_entries(g, m, err);
out:
	free(staged);
	free(others);
	free(ign);
	return rc;
}

/* ---- the checkpoint document -------------------------------------------- */

static json_t *manifest_json(const struct manifest *m)
{
	json_t *a = json_array();
	for (size_t i = 0; i < m->n; i++) {
		const struct entry *e = &m->v[i];
		json_t *o = json_object();
		set_path(o, e->path);
		json_object_set_new(o, "type", json_string(kind_name[e->kind]));
		json_object_set_new(o, "tracked", json_boolean(e->tracked));
		if (e->kind == K_FILE)
			json_object_set_new(o, "mode", json_integer(e->mode));
		json_object_set_new(o, e->kind == K_REPO ? "head" : "blob", json_string(e->oid));
		if (e->kind == K_REPO)
			json_object_set_new(o, "state", json_string(e->state));
		json_object_set_new(o, "stat",
				    json_pack("[I,I,I,I]", e->st[0], e->st[1], e->st[2], e->st[3]));
		if (e->leftover)
			json_object_set_new(o, "leftover", json_true());
		json_array_append_new(a, o);
	}
	return a;
}

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

static int manifest_load(json_t *doc, const char *file, struct manifest *m,
			 struct pl_error *err)
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
			if (strcmp(t, kind_name[j]) == 0)
				k = j;
		if (!p || k < 0 || !oid) {
			free(p);
			manifest_release(m);
			return pl_error_set(err, PL_EINPUT,
					    "%s: entries[%zu]: path, type or blob missing or invalid",
					    file, i);
		}
		/* a revert writes each path: none may leave the tree or reach
		 * into .git (hooks) */
		const char *why = pl_relpath_check(p, 0);
		if (why) {
			char *q = pl_git_quote(p);
			free(p);
			manifest_release(m);
			pl_error_set(err, PL_EINPUT, "%s: entries[%zu].path: %s is %s; refused", file,
				     i, q ? q : "?", why);
			free(q);
			return PL_EINPUT;
		}
		struct entry *e = add_entry(m, p, strlen(p), json_is_true(json_object_get(o, "tracked")));
		free(p);
		if (!e) {
			manifest_release(m);
			return PL_ENOMEM;
		}
		e->kind = (enum kind)k;
		e->leftover = json_is_true(json_object_get(o, "leftover"));
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
	qsort(m->v, m->n, sizeof(*m->v), cmp_entry);
	json_array_foreach(ign, i, o)
	{
		const char *p = json_string_value(o);
		if (p && ignored_ok(p) && pl_grow((void **)&m->ignored, &m->ignored_cap, m->nignored + 1, sizeof(char *), 16) == 0)
			m->ignored[m->nignored++] = strdup(p);
	}
	if (m->nignored)
		qsort(m->ignored, m->nignored, sizeof(char *), cmp_str);
	return PL_OK;
}

/* A commit of the manifest's entries, built in a private index, so that
 * the blobs stay reachable (and a person can `git show` them). */
static int manifest_commit(const struct pl_git *g, const struct manifest *m, const char *msg,
			   char *commit, size_t clen, struct pl_error *err)
{
	char idx[4300];
	snprintf(idx, sizeof(idx), "%s/.perfloop/snapshot.index.%ld", g->top, (long)getpid());
	unlink(idx);
	struct pl_strbuf in = {0};
	for (size_t i = 0; i < m->n; i++) {
		const struct entry *e = &m->v[i];
		const char *mode = e->kind == K_LINK		 ? "120000"
				   : e->kind == K_REPO		 ? "160000"
				   : e->kind == K_FILE && (e->mode & 0100) ? "100755"
									 : "100644";
		if (e->kind == K_OTHER ||
		    (e->kind == K_REPO && (strlen(e->oid) < 40 || !strchr("0123456789abcdef", e->oid[0]))))
			continue;
		pl_strbuf_printf(&in, "%s %s\t", mode, e->oid);
		pl_strbuf_append(&in, e->path, strlen(e->path) + 1);
	}
	char *tree = NULL, *c = NULL;
	char *ua[] = {"update-index", "-z", "--add", "--index-info", NULL};
	int rc = git_in(g, idx, in.s, in.len, NULL, NULL, err, ua);
	free(pl_strbuf_take(&in));
	if (rc == PL_OK)
		rc = git(g, idx, &tree, NULL, err, "write-tree", NULL);
	unlink(idx);
	if (rc != PL_OK)
		goto out;
	chomp(tree);
	char *ca[] = {"commit-tree", tree, "-p", "HEAD", "-m", (char *)msg, NULL};
	/* commit-tree needs an identity; a repository without one still gets
	 * its checkpoint */
	char *env_ca[] = {"-c", "user.name=perfloop", "-c", "user.email=perfloop@localhost",
			  "commit-tree", tree, "-p", "HEAD", "-m", (char *)msg, NULL};
	struct pl_error ignore;
	rc = git_in(g, NULL, NULL, 0, &c, NULL, &ignore, ca);
	if (rc != PL_OK) {
		free(c);
		c = NULL;
		rc = git_in(g, NULL, NULL, 0, &c, NULL, err, env_ca);
	}
	if (rc != PL_OK)
		goto out;
	chomp(c);
	snprintf(commit, clen, "%s", c);
out:
	free(tree);
	free(c);
	return rc;
}

static int index_file(const struct pl_git *g, char *out, size_t len, struct pl_error *err)
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

/* Files a rejected turn created and left in place, as told: new ones
 * (leftovers), and those of earlier checkpoints still there unchanged. */
static void mark_leftovers(struct manifest *m, const struct manifest *prev,
			   const char *const *leftovers, size_t n)
{
	for (size_t i = 0; i < m->n; i++) {
		struct entry *e = &m->v[i];
		const struct entry *p = find_entry(prev, e->path);
		e->leftover = p && p->leftover && !strcmp(p->oid, e->oid);
		for (size_t k = 0; k < n && !e->leftover; k++)
			e->leftover = !strcmp(leftovers[k], e->path);
	}
}

int pl_checkpoint_create(const struct pl_git *g, json_t **out, struct pl_error *err)
{
	return pl_checkpoint_create_ex(g, NULL, 0, out, err);
}

int pl_checkpoint_create_ex(const struct pl_git *g, const char *const *leftovers, size_t nleft,
			    json_t **out, struct pl_error *err)
{
	*out = NULL;
	char dir[4200];
	int rc = pl_perfloop_dir(g, dir, sizeof(dir), err);
	if (rc != PL_OK)
		return rc;
	char *split = NULL;
	struct pl_error ignore;
	if (git(g, NULL, &split, NULL, &ignore, "config", "--bool", "core.splitIndex", NULL) ==
		PL_OK &&
	    strncmp(split, "true", 4) == 0) {
		free(split);
		return pl_error_set(err, PL_EINPUT,
				    "core.splitIndex is on: perfloop cannot copy a split index "
				    "exactly ('git config core.splitIndex false' turns it off)");
	}
	free(split);
	char head[64];
	pl_git_head_of(g->top, head, sizeof(head));
	/* the index as it is now, copied once: every listing reads the copy, so
	 * an editor's git rewriting the index meanwhile cannot split the view */
	char idx[4200], copy[4300], tmpcopy[4400];
	if ((rc = index_file(g, idx, sizeof(idx), err)) != PL_OK)
		return rc;
	snprintf(copy, sizeof(copy), "%s/checkpoint.gitindex", dir);
	snprintf(tmpcopy, sizeof(tmpcopy), "%s/checkpoint.gitindex.new", dir);
	size_t dlen = 0;
	int missing;
	char *data = pl_fsio_read(idx, &dlen, &missing);
	int have_index = data != NULL;
	if (!have_index && !missing)
		return pl_error_set(err, PL_EINPUT, "cannot read git's index '%s': %s", idx,
				    strerror(errno));
	if (have_index) {
		rc = pl_fsio_write_atomic(tmpcopy, data, dlen, err);
		free(data);
		if (rc != PL_OK)
			return rc;
	}
	/* the previous checkpoint's ids, for files whose stat is unchanged */
	char path[4300];
	snprintf(path, sizeof(path), "%s/checkpoint.json", dir);
	struct manifest cache = {0}, m = {0};
	json_t *prev = NULL;
	struct stat st;
	if (stat(path, &st) == 0 && pl_json_load(path, &prev, &ignore) == PL_OK &&
	    manifest_load(prev, path, &cache, &ignore) != PL_OK)
		memset(&cache, 0, sizeof(cache));
	json_decref(prev);
	json_t *doc = NULL;
	char commit[64] = "";
	if ((rc = take_manifest(g, have_index ? tmpcopy : NULL, 1, &cache, NULL, &m, err)) !=
	    PL_OK)
		goto out;
	mark_leftovers(&m, &cache, leftovers, nleft);
	if ((rc = manifest_commit(g, &m, "perfloop checkpoint", commit, sizeof(commit), err)) !=
	    PL_OK)
		goto out;
	if ((rc = git(g, NULL, NULL, NULL, err, "update-ref", "--create-reflog", "-m",
		      "perfloop checkpoint",
		      "refs/perfloop/checkpoint", commit, NULL)) != PL_OK)
		goto out;
	char created[32];
	time_t t = time(NULL);
	struct tm tm;
	gmtime_r(&t, &tm);
	strftime(created, sizeof(created), "%Y-%m-%dT%H:%M:%SZ", &tm);
	json_t *ignored = json_array();
	for (size_t i = 0; i < m.nignored; i++) {
		json_t *s = json_string(m.ignored[i]);
		if (s)
			json_array_append_new(ignored, s);
	}
	size_t ntracked = 0;
	for (size_t i = 0; i < m.n; i++)
		ntracked += m.v[i].tracked;
	doc = json_pack("{s:s, s:s, s:I, s:s, s:s, s:b, s:I, s:I, s:o, s:o}", "schema",
			PL_CHECKPOINT_SCHEMA, "created", created, "taken_ns", m.taken_ns, "head",
			head, "commit", commit, "index_saved", have_index, "tracked",
			(json_int_t)ntracked, "untracked", (json_int_t)(m.n - ntracked), "entries",
			manifest_json(&m), "ignored", ignored);
	if (!doc) {
		rc = PL_ENOMEM;
		goto out;
	}
	/* the index copy first, the document that refers to it last */
	if (have_index && rename(tmpcopy, copy) != 0) {
		rc = pl_error_set(err, PL_ESYS, "cannot write '%s': %s", copy, strerror(errno));
		goto out;
	}
	if (!have_index)
		unlink(copy);
	if ((rc = pl_fsio_write_json(path, doc, err)) != PL_OK)
		goto out;
	*out = doc;
	doc = NULL;
out:
	unlink(tmpcopy);
	json_decref(doc);
	manifest_release(&m);
	manifest_release(&cache);
	return rc;
}

/* ---- revert ----------------------------------------------------------- */

static int same(const struct entry *a, const struct entry *b)
{
	if (a->kind != b->kind || strcmp(a->oid, b->oid) != 0)
		return 0;
	if (a->kind == K_FILE)
		return a->mode == b->mode;
	if (a->kind == K_REPO)
		return strcmp(a->state, b->state) == 0;
	return 1;
}

static int push(char ***v, size_t *n, const char *s)
{
	char **nv = realloc(*v, (*n + 1) * sizeof(char *));
	if (!nv)
		return PL_ENOMEM;
	*v = nv;
	if (!(nv[*n] = strdup(s)))
		return PL_ENOMEM;
	(*n)++;
	return PL_OK;
}

struct restorer {
	const struct pl_git *g;
	char displaced[4300]; /* .perfloop/displaced/STAMP, made on first use */
	struct pl_revert_result *res;
	struct pl_error *err;
	char **moved; /* the paths displaced, raw */
	size_t nmoved;
	char scratch[4300]; /* .perfloop/restore.PID: the temporaries, made on first use */
	unsigned ntmp;
};

/* Move what is at rel (relative to top) under .perfloop/displaced/. */
static int displace(struct restorer *r, const char *rel)
{
	const struct pl_git *g = r->g;
	if (!r->displaced[0]) {
		char stamp[32];
		time_t t = time(NULL);
		struct tm tm;
		gmtime_r(&t, &tm);
		strftime(stamp, sizeof(stamp), "%Y%m%dT%H%M%SZ", &tm);
		snprintf(r->displaced, sizeof(r->displaced), ".perfloop/displaced/%s-%ld", stamp,
			 (long)getpid());
	}
	char dst[8600], src[8300];
	snprintf(src, sizeof(src), "%s/%s", g->top, rel);
	snprintf(dst, sizeof(dst), "%s/%s/%s", g->top, r->displaced, rel);
	/* the destination's directories */
	for (char *p = dst + strlen(g->top) + 1; *p; p++)
		if (*p == '/') {
			*p = '\0';
			if (mkdir(dst, 0700) != 0 && errno != EEXIST) {
				int e = errno;
				*p = '/';
				return pl_error_set(r->err, PL_ESYS, "cannot create '%s': %s", dst,
						    strerror(e));
			}
			*p = '/';
		}
	if (rename(src, dst) != 0)
		return pl_error_set(r->err, PL_ESYS, "cannot move '%s' aside: %s", rel,
				    strerror(errno));
	if (push(&r->moved, &r->nmoved, rel) != PL_OK)
		return PL_ENOMEM;
	char line[8800];
	char *q = pl_git_quote(rel);
	snprintf(line, sizeof(line), "%s -> %s/%s", q ? q : rel, r->displaced, q ? q : rel);
	free(q);
	return push(&r->res->displaced, &r->res->ndisplaced, line);
}

/* Make every directory above rel a real directory, moving aside a file or
 * symlink that stands where one must be. Never follows a symlink. */
static int make_parents(struct restorer *r, const char *rel)
{
	char full[8300];
	int tl = snprintf(full, sizeof(full), "%s/", r->g->top);
	size_t n = strlen(rel);
	for (size_t i = 0; i < n; i++) {
		if (rel[i] != '/') {
			full[tl + i] = rel[i];
			continue;
		}
		full[tl + i] = '\0';
		struct stat st;
		if (lstat(full, &st) == 0 && !S_ISDIR(st.st_mode)) {
			int rc = displace(r, full + tl);
			if (rc != PL_OK)
				return rc;
		}
		if (lstat(full, &st) != 0 && mkdir(full, 0755) != 0)
			return pl_error_set(r->err, PL_ESYS, "cannot create '%s': %s", full + tl,
					    strerror(errno));
		full[tl + i] = '/';
	}
	return PL_OK;
}

/* An entry's content (a file with its mode, or a symlink) at tmp. */
static int write_tmp(struct restorer *r, const struct entry *e, const char *data, size_t len,
		     const char *tmp)
{
	if (e->kind == K_LINK) {
		char *target = strndup(data, len);
		if (!target)
			return PL_ENOMEM;
		int ok = symlink(target, tmp) == 0;
		free(target);
		if (!ok)
			return pl_error_set(r->err, PL_ESYS, "cannot restore the symlink '%s': %s",
					    e->path, strerror(errno));
		return PL_OK;
	}
	int fd = open(tmp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
	if (fd < 0)
		return pl_error_set(r->err, PL_ESYS, "cannot restore '%s': %s", e->path,
				    strerror(errno));
	if (pl_fsio_write_all(fd, data, len) != 0 || fchmod(fd, e->mode) != 0 || close(fd) != 0) {
		int er = errno;
		close(fd);
		unlink(tmp);
		return pl_error_set(r->err, PL_ESYS, "cannot restore '%s': %s", e->path,
				    strerror(er));
	}
	return PL_OK;
}

static int rm_one(const char *p, const struct stat *st, int flag, struct FTW *f);

/* The temporaries of reverts killed before they could remove them. */
static void sweep_scratch(const struct pl_git *g)
{
	char dir[4300];
	snprintf(dir, sizeof dir, "%s/.perfloop", g->top);
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
		nftw(sub, rm_one, 16, FTW_DEPTH | FTW_PHYS);
	}
	closedir(d);
}

static int restore_one(struct restorer *r, const struct entry *e, const char *data, size_t len)
{
	int rc = make_parents(r, e->path);
	if (rc != PL_OK)
		return rc;
	char full[8300], tmp[8400];
	snprintf(full, sizeof(full), "%s/%s", r->g->top, e->path);
	struct stat st;
	if (lstat(full, &st) == 0 && S_ISDIR(st.st_mode) && (rc = displace(r, e->path)) != PL_OK)
		return rc;
	/* the temporary is made in .perfloop/, not beside the file: a revert
	 * killed between the write and the rename leaves nothing in the
	 * user's tree (the next revert saw it as a file the change made) */
	if (!r->scratch[0]) {
		snprintf(r->scratch, sizeof(r->scratch), "%s/.perfloop/restore.%ld", r->g->top,
			 (long)getpid());
		if (mkdir(r->scratch, 0700) != 0 && errno != EEXIST)
			r->scratch[0] = '\0';
	}
	int beside = !r->scratch[0];
	for (;;) {
		if (beside)
			snprintf(tmp, sizeof(tmp), "%s.perfloop-%ld", full, (long)getpid());
		else
			snprintf(tmp, sizeof(tmp), "%s/%u", r->scratch, r->ntmp++);
		unlink(tmp);
		if ((rc = write_tmp(r, e, data, len, tmp)) != PL_OK)
			return rc;
		if (rename(tmp, full) == 0)
			break;
		int er = errno;
		unlink(tmp);
		if (er == EXDEV && !beside) { /* a mount point inside the tree */
			beside = 1;
			continue;
		}
		return pl_error_set(r->err, PL_ESYS, "cannot restore '%s': %s", e->path,
				    strerror(er));
	}
	return PL_OK;
}

/* The blobs' bytes, in one `git cat-file --batch`. */
static int read_blobs(const struct pl_git *g, const struct entry *const *want, size_t n,
		      char **buf, size_t *buflen, size_t *off, size_t *len, struct pl_error *err)
{
	struct pl_strbuf in = {0};
	for (size_t i = 0; i < n; i++) {
		pl_strbuf_puts(&in, want[i]->oid);
		pl_strbuf_puts(&in, "\n");
	}
	char *args[] = {"cat-file", "--batch", NULL};
	int rc = git_in(g, NULL, in.s, in.len, buf, buflen, err, args);
	free(pl_strbuf_take(&in));
	if (rc != PL_OK)
		return rc;
	size_t pos = 0;
	for (size_t i = 0; i < n; i++) {
		char *nl = memchr(*buf + pos, '\n', *buflen - pos);
		unsigned long long size;
		char type[16];
		if (!nl || sscanf(*buf + pos, "%*s %15s %llu", type, &size) != 2 ||
		    strcmp(type, "blob") != 0 || (size_t)(nl + 1 - *buf) + size > *buflen)
			return pl_error_set(err, PL_EINPUT,
					    "the checkpoint's copy of '%s' (blob %s) is missing from "
					    "the repository",
					    want[i]->path, want[i]->oid);
		off[i] = (size_t)(nl + 1 - *buf);
		len[i] = (size_t)size;
		pos = off[i] + len[i] + 1;
	}
	return PL_OK;
}

/* ---- git's index lock, when perfloop is killed holding it -------------- */

/* When pid started (field 22 of /proc/PID/stat, in clock ticks since
 * boot), 0 when there is no such process: a pid and its start name one
 * process whatever reuses the number. */
static unsigned long long proc_start(pid_t pid)
{
	char p[64], buf[1024];
	snprintf(p, sizeof p, "/proc/%ld/stat", (long)pid);
	FILE *f = fopen(p, "r");
	if (!f)
		return 0;
	size_t n = fread(buf, 1, sizeof buf - 1, f);
	fclose(f);
	buf[n] = '\0';
	char *q = strrchr(buf, ')'); /* the name may hold spaces and ')' */
	unsigned long long start = 0;
	if (q && sscanf(q + 2, "%*c %*d %*d %*d %*d %*d %*u %*u %*u %*u %*u %*u %*u %*d %*d %*d "
			       "%*d %*d %*d %llu",
			&start) != 1)
		start = 0;
	return start;
}

static void owner_path(const struct pl_git *g, char *out, size_t len)
{
	snprintf(out, len, "%s/.perfloop/index.lock.owner", g->top);
}

/* Say who holds git's index lock: this process, and which lock (its
 * inode), so that a revert after this one was killed (SIGKILL, the OOM
 * killer, a cancelled tool call) can tell its own stale lock from a live
 * git's. */
static void own_lock(const struct pl_git *g, int lockfd)
{
	struct stat st;
	char p[4400], text[128];
	if (fstat(lockfd, &st) != 0)
		return;
	owner_path(g, p, sizeof p);
	int n = snprintf(text, sizeof text, "%ld %llu %llu\n", (long)getpid(),
			 proc_start(getpid()), (unsigned long long)st.st_ino);
	struct pl_error ignore;
	pl_fsio_write_atomic(p, text, (size_t)n, &ignore);
}

/* Whether the lock at lockpath is one a killed perfloop left: the owner
 * file names it (same inode) and a process that no longer runs. */
static int stale_lock(const struct pl_git *g, const char *lockpath)
{
	char p[4400];
	owner_path(g, p, sizeof p);
	FILE *f = fopen(p, "r");
	if (!f)
		return 0;
	long pid = 0;
	unsigned long long start = 0, ino = 0;
	int ok = fscanf(f, "%ld %llu %llu", &pid, &start, &ino) == 3;
	fclose(f);
	struct stat st;
	if (!ok || pid <= 0 || lstat(lockpath, &st) != 0 || !S_ISREG(st.st_mode) ||
	    (unsigned long long)st.st_ino != ino)
		return 0;
	unsigned long long now = proc_start((pid_t)pid);
	return now == 0 || now != start;
}

/* git's index lock, taken as O_EXCL would take it (link(2) fails on an
 * existing name), but made first under a name of our own so that the
 * owner record names its inode before it becomes the lock: a kill at any
 * moment leaves either no lock or one the record names. A lock a killed
 * perfloop left is taken over. -1 with errno set (EEXIST: held). */
static int take_lock(const struct pl_git *g, const char *lockpath)
{
	char mine[4400];
	snprintf(mine, sizeof mine, "%s.perfloop-%ld", lockpath, (long)getpid());
	unlink(mine); /* a predecessor of this pid's, killed */
	int fd = open(mine, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
	if (fd < 0)
		return -1;
	int stale = stale_lock(g, lockpath); /* the record read before ours replaces it */
	own_lock(g, fd);
	int rc = link(mine, lockpath);
	if (rc != 0 && errno == EEXIST && stale) {
		/* ours, from a perfloop killed mid-revert: the revert it began
		 * is done now, from the same checkpoint */
		unlink(lockpath);
		rc = link(mine, lockpath);
	}
	int e = errno;
	unlink(mine);
	if (rc != 0) {
		close(fd);
		errno = e;
		return -1;
	}
	return fd;
}

/* A checkpoint this clone made: its commit is refs/perfloop/checkpoint or
 * in that ref's log. A .perfloop/ that came with a clone, an archive or a
 * pull is someone else's word on what the tree was; reverting to it would
 * write their files (and their index) into this tree. */
static int checkpoint_ours(const struct pl_git *g, json_t *cp, const char *cpath,
			   struct pl_error *err)
{
	const char *commit = json_string_value(json_object_get(cp, "commit"));
	int ok = 0;
	if (commit && strlen(commit) >= 40 && strspn(commit, "0123456789abcdef") == strlen(commit)) {
		struct pl_error ignore = {0};
		char *out = NULL;
		if (git(g, NULL, &out, NULL, &ignore, "rev-parse", "--verify", "-q",
			"refs/perfloop/checkpoint", NULL) == PL_OK && out) {
			chomp(out);
			ok = strcmp(out, commit) == 0;
		}
		free(out);
		out = NULL;
		if (!ok && git(g, NULL, &out, NULL, &ignore, "reflog", "show", "--format=%H",
			       "refs/perfloop/checkpoint", "--", NULL) == PL_OK && out) {
			size_t cl = strlen(commit);
			for (char *l = out; *l && !ok;) {
				char *nl = strchr(l, '\n');
				size_t n = nl ? (size_t)(nl - l) : strlen(l);
				ok = n == cl && strncmp(l, commit, cl) == 0;
				l = nl ? nl + 1 : l + n;
			}
		}
		free(out);
	}
	if (ok)
		return PL_OK;
	return pl_error_set(err, PL_EINPUT,
			    "%s: commit: not a checkpoint taken in this repository (not in "
			    "refs/perfloop/checkpoint or its log); a .perfloop/ that came with a clone "
			    "or a copy is not reverted to: run 'perfloop checkpoint' to take your own",
			    cpath);
}

int pl_checkpoint_revert(const struct pl_git *g, int dry_run, struct pl_revert_result *res,
			 struct pl_error *err)
{
	memset(res, 0, sizeof(*res));
	char cpath[4300], copy[4300];
	snprintf(cpath, sizeof(cpath), "%s/.perfloop/checkpoint.json", g->top);
	snprintf(copy, sizeof(copy), "%s/.perfloop/checkpoint.gitindex", g->top);
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
	const char *schema = json_string_value(json_object_get(cp, "schema"));
	if (!schema || strcmp(schema, PL_CHECKPOINT_SCHEMA) != 0) {
		json_decref(cp);
		return pl_error_set(err, PL_EINPUT,
				    "%s: schema: expected '%s' (a checkpoint from an older perfloop "
				    "cannot be reverted exactly; take a new one)",
				    cpath, PL_CHECKPOINT_SCHEMA);
	}
	if ((rc = checkpoint_ours(g, cp, cpath, err)) != PL_OK) {
		json_decref(cp);
		return rc;
	}
	int index_saved = json_is_true(json_object_get(cp, "index_saved"));
	struct manifest before = {0}, now = {0};
	struct restorer r = {.g = g, .res = res, .err = err};
	char lockpath[4300] = "";
	int lockfd = -1;
	const struct entry **want = NULL;
	size_t nwant = 0;
	char *blobs = NULL;
	size_t bloblen = 0, *off = NULL, *len = NULL;
	if ((rc = manifest_load(cp, cpath, &before, err)) != PL_OK)
		goto out;
	if ((rc = take_manifest(g, NULL, 0, &before, &before, &now, err)) != PL_OK)
		goto out;

	/* merge the two sorted lists */
	want = calloc(before.n + 1, sizeof(*want));
	if (!want) {
		rc = PL_ENOMEM;
		goto out;
	}
	size_t i = 0, j = 0;
	while (i < before.n || j < now.n) {
		int c = i == before.n ? 1 : j == now.n ? -1 : strcmp(before.v[i].path, now.v[j].path);
		if (c < 0 && before.v[i].leftover) {
			i++; /* the user removed what a rejected turn left: as told */
			continue;
		}
		if (c < 0 || (c == 0 && !same(&before.v[i], &now.v[j]))) {
			const struct entry *b = &before.v[i];
			if (b->kind == K_REPO) {
				char line[4400];
				char *q = pl_git_quote(b->path);
				snprintf(line, sizeof(line),
					 "%s: a submodule or nested repository whose HEAD or files "
					 "changed; perfloop does not restore inside one (use git -C "
					 "%s)",
					 q ? q : b->path, q ? q : b->path);
				free(q);
				if ((rc = push(&res->kept, &res->nkept, line)) != PL_OK)
					goto out;
			} else {
				want[nwant++] = b;
				if ((rc = push(&res->restored, &res->nrestored, b->path)) != PL_OK)
					goto out;
			}
			i++;
			j += c == 0;
		} else if (c > 0) {
			if (!under_ignored(&before, now.v[j].path) &&
			    (rc = push(&res->created, &res->ncreated, now.v[j].path)) != PL_OK)
				goto out;
			j++;
		} else {
			i++;
			j++;
		}
	}
	/* the index: compared as files, restored whole */
	char idx[4200];
	if ((rc = index_file(g, idx, sizeof(idx), err)) != PL_OK)
		goto out;
	if (index_saved) {
		size_t al = 0, bl = 0;
		int missing;
		char *a = pl_fsio_read(copy, &al, &missing), *b = pl_fsio_read(idx, &bl, &missing);
		res->index_restored = !a || !b || al != bl || memcmp(a, b, al) != 0;
		int ra = a == NULL;
		free(a);
		free(b);
		if (ra) {
			rc = pl_error_set(err, PL_EINPUT, "cannot read the checkpoint's index copy '%s'",
					  copy);
			goto out;
		}
	}
	if (dry_run)
		goto out;

	/* everything the revert overwrites is kept first */
	if ((rc = manifest_commit(g, &now, "perfloop: the tree before a revert", res->saved,
				  sizeof(res->saved), err)) != PL_OK ||
	    (rc = git(g, NULL, NULL, NULL, err, "update-ref", "--create-reflog", "-m",
		      "perfloop revert",
		      "refs/perfloop/reverted", res->saved, NULL)) != PL_OK)
		goto out;
	/* git's own lock on the index, held while the tree is written: an
	 * editor's git that holds it makes us stop before touching anything */
	if (res->index_restored) {
		snprintf(lockpath, sizeof(lockpath), "%s.lock", idx);
		lockfd = take_lock(g, lockpath);
		if (lockfd < 0) {
			rc = pl_error_set(
			    err, PL_EINPUT,
			    errno == EEXIST
				? "git's index is locked ('%s' exists: another git, perhaps "
				  "an editor's, is running); nothing was changed: try again "
				  "when it is gone"
				: "cannot lock git's index '%s': %s",
			    lockpath, strerror(errno));
			lockpath[0] = '\0';
			goto out;
		}
	}
	off = calloc(nwant + 1, sizeof(size_t));
	len = calloc(nwant + 1, sizeof(size_t));
	if (!off || !len) {
		rc = PL_ENOMEM;
		goto out;
	}
	if (nwant && (rc = read_blobs(g, want, nwant, &blobs, &bloblen, off, len, err)) != PL_OK)
		goto out;
	sweep_scratch(g);
	for (size_t k = 0; k < nwant; k++)
		if ((rc = restore_one(&r, want[k], blobs + off[k], len[k])) != PL_OK)
			goto out;
	/* a created path moved aside with what stood in the way is listed there */
	size_t keep = 0;
	for (size_t k = 0; k < res->ncreated; k++) {
		const char *c = res->created[k];
		int moved = 0;
		for (size_t m = 0; m < r.nmoved && !moved; m++) {
			size_t ml = strlen(r.moved[m]);
			moved = strncmp(c, r.moved[m], ml) == 0 && (c[ml] == '\0' || c[ml] == '/');
		}
		if (moved)
			free(res->created[k]);
		else
			res->created[keep++] = res->created[k];
	}
	res->ncreated = keep;
	if (res->index_restored) {
		size_t dl = 0;
		int missing;
		char *data = pl_fsio_read(copy, &dl, &missing);
		if (!data || pl_fsio_write_all(lockfd, data, dl) != 0 ||
		    fsync(lockfd) != 0) {
			free(data);
			rc = pl_error_set(err, PL_ESYS, "cannot write git's index lock '%s': %s",
					  lockpath, strerror(errno));
			goto out;
		}
		free(data);
		close(lockfd);
		lockfd = -1;
		if (rename(lockpath, idx) != 0) {
			rc = pl_error_set(err, PL_ESYS, "cannot replace git's index: %s",
					  strerror(errno));
			goto out;
		}
		lockpath[0] = '\0';
	}
out:
	if (r.scratch[0])
		rmdir(r.scratch); /* empty unless a restore failed half-way */
	for (size_t k = 0; k < r.nmoved; k++)
		free(r.moved[k]);
	free(r.moved);
	if (lockfd >= 0)
		close(lockfd);
	if (lockpath[0])
		unlink(lockpath);
	if (res->index_restored && !dry_run) {
		char op[4400];
		owner_path(g, op, sizeof op);
		unlink(op);
	}
	free(blobs);
	free(off);
	free(len);
	free(want);
	manifest_release(&before);
	manifest_release(&now);
	json_decref(cp);
	if (rc != PL_OK)
		pl_revert_result_release(res);
	return rc;
}

static int rm_one(const char *p, const struct stat *st, int flag, struct FTW *f)
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
	nftw(scratch, rm_one, 16, FTW_DEPTH | FTW_PHYS);
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
		manifest_load(cp, cpath, &before, &ignore);
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
	struct pl_gitrun r = {
	    .dir = g->top, .plain = 1, .in = in.s ? in.s : "", .inlen = in.len};
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
		if (under_ignored(&before, paths[i]))
			ignored[i] = 1;
out:
	pl_gitrun_release(&r);
	free(pl_strbuf_take(&in));
	manifest_release(&before);
	return rc;
}

static void free_strv(char **v, size_t n)
{
	if (!v)
		return;
	for (size_t i = 0; i < n; i++)
		free(v[i]);
	free(v);
}

void pl_revert_result_release(struct pl_revert_result *r)
{
	free_strv(r->restored, r->nrestored);
	free_strv(r->created, r->ncreated);
	free_strv(r->displaced, r->ndisplaced);
	free_strv(r->kept, r->nkept);
	memset(r, 0, sizeof(*r));
}
