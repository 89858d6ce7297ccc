/*
 * The statistics over what was measured (see benchrun.c): the values of a
 * metric as batch means of the counted executions, each metric described
 * (the bootstrap interval for wall time only), outliers flagged per
 * execution, the comparisons with the reference (wall time, or --metric's
 * number in its direction), and why a timing came out too noisy.
 */
#include "benchrun_int.h"

#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "metric.h"

static int counted(const struct pl_sample *s)
{
	return s->counted;
}

static int value(const struct pl_sample *s, int metric, double *v)
{
	switch (metric) {
	case -1:
		*v = s->wall_s;
		return 1;
	case -2:
		*v = s->user_s;
		return 1;
	case -3:
		*v = s->sys_s;
		return 1;
	case -4:
		*v = s->user_s + s->sys_s;
		return 1;
	case -5:
		*v = (double)s->max_rss_kb * 1024.0;
		return 1;
	case -6:
		*v = (double)s->minflt;
		return 1;
	case -7:
		*v = (double)s->majflt;
		return 1;
	case -8:
		*v = s->alloc_bytes;
		return s->alloc_bytes >= 0;
	case -9:
		*v = s->alloc_calls;
		return s->alloc_calls >= 0;
	case -10:
		*v = s->metric;
		return !isnan(s->metric);
	default:
		*v = s->counter[metric];
		return s->counter_ok[metric];
	}
}

size_t pl_bench_values(const struct pl_bench *b, int metric, size_t batch, double *out)
{
	if (batch < 1)
		batch = 1;
	size_t k = 0, in = 0, ok = 1;
	double sum = 0;
	for (size_t i = 0; i < b->n; i++) {
		const struct pl_sample *s = &b->samples[i];
		if (!counted(s))
			continue;
		double v;
		if (value(s, metric, &v))
			sum += v;
		else
			ok = 0;
		if (++in == batch) {
			if (ok)
				out[k++] = sum / (double)batch;
			in = 0;
			ok = 1;
			sum = 0;
		}
	}
	return k;
}

size_t pl_bench_collect(const struct pl_bench *b, double *out, int metric)
{
	return pl_bench_values(b, metric, b->batch, out);
}

double pl_bench_current_median(const struct pl_bench *b)
{
	if (b->n == 0)
		return NAN;
	double *x = malloc(b->n * sizeof(*x));
	if (!x)
		return NAN;
	size_t k = pl_bench_collect(b, x, -1);
	double m = k ? pl_stats_median_inplace(x, k) : NAN;
	free(x);
	return m;
}

/* The bootstrap interval is computed for wall time only (it is what the
 * comparisons and --precision use); it is the costly part of finishing a
 * long benchmark. The other metrics report their median as the interval. */
static void metric(const struct pl_bench_config *cfg, const struct pl_bench *b, int which,
		   double *scratch, struct pl_metric_stats *m, uint64_t seed)
{
	memset(m, 0, sizeof(*m));
	size_t k = pl_bench_collect(b, scratch, which);
	if (k == 0 || pl_stats_describe(scratch, k, &m->d) != PL_OK)
		return;
	m->present = 1;
	if (which != -1 || pl_stats_bootstrap_median_ci(scratch, k, cfg->resamples, seed, 0.95,
							&m->ci_lo, &m->ci_hi) != PL_OK)
		m->ci_lo = m->ci_hi = m->d.p50;
}

void pl_bench_noise_cause(const struct pl_bench_config *cfg, const struct pl_bench *b, char *out,
			  size_t len)
{
	size_t k = b->batch ? b->batch : 1;
	double cv = b->wall.d.cv;
	if (b->contended_kept && !cfg->contention_keep) {
		snprintf(out, len,
			 "the host's other work slowed this CPU during %zu of the runs, too many "
			 "to leave out (perfloop's speed probe, measured around every run: a "
			 "busy sibling hyperthread or stolen time, for seconds at a time); "
			 "measure when the host is idle, or on a machine with dedicated CPUs "
			 "(no setting of this machine, 'perfloop system tune' included, changes "
			 "the host's)",
			 b->contended);
		return;
	}
	if (b->contended) {
		int w = snprintf(out, len, "with %zu runs on a contended CPU left out, ",
				 b->contended);
		if (w > 0 && (size_t)w < len) {
			out += w;
			len -= (size_t)w;
		}
	}
	double *x = malloc((b->n + 1) * sizeof(*x));
	size_t n = x ? pl_bench_values(b, -1, k, x) : 0;
	double trend = n >= 5 ? pl_stats_trend(x, n) : NAN;
	free(x);
	/* a drift, beyond chance: a rank correlation's sd is 1/sqrt(n-1) with
	 * no trend, so |rho| sqrt(n-1) >= 2.58 is p < 0.01 (5 random runs
	 * reached 0.70 one bench in three, and were told more runs would not
	 * help); never under 10 samples */
	if (fabs(trend) >= 0.6 && fabs(trend) * sqrt((double)n - 1) >= 2.58) {
		snprintf(out, len,
			 "the times %s over the run (rank correlation with time %+.2f): the machine's "
			 "speed changed or the command's work grows run after run; more runs will "
			 "not help, a quieter or pinned machine (taskset -c N) may; 'perfloop "
			 "system show' lists what disturbs this one, 'system tune' (root) fixes "
			 "the CPU frequency",
			 trend > 0 ? "grew" : "shrank", trend);
	} else if (k > 1 && b->exec_cv > 0 && cv > 2 * b->exec_cv / sqrt((double)k)) {
		snprintf(out, len,
			 "batching did not lower the noise (per execution %.1f%%, expected %.1f%% "
			 "for batches of %zu, measured %.1f%%): the machine is disturbed in bursts "
			 "(other processes, frequency changes); a quieter or pinned machine "
			 "(taskset -c N) helps",
			 b->exec_cv * 100, b->exec_cv / sqrt((double)k) * 100, k, cv * 100);
	} else if (k > 1 && strstr(b->batch_why, "capped")) {
		snprintf(out, len,
			 "batches of %zu are the most that --max-time %g s allows and are not "
			 "enough; a larger --max-time or a quieter machine helps",
			 k, cfg->max_time_s);
	} else if (k == 1) {
		/* will batches help? only if the runs' noise is independent */
		double *r = malloc((b->n + 1) * sizeof(*r));
		size_t m = r ? pl_bench_values(b, -1, 1, r) : 0;
		double ac = m >= 10 ? pl_stats_autocorr1(r, m) : NAN;
		free(r);
		if (ac >= 0.3)
			snprintf(out, len,
				 "the noise comes in stretches (lag-1 correlation of the runs "
				 "%.2f): the machine slows down for a while, then recovers, so "
				 "batches of consecutive runs average little of it out; pinning "
				 "(taskset -c N) or a quieter machine helps",
				 ac);
		else if (!isnan(ac))
			snprintf(out, len,
				 "the runs' noise is independent (lag-1 correlation %.2f): batches "
				 "average it out (--batch auto, or --batch K: a sample's CV falls as "
				 "1/sqrt(K))",
				 ac);
		else /* under 10 runs: said as unknown (it once read "independent0.00") */
			snprintf(out, len,
				 "too few runs (%zu) to tell whether the noise comes in stretches; "
				 "where it does not, batches average it out (--batch auto, or "
				 "--batch K: a sample's CV falls as 1/sqrt(K))",
				 m);
	} else {
		snprintf(out, len,
			 "more samples (--runs), batches (--batch K), a quieter machine or pinning "
			 "(taskset -c N) help");
	}
}

int pl_bench_compare(const double *cand, size_t nc, const double *ref, size_t nr, size_t resamples,
		     uint64_t seed, struct pl_comparison *out)
{
	double *a = malloc(nc * sizeof(*a)), *b = malloc(nr * sizeof(*b));
	if (!a || !b) {
		free(a);
		free(b);
		return PL_ENOMEM;
	}
	memcpy(a, cand, nc * sizeof(*a));
	memcpy(b, ref, nr * sizeof(*b));
	double ma = pl_stats_median_inplace(a, nc), mb = pl_stats_median_inplace(b, nr);
	free(a);
	free(b);
	out->ratio = mb > 0 ? ma / mb : NAN;
	int rc = pl_stats_bootstrap_ratio_ci(cand, nc, ref, nr, resamples, seed, 0.95, &out->ci_lo,
					     &out->ci_hi);
	struct pl_mwu u;
	if (rc == PL_OK)
		rc = pl_stats_mann_whitney(cand, nc, ref, nr, &u);
	if (rc != PL_OK) {
		out->p = 1;
		out->change = PL_CHANGE_NONE;
		return rc;
	}
	out->p = u.p;
	out->change = pl_stats_change(u.p, out->ci_lo, out->ci_hi, 0.05, 0.01);
	return PL_OK;
}

int pl_bench_finish(struct pl_bench_run *run)
{
	size_t maxn = 1;
	for (size_t i = 0; i < run->nbench; i++)
		if (run->bench[i].n > maxn)
			maxn = run->bench[i].n;
	double *scratch = malloc(maxn * sizeof(*scratch));
	if (!scratch)
		return PL_ENOMEM;
	/* the fastest readings (5th percentile): the loops' time when nothing
	 * interrupted or contended them, which is the speed the counted runs
	 * were measured at; a machine slowed throughout a run raises it */
	run->probe_fast = pl_speedprobe_fast(&run->sp);
	run->probe_slowest = 1;
	for (size_t i = 0; i < run->sp.n; i++)
		run->probe_slowest = fmax(run->probe_slowest,
					  pl_speedprobe_slowdown(&run->sp, run->sp.r[i]));
	for (size_t i = 0; i < run->nbench; i++)
		pl_bench_judge_contention(&run->sp, &run->bench[i], run->cfg.contention_keep);
	pl_bench_regroup(run, scratch);
	for (size_t i = 0; i < run->nbench; i++) {
		struct pl_bench *b = &run->bench[i];
		uint64_t seed = run->cfg.seed + i;
		metric(&run->cfg, b, -1, scratch, &b->wall, seed);
		memset(&b->wall_exec, 0, sizeof(b->wall_exec));
		size_t ne = pl_bench_values(b, -1, 1, scratch);
		if (ne && pl_stats_describe(scratch, ne, &b->wall_exec.d) == PL_OK) {
			b->wall_exec.present = 1;
			b->wall_exec.ci_lo = b->wall_exec.ci_hi = b->wall_exec.d.p50;
		}
		metric(&run->cfg, b, -2, scratch, &b->user, seed);
		metric(&run->cfg, b, -3, scratch, &b->sys, seed);
		metric(&run->cfg, b, -4, scratch, &b->cpu, seed);
		metric(&run->cfg, b, -5, scratch, &b->rss, seed);
		metric(&run->cfg, b, -6, scratch, &b->minflt, seed);
		metric(&run->cfg, b, -7, scratch, &b->majflt, seed);
		metric(&run->cfg, b, -8, scratch, &b->alloc_bytes, seed);
		metric(&run->cfg, b, -9, scratch, &b->alloc_calls, seed);
		metric(&run->cfg, b, -10, scratch, &b->reported, seed);
		for (size_t c = 0; c < run->cfg.counters.n; c++)
			if (run->cfg.counters.supported[c])
				metric(&run->cfg, b, (int)c, scratch, &b->counter[c], seed);
		free(b->outlier);
		b->outlier = calloc(b->n ? b->n : 1, 1);
		size_t k = pl_bench_values(b, -1, 1, scratch);
		if (b->outlier && k > 0) {
			unsigned char *flags = calloc(k, 1);
			if (flags) {
				pl_stats_outliers(scratch, k, flags);
				for (size_t s = 0, j = 0; s < b->n; s++)
					if (counted(&b->samples[s]))
						b->outlier[s] = flags[j++];
				free(flags);
			}
		}
	}
	free(run->cmp);
	run->cmp = NULL;
	run->ncmp = 0;
	const struct pl_bench *ref = run->nbench ? &run->bench[run->reference] : NULL;
	if (run->nbench > 1 && ref->wall.present) {
		run->cmp = calloc(run->nbench, sizeof(*run->cmp));
		double *rs = malloc((ref->n ? ref->n : 1) * sizeof(*rs));
		if (!run->cmp || !rs) {
			free(rs);
			free(scratch);
			return PL_ENOMEM;
		}
		for (size_t i = 0; i < run->nbench; i++) {
			if (i == run->reference || !run->bench[i].wall.present)
				continue;
			/* batches of different sizes (--order sequential calibrates
			 * each command alone): compared per execution */
			size_t k = run->bench[i].batch == ref->batch ? ref->batch : 1;
			/* --metric: the program's number is what is compared */
			int which = run->cfg.metric ? -10 : -1;
			size_t nr = pl_bench_values(ref, which, k, rs);
			size_t nc = pl_bench_values(&run->bench[i], which, k, scratch);
			struct pl_comparison *c = &run->cmp[run->ncmp];
			c->bench = i;
			c->reference = run->reference;
			if (pl_bench_compare(scratch, nc, rs, nr, run->cfg.resamples,
					     run->cfg.seed ^ (i + 1), c) == PL_OK &&
			    isfinite(c->ratio) && isfinite(c->ci_lo) && isfinite(c->ci_hi)) {
				if (run->cfg.metric) {
					c->dimension = run->cfg.metric->name;
					/* a larger number of samples/s is the faster one */
					if (run->cfg.metric->higher && c->change != PL_CHANGE_NONE)
						c->change = c->change == PL_CHANGE_FASTER
								? PL_CHANGE_SLOWER
								: PL_CHANGE_FASTER;
				}
				run->ncmp++;
			}
		}
		free(rs);
	}
	free(scratch);
	return PL_OK;
}
