/*
 * Growable strings (see strbuf.h): vsnprintf into the spare room, grow by
 * doubling when it does not fit.
 */
#include "strbuf.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int reserve(struct pl_strbuf *b, size_t more)
{
	if (b->failed)
		return -1;
	if (b->len + more + 1 <= b->cap)
		return 0;
	size_t cap = b->cap ? b->cap : 256;
	while (cap < b->len + more + 1)
		cap *= 2;
	char *ns = realloc(b->s, cap);
	if (!ns) {
		b->failed = 1;
		return -1;
	}
	b->s = ns;
	b->cap = cap;
	return 0;
}

void pl_strbuf_printf(struct pl_strbuf *b, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	int n = vsnprintf(NULL, 0, fmt, ap);
	va_end(ap);
	if (n < 0 || reserve(b, (size_t)n) != 0)
		return;
	va_start(ap, fmt);
	vsnprintf(b->s + b->len, b->cap - b->len, fmt, ap);
	va_end(ap);
	b->len += (size_t)n;
}

void pl_strbuf_puts(struct pl_strbuf *b, const char *s)
{
	pl_strbuf_append(b, s, strlen(s));
}

void pl_strbuf_append(struct pl_strbuf *b, const void *data, size_t len)
{
	if (reserve(b, len) != 0)
		return;
	memcpy(b->s + b->len, data, len);
	b->len += len;
	b->s[b->len] = '\0';
}

char *pl_strbuf_take(struct pl_strbuf *b)
{
	if (b->failed || reserve(b, 0) != 0) {
		free(b->s);
		b->s = NULL;
		return NULL;
	}
	b->s[b->len] = '\0';
	char *s = b->s;
	b->s = NULL;
	b->len = b->cap = 0;
	return s;
}

void pl_strbuf_xml(struct pl_strbuf *b, const char *s)
{
	for (; *s; s++) {
		switch (*s) {
		case '<':
			pl_strbuf_puts(b, "&lt;");
			break;
		case '>':
			pl_strbuf_puts(b, "&gt;");
			break;
		case '&':
			pl_strbuf_puts(b, "&amp;");
			break;
		case '"':
			pl_strbuf_puts(b, "&quot;");
			break;
		default:
			if ((unsigned char)*s < 0x20)
				pl_strbuf_puts(b, " ");
			else
				pl_strbuf_append(b, s, 1);
		}
	}
}
