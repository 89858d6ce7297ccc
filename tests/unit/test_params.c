/* Unit tests for src/measure/params.c: parameter sweeps. */
#include <string.h>

#include "testutil.h"

#include "params.h"

static void expect_values(const char *spec, const char *name, const char **want, size_t n)
{
	struct pl_param p;
	struct pl_error err;
	int rc = pl_param_parse(spec, &p, &err);
	if (rc != 0)
		fail_msg("%s: %s", spec, err.msg);
	assert_string_equal(p.name, name);
	assert_int_equal(p.values.n, n);
	for (size_t i = 0; i < n; i++)
		assert_string_equal(p.values.v[i], want[i]);
	pl_param_release(&p);
}

static void test_forms(void **state)
{
	(void)state;
	const char *l[] = {"a", "b c", "10"};
	expect_values("x=a,b c,10", "x", l, 3);
	const char *r[] = {"1", "2", "3", "4"};
	expect_values("n=1..4", "n", r, 4);
	const char *s[] = {"0", "25", "50", "75", "100"};
	expect_values("n=0..100:25", "n", s, 5);
	const char *s2[] = {"0", "30", "60", "90"};
	expect_values("n=0..100:30", "n", s2, 4);
	const char *f[] = {"2", "8", "32"};
	expect_values("size=2..32*4", "size", f, 3);
	const char *d[] = {"0.1", "0.2", "0.3"};
	expect_values("t=0.1..0.3:0.1", "t", d, 3); /* no drift past HI */
	const char *one[] = {"7"};
	expect_values("n=7..7", "n", one, 1);
	const char *neg[] = {"-2", "-1", "0"};
	expect_values("n=-2..0", "n", neg, 3);
}

static void test_errors(void **state)
{
	(void)state;
	const char *bad[] = {
	    "n=1..", "n=..3", "n=3..1", "n=1..5:0", "n=1..5:-1", "n=1..5*1", "n=0..5*2",
	    "n",     "=1",    "1n=2",	"n=1,,2",   "n=",	 "n=a..b",   "n=1..1000000000"};
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		struct pl_param p;
		struct pl_error err;
		if (pl_param_parse(bad[i], &p, &err) != PL_EINPUT)
			fail_msg("'%s' was accepted", bad[i]);
		assert_non_null(strstr(err.msg, "option '-P'"));
	}
}

static void test_combinations(void **state)
{
	(void)state;
	struct pl_param p[2];
	struct pl_error err;
	assert_int_equal(pl_param_parse("a=1,2", &p[0], &err), 0);
	assert_int_equal(pl_param_parse("b=x,y,z", &p[1], &err), 0);
	assert_int_equal(pl_params_combinations(p, 2), 6);
	assert_int_equal(pl_params_combinations(p, 0), 1);
	size_t idx[2];
	pl_params_combination(p, 2, 4, idx); /* a=2, b=y: first varies slowest */
	assert_int_equal(idx[0], 1);
	assert_int_equal(idx[1], 1);
	pl_param_release(&p[0]);
	pl_param_release(&p[1]);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_forms),
	    cmocka_unit_test(test_errors),
	    cmocka_unit_test(test_combinations),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
