/*
 * perfloop mcp: the loop's steps as tools a coding agent calls, over the
 * Model Context Protocol (JSON-RPC 2.0, one message per line on stdin and
 * stdout). Each tool runs perfloop itself (this binary) with the matching
 * command and returns its JSON document as structuredContent, with a short
 * text; paths are confined to the directory the server started in.
 */
#include <errno.h>
#include <fcntl.h>
#include <jansson.h>
#include <limits.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "cmd.h"
#include "error.h"
#include "strbuf.h"

const char cmd_mcp_usage[] =
    "usage: perfloop mcp\n"
    "\n"
    "Serve perfloop's steps as tools over the Model Context Protocol (JSON-RPC\n"
    "2.0, one message per line on stdin and stdout), for coding agents and\n"
    "editors: scan, bench, select, verify, status and report, each returning\n"
    "its JSON document (perfloop.findings/1, perfloop.bench/1, perfloop.verdict/1)\n"
    "as structured content. Paths are confined to the directory it is started\n"
    "in. Register it in a client as the command `perfloop mcp`.\n"
    "\n"
    "Options:\n"
    "  -h, --help   this text\n"
    "\n"
    "Exit status: 0 when stdin ends.\n";

#define PROTOCOL "2025-06-18"

static char root[PATH_MAX];

/* Is path (relative to root, or absolute) inside root? */
static int confined(const char *path)
{
	char buf[2 * PATH_MAX + 2], real[PATH_MAX];
	if (strlen(path) >= PATH_MAX)
		return 0;
	if (path[0] == '/')
		snprintf(buf, sizeof buf, "%s", path);
	else
		snprintf(buf, sizeof buf, "%s/%s", root, path);
	/* a path that does not exist yet: judge its directory */
	if (!realpath(buf, real)) {
		char *slash = strrchr(buf, '/');
		if (!slash)
			return 0;
		*slash = '\0';
		if (!realpath(buf[0] ? buf : "/", real))
			return 0;
	}
	size_t n = strlen(root);
	return !strncmp(real, root, n) && (real[n] == '\0' || real[n] == '/');
}

/* Run this binary with argv (argv[0] a command), collecting stdout and
 * stderr. Returns the exit code, -1 if it could not run or was killed. */
static int run_self(char **argv, char **out, char **errtext)
{
	int po[2], pe[2];
	*out = *errtext = NULL;
	if (pipe2(po, O_CLOEXEC) < 0)
		return -1;
	if (pipe2(pe, O_CLOEXEC) < 0) {
		close(po[0]);
		close(po[1]);
		return -1;
	}
	pid_t pid = fork();
	if (pid == 0) {
		int nul = open("/dev/null", O_RDONLY);
		if (nul >= 0)
			dup2(nul, 0);
		dup2(po[1], 1);
		dup2(pe[1], 2);
		if (chdir(root) != 0)
			_exit(126);
		execv("/proc/self/exe", argv);
		_exit(127);
	}
	close(po[1]);
	close(pe[1]);
	struct pl_strbuf bo = {0}, be = {0};
	struct pollfd fds[2] = {{po[0], POLLIN, 0}, {pe[0], POLLIN, 0}};
	int open_fds = pid > 0 ? 2 : 0;
	while (open_fds) {
		if (poll(fds, 2, -1) < 0 && errno != EINTR)
			break;
		for (int i = 0; i < 2; i++) {
			if (fds[i].fd < 0 || !(fds[i].revents & (POLLIN | POLLHUP | POLLERR)))
				continue;
			char buf[65536];
			ssize_t n = read(fds[i].fd, buf, sizeof buf);
			if (n > 0) {
				pl_strbuf_append(i ? &be : &bo, buf, (size_t)n);
			} else {
				close(fds[i].fd);
				fds[i].fd = -1;
				open_fds--;
			}
		}
	}
	for (int i = 0; i < 2; i++)
		if (fds[i].fd >= 0)
			close(fds[i].fd);
	int status = 0, rc = -1;
	if (pid > 0 && waitpid(pid, &status, 0) == pid && WIFEXITED(status))
		rc = WEXITSTATUS(status);
	*out = pl_strbuf_take(&bo);
	*errtext = pl_strbuf_take(&be);
	return rc;
}

/* ---- tools ---- */

struct argv_b {
	char *v[256];
	int n;
};

static void add(struct argv_b *a, const char *s)
{
	if (a->n < 254)
		a->v[a->n++] = (char *)s;
	a->v[a->n] = NULL;
}

/* string or array of strings at key: each added after opt (NULL: bare) */
static const char *add_strings(struct argv_b *a, json_t *args, const char *key, const char *opt,
			       int paths)
{
	json_t *v = json_object_get(args, key);
	if (!v)
		return NULL;
	if (json_is_string(v)) {
		if (paths && !confined(json_string_value(v)))
			return "a path outside the project";
		if (opt)
			add(a, opt);
		add(a, json_string_value(v));
		return NULL;
	}
	if (!json_is_array(v))
		return "expected a string or an array of strings";
	size_t i;
	json_t *x;
	json_array_foreach(v, i, x)
	{
		if (!json_is_string(x))
			return "expected strings";
		if (paths && !confined(json_string_value(x)))
			return "a path outside the project";
		if (opt)
			add(a, opt);
		add(a, json_string_value(x));
	}
	return NULL;
}

struct tool {
	const char *name, *title, *description, *schema; /* schema: JSON text */
	int read_only;
};

static const struct tool tools[] = {
    {"scan", "Scan source for performance anti-patterns",
     "Find known performance anti-patterns in Python/PyTorch and C source (perfloop "
     "scan). Returns perfloop.findings/1.",
     "{\"type\":\"object\",\"properties\":{\"paths\":{\"type\":\"array\",\"items\":{\"type\":"
     "\"string\"},\"description\":\"files or directories (default: the project)\"},"
     "\"select\":{\"type\":\"array\",\"items\":{\"type\":\"string\"}},\"advisory\":{\"type\":"
     "\"boolean\"}},\"additionalProperties\":false}",
     1},
    {"bench", "Time commands with statistics and a noise gate",
     "Benchmark one or more commands (no shell: words split as a shell would, without "
     "pipes or variables) and compare them to the first. Returns perfloop.bench/1.",
     "{\"type\":\"object\",\"properties\":{\"commands\":{\"type\":\"array\",\"items\":{"
     "\"type\":\"string\"},\"minItems\":1},\"runs\":{\"type\":\"integer\",\"minimum\":2},"
     "\"max_time\":{\"type\":\"number\",\"exclusiveMinimum\":0,\"description\":\"seconds\"}},"
     "\"required\":[\"commands\"],\"additionalProperties\":false}",
     0},
    {"select", "Choose the one finding to work on",
     "Choose exactly one finding from findings files: algorithm first (SPEC.md section "
     "3). Returns the candidate document.",
     "{\"type\":\"object\",\"properties\":{\"findings\":{\"type\":\"array\",\"items\":{"
     "\"type\":\"string\"},\"minItems\":1}},\"required\":[\"findings\"],"
     "\"additionalProperties\":false}",
     1},
    {"verify", "Accept or reject a change from two benchmark summaries",
     "Compare a before and an after perfloop.bench/1 summary: accept only a quantified "
     "win that passes every rule. Returns perfloop.verdict/1.",
     "{\"type\":\"object\",\"properties\":{\"before\":{\"type\":\"string\"},\"after\":{"
     "\"type\":\"string\"}},\"required\":[\"before\",\"after\"],\"additionalProperties\":"
     "false}",
     1},
    {"status", "The loop's state",
     "The loop's baseline, iterations and verdicts (.perfloop/loop.json).",
     "{\"type\":\"object\",\"properties\":{},\"additionalProperties\":false}", 1},
    {"report", "One report of the loop's evidence",
     "A Markdown report from findings, summaries and verdicts (default: the loop's "
     "evidence).",
     "{\"type\":\"object\",\"properties\":{\"inputs\":{\"type\":\"array\",\"items\":{"
     "\"type\":\"string\"}}},\"additionalProperties\":false}",
     1},
};

static json_t *tool_list(void)
{
	json_t *a = json_array();
	for (size_t i = 0; i < sizeof tools / sizeof tools[0]; i++) {
		json_t *schema = json_loads(tools[i].schema, 0, NULL);
		json_array_append_new(
		    a, json_pack("{s:s, s:s, s:s, s:o, s:{s:b, s:b, s:b}}", "name", tools[i].name,
				 "title", tools[i].title, "description", tools[i].description,
				 "inputSchema", schema ? schema : json_object(), "annotations",
				 "readOnlyHint", tools[i].read_only, "destructiveHint", 0,
				 "openWorldHint", 0));
	}
	return a;
}

/* A tool's result: the document (when the output is JSON) and a text. */
static json_t *tool_result(int rc, char *out, char *errtext, int json_out)
{
	json_t *doc = json_out && out ? json_loads(out, 0, NULL) : NULL;
	struct pl_strbuf t = {0};
	if (rc < 0)
		pl_strbuf_puts(&t, "perfloop could not run or was killed\n");
	else if (rc >= 2)
		pl_strbuf_printf(&t, "exit %d\n", rc);
	if (!doc && out && *out)
		pl_strbuf_puts(&t, out);
	if (errtext && *errtext)
		pl_strbuf_puts(&t, errtext);
	if (doc && !t.s)
		pl_strbuf_puts(&t, "ok (the document is in structuredContent)");
	char *text = pl_strbuf_take(&t);
	json_t *r = json_pack("{s:[{s:s, s:s}], s:b}", "content", "type", "text", "text",
			      text ? text : "", "isError", rc < 0 || rc >= 2);
	free(text);
	if (doc && json_is_object(doc))
		json_object_set_new(r, "structuredContent", doc);
	else
		json_decref(doc);
	return r;
}

static json_t *call_tool(const char *name, json_t *args, const char **bad)
{
	struct argv_b a = {{0}, 0};
	add(&a, "perfloop");
	int json_out = 1;
	*bad = NULL;
	if (args && !json_is_object(args)) {
		*bad = "arguments: expected an object";
		return NULL;
	}
	if (!strcmp(name, "scan")) {
		add(&a, "scan");
		add(&a, "--format");
		add(&a, "json");
		if (json_is_true(json_object_get(args, "advisory")))
			add(&a, "--advisory");
		if (!*bad)
			*bad = add_strings(&a, args, "select", "--select", 0);
		if (!*bad)
			*bad = add_strings(&a, args, "paths", NULL, 1);
	} else if (!strcmp(name, "bench")) {
		add(&a, "bench");
		add(&a, "--json");
		add(&a, "--no-history");
		char runs[32], maxt[32];
		json_t *r = json_object_get(args, "runs"), *m = json_object_get(args, "max_time");
		if (r && (!json_is_integer(r) || json_integer_value(r) < 2)) {
			*bad = "runs: expected an integer >= 2";
		} else if (r) {
			snprintf(runs, sizeof runs, "%lld", (long long)json_integer_value(r));
			add(&a, "-r");
			add(&a, runs);
		}
		if (m && (!json_is_number(m) || json_number_value(m) <= 0)) {
			*bad = "max_time: expected a number > 0";
		} else if (m) {
			snprintf(maxt, sizeof maxt, "%g", json_number_value(m));
			add(&a, "--max-time");
			add(&a, maxt);
		}
		if (!*bad && !json_object_get(args, "commands"))
			*bad = "commands: required";
		json_t *cs = json_object_get(args, "commands");
		size_t i;
		json_t *x;
		json_array_foreach(cs, i, x) /* each a command line, never an option */
		if (json_is_string(x) && json_string_value(x)[0] == '-')
			*bad = "commands: a command cannot start with '-'";
		if (!*bad)
			*bad = add_strings(&a, args, "commands", NULL, 0);
	} else if (!strcmp(name, "select")) {
		add(&a, "select");
		if (!json_object_get(args, "findings"))
			*bad = "findings: required";
		else
			*bad = add_strings(&a, args, "findings", "--findings", 1);
	} else if (!strcmp(name, "verify")) {
		add(&a, "verify");
		add(&a, "--json");
		json_t *b = json_object_get(args, "before"), *f = json_object_get(args, "after");
		if (!json_is_string(b) || !json_is_string(f))
			*bad = "before, after: required strings (summary files)";
		if (!*bad)
			*bad = add_strings(&a, args, "before", "--before", 1);
		if (!*bad)
			*bad = add_strings(&a, args, "after", "--after", 1);
	} else if (!strcmp(name, "status")) {
		add(&a, "status");
		add(&a, "--json");
	} else if (!strcmp(name, "report")) {
		add(&a, "report");
		add(&a, "--format");
		add(&a, "md");
		json_out = 0;
		*bad = add_strings(&a, args, "inputs", NULL, 1);
	} else {
		*bad = "unknown tool (tools/list names them)";
		return NULL;
	}
	if (*bad)
		return NULL;
	char *out, *errtext;
	int rc = run_self(a.v, &out, &errtext);
	json_t *r = tool_result(rc, out, errtext, json_out);
	free(out);
	free(errtext);
	return r;
}

/* ---- the protocol ---- */

static void send_msg(json_t *m)
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

static void send_error(json_t *id, int code, const char *msg)
{
	send_msg(json_pack("{s:s, s:O, s:{s:i, s:s}}", "jsonrpc", "2.0", "id",
			   id ? id : json_null(), "error", "code", code, "message", msg));
}

static void send_result(json_t *id, json_t *result)
{
	send_msg(json_pack("{s:s, s:O, s:o}", "jsonrpc", "2.0", "id", id, "result", result));
}

static const char optimize_prompt[] =
    "You are optimizing this project's performance with perfloop's loop. Rules: "
    "measure first (bench); find the bottleneck (scan, then profile); work on the one "
    "finding select chooses (algorithm first: level 1 before 2 ... before 8; a "
    "high-severity algorithmic finding closes the stop gate; level 7 never while a "
    "level 1-6 finding is open); change one thing; measure again; keep it only when "
    "verify accepts (a p50 gain of at least 5%, neither run noisy, the same machine, "
    "the functional suite passing, no other dimension worse); otherwise revert. Stop "
    "after the iteration bound or when nothing is left to win.";

static void handle(json_t *msg)
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
		send_error(json_is_string(id) || json_is_integer(id) ? id : NULL, -32600,
			   "invalid request");
		return;
	}
	const char *m = json_string_value(method);
	if (!id) /* a notification: initialized, cancelled, ...: nothing to say */
		return;
	json_t *params = json_object_get(msg, "params");
	if (params && !json_is_object(params)) {
		send_error(id, -32602, "params: expected an object");
		return;
	}
	if (!strcmp(m, "initialize")) {
		json_t *v = json_object_get(params, "protocolVersion");
		send_result(id, json_pack("{s:s, s:{s:{}, s:{}, s:{}}, s:{s:s, s:s}, s:s}",
					  "protocolVersion", json_is_string(v) ? json_string_value(v)
									       : PROTOCOL,
					  "capabilities", "tools", "resources", "prompts",
					  "serverInfo", "name", "perfloop", "version",
					  PERFLOOP_VERSION, "instructions", optimize_prompt));
	} else if (!strcmp(m, "ping")) {
		send_result(id, json_object());
	} else if (!strcmp(m, "tools/list")) {
		send_result(id, json_pack("{s:o}", "tools", tool_list()));
	} else if (!strcmp(m, "tools/call")) {
		json_t *name = json_object_get(params, "name");
		if (!json_is_string(name)) {
			send_error(id, -32602, "params.name: expected a tool name");
			return;
		}
		const char *bad;
		json_t *r = call_tool(json_string_value(name), json_object_get(params, "arguments"),
				      &bad);
		if (!r) {
			char msgbuf[300];
			snprintf(msgbuf, sizeof msgbuf, "%s: %s", json_string_value(name), bad);
			send_error(id, -32602, msgbuf);
			return;
		}
		send_result(id, r);
	} else if (!strcmp(m, "resources/list")) {
		json_t *a = json_array();
		static const char *const files[] = {"baseline.json", "loop.json", "checkpoint.json"};
		for (size_t i = 0; i < 3; i++) {
			char path[PATH_MAX + 64];
			snprintf(path, sizeof path, "%s/.perfloop/%s", root, files[i]);
			if (access(path, R_OK) == 0) {
				char uri[128];
				snprintf(uri, sizeof uri, "perfloop://loop/%s", files[i]);
				json_array_append_new(a, json_pack("{s:s, s:s, s:s}", "uri", uri,
								   "name", files[i], "mimeType",
								   "application/json"));
			}
		}
		send_result(id, json_pack("{s:o}", "resources", a));
	} else if (!strcmp(m, "resources/read")) {
		json_t *uri = json_object_get(params, "uri");
		const char *u = json_is_string(uri) ? json_string_value(uri) : "";
		const char *name = !strncmp(u, "perfloop://loop/", 16) ? u + 16 : NULL;
		if (!name || (strcmp(name, "baseline.json") && strcmp(name, "loop.json") &&
			      strcmp(name, "checkpoint.json"))) {
			send_error(id, -32002, "resource not found");
			return;
		}
		char path[PATH_MAX + 64];
		snprintf(path, sizeof path, "%s/.perfloop/%s", root, name);
		FILE *f = fopen(path, "r");
		if (!f) {
			send_error(id, -32002, "resource not found");
			return;
		}
		struct pl_strbuf b = {0};
		char buf[65536];
		size_t n;
		while ((n = fread(buf, 1, sizeof buf, f)) > 0)
			pl_strbuf_append(&b, buf, n);
		fclose(f);
		char *text = pl_strbuf_take(&b);
		send_result(id, json_pack("{s:[{s:s, s:s, s:s}]}", "contents", "uri", u, "mimeType",
					  "application/json", "text", text ? text : ""));
		free(text);
	} else if (!strcmp(m, "prompts/list")) {
		send_result(id, json_pack("{s:[{s:s, s:s}]}", "prompts", "name", "optimize",
					  "description", "the loop's rules, for the agent using the tools"));
	} else if (!strcmp(m, "prompts/get")) {
		json_t *name = json_object_get(params, "name");
		if (!json_is_string(name) || strcmp(json_string_value(name), "optimize")) {
			send_error(id, -32602, "params.name: no such prompt (prompts/list)");
			return;
		}
		send_result(id, json_pack("{s:s, s:[{s:s, s:{s:s, s:s}}]}", "description",
					  "the loop's rules", "messages", "role", "user", "content",
					  "type", "text", "text", optimize_prompt));
	} else {
		send_error(id, -32601, "method not found");
	}
}

int cmd_mcp(int argc, char **argv, const struct pl_ctx *ctx)
{
	(void)ctx;
	for (int i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "-h") || !strcmp(argv[i], "--help")) {
			fputs(cmd_mcp_usage, stdout);
			return PL_EXIT_OK;
		}
		return pl_die(PL_EXIT_USAGE, "mcp: unexpected argument '%s'", argv[i]);
	}
	char cwd[PATH_MAX];
	if (!getcwd(cwd, sizeof cwd) || !realpath(cwd, root))
		return pl_die(PL_EXIT_INTERNAL, "mcp: cannot read the current directory");
	signal(SIGPIPE, SIG_IGN);
	char *line = NULL;
	size_t cap = 0;
	ssize_t n;
	while ((n = getline(&line, &cap, stdin)) >= 0) {
		while (n > 0 && (line[n - 1] == '\n' || line[n - 1] == '\r'))
			line[--n] = '\0';
		if (n == 0)
			continue;
		json_error_t jerr;
		json_t *msg = json_loadb(line, (size_t)n, 0, &jerr);
		if (!msg) {
			send_error(NULL, -32700, "parse error");
			continue;
		}
		if (json_is_array(msg)) /* batches are not part of the current revision */
			send_error(NULL, -32600, "invalid request (batches are not supported)");
		else
			handle(msg);
		json_decref(msg);
	}
	free(line);
	return PL_EXIT_OK;
}
