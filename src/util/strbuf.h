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
	int spill;   /* set by pl_strbuf_to_fd: the text goes on to fd */
	int fd, err; /* err: errno of a failed write */
};

/* A buffer whose text is written to fd as it is made, never held whole: the
 * appends as usual, then pl_strbuf_spill. */
struct pl_strbuf pl_strbuf_to_fd(int fd);
/* what a streamed writer holds before it spills */
#define PL_STRBUF_CHUNK (1 << 16)
/* Write out and empty what b holds once it is min bytes or more (a memory
 * buffer ignores this); a failed write marks b failed (errno in b->err). */
void pl_strbuf_spill(struct pl_strbuf *b, size_t min);
/* The end of a buffer made by pl_strbuf_to_fd: what is left written and the
 * memory freed; 0, or -1 with errno set (ENOMEM for a failed append). */
int pl_strbuf_finish_fd(struct pl_strbuf *b);

void pl_strbuf_printf(struct pl_strbuf *b, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));
void pl_strbuf_puts(struct pl_strbuf *b, const char *s);
/* Append len bytes, NULs included. */
void pl_strbuf_append(struct pl_strbuf *b, const void *data, size_t len);
/* s escaped for XML text and attributes (control characters as spaces). */
void pl_strbuf_xml(struct pl_strbuf *b, const char *s);
/* s as a JSON string, quotes included: control characters escaped, and
 * bytes that are not UTF-8 as U+FFFD (the result is always valid JSON). */
void pl_strbuf_json(struct pl_strbuf *b, const char *s);
/* The text (owned by the caller), or NULL if an allocation failed. */
char *pl_strbuf_take(struct pl_strbuf *b);

#endif
