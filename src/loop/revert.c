/*
 * The revert (see gitops.h), by bytes. A revert takes the same manifest of
 * the tree as it is now (kept as refs/perfloop/reverted, so even the undone
 * edits can be had back), merges the two sorted lists, and for each path
 * that differs writes the recorded bytes back through real directories
 * only, never through a symlink; whatever is in the way (a directory where
 * a file was) is moved under .perfloop/displaced/, never deleted. Paths the
 * change created are listed and left. The index is put back whole under
 * git's own lock, which is taken before anything is written, so a busy
 * index refuses the revert with nothing changed. Linear in the paths after
 * one sort.
 */
#include "gitops_int.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "fsio.h"
#include "procid.h"
#include "strbuf.h"

/* ---- restoring paths, through real directories only ------------------ */

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
		struct stat sst;
		if (mkdir(r->scratch, 0700) != 0 &&
		    (errno != EEXIST || lstat(r->scratch, &sst) != 0 || !S_ISDIR(sst.st_mode)))
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
static int read_blobs(const struct pl_git *g, const struct entry *const *want, size_t n, char **buf,
		      size_t *buflen, size_t *off, size_t *len, struct pl_error *err)
{
	struct pl_strbuf in = {0};
	for (size_t i = 0; i < n; i++) {
		pl_strbuf_puts(&in, want[i]->oid);
		pl_strbuf_puts(&in, "\n");
	}
	char *args[] = {"cat-file", "--batch", NULL};
	int rc = pl_git_cmd_in(g, NULL, in.s, in.len, buf, buflen, err, args);
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
			return pl_error_set(
			    err, PL_EINPUT,
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
	int n = snprintf(text, sizeof text, "%ld %llu %llu\n", (long)getpid(), pl_proc_start(getpid()),
			 (unsigned long long)st.st_ino);
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
	unsigned long long now = pl_proc_start((pid_t)pid);
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
	if (commit && strlen(commit) >= 40 &&
	    strspn(commit, "0123456789abcdef") == strlen(commit)) {
		struct pl_error ignore = {0};
		char *out = NULL;
		if (pl_git_cmd(g, NULL, &out, NULL, &ignore, "rev-parse", "--verify", "-q",
			       "refs/perfloop/checkpoint", NULL) == PL_OK &&
		    out) {
			pl_git_chomp(out);
			ok = strcmp(out, commit) == 0;
		}
		free(out);
		out = NULL;
		if (!ok &&
		    pl_git_cmd(g, NULL, &out, NULL, &ignore, "reflog", "show", "--format=%H",
			       "refs/perfloop/checkpoint", "--", NULL) == PL_OK &&
		    out) {
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
	return pl_error_set(
	    err, PL_EINPUT,
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
		return pl_error_set(
		    err, PL_EINPUT,
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
	if ((rc = pl_git_manifest_load(cp, cpath, &before, err)) != PL_OK)
		goto out;
	if ((rc = pl_git_take_manifest(g, NULL, 0, &before, &before, &now, err)) != PL_OK)
		goto out;

	/* merge the two sorted lists */
	want = calloc(before.n + 1, sizeof(*want));
	if (!want) {
		rc = PL_ENOMEM;
		goto out;
	}
	size_t i = 0, j = 0;
	while (i < before.n || j < now.n) {
		int c = i == before.n ? 1
			: j == now.n  ? -1
				      : strcmp(before.v[i].path, now.v[j].path);
		if (c < 0 && before.v[i].leftover) {
			i++; /* the user removed what a rejected turn left: as told */
			continue;
		}
		if (c < 0 || (c == 0 && !same(&before.v[i], &now.v[j]))) {
			const struct entry *b = &before.v[i];
			if (b->kind == K_REPO) {
				char line[4400];
				char *q = pl_git_quote(b->path);
				snprintf(
				    line, sizeof(line),
				    "%s: a submodule or nested repository whose HEAD or files "
				    "changed; perfloop does not restore inside one (use git -C "
				    "%s)",
				    q ? q : b->path, q ? q : b->path);
				free(q);
				if ((rc = push(&res->kept, &res->nkept, line)) != PL_OK)
					goto out;
			} else if (b->unstored) {
				/* no bytes to put back: left as it is, and never part
				 * of a turn's change */
				if ((rc = push(&res->unstored, &res->nunstored, b->path)) != PL_OK)
					goto out;
			} else {
				want[nwant++] = b;
				if ((rc = push(&res->restored, &res->nrestored, b->path)) != PL_OK)
					goto out;
			}
			i++;
			j += c == 0;
		} else if (c > 0) {
			if (!pl_git_under_ignored(&before, now.v[j].path) &&
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
	if ((rc = pl_git_index_file(g, idx, sizeof(idx), err)) != PL_OK)
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
			rc = pl_error_set(err, PL_EINPUT,
					  "cannot read the checkpoint's index copy '%s'", copy);
			goto out;
		}
	}
	if (dry_run)
		goto out;

	/* everything the revert overwrites is kept first */
	if ((rc = pl_git_manifest_commit(g, &now, "perfloop: the tree before a revert", res->saved,
					 sizeof(res->saved), err)) != PL_OK ||
	    (rc = pl_git_cmd(g, NULL, NULL, NULL, err, "update-ref", "--create-reflog", "-m",
			     "perfloop revert", "refs/perfloop/reverted", res->saved, NULL)) !=
		PL_OK)
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
	pl_git_sweep_scratch(g);
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
		if (!data || pl_fsio_write_all(lockfd, data, dl) != 0 || fsync(lockfd) != 0) {
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
	pl_git_manifest_release(&before);
	pl_git_manifest_release(&now);
	json_decref(cp);
	if (rc != PL_OK)
		pl_revert_result_release(res);
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
	free_strv(r->unstored, r->nunstored);
	memset(r, 0, sizeof(*r));
}
