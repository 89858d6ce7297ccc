/*
 * Private to the loop (loop.c, loopturn.c, loopjournal.c): the functions
 * these files share. Callers outside them use loop.h. loop.c holds the
 * loop's state, measuring and the baseline; loopturn.c one turn (try);
 * loopjournal.c the steps after a turn's verdict and the recovery of a turn
 * that was interrupted in them.
 */
#ifndef PL_LOOP_INT_H
#define PL_LOOP_INT_H

#include <jansson.h>
#include <signal.h>
#include <stddef.h>

#include "error.h"
#include "gitops.h"
#include "loop.h"

/* ---- the loop's state and measuring (loop.c) ---- */

/* TOP/.perfloop/NAME */
void pl_loop_state_path(const struct pl_git *g, const char *name, char *out, size_t len);
int pl_loop_save_state(const struct pl_git *g, json_t *state, struct pl_error *err);
/* A scratch file under .perfloop with this process's id in its name. */
void pl_loop_scratch(const struct pl_git *g, const char *what, char *out, size_t len);
/* The suite's time limit: 4x a benchmark run's. */
double pl_loop_suite_timeout(json_t *state);
/* Run the suite (none: *code 0); PL_EINPUT when it cannot be started. */
int pl_loop_run_suite(const char *suite, double timeout_s, const volatile sig_atomic_t *intr,
		      int *code, struct pl_error *err);
/* Tell the progress callback which phase runs (nothing when none is set). */
void pl_loop_phase(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* Bench every stored command with the stored settings; write `file`. */
int pl_loop_measure(const struct pl_git *g, json_t *state, const char *file,
		    const volatile sig_atomic_t *intr, json_t **summary, struct pl_error *err);
/* The checkpoint a loop's baseline or last turn was measured from. */
void pl_loop_note_checkpoint(json_t *state, json_t *cp);
/* 1 and why when the loop's policy says it is done. */
int pl_loop_done(json_t *state, char *why, size_t len);

/* ---- the journal of a turn (loopjournal.c) ---- */

void pl_loop_journal_path(const struct pl_git *g, char *out, size_t len);
int pl_loop_journal_write(const struct pl_git *g, json_t *j, struct pl_error *err);
/* The fault test (t505) kills a turn here with PERFLOOP_FAULT_KILL=STEP. */
void pl_loop_fault_point(const char *step);
/* Signals that would cut a turn's last steps in two wait until they end. */
void pl_loop_hold_signals(sigset_t *old);
/* The steps after an accepted commit, each safe to repeat. */
int pl_loop_finish_accept(const struct pl_git *g, json_t *state, json_t *j, char *warn, size_t wlen,
			  struct pl_error *err);
/* The steps of a reject, each safe to repeat. */
int pl_loop_finish_reject(const struct pl_git *g, json_t *state, json_t *j,
			  struct pl_revert_result *reverted, struct pl_error *err);

#endif
