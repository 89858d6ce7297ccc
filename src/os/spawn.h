/*
 * Starting and reaping one measured command.
 *
 * pl_spawn_run() starts argv (no shell) in its own process group, with its
 * stdin/stdout/stderr redirected, optionally with counters opened on it, and
 * waits for it: wall time from just before the start until it is reaped,
 * user/sys time and peak RSS from wait4, exit status or signal. A timeout
 * kills the whole process group. An interruption (the flag set by a SIGINT
 * handler) kills the group too and reports PL_EINTR.
 */
#ifndef PL_SPAWN_H
#define PL_SPAWN_H

#include <signal.h>
#include <stddef.h>

#include "error.h"
#include "counters.h"

struct pl_strbuf;

/* Read the child's output while it runs (for output larger than a pipe). */
struct pl_spawn_drain {
	int read_fd, write_fd; /* a pipe: write_fd is the child's stdout */
	struct pl_strbuf *out;
};

struct pl_spawn_opts {
	char *const *argv; /* argv[0] is looked up in PATH when it has no '/' */
	int stdin_fd;	   /* -1: /dev/null */
	int stdout_fd;	   /* -1: /dev/null, -2: inherit */
	int stderr_fd;	   /* -1: /dev/null, -2: inherit */
	double timeout_s;  /* 0: none */
	const volatile sig_atomic_t *interrupted; /* may be NULL */
	const struct pl_counter_set *counters;	  /* may be NULL */
	struct pl_spawn_drain *drain;		  /* may be NULL: read stdout while it runs */
};

struct pl_run_result {
	double wall_s, user_s, sys_s;
	/* from the clone to the reaping: the span user_s and sys_s cover (they
	 * count the child's work before exec too; wall_s starts at exec) */
	double span_s;
	long max_rss_kb;
	long minflt, majflt; /* page faults: minor (no I/O) and major (read from disk) */
	int exit_code; /* valid when signal == 0 and !timed_out */
	int signal;    /* terminating signal, 0 if it exited */
	int timed_out;
	int stopped; /* the signal that stopped it (it was then killed), 0 if none */
	double counter[PL_CTR_COUNT]; /* by position in opts->counters */
	int counter_ok[PL_CTR_COUNT];
};

/* Resolve argv0 in PATH like execvp; returns a malloc'd path or NULL. */
char *pl_spawn_which(const char *argv0);

/* Returns PL_OK once the command ran (check result for its exit status),
 * PL_ENOEXEC if it could not be started, PL_EINTR if interrupted (result
 * holds what was measured), PL_ESYS on a system failure. A timeout is PL_OK
 * with result->timed_out set. */
int pl_spawn_run(const struct pl_spawn_opts *opts, struct pl_run_result *result,
		 struct pl_error *err);

/* Run argv to completion (stdin and stderr on /dev/null) and keep up to
 * len-1 bytes of its stdout, NUL-terminated, trailing newlines removed.
 * Returns the exit code, or -1 if it could not run, was killed or timed out. */
int pl_spawn_capture(char *const *argv, double timeout_s, char *out, size_t len);

/* Run argv and collect all of its stdout (malloc'd, NUL-terminated, in
 * *out; stderr goes to /dev/null unless keep_stderr). Returns the exit code,
 * or -1 if it could not run or was killed. */
int pl_spawn_output(char *const *argv, int keep_stderr, char **out, size_t *len);

/* A suite's time limit where none is given: the loop's (4x a run's 600 s). */
#define PL_SUITE_TIMEOUT_DEFAULT 2400.0

/* Run a functional suite: the command string split into words (no shell),
 * its stdout sent to our stderr so that our stdout stays machine output.
 * *exit_code is its status, -1 if it was killed, stopped or timed out
 * (timeout_s, 0: none). PL_ENOEXEC, PL_EINPUT (bad
 * quoting) or PL_EINTR otherwise. */
int pl_spawn_suite(const char *cmd, double timeout_s, const volatile sig_atomic_t *interrupted,
		   int *exit_code, struct pl_error *err);

/* "SIGSEGV" for 11; "signal 99" for unknown numbers. */
const char *pl_signal_name(int sig, char *buf, size_t len);

/* Whether pl_spawn_run can count a child with perf counters: not under
 * Valgrind, whose fork-like child keeps its counters to itself. */
int pl_spawn_can_count(void);

#endif
