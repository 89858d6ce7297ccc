/*
 * The interface between main.c's command table and the subcommands.
 *
 * To add a command: write src/cmd/<name>.c with
 *     int cmd_<name>(int argc, char **argv, const struct pl_ctx *ctx);
 *     extern const char cmd_<name>_usage[];
 * declare both here, add a row to the table in src/main.c, and add
 * docs/<name>.md whose "Synopsis" block equals the usage text (a test,
 * tests/cli/t002-docs-synopsis.sh, checks that every command's page does).
 * argv[0] is the command name; the return value is the process exit code
 * (enum pl_exit in src/util/error.h).
 */
#ifndef PL_CMD_H
#define PL_CMD_H

#include <signal.h>

struct pl_ctx {
	/* set by main's SIGINT handler */
	const volatile sig_atomic_t *interrupted;
};

/* "perfloop: error: ..." on stderr; returns code for `return pl_die(...)`. */
int pl_die(int code, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* --format text|json: sets *json; PL_EXIT_USAGE (said) for anything else,
 * else 0. */
int pl_format_text_json(const char *arg, int *json);

/* The error for getopt_long's ':' (missing value) or '?' (unknown option)
 * after command `cmd`; returns PL_EXIT_USAGE. */
int pl_bad_option(int c, char **argv, const char *cmd);

/* A thread's name as py-spy shows it: MainThread for the main thread, else
 * threading's name read from the process (pyname), else the kernel's name
 * for it (dump.c; profile --threads uses it too). */
#include <stddef.h>
#include <sys/types.h>
void pl_thread_name(pid_t pid, unsigned long tid, const char *pyname, char *out, size_t len);

int cmd_dump(int argc, char **argv, const struct pl_ctx *ctx);
int cmd_intake(int argc, char **argv, const struct pl_ctx *ctx);
extern const char cmd_intake_usage[];
int cmd_top(int argc, char **argv, const struct pl_ctx *ctx);
int cmd_merge(int argc, char **argv, const struct pl_ctx *ctx);
extern const char cmd_merge_usage[];
int cmd_mcp(int argc, char **argv, const struct pl_ctx *ctx);
extern const char cmd_mcp_usage[];
extern const char cmd_top_usage[];
extern const char cmd_dump_usage[];
int cmd_bench(int argc, char **argv, const struct pl_ctx *ctx);
extern const char cmd_bench_usage[];
int cmd_select(int argc, char **argv, const struct pl_ctx *ctx);
extern const char cmd_select_usage[];
int cmd_verify(int argc, char **argv, const struct pl_ctx *ctx);
extern const char cmd_verify_usage[];
int cmd_report(int argc, char **argv, const struct pl_ctx *ctx);
extern const char cmd_report_usage[];
int cmd_checkpoint(int argc, char **argv, const struct pl_ctx *ctx);
extern const char cmd_checkpoint_usage[];
int cmd_revert(int argc, char **argv, const struct pl_ctx *ctx);
extern const char cmd_revert_usage[];
int cmd_baseline(int argc, char **argv, const struct pl_ctx *ctx);
extern const char cmd_baseline_usage[];
int cmd_try(int argc, char **argv, const struct pl_ctx *ctx);
extern const char cmd_try_usage[];
int cmd_status(int argc, char **argv, const struct pl_ctx *ctx);
extern const char cmd_status_usage[];
int cmd_history(int argc, char **argv, const struct pl_ctx *ctx);
extern const char cmd_history_usage[];
int cmd_profile(int argc, char **argv, const struct pl_ctx *ctx);
extern const char cmd_profile_usage[];
int cmd_scan(int argc, char **argv, const struct pl_ctx *ctx);
extern const char cmd_scan_usage[];
int cmd_steps(int argc, char **argv, const struct pl_ctx *ctx);
extern const char cmd_steps_usage[];
int cmd_system(int argc, char **argv, const struct pl_ctx *ctx);
extern const char cmd_system_usage[];

#endif
