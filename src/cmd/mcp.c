/*
 * perfloop mcp: the loop's steps as tools a coding agent calls, over the
 * Model Context Protocol (JSON-RPC 2.0, one message per line on stdin and
 * stdout). Each tool runs perfloop itself (this binary) with the matching
 * command and returns its JSON document as structuredContent, with a short
 * text. While a tool runs the server keeps reading the client (mcp_run_self
 * polls stdin beside the child's output): a cancellation stops the child,
 * a ping is answered, other requests wait their turn in a queue.
 *
 * What a client sends is data, never perfloop's options: operands follow
 * "--" and values travel as "--option=VALUE", one argv element each. Every
 * path is resolved inside the directory the server started in (no "..",
 * nothing in .git, no symlink out of it), and files the server reads
 * itself (resources, the loop's documents) are opened one component at a
 * time without following symlinks. A tool that changes the loop's state
 * (baseline, try, checkpoint, revert) is asked to stop when cancelled and
 * never killed: it stops at its own safe point.
 */
#include "mcp_int.h"

#include <errno.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cmd.h"
#include "error.h"

const char cmd_mcp_usage[] =
    "usage: perfloop mcp\n"
    "\n"
    "Serve perfloop's steps as tools over the Model Context Protocol (JSON-RPC\n"
    "2.0, one message per line on stdin and stdout), for coding agents and\n"
    "editors: scan, bench, profile, select, verify, baseline, try, checkpoint,\n"
    "revert, status, history and report, each returning its JSON document\n"
    "(perfloop.findings/1, perfloop.bench/1, perfloop.verdict/1...) as structured\n"
    "content. Long tools send progress and stop when cancelled (bench keeps\n"
    "what it measured). The loop's evidence and the last flame graph are\n"
    "resources. Paths are confined to the directory it is started in. Register\n"
    "it in a client as the command `perfloop mcp`.\n"
    "\n"
    "Options:\n"
    "  -h, --help   this text\n"
    "\n"
    "Exit status: 0 when stdin ends.\n";

#define PROTOCOL "2025-06-18"

static const char optimize_prompt[] =
    "You are optimizing this project's performance with perfloop's loop. Rules: "
    "measure first (bench, then baseline); find the bottleneck (scan, then profile); "
    "work on the one finding select chooses (algorithm first: level 1 before 2 ... "
    "before 8; a high-severity algorithmic finding closes the stop gate; level 7 never "
    "while a level 1-6 finding is open); change one thing; measure again with try, which "
    "runs verify against the baseline and keeps the change only when the verdict accepts (a p50 gain of at least 5%, neither run "
    "noisy, the same machine, the functional suite passing, no other dimension worse) "
    "and reverts it otherwise. Never edit after a rejected turn without a new idea. "
    "Stop after the iteration bound (try says the loop is done) or when nothing is "
    "left to win.";

static void handle(struct server *S, json_t *msg)
{
	json_t *id = json_object_get(msg, "id");
	json_t *method = json_object_get(msg, "method");
	if (!json_is_object(msg) || !json_is_string(method) ||
	    !json_is_string(json_object_get(msg, "jsonrpc")) ||
	    strcmp(json_string_value(json_object_get(msg, "jsonrpc")), "2.0") ||
	    (id && !json_is_string(id) && !json_is_integer(id))) {
		/* a response from the client, or not a request at all */
		if (json_is_object(msg) && !method &&
		    (json_object_get(msg, "result") || json_object_get(msg, "error")))
			return;
		mcp_send_error(json_is_string(id) || json_is_integer(id) ? id : NULL, -32600,
			       "invalid request");
		return;
	}
	const char *m = json_string_value(method);
	if (!id) /* a notification: initialized, cancelled (mcp_control()), ...: nothing to say */
		return;
	json_t *params = json_object_get(msg, "params");
	if (params && !json_is_object(params)) {
		mcp_send_error(id, -32602, "params: expected an object");
		return;
	}
	if (!strcmp(m, "initialize")) {
		json_t *v = json_object_get(params, "protocolVersion");
		mcp_send_result(id, json_pack("{s:s, s:{s:{}, s:{}, s:{}}, s:{s:s, s:s}, s:s}",
					      "protocolVersion",
					      json_is_string(v) ? json_string_value(v) : PROTOCOL,
					      "capabilities", "tools", "resources", "prompts",
					      "serverInfo", "name", "perfloop", "version",
					      PERFLOOP_VERSION, "instructions", optimize_prompt));
	} else if (!strcmp(m, "ping")) {
		mcp_send_result(id, json_object());
	} else if (!strcmp(m, "tools/list")) {
		mcp_send_result(id, json_pack("{s:o}", "tools", mcp_tool_list()));
	} else if (!strcmp(m, "tools/call")) {
		json_t *name = json_object_get(params, "name");
		if (!json_is_string(name)) {
			mcp_send_error(id, -32602, "params.name: expected a tool name");
			return;
		}
		const char *bad;
		S->run_id = id;
		S->progress = json_object_get(json_object_get(params, "_meta"), "progressToken");
		if (S->progress && !json_is_string(S->progress) && !json_is_integer(S->progress))
			S->progress = NULL;
		S->progress_n = 0;
		S->cancelled = 0;
		json_t *r = mcp_call_tool(S, json_string_value(name),
					  json_object_get(params, "arguments"), &bad);
		S->run_id = S->progress = NULL;
		if (r) {
			mcp_send_result(id, r);
		} else if (bad) {
			char msgbuf[300];
			snprintf(msgbuf, sizeof msgbuf, "%s: %s", json_string_value(name), bad);
			mcp_send_error(id, -32602, msgbuf);
		} /* else cancelled: no answer (the client has moved on) */
	} else if (!strcmp(m, "resources/list")) {
		mcp_send_result(id, json_pack("{s:o}", "resources", mcp_resource_list(S)));
	} else if (!strcmp(m, "resources/read")) {
		mcp_resource_read(S, id, params);
	} else if (!strcmp(m, "prompts/list")) {
		mcp_send_result(id, json_pack("{s:[{s:s, s:s}]}", "prompts", "name", "optimize",
					      "description",
					      "the loop's rules, for the agent using the tools"));
	} else if (!strcmp(m, "prompts/get")) {
		json_t *name = json_object_get(params, "name");
		if (!json_is_string(name) || strcmp(json_string_value(name), "optimize")) {
			mcp_send_error(id, -32602, "params.name: no such prompt (prompts/list)");
			return;
		}
		mcp_send_result(id, json_pack("{s:s, s:[{s:s, s:{s:s, s:s}}]}", "description",
					      "the loop's rules", "messages", "role", "user",
					      "content", "type", "text", "text", optimize_prompt));
	} else {
		mcp_send_error(id, -32601, "method not found");
	}
}

int cmd_mcp(int argc, char **argv, const struct pl_ctx *ctx)
{
	for (int i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "-h") || !strcmp(argv[i], "--help")) {
			fputs(cmd_mcp_usage, stdout);
			return PL_EXIT_OK;
		}
		return pl_die(PL_EXIT_USAGE, "mcp: unexpected argument '%s'", argv[i]);
	}
	struct server *S = calloc(1, sizeof *S);
	char cwd[PATH_MAX];
	if (!S || !getcwd(cwd, sizeof cwd) || !realpath(cwd, S->root))
		return pl_die(PL_EXIT_INTERNAL, "mcp: cannot read the current directory");
	S->queue = json_array();
	S->last = json_object();
	S->interrupted = ctx ? ctx->interrupted : NULL;
	signal(SIGPIPE, SIG_IGN);
	for (;;) {
		if (S->interrupted && *S->interrupted)
			break;
		if (json_array_size(S->queue)) {
			json_t *msg = json_incref(json_array_get(S->queue, 0));
			json_array_remove(S->queue, 0);
			if (mcp_is_method(msg, "notifications/cancelled"))
				mcp_control(S, 0); /* of nothing running: nothing to do */
			else
				handle(S, msg);
			json_decref(msg);
			continue;
		}
		if (S->eof)
			break;
		struct pollfd in = {0, POLLIN, 0};
		if (poll(&in, 1, -1) < 0 && errno != EINTR)
			break;
		mcp_read_input(S);
		mcp_control(S, 0); /* a cancellation of a request still queued */
	}
	json_decref(S->queue);
	json_decref(S->last);
	free(S->in);
	free(S);
	return PL_EXIT_OK;
}
