/*
 * OS and hardware counters through perf_event_open, counted in the measured
 * command and its descendants only.
 *
 * A pl_counter_set is chosen once per benchmark (`--counters auto|none|LIST`)
 * and probed once: a counter the kernel or machine refuses is marked
 * unsupported with the errno and a one-line hint, and is never opened again.
 * The supported ones are opened per run *by the spawned child itself* just
 * before exec (see spawn.c), with enable_on_exec and inherit, so they count
 * exactly the program and its children, never perfloop.
 */
#ifndef PL_COUNTERS_H
#define PL_COUNTERS_H

#include <linux/perf_event.h>
#include <stddef.h>
#include <stdint.h>

#include "error.h"

enum pl_counter_id {
	PL_CTR_TASK_CLOCK,
	PL_CTR_PAGE_FAULTS,
	PL_CTR_CONTEXT_SWITCHES,
	PL_CTR_CPU_MIGRATIONS,
	PL_CTR_INSTRUCTIONS,
	PL_CTR_CYCLES,
	PL_CTR_BRANCHES,
	PL_CTR_BRANCH_MISSES,
	PL_CTR_CACHE_REFERENCES,
	PL_CTR_CACHE_MISSES,
	PL_CTR_L1D_LOADS,
	PL_CTR_L1D_LOAD_MISSES,
	PL_CTR_SYSCALLS, /* raw_syscalls:sys_enter, counted: not in "auto" */
	PL_CTR_COUNT
};

struct pl_counter_def {
	const char *name; /* perf's event name */
	const char *unit;
	uint32_t type;
	uint64_t config;
	int hardware;
};

const struct pl_counter_def *pl_counter_def(int id);
/* Index of a counter by perf's name, or -1. */
int pl_counter_lookup(const char *name);

struct pl_counter_set {
	size_t n;		     /* counters requested */
	int id[PL_CTR_COUNT];	     /* which, in request order */
	int supported[PL_CTR_COUNT]; /* after probing */
	int err[PL_CTR_COUNT];	     /* errno when unsupported */
	struct perf_event_attr attr[PL_CTR_COUNT];
};

/* Opens a counter: perf_event_open(attr, pid, cpu=-1, group=-1, CLOEXEC).
 * Replaceable so tests can make the kernel say no. */
typedef int (*pl_perf_open_fn)(struct perf_event_attr *attr, int pid);
int pl_perf_open(struct perf_event_attr *attr, int pid);

/* Parse "auto" (every counter but syscalls), "none", or a comma-separated
 * list of names. */
int pl_counters_parse(struct pl_counter_set *set, const char *spec, struct pl_error *err);
/* Add one counter to a parsed set (once). */
void pl_counters_add(struct pl_counter_set *set, int id);
/* Try each requested counter once on this process; mark the refused ones.
 * The syscalls tracepoint's id is read from tracefs first (see
 * pl_syscall_tracepoints). */
void pl_counters_probe(struct pl_counter_set *set, pl_perf_open_fn open_fn);
/* Number of supported counters. */
size_t pl_counters_active(const struct pl_counter_set *set);
/* the syscalls counter's own reasons (errno values stay below them) */
#define PL_CTR_ETRACEFS 255
#define PL_CTR_ETRACEPERM 254
/* One line on why a counter is unsupported and what would help. */
const char *pl_counter_hint(int errnum);

/* Read a counter opened for one run, scaled for multiplexing; -1 on error. */
int pl_counter_read(int fd, double *value);

#endif
