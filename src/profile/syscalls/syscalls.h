/*
 * profile --syscalls: every system call of a launched program and the
 * processes it starts, counted and timed without ptrace, through the
 * raw_syscalls:sys_enter/sys_exit tracepoints (perf_event_open, one ring
 * buffer per CPU, inherited by children, enabled at exec). strace -c stops
 * the program twice per call (ptrace); a tracepoint costs the program a
 * record in a ring buffer.
 *
 * Per system call: calls, errors, total and maximum time, p99 (from a
 * log-scale histogram, within ~10%), and bytes moved by the read and write
 * family; per file descriptor (its path read from /proc/PID/fd when first
 * seen): reads, writes and bytes. Findings: many small reads or writes on
 * one file, an fsync per write, one path opened again and again.
 *
 * The slowest calls (x86-64): the PL_SYS_SLOW longest, each with the user
 * stack where it blocked. A third tracepoint, sched:sched_switch, fires
 * when a traced thread leaves its CPU; it copies the thread's user
 * registers and the top PL_SYS_STACK bytes of its stack into rings of
 * their own (so that a lost stack never costs a count). A switch inside a
 * call belongs to it; when the call ends among the slowest, its stack is
 * unwound with the program's DWARF CFI (native.c) and symbolized while
 * the process is there. Calls that never left the CPU (a long copy from
 * the page cache) have no stack: they did not wait. In a CPython program
 * (3.11-3.15) the Python stack of a thread that has waited in one call
 * for a millisecond or more is read while it still waits (the kernel's
 * copy of the C stack holds no Python frame: they live in the
 * interpreter's own memory), kept where the call had not ended when it
 * was read, and spliced in where the interpreter ran them, as --mode
 * mixed does.
 */
#ifndef PL_SYSCALLS_H
#define PL_SYSCALLS_H

#include <jansson.h>
#include <signal.h>
#include <stdint.h>
#include <sys/types.h>

#include "error.h"
#include "profdata.h"
#include "tracefs.h"

#define PL_SYS_MAX 512
#define PL_SYS_HIST 256 /* 4 buckets per power of two of nanoseconds */
#define PL_SYS_SLOW 10	 /* the slowest calls kept */
#define PL_SYS_STACK 8192 /* bytes of user stack copied where a call blocks */

struct pl_sys_stat {
	uint64_t calls, errors, timed; /* timed: calls whose entry was seen too */
	uint64_t total_ns, max_ns, bytes;
	uint32_t hist[PL_SYS_HIST];
};

struct pl_sys_file {
	int pid, fd;
	char path[256];
	uint64_t reads, writes, rbytes, wbytes, opens, syncs;
	int unknown; /* closed before its path was read */
};

struct pl_sys_slow {
	int id;	 /* the syscall */
	int pid, tid;
	uint64_t ns;
	uint32_t *frames; /* frame ids in pl_syscalls.prof, innermost first */
	size_t depth;	  /* 0: no stack (it did not block, or its copy was lost) */
	void *copy;	  /* (the tracer's) its stack copy, until unwound at the end */
	void *py;	  /* (the tracer's) the Python frames read while it waited */
};

struct pl_syscalls {
	struct pl_sys_stat st[PL_SYS_MAX];
	struct pl_sys_file *files; /* one per descriptor opened or used (fd < 0: closed,
				    * its number -1 - fd) */
	size_t nfiles, capfiles;
	uint64_t events, lost;
	double elapsed_s;
	const char *tracefs; /* where the tracepoints' ids were read */
	int mounted;	     /* perfloop mounted tracefs there (it was not): 1 and unmounted
				again, 2 still mounted */
	int stopped;	     /* ended by the duration */
	struct pl_sys_slow slow[PL_SYS_SLOW]; /* slowest first */
	size_t nslow;
	struct pl_prof prof;	   /* their stacks' frames (set prof.root for paths) */
	uint64_t switches, switches_lost; /* stacks copied where calls blocked, and lost */
	int stacks;		   /* the switch tracepoint was opened */
};

/* Trace argv until it exits, or (argv NULL) the running process pid and
 * the threads and children it starts from now on until it exits; either
 * until *interrupted or duration seconds (> 0), when a launched program is
 * stopped with SIGINT and a -p one left running. *status: a launched
 * program's wait status. PL_EINPUT with one line when tracepoints are not
 * available (tracefs not mounted, perf_event_paranoid) or pid is no
 * process, PL_ENOEXEC when argv cannot run. */
int pl_syscalls_trace(char **argv, pid_t pid, double duration,
		      const volatile sig_atomic_t *interrupted, struct pl_syscalls *s, int *status,
		      struct pl_error *err);

/* pl_syscall_tracepoints: see tracefs.h */


const char *pl_syscall_name(int nr);
/* p99 of a syscall's durations in seconds (0 with no timed call) */
double pl_sys_p99(const struct pl_sys_stat *st);

/* The table (most total time first, at most top rows) and the files. */
void pl_syscalls_print(const struct pl_syscalls *s, size_t top);
/* perfloop.syscalls/1 */
json_t *pl_syscalls_json(const struct pl_syscalls *s, const char *command);
void pl_syscalls_release(struct pl_syscalls *s);

#endif
