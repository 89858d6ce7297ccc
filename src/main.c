/*
 * perfloop's entry point: the command table and dispatch, the SIGINT flag
 * (the one piece of global state, since a signal handler needs it), and the
 * final check that stdout was written completely.
 */
#include <errno.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "cmd/cmd.h"
#include "error.h"

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
    {"select", cmd_select, cmd_select_usage, "choose one candidate from findings: algorithm first"},
    {"verify", cmd_verify, cmd_verify_usage, "accept a change only for a quantified, valid win"},
    {"report", cmd_report, cmd_report_usage, "one report from findings, summaries and verdicts"},
    {"checkpoint", cmd_checkpoint, cmd_checkpoint_usage,
     "record the state before a change, touching nothing"},
    {"revert", cmd_revert, cmd_revert_usage, "restore only the files a change touched"},
    {"baseline", cmd_baseline, cmd_baseline_usage, "start a loop: suite, benchmarks, checkpoint"},
    {"try", cmd_try, cmd_try_usage, "one turn: measure, verify, then commit or revert"},
    {"status", cmd_status, cmd_status_usage, "the loop's baseline, iterations and verdicts"},
    {"history", cmd_history, cmd_history_usage, "benchmark history over commits; regressions"},
    {"steps", cmd_steps, cmd_steps_usage,
     "a training loop's data vs compute split from its step-time log"},
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

int pl_bad_option(int c, char **argv, const char *cmd)
{
	if (c == ':')
		return pl_die(PL_EXIT_USAGE, "option '%s' needs a value", argv[optind - 1]);
	return pl_die(PL_EXIT_USAGE, "unknown option '%s' (see 'perfloop %s --help')",
		      argv[optind - 1], cmd);
}

static void usage(FILE *f)
{
	fprintf(f, "usage: perfloop [--version] [--help] COMMAND [ARGS]\n\ncommands:\n");
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
			return pl_die(PL_EXIT_USAGE, "unknown command '%s' (see 'perfloop --help')",
				      argv[2]);
		fputs(c->usage, stdout);
		return finish(0);
	}
	const struct command *c = find(first);
	if (!c)
		return pl_die(PL_EXIT_USAGE, "unknown command '%s' (see 'perfloop --help')", first);

	struct sigaction sa;
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_sigint;
	sigemptyset(&sa.sa_mask);
	sa.sa_flags = 0; /* no SA_RESTART: a blocking wait must return to see it */
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	/* a file-size limit (ulimit -f) must fail a write, which every writer
	 * handles (temporary file removed, one error line), not kill us with a
	 * temporary file left behind */
	signal(SIGXFSZ, SIG_IGN);

	struct pl_ctx ctx = {.interrupted = &interrupted};
	return finish(c->fn(argc - 1, argv + 1, &ctx));
}
