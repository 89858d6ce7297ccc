/* Unit tests for src/util/stats.c against numpy/scipy reference values
 * (tests/data/stats_reference.json, made by make_stats_reference.py). */
#include <math.h>
#include <string.h>

#include "testutil.h"

#include "stats.h"

static void test_describe_matches_numpy(void **state)
{
	(void)state;
	json_t *root = pl_test_load_json("stats_reference.json");
	json_t *sets = json_object_get(root, "describe");
	const char *name;
	json_t *set;
	int count = 0;
	json_object_foreach(sets, name, set)
	{
		size_t n;
		double *x = pl_test_doubles(json_object_get(set, "x"), &n);
		json_t *e = json_object_get(set, "expect");
		struct pl_describe d;
		assert_int_equal(pl_stats_describe(x, n, &d), 0);
		assert_int_equal(d.n, json_integer_value(json_object_get(e, "n")));
#define CHECK(field) assert_close(d.field, json_number_value(json_object_get(e, #field)), 1e-12)
		CHECK(min);
		CHECK(p50);
		CHECK(mean);
		CHECK(stdev);
		CHECK(cv);
		CHECK(mad);
		CHECK(p90);
		CHECK(p99);
		CHECK(max);
#undef CHECK
		json_t *outl = json_object_get(e, "outliers");
		assert_int_equal(d.n_outliers, json_array_size(outl));
		unsigned char *flags = malloc(n);
		assert_int_equal(pl_stats_outliers(x, n, flags), json_array_size(outl));
		for (size_t i = 0; i < json_array_size(outl); i++)
			assert_true(flags[json_integer_value(json_array_get(outl, i))]);
		free(flags);
		free(x);
		count++;
	}
	assert_true(count >= 8);
	json_decref(root);
}

static void test_outlier_flagged_not_dropped(void **state)
{
	(void)state;
	double x[] = {10.0, 10.1, 9.9, 10.2, 9.8, 10.0, 10.05, 30.0, 9.95, 10.1};
	unsigned char flags[10];
	assert_int_equal(pl_stats_outliers(x, 10, flags), 1);
	assert_int_equal(flags[7], 1);
	struct pl_describe d;
	pl_stats_describe(x, 10, &d);
	/* the outlier still counts in the max and the mean */
	assert_close(d.max, 30.0, 0);
	assert_true(d.mean > 12.0);
}

static void test_describe_rejects_empty_and_nan(void **state)
{
	(void)state;
	struct pl_describe d;
	double x[] = {1.0, NAN};
	assert_int_not_equal(pl_stats_describe(x, 0, &d), 0);
	assert_int_not_equal(pl_stats_describe(x, 2, &d), 0);
}

static void test_median_inplace(void **state)
{
	(void)state;
	double a[] = {5, 1, 4, 2, 3};
	assert_close(pl_stats_median_inplace(a, 5), 3.0, 0);
	double b[] = {4, 1, 3, 2};
	assert_close(pl_stats_median_inplace(b, 4), 2.5, 0);
	double c[] = {7, 7, 7, 1, 7, 7};
	assert_close(pl_stats_median_inplace(c, 6), 7.0, 0);
	/* many random arrays against the sorted definition */
	struct pl_rng rng;
	pl_rng_seed(&rng, 1);
	for (int t = 0; t < 500; t++) {
		size_t n = 1 + pl_rng_below(&rng, 40);
		double x[40], s[40];
		for (size_t i = 0; i < n; i++)
			x[i] = s[i] = (double)pl_rng_below(&rng, 10); /* many ties */
		for (size_t i = 1; i < n; i++)
			for (size_t j = i; j > 0 && s[j - 1] > s[j]; j--) {
				double tmp = s[j];
				s[j] = s[j - 1];
				s[j - 1] = tmp;
			}
		double want = pl_stats_quantile_sorted(s, n, 0.5);
		assert_close(pl_stats_median_inplace(x, n), want, 0);
	}
}

static void test_mann_whitney_matches_scipy(void **state)
{
	(void)state;
	json_t *root = pl_test_load_json("stats_reference.json");
	json_t *pairs = json_object_get(root, "mannwhitneyu");
	const char *name;
	json_t *pair;
	json_object_foreach(pairs, name, pair)
	{
		size_t na, nb;
		double *a = pl_test_doubles(json_object_get(pair, "a"), &na);
		double *b = pl_test_doubles(json_object_get(pair, "b"), &nb);
		struct pl_mwu r;
		assert_int_equal(pl_stats_mann_whitney(a, na, b, nb, &r), 0);
		assert_close(r.u1, json_number_value(json_object_get(pair, "u1")), 1e-12);
		assert_close(r.p, json_number_value(json_object_get(pair, "p")), 1e-9);
		free(a);
		free(b);
	}
	json_decref(root);
}

static void test_bootstrap_close_to_scipy_and_reproducible(void **state)
{
	(void)state;
	json_t *root = pl_test_load_json("stats_reference.json");
	json_t *boot = json_object_get(root, "bootstrap_median");
	json_t *sets = json_object_get(root, "describe");
	const char *name;
	json_t *ref;
	json_object_foreach(boot, name, ref)
	{
		size_t n;
		double *x = pl_test_doubles(json_object_get(json_object_get(sets, name), "x"), &n);
		double lo, hi, lo2, hi2;
		assert_int_equal(pl_stats_bootstrap_median_ci(x, n, 20000, 42, 0.95, &lo, &hi), 0);
		assert_int_equal(pl_stats_bootstrap_median_ci(x, n, 20000, 42, 0.95, &lo2, &hi2),
				 0);
		assert_true(lo == lo2 && hi == hi2);
		double se = json_number_value(json_object_get(ref, "se"));
		/* Different random streams: the endpoints agree to a fraction of
		 * the bootstrap standard error. */
		assert_true(fabs(lo - json_number_value(json_object_get(ref, "lo"))) < 0.35 * se);
		assert_true(fabs(hi - json_number_value(json_object_get(ref, "hi"))) < 0.35 * se);
		double *tmp = malloc(n * sizeof(*tmp));
		memcpy(tmp, x, n * sizeof(*tmp));
		double med = pl_stats_median_inplace(tmp, n);
		assert_true(lo <= med && med <= hi);
		free(tmp);
		free(x);
	}
	json_decref(root);
}

static void test_ratio_ci_and_verdict(void **state)
{
	(void)state;
	/* b is a exactly 10% slower with the same noise shape */
	double a[30], b[30];
	struct pl_rng rng;
	pl_rng_seed(&rng, 3);
	for (int i = 0; i < 30; i++) {
		double noise = 1.0 + ((double)pl_rng_below(&rng, 1000) - 500.0) / 50000.0;
		a[i] = 0.2 * noise;
		b[i] = 0.22 * noise;
	}
	double lo, hi;
	assert_int_equal(pl_stats_bootstrap_ratio_ci(b, 30, a, 30, 5000, 1, 0.95, &lo, &hi), 0);
	assert_true(lo > 1.05 && hi < 1.15 && lo <= 1.1 && 1.1 <= hi);
	struct pl_mwu r;
	pl_stats_mann_whitney(b, 30, a, 30, &r);
	assert_true(r.p < 0.001);
	assert_int_equal(pl_stats_change(r.p, lo, hi, 0.05, 0.01), PL_CHANGE_SLOWER);
	assert_int_equal(pl_stats_change(r.p, 1 / hi, 1 / lo, 0.05, 0.01), PL_CHANGE_FASTER);
	/* significant but inside +-1%: no change (criterion's rule) */
	assert_int_equal(pl_stats_change(0.001, 1.002, 1.008, 0.05, 0.01), PL_CHANGE_NONE);
	/* interval beyond 1% but not significant: no change */
	assert_int_equal(pl_stats_change(0.2, 1.02, 1.08, 0.05, 0.01), PL_CHANGE_NONE);
	/* straddles the band */
	assert_int_equal(pl_stats_change(0.01, 1.005, 1.03, 0.05, 0.01), PL_CHANGE_NONE);
	assert_string_equal(pl_change_name(PL_CHANGE_NONE), "no change");
}

static void test_rng_below_is_in_range_and_uniformish(void **state)
{
	(void)state;
	struct pl_rng rng;
	pl_rng_seed(&rng, 99);
	size_t hist[7] = {0};
	for (int i = 0; i < 70000; i++) {
		uint64_t v = pl_rng_below(&rng, 7);
		assert_true(v < 7);
		hist[v]++;
	}
	for (int i = 0; i < 7; i++)
		assert_true(hist[i] > 9500 && hist[i] < 10500);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_describe_matches_numpy),
	    cmocka_unit_test(test_outlier_flagged_not_dropped),
	    cmocka_unit_test(test_describe_rejects_empty_and_nan),
	    cmocka_unit_test(test_median_inplace),
	    cmocka_unit_test(test_mann_whitney_matches_scipy),
	    cmocka_unit_test(test_bootstrap_close_to_scipy_and_reproducible),
	    cmocka_unit_test(test_ratio_ci_and_verdict),
	    cmocka_unit_test(test_rng_below_is_in_range_and_uniformish),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
