/*
 * perfloop mcp's tools: the table (each tool's schemas and the hints a
 * client may act on unasked, true of its worst call), the arguments of a
 * call checked and turned into a perfloop command line (values as
 * "--option=VALUE", operands after "--", paths confined to the project),
 * and the call itself: run (mcp_run.c), its document read back, and the
 * result with its text.
 */
#include "mcp_int.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "strbuf.h"

struct pl_schema_file {
	const char *path, *text;
};
extern const struct pl_schema_file pl_schema_files[];

/* A command line being built. Each element is one argv entry, so a value
 * is never split; owned[] are the ones formatted here. */
struct argv_b {
	char *v[256];
	int n;
	int full; /* an element did not fit: the call is refused */
	char *owned[256];
	int nowned;
};

static void add(struct argv_b *a, const char *s)
{
	/* one argv string is at most 128 KiB to exec (MAX_ARG_STRLEN): a
	 * longer one made the call "exit 127" */
	if (a->n < 254 && s && strlen(s) < 65536)
		a->v[a->n++] = (char *)s;
	else
		a->full = 1;
	a->v[a->n] = NULL;
}

static void argv_b_release(struct argv_b *a)
{
	for (int i = 0; i < a->nowned; i++)
		free(a->owned[i]);
	a->nowned = 0;
}

/* "OPT=VALUE" as one element: an option's value, whatever it starts with
 * (an option and its value as two elements would do for getopt, but not
 * for main's --color, which takes "--color=..." from anywhere before
 * "--"). */
static void add_opt(struct argv_b *a, const char *opt, const char *value)
{
	char *s = NULL;
	if (a->nowned < 256 && asprintf(&s, "%s=%s", opt, value) >= 0)
		a->owned[a->nowned++] = s;
	else
		s = NULL;
	add(a, s);
}

/* A string or an array of strings at key: each one after "OPT=" when opt
 * is given, else as operands (the caller has added "--" before them).
 * paths: each a path in the project (mcp_project_path), passed as resolved. */
static const char *add_strings(const struct server *S, struct argv_b *a, json_t *args,
			       const char *key, const char *opt, int paths)
{
	json_t *v = json_object_get(args, key), *one = NULL;
	if (!v)
		return NULL;
	if (json_is_string(v)) {
		one = json_array();
		json_array_append(one, v);
		v = one;
	}
	if (!json_is_array(v))
		return "expected a string or an array of strings";
	size_t i;
	json_t *x;
	const char *bad = NULL;
	json_array_foreach(v, i, x)
	{
		char rel[PATH_MAX];
		const char *s = json_string_value(x);
		if (!s) {
			bad = "expected strings";
			break;
		}
		if (paths && (bad = mcp_project_path(S, s, rel, sizeof rel)))
			break;
		if (paths) {
			char *d = strdup(rel);
			if (!d || a->nowned == 256) {
				free(d);
				bad = "too many arguments";
				break;
			}
			a->owned[a->nowned++] = d;
			s = d;
		}
		if (opt)
			add_opt(a, opt, s);
		else
			add(a, s);
	}
	json_decref(one);
	return bad;
}

/* A number at key, within [lo, hi], as "OPT=N"; nothing when absent. */
static const char *add_number(struct argv_b *a, json_t *args, const char *key, const char *opt,
			      double lo, double hi, int integer)
{
	json_t *v = json_object_get(args, key);
	if (!v)
		return NULL;
	if (!(integer ? json_is_integer(v) : json_is_number(v)) || json_number_value(v) < lo ||
	    json_number_value(v) > hi)
		return integer ? "expected an integer in range" : "expected a number in range";
	char num[64];
	if (integer)
		snprintf(num, sizeof num, "%lld", (long long)json_integer_value(v));
	else
		snprintf(num, sizeof num, "%.15g", json_number_value(v));
	add_opt(a, opt, num);
	return NULL;
}

static void add_flag(struct argv_b *a, json_t *args, const char *key, const char *opt)
{
	if (json_is_true(json_object_get(args, key)))
		add(a, opt);
}

/* A tool's annotations, which a client may use to run it unasked (a
 * read-only tool) and so must be true of the worst call of it:
 * RO           changes nothing (scan's cache in .perfloop/cache aside)
 * DESTRUCTIVE  may overwrite or delete: runs a command the client gives,
 *              or replaces the loop's state or the user's files
 * IDEMPOTENT   a second identical call changes nothing more
 * OPEN         runs commands or reads processes beyond the project
 * STATEFUL     (not an annotation) cancelled, it is asked to stop, never
 *              killed: see mcp_run_self */
enum { RO = 1, DESTRUCTIVE = 2, IDEMPOTENT = 4, OPEN = 8, STATEFUL = 16 };

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
     "pipes or variables) and compare them to the first. Runs each command as given, "
     "repeatedly: whatever the command does, it does. Sends progress; cancelled, it "
     "stops the command and keeps what was measured (perfloop://last/bench.json). "
     "Returns perfloop.bench/1.",
     "{\"type\":\"object\",\"properties\":{\"commands\":" STR_ARRAY ",\"minItems\":1},"
     "\"runs\":{\"type\":\"integer\",\"minimum\":2},"
     "\"max_time\":{\"type\":\"number\",\"exclusiveMinimum\":0,\"description\":\"seconds\"}},"
     "\"required\":[\"commands\"],\"additionalProperties\":false}",
     "bench-1", DESTRUCTIVE | OPEN},
    {"profile", "Sample where a program spends its time",
     "Profile a command (argv, no shell: it runs as given) or a running process for a "
     "bounded duration "
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
     "findings-1", DESTRUCTIVE | OPEN},
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
     "bench-1", DESTRUCTIVE | OPEN | STATEFUL},
    {"try", "One turn of the loop: measure the change, keep or revert it",
     "After one change: run the suite and the baseline's benchmarks, verify; accept "
     "commits exactly the touched files with the ledger line, reject reverts them "
     "(perfloop try). Returns the turn and its verdict.",
     "{\"type\":\"object\",\"properties\":{\"message\":{\"type\":\"string\"},"
     "\"continue\":{\"type\":\"boolean\"}},\"additionalProperties\":false}",
     "{\"type\":\"object\",\"required\":[\"turn\",\"iteration\"],\"properties\":{\"turn\":"
     "{\"type\":[\"object\",\"null\"]},\"iteration\":{\"type\":\"integer\"},\"verdict\":"
     "{\"type\":\"object\"}}}",
     DESTRUCTIVE | OPEN | STATEFUL},
    {"checkpoint", "Record the working tree before a change",
     "Record every tracked and untracked, non-ignored path as it is, without touching "
     "the tree or the index (perfloop checkpoint); it replaces the previous checkpoint, "
     "which revert would have restored. Returns the checkpoint document.",
     "{\"type\":\"object\",\"properties\":{},\"additionalProperties\":false}",
     "{\"type\":\"object\",\"required\":[\"schema\",\"entries\"],\"properties\":{\"schema\":"
     "{\"type\":\"string\"},\"entries\":{\"type\":\"array\"}}}",
     DESTRUCTIVE | IDEMPOTENT | STATEFUL},
    {"revert", "Undo the change made since the checkpoint",
     "Restore every path that differs from the checkpoint and remove what was created "
     "(perfloop revert); dry_run only says what it would do.",
     "{\"type\":\"object\",\"properties\":{\"dry_run\":{\"type\":\"boolean\"}},"
     "\"additionalProperties\":false}",
     "{\"type\":\"object\",\"required\":[\"restored\",\"created\"],\"properties\":{"
     "\"restored\":{\"type\":\"array\"},\"created\":{\"type\":\"array\"},\"dry_run\":{"
     "\"type\":\"boolean\"}}}",
     DESTRUCTIVE | IDEMPOTENT | STATEFUL},
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

json_t *mcp_tool_list(void)
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
		    "openWorldHint", (t->hints & OPEN) != 0);
		json_t *out = t->output ? output_schema(t->output) : NULL;
		if (out)
			json_object_set_new(o, "outputSchema", out);
		json_array_append_new(a, o);
	}
	return a;
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
	if (text)
		mcp_utf8_clean(text);
	json_t *r = json_pack("{s:[{s:s, s:s}], s:b}", "content", "type", "text", "text",
			      text ? text : "", "isError",
			      rc < 0 || rc >= 2 || (promised && !json_is_object(doc)));
	free(text);
	if (doc && json_is_object(doc))
		json_object_set(r, "structuredContent", doc);
	return r;
}

/* The arguments of tool name into a perfloop command line (a), or a
 * complaint about them. json_out: the command prints its document. No
 * string from the client is an element of its own where an option could
 * be read: values are "--option=VALUE", operands come after "--" (every
 * command's getopt_long stops there), and bench's command lines, which
 * bench reads as operands with "--" meaning something else, cannot start
 * with '-'. */
static const char *build(struct server *S, const char *name, json_t *args, struct argv_b *a,
			 int *json_out)
{
	const char *bad = NULL;
	*json_out = 1;
	if (!strcmp(name, "scan")) {
		add(a, "scan");
		add(a, "--format=json");
		add_flag(a, args, "advisory", "--advisory");
		if ((bad = add_strings(S, a, args, "select", "--select", 0)))
			return bad;
		add(a, "--");
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
		if (cmd && (!json_is_array(cmd) || !json_array_size(cmd)))
			return "command: an argv array";
		char dir[PATH_MAX + 32];
		snprintf(dir, sizeof dir, "%s/.perfloop", S->root);
		mkdir(dir, 0777);
		snprintf(dir, sizeof dir, "%s/.perfloop/mcp", S->root);
		mkdir(dir, 0777);
		add(a, "profile");
		add(a, "--out=.perfloop/mcp/profile");
		add(a, "--format=folded,svg,findings");
		if ((bad = add_number(a, args, "duration", "--duration", 1e-3, 600, 0)) ||
		    (bad = add_number(a, args, "rate", "--rate", 1, 20000, 0)) ||
		    (bad = add_number(a, args, "pid", "--pid", 1, 4194304, 1)))
			return bad;
		if (mode)
			add_opt(a, "--mode", json_string_value(mode));
		add_flag(a, args, "idle", "--idle");
		add_flag(a, args, "gil", "--gil");
		add_flag(a, args, "subprocesses", "--subprocesses");
		if (cmd) {
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
			if (n)
				add_opt(a, "--name", json_string_value(n));
			add_opt(a, "--bench", json_string_value(b));
		}
		json_t *suite = json_object_get(args, "suite");
		if (suite && !json_is_string(suite))
			return "suite: a command line";
		if (suite)
			add_opt(a, "--suite", json_string_value(suite));
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
		if (m)
			add_opt(a, "--message", json_string_value(m));
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
		add(a, "--"); /* a name such as "--db=/x" is a name */
		add(a, v);
		if (!strcmp(v, "show"))
			add(a, json_string_value(n));
		*json_out = 0;
	} else if (!strcmp(name, "report")) {
		add(a, "report");
		add(a, "--format=md");
		add(a, "--");
		*json_out = 0;
		bad = add_strings(S, a, args, "inputs", NULL, 1);
	} else {
		return "unknown tool (tools/list names them)";
	}
	if (!bad && a->full)
		bad = "too many arguments, or one over 64 KiB";
	return bad;
}

/* The document of a tool that writes files rather than printing it. */
static json_t *written_doc(struct server *S, const char *name)
{
	if (!strcmp(name, "baseline"))
		return mcp_load_file(S, ".perfloop/baseline.json");
	if (!strcmp(name, "profile"))
		return mcp_load_file(S, ".perfloop/mcp/profile.findings.json");
	if (!strcmp(name, "try")) { /* the turn, and its verdict where one was kept */
		json_t *loop = mcp_load_file(S, ".perfloop/loop.json");
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
			json_t *vd = mcp_load_file(S, v);
			if (vd)
				json_object_set_new(doc, "verdict", vd);
		}
		json_decref(loop);
		return doc;
	}
	return NULL;
}

static const struct tool *find_tool(const char *name)
{
	for (size_t i = 0; i < sizeof tools / sizeof tools[0]; i++)
		if (!strcmp(tools[i].name, name))
			return &tools[i];
	return NULL;
}

/* tools/call: the result, or NULL with *bad (then a JSON-RPC error). A
 * cancelled call returns NULL with *bad NULL: no answer is sent. */
json_t *mcp_call_tool(struct server *S, const char *name, json_t *args, const char **bad)
{
	struct argv_b a = {0};
	const struct tool *t = find_tool(name);
	add(&a, "perfloop");
	int json_out;
	*bad = NULL;
	if (args && !json_is_object(args)) {
		*bad = "arguments: expected an object";
		return NULL;
	}
	/* the schemas say additionalProperties: false: an argument the tool
	 * does not have is an invalid-params error, never ignored (`scan
	 * {"path": "."}` scanned the default and looked like an answer) */
	if (t && args) {
		json_t *schema = json_loads(t->schema, 0, NULL);
		json_t *props = json_object_get(schema, "properties");
		const char *key;
		json_t *v;
		json_object_foreach(args, key, v)
		{
			if (props && !json_object_get(props, key)) {
				size_t len = (size_t)snprintf(S->bad, sizeof S->bad,
							      "unknown argument '%.60s' (this tool "
							      "takes:",
							      key);
				const char *pk;
				json_t *pv;
				json_object_foreach(props, pk, pv)
				{
					if (len < sizeof S->bad)
						len += (size_t)snprintf(S->bad + len,
									sizeof S->bad - len,
									" %s", pk);
				}
				if (len < sizeof S->bad)
					snprintf(S->bad + len, sizeof S->bad - len, "%s",
						 json_object_size(props) ? ")" : " none)");
				*bad = S->bad;
				break;
			}
		}
		json_decref(schema);
		if (*bad)
			return NULL;
	}
	char why[400];
	if (t && mcp_state_dir_problem(S, why, sizeof why)) /* refused before anything runs */
		return tool_result(2, NULL, why, NULL, 0);
	if ((*bad = build(S, name, args, &a, &json_out))) {
		argv_b_release(&a);
		return NULL;
	}
	char *out, *errtext;
	int rc = mcp_run_self(S, name, t && (t->hints & STATEFUL), a.v, &out, &errtext);
	argv_b_release(&a);
	json_t *doc = json_out && out ? json_loads(out, 0, NULL) : NULL;
	if (!doc && rc >= 0 && rc < 2)
		doc = written_doc(S, name);
	if (doc && json_is_object(doc))
		json_object_set(S->last, name, doc);
	json_t *r = NULL;
	if (!S->cancelled)
		r = tool_result(rc, out, errtext, doc, t && t->output);
	json_decref(doc);
	free(out);
	free(errtext);
	return r;
}
