/*
 * Python stacks of every thread of a running CPython process, read from
 * outside (linux/pyproc.h) while it runs.
 *
 * The layout of CPython's internal structures differs by minor version;
 * pystack.c holds the table for each version it knows and refuses the
 * others by name. A sample walks interpreter -> thread states -> frames
 * -> code objects. Code objects (names, file, line table) are read once and
 * cached by address; a thread's frames, which live in its contiguous data
 * stack chunks, are read with one read per chunk, so a sample of a thread
 * costs a handful of system calls whatever its depth.
 *
 * The target is never stopped, so what is read can be torn by the target
 * changing it meanwhile: every pointer is checked (type of a code object,
 * owner of a frame, cycles, depth) and a stack that fails a check is
 * counted as an error, never reported.
 */
#ifndef PL_PYSTACK_H
#define PL_PYSTACK_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "error.h"

/* A code object as read once from the target. */
struct pl_pycode {
	uint64_t addr;
	uint64_t qualname_ptr, filename_ptr; /* identity check on each use */
	char *name;			     /* co_qualname, UTF-8 */
	char *file;			     /* co_filename, UTF-8 */
	int firstline;
	struct pl_pyline *lines; /* instruction ranges -> line */
	size_t nlines;
};

struct pl_pyframe {
	const struct pl_pycode *code;
	int line;  /* the line being executed; firstline when unknown */
	int entry; /* the outermost frame of its _PyEval_EvalFrameDefault call
		    * (a C function called into Python below it, or the root) */
};

struct pl_pythread {
	unsigned long tid; /* the kernel's thread id */
	int idle;	   /* not running (state other than R) */
	int gil;	   /* holds the GIL (py-spy's --gil) */
	size_t depth;	   /* frames, leaf first */
	struct pl_pyframe *frames;
	int truncated; /* deeper than PL_PYSTACK_MAX_DEPTH: the root is missing */
	const char *name; /* threading's name for it, read from the process
			   * (Thread._bootstrap at its root) under
			   * PL_PYSAMPLE_NAMES, or NULL */
};

#define PL_PYSTACK_MAX_DEPTH 16384

/* A local variable of a frame, as text (dump --locals). */
struct pl_pylocal {
	char *name, *value, *type;
};
struct pl_pystack;
/* The local variables of frame i (leaf first) of the thread a
 * pl_pystack_sample callback is being given, read now: numbers, strings,
 * None and bools by value (a string cut to ~120 bytes), containers by
 * size, other objects by type and address; unbound ones left out. The
 * program runs on meanwhile: a value may be a moment newer than the
 * stack. PL_ENOTSUP for CPython other than 3.11 to 3.13 (for now);
 * PL_EFAILED
 * where the frame could not be read. */
int pl_pystack_locals(struct pl_pystack *s, size_t i, struct pl_pylocal **out, size_t *n);
void pl_pylocals_free(struct pl_pylocal *v, size_t n);

struct pl_pystack;

/* Attach to pid: PL_EINPUT (gone, or not CPython), PL_ENOTSUP (a CPython
 * version we cannot read) or PL_ESYS (no permission), with a sentence in
 * err. */
int pl_pystack_open(pid_t pid, struct pl_pystack **out, struct pl_error *err);
void pl_pystack_close(struct pl_pystack *s);
/* "3.11.7" */
const char *pl_pystack_version(const struct pl_pystack *s);

/* Called for each thread sampled; the thread and its frames are valid
 * until it returns. */
typedef void (*pl_pythread_fn)(void *arg, const struct pl_pythread *t);

struct pl_pysample_stats {
	size_t threads; /* thread stacks read and reported */
	size_t idle;	/* idle threads left out */
	size_t nogil;	/* threads left out for not holding the GIL */
	size_t errors;	/* thread stacks that could not be read consistently */
};

/* What pl_pystack_sample reports: idle threads too; only the thread that
 * holds the GIL (the others are not read at all); threads' names (the
 * name field; a few dozen reads per thread every 256 samples). */
#define PL_PYSAMPLE_IDLE 1
#define PL_PYSAMPLE_GIL_ONLY 2
#define PL_PYSAMPLE_NAMES 4

/* Sample every thread once, as flags say (PL_PYSAMPLE_*). Returns PL_OK (even with errors counted in st), PL_ESYS once
 * the process is gone, PL_EFAILED when its interpreter could not be read
 * at all (it is exiting, or exec'd another program: attach again). */
int pl_pystack_sample(struct pl_pystack *s, unsigned flags, pl_pythread_fn fn, void *arg,
		      struct pl_pysample_stats *st);

/* A compact str's characters (kind 1, 2 or 4 bytes each, length of them)
 * as UTF-8 into out (room for 4 * length + 1), NUL-terminated; returns the
 * bytes written. NUL and non-characters become '?'. */
size_t pl_pystr_utf8(unsigned kind, const uint8_t *raw, size_t length, char *out);

/* Exposed for tests: the line of instruction index instr (code units from
 * the start of the code) in a CPython 3.11 location table. */
int pl_py311_line(const uint8_t *table, size_t len, int firstline, long instr);

#endif
