/*
 * Shell-like word splitting (see words.h). A small hand-written state
 * machine: wordexp(3) would run command substitution and globbing, which is
 * exactly what `bench` promises not to do without `--shell`.
 */
#include "words.h"

#include <ctype.h>
#include <errno.h>
#include <math.h>
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

/* Shell syntax at p, outside quotes, that a shell would act on and we
 * would pass on as plain text: its name, or NULL. ws is where the word
 * began in the string; first: the command's first word. */
static const char *shell_syntax(const char *p, const char *ws, int first)
{
	char ch = *p;
	switch (ch) {
	case '|':
		return "a pipe '|'";
	case '&':
		return p[1] == '&' ? "'&&'" : "'&'";
	case ';':
		return "';'";
	case '<':
	case '>':
		return "a redirection";
	case '(':
	case ')':
		return "parentheses";
	case '`':
		return "a backquote";
	case '$':
		if (p[1] == '(')
			return "'$(...)'";
		if (p[1] && (isalpha((unsigned char)p[1]) || strchr("_{@*#?$!0123456789-", p[1])))
			return "a variable '$'";
		return NULL;
	case '*':
	case '?':
		return "a glob";
	case '[':
		return strchr(p + 1, ']') && !strchr(" \t\n", p[1]) && p != ws ? "a glob" : NULL;
	case '#':
		return p == ws ? "a comment '#'" : NULL;
	case '~':
		return p == ws ? "'~'" : NULL;
	case '=':
		if (!first || p == ws || !(isalpha((unsigned char)*ws) || *ws == '_'))
			return NULL;
		for (const char *q = ws; q < p; q++)
			if (!(isalnum((unsigned char)*q) || *q == '_'))
				return NULL;
		return "a variable assignment";
	default:
		return NULL;
	}
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
	const char *ws = s;
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
		if (!in_word)
			ws = p;
		in_word = 1;
		const char *syn = strchr("'\"\\", ch) ? NULL : shell_syntax(p, ws, out->n == 0);
		if (syn) {
			rc = pl_error_set(err, PL_EINPUT,
					  "%s outside quotes: perfloop runs the command without a "
					  "shell, so it would be passed on as text; quote it, or run "
					  "the command with a shell (bench --shell, or sh -c '...')",
					  syn);
			break;
		}
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

int pl_edit_distance(const char *a, const char *b)
{
	size_t la = strlen(a), lb = strlen(b);
	if (la > 64 || lb > 64)
		return 99;
	int row[65];
	for (size_t j = 0; j <= lb; j++)
		row[j] = (int)j;
	for (size_t i = 1; i <= la; i++) {
		int diag = row[0];
		row[0] = (int)i;
		for (size_t j = 1; j <= lb; j++) {
			int up = row[j];
			int best = diag + (a[i - 1] != b[j - 1]);
			if (up + 1 < best)
				best = up + 1;
			if (row[j - 1] + 1 < best)
				best = row[j - 1] + 1;
			row[j] = best;
			diag = up;
		}
	}
	return row[lb] > 99 ? 99 : row[lb];
}

int pl_parse_share(const char *s, int bare_percent, double *out)
{
	char *end;
	errno = 0;
	double v = strtod(s, &end);
	if (errno || end == s || !isfinite(v))
		return -1;
	int pct = bare_percent;
	if (*end == '%') {
		pct = 1;
		end++;
	}
	if (*end)
		return -1;
	if (pct)
		v /= 100.0;
	if (!(v >= 0 && v <= 1))
		return -1;
	*out = v;
	return 0;
}
