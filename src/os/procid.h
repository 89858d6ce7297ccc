/*
 * One process, known by more than its number.
 *
 * A pid is reused once its process exits and is reaped: a profiler that
 * attached with `-p PID` and tests liveness with kill(pid, 0) would go on
 * reading (or tracing) whichever program gets the number next. A
 * pl_procid holds the process itself: a pidfd where the kernel has them
 * (Linux 5.3, not under Valgrind 3.19), else the pid and its start time
 * (field 22 of /proc/PID/stat), which no later process shares.
 */
#ifndef PL_PROCID_H
#define PL_PROCID_H

#include <stddef.h>
#include <sys/types.h>

struct pl_procid {
	pid_t pid;
	int pidfd;		  /* -1: none, the start time decides */
	unsigned long long start; /* clock ticks since boot, 0: unknown */
};

/* A /proc/.../stat line read into buf (len bytes): the text after the
 * command name, which may hold spaces and ')': its first character is the
 * state letter. NULL where it cannot be read. */
const char *pl_proc_stat_read(const char *path, char *buf, size_t len);

/* When pid started, in clock ticks since boot; 0 when there is no such
 * process (or /proc cannot say). */
unsigned long long pl_proc_start(pid_t pid);

/* Take hold of pid; 0, or -1 when there is no such process. */
int pl_procid_open(struct pl_procid *p, pid_t pid);

/* 1 once the process p was opened on has exited (a zombie counts as
 * exited) or its number names another process, else 0. Costs a poll()
 * with a pidfd, a read of /proc/PID/stat without. */
int pl_procid_gone(const struct pl_procid *p);

void pl_procid_close(struct pl_procid *p);

#endif
