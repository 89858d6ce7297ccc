/*
 * One run's per-rank outputs taken together (perfloop merge). Under
 * mpirun, srun or torchrun one perfloop runs per rank and writes its own
 * profile or bench summary (ranks.h); this module reads them back: each
 * input's rank from what it recorded (a summary's `launch`, a profile's
 * PREFIX.findings.json), checks that they belong together (no rank twice,
 * the same benchmarks, ranks missing or world sizes that disagree said),
 * and then
 *   - profiles: one merged profile, read a rank at a time into a scratch
 *     profile and added in, so memory grows with the distinct stacks and
 *     not with the inputs; a row per rank (samples, the top function by
 *     self samples and its share, the data-loading share, the share in
 *     collectives: of the threads that run Python where some do, joining
 *     and leaving the group left out). A rank whose share of samples in collectives is at
 *     most half the other ranks' median share, where that median is 0.2
 *     or more, is the straggler: the others wait at each collective for
 *     it, and it does not (pl_merge_comm_frame names the frames);
 *   - summaries: per benchmark a row per rank (p50, p90, p99, max of the
 *     wall time), the spread (slowest p50 over the median rank's) and the
 *     stragglers: a rank whose p50 is at least PL_STRAGGLER_RATIO of the
 *     other ranks' median p50 and whose runs are slower than the others'
 *     pooled runs by a Mann-Whitney test at PL_STRAGGLER_P (3 runs or more
 *     on each side). The ratio is taken against the *other* ranks so that
 *     two ranks can name a straggler. The modified z-score (0.6745 (p50 -
 *     median) / MAD, Iglewicz and Hoaglin) is reported beside but does not
 *     decide: half a job on slower nodes spreads the MAD so wide that no
 *     rank stands out by it, yet every collective waits for those ranks.
 */
#ifndef PL_MERGE_H
#define PL_MERGE_H

#include <jansson.h>
#include <stddef.h>
#include <stdint.h>

#include "error.h"
#include "profdata.h"

#define PL_MERGE_SCHEMA "perfloop.merge/1"
#define PL_STRAGGLER_RATIO 1.10
#define PL_STRAGGLER_P 0.01
#define PL_STRAGGLER_FINDINGS 10 /* per benchmark, the slowest */

/* which rank an input was */
struct pl_merge_who {
	char *path;
	long rank;	 /* -1 until known */
	long world_size; /* -1 unknown */
	char host[256];
	char launcher[32];
	int from_order; /* not recorded: the lowest rank left, in the inputs' order */
};

struct pl_merge_prof_rank {
	struct pl_merge_who who;
	char *prefix; /* the profile's outputs' prefix (PREFIX.folded, ...) */
	uint64_t samples;
	/* where some threads run Python, the row is theirs (the others are
	 * the libraries' helpers, helper_share of the samples; NAN where no
	 * thread runs Python and every one counts) */
	char *top;	       /* the frame with the most self samples (NULL: none) */
	double top_share;      /* of the counted threads' samples */
	double data_share;     /* NAN where the profile shows no DataLoader */
	double helper_share;
	const char *data_from; /* "steps" (PREFIX.steps.json) or "stacks" */
	double comm_share;     /* samples in a collective (all-reduce, barrier...) */
	double comm_others;    /* the other ranks' median comm_share; NAN alone */
	int straggler;
};

/* 1: a frame of a collective operation or its wait: torch.distributed's
 * (distributed_c10d.py, c10d::), MPI's (MPI_Allreduce, PMPI_, ompi_coll,
 * opal_progress), gloo's and NCCL's all-reduce, barrier, broadcast,
 * all-gather, reduce-scatter; -1: joining or leaving the group
 * (init_process_group, MPI_Init, MPI_Finalize...: no step's wait); 0
 * other. */
int pl_merge_comm_frame(const char *name, const char *file);
#define PL_STRAGGLER_WAIT 0.2 /* the others' median share in collectives */

struct pl_merge_row {
	double *x; /* the counted wall-time samples */
	size_t n;
	double p50, p90, p99, max;
	double ratio; /* p50 over the other ranks' median p50; NAN alone */
	double z;     /* modified z-score; NAN under 3 ranks or no spread */
	double p;     /* Mann-Whitney against the other ranks' runs; NAN: too few */
	int straggler;
};

struct pl_merge_sum_rank {
	struct pl_merge_who who;
	struct pl_merge_row *rows; /* one per benchmark, in pl_merge.bench's order */
};

struct pl_merge_benchmark {
	char *name, *command;
	double median_p50;
	double spread; /* the slowest rank's p50 over median_p50 */
	size_t stragglers;
};

struct pl_merge {
	int by_rank; /* a root frame "rank N" over each rank's stacks */
	struct pl_prof prof;
	struct pl_merge_prof_rank *profs;
	size_t nprofs, capprofs;
	struct pl_merge_sum_rank *sums;
	size_t nsums, capsums;
	struct pl_merge_benchmark *bench;
	size_t nbench;
	char *spec_hash; /* the summaries' perfloop.yaml benchmark, if any */
	char **problems; /* what does not fit: missing ranks, world sizes */
	size_t nproblems, capproblems;
};

void pl_merge_init(struct pl_merge *m);
void pl_merge_release(struct pl_merge *m);

/* One input: a bench summary (perfloop.bench/1), or a profile given as its
 * collapsed stacks (PREFIX.folded, .collapsed), as any of its other
 * outputs (PREFIX.svg, .speedscope.json, .findings.json) or as PREFIX.
 * A summary is read now; a profile's stacks by pl_merge_run. */
int pl_merge_add(struct pl_merge *m, const char *path, struct pl_error *err);

/* Ranks assigned and checked (PL_EINPUT: a rank twice, summaries of
 * different benchmarks or specs), profiles merged in rank order, the
 * per-rank rows and stragglers computed. */
int pl_merge_run(struct pl_merge *m, struct pl_error *err);

/* The perfloop.merge/1 document. */
json_t *pl_merge_json(const struct pl_merge *m);
/* The tables as text (malloc'd; NULL when out of memory). */
char *pl_merge_text(const struct pl_merge *m);
/* Each straggler as a finding (distributed.straggler, level 5). */
struct pl_findings;
int pl_merge_findings(const struct pl_merge *m, struct pl_findings *out);

#endif
