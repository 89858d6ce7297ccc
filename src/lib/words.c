/*
 * Shell-like word splitting (see words.h). A small hand-written state
 * machine: wordexp(3) would run command substitution and globbing, which is
 * exactly what `bench` promises not to do without `--shell`.
 */
#include "words.h"

#include <stdlib.h>
#include <string.h>

int pl_argv_push(struct pl_argv *a, const char *buf, size_t len)
{
	char **v = realloc(a->v, (a->n + 2) * sizeof(*v));
	if (!v)
		return PL_ENOMEM;
	a->v = v;
	a->v[a->n] = strndup(buf, len);
	if (!a->v[a->n])
		return PL_ENOMEM;
	a->n++;
	a->v[a->n] = NULL;
	return PL_OK;
}

int pl_words_split(const char *s, struct pl_argv *out, struct pl_error *err)
{
	out->v = NULL;
	out->n = 0;
	size_t cap = strlen(s) + 1;
	char *buf = malloc(cap);
	if (!buf)
		return PL_ENOMEM;
	size_t len = 0;
	int in_word = 0, rc = PL_OK;
	for (const char *p = s;; p++) {
		char ch = *p;
		if (ch == '\0' || ch == ' ' || ch == '\t' || ch == '\n') {
			if (in_word) {
				if ((rc = pl_argv_push(out, buf, len)) != PL_OK)
					break;
				len = 0;
				in_word = 0;
			}
			if (ch == '\0')
				break;
			continue;
		}
		in_word = 1;
		if (ch == '\'') {
			const char *end = strchr(p + 1, '\'');
			if (!end) {
				rc =
				    pl_error_set(err, PL_EINPUT, "unterminated ' quote in '%s'", s);
				break;
			}
			memcpy(buf + len, p + 1, (size_t)(end - p - 1));
			len += (size_t)(end - p - 1);
			p = end;
		} else if (ch == '"') {
			p++;
			while (*p && *p != '"') {
				if (*p == '\\' && p[1] && strchr("\"\\$`\n", p[1]))
					p++;
				buf[len++] = *p++;
			}
			if (*p != '"') {
				rc = pl_error_set(err, PL_EINPUT, "unterminated \" quote in '%s'",
						  s);
				break;
			}
		} else if (ch == '\\') {
			if (!p[1]) {
				rc = pl_error_set(err, PL_EINPUT, "trailing backslash in '%s'", s);
				break;
			}
			p++;
			buf[len++] = *p;
		} else {
			buf[len++] = ch;
		}
	}
	free(buf);
	if (rc == PL_OK && out->n == 0)
		rc = pl_error_set(err, PL_EINPUT, "empty command");
	if (rc != PL_OK)
		pl_argv_release(out);
	return rc;
}

void pl_argv_release(struct pl_argv *a)
{
	for (size_t i = 0; i < a->n; i++)
		free(a->v[i]);
	free(a->v);
	a->v = NULL;
	a->n = 0;
}

char *pl_words_substitute(const char *s, const char *name, const char *value)
{
	size_t nlen = strlen(name), vlen = strlen(value), count = 0;
	for (const char *p = s; (p = strchr(p, '{')); p++)
		if (strncmp(p + 1, name, nlen) == 0 && p[nlen + 1] == '}')
			count++;
	char *out = malloc(strlen(s) + count * vlen + 1);
	if (!out)
		return NULL;
	char *o = out;
	for (const char *p = s; *p;) {
		if (*p == '{' && strncmp(p + 1, name, nlen) == 0 && p[nlen + 1] == '}') {
			memcpy(o, value, vlen);
			o += vlen;
			p += nlen + 2;
		} else {
			*o++ = *p++;
		}
	}
	*o = '\0';
	return out;
}
