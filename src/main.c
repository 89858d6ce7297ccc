/*
 * perfloop's entry point: the command table and dispatch, the SIGINT flag
 * (the one piece of global state, since a signal handler needs it), and the
 * final check that stdout was written completely.
 */
#include <ctype.h>
#include <errno.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "cmd/cmd.h"
#include "error.h"
#include "render.h"
#include "words.h"

static volatile sig_atomic_t interrupted;

static void on_sigint(int sig)
{
	(void)sig;
	interrupted = 1;
}

struct command {
	const char *name;
	int (*fn)(int argc, char **argv, const struct pl_ctx *ctx);
	const char *usage;
	const char *summary;
};

static const struct command commands[] = {
    {"bench", cmd_bench, cmd_bench_usage,
     "time commands with statistics, counters and a noise gate"},
    {"scan", cmd_scan, cmd_scan_usage, "find performance anti-patterns in Python and C source"},
    {"profile", cmd_profile, cmd_profile_usage,
     "sample a CPython program's stacks from outside; flame graph"},
    {"dump", cmd_dump, cmd_dump_usage, "the Python stacks of a running process, once"},
    {"top", cmd_top, cmd_top_usage, "a live table of a running Python program's hot functions"},
    {"select", cmd_select, cmd_select_usage, "choose one candidate from findings: algorithm first"},
    {"verify", cmd_verify, cmd_verify_usage, "accept a change only for a quantified, valid win"},
    {"intake", cmd_intake, cmd_intake_usage,
     "write the cost model (KPI, counts, expected cost) before optimizing"},
    {"report", cmd_report, cmd_report_usage, "one report from findings, summaries and verdicts"},
    {"checkpoint", cmd_checkpoint, cmd_checkpoint_usage,
     "record the state before a change, touching nothing"},
    {"revert", cmd_revert, cmd_revert_usage, "restore only the files a change touched"},
    {"baseline", cmd_baseline, cmd_baseline_usage, "start a loop: suite, benchmarks, checkpoint"},
    {"try", cmd_try, cmd_try_usage, "one turn: measure, verify, then commit or revert"},
    {"status", cmd_status, cmd_status_usage, "the loop's baseline, iterations and verdicts"},
    {"history", cmd_history, cmd_history_usage, "benchmark history over commits; regressions"},
    {"merge", cmd_merge, cmd_merge_usage,
     "one run's per-rank summaries and profiles: tails, stragglers, merged flame graph"},
    {"steps", cmd_steps, cmd_steps_usage,
     "a training loop's data vs compute split from its step-time log"},
    {"mcp", cmd_mcp, cmd_mcp_usage, "the loop's steps as tools for coding agents (MCP, stdio)"},
    {"system", cmd_system, cmd_system_usage,
     "what disturbs measurements here; tune and reset it (root)"},
};

int pl_die(int code, const char *fmt, ...)
{
	va_list ap;
	fflush(stdout);
	fputs("perfloop: error: ", stderr);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
	return code;
}

static const struct command *find(const char *name);

/* The long option of the command's usage text nearest to a mistyped one,
 * written into out; 0 if none is near (a third of its length, at least 1
 * and at most 3 edits). */
static int nearest_option(const char *cmd, const char *bad, char *out, size_t len)
{
	const struct command *c = find(cmd);
	char want[64];
	size_t n = strcspn(bad, "=");
	if (!c || n < 3 || n >= sizeof want || strncmp(bad, "--", 2) != 0)
		return 0;
	memcpy(want, bad, n);
	want[n] = '\0';
	int best = 99, limit = (int)(n - 2) / 3;
	limit = limit < 1 ? 1 : limit > 3 ? 3 : limit;
	for (const char *p = strstr(c->usage, "--"); p; p = strstr(p + 2, "--")) {
		char opt[64];
		size_t k = 2;
		while (k < sizeof opt - 1 && (isalnum((unsigned char)p[k]) || p[k] == '-'))
			k++;
		if (k <= 3)
			continue;
		memcpy(opt, p, k);
		opt[k] = '\0';
		int d = pl_edit_distance(want, opt);
		if (d < best && d <= limit) {
			best = d;
			snprintf(out, len, "%s", opt);
		}
	}
	return best < 99;
}

int pl_format_text_json(const char *arg, int *json)
{
	if (strcmp(arg, "json") == 0 || strcmp(arg, "text") == 0) {
		*json = arg[0] == 'j';
		return 0;
	}
	return pl_die(PL_EXIT_USAGE, "option '--format': expected text or json, got '%s'", arg);
}

int pl_bad_option(int c, char **argv, const char *cmd)
{
	if (c == ':')
		return pl_die(PL_EXIT_USAGE, "option '%s' needs a value", argv[optind - 1]);
	char near[64];
	if (nearest_option(cmd, argv[optind - 1], near, sizeof near))
		return pl_die(PL_EXIT_USAGE, "unknown option '%s' (did you mean '%s'?)",
			      argv[optind - 1], near);
	return pl_die(PL_EXIT_USAGE, "unknown option '%s' (see 'perfloop %s --help')",
		      argv[optind - 1], cmd);
}

/* An unknown command, with the nearest one named when one is near. */
static int unknown_command(const char *name)
{
	const char *best = NULL;
	int bd = 99;
	for (size_t i = 0; i < sizeof(commands) / sizeof(commands[0]); i++) {
		int d = pl_edit_distance(name, commands[i].name);
		if (d < bd) {
			bd = d;
			best = commands[i].name;
		}
	}
	if (best && bd <= 2 && bd < (int)strlen(best))
		return pl_die(PL_EXIT_USAGE, "unknown command '%s' (did you mean '%s'?)", name,
			      best);
	return pl_die(PL_EXIT_USAGE, "unknown command '%s' (see 'perfloop --help')", name);
}

/* --color WHEN (or --color=WHEN) anywhere before '--', for every command,
 * before the command's name too (`perfloop --color never scan`, as git's
 * `-c` and cargo's `--color` go): taken out of argv. Returns -1 after an
 * error message. */
static int take_color(int *argc, char **argv)
{
	for (int i = 1; i < *argc; i++) {
		if (!strcmp(argv[i], "--"))
			break;
		const char *v = NULL;
		int drop = 0;
		if (!strcmp(argv[i], "--color") || !strcmp(argv[i], "--colour")) {
			if (i + 1 >= *argc) {
				pl_die(PL_EXIT_USAGE, "option '--color' needs a value");
				return -1;
			}
			v = argv[i + 1];
			drop = 2;
		} else if (!strncmp(argv[i], "--color=", 8) || !strncmp(argv[i], "--colour=", 9)) {
			v = strchr(argv[i], '=') + 1;
			drop = 1;
		}
		if (!v)
			continue;
		if (!strcmp(v, "always"))
			pl_style_force(1);
		else if (!strcmp(v, "never"))
			pl_style_force(0);
		else if (!strcmp(v, "auto"))
			pl_style_force(-1);
		else {
			pl_die(PL_EXIT_USAGE, "option '--color': expected auto, always or never, got '%s'", v);
			return -1;
		}
		for (int k = i; k + drop <= *argc; k++)
			argv[k] = argv[k + drop];
		*argc -= drop;
		i--;
	}
	return 0;
}

static void usage(FILE *f)
{
	fprintf(f, "usage: perfloop [--version] [--help] [--color WHEN] COMMAND [ARGS]\n\n"
		   "global options (before or after COMMAND):\n"
		   "  --color auto|always|never  colour the output; NO_COLOR and FORCE_COLOR are\n"
		   "                             honoured, --color wins\n\ncommands:\n");
	for (size_t i = 0; i < sizeof(commands) / sizeof(commands[0]); i++)
		fprintf(f, "  %-10s %s\n", commands[i].name, commands[i].summary);
	fprintf(f, "\n'perfloop help COMMAND' or 'perfloop COMMAND --help' shows a command's "
		   "options and examples.\n\nexit codes: 0 ok, 1 negative verdict or no "
		   "candidate, 2 bad usage or input,\n3 the measured program failed or timed out, "
		   "4 internal error, 130 interrupted\n");
}

static const struct command *find(const char *name)
{
	for (size_t i = 0; i < sizeof(commands) / sizeof(commands[0]); i++)
		if (strcmp(commands[i].name, name) == 0)
			return &commands[i];
	return NULL;
}

static int finish(int code)
{
	/* A full disk or a closed pipe must not pass for success. */
	if (fflush(stdout) != 0 || ferror(stdout)) {
		if (errno != EPIPE)
			fprintf(stderr, "perfloop: error: cannot write to standard output: %s\n",
				strerror(errno));
		return code ? code : PL_EXIT_INTERNAL;
	}
	return code;
}

int main(int argc, char **argv)
{
	if (take_color(&argc, argv) < 0)
		return PL_EXIT_USAGE;
	if (argc < 2) {
		usage(stderr);
		return PL_EXIT_USAGE;
	}
	const char *first = argv[1];
	if (strcmp(first, "--version") == 0 || strcmp(first, "version") == 0) {
		printf("perfloop %s\n", PERFLOOP_VERSION);
		return finish(0);
	}
	if (strcmp(first, "--help") == 0 || strcmp(first, "-h") == 0) {
		usage(stdout);
		return finish(0);
	}
	if (strcmp(first, "help") == 0) {
		if (argc < 3) {
			usage(stdout);
			return finish(0);
		}
		const struct command *c = find(argv[2]);
		if (!c)
			return unknown_command(argv[2]);
		fputs(c->usage, stdout);
		return finish(0);
	}
	const struct command *c = find(first);
	if (!c)
		return unknown_command(first);

	struct sigaction sa;
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_sigint;
	sigemptyset(&sa.sa_mask);
	sa.sa_flags = 0; /* no SA_RESTART: a blocking wait must return to see it */
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	/* a closed terminal stops us as ^C does: the measured program killed,
	 * what was measured written; under nohup it stays ignored */
	struct sigaction hup;
	if (sigaction(SIGHUP, NULL, &hup) == 0 && hup.sa_handler != SIG_IGN)
		sigaction(SIGHUP, &sa, NULL);
	/* a file-size limit (ulimit -f) must fail a write, which every writer
	 * handles (temporary file removed, one error line), not kill us with a
	 * temporary file left behind */
	signal(SIGXFSZ, SIG_IGN);

	struct pl_ctx ctx = {.interrupted = &interrupted};
	return finish(c->fn(argc - 1, argv + 1, &ctx));
}
