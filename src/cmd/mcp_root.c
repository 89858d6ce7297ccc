/*
 * The directory perfloop mcp started in, which the server is confined to:
 * a path from a tool call resolved inside it (no "..", nothing in .git, no
 * symlink out of it, never read as an option), files the server reads
 * itself opened one component at a time without following a symlink, and
 * the check that perfloop's state directory holds no symlink a tool would
 * write through.
 */
#include "mcp_int.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "fsio.h"
#include "strbuf.h"

#define MAX_RESOURCE (32u << 20) /* a larger file is not served */

/* A path from a tool call as a path relative to the root, or why not.
 * Lexically: absolute only inside the root, no "..", no ".git" component
 * (any case). Then what exists of it must resolve inside the root and
 * outside its .git: a symlink that leads out, or nowhere, is refused. A
 * path that does not exist yet is the command's to report. rel never
 * starts with '-' (a "./" is put before one that would). */
const char *mcp_project_path(const struct server *S, const char *path, char *rel, size_t len)
{
	size_t rn = strlen(S->root), o = 0;
	const char *p = path;
	if (!*p)
		return "an empty path";
	if (strlen(p) >= PATH_MAX)
		return "a path too long";
	if (p[0] == '/') {
		if (strncmp(p, S->root, rn) || (p[rn] && p[rn] != '/'))
			return "a path outside the project";
		p += rn;
	}
	if (len < 4)
		return "a path too long";
	while (*p) {
		while (*p == '/')
			p++;
		size_t n = strcspn(p, "/");
		if (!n)
			break;
		if (n == 2 && !strncmp(p, "..", 2))
			return "a path with '..' (name it from the project's top)";
		if (n == 4 && !strncasecmp(p, ".git", 4))
			return "a path inside .git";
		if (!(n == 1 && p[0] == '.')) {
			if (o + n + 2 > len)
				return "a path too long";
			if (o && rel[o - 1] != '/')
				rel[o++] = '/';
			memcpy(rel + o, p, n);
			o += n;
		}
		p += n;
	}
	if (!o)
		rel[o++] = '.';
	rel[o] = '\0';
	if (rel[0] == '-') { /* never read as an option, whatever parses it */
		if (o + 3 > len)
			return "a path too long";
		memmove(rel + 2, rel, o + 1);
		memcpy(rel, "./", 2);
	}
	char full[2 * PATH_MAX + 2], real[PATH_MAX];
	snprintf(full, sizeof full, "%s/%s", S->root, rel);
	while (!realpath(full, real)) {
		struct stat st;
		if ((errno != ENOENT && errno != ENOTDIR) || lstat(full, &st) == 0)
			return "a path that does not resolve inside the project (a symlink?)";
		char *slash = strrchr(full, '/');
		if (!slash || (size_t)(slash - full) < rn)
			return "a path outside the project";
		*slash = '\0';
	}
	size_t n = rn == 1 ? 0 : rn; /* the root may be "/" */
	if (strncmp(real, S->root, n) || (real[n] && real[n] != '/'))
		return "a path outside the project (through a symlink)";
	if (!strncmp(real + n, "/.git", 5) && (real[n + 5] == '\0' || real[n + 5] == '/'))
		return "a path inside .git";
	/* what is there is a file or a directory: a FIFO hung the tool, and
	 * the server behind it */
	struct stat st;
	if (stat(real, &st) == 0 && !S_ISREG(st.st_mode) && !S_ISDIR(st.st_mode))
		return "not a regular file or directory (a FIFO, socket or device)";
	return NULL;
}

/* Open rel, a path under the root, for reading: each directory opened
 * with O_NOFOLLOW, so no symlink anywhere on the way is followed (nor
 * "..", nor .git); a regular file only (a FIFO would block: O_NONBLOCK).
 * The descriptor, or -1. */
int mcp_open_in_root(const struct server *S, const char *rel, int want_dir, struct stat *st)
{
	char buf[PATH_MAX];
	if (!rel || !*rel || rel[0] == '/' || strlen(rel) >= sizeof buf)
		return -1;
	snprintf(buf, sizeof buf, "%s", rel);
	int dfd = open(S->root, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	for (char *p = buf; dfd >= 0;) {
		char *slash = strchr(p, '/');
		if (slash)
			*slash = '\0';
		if (!*p || !strcmp(p, ".") || !strcmp(p, "..") || !strcasecmp(p, ".git"))
			break;
		int dir = slash || want_dir;
		int fd = openat(dfd, p,
				O_RDONLY | O_NOFOLLOW | O_CLOEXEC |
				    (dir ? O_DIRECTORY : O_NONBLOCK | O_NOCTTY));
		close(dfd);
		dfd = fd;
		if (fd < 0 || slash) {
			p = slash ? slash + 1 : p;
			continue;
		}
		if (fstat(fd, st) != 0 || (dir ? !S_ISDIR(st->st_mode) : !S_ISREG(st->st_mode)))
			break;
		return fd;
	}
	if (dfd >= 0)
		close(dfd);
	return -1;
}

/* The bytes of rel (mcp_open_in_root), NUL-terminated; NULL when it cannot be
 * read or is over MAX_RESOURCE. */
char *mcp_read_in_root(const struct server *S, const char *rel, size_t *len)
{
	struct stat st;
	int fd = mcp_open_in_root(S, rel, 0, &st);
	if (fd < 0)
		return NULL;
	struct pl_strbuf b = {0};
	char buf[65536];
	ssize_t n;
	int ok = 1;
	while ((n = read(fd, buf, sizeof buf)) != 0) {
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0 || b.len + (size_t)n > MAX_RESOURCE) {
			ok = 0;
			break;
		}
		pl_strbuf_append(&b, buf, (size_t)n);
	}
	close(fd);
	char *text = pl_strbuf_take(&b);
	if (!ok) {
		free(text);
		return NULL;
	}
	if (!text)
		text = calloc(1, 1);
	if (len)
		*len = text ? strlen(text) : 0;
	return text;
}

/* perfloop's state directory, .perfloop/, where the tools write: a real
 * directory, and no symlink in it or in its cache/ and mcp/ (a clone can
 * ship one, and a write through it would land outside the project). NULL,
 * or what is wrong. */
const char *mcp_state_dir_problem(const struct server *S, char *why, size_t len)
{
	if (!pl_fsio_state_problem(S->root, why, len))
		return NULL;
	mcp_utf8_clean(why);
	return why;
}

/* A JSON document under the root, read without following a symlink. */
json_t *mcp_load_file(const struct server *S, const char *rel)
{
	size_t n = 0;
	char *text = mcp_read_in_root(S, rel, &n);
	json_t *doc = text ? json_loadb(text, n, 0, NULL) : NULL;
	free(text);
	return doc;
}
