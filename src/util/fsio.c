/*
 * Atomic file writes (see fsio.h). The temporary file lives beside the
 * target so that rename(2) stays within one file system, and is removed if
 * anything fails, so a failed write leaves the old file as it was.
 */
#include "fsio.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <libgen.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <unistd.h>

int pl_fsio_write_all(int fd, const void *buf, size_t len)
{
	const char *p = buf;
	while (len > 0) {
		ssize_t w = write(fd, p, len);
		if (w < 0 && errno == EINTR)
			continue;
		if (w < 0)
			return -1;
		p += w;
		len -= (size_t)w;
	}
	return 0;
}

void pl_fsio_sync_dir(const char *path)
{
	char *dcopy = strdup(path);
	if (!dcopy)
		return;
	int dfd = open(dirname(dcopy), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (dfd >= 0) {
		fsync(dfd);
		close(dfd);
	}
	free(dcopy);
}

int pl_json_load(const char *path, json_t **out, struct pl_error *err)
{
	json_error_t jerr;
	*out = json_load_file(path, JSON_REJECT_DUPLICATES, &jerr);
	if (*out)
		return PL_OK;
	if (jerr.line <= 0)
		return pl_error_set(err, PL_EINPUT, "%s: %s", path, jerr.text);
	return pl_error_set(err, PL_EINPUT, "%s:%d:%d: %s", path, jerr.line, jerr.column,
			    jerr.text);
}

char *pl_fsio_read(const char *path, size_t *len, int *missing)
{
	*len = 0;
	*missing = 0;
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0) {
		*missing = errno == ENOENT;
		return NULL;
	}
	size_t cap = 4096, n = 0;
	char *buf = malloc(cap + 1);
	for (;;) {
		if (!buf)
			break;
		ssize_t r = read(fd, buf + n, cap - n);
		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0) {
			if (r < 0) {
				int e = errno;
				free(buf);
				buf = NULL;
				errno = e;
			}
			break;
		}
		n += (size_t)r;
		if (n == cap) {
			char *nb = realloc(buf, (cap *= 2) + 1);
			if (!nb)
				free(buf);
			buf = nb;
		}
	}
	close(fd);
	if (!buf)
		return NULL;
	buf[n] = '\0';
	*len = n;
	return buf;
}

const char *pl_relpath_check(const char *rel, int own_state)
{
	if (!rel || !*rel)
		return "an empty path";
	if (rel[0] == '/')
		return "an absolute path";
	if (strlen(rel) >= 4096)
		return "a path over 4095 bytes";
	for (const char *c = rel; *c;) {
		const char *e = strchr(c, '/');
		size_t n = e ? (size_t)(e - c) : strlen(c);
		if (n == 0)
			return "an empty path component";
		if ((n == 1 && c[0] == '.') || (n == 2 && c[0] == '.' && c[1] == '.'))
			return "a '.' or '..' component";
		if (n == 4 && strncasecmp(c, ".git", 4) == 0)
			return "a path into .git";
		if (own_state && c == rel && n == 9 && strncmp(c, ".perfloop", 9) == 0)
			return "a path into .perfloop";
		if (!e)
			break;
		c = e + 1;
		if (!*c)
			return "an empty path component";
	}
	return NULL;
}

/* fs.protected_symlinks, as the kernel applies it to an open(2) that
 * follows a link: a link in a sticky, world-writable directory (/tmp) is
 * followed only if its owner is ours or the directory's. perfloop follows
 * an output path's link itself, so it must apply the rule itself. */
static int link_protected(const char *link, const struct stat *lst)
{
	if (lst->st_uid == geteuid())
		return 0;
	char *dcopy = strdup(link);
	if (!dcopy)
		return 1;
	struct stat dst;
	int r = stat(dirname(dcopy), &dst);
	free(dcopy);
	if (r != 0)
		return 1;
	return (dst.st_mode & S_ISVTX) && (dst.st_mode & S_IWOTH) && lst->st_uid != dst.st_uid;
}

/* The file a write to path lands in: a symlink given as the output path is
 * written through, as any program's `> path` would, never replaced; NULL
 * with errno EACCES for a link the kernel would not follow (see above). */
static char *final_target(const char *path)
{
	char *cur = strdup(path);
	for (int hops = 0; cur && hops < 40; hops++) {
		struct stat st;
		if (lstat(cur, &st) != 0 || !S_ISLNK(st.st_mode))
			return cur;
		if (link_protected(cur, &st)) {
			free(cur);
			errno = EACCES;
			return NULL;
		}
		char link[4096];
		ssize_t n = readlink(cur, link, sizeof(link) - 1);
		if (n < 0)
			return cur;
		link[n] = '\0';
		char *next;
		const char *slash = strrchr(cur, '/');
		if (link[0] == '/' || !slash) {
			next = strdup(link);
		} else {
			size_t dl = (size_t)(slash - cur) + 1;
			next = malloc(dl + (size_t)n + 1);
			if (next) {
				memcpy(next, cur, dl);
				memcpy(next + dl, link, (size_t)n + 1);
			}
		}
		free(cur);
		cur = next;
	}
	return cur;
}

struct bytes {
	const void *data;
	size_t len;
};

static int write_bytes(int fd, void *ctx)
{
	const struct bytes *b = ctx;
	return pl_fsio_write_all(fd, b->data, b->len);
}

int pl_fsio_stage(const char *path, const void *data, size_t len, struct pl_fsio_staged *st,
		  struct pl_error *err)
{
	struct bytes b = {data, len};
	return pl_fsio_stage_with(path, write_bytes, &b, st, err);
}

int pl_fsio_stage_with(const char *path, pl_fsio_writer write, void *ctx,
		       struct pl_fsio_staged *st, struct pl_error *err)
{
	memset(st, 0, sizeof(*st));
	char *target = final_target(path);
	if (!target && errno == EACCES)
		return pl_error_set(err, PL_EINPUT,
				    "cannot write '%s': a symlink in a sticky directory that "
				    "belongs to another user (fs.protected_symlinks)",
				    path);
	if (!target)
		return PL_ENOMEM;
	size_t plen = strlen(target);
	char *tmp = malloc(plen + 16);
	if (!tmp) {
		free(target);
		return PL_ENOMEM;
	}
	snprintf(tmp, plen + 16, "%s.tmp.XXXXXX", target);
	int fd = mkstemp(tmp);
	if (fd < 0) {
		int e = errno;
		free(tmp);
		free(target);
		return pl_error_set(err, PL_EINPUT, "cannot write '%s': %s", path, strerror(e));
	}
	/* the mode a plain create would give (umask applies), or the mode of
	 * the file replaced: a private file stays private */
	struct stat sb;
	mode_t mode;
	if (stat(target, &sb) == 0 && S_ISREG(sb.st_mode)) {
		mode = sb.st_mode & 07777;
	} else {
		mode_t um = umask(0);
		umask(um);
		mode = 0666 & ~um;
	}
	fchmod(fd, mode);
	if (write(fd, ctx) != 0 || fsync(fd) != 0) {
		int e = errno;
		close(fd);
		unlink(tmp);
		free(tmp);
		free(target);
		/* a writer out of memory is perfloop's fault, not the path's */
		return pl_error_set(err, e == ENOMEM ? PL_ENOMEM : PL_EINPUT, "cannot write '%s': %s",
				    path, strerror(e));
	}
	if (close(fd) != 0) {
		int e = errno;
		unlink(tmp);
		free(tmp);
		free(target);
		return pl_error_set(err, PL_EINPUT, "cannot write '%s': %s", path, strerror(e));
	}
	st->tmp = tmp;
	st->target = target;
	return PL_OK;
}

int pl_fsio_commit(struct pl_fsio_staged *st, struct pl_error *err)
{
	int rc = PL_OK;
	if (rename(st->tmp, st->target) != 0) {
		rc = pl_error_set(err, PL_EINPUT, "cannot write '%s': %s", st->target,
				  strerror(errno));
		unlink(st->tmp);
	} else {
		pl_fsio_sync_dir(st->target);
	}
	free(st->tmp);
	free(st->target);
	memset(st, 0, sizeof(*st));
	return rc;
}

void pl_fsio_discard(struct pl_fsio_staged *st)
{
	if (st->tmp)
		unlink(st->tmp);
	free(st->tmp);
	free(st->target);
	memset(st, 0, sizeof(*st));
}

int pl_fsio_write_atomic(const char *path, const void *data, size_t len, struct pl_error *err)
{
	struct pl_fsio_staged st;
	int rc = pl_fsio_stage(path, data, len, &st, err);
	return rc == PL_OK ? pl_fsio_commit(&st, err) : rc;
}

int pl_fsio_write_atomic_with(const char *path, pl_fsio_writer write, void *ctx,
			      struct pl_error *err)
{
	struct pl_fsio_staged st;
	int rc = pl_fsio_stage_with(path, write, ctx, &st, err);
	return rc == PL_OK ? pl_fsio_commit(&st, err) : rc;
}

char *pl_json_text(json_t *doc)
{
	char *text = json_dumps(doc, JSON_INDENT(1) | JSON_REAL_PRECISION(12));
	if (!text)
		return NULL;
	size_t len = strlen(text);
	char *withnl = realloc(text, len + 2);
	if (!withnl) {
		free(text);
		return NULL;
	}
	withnl[len] = '\n';
	withnl[len + 1] = '\0';
	return withnl;
}

int pl_fsio_write_json(const char *path, json_t *doc, struct pl_error *err)
{
	char *text = pl_json_text(doc);
	if (!text)
		return PL_ENOMEM;
	int rc = pl_fsio_write_atomic(path, text, strlen(text), err);
	free(text);
	return rc;
}

void pl_json_print(json_t *doc)
{
	char *text = doc ? pl_json_text(doc) : NULL;
	if (text)
		fputs(text, stdout);
	free(text);
	json_decref(doc);
}

int pl_fsio_first_line(const char *path, char *out, size_t len)
{
	FILE *f = fopen(path, "re");
	if (!f)
		return -1;
	int ok = fgets(out, (int)len, f) != NULL;
	fclose(f);
	if (!ok)
		return -1;
	out[strcspn(out, "\n")] = '\0';
	return 0;
}

int pl_fsio_check_writable(const char *path, struct pl_error *err)
{
	char *copy = strdup(path);
	if (!copy)
		return PL_ENOMEM;
	char *slash = strrchr(copy, '/');
	const char *dir = slash ? (slash == copy ? "/" : (*slash = '\0', copy)) : ".";
	int ok = access(dir, W_OK | X_OK) == 0;
	int e = errno;
	struct stat st;
	if (ok && stat(path, &st) == 0 && S_ISDIR(st.st_mode)) {
		ok = 0;
		e = EISDIR;
	}
	free(copy);
	return ok ? PL_OK : pl_error_set(err, PL_EINPUT, "cannot write '%s': %s", path, strerror(e));
}

/* the tree under the open directory fd (named rel for messages): 0, or
 * -1 with why filled */
static int state_walk(int fd, const char *rel, int depth, char *why, size_t len)
{
	DIR *d = fdopendir(fd);
	if (!d) {
		close(fd);
		return 0;
	}
	int bad = 0;
	struct dirent *e;
	while (!bad && (e = readdir(d))) {
		if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, ".."))
			continue;
		if (depth == 0 && !strcmp(e->d_name, "displaced"))
			continue;
		struct stat st;
		if (fstatat(dirfd(d), e->d_name, &st, AT_SYMLINK_NOFOLLOW) != 0)
			continue;
		if (S_ISLNK(st.st_mode) || (!S_ISREG(st.st_mode) && !S_ISDIR(st.st_mode))) {
			snprintf(why, len,
				 "'%s/%.200s' is %s: perfloop's state is never read or written "
				 "through one (a clone can ship it); remove it",
				 rel, e->d_name, S_ISLNK(st.st_mode) ? "a symlink" : "not a regular file");
			bad = 1;
		} else if (S_ISDIR(st.st_mode) && depth < 6) {
			int sub = openat(dirfd(d), e->d_name,
					 O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
			char r[600];
			snprintf(r, sizeof r, "%.300s/%.200s", rel, e->d_name);
			if (sub >= 0 && state_walk(sub, r, depth + 1, why, len) < 0)
				bad = 1;
		}
	}
	closedir(d);
	return bad ? -1 : 0;
}

const char *pl_fsio_state_problem(const char *top, char *why, size_t len)
{
	char p[4200];
	snprintf(p, sizeof p, "%s/.perfloop", top);
	struct stat st;
	if (lstat(p, &st) != 0)
		return NULL;
	if (!S_ISDIR(st.st_mode)) {
		snprintf(why, len,
			 "'.perfloop' is not a directory (%s): perfloop's state is never "
			 "written through one; remove it",
			 S_ISLNK(st.st_mode) ? "a symlink" : "a file");
		return why;
	}
	int fd = open(p, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0)
		return NULL;
	return state_walk(fd, ".perfloop", 0, why, len) < 0 ? why : NULL;
}

int pl_fsio_open_regular(const char *path, size_t max, struct pl_error *err)
{
	/* O_NONBLOCK: opening a FIFO without a writer returns at once */
	int fd = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC);
	if (fd < 0) {
		int e = errno;
		pl_error_set(err, PL_EINPUT, "%s: %s", path, strerror(e));
		errno = e;
		return -1;
	}
	struct stat st;
	if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
		close(fd);
		pl_error_set(err, PL_EINPUT, "%s: not a regular file (a FIFO, device or directory)",
			     path);
		errno = EINVAL;
		return -1;
	}
	if (max && (size_t)st.st_size > max) {
		close(fd);
		pl_error_set(err, PL_EINPUT, "%s: %lld bytes, more than the %zu read", path,
			     (long long)st.st_size, max);
		errno = EFBIG;
		return -1;
	}
	int fl = fcntl(fd, F_GETFL);
	if (fl >= 0)
		fcntl(fd, F_SETFL, fl & ~O_NONBLOCK);
	return fd;
}
