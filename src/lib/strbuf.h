/*
 * A growable string for building reports and exports in memory before they
 * are written atomically. An allocation failure makes later appends no-ops
 * and pl_strbuf_take() return NULL, so callers check once, at the end.
 */
#ifndef PL_STRBUF_H
#define PL_STRBUF_H

#include <stddef.h>

struct pl_strbuf {
	char *s;
	size_t len, cap;
	int failed;
};

void pl_strbuf_printf(struct pl_strbuf *b, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));
void pl_strbuf_puts(struct pl_strbuf *b, const char *s);
/* Append len bytes, NULs included. */
void pl_strbuf_append(struct pl_strbuf *b, const void *data, size_t len);
/* s escaped for XML text and attributes (control characters as spaces). */
void pl_strbuf_xml(struct pl_strbuf *b, const char *s);
/* The text (owned by the caller), or NULL if an allocation failed. */
char *pl_strbuf_take(struct pl_strbuf *b);

#endif
