/*
 * Native (C/C++/Rust...) stack sampling with perf_event_open: the CPU clock
 * (a software event: it works on VMs without a PMU) or another event, one
 * ring buffer per CPU, the command and every child and thread it starts
 * followed (inherit), MMAP2/COMM/FORK/EXIT/LOST records tracked, samples
 * unwound as they arrive (no perf.data), and symbolized with elfutils
 * (libdwfl): function, source file and line from DWARF or a separate debug
 * file, C++ names demangled, stripped code as module+0xOFFSET.
 *
 * Unwinding: PL_UNWIND_FP takes the kernel's frame-pointer callchain;
 * PL_UNWIND_DWARF copies the user registers and the top of the user stack
 * with each sample and unwinds them with libdw's CFI unwinder, as
 * `perf record --call-graph dwarf` does (x86-64).
 */
#ifndef PL_NATIVE_H
#define PL_NATIVE_H

#include <signal.h>
#include <stdint.h>
#include <sys/types.h>

#include "error.h"
#include "profdata.h"

struct pl_memtrack;

enum pl_unwind { PL_UNWIND_AUTO, PL_UNWIND_FP, PL_UNWIND_DWARF };

struct pl_runq;

struct pl_native_opts {
	double rate;		 /* samples per second per thread */
	enum pl_unwind unwind;	 /* AUTO: DWARF where supported (x86-64), else FP */
	int lines;		 /* frames are source lines, not functions */
	int threads;		 /* a root frame per thread */
	int subprocs;		 /* a root frame per process */
	uint32_t stack_bytes;	 /* user stack copied per sample (DWARF), default 16384 */
	double duration;	 /* 0: until the command exits */
	int event;		 /* -1: the CPU clock; else a counter id (counters.h) */
	int kernel;		 /* kernel call chains too (where perf_event_paranoid allows) */
	struct pl_memtrack *mem; /* --memory: each process's RSS read every pass (20 ms at
				  * most), rises charged to its latest sample's stack */
	struct pl_runq *runq; /* the job's runnable threads, read as it runs (runq.h); NULL: not */
	const volatile sig_atomic_t *interrupted;
};

struct pl_native_stats {
	uint64_t samples;	 /* sample records read */
	uint64_t lost;		 /* samples the kernel dropped (ring full) */
	uint64_t truncated;	 /* stacks that did not reach the program's entry */
	uint64_t kernel;	 /* samples taken while in the kernel */
	uint64_t processes;	 /* distinct processes seen */
	enum pl_unwind unwind;	 /* what was used */
	int kernel_sampled;	 /* 0: perf_event_paranoid kept kernel time out */
	int stopped;		 /* perfloop stopped the command (--duration, Ctrl-C) */
	double elapsed_s, cpu_s; /* wall time, perfloop's own CPU time */
};

/* Profile argv (launched here; *status is its wait status) or, with argv
 * NULL, the running process pid and everything it starts from now on. The
 * stacks go into *prof (root first). PL_EINPUT with a one-line message
 * (permission and what would allow it, an unsupported unwinder),
 * PL_ENOEXEC when argv cannot run, PL_ESYS otherwise. */
int pl_native_profile(char **argv, pid_t pid, const struct pl_native_opts *o, struct pl_prof *prof,
		      struct pl_native_stats *st, int *status, struct pl_error *err);

const char *pl_unwind_name(enum pl_unwind u);

/* The symbolizer and DWARF unwinder on their own, for --mode mixed (which
 * stops the threads itself and reads their registers and stacks). Frames
 * are interned into prof. */
struct pl_native_syms;
struct pl_native_syms *pl_native_syms_new(struct pl_prof *prof, int lines);
void pl_native_syms_free(struct pl_native_syms *s);
/* (Re)read pid's executable mappings from /proc/PID/maps when they changed. */
void pl_native_syms_maps(struct pl_native_syms *s, pid_t pid);
/* Replace pid's mappings by a copy of its /proc/PID/maps (a process that
 * has exited: profile --alloc's sampler wrote them). */
void pl_native_syms_maps_text(struct pl_native_syms *s, pid_t pid, const char *text, size_t len);
/* Unwind a stopped thread: its registers in DWARF order (rax rdx rcx rbx
 * rsi rdi rbp rsp r8-r15 rip) and a copy of its stack from rsp. pcs: leaf
 * first, callers' return addresses already moved into the call. */
size_t pl_native_unwind(struct pl_native_syms *s, pid_t pid, pid_t tid, const uint64_t regs[17],
			const uint8_t *stack, uint64_t len, uint64_t *pcs, size_t max);
enum pl_native_kind {
	PL_NATIVE_OTHER,   /* an extension, a library, the program */
	PL_NATIVE_INTERP,  /* CPython's own code (python3.x, libpython3.x) */
	PL_NATIVE_EVAL,	   /* _PyEval_EvalFrameDefault: where Python frames run */
	PL_NATIVE_UNMAPPED /* no mapping: the stack ended in garbage */
};
/* The frames of one pc (innermost first) and what it is. */
size_t pl_native_pc_frames(struct pl_native_syms *s, pid_t pid, uint64_t pc, const uint32_t **ids,
			   enum pl_native_kind *kind);
/* One instant's stack as profile --mode mixed shows it, leaf first, into
 * out (at most cap ids): the native frames of pcs (leaf first, as
 * pl_native_pc_frames takes them) with CPython's own code replaced by the
 * Python frames it was running: each _PyEval_EvalFrameDefault frame
 * becomes py's frames (frame ids, leaf first) up to the first of its call
 * (entry[i] set); the other interpreter frames (call machinery) are left
 * out. Where the interpreter hides _PyEval_EvalFrameDefault (no symbol),
 * all of py goes where its code meets the code it called, and *approx is
 * set; Python frames left over (fewer eval frames unwound than calls) go
 * at the root, and *unmatched is set. Returns the depth. */
size_t pl_native_splice(struct pl_native_syms *s, pid_t pid, const uint64_t *pcs, size_t n,
			const uint32_t *py, const uint8_t *entry, size_t npy, uint32_t *out,
			size_t cap, int *approx, int *unmatched);
/* Is pc the program's or a thread's entry (_start, start_thread...)? */
int pl_native_is_entry(struct pl_native_syms *s, pid_t pid, uint64_t pc);

#endif
