/*
 * tracefs, for the tracepoints perfloop opens as perf events: an event's
 * id, and the raw_syscalls pair that bench's syscall counter and profile
 * --syscalls both need. A tracefs perfloop had to mount is unmounted as
 * soon as its caller is done with it. Below the profilers and the counter
 * table, which both use it.
 */
#ifndef PL_TRACEFS_H
#define PL_TRACEFS_H

#include "error.h"

/* The id of tracepoint ev ("sched/sched_switch") under root; -1 if none. */
int pl_tracefs_id(const char *root, const char *ev);

/* The raw_syscalls:sys_enter and sys_exit tracepoints' ids, tracefs
 * mounted first where it is not and this process may (root): root gets
 * where they were read, *mounted whether perfloop mounted it (both may be
 * NULL). PL_EINPUT with one line when they cannot be read. */
int pl_syscall_tracepoints(int *enter, int *leave, const char **root, int *mounted,
			   struct pl_error *err);

#endif
