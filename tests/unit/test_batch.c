/* Unit tests for batch statistics (src/lib/benchrun.c): batch means are
 * exact on synthetic runs, the CV of a sample falls as 1/sqrt(k) on
 * independent noise, the calibrated batch is (CV / 2.5%)^2 within its cap,
 * and the trend statistic sees drift. */
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

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_batch_means_exact),
	    cmocka_unit_test(test_cv_falls_as_sqrt_k),
	    cmocka_unit_test(test_batch_for),
	    cmocka_unit_test(test_trend),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
