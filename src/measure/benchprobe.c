/*
 * Samples under the speed probe (see speedprobe.c): the in-process loops
 * timed on the measured CPU before and after each stretch of executions
 * (a batch, or ~10 ms of single executions shared across the commands)
 * say whether the host slowed the CPU meanwhile. Executions measured on a
 * contended CPU are kept on record but not counted, and measured again,
 * up to a cap; after the run they are judged once more against the
 * fastest probes of the whole run.
 */
#include "benchrun_int.h"

#include <math.h>
#include <stddef.h>

/* The longest bench waits, before one sample, for a contended CPU to
 * recover: the host's phases measured here last 1 to 10 s */
#define PROBE_MAX_WAIT_S 2.0

static int contended_reading(const struct pl_speedprobe *sp, struct pl_probe_reading r)
{
	return pl_speedprobe_slowdown(sp, r) > PL_PROBE_CONTENDED;
}

/* Executions between two probes: about this much of the command's time,
 * so that probing costs at most a few percent and a segment stays short
 * beside the host's phases */
#define PROBE_SEGMENT_S 0.010

/* Judge the executions [from, b->n) by the probes around them. Returns how
 * many counted executions it took out. */
static size_t judge_segment(struct pl_bench_run *run, struct pl_bench *b, size_t from,
			    struct pl_probe_reading pre, struct pl_probe_reading post)
{
	struct pl_probe_reading worst = {fmax(pre.lat_s, post.lat_s), fmax(pre.thr_s, post.thr_s)};
	int slow = contended_reading(&run->sp, worst);
	/* past the cap (half as many runs measured again as counted, and
	 * never more than half the planned runs), contended runs are counted:
	 * a machine contended throughout must not make the run last for ever,
	 * nor --precision's large planned count let it */
	size_t counted = b->n - b->replaced, cap = counted / 2 + 5;
	if (cap > b->target / 2)
		cap = b->target / 2;
	int replace = !run->cfg.contention_keep && b->replaced < cap;
	size_t out = 0;
	for (size_t i = from; i < b->n; i++) {
		struct pl_sample *s = &b->samples[i];
		s->probe = worst;
		if (!slow || !s->counted)
			continue;
		s->contended = 1;
		if (replace) {
			s->counted = 0;
			b->replaced++;
			out++;
		}
	}
	return out;
}

/* Close the run's open probe segment: a probe now judges every execution
 * since the segment opened, of every benchmark in it. */
void pl_bench_close_segment(struct pl_bench_run *run)
{
	if (!run->seg_open)
		return;
	struct pl_probe_reading post = pl_speedprobe_take(&run->sp);
	for (size_t i = 0; i < run->nbench; i++) {
		struct pl_bench *b = &run->bench[i];
		if (b->in_seg)
			judge_segment(run, b, b->seg_from, run->seg_pre, post);
		b->in_seg = 0;
	}
	run->seg_open = 0;
	run->seg_s = 0;
}

static double probe_wait_s(const struct pl_bench_run *run)
{
	return run->cfg.wait_quiet_s > 0 && !run->cfg.contention_keep ? PROBE_MAX_WAIT_S : 0;
}

static void sample_done(struct pl_bench_run *run, struct pl_bench *b, size_t idx, int alone)
{
	if (b->state == PL_BENCH_PENDING && pl_bench_finished(&run->cfg, b, alone)) {
		/* its last executions judged before it is called done */
		if (b->in_seg) {
			pl_bench_close_segment(run);
			if (!pl_bench_finished(&run->cfg, b, alone))
				goto report;
		}
		b->state = PL_BENCH_DONE;
	}
report:
	if (run->progress)
		run->progress(run->progress_arg, b, idx,
			      b->state == PL_BENCH_PENDING ? PL_PROGRESS_RUN : PL_PROGRESS_END);
}

/* A sample of one execution. Its probe segment stays open across samples
 * (and the interleaved commands') until it holds PROBE_SEGMENT_S of runs:
 * a probe around every execution of a 1 ms command cost as much as the
 * command (--batch 1 on /bin/true: 2.4x hyperfine's time). */
static int single_run(struct pl_bench_run *run, struct pl_bench *b, const struct io *io,
		      size_t idx, int alone, struct pl_error *err)
{
	if (!run->seg_open) {
		run->seg_pre = pl_speedprobe_wait(&run->sp, probe_wait_s(run), run->interrupt_flag);
		run->seg_open = 1;
		run->seg_s = 0;
	}
	if (!b->in_seg) {
		b->in_seg = 1;
		b->seg_from = b->n;
	}
	int rc = pl_bench_one_run(run, b, io, 1, err);
	if (rc != PL_OK)
		return rc;
	run->seg_s += b->samples[b->n - 1].wall_s;
	if (run->seg_s >= PROBE_SEGMENT_S || b->state != PL_BENCH_PENDING)
		pl_bench_close_segment(run);
	sample_done(run, b, idx, alone);
	return PL_OK;
}

/* One sample: a batch of k executions on a CPU that was not contended.
 * Probes taken every PROBE_SEGMENT_S of the command's time (and before and
 * after the batch) judge the executions between them; contended ones are
 * kept but not counted, and measured again. */
int pl_bench_measured_run(struct pl_bench_run *run, struct pl_bench *b, const struct io *io,
			  size_t idx, int alone, struct pl_error *err)
{
	size_t k = b->batch ? b->batch : 1, got = 0;
	if (k == 1)
		return single_run(run, b, io, idx, alone, err);
	pl_bench_close_segment(run);
	double wait = probe_wait_s(run);
	double seg_s = 0;
	struct pl_probe_reading pre = pl_speedprobe_wait(&run->sp, wait, run->interrupt_flag);
	size_t seg = b->n;
	while (got < k && b->state == PL_BENCH_PENDING && !pl_bench_interrupted(run)) {
		int rc = pl_bench_one_run(run, b, io, 1, err);
		if (rc != PL_OK)
			return rc;
		const struct pl_sample *s = &b->samples[b->n - 1];
		got += s->counted;
		seg_s += s->wall_s;
		if (got < k && seg_s < PROBE_SEGMENT_S && b->state == PL_BENCH_PENDING)
			continue;
		struct pl_probe_reading post = pl_speedprobe_take(&run->sp);
		got -= judge_segment(run, b, seg, pre, post);
		seg = b->n;
		seg_s = 0;
		pre = run->sp.last_contended && got < k
			  ? pl_speedprobe_wait(&run->sp, wait, run->interrupt_flag)
			  : post;
		if (run->progress && got < k && b->state == PL_BENCH_PENDING)
			run->progress(run->progress_arg, b, idx, PL_PROGRESS_RUN);
	}
	sample_done(run, b, idx, alone);
	return PL_OK;
}

/* Judge every execution again against the fastest probes of the whole run
 * (during the run, against the fastest so far): those found only now are
 * left out where the planned samples remain without them, and contended
 * ones are counted back in where fewer than three samples (or the runs
 * asked, if fewer) would be left. */
void pl_bench_judge_contention(const struct pl_speedprobe *sp, struct pl_bench *b, int keep)
{
	size_t k = b->batch ? b->batch : 1, counted = 0, newly = 0;
	for (size_t i = 0; i < b->n; i++) {
		const struct pl_sample *s = &b->samples[i];
		counted += s->counted != 0;
		newly += s->counted && !s->contended && s->probe.lat_s > 0 &&
			 contended_reading(sp, s->probe);
	}
	/* leave the newly found out only where the planned samples remain */
	size_t planned = b->target / k > 3 ? b->target / k : 3;
	int leave_out = !keep && (counted - newly) / k >= planned;
	for (size_t i = 0; i < b->n; i++) {
		struct pl_sample *s = &b->samples[i];
		if (s->counted && !s->contended && s->probe.lat_s > 0 &&
		    contended_reading(sp, s->probe)) {
			s->contended = 1;
			s->counted = !leave_out;
			counted -= leave_out;
		}
	}
	/* too few left to stand on their own (three, or the runs asked where
	 * fewer were): count them all. Not where the runs measured again have
	 * made up the count asked: --runs 2 would count four. */
	size_t least = b->target && b->target / k < 3 ? b->target / k : 3;
	if (least == 0)
		least = 1;
	if (counted / k < least)
		for (size_t i = 0; i < b->n; i++)
			if (b->samples[i].contended)
				b->samples[i].counted = 1;
	b->contended = b->contended_kept = 0;
	for (size_t i = 0; i < b->n; i++) {
		b->contended += b->samples[i].contended != 0;
		b->contended_kept += b->samples[i].contended && b->samples[i].counted;
	}
}
