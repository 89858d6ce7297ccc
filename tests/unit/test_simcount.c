/* Unit tests for src/measure/simcount.c: reading cachegrind's totals, the
 * estimated cycles, the deterministic comparison and the --sim words. */
#include <math.h>
#include <string.h>

#include "testutil.h"

#include "simcount.h"

/* what cachegrind 3.19 writes, cut to its header and last line */
static const char *cg_nocache = "desc: I1 cache:         32768 B, 64 B, 8-way associative\n"
				"cmd: /usr/bin/python3 t100.py\n"
				"events: Ir\n"
				"fl=./csu/../csu/libc-start.c\n"
				"fn=__libc_start_main@@GLIBC_2.34\n"
				"128 2\n"
				"summary: 1834954161\n";
static const char *cg_cache = "cmd: ./a.out\n"
			      "events: Ir I1mr ILmr Dr D1mr DLmr Dw D1mw DLmw \n"
			      "fl=x.c\n"
			      "fn=main\n"
			      "3 6 0 0 2 1 0 1 0 0\n"
			      "summary: 1000 10 2 300 40 5 200 20 3\n";

static void test_parse_adds_processes(void **state)
{
	(void)state;
	struct pl_sim_counts c = {0};
	struct pl_error err;
	assert_int_equal(pl_sim_parse(cg_nocache, &c, &err), PL_OK);
	assert_true(c.ir == 1834954161.0);
	assert_int_equal(c.cache, 0);
	/* a second process of the same run adds up */
	assert_int_equal(pl_sim_parse(cg_nocache, &c, &err), PL_OK);
	assert_true(c.ir == 2 * 1834954161.0);
}

static void test_parse_cache_and_cycles(void **state)
{
	(void)state;
	struct pl_sim_counts c = {0};
	struct pl_error err;
	assert_int_equal(pl_sim_parse(cg_cache, &c, &err), PL_OK);
	assert_int_equal(c.cache, 1);
	assert_true(c.ir == 1000 && c.dr == 300 && c.dw == 200);
	assert_true(c.i1mr == 10 && c.d1mr == 40 && c.d1mw == 20);
	assert_true(c.ilmr == 2 && c.dlmr == 5 && c.dlmw == 3);
	/* accesses 1500; L1 misses 70, of them 10 to memory: hits 1430 in L1,
	 * 60 in LL: 1430 + 5*60 + 35*10 */
	assert_close(pl_sim_est_cycles(&c), 1430.0 + 300.0 + 350.0, 1e-12);
}

static void test_parse_refuses_incomplete(void **state)
{
	(void)state;
	struct pl_sim_counts c = {0};
	struct pl_error err;
	/* a process killed before its end writes no summary */
	assert_int_equal(pl_sim_parse("events: Ir\nfl=x.c\n", &c, &err), PL_EINPUT);
	assert_non_null(strstr(err.msg, "summary"));
	assert_int_equal(pl_sim_parse("summary: 12\n", &c, &err), PL_EINPUT);
	assert_int_equal(pl_sim_parse("events: Ir\nsummary: 12x\n", &c, &err), PL_EINPUT);
	assert_int_equal(pl_sim_parse("events: Dr\nsummary: 12\n", &c, &err), PL_EINPUT);
	assert_true(c.ir == 0);
}

static void test_compare_deterministic(void **state)
{
	(void)state;
	double a[] = {1000000, 1000010, 999990}, same[] = {1000005, 999995, 1000000};
	double twice[] = {2000000, 2000020, 1999980}, close[] = {1005000, 1005000, 1005000};
	struct pl_comparison c;
	pl_sim_compare(same, 3, a, 3, &c);
	assert_int_equal(c.change, PL_CHANGE_NONE);
	assert_true(isnan(c.p));
	assert_close(c.ratio, 1.0, 1e-4);
	pl_sim_compare(twice, 3, a, 3, &c);
	assert_int_equal(c.change, PL_CHANGE_SLOWER);
	assert_close(c.ratio, 2.0, 1e-4);
	assert_true(c.ci_lo <= c.ratio && c.ratio <= c.ci_hi);
	pl_sim_compare(a, 3, twice, 3, &c);
	assert_int_equal(c.change, PL_CHANGE_FASTER);
	/* 0.5% is within the 1% a verdict needs crossed */
	pl_sim_compare(close, 3, a, 3, &c);
	assert_int_equal(c.change, PL_CHANGE_NONE);
	/* nothing to compare */
	pl_sim_compare(a, 0, a, 3, &c);
	assert_true(isnan(c.ratio));
	assert_int_equal(c.change, PL_CHANGE_NONE);
}

static void test_modes(void **state)
{
	(void)state;
	assert_int_equal(pl_sim_parse_mode("auto"), PL_SIM_AUTO);
	assert_int_equal(pl_sim_parse_mode("off"), PL_SIM_OFF);
	assert_int_equal(pl_sim_parse_mode("instructions"), PL_SIM_INSTRUCTIONS);
	assert_int_equal(pl_sim_parse_mode("cycles"), PL_SIM_CYCLES);
	assert_int_equal(pl_sim_parse_mode("evidence"), -1);
	assert_int_equal(pl_sim_parse_mode("on"), -1);
	assert_string_equal(pl_sim_mode_name(PL_SIM_CYCLES), "cycles");
	assert_string_equal(pl_sim_mode_name(PL_SIM_EVIDENCE), "auto");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_parse_adds_processes),
	    cmocka_unit_test(test_parse_cache_and_cycles),
	    cmocka_unit_test(test_parse_refuses_incomplete),
	    cmocka_unit_test(test_compare_deterministic),
	    cmocka_unit_test(test_modes),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
