/*
 * Private to perfloop mcp (src/cmd/mcp*.c): the server's state and the
 * functions its files share; main.c reaches the command through cmd.h
 * only. mcp.c is the command: its usage, the loop over messages and the
 * dispatch of each method; mcp_rpc.c the JSON-RPC framing, in and out, and
 * the messages that cannot wait (a cancellation, a ping); mcp_root.c the
 * confinement to the project's directory; mcp_run.c a tool run as a child
 * of this binary; mcp_tools.c the tool table and a call's command line;
 * mcp_resources.c the resources.
 */
#ifndef PL_MCP_INT_H
#define PL_MCP_INT_H

#include <jansson.h>
#include <limits.h>
#include <signal.h>
#include <stddef.h>
#include <sys/stat.h>
#include <sys/types.h>

/* The server: where it started, what it has read, and the tool running. */
struct server {
	char root[PATH_MAX];
	char *in; /* bytes read, not yet a whole line */
	size_t inlen, incap;
	int skipping; /* inside a line over MAX_LINE: its rest is dropped */
	int eof;
	json_t *queue; /* requests read while a tool ran, in order */
	json_t *last;  /* tool name -> its last document (perfloop://last/NAME.json) */
	/* the tool being run */
	json_t *run_id;	  /* its request's id */
	json_t *progress; /* its progress token, or NULL */
	unsigned progress_n;
	int cancelled;
	/* the server's own SIGINT/SIGTERM/SIGHUP: the tool running is stopped
	 * as a cancellation stops it, and the server ends */
	const volatile sig_atomic_t *interrupted;
	char bad[200]; /* a tools/call's invalid-params message, when built */
};

/* ---- JSON-RPC in and out (mcp_rpc.c) ---- */

/* Bytes that are not UTF-8 become '?', in place. */
void mcp_utf8_clean(char *s);
/* Each sends one message and releases what it was given. */
void mcp_send_msg(json_t *m);
void mcp_send_error(json_t *id, int code, const char *msg);
void mcp_send_result(json_t *id, json_t *result);
/* Read what stdin has into whole messages, queued on S->queue. */
void mcp_read_input(struct server *S);
int mcp_is_method(json_t *msg, const char *m);
/* Cancellations and pings in the queue, while child (or nothing: 0) runs. */
void mcp_control(struct server *S, pid_t child);

/* ---- the project's directory (mcp_root.c) ---- */

const char *mcp_project_path(const struct server *S, const char *path, char *rel, size_t len);
int mcp_open_in_root(const struct server *S, const char *rel, int want_dir, struct stat *st);
char *mcp_read_in_root(const struct server *S, const char *rel, size_t *len);
json_t *mcp_load_file(const struct server *S, const char *rel);
const char *mcp_state_dir_problem(const struct server *S, char *why, size_t len);

/* ---- running a tool (mcp_run.c) ---- */

int mcp_run_self(struct server *S, const char *tool, int stateful, char **argv, char **out,
		 char **errtext);

/* ---- tools (mcp_tools.c) ---- */

json_t *mcp_tool_list(void);
/* tools/call: the result, or NULL with *bad; NULL and no *bad: cancelled. */
json_t *mcp_call_tool(struct server *S, const char *name, json_t *args, const char **bad);

/* ---- resources (mcp_resources.c) ---- */

json_t *mcp_resource_list(struct server *S);
void mcp_resource_read(struct server *S, json_t *id, json_t *params);

#endif
