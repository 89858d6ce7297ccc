/* Unit tests for src/measure/complexity.c: each class recovered exactly from
 * synthetic costs (with a process start-up constant), robustly under
 * multiplicative noise, the exponent and its interval, the weak-fit flag,
 * bad input, and where Google Benchmark's BigO (no constant) goes wrong;
 * and sweep.c's timing finding, from the wall or the CPU time. */
#include <math.h>
#include <string.h>

#include "testutil.h"

#include "benchrun.h"
#include "complexity.h"
#include "sweep.h"

static double g(enum pl_cx_class c, double n)
{
	switch (c) {
	case PL_CX_1:
		return 1;
	case PL_CX_LOGN:
		return log2(n);
	case PL_CX_N:
		return n;
	case PL_CX_NLOGN:
		return n * log2(n);
	case PL_CX_N2:
		return n * n;
	default:
		return n * n * n;
	}
}

/* A sweep n = 1000 * 2^i, i < k, of class c: a 2 ms start-up, and the
 * growing part worth `top` seconds at the largest n. */
static void sweep(enum pl_cx_class c, size_t k, double top, double *n, double *y)
{
	double nmax = 1000 * pow(2, (double)k - 1);
	for (size_t i = 0; i < k; i++) {
		n[i] = 1000 * pow(2, (double)i);
		y[i] = 0.002 + (c == PL_CX_1 ? 0.05 : top * g(c, n[i]) / g(c, nmax));
	}
}

static unsigned long long rng = 88172645463325252ull;
static double uniform(void) /* xorshift64: the same noise on every run */
{
	rng ^= rng << 13;
	rng ^= rng >> 7;
	rng ^= rng << 17;
	return (double)(rng >> 11) / 9007199254740992.0;
}

static void test_exact(void **state)
{
	(void)state;
	double n[8], y[8];
	for (int c = 0; c < PL_CX_COUNT; c++) {
		sweep((enum pl_cx_class)c, 7, 1.0, n, y);
		struct pl_cx_fit f;
		assert_int_equal(pl_cx_fit(n, y, 7, &f), 0);
		if ((int)f.best != c)
			print_message("class %s fitted as %s\n", pl_cx_name((enum pl_cx_class)c),
				      pl_cx_name(f.best));
		assert_int_equal(f.best, c);
		assert_false(f.weak);
		assert_true(fabs(f.range - 64) < 1e-9);
		if (c == PL_CX_1 || c == PL_CX_N || c == PL_CX_N2 || c == PL_CX_N3) {
			if (fabs(f.exponent - pl_cx_power((enum pl_cx_class)c)) >= 0.02)
				print_message("%s: exponent %g\n", pl_cx_name((enum pl_cx_class)c),
					      f.exponent);
			assert_true(fabs(f.exponent - pl_cx_power((enum pl_cx_class)c)) < 0.02);
			assert_true(f.exp_lo <= f.exponent && f.exponent <= f.exp_hi);
			/* the start-up is found, not folded into the growth */
			if (c != PL_CX_1)
				assert_true(fabs(f.exp_a - 0.002) < 2e-4);
		}
	}
}

static void test_noise(void **state)
{
	(void)state;
	/* 5% multiplicative noise (uniform), 200 sweeps per class: the class
	 * right at least 95% of the time, the exponent's interval holding the
	 * truth at least 90% of the time, and within 0.1 of it */
	for (int c = 0; c < PL_CX_COUNT; c++) {
		int right = 0, held = 0, close = 0;
		for (int t = 0; t < 200; t++) {
			double n[7], y[7];
			sweep((enum pl_cx_class)c, 7, 0.5, n, y);
			for (int i = 0; i < 7; i++)
				y[i] *= 1 + 0.05 * (2 * uniform() - 1);
			struct pl_cx_fit f;
			assert_int_equal(pl_cx_fit(n, y, 7, &f), 0);
			right += (int)f.best == c;
			double p = pl_cx_power((enum pl_cx_class)c);
			held += f.exp_lo <= p && p <= f.exp_hi;
			close += fabs(f.exponent - p) <= 0.1;
		}
		print_message("%-8s right %d/200, interval held %d/200, within 0.1 %d/200\n",
			      pl_cx_name((enum pl_cx_class)c), right, held, close);
		assert_true(right >= 190);
		if (c == PL_CX_1 || c == PL_CX_N || c == PL_CX_N2 || c == PL_CX_N3) {
			assert_true(held >= 180);
			assert_true(close >= 190);
		}
	}
}

/* No growth read from noise: a constant cost with one slow run at the
 * largest size is O(1) (n^3 "fitted" that one point at no cost elsewhere),
 * and 2000 pure-noise sweeps of five sizes read as growth at most 0.5% of
 * the time (at 1% per class, picking the best of five, it was 1.75%). */
static void test_no_false_growth(void **state)
{
	(void)state;
	double n[5] = {1000, 2000, 4000, 8000, 16000}, y[5] = {0.020, 0.0201, 0.0199, 0.0200, 0.026};
	struct pl_cx_fit f;
	assert_int_equal(pl_cx_fit(n, y, 5, &f), 0);
	assert_int_equal(f.best, PL_CX_1);
	int grew = 0;
	for (int t = 0; t < 2000; t++) {
		for (int i = 0; i < 5; i++) {
			/* normal-ish: the mean of four uniforms, 5% spread */
			double u = (uniform() + uniform() + uniform() + uniform() - 2) / 2;
			y[i] = 0.02 * (1 + 0.05 * u);
		}
		assert_int_equal(pl_cx_fit(n, y, 5, &f), 0);
		grew += f.best != PL_CX_1;
	}
	print_message("pure noise read as growth: %d/2000\n", grew);
	assert_true(grew <= 10);
	/* a real growth over the same sizes is still read, noise and all */
	for (int i = 0; i < 5; i++)
		y[i] = (0.002 + 1e-6 * n[i]) * (1 + 0.03 * (2 * uniform() - 1));
	assert_int_equal(pl_cx_fit(n, y, 5, &f), 0);
	assert_int_equal(f.best, PL_CX_N);
}

static void test_weak_and_bad(void **state)
{
	(void)state;
	double n[8], y[8];
	struct pl_cx_fit f;
	sweep(PL_CX_N2, 3, 1.0, n, y); /* 3 sizes */
	assert_int_equal(pl_cx_fit(n, y, 3, &f), 0);
	assert_true(f.weak);
	assert_true(isnan(f.exp_lo)); /* no interval from 3 points */
	sweep(PL_CX_N2, 4, 1.0, n, y); /* 4 sizes, an 8x range */
	assert_int_equal(pl_cx_fit(n, y, 4, &f), 0);
	assert_true(f.weak);
	assert_int_equal(pl_cx_fit(n, y, 1, &f), -1);
	y[2] = 0;
	assert_int_equal(pl_cx_fit(n, y, 4, &f), -1);
	double same[3] = {5, 5, 5}, c3[3] = {1, 2, 3};
	assert_int_equal(pl_cx_fit(same, c3, 3, &f), -1);
}

static void test_bigo_startup(void **state)
{
	(void)state;
	/* a quadratic step behind a 20 ms start-up, swept where the start-up
	 * still matters: BigO (no constant) reads a lower class; ours does not */
	double n[7], y[7];
	for (int i = 0; i < 7; i++) {
		n[i] = 1000 * pow(2, i);
		y[i] = 0.020 + 0.1 * (n[i] / 64000) * (n[i] / 64000);
	}
	struct pl_cx_fit f;
	assert_int_equal(pl_cx_fit(n, y, 7, &f), 0);
	assert_int_equal(f.best, PL_CX_N2);
	assert_true(pl_cx_bigo(n, y, 7) != PL_CX_N2);
	/* and on clean data without a constant both agree */
	for (int i = 0; i < 7; i++)
		y[i] = 0.1 * (n[i] / 64000) * (n[i] / 64000);
	assert_int_equal(pl_cx_bigo(n, y, 7), PL_CX_N2);
}

/* A hash set swept past the caches (medians measured here, ms): no class
 * fits it well, but a cost that grows 400-fold is never O(1), whatever a
 * noisy point does to the F test. */
static void test_knee(void **state)
{
	(void)state;
	double n[7], y[7] = {8.2, 18.5, 44.9, 228.3, 497.7, 1233.2, 3289.8};
	for (int i = 0; i < 7; i++)
		n[i] = 15625 * pow(2, i);
	for (int bad = 0; bad < 7; bad++) {
		double z[7];
		for (int i = 0; i < 7; i++)
			z[i] = y[i] * (i == bad ? 2.5 : 1) / 1000;
		struct pl_cx_fit f;
		assert_int_equal(pl_cx_fit(n, z, 7, &f), 0);
		if (f.best == PL_CX_1)
			print_message("point %d x2.5: read as O(1)\n", bad);
		assert_true(f.best != PL_CX_1);
		assert_true(f.exponent > 1);
	}
}

static void test_names(void **state)
{
	(void)state;
	enum pl_cx_class c;
	assert_int_equal(pl_cx_parse("n^2", &c), 0);
	assert_int_equal(c, PL_CX_N2);
	assert_int_equal(pl_cx_parse("NlogN", &c), 0);
	assert_int_equal(c, PL_CX_NLOGN);
	assert_int_equal(pl_cx_parse("n log n", &c), 0);
	assert_int_equal(pl_cx_parse("quadratic-ish", &c), -1);
	assert_string_equal(pl_cx_name(PL_CX_LOGN), "log n");
}

/* A sweep's benchmarks with the given medians of wall and CPU time. */
static void sweep_run(struct pl_bench_run *run, struct pl_bench *b, const double *n,
		      const double *wall, const double *cpu, size_t k, char values[][16],
		      char **value)
{
	static const char *names[] = {"n"};
	memset(run, 0, sizeof(*run));
	run->bench = b;
	run->nbench = k;
	for (size_t i = 0; i < k; i++) {
		memset(&b[i], 0, sizeof(b[i]));
		snprintf(values[i], 16, "%.0f", n[i]);
		value[i] = values[i];
		b[i].nparams = 1;
		b[i].param_names = names;
		b[i].param_values = &value[i];
		b[i].state = PL_BENCH_DONE;
		b[i].wall.present = b[i].cpu.present = 1;
		b[i].wall.d.n = b[i].cpu.d.n = 9;
		b[i].wall.d.p50 = wall[i];
		b[i].cpu.d.p50 = cpu[i];
	}
}

static json_t *fit_of(json_t *fits, const char *dim)
{
	size_t i;
	json_t *o;
	json_array_foreach(fits, i, o)
	{
		if (!strcmp(json_string_value(json_object_get(o, "dimension")), dim))
			return o;
	}
	return NULL;
}

/* The timing finding: from the wall time, else from the CPU time where
 * the wall's interval reaches the limit (it cannot rule the growth out),
 * never where the wall time lies wholly below it. */
static void test_sweep_finding(void **state)
{
	(void)state;
	struct pl_bench b[6];
	struct pl_bench_run run;
	char values[6][16], *value[6];
	const char *tmpl[] = {"work q {n}"};
	/* a quadratic measured while five processes shared 2 CPUs (t114's
	 * sweep): its wall fit bent to n^1.72, interval 1.51-1.94 */
	const double n[] = {875, 1750, 3500, 7000, 14000, 28000};
	const double wall[] = {0.0095, 0.0147, 0.0281, 0.0703, 0.2004, 0.7422};
	const double cpu[] = {0.0045, 0.005, 0.0087, 0.0234, 0.0786, 0.3026};
	sweep_run(&run, b, n, wall, cpu, 6, values, value);
	json_t *fits = pl_sweep_fits(&run, tmpl, 1, 6, -1);
	json_t *w = fit_of(fits, "wall_s"), *c = fit_of(fits, "cpu_s");
	assert_non_null(w);
	assert_non_null(c);
	double hi = json_number_value(json_array_get(json_object_get(w, "exponent_ci95"), 1));
	assert_true(json_number_value(json_object_get(w, "exponent")) < 1.8 && hi >= 1.8);
	json_t *f = json_object_get(w, "finding");
	assert_true(json_is_object(f));
	assert_string_equal(json_string_value(json_object_get(f, "basis")), "cpu_s");
	assert_string_equal(json_string_value(json_object_get(f, "severity")), "high");
	assert_true(json_is_null(json_object_get(c, "finding"))); /* one finding a command */
	json_decref(fits);
	/* a linear wall time (its interval wholly below 1.8) of a program whose
	 * CPU time grows as n^2: no finding */
	double lin[6], quad[6];
	for (int i = 0; i < 6; i++) {
		lin[i] = 0.002 + 0.5 * n[i] / 28000;
		quad[i] = 0.002 + 0.5 * (n[i] / 28000) * (n[i] / 28000);
	}
	sweep_run(&run, b, n, lin, quad, 6, values, value);
	fits = pl_sweep_fits(&run, tmpl, 1, 6, -1);
	w = fit_of(fits, "wall_s");
	assert_non_null(w);
	assert_true(json_number_value(json_array_get(json_object_get(w, "exponent_ci95"), 1)) <
		    1.8);
	assert_true(json_is_null(json_object_get(w, "finding")));
	assert_true(json_is_null(json_object_get(fit_of(fits, "cpu_s"), "finding")));
	json_decref(fits);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_exact),	 cmocka_unit_test(test_noise),
	    cmocka_unit_test(test_weak_and_bad), cmocka_unit_test(test_bigo_startup),
	    cmocka_unit_test(test_knee),	 cmocka_unit_test(test_no_false_growth),
	    cmocka_unit_test(test_names),	 cmocka_unit_test(test_sweep_finding),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
