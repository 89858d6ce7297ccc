/* Unit tests for src/util/regexcap.c: a user's expression is compiled only
 * when regcomp would not blow up on its repetitions. */
#include <string.h>

#include "testutil.h"

#include "regexcap.h"

static void test_size_of_ordinary_patterns(void **state)
{
	(void)state;
	assert_int_equal(pl_regex_size("", 1000), 0);
	assert_int_equal(pl_regex_size("abc", 1000), 3);
	/* a bracket expression is one atom, whatever it holds */
	assert_int_equal(pl_regex_size("[]a-z[:digit:]]", 1000), 1);
	/* a group: its contents plus one; alternatives add */
	assert_int_equal(pl_regex_size("(ab|c)", 1000), 4);
	/* x* and x? add one, x+ doubles x, x{3} is four copies */
	assert_int_equal(pl_regex_size("a*", 1000), 2);
	assert_int_equal(pl_regex_size("a+", 1000), 3);
	assert_int_equal(pl_regex_size("a{3}", 1000), 5);
	/* a '{' that starts no bound is a literal */
	assert_int_equal(pl_regex_size("a{x}", 1000), 4);
	/* the metric patterns users write stay tiny */
	assert_true(pl_regex_size("loss: ([0-9.]+(e[-+]?[0-9]+)?)", 1000) < 40);
}

static void test_size_saturates_on_repetition(void **state)
{
	(void)state;
	/* what the fuzzer found: 100 stacked '+' (2^100 nodes in glibc) */
	char buf[128] = "t";
	memset(buf + 1, '+', 100);
	buf[101] = '\0';
	assert_int_equal(pl_regex_size(buf, 5000), 5000);
	assert_int_equal(pl_regex_size("((a{99}){99}){99}", 5000), 5000);
	assert_int_equal(pl_regex_size("(((((((((((((((((((((((((((((a+)+)+)+)+)+)+)+)+)+)+)+)+)+)"
					")+)+)+)+)+)+)+)+)+)+)+)+)+)+)+)+",
					5000),
			 5000);
	/* a bound past every integer is saturated, not wrapped */
	assert_int_equal(pl_regex_size("a{99999999999999999999999}", 5000), 5000);
	/* an unclosed group or bracket ends the walk without reading past */
	assert_int_equal(pl_regex_size("(ab", 1000), 2);
	assert_int_equal(pl_regex_size("[abc", 1000), 1);
}

static void test_regcomp_refuses_only_the_huge(void **state)
{
	(void)state;
	regex_t re;
	assert_int_equal(pl_regcomp(&re, "step ([0-9]+) ms", REG_EXTENDED), 0);
	assert_int_equal(regexec(&re, "step 12 ms", 0, NULL, 0), 0);
	regfree(&re);
	char buf[128] = "t";
	memset(buf + 1, '+', 100);
	buf[101] = '\0';
	assert_int_equal(pl_regcomp(&re, buf, REG_EXTENDED), REG_ESPACE);
	/* a syntax error is still regcomp's to report */
	assert_int_equal(pl_regcomp(&re, "(a", REG_EXTENDED), REG_EPAREN);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_size_of_ordinary_patterns),
	    cmocka_unit_test(test_size_saturates_on_repetition),
	    cmocka_unit_test(test_regcomp_refuses_only_the_huge),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
