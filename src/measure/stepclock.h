/*
 * The training step's time, exactly: `--metric steps`.
 *
 * A training script's whole-process time is mostly start-up (a 2 s torch
 * import, workers), and its step is what a change speeds up. Sampling
 * stacks finds steps where a DataLoader's fetch marks them, but misses the
 * sub-millisecond optimizer update of a loop over its own tensors (7 of 40
 * steps found, their median 4x too long). So each run is given a
 * sitecustomize.py (on PYTHONPATH, chaining to any it shadows) that wraps
 * torch.optim.Optimizer subclasses' step() the first time one is built,
 * records the clock and the process's CPU time as each returns, and writes
 * "PID wall_ns,cpu_ns ..." at exit.
 * The run's value is the median interval between consecutive steps after
 * the warm-up (3 steps, 1 under 20, 0 under 6), data waits included, in
 * milliseconds; processes (DDP ranks) are pooled. Nothing is printed into
 * the program's output and nothing of it is parsed.
 */
#ifndef PL_STEPCLOCK_H
#define PL_STEPCLOCK_H

#include <stddef.h>

#include "error.h"

struct pl_stepclock {
	char dir[96]; /* the bench's folder: py/sitecustomize.py, clock */
};

/* PYTHONPATH as it was before a run */
struct pl_stepclock_env {
	char *path; /* NULL: unset */
	int armed;
};

/* Make the folder and its sitecustomize.py. PL_ESYS with why in err. */
int pl_stepclock_open(struct pl_stepclock *c, struct pl_error *err);
/* Before a run: no clock file, PYTHONPATH and PERFLOOP_STEP_CLOCK set in
 * this process's environment (the run inherits it); disarm puts them back. */
int pl_stepclock_arm(const struct pl_stepclock *c, struct pl_stepclock_env *env);
void pl_stepclock_disarm(struct pl_stepclock_env *env);
/* After a run: its value in ms and how many intervals, 1; else 0 and why.
 * cpu: the process's CPU time between steps (all its threads), not the
 * wall clock's. *cpu_ms: the CPU time's median step either way (how much of
 * a wall-clock step a faster or slower CPU could change). */
int pl_stepclock_read(const struct pl_stepclock *c, int cpu, double *ms, double *cpu_ms,
		      size_t *count, char *why, size_t wlen);
/* Remove the folder. */
void pl_stepclock_close(struct pl_stepclock *c);

/* The median step interval (ms) of one process's step-return clock
 * readings (ns), after the warm-up; intervals appended to out (room for
 * n); their count. */
size_t pl_stepclock_intervals(const long long *t_ns, size_t n, double *out);

#endif
