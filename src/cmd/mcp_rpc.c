/*
 * perfloop mcp's JSON-RPC framing: messages out, one line each, always
 * encodable (a byte that is not UTF-8 becomes '?'); messages in, read from
 * stdin into whole lines, a line over 16 MiB refused and skipped rather
 * than buffered; and the messages that cannot wait for a running tool (a
 * cancellation, a ping), which mcp_control answers or marks while
 * mcp_run_self (mcp_run.c) waits on the child.
 */
#include "mcp_int.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "grow.h"

#define MAX_LINE (16u << 20)	 /* a longer message is refused, never buffered */

/* Bytes that are not UTF-8 (a file name in a message, a line cut short)
 * become '?': jansson refuses to encode them, and a message it cannot
 * encode would never be sent. */
void mcp_utf8_clean(char *s)
{
	unsigned char *p = (unsigned char *)s;
	while (*p) {
		int n = *p < 0x80			    ? 0
			: (*p & 0xe0) == 0xc0 && *p >= 0xc2 ? 1
			: (*p & 0xf0) == 0xe0		    ? 2
			: (*p & 0xf8) == 0xf0 && *p <= 0xf4 ? 3
							    : -1;
		int ok = n >= 0;
		for (int k = 1; ok && k <= n; k++)
			ok = (p[k] & 0xc0) == 0x80;
		if (ok && n == 2) /* no overlong form, no surrogate */
			ok = !(p[0] == 0xe0 && p[1] < 0xa0) && !(p[0] == 0xed && p[1] >= 0xa0);
		if (ok && n == 3)
			ok = !(p[0] == 0xf0 && p[1] < 0x90) && !(p[0] == 0xf4 && p[1] >= 0x90);
		if (!ok) {
			*p++ = '?';
			continue;
		}
		p += n + 1;
	}
}

/* ---- messages out ---- */

void mcp_send_msg(json_t *m)
{
	char *s = json_dumps(m, JSON_COMPACT);
	if (s) {
		fputs(s, stdout);
		fputc('\n', stdout);
		fflush(stdout);
		free(s);
	}
	json_decref(m);
}

void mcp_send_error(json_t *id, int code, const char *msg)
{
	char text[512];
	snprintf(text, sizeof text, "%s", msg);
	mcp_utf8_clean(text);
	mcp_send_msg(json_pack("{s:s, s:O, s:{s:i, s:s}}", "jsonrpc", "2.0", "id",
			       id ? id : json_null(), "error", "code", code, "message", text));
}

/* Every request is answered: a result that could not be built is an
 * internal error, not silence. */
void mcp_send_result(json_t *id, json_t *result)
{
	if (!result) {
		mcp_send_error(id, -32603, "internal error (out of memory)");
		return;
	}
	mcp_send_msg(json_pack("{s:s, s:O, s:o}", "jsonrpc", "2.0", "id", id, "result", result));
}

/* ---- messages in ---- */

/* One line from the client: a message queued, or a parse error said. */
static void take_line(struct server *S, char *line, size_t n)
{
	while (n > 0 && (line[n - 1] == '\r' || line[n - 1] == ' '))
		n--;
	if (n == 0)
		return;
	json_error_t jerr;
	json_t *msg = json_loadb(line, n, 0, &jerr);
	if (!msg)
		mcp_send_error(NULL, -32700, "parse error");
	else if (json_is_array(msg)) /* batches are not part of the current revision */
		mcp_send_error(NULL, -32600, "invalid request (batches are not supported)");
	else
		json_array_append(S->queue, msg);
	json_decref(msg);
}

static int grow_in(struct server *S, size_t need)
{
	return pl_grow((void **)&S->in, &S->incap, need, 1, 4096);
}

/* A line over MAX_LINE (or one that cannot be held): one error for it,
 * and its rest is read and dropped up to its newline. */
static void refuse_line(struct server *S)
{
	mcp_send_error(NULL, -32700,
		       "parse error (a message over 16 MiB: refused, its line skipped)");
	S->skipping = 1;
	S->inlen = 0;
}

/* Read what stdin has (it was said readable) into whole messages. */
void mcp_read_input(struct server *S)
{
	char buf[65536];
	ssize_t n = read(0, buf, sizeof buf);
	if (n < 0 && (errno == EINTR || errno == EAGAIN))
		return;
	if (n <= 0) {
		S->eof = 1;
		if (S->inlen && !S->skipping)
			take_line(S, S->in, S->inlen);
		S->inlen = 0;
		S->skipping = 0;
		return;
	}
	for (size_t from = 0; from < (size_t)n;) {
		const char *nl = memchr(buf + from, '\n', (size_t)n - from);
		size_t end = nl ? (size_t)(nl - buf) : (size_t)n, piece = end - from;
		if (S->skipping) {
			/* the rest of a refused line */
		} else if (S->inlen + piece > MAX_LINE) {
			refuse_line(S);
		} else if (!S->inlen && nl) { /* a whole line in this read */
			take_line(S, buf + from, piece);
		} else if (grow_in(S, S->inlen + piece + 1) < 0) {
			refuse_line(S);
		} else {
			memcpy(S->in + S->inlen, buf + from, piece);
			S->inlen += piece;
			if (nl)
				take_line(S, S->in, S->inlen);
		}
		if (nl) { /* a line ends: the next one starts clean */
			S->inlen = 0;
			S->skipping = 0;
		}
		from = end + (nl != NULL);
	}
}

int mcp_is_method(json_t *msg, const char *m)
{
	json_t *v = json_object_get(msg, "method");
	return json_is_string(v) && !strcmp(json_string_value(v), m);
}

/* Messages that cannot wait for the running tool: a cancellation (of it,
 * or of a request still queued: S->cancelled says, mcp_run_self stops the
 * child) and ping. */
void mcp_control(struct server *S, pid_t child)
{
	for (size_t i = 0; i < json_array_size(S->queue);) {
		json_t *msg = json_array_get(S->queue, i);
		json_t *id = json_object_get(msg, "id");
		if (mcp_is_method(msg, "notifications/cancelled")) {
			json_t *rid = json_object_get(json_object_get(msg, "params"), "requestId");
			if (rid && S->run_id && json_equal(rid, S->run_id) && child > 0)
				S->cancelled = 1;
			for (size_t k = 0; rid && k < json_array_size(S->queue); k++) {
				json_t *q = json_array_get(S->queue, k);
				json_t *qid = json_object_get(q, "id");
				if (k != i && qid && json_equal(qid, rid) &&
				    json_object_get(q, "method")) { /* never started: drop it */
					json_array_remove(S->queue, k);
					if (k < i)
						i--;
					break;
				}
			}
			json_array_remove(S->queue, i);
			continue;
		}
		if (child > 0 && mcp_is_method(msg, "ping") &&
		    (json_is_string(id) || json_is_integer(id))) {
			mcp_send_result(id, json_object());
			json_array_remove(S->queue, i);
			continue;
		}
		i++;
	}
}
