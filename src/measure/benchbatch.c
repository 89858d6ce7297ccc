/*
 * The batch: how many consecutive executions make one sample (see
 * benchrun.c for why samples are batch means). --batch K fixes it; auto
 * calibrates it from a few single executions of each command, kept within
 * --max-time; after the run, batches are taken together where the samples
 * came out over the noise gate and enough remain.
 */
#include "benchrun_int.h"

#include <errno.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int pl_bench_parse_batch(const char *s)
{
	if (strcmp(s, "auto") == 0)
		return 0;
	char *end;
	errno = 0;
	long k = strtol(s, &end, 10);
	return errno || end == s || *end || k < 1 || k > 1000000 ? -1 : (int)k;
}

size_t pl_bench_batch_for(double exec_cv, size_t max_batch)
{
	if (!(exec_cv > 0) || max_batch < 1)
		return 1;
	double k = ceil(pow(exec_cv / PL_BATCH_TARGET_CV, 2));
	if (k < 1)
		k = 1;
	if (k > (double)max_batch)
		k = (double)max_batch;
	return (size_t)k;
}

/* The calibration: executions of b one at a time (about 0.3 s, 5 to 30 of
 * them, no more than --runs), kept as b's first samples. Sets b->exec_cv
 * and returns the batch they call for in *k. */
int pl_bench_calibrate(struct pl_bench_run *run, struct pl_bench *b, const struct io *io,
		       size_t idx, size_t *k, struct pl_error *err)
{
	const struct pl_bench_config *cfg = &run->cfg;
	b->batch = 1;
	*k = 1;
	size_t want = 5;
	for (size_t e = 0; e < want && b->state == PL_BENCH_PENDING && !pl_bench_interrupted(run);
	     e++) {
		int rc = pl_bench_measured_run(run, b, io, idx, 0, err);
		if (rc != PL_OK)
			return rc;
		if (e == 0 && b->n > 0) {
			double first = b->samples[b->n - 1].wall_s;
			double c = first > 0 ? ceil(0.3 / first) : 30;
			want = c < 5 ? 5 : c > 30 ? 30 : (size_t)c;
			if (cfg->runs > 0 && want > (size_t)cfg->runs)
				want = (size_t)cfg->runs;
		}
	}
	pl_bench_close_segment(run);
	double *x = malloc((b->n + 1) * sizeof(*x));
	if (!x)
		return PL_ENOMEM;
	size_t n = pl_bench_values(b, -1, 1, x);
	struct pl_describe d;
	b->exec_cv = NAN;
	if (n >= 2 && pl_stats_describe(x, n, &d) == PL_OK && d.mean > 0) {
		b->exec_cv = d.stdev / d.mean;
		/* the batch that lets the planned samples fit in --max-time */
		double per = d.mean > 0 ? d.mean : 1e-9;
		double samples = cfg->runs > 0 ? cfg->runs : cfg->min_runs > 5 ? cfg->min_runs : 5;
		double room = cfg->max_time_s > 0 ? cfg->max_time_s / (samples * per) : 1e9;
		size_t max_batch = room < 1 ? 1 : room > 1e6 ? 1000000 : (size_t)room;
		b->max_batch = max_batch;
		*k = pl_bench_batch_for(b->exec_cv, max_batch);
		snprintf(b->batch_why, sizeof(b->batch_why),
			 "per-execution CV %.1f%% in %zu calibration runs%s", b->exec_cv * 100, n,
			 *k < pl_bench_batch_for(b->exec_cv, 1000000) ? ", batch capped by --max-time"
								       : "");
	} else {
		snprintf(b->batch_why, sizeof(b->batch_why), "too few calibration runs");
	}
	free(x);
	return PL_OK;
}

/* Use batches of k from now on; the calibration's single executions are
 * dropped when k > 1 (a sample must be a whole batch). */
void pl_bench_set_batch(struct pl_bench *b, size_t k, const char *why)
{
	if (b->state == PL_BENCH_FAILED) /* its failing run stays on record */
		k = 1;
	if (k > 1 && b->batch != k) {
		b->n = 0;
		b->target = 0;
		b->contended = b->replaced = 0;
		if (b->state == PL_BENCH_DONE)
			b->state = PL_BENCH_PENDING;
	}
	b->batch = k;
	if (why)
		snprintf(b->batch_why, sizeof(b->batch_why), "%s", why);
}

/* The CV of wall-time samples of batch k. */
static double cv_at(const struct pl_bench *b, size_t k, double *scratch, size_t *n)
{
	struct pl_describe d;
	*n = pl_bench_values(b, -1, k, scratch);
	return *n >= 2 && pl_stats_describe(scratch, *n, &d) == PL_OK ? d.cv : NAN;
}

/* The calibration sees a fraction of a second of the machine; the run sees
 * all of it. Where its samples are over the noise gate, consecutive
 * batches are taken together (all commands alike, so that compared
 * samples still cover the same stretches of time) in the fewest that
 * bring every command under the gate while leaving each its --min-runs
 * samples; where none does, the batches stay as they were. Larger samples
 * of the same executions: nothing is dropped but the last incomplete one,
 * and a noise that does not average out (drift, phases) stays refused. */
size_t pl_bench_regroup(struct pl_bench_run *run, double *scratch)
{
	if (run->cfg.batch != 0 || run->nbench == 0)
		return 1;
	size_t k = run->bench[0].batch ? run->bench[0].batch : 1, least = SIZE_MAX;
	int over = 0;
	for (size_t i = 0; i < run->nbench; i++) {
		const struct pl_bench *b = &run->bench[i];
		size_t n;
		double cv = cv_at(b, k, scratch, &n);
		if (b->state == PL_BENCH_FAILED || (b->batch ? b->batch : 1) != k || !(cv == cv))
			return 1;
		over |= cv > PL_NOISE_CV_MAX;
		if (n < least)
			least = n;
	}
	size_t floor = run->cfg.min_runs > 5 ? (size_t)run->cfg.min_runs : 5;
	for (size_t m = 2; over && least / m >= floor; m++) {
		int ok = 1;
		for (size_t i = 0; i < run->nbench && ok; i++) {
			size_t n;
			double cv = cv_at(&run->bench[i], k * m, scratch, &n);
			ok = cv == cv && cv <= PL_NOISE_CV_MAX;
		}
		if (!ok)
			continue;
		for (size_t i = 0; i < run->nbench; i++) {
			struct pl_bench *b = &run->bench[i];
			size_t n;
			double was = cv_at(b, k, scratch, &n);
			size_t len = strlen(b->batch_why);
			snprintf(b->batch_why + len, sizeof(b->batch_why) - len,
				 "; then %zu batches taken together after the run (samples of %zu "
				 "runs had CV %.1f%%)",
				 m, k, was * 100);
			b->batch = k * m;
		}
		return m;
	}
	return 1;
}
