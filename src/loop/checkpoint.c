/*
 * The checkpoint (see gitops.h), by bytes. A checkpoint is a manifest of
 * every path git would show the user: the index's paths and the untracked,
 * non-ignored ones. Each is recorded as what it is on disk (a regular file
 * with its exact mode, a symlink with its target, a submodule or nested
 * repository by its HEAD and a digest of its status) with the id of a blob
 * holding its bytes, hashed with --no-filters so that no attribute or
 * filter rewrites them. The blobs are kept alive by a commit of those
 * entries (refs/perfloop/checkpoint), built in a private index; the user's
 * index file is copied as it was, and the ignored paths are listed so that
 * a change to .gitignore can neither hide nor expose a file. Nothing of the
 * user's is written: no index lock is taken, no stash is made. The revert
 * (revert.c) takes its manifest of the tree now with the same code.
 */
#include "gitops_int.h"

#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "fsio.h"
#include "grow.h"
#include "hash.h"
#include "strbuf.h"

static long long now_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_REALTIME, &ts);
	return (long long)ts.tv_sec * 1000000000LL + ts.tv_nsec;
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
	if (pl_git_cmd(&sub, NULL, &out, &len, &ignore, "status", "--porcelain=v1", "-z",
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

/* git hash-object over the --stdin-paths lines in `in`, writing the
 * blobs or not; the ids go to the entries which[0..nw) of m. */
static int hash_paths(const struct pl_git *g, struct manifest *m, const struct pl_strbuf *in,
		      const size_t *which, size_t nw, int write, struct pl_error *err)
{
	if (!nw)
		return PL_OK;
	char *wargs[] = {"hash-object", "-w", "--no-filters", "--stdin-paths", NULL};
	char *args[] = {"hash-object", "--no-filters", "--stdin-paths", NULL};
	char *out = NULL;
	size_t len = 0;
	int rc = pl_git_cmd_in(g, NULL, in->s, in->len, &out, &len, err, write ? wargs : args);
	char *save = NULL, *tok = rc == PL_OK ? strtok_r(out, "\n", &save) : NULL;
	size_t k = 0;
	for (; tok && k < nw; tok = strtok_r(NULL, "\n", &save), k++) {
		snprintf(m->v[which[k]].oid, sizeof(m->v[which[k]].oid), "%s", tok);
		m->v[which[k]].hashed = 1;
	}
	if (rc == PL_OK && k != nw)
		rc = pl_error_set(err, PL_ESYS, "git hash-object gave %zu ids for %zu paths", k,
				  nw);
	free(out);
	return rc;
}

/* Hash (and store) the bytes of every entry not known yet: files by path,
 * symlinks by their target written to a scratch file; an unstored file's
 * bytes are hashed and not written. */
static int hash_entries(const struct pl_git *g, struct manifest *m, struct pl_error *err)
{
	char scratch[4300];
	snprintf(scratch, sizeof(scratch), "%s/.perfloop/links.%ld", g->top, (long)getpid());
	struct pl_strbuf in = {0}, big = {0};
	size_t *which = calloc(m->n + 1, sizeof(size_t));
	size_t *bigwhich = calloc(m->n + 1, sizeof(size_t));
	size_t nw = 0, nbig = 0, nlinks = 0;
	int rc = which && bigwhich ? PL_OK : PL_ENOMEM;
	for (size_t i = 0; rc == PL_OK && i < m->n; i++) {
		struct entry *e = &m->v[i];
		if (e->hashed || (e->kind != K_FILE && e->kind != K_LINK))
			continue;
		if (e->unstored) {
			stdin_path(&big, e->path);
			bigwhich[nbig++] = i;
			continue;
		}
		if (e->kind == K_LINK) {
			char full[8300], target[4097];
			snprintf(full, sizeof(full), "%s/%s", g->top, e->path);
			ssize_t n = readlink(full, target, sizeof(target) - 1);
			if (n < 0) {
				rc =
				    pl_error_set(err, PL_EINPUT, "cannot read the symlink '%s': %s",
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
	if (rc == PL_OK)
		rc = hash_paths(g, m, &in, which, nw, 1, err);
	if (rc == PL_OK)
		rc = hash_paths(g, m, &big, bigwhich, nbig, 0, err);
	for (size_t i = 0; i < nlinks; i++) {
		char lp[4400];
		snprintf(lp, sizeof(lp), "%s/%zu", scratch, i);
		unlink(lp);
	}
	if (nlinks)
		rmdir(scratch);
	free(which);
	free(bigwhich);
	free(pl_strbuf_take(&in));
	free(pl_strbuf_take(&big));
	return rc;
}

/* Reuse a cached id when the file's stat is as cached and the cache was
 * taken well after the file last changed (a change within the same clock
 * tick could otherwise hide behind an equal stat). */
static void use_cache(struct entry *e, const struct manifest *cache)
{
	if (!cache || e->kind != K_FILE)
		return;
	const struct entry *c = pl_git_find_entry(cache, e->path);
	if (!c || c->kind != K_FILE || !c->hashed || memcmp(c->st, e->st, sizeof(e->st)) != 0)
		return;
	if (c->unstored && !e->unstored)
		return; /* its bytes were never written: hash (and store) them now */
	const long long tick = 2000000000LL;
	if (e->st[1] + tick > cache->taken_ns || e->st[2] + tick > cache->taken_ns)
		return;
	memcpy(e->oid, c->oid, sizeof(e->oid));
	e->hashed = 1;
}

/* Add the files at or under `path` (ignored now, not at the checkpoint
 * `before`) that the checkpoint did not ignore, unless m has them. */
static int add_newly_ignored(const struct pl_git *g, const struct manifest *before,
			     struct manifest *m, size_t nsorted, const char *path,
			     struct pl_error *err)
{
	char *out = NULL;
	size_t len = 0;
	int rc =
	    pl_git_cmd(g, NULL, &out, &len, err, "ls-files", "-z", "--others", "--", path, NULL);
	for (size_t k = 0; rc == PL_OK && k < len;) {
		const char *p = out + k;
		size_t pl = strlen(p);
		k += pl + 1;
		if (!pl || pl_git_under_ignored(before, p))
			continue;
		/* m's first nsorted entries are sorted; the others, added here,
		 * come from ignored entries that do not overlap */
		struct manifest sorted = {.v = m->v, .n = nsorted};
		char *name = strndup(p, p[pl - 1] == '/' ? pl - 1 : pl);
		int dup = !name || pl_git_find_entry(&sorted, name);
		free(name);
		if (dup)
			continue;
		struct entry *e = pl_git_add_entry(m, p, p[pl - 1] == '/' ? pl - 1 : pl, 0);
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
int pl_git_take_manifest(const struct pl_git *g, const char *index, int strict,
			 const struct manifest *cache, const struct manifest *extra,
			 struct manifest *m, struct pl_error *err)
{
	memset(m, 0, sizeof(*m));
	m->taken_ns = now_ns();
	char *staged = NULL, *others = NULL, *ign = NULL;
	size_t slen = 0, olen = 0, ilen = 0;
	int rc;
	if ((rc = pl_git_cmd(g, index, &staged, &slen, err, "ls-files", "-z", "-s", NULL)) !=
		PL_OK ||
	    (rc = pl_git_cmd(g, index, &others, &olen, err, "ls-files", "-z", "--others",
			     "--exclude-standard", NULL)) != PL_OK ||
	    (rc = pl_git_cmd(g, index, &ign, &ilen, err, "ls-files", "-z", "--others", "--ignored",
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
			rc =
			    pl_error_set(err, PL_EINPUT,
					 "'%s' has an unresolved conflict in the index: resolve it "
					 "first",
					 path);
			goto out;
		}
		struct entry *e = pl_git_add_entry(m, path, strlen(path), 1);
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
		struct entry *e = pl_git_add_entry(m, p, p[pl - 1] == '/' ? pl - 1 : pl, 0);
		if (!e) {
			rc = PL_ENOMEM;
			goto out;
		}
		if (p[pl - 1] == '/')
			e->kind = K_REPO;
	}
	qsort(m->v, m->n, sizeof(*m->v), pl_git_cmp_entry);
	/* room for all first: the sorted part is searched while m grows */
	if (extra && pl_grow((void **)&m->v, &m->cap, m->n + extra->n + 1, sizeof *m->v, 64) != 0) {
		rc = PL_ENOMEM;
		goto out;
	}
	struct manifest listed = *m;
	for (size_t i = 0; extra && i < extra->n; i++)
		if (!pl_git_find_entry(&listed, extra->v[i].path)) {
			struct entry *e =
			    pl_git_add_entry(m, extra->v[i].path, strlen(extra->v[i].path), 0);
			if (!e) {
				rc = PL_ENOMEM;
				goto out;
			}
			e->kind = extra->v[i].kind == K_REPO ? K_REPO : K_FILE;
		}
	qsort(m->v, m->n, sizeof(*m->v), pl_git_cmp_entry);
	for (size_t i = 0; i < ilen;) {
		char *p = ign + i;
		i += strlen(p) + 1;
		if (*p && strncmp(p, ".perfloop/", 10) != 0 &&
		    pl_grow((void **)&m->ignored, &m->ignored_cap, m->nignored + 1, sizeof(char *),
			    16) == 0)
			m->ignored[m->nignored++] = strdup(p);
	}
	if (m->nignored)
		qsort(m->ignored, m->nignored, sizeof(char *), pl_git_cmp_str);
	/* a revert: paths ignored now but not at the checkpoint (the change
	 * edited .gitignore) are the change's like any other */
	size_t nsorted = m->n;
	for (size_t i = 0; extra && rc == PL_OK && i < m->nignored; i++)
		if (!pl_git_under_ignored(extra, m->ignored[i]))
			rc = add_newly_ignored(g, extra, m, nsorted, m->ignored[i], err);
	if (rc != PL_OK)
		goto out;
	qsort(m->v, m->n, sizeof(*m->v), pl_git_cmp_entry);

	/* what each path is on disk; absent ones drop out */
	const long long max_stored = pl_git_max_stored();
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
			e->unstored = !e->tracked && (long long)st.st_size > max_stored;
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
			rc = pl_error_set(
			    err, PL_EINPUT,
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
		pl_git_set_path(o, e->path);
		json_object_set_new(o, "type", json_string(pl_git_kind_name[e->kind]));
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
		if (e->unstored)
			json_object_set_new(o, "stored", json_false());
		json_array_append_new(a, o);
	}
	return a;
}

/* A commit of the manifest's entries, built in a private index, so that
 * the blobs stay reachable (and a person can `git show` them). */
int pl_git_manifest_commit(const struct pl_git *g, const struct manifest *m, const char *msg,
			   char *commit, size_t clen, struct pl_error *err)
{
	char idx[4300];
	snprintf(idx, sizeof(idx), "%s/.perfloop/snapshot.index.%ld", g->top, (long)getpid());
	unlink(idx);
	struct pl_strbuf in = {0};
	for (size_t i = 0; i < m->n; i++) {
		const struct entry *e = &m->v[i];
		const char *mode = e->kind == K_LINK			   ? "120000"
				   : e->kind == K_REPO			   ? "160000"
				   : e->kind == K_FILE && (e->mode & 0100) ? "100755"
									   : "100644";
		if (e->kind == K_OTHER || e->unstored ||
		    (e->kind == K_REPO &&
		     (strlen(e->oid) < 40 || !strchr("0123456789abcdef", e->oid[0]))))
			continue;
		pl_strbuf_printf(&in, "%s %s\t", mode, e->oid);
		pl_strbuf_append(&in, e->path, strlen(e->path) + 1);
	}
	char *tree = NULL, *c = NULL;
	char *ua[] = {"update-index", "-z", "--add", "--index-info", NULL};
	int rc = pl_git_cmd_in(g, idx, in.s, in.len, NULL, NULL, err, ua);
	free(pl_strbuf_take(&in));
	if (rc == PL_OK)
		rc = pl_git_cmd(g, idx, &tree, NULL, err, "write-tree", NULL);
	unlink(idx);
	if (rc != PL_OK)
		goto out;
	pl_git_chomp(tree);
	char *ca[] = {"commit-tree", tree, "-p", "HEAD", "-m", (char *)msg, NULL};
	/* commit-tree needs an identity; a repository without one still gets
	 * its checkpoint */
	char *env_ca[] = {"-c",		 "user.name=perfloop",
			  "-c",		 "user.email=perfloop@localhost",
			  "commit-tree", tree,
			  "-p",		 "HEAD",
			  "-m",		 (char *)msg,
			  NULL};
	struct pl_error ignore;
	rc = pl_git_cmd_in(g, NULL, NULL, 0, &c, NULL, &ignore, ca);
	if (rc != PL_OK) {
		free(c);
		c = NULL;
		rc = pl_git_cmd_in(g, NULL, NULL, 0, &c, NULL, err, env_ca);
	}
	if (rc != PL_OK)
		goto out;
	pl_git_chomp(c);
	snprintf(commit, clen, "%s", c);
out:
	free(tree);
	free(c);
	return rc;
}

/* Files a rejected turn created and left in place, as told: new ones
 * (leftovers), and those of earlier checkpoints still there unchanged. */
static void mark_leftovers(struct manifest *m, const struct manifest *prev,
			   const char *const *leftovers, size_t n)
{
	for (size_t i = 0; i < m->n; i++) {
		struct entry *e = &m->v[i];
		const struct entry *p = pl_git_find_entry(prev, e->path);
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
	if (pl_git_cmd(g, NULL, &split, NULL, &ignore, "config", "--bool", "core.splitIndex",
		       NULL) == PL_OK &&
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
	if ((rc = pl_git_index_file(g, idx, sizeof(idx), err)) != PL_OK)
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
	    pl_git_manifest_load(prev, path, &cache, &ignore) != PL_OK)
		memset(&cache, 0, sizeof(cache));
	json_decref(prev);
	json_t *doc = NULL;
	char commit[64] = "";
	if ((rc = pl_git_take_manifest(g, have_index ? tmpcopy : NULL, 1, &cache, NULL, &m, err)) !=
	    PL_OK)
		goto out;
	mark_leftovers(&m, &cache, leftovers, nleft);
	if ((rc = pl_git_manifest_commit(g, &m, "perfloop checkpoint", commit, sizeof(commit),
					 err)) != PL_OK)
		goto out;
	if ((rc = pl_git_cmd(g, NULL, NULL, NULL, err, "update-ref", "--create-reflog", "-m",
			     "perfloop checkpoint", "refs/perfloop/checkpoint", commit, NULL)) !=
	    PL_OK)
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
	pl_git_manifest_release(&m);
	pl_git_manifest_release(&cache);
	return rc;
}
