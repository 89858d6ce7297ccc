/*
 * The one-change loop: `baseline` measures and checkpoints, `try` measures
 * the change identically, verifies it against the baseline, and either
 * commits exactly the touched files with the ledger line (accept) or
 * reverts them and keeps the evidence (reject). State lives in
 * .perfloop/loop.json; the current baseline summary in .perfloop/baseline.json.
 */
#ifndef PL_LOOP_H
#define PL_LOOP_H

#include <jansson.h>
#include <signal.h>

#include "error.h"
#include "gitops.h"
#include "verdict.h"

struct pl_bench;

#define PL_LOOP_SCHEMA "perfloop.loop/1"
#define PL_LEDGER_DEFAULT "docs/perf/baseline_ledger.jsonl"
#define PL_LOOP_TIMEOUT_DEFAULT 600.0 /* seconds per run; the suite gets 4x */

struct pl_loop_settings {
	const char *const *bench; /* command strings */
	const char *const *names; /* may be NULL or shorter */
	size_t nbench, nnames;
	const char *suite;	 /* NULL: none */
	int runs;		 /* 0: bench's policy (at least 3) */
	int max_iterations;	 /* default 3 */
	double min_gain;	 /* default 0.05 */
	const char *ledger;	 /* default PL_LEDGER_DEFAULT; inside the repository */
	double timeout_s;	 /* per run; 0: PL_LOOP_TIMEOUT_DEFAULT */
	int batch;		 /* runs per sample; 0: calibrated at baseline, then kept */
	int batch_auto;		 /* --batch auto was said (--runs then counts samples) */
	int warmup;		 /* warm-up runs per command; -1: bench's default */
	int min_runs;		 /* at least this many runs (>= 3); 0: 3 */
	int sim;		 /* --sim (enum pl_sim_mode): auto simulates at baseline
				  * where affordable, and every turn as the baseline did */
	const char *metric;	 /* --metric SPEC: the program's own number decides */
	const char *metric_name; /* its dimension (NULL: "metric") */
	int metric_higher;	 /* larger is better */
};

/* How baseline and try report progress (the command draws it; NULL
 * members: nothing): each benchmark's runs as bench's progress, and the
 * phases ("running the suite", "counting instructions under Valgrind:
 * about 12 s"). Set before pl_loop_baseline or pl_loop_try. */
struct pl_loop_progress {
	void (*runs)(void *arg, const struct pl_bench *b, size_t index, int event);
	void (*phase)(void *arg, const char *what);
	void *arg;
};
void pl_loop_set_progress(const struct pl_loop_progress *p);

/* Measure, require CV <= 0.05, store the baseline and a checkpoint.
 * PL_EFAILED when the suite or a command fails; PL_ENOTSUP when too noisy
 * (err says what helps). */
int pl_loop_baseline(const struct pl_git *g, const struct pl_loop_settings *s,
		     const volatile sig_atomic_t *intr, json_t **state, struct pl_error *err);

struct pl_try_outcome {
	enum pl_verdict_kind kind;
	struct pl_verdict verdict; /* of the first benchmark, for printing */
	double gain;
	char commit[64];		  /* on accept */
	struct pl_revert_result reverted; /* on reject */
	int done;			  /* the loop is over after this turn */
	char why_done[256];
	char evidence[256];   /* where the rejected run was kept */
	char patch[256];      /* the rejected change, binary-safe: `git apply` it */
	char failure[1024];   /* why the change's run failed, if it did */
	char recovered[1200]; /* an interrupted earlier turn completed or dropped */
	char excluded[1024];  /* ignored paths left out of the commit */
	char unmade[1024];    /* paths made or changed while measuring, not committed */
	char unkept[1024];    /* changed untracked files too large for the checkpoint
			       * to keep (PERFLOOP_CHECKPOINT_MAX_FILE): neither
			       * committed nor reverted */
	char warning[1200];   /* on accept: what could not follow the commit */
};

/* One turn. PL_EINPUT without a baseline; PL_ENOTSUP when the loop is done
 * and cont is 0 (err says why). */
int pl_loop_try(const struct pl_git *g, const char *message, int cont,
		const volatile sig_atomic_t *intr, struct pl_try_outcome *out,
		struct pl_error *err);
void pl_try_outcome_release(struct pl_try_outcome *o);

/* Complete or drop a turn that was interrupted (see the journal in loopjournal.c);
 * note says what was done, "" when there was nothing to do. */
int pl_loop_recover(const struct pl_git *g, char *note, size_t len, struct pl_error *err);
/* 1 and a sentence in what when an interrupted turn waits to be completed. */
int pl_loop_pending(const struct pl_git *g, char *what, size_t len);

/* One perfloop at a time changes a repository's loop: an exclusive lock on
 * .perfloop/lock, held until the process exits. PL_EINPUT when taken. */
int pl_loop_lock(const struct pl_git *g, struct pl_error *err);

/* The loop's state, or PL_EINPUT when there is none. */
int pl_loop_state(const struct pl_git *g, json_t **state, struct pl_error *err);
/* Whether rel (from loop.json or --ledger) may be the ledger of the tree
 * at top: confined (pl_relpath_check, not under .perfloop), through real
 * directories, a regular file where it exists. NULL, or why not. */
const char *pl_loop_ledger_problem(const char *top, const char *rel);

#endif
