/*
 * A program started paused: forked, waiting on a pipe before it execs, so
 * that perf events can be opened on it first (enable_on_exec), then let go
 * with its exec's failure, if any, read back. Shared by profile's native
 * sampler and its syscall tracer.
 */
#ifndef PL_LAUNCH_H
#define PL_LAUNCH_H

#include <sys/types.h>

#include "error.h"

struct pl_launch {
	pid_t pid; /* -1 once reaped */
	int go, ex; /* the parent's ends: -1 closed */
};

/* fork argv's child, waiting. PL_ESYS on failure. */
int pl_launch_start(char **argv, struct pl_launch *l, struct pl_error *err);
/* let it exec; PL_ENOEXEC ("cannot run 'argv0': why", the child reaped
 * into *status) when it could not */
int pl_launch_go(struct pl_launch *l, const char *argv0, int *status, struct pl_error *err);
/* close what is left; a child still unreaped and never let go is reaped */
void pl_launch_end(struct pl_launch *l, int *status);

#endif
