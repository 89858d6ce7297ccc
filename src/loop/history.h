/*
 * The benchmark history: every `bench` run inside a git repository is
 * recorded in TOP/.perfloop/history.db (SQLite, WAL, versioned schema) with
 * the commit, a hash of the benchmark's spec, the fingerprint and every
 * sample, so `perfloop history` can show series over commits and find
 * regressions between consecutive ones.
 */
#ifndef PL_HISTORY_H
#define PL_HISTORY_H

#include <jansson.h>

#include "error.h"
#include "strbuf.h"

struct pl_history;

/* Open (creating and migrating as needed). A file that is not a perfloop
 * history database is an error, never overwritten. */
int pl_history_open(const char *path, struct pl_history **h, struct pl_error *err);
void pl_history_close(struct pl_history *h);

/* Record a perfloop.bench/1 summary taken at `commit` ("" for none) with
 * the tree in state `tree` (NULL unknown): "clean", "dirty:HASH" (the
 * uncommitted changes' digest), "turn:N" (a loop turn being judged),
 * "turn:N:accept" or "turn:N:reject". */
int pl_history_record(struct pl_history *h, json_t *summary, const char *commit,
		      const char *tree, struct pl_error *err);

/* Record into TOP/.perfloop/history.db of the repository containing dir;
 * PL_OK without doing anything outside a repository. tree NULL: found
 * from git (clean or dirty:HASH). */
int pl_history_record_here(const char *dir, json_t *summary, const char *tree,
			   struct pl_error *err);

/* The latest run recorded with tree `from` gets `to` (a turn's verdict). */
int pl_history_retag_here(const char *dir, const char *from, const char *to,
			  struct pl_error *err);

/* Text renderings for the history command. */
int pl_history_list(struct pl_history *h, struct pl_strbuf *out, struct pl_error *err);
int pl_history_show(struct pl_history *h, const char *name, struct pl_strbuf *out,
		    struct pl_error *err);
/* Returns the number of regressions found (>= 0) or an error. */
int pl_history_regressions(struct pl_history *h, struct pl_strbuf *out, struct pl_error *err);
/* Per benchmark name, its recordings of a commit's own state in order:
 * [{name, points: [{commit, created, p50, n, cv, regression[, ratio]}]}]
 * (regression: slower than the previous recording of the same spec, as
 * pl_history_regressions finds). NULL on error. */
json_t *pl_history_series(struct pl_history *h, struct pl_error *err);
int pl_history_export_csv(struct pl_history *h, struct pl_strbuf *out, struct pl_error *err);

#endif
