/* Unit tests for batch statistics (src/measure/benchbatch.c, benchprobe.c, benchstats.c): batch means are
 * exact on synthetic runs, the CV of a sample falls as 1/sqrt(k) on
 * independent noise, the calibrated batch is (CV / 2.5%)^2 within its cap,
 * the trend statistic sees drift, the speed probe's verdicts, runs on a
 * contended CPU left out or counted, and batches regrouped after a run. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "testutil.h"

#include "benchrun.h"
#include "stats.h"

static void fill(struct pl_bench *b, const double *wall, size_t n)
{
	memset(b, 0, sizeof(*b));
	b->samples = calloc(n, sizeof(*b->samples));
	for (size_t i = 0; i < n; i++) {
		b->samples[i].wall_s = wall[i];
		b->samples[i].user_s = wall[i] / 2;
		b->samples[i].max_rss_kb = (long)(i + 1);
		b->samples[i].counted = 1;
	}
	b->n = b->cap = n;
}

static void test_batch_means_exact(void **state)
{
	(void)state;
	double w[] = {1, 2, 3, 4, 5, 6, 7};
	struct pl_bench b;
	fill(&b, w, 7);
	double out[8];
	/* batches of 3: (1+2+3)/3, (4+5+6)/3; the incomplete 7 is left out */
	assert_int_equal(pl_bench_values(&b, -1, 3, out), 2);
	assert_close(out[0], 2.0, 1e-15);
	assert_close(out[1], 5.0, 1e-15);
	/* every metric follows the same batching */
	assert_int_equal(pl_bench_values(&b, -2, 3, out), 2);
	assert_close(out[1], 2.5, 1e-15);
	assert_int_equal(pl_bench_values(&b, -5, 2, out), 3);
	assert_close(out[0], 1.5 * 1024, 1e-12);
	/* batch 1 is the runs themselves; uncounted runs are skipped */
	b.samples[1].counted = 0;
	assert_int_equal(pl_bench_values(&b, -1, 1, out), 6);
	assert_close(out[1], 3.0, 1e-15);
	assert_int_equal(pl_bench_values(&b, -1, 2, out), 3);
	assert_close(out[0], 2.0, 1e-15); /* (1+3)/2 */
	free(b.samples);
}

static void test_cv_falls_as_sqrt_k(void **state)
{
	(void)state;
	/* independent noise: uniform on [0.9, 1.1] (CV 5.77%) */
	size_t n = 64000;
	double *w = malloc(n * sizeof(*w));
	struct pl_rng r;
	pl_rng_seed(&r, 42);
	for (size_t i = 0; i < n; i++)
		w[i] = 0.9 + 0.2 * ((double)(pl_rng_next(&r) >> 11) / 9007199254740992.0);
	struct pl_bench b;
	fill(&b, w, n);
	double *out = malloc(n * sizeof(*out));
	struct pl_describe d1, dk;
	size_t m = pl_bench_values(&b, -1, 1, out);
	assert_int_equal(pl_stats_describe(out, m, &d1), 0);
	for (size_t k = 4; k <= 64; k *= 4) {
		m = pl_bench_values(&b, -1, k, out);
		assert_int_equal(m, n / k);
		assert_int_equal(pl_stats_describe(out, m, &dk), 0);
		double expect = d1.cv / sqrt((double)k);
		assert_true(fabs(dk.cv - expect) < 0.1 * expect);
	}
	free(out);
	free(w);
	free(b.samples);
}

static void test_batch_for(void **state)
{
	(void)state;
	assert_int_equal(pl_bench_batch_for(0.01, 1000), 1);
	assert_int_equal(pl_bench_batch_for(0.025, 1000), 1);
	assert_int_equal(pl_bench_batch_for(0.05, 1000), 4);
	assert_int_equal(pl_bench_batch_for(0.147, 1000), 35); /* ceil(34.57) */
	assert_int_equal(pl_bench_batch_for(0.147, 10), 10);   /* capped */
	assert_int_equal(pl_bench_batch_for(NAN, 10), 1);
	assert_int_equal(pl_bench_batch_for(0.5, 0), 1);
}

static void test_trend(void **state)
{
	(void)state;
	double up[] = {1, 2, 3, 4, 5, 6};
	double down[] = {6, 5, 4, 3, 2, 1};
	double flat[] = {1, 3, 2, 3, 1, 2, 2, 1, 3};
	assert_close(pl_stats_trend(up, 6), 1.0, 1e-12);
	assert_close(pl_stats_trend(down, 6), -1.0, 1e-12);
	assert_true(fabs(pl_stats_trend(flat, 9)) < 0.3);
	assert_true(isnan(pl_stats_trend(up, 2)));
}

/* the probe's verdict: the larger of its two loops' slow-downs against
 * the fastest seen; a lower quartile only from five readings */
static void test_speedprobe(void **state)
{
	(void)state;
	struct pl_speedprobe sp;
	pl_speedprobe_init(&sp, 1);
	struct pl_probe_reading fast = {0.16e-3, 0.11e-3}, ports = {0.16e-3, 0.22e-3},
				chain = {0.40e-3, 0.11e-3};
	pl_speedprobe_record(&sp, ports);
	assert_close(pl_speedprobe_slowdown(&sp, ports), 1.0, 1e-12); /* the only one yet */
	pl_speedprobe_record(&sp, fast);
	assert_close(pl_speedprobe_slowdown(&sp, ports), 2.0, 1e-12);
	assert_close(pl_speedprobe_slowdown(&sp, chain), 2.5, 1e-12);
	assert_close(pl_speedprobe_slowdown(&sp, fast), 1.0, 1e-12);
	assert_true(pl_speedprobe_fast(&sp).lat_s == 0); /* two readings: too few */
	pl_speedprobe_record(&sp, chain);
	assert_true(sp.last_contended);
	pl_speedprobe_record(&sp, fast);
	assert_false(sp.last_contended);
	pl_speedprobe_record(&sp, fast);
	struct pl_probe_reading q = pl_speedprobe_fast(&sp);
	assert_close(q.lat_s, 0.16e-3, 1e-12);
	assert_close(q.thr_s, 0.11e-3, 1e-12);
	/* a real reading: both loops take some time */
	struct pl_probe_reading r = pl_speedprobe_take(&sp);
	assert_true(r.lat_s > 0 && r.thr_s > 0 && sp.n == 6);
	pl_speedprobe_release(&sp);
}

/* runs whose probes were slow are left out where the planned samples
 * remain, counted where they would not, and counted under keep */
static void test_judge_contention(void **state)
{
	(void)state;
	struct pl_speedprobe sp;
	pl_speedprobe_init(&sp, 1);
	struct pl_probe_reading fast = {1e-4, 1e-4}, slow = {1e-4, 2e-4};
	pl_speedprobe_record(&sp, fast);
	double w[12] = {1, 1, 2, 2, 2, 1, 1, 1, 1, 1, 1, 1};
	struct pl_bench b;
	for (int round = 0; round < 3; round++) {
		fill(&b, w, 12);
		for (size_t i = 0; i < 12; i++)
			b.samples[i].probe = w[i] > 1 ? slow : fast;
		b.target = round == 1 ? 11 : 6;
		pl_bench_judge_contention(&sp, &b, round == 2);
		assert_int_equal(b.contended, 3);
		double out[12];
		size_t n = pl_bench_values(&b, -1, 1, out);
		if (round == 0) { /* 9 left >= 6 planned: the slow runs are out */
			assert_int_equal(n, 9);
			assert_int_equal(b.contended_kept, 0);
			for (size_t i = 0; i < n; i++)
				assert_close(out[i], 1.0, 1e-15);
			assert_false(b.samples[2].counted);
			assert_true(b.samples[2].contended);
		} else { /* 9 < 11 planned, or --contention keep: counted */
			assert_int_equal(n, 12);
			assert_int_equal(b.contended_kept, 3);
		}
		free(b.samples);
	}
	/* almost all contended: counted back in, fewer than 3 samples else */
	fill(&b, w, 4);
	for (size_t i = 0; i < 4; i++)
		b.samples[i].probe = i ? slow : fast;
	b.target = 0;
	pl_bench_judge_contention(&sp, &b, 0);
	double out[4];
	assert_int_equal(pl_bench_values(&b, -1, 1, out), 4);
	free(b.samples);
	/* --runs 2: two contended runs measured again by two clean ones make
	 * the count asked; they stay out (the ASan CI counted four) */
	fill(&b, w, 4);
	for (size_t i = 0; i < 4; i++) {
		b.samples[i].probe = i < 2 ? slow : fast;
		b.samples[i].contended = i < 2;
		b.samples[i].counted = i >= 2;
	}
	b.replaced = 2;
	b.target = 2;
	pl_bench_judge_contention(&sp, &b, 0);
	assert_int_equal(pl_bench_values(&b, -1, 1, out), 2);
	assert_int_equal(b.contended, 2);
	assert_int_equal(b.contended_kept, 0);
	/* ... but with only one clean run, all are counted */
	b.samples[3].contended = 1;
	b.samples[3].counted = 0;
	b.samples[3].probe = slow;
	pl_bench_judge_contention(&sp, &b, 0);
	assert_int_equal(pl_bench_values(&b, -1, 1, out), 4);
	free(b.samples);
	pl_speedprobe_release(&sp);
}

static struct pl_bench_run one_bench_run(const double *w, size_t n)
{
	struct pl_bench_run run;
	memset(&run, 0, sizeof(run));
	pl_bench_config_defaults(&run.cfg);
	run.cfg.batch = 0;
	run.bench = calloc(1, sizeof(*run.bench));
	run.nbench = 1;
	fill(&run.bench[0], w, n);
	run.bench[0].batch = 1;
	return run;
}

/* samples over the gate are regrouped only when a larger batch brings the
 * noise under it: alternating runs average out, a drift does not */
static void test_regroup(void **state)
{
	(void)state;
	double w[40], scratch[40];
	for (size_t i = 0; i < 40; i++)
		w[i] = i % 2 ? 1.3 : 1.0;
	struct pl_bench_run run = one_bench_run(w, 40);
	assert_int_equal(pl_bench_regroup(&run, scratch), 2);
	assert_int_equal(run.bench[0].batch, 2);
	assert_non_null(strstr(run.bench[0].batch_why, "taken together after the run"));
	free(run.bench[0].samples);
	free(run.bench);
	for (size_t i = 0; i < 40; i++) /* a drift: every batch size keeps it */
		w[i] = 1.0 + 0.02 * (double)i;
	run = one_bench_run(w, 40);
	assert_int_equal(pl_bench_regroup(&run, scratch), 1);
	assert_int_equal(run.bench[0].batch, 1);
	free(run.bench[0].samples);
	free(run.bench);
	for (size_t i = 0; i < 40; i++)
		w[i] = i % 2 ? 1.3 : 1.0;
	run = one_bench_run(w, 40); /* --batch 1 asked: kept */
	run.cfg.batch = 1;
	assert_int_equal(pl_bench_regroup(&run, scratch), 1);
	free(run.bench[0].samples);
	free(run.bench);
	run = one_bench_run(w, 15); /* 15 runs: no batch of 2 leaves 10 samples */
	assert_int_equal(pl_bench_regroup(&run, scratch), 1);
	free(run.bench[0].samples);
	free(run.bench);
}

/* A close call, from synthetic runs: a difference whose interval crosses
 * the 1% line is one; a clear one, an identical pair, and any run with
 * --runs are not. */
static void test_close_call(void **state)
{
	(void)state;
	double a[40], b[40];
	struct pl_bench_run run;
	memset(&run, 0, sizeof(run));
	pl_bench_config_defaults(&run.cfg);
	run.bench = calloc(2, sizeof(*run.bench));
	run.nbench = 2;
	struct {
		double ratio, spread;
		int want;
	} cases[] = {
	    {1.010, 0.010, 1}, /* ~1%, noisy: significant, interval across 1.01 */
	    {1.100, 0.010, 0}, /* 10%: clear */
	    {1.000, 0.010, 0}, /* the same: not significant */
	    {0.990, 0.010, 1}, /* faster by ~1% */
	};
	for (size_t c = 0; c < sizeof(cases) / sizeof(cases[0]); c++) {
		for (size_t i = 0; i < 40; i++) { /* a fixed pattern of noise */
			double e = cases[c].spread * (double)((int)(i * 7 % 11) - 5) / 5.0;
			a[i] = 0.01 * (1.0 + e); /* 10 ms runs: within --max-time */
			b[i] = 0.01 * cases[c].ratio *
			       (1.0 + cases[c].spread * (double)((int)(i * 5 % 11) - 5) / 5.0);
		}
		fill(&run.bench[0], a, 40);
		fill(&run.bench[1], b, 40);
		run.bench[0].batch = run.bench[1].batch = 1;
		run.cfg.runs = 0;
		assert_int_equal(pl_bench_close_call(&run), cases[c].want);
		run.cfg.runs = 40; /* an exact count is never extended */
		assert_int_equal(pl_bench_close_call(&run), 0);
		run.cfg.runs = 0; /* nor what already took a third of --max-time */
		run.cfg.max_time_s = 1.0;
		assert_int_equal(pl_bench_close_call(&run), 0);
		run.cfg.max_time_s = 60.0;
		free(run.bench[0].samples);
		free(run.bench[1].samples);
	}
	free(run.bench);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_batch_means_exact),
	    cmocka_unit_test(test_cv_falls_as_sqrt_k),
	    cmocka_unit_test(test_batch_for),
	    cmocka_unit_test(test_trend),
	    cmocka_unit_test(test_speedprobe),
	    cmocka_unit_test(test_judge_contention),
	    cmocka_unit_test(test_regroup),
	    cmocka_unit_test(test_close_call),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
