/* Unit tests for src/util/words.c: shell-like splitting without a shell. */
#include <string.h>

#include "testutil.h"

#include "words.h"

static void expect_split(const char *s, const char **want, size_t n)
{
	struct pl_argv a;
	struct pl_error err;
	assert_int_equal(pl_words_split(s, &a, &err), 0);
	assert_int_equal(a.n, n);
	for (size_t i = 0; i < n; i++)
		assert_string_equal(a.v[i], want[i]);
	assert_null(a.v[n]);
	pl_argv_release(&a);
}

static void test_split_plain_and_quoted(void **state)
{
	(void)state;
	const char *w1[] = {"ls", "-l", "/tmp"};
	expect_split("  ls   -l\t/tmp  ", w1, 3);
	const char *w2[] = {"printf", "%s|", "a b", "c\"d", "e'f"};
	expect_split("printf '%s|' 'a b' \"c\\\"d\" e\\'f", w2, 5);
	const char *w3[] = {"echo", "$HOME", "*", "a|b", "a|b", "[", "100%", "a=b", "x#y", "$"};
	expect_split("echo '$HOME' \\* 'a|b' a\\|b [ 100% a=b x#y $", w3, 10);
	const char *w4[] = {"x", "", "y"};
	expect_split("x '' y", w4, 3);
	const char *w5[] = {"ab c"};
	expect_split("a\"b c\"", w5, 1);
}

static void test_split_errors(void **state)
{
	(void)state;
	struct pl_argv a;
	struct pl_error err;
	assert_int_equal(pl_words_split("echo 'x", &a, &err), PL_EINPUT);
	assert_non_null(strstr(err.msg, "unterminated '"));
	assert_int_equal(pl_words_split("echo \"x", &a, &err), PL_EINPUT);
	assert_int_equal(pl_words_split("echo x\\", &a, &err), PL_EINPUT);
	assert_non_null(strstr(err.msg, "trailing backslash"));
	assert_int_equal(pl_words_split("   ", &a, &err), PL_EINPUT);
	assert_non_null(strstr(err.msg, "empty command"));
}

/* Shell syntax outside quotes would reach the program as text (`echo a |
 * wc -l` timed echo with three arguments): refused, naming what it saw. */
static void test_split_refuses_shell_syntax(void **state)
{
	(void)state;
	struct {
		const char *cmd, *what;
	} cases[] = {
	    {"echo a | wc -l", "pipe"},	 {"make && ./app", "'&&'"},
	    {"sleep 1 &", "'&'"},	 {"a; b", "';'"},
	    {"app > out.txt", "redirection"}, {"app <in", "redirection"},
	    {"echo $(date)", "$(...)"},	 {"echo `date`", "backquote"},
	    {"echo $HOME", "variable '$'"}, {"echo ${x}", "variable '$'"},
	    {"ls *.c", "glob"},		 {"ls file?.c", "glob"},
	    {"ls x[12]", "glob"},	 {"app # note", "comment"},
	    {"ls ~/x", "'~'"},		 {"FOO=1 app", "variable assignment"},
	    {"python -c print(1)", "parentheses"},
	};
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct pl_argv a;
		struct pl_error err;
		assert_int_equal(pl_words_split(cases[i].cmd, &a, &err), PL_EINPUT);
		assert_non_null(strstr(err.msg, cases[i].what));
		assert_non_null(strstr(err.msg, "without a shell"));
		assert_null(a.v);
	}
}

static void test_edit_distance(void **state)
{
	(void)state;
	assert_int_equal(pl_edit_distance("bench", "bench"), 0);
	assert_int_equal(pl_edit_distance("bnech", "bench"), 2);
	assert_int_equal(pl_edit_distance("--runz", "--runs"), 1);
	assert_int_equal(pl_edit_distance("", "scan"), 4);
	assert_int_equal(pl_edit_distance("kitten", "sitting"), 3);
}

static void test_substitute(void **state)
{
	(void)state;
	char *s = pl_words_substitute("sort {n} {n}x {nn} {m}", "n", "100");
	assert_string_equal(s, "sort 100 100x {nn} {m}");
	free(s);
	s = pl_words_substitute("{n", "n", "1");
	assert_string_equal(s, "{n");
	free(s);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_split_plain_and_quoted),
	    cmocka_unit_test(test_split_errors),
	    cmocka_unit_test(test_split_refuses_shell_syntax),
	    cmocka_unit_test(test_edit_distance),
	    cmocka_unit_test(test_substitute),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
