/*
 * perfloop mcp: the loop's steps as tools a coding agent calls, over the
 * Model Context Protocol (JSON-RPC 2.0, one message per line on stdin and
 * stdout). Each tool runs perfloop itself (this binary) with the matching
 * command and returns its JSON document as structuredContent, with a short
 * text; paths are confined to the directory the server started in. While
 * a tool runs the server keeps reading the client (run_self polls stdin
 * beside the child's output): a cancellation stops the child's process
 * group, a ping is answered, other requests wait their turn in a queue.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <jansson.h>
#include <limits.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "cmd.h"
#include "error.h"
#include "grow.h"
#include "strbuf.h"

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
#define MAX_LINE (16u << 20) /* a longer message is refused, not buffered */

struct pl_schema_file {
	const char *path, *text;
};
extern const struct pl_schema_file pl_schema_files[];

/* The server: where it started, what it has read, and the tool running. */
struct server {
	char root[PATH_MAX];
	char *in; /* bytes read, not yet a whole line */
	size_t inlen, incap;
	int eof;
	json_t *queue; /* requests read while a tool ran, in order */
	json_t *last;  /* tool name -> its last document (perfloop://last/NAME.json) */
	/* the tool being run */
	json_t *run_id;	  /* its request's id */
	json_t *progress; /* its progress token, or NULL */
	unsigned progress_n;
	int cancelled;
};

/* Is path (relative to root, or absolute) inside root? */
static int confined(const struct server *S, const char *path)
{
	char buf[2 * PATH_MAX + 2], real[PATH_MAX];
	if (strlen(path) >= PATH_MAX)
		return 0;
	if (path[0] == '/')
		snprintf(buf, sizeof buf, "%s", path);
	else
		snprintf(buf, sizeof buf, "%s/%s", S->root, path);
	/* a path that does not exist yet: judge its directory */
	if (!realpath(buf, real)) {
		char *slash = strrchr(buf, '/');
		if (!slash)
			return 0;
		*slash = '\0';
		if (!realpath(buf[0] ? buf : "/", real))
			return 0;
	}
	size_t n = strlen(S->root);
	return !strncmp(real, S->root, n) && (real[n] == '\0' || real[n] == '/');
}

/* ---- messages out ---- */

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
		send_error(NULL, -32700, "parse error");
	else if (json_is_array(msg)) /* batches are not part of the current revision */
		send_error(NULL, -32600, "invalid request (batches are not supported)");
	else
		json_array_append(S->queue, msg);
	json_decref(msg);
}

static int grow_in(struct server *S, size_t need)
{
	return pl_grow((void **)&S->in, &S->incap, need, 1, 4096);
}

/* Read what stdin has (it was said readable) into whole messages. */
static void read_input(struct server *S)
{
	char buf[65536];
	ssize_t n = read(0, buf, sizeof buf);
	if (n < 0 && (errno == EINTR || errno == EAGAIN))
		return;
	if (n <= 0) {
		S->eof = 1;
		if (S->inlen)
			take_line(S, S->in, S->inlen);
		S->inlen = 0;
		return;
	}
	size_t from = 0;
	for (size_t i = 0; i < (size_t)n; i++) {
		if (buf[i] != '\n')
			continue;
		if (S->inlen) { /* the rest of a line begun earlier */
			if (grow_in(S, S->inlen + i - from) < 0) {
				S->inlen = 0;
				from = i + 1;
				continue;
			}
			memcpy(S->in + S->inlen, buf + from, i - from);
			take_line(S, S->in, S->inlen + i - from);
			S->inlen = 0;
		} else {
			take_line(S, buf + from, i - from);
		}
		from = i + 1;
	}
	size_t rest = (size_t)n - from;
	if (!rest)
		return;
	if (S->inlen + rest > MAX_LINE) { /* never a message: drop it, say so once */
		if (S->inlen <= MAX_LINE)
			send_error(NULL, -32700, "parse error (a message over 16 MiB)");
		S->inlen = MAX_LINE + 1;
		return;
	}
	if (grow_in(S, S->inlen + rest) < 0)
		return;
	memcpy(S->in + S->inlen, buf + from, rest);
	S->inlen += rest;
}

static int is_method(json_t *msg, const char *m)
{
	json_t *v = json_object_get(msg, "method");
	return json_is_string(v) && !strcmp(json_string_value(v), m);
}

/* Messages that cannot wait for the running tool: a cancellation (of it,
 * or of a request still queued) and ping. */
static void control(struct server *S, pid_t child)
{
	for (size_t i = 0; i < json_array_size(S->queue);) {
		json_t *msg = json_array_get(S->queue, i);
		json_t *id = json_object_get(msg, "id");
		if (is_method(msg, "notifications/cancelled")) {
			json_t *rid = json_object_get(json_object_get(msg, "params"), "requestId");
			if (rid && S->run_id && json_equal(rid, S->run_id) && child > 0 &&
			    !S->cancelled) {
				S->cancelled = 1;
				kill(-child, SIGINT); /* bench, profile: write what they have */
			}
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
		if (child > 0 && is_method(msg, "ping") && (json_is_string(id) || json_is_integer(id))) {
			send_result(id, json_object());
			json_array_remove(S->queue, i);
			continue;
		}
		i++;
	}
}

/* ---- running perfloop ---- */

static void progress(struct server *S, const char *tool, double elapsed, const char *line)
{
	if (!S->progress)
		return;
	char msg[300];
	snprintf(msg, sizeof msg, "%s: %.0f s%s%.200s", tool, elapsed, line && *line ? ": " : "",
		 line ? line : "");
	send_msg(json_pack("{s:s, s:s, s:{s:O, s:i, s:s}}", "jsonrpc", "2.0", "method",
			   "notifications/progress", "params", "progressToken", S->progress,
			   "progress", (int)++S->progress_n, "message", msg));
}

static double now_s(void)
{
	struct timespec t;
	clock_gettime(CLOCK_MONOTONIC, &t);
	return (double)t.tv_sec + (double)t.tv_nsec / 1e9;
}

/* Run this binary with argv (argv[0] a command) in its own process group,
 * collecting stdout and stderr, while still reading the client: a
 * cancellation stops it (SIGINT: it writes what it has; SIGKILL 5 s
 * later), a ping is answered, progress is sent each second. Returns the
 * exit code, -1 if it could not run or was killed. */
static int run_self(struct server *S, const char *tool, char **argv, char **out, char **errtext)
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
		setpgid(0, 0);
		int nul = open("/dev/null", O_RDONLY);
		if (nul >= 0)
			dup2(nul, 0);
		dup2(po[1], 1);
		dup2(pe[1], 2);
		if (chdir(S->root) != 0)
			_exit(126);
		execv("/proc/self/exe", argv);
		_exit(127);
	}
	if (pid > 0)
		setpgid(pid, pid); /* either side may win the race */
	close(po[1]);
	close(pe[1]);
	struct pl_strbuf bo = {0}, be = {0};
	struct pollfd fds[3] = {{po[0], POLLIN, 0}, {pe[0], POLLIN, 0}, {0, POLLIN, 0}};
	int open_fds = pid > 0 ? 2 : 0;
	double start = now_s(), last_progress = start, kill_at = 0;
	char lastline[256] = "";
	while (open_fds) {
		fds[2].fd = S->eof ? -1 : 0;
		int r = poll(fds, 3, 250);
		if (r < 0 && errno != EINTR)
			break;
		for (int i = 0; i < 2; i++) {
			if (fds[i].fd < 0 || !(fds[i].revents & (POLLIN | POLLHUP | POLLERR)))
				continue;
			char buf[65536];
			ssize_t n = read(fds[i].fd, buf, sizeof buf);
			if (n > 0) {
				pl_strbuf_append(i ? &be : &bo, buf, (size_t)n);
				if (i) { /* the last line it said, for progress */
					size_t e = (size_t)n;
					while (e > 0 && (buf[e - 1] == '\n' || buf[e - 1] == '\r'))
						e--;
					size_t b = e;
					while (b > 0 && buf[b - 1] != '\n' && buf[b - 1] != '\r')
						b--;
					if (e > b)
						snprintf(lastline, sizeof lastline, "%.*s", (int)(e - b),
							 buf + b);
				}
			} else {
				close(fds[i].fd);
				fds[i].fd = -1;
				open_fds--;
			}
		}
		if (fds[2].fd >= 0 && (fds[2].revents & (POLLIN | POLLHUP | POLLERR))) {
			read_input(S);
			int was = S->cancelled;
			control(S, pid);
			if (S->cancelled && !was)
				kill_at = now_s() + 5;
		}
		double t = now_s();
		if (kill_at && t > kill_at) {
			kill(-pid, SIGKILL);
			kill_at = 0;
		}
		if (t - last_progress >= 1.0) {
			progress(S, tool, t - start, lastline);
			last_progress = t;
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
	char store[8][64]; /* numbers formatted for it */
	int nstore;
};

static void add(struct argv_b *a, const char *s)
{
	if (a->n < 254)
		a->v[a->n++] = (char *)s;
	a->v[a->n] = NULL;
}

static const char *add_num(struct argv_b *a, const char *fmt, double v)
{
	if (a->nstore == 8)
		return "";
	char *s = a->store[a->nstore++];
	if (!strcmp(fmt, "%lld"))
		snprintf(s, 64, "%lld", (long long)v);
	else
		snprintf(s, 64, "%g", v);
	return s;
}

/* string or array of strings at key: each added after opt (NULL: bare) */
static const char *add_strings(const struct server *S, struct argv_b *a, json_t *args,
			       const char *key, const char *opt, int paths)
{
	json_t *v = json_object_get(args, key);
	if (!v)
		return NULL;
	if (json_is_string(v)) {
		if (paths && !confined(S, json_string_value(v)))
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
		if (paths && !confined(S, json_string_value(x)))
			return "a path outside the project";
		if (opt)
			add(a, opt);
		add(a, json_string_value(x));
	}
	return NULL;
}

/* A number at key, within [lo, hi], after opt; "" when absent. */
static const char *add_number(struct argv_b *a, json_t *args, const char *key, const char *opt,
			      double lo, double hi, int integer)
{
	json_t *v = json_object_get(args, key);
	if (!v)
		return NULL;
	if (!(integer ? json_is_integer(v) : json_is_number(v)) || json_number_value(v) < lo ||
	    json_number_value(v) > hi)
		return integer ? "expected an integer in range" : "expected a number in range";
	add(a, opt);
	add(a, add_num(a, integer ? "%lld" : "%g", json_number_value(v)));
	return NULL;
}

static void add_flag(struct argv_b *a, json_t *args, const char *key, const char *opt)
{
	if (json_is_true(json_object_get(args, key)))
		add(a, opt);
}

enum { RO = 1, DESTRUCTIVE = 2, IDEMPOTENT = 4 };

struct tool {
	const char *name, *title, *description, *schema; /* schema: JSON text */
	const char *output; /* docs/schemas/NAME.schema.json, a schema's text, or NULL */
	int hints;
};

#define STR_ARRAY "{\"type\":\"array\",\"items\":{\"type\":\"string\"}"

static const struct tool tools[] = {
    {"scan", "Scan source for performance anti-patterns",
     "Find known performance anti-patterns in Python/PyTorch and C source (perfloop "
     "scan). Returns perfloop.findings/1.",
     "{\"type\":\"object\",\"properties\":{\"paths\":" STR_ARRAY
     ",\"description\":\"files or directories (default: the project)\"},"
     "\"select\":" STR_ARRAY "},\"advisory\":{\"type\":\"boolean\"}},"
     "\"additionalProperties\":false}",
     "findings-1", RO | IDEMPOTENT},
    {"bench", "Time commands with statistics and a noise gate",
     "Benchmark one or more commands (no shell: words split as a shell would, without "
     "pipes or variables) and compare them to the first. Sends progress; cancelled, it "
     "stops the command and keeps what was measured (perfloop://last/bench.json). "
     "Returns perfloop.bench/1.",
     "{\"type\":\"object\",\"properties\":{\"commands\":" STR_ARRAY ",\"minItems\":1},"
     "\"runs\":{\"type\":\"integer\",\"minimum\":2},"
     "\"max_time\":{\"type\":\"number\",\"exclusiveMinimum\":0,\"description\":\"seconds\"}},"
     "\"required\":[\"commands\"],\"additionalProperties\":false}",
     "bench-1", RO},
    {"profile", "Sample where a program spends its time",
     "Profile a command (argv, no shell) or a running process for a bounded duration "
     "(perfloop profile: Python, native or mixed stacks). Writes the flame graph "
     "(perfloop://profile/last.svg) and returns the hot-function findings "
     "(perfloop.findings/1) with the top table as text.",
     "{\"type\":\"object\",\"properties\":{\"command\":" STR_ARRAY ",\"minItems\":1},"
     "\"pid\":{\"type\":\"integer\",\"minimum\":1},"
     "\"duration\":{\"type\":\"number\",\"exclusiveMinimum\":0,\"maximum\":600,"
     "\"description\":\"seconds\"},\"rate\":{\"type\":\"number\",\"minimum\":1,"
     "\"maximum\":20000},\"mode\":{\"enum\":[\"auto\",\"python\",\"native\",\"mixed\"]},"
     "\"idle\":{\"type\":\"boolean\"},\"gil\":{\"type\":\"boolean\"},"
     "\"subprocesses\":{\"type\":\"boolean\"}},\"required\":[\"duration\"],"
     "\"additionalProperties\":false}",
     "findings-1", RO},
    {"select", "Choose the one finding to work on",
     "Choose exactly one finding from findings files: algorithm first (SPEC.md section "
     "3). Returns the candidate document.",
     "{\"type\":\"object\",\"properties\":{\"findings\":" STR_ARRAY ",\"minItems\":1}},"
     "\"required\":[\"findings\"],\"additionalProperties\":false}",
     "{\"type\":\"object\",\"required\":[\"status\"],\"properties\":{\"status\":{\"enum\":"
     "[\"ok\",\"no_candidates\"]},\"candidate\":{\"type\":\"object\"}}}",
     RO | IDEMPOTENT},
    {"verify", "Accept or reject a change from two benchmark summaries",
     "Compare a before and an after perfloop.bench/1 summary: accept only a quantified "
     "win that passes every rule. Returns perfloop.verdict/1.",
     "{\"type\":\"object\",\"properties\":{\"before\":{\"type\":\"string\"},\"after\":{"
     "\"type\":\"string\"},\"min_gain\":{\"type\":\"number\",\"minimum\":0,"
     "\"exclusiveMaximum\":1}},\"required\":[\"before\",\"after\"],"
     "\"additionalProperties\":false}",
     "verdict-1", RO | IDEMPOTENT},
    {"baseline", "Start the loop: measure the benchmarks and take a checkpoint",
     "Measure each benchmark command (and run the functional suite), store the baseline "
     "in .perfloop/baseline.json and take a checkpoint of the working tree (perfloop "
     "baseline). Returns the baseline (perfloop.bench/1).",
     "{\"type\":\"object\",\"properties\":{\"benches\":" STR_ARRAY ",\"minItems\":1},"
     "\"names\":" STR_ARRAY "},\"suite\":{\"type\":\"string\"},"
     "\"runs\":{\"type\":\"integer\",\"minimum\":3},"
     "\"max_iterations\":{\"type\":\"integer\",\"minimum\":1},"
     "\"min_gain\":{\"type\":\"number\",\"minimum\":0,\"exclusiveMaximum\":1},"
     "\"timeout\":{\"type\":\"number\",\"exclusiveMinimum\":0}},"
     "\"required\":[\"benches\"],\"additionalProperties\":false}",
     "bench-1", 0},
    {"try", "One turn of the loop: measure the change, keep or revert it",
     "After one change: run the suite and the baseline's benchmarks, verify; accept "
     "commits exactly the touched files with the ledger line, reject reverts them "
     "(perfloop try). Returns the turn and its verdict.",
     "{\"type\":\"object\",\"properties\":{\"message\":{\"type\":\"string\"},"
     "\"continue\":{\"type\":\"boolean\"}},\"additionalProperties\":false}",
     "{\"type\":\"object\",\"required\":[\"turn\",\"iteration\"],\"properties\":{\"turn\":"
     "{\"type\":[\"object\",\"null\"]},\"iteration\":{\"type\":\"integer\"},\"verdict\":"
     "{\"type\":\"object\"}}}",
     DESTRUCTIVE},
    {"checkpoint", "Record the working tree before a change",
     "Record every tracked and untracked, non-ignored path as it is, without touching "
     "the tree or the index (perfloop checkpoint). Returns the checkpoint document.",
     "{\"type\":\"object\",\"properties\":{},\"additionalProperties\":false}",
     "{\"type\":\"object\",\"required\":[\"schema\",\"entries\"],\"properties\":{\"schema\":"
     "{\"type\":\"string\"},\"entries\":{\"type\":\"array\"}}}",
     0},
    {"revert", "Undo the change made since the checkpoint",
     "Restore every path that differs from the checkpoint and remove what was created "
     "(perfloop revert); dry_run only says what it would do.",
     "{\"type\":\"object\",\"properties\":{\"dry_run\":{\"type\":\"boolean\"}},"
     "\"additionalProperties\":false}",
     "{\"type\":\"object\",\"required\":[\"restored\",\"created\"],\"properties\":{"
     "\"restored\":{\"type\":\"array\"},\"created\":{\"type\":\"array\"},\"dry_run\":{"
     "\"type\":\"boolean\"}}}",
     DESTRUCTIVE | IDEMPOTENT},
    {"status", "The loop's state",
     "The loop's baseline, iterations and verdicts (.perfloop/loop.json).",
     "{\"type\":\"object\",\"properties\":{},\"additionalProperties\":false}",
     "{\"type\":\"object\",\"required\":[\"schema\"],\"properties\":{\"schema\":{\"const\":"
     "\"perfloop.loop/1\"},\"turns\":{\"type\":\"array\"}}}",
     RO | IDEMPOTENT},
    {"history", "Past runs of each benchmark, and regressions",
     "The benchmark history kept by bench and the loop (perfloop history): list the "
     "benchmarks, show one's runs, or find regressions between comparable runs.",
     "{\"type\":\"object\",\"properties\":{\"action\":{\"enum\":[\"list\",\"show\","
     "\"regressions\"]},\"name\":{\"type\":\"string\"}},\"required\":[\"action\"],"
     "\"additionalProperties\":false}",
     NULL, RO | IDEMPOTENT},
    {"report", "One report of the loop's evidence",
     "A Markdown report from findings, summaries and verdicts (default: the loop's "
     "evidence).",
     "{\"type\":\"object\",\"properties\":{\"inputs\":" STR_ARRAY "}},"
     "\"additionalProperties\":false}",
     NULL, RO | IDEMPOTENT},
};

/* An output schema: perfloop's own, without the keys that name its draft
 * and id (a client validates it as a plain schema). */
static json_t *output_schema(const char *name)
{
	if (name[0] == '{') /* written here: a document without a schema file */
		return json_loads(name, 0, NULL);
	char path[128];
	snprintf(path, sizeof path, "docs/schemas/%s.schema.json", name);
	for (size_t i = 0; pl_schema_files[i].path; i++)
		if (!strcmp(pl_schema_files[i].path, path)) {
			json_t *s = json_loads(pl_schema_files[i].text, 0, NULL);
			if (s) {
				json_object_del(s, "$schema");
				json_object_del(s, "$id");
			}
			return s;
		}
	return NULL;
}

static json_t *tool_list(void)
{
	json_t *a = json_array();
	for (size_t i = 0; i < sizeof tools / sizeof tools[0]; i++) {
		const struct tool *t = &tools[i];
		json_t *schema = json_loads(t->schema, 0, NULL);
		json_t *o = json_pack(
		    "{s:s, s:s, s:s, s:o, s:{s:s, s:b, s:b, s:b, s:b}}", "name", t->name, "title",
		    t->title, "description", t->description, "inputSchema",
		    schema ? schema : json_object(), "annotations", "title", t->title,
		    "readOnlyHint", (t->hints & RO) != 0, "destructiveHint",
		    (t->hints & DESTRUCTIVE) != 0, "idempotentHint", (t->hints & IDEMPOTENT) != 0,
		    "openWorldHint", 0);
		json_t *out = t->output ? output_schema(t->output) : NULL;
		if (out)
			json_object_set_new(o, "outputSchema", out);
		json_array_append_new(a, o);
	}
	return a;
}

static json_t *load_file(const struct server *S, const char *rel)
{
	char path[PATH_MAX + 64];
	snprintf(path, sizeof path, "%s/%s", S->root, rel);
	return json_load_file(path, 0, NULL);
}

/* A tool's result: the document and a text. A tool whose output schema
 * promises a document and has none (baseline refusing a noisy
 * measurement) failed as far as its caller can tell: isError. */
static json_t *tool_result(int rc, const char *out, const char *errtext, json_t *doc,
			   int promised)
{
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
			      text ? text : "", "isError",
			      rc < 0 || rc >= 2 || (promised && !json_is_object(doc)));
	free(text);
	if (doc && json_is_object(doc))
		json_object_set(r, "structuredContent", doc);
	return r;
}

/* The arguments of tool name into a perfloop command line (a), or a
 * complaint about them. json_out: the command prints its document. */
static const char *build(struct server *S, const char *name, json_t *args, struct argv_b *a,
			 int *json_out)
{
	const char *bad = NULL;
	*json_out = 1;
	if (!strcmp(name, "scan")) {
		add(a, "scan");
		add(a, "--format");
		add(a, "json");
		add_flag(a, args, "advisory", "--advisory");
		if (!(bad = add_strings(S, a, args, "select", "--select", 0)))
			bad = add_strings(S, a, args, "paths", NULL, 1);
	} else if (!strcmp(name, "bench")) {
		add(a, "bench");
		add(a, "--json");
		add(a, "--no-history");
		if ((bad = add_number(a, args, "runs", "--runs", 2, 1e9, 1)) ||
		    (bad = add_number(a, args, "max_time", "--max-time", 1e-9, 1e9, 0)))
			return bad;
		json_t *cs = json_object_get(args, "commands");
		if (!json_is_array(cs) || !json_array_size(cs))
			return "commands: required, an array of command lines";
		size_t i;
		json_t *x;
		json_array_foreach(cs, i, x) /* each a command line, never an option */
		if (json_is_string(x) && json_string_value(x)[0] == '-')
			return "commands: a command cannot start with '-'";
		bad = add_strings(S, a, args, "commands", NULL, 0);
	} else if (!strcmp(name, "profile")) {
		json_t *cmd = json_object_get(args, "command"), *pid = json_object_get(args, "pid");
		json_t *mode = json_object_get(args, "mode");
		if (!json_is_number(json_object_get(args, "duration")))
			return "duration: required (seconds, at most 600)";
		if (!!cmd == !!pid)
			return "one of command (an argv array) or pid";
		if (mode && (!json_is_string(mode) ||
			     !strstr(" auto python native mixed ", json_string_value(mode)) ||
			     strchr(json_string_value(mode), ' ') || !*json_string_value(mode)))
			return "mode: auto, python, native or mixed";
		char dir[PATH_MAX + 32];
		snprintf(dir, sizeof dir, "%s/.perfloop", S->root);
		mkdir(dir, 0777);
		snprintf(dir, sizeof dir, "%s/.perfloop/mcp", S->root);
		mkdir(dir, 0777);
		add(a, "profile");
		add(a, "-o");
		add(a, ".perfloop/mcp/profile");
		add(a, "--format");
		add(a, "folded,svg,findings");
		if ((bad = add_number(a, args, "duration", "--duration", 1e-3, 600, 0)) ||
		    (bad = add_number(a, args, "rate", "--rate", 1, 20000, 0)) ||
		    (bad = add_number(a, args, "pid", "--pid", 1, 4194304, 1)))
			return bad;
		if (mode) {
			add(a, "--mode");
			add(a, json_string_value(mode));
		}
		add_flag(a, args, "idle", "--idle");
		add_flag(a, args, "gil", "--gil");
		add_flag(a, args, "subprocesses", "--subprocesses");
		if (cmd) {
			if (!json_is_array(cmd) || !json_array_size(cmd))
				return "command: an argv array";
			add(a, "--");
			bad = add_strings(S, a, args, "command", NULL, 0);
		}
		*json_out = 0;
	} else if (!strcmp(name, "select")) {
		add(a, "select");
		if (!json_object_get(args, "findings"))
			return "findings: required";
		bad = add_strings(S, a, args, "findings", "--findings", 1);
	} else if (!strcmp(name, "verify")) {
		add(a, "verify");
		add(a, "--json");
		if (!json_is_string(json_object_get(args, "before")) ||
		    !json_is_string(json_object_get(args, "after")))
			return "before, after: required strings (summary files)";
		if (!(bad = add_strings(S, a, args, "before", "--before", 1)) &&
		    !(bad = add_strings(S, a, args, "after", "--after", 1)))
			bad = add_number(a, args, "min_gain", "--min-gain", 0, 0.999999, 0);
	} else if (!strcmp(name, "baseline")) {
		add(a, "baseline");
		json_t *bs = json_object_get(args, "benches");
		json_t *names = json_object_get(args, "names");
		if (!json_is_array(bs) || !json_array_size(bs))
			return "benches: required, an array of command lines";
		if (names && (!json_is_array(names) || json_array_size(names) > json_array_size(bs)))
			return "names: an array, one per bench at most";
		for (size_t i = 0; i < json_array_size(bs); i++) {
			json_t *n = json_array_get(names, i), *b = json_array_get(bs, i);
			if ((n && !json_is_string(n)) || !json_is_string(b))
				return "benches, names: strings";
			if (n) {
				add(a, "--name");
				add(a, json_string_value(n));
			}
			add(a, "--bench");
			add(a, json_string_value(b));
		}
		json_t *suite = json_object_get(args, "suite");
		if (suite && !json_is_string(suite))
			return "suite: a command line";
		if (suite) {
			add(a, "--suite");
			add(a, json_string_value(suite));
		}
		if ((bad = add_number(a, args, "runs", "--runs", 3, 1e9, 1)) ||
		    (bad = add_number(a, args, "max_iterations", "--max-iterations", 1, 1e6, 1)) ||
		    (bad = add_number(a, args, "min_gain", "--min-gain", 0, 0.999999, 0)))
			return bad;
		bad = add_number(a, args, "timeout", "--timeout", 1e-3, 1e9, 0);
		*json_out = 0;
	} else if (!strcmp(name, "try")) {
		add(a, "try");
		json_t *m = json_object_get(args, "message");
		if (m && !json_is_string(m))
			return "message: a string";
		if (m) {
			add(a, "--message");
			add(a, json_string_value(m));
		}
		add_flag(a, args, "continue", "--continue");
		*json_out = 0;
	} else if (!strcmp(name, "checkpoint")) {
		add(a, "checkpoint");
		add(a, "--json");
	} else if (!strcmp(name, "revert")) {
		add(a, "revert");
		add(a, "--json");
		add_flag(a, args, "dry_run", "--dry-run");
	} else if (!strcmp(name, "status")) {
		add(a, "status");
		add(a, "--json");
	} else if (!strcmp(name, "history")) {
		json_t *act = json_object_get(args, "action"), *n = json_object_get(args, "name");
		const char *v = json_is_string(act) ? json_string_value(act) : "";
		if (strcmp(v, "list") && strcmp(v, "show") && strcmp(v, "regressions"))
			return "action: list, show or regressions";
		if (!strcmp(v, "show") && !json_is_string(n))
			return "name: the benchmark to show";
		add(a, "history");
		add(a, v);
		if (!strcmp(v, "show"))
			add(a, json_string_value(n));
		*json_out = 0;
	} else if (!strcmp(name, "report")) {
		add(a, "report");
		add(a, "--format");
		add(a, "md");
		*json_out = 0;
		bad = add_strings(S, a, args, "inputs", NULL, 1);
	} else {
		return "unknown tool (tools/list names them)";
	}
	return bad;
}

/* The document of a tool that writes files rather than printing it. */
static json_t *written_doc(struct server *S, const char *name)
{
	if (!strcmp(name, "baseline"))
		return load_file(S, ".perfloop/baseline.json");
	if (!strcmp(name, "profile"))
		return load_file(S, ".perfloop/mcp/profile.findings.json");
	if (!strcmp(name, "try")) { /* the turn, and its verdict where one was kept */
		json_t *loop = load_file(S, ".perfloop/loop.json");
		json_t *turns = json_object_get(loop, "turns");
		json_t *turn = json_array_get(turns, json_array_size(turns) - 1);
		json_t *doc = json_pack("{s:O, s:O, s:O}", "turn", turn ? turn : json_null(),
					"iteration", json_object_get(loop, "iteration"), "done",
					json_object_get(loop, "done") ? json_object_get(loop, "done")
								      : json_false());
		const char *ev = json_string_value(json_object_get(turn, "evidence"));
		size_t n = ev ? strlen(ev) : 0;
		if (n > 5 && n < 200 && !strcmp(ev + n - 5, ".json")) {
			char v[256];
			snprintf(v, sizeof v, "%.*s.verdict.json", (int)(n - 5), ev);
			json_t *vd = load_file(S, v);
			if (vd)
				json_object_set_new(doc, "verdict", vd);
		}
		json_decref(loop);
		return doc;
	}
	return NULL;
}

static int promises_doc(const char *name)
{
	for (size_t i = 0; i < sizeof tools / sizeof tools[0]; i++)
		if (!strcmp(tools[i].name, name))
			return tools[i].output != NULL;
	return 0;
}

/* tools/call: the result, or NULL with *bad (then a JSON-RPC error). A
 * cancelled call returns NULL with *bad NULL: no answer is sent. */
static json_t *call_tool(struct server *S, const char *name, json_t *args, const char **bad)
{
	struct argv_b a = {0};
	add(&a, "perfloop");
	int json_out;
	*bad = NULL;
	if (args && !json_is_object(args)) {
		*bad = "arguments: expected an object";
		return NULL;
	}
	if ((*bad = build(S, name, args, &a, &json_out)))
		return NULL;
	char *out, *errtext;
	int rc = run_self(S, name, a.v, &out, &errtext);
	json_t *doc = json_out && out ? json_loads(out, 0, NULL) : NULL;
	if (!doc && rc >= 0 && rc < 2)
		doc = written_doc(S, name);
	if (doc && json_is_object(doc))
		json_object_set(S->last, name, doc);
	json_t *r = NULL;
	if (!S->cancelled)
		r = tool_result(rc, out, errtext, doc, promises_doc(name));
	json_decref(doc);
	free(out);
	free(errtext);
	return r;
}

/* ---- resources ---- */

struct resource {
	char uri[160];
	char path[PATH_MAX + 64]; /* the file; "" for a document in memory */
	const char *mime;
};

/* What uri names, if it is one of the loop's: 0, or -1. */
static int resource_of(struct server *S, const char *u, struct resource *r)
{
	snprintf(r->uri, sizeof r->uri, "%s", u);
	r->path[0] = '\0';
	r->mime = "application/json";
	if (!strncmp(u, "perfloop://last/", 16)) {
		char name[64];
		const char *n = u + 16, *dot = strstr(n, ".json");
		if (!dot || dot[5] || dot - n >= (long)sizeof name)
			return -1;
		snprintf(name, sizeof name, "%.*s", (int)(dot - n), n);
		return json_object_get(S->last, name) ? 0 : -1;
	}
	if (!strcmp(u, "perfloop://profile/last.svg") || !strcmp(u, "perfloop://profile/last.folded") ||
	    !strcmp(u, "perfloop://profile/last.findings.json")) {
		const char *ext = u + strlen("perfloop://profile/last");
		snprintf(r->path, sizeof r->path, "%s/.perfloop/mcp/profile%s", S->root, ext);
		r->mime = !strcmp(ext, ".svg")	    ? "image/svg+xml"
			  : !strcmp(ext, ".folded") ? "text/plain"
						    : "application/json";
		return access(r->path, R_OK);
	}
	if (!strcmp(u, "perfloop://loop/ledger.jsonl")) {
		json_t *loop = load_file(S, ".perfloop/loop.json");
		const char *l = json_string_value(json_object_get(loop, "ledger"));
		int ok = l && confined(S, l);
		if (ok)
			snprintf(r->path, sizeof r->path, "%s/%s", S->root, l);
		json_decref(loop);
		r->mime = "application/x-ndjson";
		return ok ? access(r->path, R_OK) : -1;
	}
	if (strncmp(u, "perfloop://loop/", 16))
		return -1;
	const char *n = u + 16;
	size_t len = strlen(n);
	if (!len || len > 100 || n[0] == '.' || len < 6 || strcmp(n + len - 5, ".json") ||
	    strspn(n, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_.-") != len)
		return -1;
	if (snprintf(r->path, sizeof r->path, "%s/.perfloop/%s", S->root, n) >=
	    (int)sizeof r->path)
		return -1;
	return access(r->path, R_OK);
}

static json_t *resource_list(struct server *S)
{
	json_t *a = json_array();
	struct pl_strbuf names = {0};
	char dir[PATH_MAX + 32];
	snprintf(dir, sizeof dir, "%s/.perfloop", S->root);
	DIR *d = opendir(dir);
	struct dirent *e;
	while (d && (e = readdir(d))) { /* the loop's documents and verdicts */
		size_t n = strlen(e->d_name);
		if (n > 5 && e->d_name[0] != '.' && !strcmp(e->d_name + n - 5, ".json"))
			pl_strbuf_printf(&names, "perfloop://loop/%s\n", e->d_name);
	}
	if (d)
		closedir(d);
	pl_strbuf_puts(&names, "perfloop://loop/ledger.jsonl\nperfloop://profile/last.svg\n"
			       "perfloop://profile/last.folded\nperfloop://profile/last.findings.json\n");
	const char *k;
	json_t *v;
	json_object_foreach(S->last, k, v) pl_strbuf_printf(&names, "perfloop://last/%s.json\n", k);
	char *all = pl_strbuf_take(&names);
	for (char *line = all, *nl; line && (nl = strchr(line, '\n')); line = nl + 1) {
		*nl = '\0';
		struct resource r;
		if (resource_of(S, line, &r) == 0)
			json_array_append_new(a, json_pack("{s:s, s:s, s:s}", "uri", r.uri, "name",
							   strrchr(r.uri, '/') + 1, "mimeType",
							   r.mime));
	}
	free(all);
	return a;
}

static void resource_read(struct server *S, json_t *id, json_t *params)
{
	json_t *uri = json_object_get(params, "uri");
	struct resource r;
	if (!json_is_string(uri) || resource_of(S, json_string_value(uri), &r) < 0) {
		send_error(id, -32002, "resource not found");
		return;
	}
	char *text = NULL;
	if (!r.path[0]) {
		const char *n = r.uri + 16;
		char name[64];
		snprintf(name, sizeof name, "%.*s", (int)(strstr(n, ".json") - n), n);
		text = json_dumps(json_object_get(S->last, name), JSON_INDENT(1));
	} else {
		FILE *f = fopen(r.path, "r");
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
		text = pl_strbuf_take(&b);
	}
	send_result(id, json_pack("{s:[{s:s, s:s, s:s}]}", "contents", "uri", r.uri, "mimeType",
				  r.mime, "text", text ? text : ""));
	free(text);
}

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
		send_error(json_is_string(id) || json_is_integer(id) ? id : NULL, -32600,
			   "invalid request");
		return;
	}
	const char *m = json_string_value(method);
	if (!id) /* a notification: initialized, cancelled (control()), ...: nothing to say */
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
		S->run_id = id;
		S->progress = json_object_get(json_object_get(params, "_meta"), "progressToken");
		if (S->progress && !json_is_string(S->progress) && !json_is_integer(S->progress))
			S->progress = NULL;
		S->progress_n = 0;
		S->cancelled = 0;
		json_t *r = call_tool(S, json_string_value(name),
				      json_object_get(params, "arguments"), &bad);
		S->run_id = S->progress = NULL;
		if (r) {
			send_result(id, r);
		} else if (bad) {
			char msgbuf[300];
			snprintf(msgbuf, sizeof msgbuf, "%s: %s", json_string_value(name), bad);
			send_error(id, -32602, msgbuf);
		} /* else cancelled: no answer (the client has moved on) */
	} else if (!strcmp(m, "resources/list")) {
		send_result(id, json_pack("{s:o}", "resources", resource_list(S)));
	} else if (!strcmp(m, "resources/read")) {
		resource_read(S, id, params);
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
	struct server *S = calloc(1, sizeof *S);
	char cwd[PATH_MAX];
	if (!S || !getcwd(cwd, sizeof cwd) || !realpath(cwd, S->root))
		return pl_die(PL_EXIT_INTERNAL, "mcp: cannot read the current directory");
	S->queue = json_array();
	S->last = json_object();
	signal(SIGPIPE, SIG_IGN);
	for (;;) {
		if (json_array_size(S->queue)) {
			json_t *msg = json_incref(json_array_get(S->queue, 0));
			json_array_remove(S->queue, 0);
			if (is_method(msg, "notifications/cancelled"))
				control(S, 0); /* of nothing running: nothing to do */
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
		read_input(S);
		control(S, 0); /* a cancellation of a request still queued */
	}
	json_decref(S->queue);
	json_decref(S->last);
	free(S->in);
	free(S);
	return PL_EXIT_OK;
}
