/*
 * pyproject.toml's [tool.perfloop.scan] (see pyproject.h).
 */
#include "pyproject.h"

#include <ctype.h>
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "fsio.h"

#define TABLE "tool.perfloop.scan"
#define PER_FILE "tool.perfloop.scan.per-file-ignores"

struct cur {
	const char *p, *end, *path;
	int line;
	struct pl_error *err;
	int rc; /* the last error's code */
};

static int oom(struct cur *c)
{
	return c->rc = pl_error_set(c->err, PL_ENOMEM, "out of memory");
}

static int fail(struct cur *c, const char *what, const char *key)
{
	return c->rc = pl_error_set(c->err, PL_EINPUT, "%s:%d: %s%s%s%s", c->path, c->line,
			    key ? "'" : "", key ? key : "", key ? "': " : "", what);
}

/* Blanks, comments and (when nl) newlines. */
static void skip(struct cur *c, int nl)
{
	while (c->p < c->end) {
		if (*c->p == ' ' || *c->p == '\t' || *c->p == '\r')
			c->p++;
		else if (*c->p == '#')
			while (c->p < c->end && *c->p != '\n')
				c->p++;
		else if (nl && *c->p == '\n') {
			c->line++;
			c->p++;
		} else
			break;
	}
}

static int push(struct pl_strlist *l, char *s)
{
	char **v = realloc(l->v, (l->n + 1) * sizeof *v);
	if (!v) {
		free(s);
		return PL_ENOMEM;
	}
	l->v = v;
	l->v[l->n++] = s;
	return 0;
}

static void list_release(struct pl_strlist *l)
{
	for (size_t i = 0; i < l->n; i++)
		free(l->v[i]);
	free(l->v);
	memset(l, 0, sizeof *l);
}

/* A basic ("...") or literal ('...') one-line string; NULL on error. */
static char *string(struct cur *c, const char *key)
{
	char q = *c->p;
	if (q != '"' && q != '\'') {
		fail(c, "expected a string", key);
		return NULL;
	}
	c->p++;
	size_t cap = 64, n = 0;
	char *s = malloc(cap);
	while (s && c->p < c->end && *c->p != q && *c->p != '\n') {
		char ch = *c->p++;
		if (q == '"' && ch == '\\' && c->p < c->end) {
			char e = *c->p++;
			ch = e == 'n' ? '\n' : e == 't' ? '\t' : e;
		}
		if (n + 2 > cap) {
			char *g = realloc(s, cap *= 2);
			if (!g) {
				free(s);
				s = NULL;
				break;
			}
			s = g;
		}
		s[n++] = ch;
	}
	if (!s) {
		oom(c);
		return NULL;
	}
	if (c->p >= c->end || *c->p != q) {
		free(s);
		fail(c, "unterminated string", key);
		return NULL;
	}
	c->p++;
	s[n] = '\0';
	return s;
}

static int string_array(struct cur *c, const char *key, struct pl_strlist *out)
{
	if (*c->p != '[')
		return fail(c, "expected an array of strings, [\"...\", ...]", key);
	c->p++;
	for (;;) {
		skip(c, 1);
		if (c->p >= c->end)
			return fail(c, "unterminated array", key);
		if (*c->p == ']') {
			c->p++;
			return 0;
		}
		char *s = string(c, key);
		if (!s)
			return c->rc;
		if (push(out, s))
			return oom(c);
		skip(c, 1);
		if (c->p < c->end && *c->p == ',')
			c->p++;
		else if (c->p < c->end && *c->p != ']')
			return fail(c, "expected ',' or ']' in the array", key);
	}
}

static char *key(struct cur *c)
{
	if (*c->p == '"' || *c->p == '\'')
		return string(c, NULL);
	const char *a = c->p;
	while (c->p < c->end && (isalnum((unsigned char)*c->p) || *c->p == '_' || *c->p == '-'))
		c->p++;
	if (c->p == a) {
		fail(c, "expected a key", NULL);
		return NULL;
	}
	char *k = strndup(a, (size_t)(c->p - a));
	if (!k)
		oom(c);
	return k;
}

static int end_of_line(struct cur *c, const char *k)
{
	skip(c, 0);
	if (c->p < c->end && *c->p != '\n')
		return fail(c, "unexpected text after the value", k);
	return 0;
}

/* One `key = value` of [tool.perfloop.scan]. */
static int scan_key(struct cur *c, const char *k, struct pl_scan_config *out)
{
	if (!strcmp(k, "advisory")) {
		if (c->end - c->p >= 4 && !strncmp(c->p, "true", 4)) {
			out->advisory = 1;
			c->p += 4;
		} else if (c->end - c->p >= 5 && !strncmp(c->p, "false", 5)) {
			out->advisory = 0;
			c->p += 5;
		} else {
			return fail(c, "expected true or false", k);
		}
		return end_of_line(c, k);
	}
	struct pl_strlist *l = !strcmp(k, "select")	 ? &out->select
			       : !strcmp(k, "ignore")	 ? &out->ignore
			       : !strcmp(k, "exclude") ? &out->exclude
						       : NULL;
	if (!l)
		return fail(c, "unknown key in [" TABLE "] (select, ignore, exclude, advisory, "
			       "per-file-ignores)",
			    k);
	out->has_select |= l == &out->select;
	int rc = string_array(c, k, l);
	return rc ? rc : end_of_line(c, k);
}

int pl_pyproject_read(const char *path, struct pl_scan_config *out, struct pl_error *err)
{
	memset(out, 0, sizeof *out);
	out->advisory = -1;
	size_t len;
	int missing;
	/* a regular file of at most 4 MiB: a pyproject.toml -> /dev/zero read
	 * until the memory ran out, a FIFO hung the scan */
	int fd = pl_fsio_open_regular(path, 4u << 20, err);
	if (fd < 0)
		return PL_EINPUT;
	close(fd);
	char *text = pl_fsio_read(path, &len, &missing);
	if (!text)
		return pl_error_set(err, PL_EINPUT, "%s: %s", path, strerror(errno));
	struct cur c = {text, text + len, path, 1, err, 0};
	int in = 0, found = 0, rc = 0; /* in: 0 elsewhere, 1 the table, 2 per-file */
	while (rc == 0 && c.p < c.end) {
		skip(&c, 1);
		if (c.p >= c.end)
			break;
		if (*c.p == '[') { /* a table header */
			const char *a = ++c.p;
			while (c.p < c.end && *c.p != ']' && *c.p != '\n')
				c.p++;
			size_t n = (size_t)(c.p - a);
			while (n && a[n - 1] == ' ')
				n--;
			while (n && *a == ' ')
				a++, n--;
			in = n == strlen(TABLE) && !strncmp(a, TABLE, n)	     ? 1
			     : n == strlen(PER_FILE) && !strncmp(a, PER_FILE, n) ? 2
										 : 0;
			found |= in != 0;
			while (c.p < c.end && *c.p != '\n')
				c.p++;
			continue;
		}
		if (!in) { /* another tool's table: not ours to read */
			while (c.p < c.end && *c.p != '\n')
				c.p++;
			continue;
		}
		char *k = key(&c);
		if (!k) {
			rc = c.rc;
			break;
		}
		skip(&c, 0);
		if (c.p >= c.end || *c.p != '=') {
			rc = fail(&c, "expected '='", k);
			free(k);
			break;
		}
		c.p++;
		skip(&c, 0);
		if (in == 1) {
			rc = scan_key(&c, k, out);
			free(k);
		} else {
			struct pl_per_file *g =
			    realloc(out->per_file, (out->nper_file + 1) * sizeof *g);
			if (!g) {
				free(k);
				rc = oom(&c);
				break;
			}
			out->per_file = g;
			g = &out->per_file[out->nper_file++];
			memset(g, 0, sizeof *g);
			g->glob = k;
			rc = string_array(&c, k, &g->ids);
			if (!rc)
				rc = end_of_line(&c, k);
		}
	}
	free(text);
	if (rc < 0 || !found) {
		pl_scan_config_release(out);
		return rc < 0 ? rc : 0;
	}
	char full[PATH_MAX];
	out->path = strdup(path);
	if (realpath(path, full)) {
		char *slash = strrchr(full, '/');
		if (slash)
			*slash = '\0';
		out->dir = strdup(full[0] ? full : "/");
	}
	if (!out->path || !out->dir) {
		pl_scan_config_release(out);
		return pl_error_set(err, PL_ENOMEM, "out of memory");
	}
	return 1;
}

/* Whether d/name exists. */
static int has(const char *d, const char *name)
{
	char p[PATH_MAX + 32];
	snprintf(p, sizeof p, "%s/%s", strcmp(d, "/") ? d : "", name);
	struct stat st;
	return lstat(p, &st) == 0;
}

/* The project's root above d: the git work tree's top (the nearest
 * directory holding .git), else the nearest directory with a
 * pyproject.toml, else d itself. A settings file above it is another
 * project's (or a stranger's, in /tmp) and never applies. */
static void project_root(const char *d, char *root, size_t len)
{
	char cur[PATH_MAX], first_py[PATH_MAX] = "";
	snprintf(cur, sizeof cur, "%s", d);
	for (;;) {
		if (has(cur, ".git")) {
			snprintf(root, len, "%s", cur);
			return;
		}
		if (!first_py[0] && has(cur, "pyproject.toml"))
			snprintf(first_py, sizeof first_py, "%s", cur);
		char *slash = strrchr(cur, '/');
		if (!slash || slash == cur)
			break;
		*slash = '\0';
	}
	snprintf(root, len, "%s", first_py[0] ? first_py : d);
}

int pl_pyproject_find(const char *dir, struct pl_scan_config *out, struct pl_error *err)
{
	char d[PATH_MAX], root[PATH_MAX];
	memset(out, 0, sizeof *out);
	out->advisory = -1;
	if (!realpath(dir, d))
		return 0;
	project_root(d, root, sizeof root);
	for (;;) {
		char p[PATH_MAX + 16];
		snprintf(p, sizeof p, "%s/pyproject.toml", strcmp(d, "/") ? d : "");
		if (access(p, F_OK) == 0) { /* not opened here: it may be a FIFO */
			int rc = pl_pyproject_read(p, out, err);
			if (rc != 0)
				return rc;
		}
		char *slash = strrchr(d, '/');
		if (!slash || slash == d || strcmp(d, root) == 0)
			break;
		*slash = '\0';
	}
	return 0;
}

void pl_scan_config_release(struct pl_scan_config *c)
{
	free(c->path);
	free(c->dir);
	list_release(&c->select);
	list_release(&c->ignore);
	list_release(&c->exclude);
	for (size_t i = 0; i < c->nper_file; i++) {
		free(c->per_file[i].glob);
		list_release(&c->per_file[i].ids);
	}
	free(c->per_file);
	memset(c, 0, sizeof *c);
	c->advisory = -1;
}
