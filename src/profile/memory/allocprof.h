/*
 * profile --alloc: what libperfloop-alloc.so (src/preload/alloc.c) wrote,
 * read back. Each sampled allocation of s bytes at mean interval RATE
 * stands for s / (1 - exp(-s/RATE)) bytes (its inverse probability of
 * being sampled), so sums by stack are unbiased estimates of the bytes
 * allocated there. Replayed in order with the sampled frees, they give
 * the bytes still live at exit and at each process's peak, by stack.
 */
#ifndef PL_ALLOCPROF_H
#define PL_ALLOCPROF_H

#include <jansson.h>
#include <stdint.h>

#include "error.h"
#include "profdata.h"

struct pl_alloc_stack {
	size_t off, depth;   /* frame ids in pl_alloc.ids, root first */
	uint32_t site;	     /* the allocating frame (allocator wrappers skipped) */
	uint32_t pysite;     /* its innermost Python frame, or UINT32_MAX */
	double alloc_bytes;  /* estimated */
	double calls;	     /* estimated allocations */
	double live_end;     /* estimated, live when its process exited */
	double live_peak;    /* live at its process's peak */
	uint64_t samples;
	double live;	     /* while replaying */
};

struct pl_alloc_proc {
	int pid, ppid;
	uint64_t calls, bytes; /* exact: every allocation the sampler saw */
	uint64_t samples, dropped;
	uint64_t py_samples;   /* samples with Python frames */
	double est_bytes;      /* the samples' estimate of bytes */
	double peak_live, peak_t, end_live, duration;
	int finished;	       /* its end record was written (not killed, not exec'd) */
	int ended_at_teardown; /* end_live and live_end are at the start of the
				* interpreter's teardown, not at exit (CPython) */
	double growth[10];     /* live bytes at the end of each tenth of its run */
	double floor[10];      /* ... the least within each tenth: what stays while
				* temporaries come and go */
};

struct pl_alloc {
	uint64_t rate;
	struct pl_prof prof; /* frames (and the sites' names) */
	uint32_t *ids;
	size_t nids, capids;
	struct pl_alloc_stack *stacks;
	size_t nstacks, capstacks;
	struct pl_alloc_proc *procs;
	size_t nprocs;
	size_t files_empty; /* processes that wrote nothing (exec'd before a flush) */
	uint8_t *is_py;	    /* per frame id: a Python function's (from a 'C' record) */
	size_t cap_is_py;
};

/* Read every alloc.PID.N in dir. root: paths shown relative to it. */
int pl_alloc_read_dir(const char *dir, const char *root, struct pl_alloc *a, struct pl_error *err);

/* A profile of one measure in KiB, with a root per process when there
 * are several. */
enum { PL_ALLOC_ALLOCATED = 0, PL_ALLOC_LIVE_END = 1, PL_ALLOC_LIVE_PEAK = 2 };
int pl_alloc_profile(const struct pl_alloc *a, int what, struct pl_prof *out);

/* The perfloop.alloc/1 document. */
json_t *pl_alloc_json(const struct pl_alloc *a, const char *command, size_t top);

/* The sites' table, most allocated first: printed. */
void pl_alloc_print(const struct pl_alloc *a, size_t top);

void pl_alloc_release(struct pl_alloc *a);

/* bench --alloc: the exact totals of every process that wrote its end
 * record in dir (calls, bytes: may be NULL), then every file removed.
 * Returns how many processes had totals. */
int pl_alloc_totals(const char *dir, uint64_t *calls, uint64_t *bytes);

/* libperfloop-alloc.so: beside the running binary (the build tree) or in
 * ../lib/perfloop (installed). 0 found, -1 not. */
int pl_alloc_library(char *out, size_t len);

/* This process's environment set so that what it starts from now on has
 * the sampler preloaded (before any LD_PRELOAD already there), writing to
 * dir at one sample per rate bytes. PL_ESYS when the library is not
 * installed. */
int pl_alloc_env(const char *dir, unsigned long long rate, struct pl_error *err);

/* dir's files removed, then dir. */
void pl_alloc_dir_remove(const char *dir);

#endif
