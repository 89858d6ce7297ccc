/*
 * The program a command ends as, past its wrappers.
 *
 * Many commands reach their program through launchers that are themselves
 * programs: pyenv's and asdf's shims (a chain of bash scripts that run
 * readlink, basename and more before they exec the interpreter), `env`,
 * `nice`, a `sh -c`. Natively they cost a few milliseconds; under a
 * simulator that starts every process slowly they cost more than the
 * program: `python3 work.py` through pyenv's shim was 41 processes and
 * 12.5 s of CPU under cachegrind against 2.25 s for the interpreter alone.
 *
 * pl_exec_chain() starts argv under ptrace (following forks and execs),
 * and stops everything at the first exec in the command's own process of
 * an image that is not a wrapper (a shell, env, nice and the small tools
 * shims use: readlink, basename, uname, sed...). It reports that exec's
 * program, arguments, environment and directory, so the caller can run it
 * directly. The command is not resolved (resolved = 0, why says why) where
 * any other process ran a program that is not a wrapper before it (the
 * wrapper did work of its own, which running the program alone would
 * leave out), where the command itself is the program (nothing to skip),
 * where its standard input changed on the way, where it exits or times
 * out first, or where ptrace is not allowed. The program is killed at
 * that exec, before it runs: the cost is the wrappers' own time.
 */
#ifndef PL_EXECCHAIN_H
#define PL_EXECCHAIN_H

#include <stddef.h>

#include "words.h"

struct pl_exec_chain {
	int resolved;	    /* 1: argv/envp/cwd below are the program to run */
	char exe[4096];	    /* the program's file (as /proc/PID/exe names it) */
	struct pl_argv argv; /* its arguments, argv[0] as it was given */
	struct pl_argv envp; /* its environment */
	char cwd[4096];	    /* its working directory */
	int skipped;	    /* wrapper images exec'd before it, in any process */
	char why[256];	    /* where not resolved: why */
};

/* in_fd: the command's stdin (-1: /dev/null); envp: its environment;
 * timeout_s: give up (not resolved) after this long. Returns 0, or -1 on
 * a failure to allocate (out->why says); not resolving is not an error. */
int pl_exec_chain(char *const argv[], char *const envp[], int in_fd, double timeout_s,
		  struct pl_exec_chain *out);
void pl_exec_chain_release(struct pl_exec_chain *c);

/* 1 where a program of this file name only launches or helps launch
 * another (a shell, env, nice, readlink...). */
int pl_exec_is_wrapper(const char *path);

#endif
