/*
 * Growable strings (see strbuf.h): vsnprintf into the spare room, grow by
 * doubling when it does not fit.
 */
#include "strbuf.h"

#include "fsio.h"

#include <errno.h>
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

struct pl_strbuf pl_strbuf_to_fd(int fd)
{
	return (struct pl_strbuf){.spill = 1, .fd = fd};
}

void pl_strbuf_spill(struct pl_strbuf *b, size_t min)
{
	if (!b->spill || b->failed || b->len < min || !b->len)
		return;
	if (pl_fsio_write_all(b->fd, b->s, b->len) != 0) {
		b->err = errno;
		b->failed = 1;
		return;
	}
	b->len = 0;
}

int pl_strbuf_finish_fd(struct pl_strbuf *b)
{
	pl_strbuf_spill(b, 0);
	int failed = b->failed, err = b->err ? b->err : ENOMEM;
	free(b->s);
	*b = (struct pl_strbuf){0};
	if (failed) {
		errno = err;
		return -1;
	}
	return 0;
}

/* The length of the UTF-8 character at s (1-4), 0 where s holds none. */
static size_t utf8_len(const unsigned char *s)
{
	if (s[0] < 0x80)
		return 1;
	size_t n = s[0] >= 0xC2 && s[0] <= 0xDF ? 2 : (s[0] & 0xF0) == 0xE0 ? 3
						   : s[0] >= 0xF0 && s[0] <= 0xF4 ? 4
										    : 0;
	for (size_t i = 1; i < n; i++)
		if ((s[i] & 0xC0) != 0x80)
			return 0;
	/* overlong three-byte forms, surrogates, past U+10FFFF */
	if ((n == 3 && s[0] == 0xE0 && s[1] < 0xA0) || (n == 3 && s[0] == 0xED && s[1] >= 0xA0) ||
	    (n == 4 && s[0] == 0xF0 && s[1] < 0x90) || (n == 4 && s[0] == 0xF4 && s[1] >= 0x90))
		return 0;
	return n;
}

void pl_strbuf_json(struct pl_strbuf *b, const char *str)
{
	const unsigned char *s = (const unsigned char *)str;
	pl_strbuf_append(b, "\"", 1);
	while (*s) {
		size_t n = utf8_len(s);
		if (!n) {
			pl_strbuf_puts(b, "\\ufffd");
			s++;
		} else if (*s == '"' || *s == '\\') {
			char e[2] = {'\\', (char)*s};
			pl_strbuf_append(b, e, 2);
			s++;
		} else if (*s < 0x20) {
			pl_strbuf_printf(b, "\\u%04x", *s);
			s++;
		} else {
			pl_strbuf_append(b, s, n);
			s += n;
		}
	}
	pl_strbuf_append(b, "\"", 1);
}
