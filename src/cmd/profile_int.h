/*
 * Private to perfloop profile (src/cmd/profile*.c): the profiler's state
 * and the functions its files share; main.c reaches the command through
 * cmd.h only. profile.c parses the options and picks the mode;
 * profile_python.c runs Python mode, and launches (or attaches to) and
 * reports mixed mode; profile_native.c native mode and mixed mode's
 * sampling loop with its ptrace stops; profile_memory.c --memory and
 * --alloc; profile_syscalls.c --syscalls; profile_out.c the table, the
 * live line and the output files.
 */
#ifndef PL_PROFILE_INT_H
#define PL_PROFILE_INT_H

#include <jansson.h>
#include <sched.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/resource.h>
#include <sys/types.h>

#include "cmd.h"
#include "error.h"
#include "gpu.h"
#include "memtrack.h"
#include "native.h"
#include "profdata.h"
#include "procid.h"
#include "pystack.h"
#include "ranks.h"
#include "runq.h"
#include "steps.h"
#include "strbuf.h"
#include "trainloop.h"

enum { FMT_FOLDED = 1, FMT_SVG = 2, FMT_SPEEDSCOPE = 4, FMT_FINDINGS = 8, FMT_HTML = 16 };

enum mode { MODE_AUTO, MODE_PYTHON, MODE_NATIVE, MODE_MIXED };

struct opts {
	pid_t pid;
	enum mode mode;
	enum pl_unwind unwind;
	int event; /* native mode: -1 the CPU clock, else a counter id */
	int kernel;
	double rate, duration, min_share;
	int lines, idle, gil, threads, subprocs, formats, gpu, full_paths, fold_imports, memory;
	int scan; /* --scan: the sampled sources scanned, weighed by this profile */
	int alloc;		 /* --alloc: the preloaded sampler instead of stacks */
	int syscalls;		 /* --syscalls: the tracepoints instead of stacks */
	unsigned long long alloc_rate; /* --alloc-rate: mean bytes between samples */
	int live_table; /* perfloop top: the table redrawn every second */
	double gpu_hz;
	long top;
	const char *out;
	int out_given; /* -o given: never renamed per rank */
	char **argv;
	struct pl_rank rank;	 /* under a launcher: which rank this is */
	const char *rank_filter; /* --rank-filter: the ranks to profile */
};

/* One sampled process. */
struct target {
	pid_t pid;
	struct pl_procid id; /* the process itself: pid may be reused once it exits */
	struct pl_pystack *st;
	int gone;
	int fails;  /* consecutive unreadable samples */
	int tries;  /* attach attempts while not (yet) CPython */
	long frame; /* synthetic "process" frame id, -1 none */
	char cmd[256];
	int statm_fd;	 /* --memory: /proc/PID/statm, -1 not open */
	double rss_last; /* its RSS at the last tick, bytes */
};

/* (code object, line) -> frame id: saves hashing strings per frame. */
struct fcache_ent {
	const void *code;
	int line;
	uint32_t id;
};

struct thread_frame {
	pid_t pid;
	unsigned long tid;
	uint32_t id;
	char name[64]; /* threading's name it was labelled with, or "" */
};

/* Keeping perfloop off the CPU the sampled program runs on: sharing it,
 * the program is preempted at its system calls for perfloop's wake-ups and
 * the lines making them gain samples (docs/profile.md, "Keeping off the
 * program's CPU"). */
struct cpu_avoid {
	cpu_set_t allowed; /* perfloop's own affinity at the start */
	int on;		   /* allowed holds two CPUs or more */
	int avoiding;	   /* the CPU left out now; -1: none */
	unsigned long tid; /* a thread seen running in the last tick */
	unsigned long fd_tid;
	int fd; /* /proc/TID/stat of fd_tid */
};

struct profiler {
	struct opts o;
	struct cpu_avoid ca;
	struct pl_prof prof;
	struct target *t;
	size_t nt, capt;
	struct fcache_ent *fc;
	size_t nfc, capfc;
	struct thread_frame *tf;
	size_t ntf, captf;
	uint32_t *ids;
	struct target *cur;
	struct pl_pysample_stats stats;
	struct pl_runq runq; /* the job's runnable threads against its CPUs */
	unsigned long long ticks;
	int oom;
	/* a PyTorch training loop (trainloop.h): found once libtorch is
	 * mapped; then idle threads are read too (waiting for a batch is the
	 * point), for the split only unless --idle */
	int torch;
	double tick_dt; /* seconds this tick's samples stand for */
	int live;	/* stderr is a terminal: a live line while sampling */
	double live_start, live_last, table_last;
	struct pl_train train;
	unsigned char *fphase; /* per frame id: phase + 1, 0 not yet known */
	size_t capfphase, ntrained;
	/* where the loop waits for batches: the caller of __next__ */
	char loop_file[400], loop_func[128];
	int loop_line;
	struct pl_gpu gpu;    /* --gpu */
	/* --memory: the growth profile, and the stack of this tick to charge
	 * (the GIL holder's where one was sampled) */
	struct pl_memtrack mem;
	uint32_t *mstack;
	size_t mdepth;
	int mhave, mgil;
	double mtotal; /* this tick's RSS of every process followed */
	/* the launched program's resource use once it is reaped (--memory:
	 * the kernel's high-water mark of its RSS) */
	struct rusage child_ru;
	int child_ru_set;
};

/* ---- the modes (profile.c dispatches to them) ---- */

/* Python mode, and mixed mode around its loop (profile_python.c). */
int profile_python(struct profiler *P, const struct pl_ctx *ctx, const char *cwd);
/* --mode native (profile_native.c). */
int profile_native(struct profiler *P, const struct pl_ctx *ctx, const char *cwd);
/* --alloc (profile_memory.c). */
int profile_alloc(struct profiler *P, const struct pl_ctx *ctx, const char *cwd);
/* --syscalls (profile_syscalls.c). */
int profile_syscalls(struct profiler *P, const struct pl_ctx *ctx);

/* ---- Python stacks into the profile (profile_python.c) ---- */

/* The frame id of a Python frame (by function, or by line with --lines). */
long profile_frame_id(struct profiler *P, const struct pl_pyframe *f);
/* The frame "thread TID (NAME)". */
long profile_thread_frame(struct profiler *P, pid_t pid, unsigned long tid, const char *pyname);
/* A thread's Python stack (frames leaf first) into the training split;
 * buf holds PL_PYSTACK_MAX_DEPTH ids. -1 out of memory. */
int profile_train_thread(struct profiler *P, const struct pl_pythread *t, uint32_t *buf);
/* The next tick's interval, drawn from 0.5-1.5 periods (xorshift state
 * seeded by profile_jitter_seed): a loop whose period is near a multiple
 * of the sampling period is otherwise seen at one phase only. */
uint64_t profile_jitter_seed(void);
long profile_jittered(uint64_t *state, long period_ns);
/* Whether PyTorch is loaded yet (P->torch), asked at a cadence of ticks. */
void profile_torch_poll(struct profiler *P);
/* A small /proc file's first line into buf ("" when it cannot be read). */
void profile_read_small(const char *path, char *buf, size_t len);

/* ---- mixed mode's sampling loop (profile_native.c) ---- */

int profile_mixed_loop(struct profiler *P, const struct pl_ctx *ctx, pid_t child, int *status,
		       int *reaped, struct pl_error *err);

/* ---- --memory (profile_memory.c) ---- */

void profile_print_memory(struct profiler *P);
int profile_memory_tick(struct profiler *P, struct target *t);
int profile_memory_rollup(struct profiler *P, double t);

/* ---- what is shown and written (profile_out.c) ---- */

int profile_print_table(const struct profiler *P);
void profile_live_line(struct profiler *P, int done);
void profile_top_refresh(struct profiler *P);
/* Each adds the path it wrote to names; an error is said (pl_die) and its
 * exit code returned. */
int profile_write_folded(const char *prefix, const char *ext, const struct pl_prof *prof,
			 struct pl_strbuf *names);
int profile_write_svg(const char *prefix, const char *ext, const struct pl_prof *prof,
		      const char *title, const char *subtitle, struct pl_strbuf *names);
int profile_write_doc(const struct opts *o, const char *ext, json_t *doc,
		      struct pl_strbuf *names);
/* The CPU profile's outputs, as --format asks, and --memory's and --gpu's. */
int profile_write_outputs(struct profiler *P, const char *title, const char *cwd,
			  const struct pl_steps *steps);
void profile_command_title(const struct opts *o, char *title, size_t size);
int profile_exit_status(const struct opts *o, const struct pl_ctx *ctx, int status);

/* --scan (profile_scan.c): the project's sampled source files scanned,
 * each finding weighed by this profile and added to out. 0, or -1 out of
 * memory. */
struct pl_findings;
int profile_scan_findings(struct profiler *P, const char *cwd, struct pl_findings *out);

#endif
