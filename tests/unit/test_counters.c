/* Unit tests for src/os/counters.c: parsing, and the unsupported
 * path driven by an open function that refuses like a kernel would. */
#include <errno.h>
#include <string.h>
#include <unistd.h>

#include "testutil.h"

#include "counters.h"

static int refuse_errno;
static int refuse_hw_open(struct perf_event_attr *attr, int pid)
{
	(void)pid;
	if (attr->type != PERF_TYPE_SOFTWARE) {
		errno = refuse_errno;
		return -1;
	}
	return dup(0);
}

static int paranoid_open(struct perf_event_attr *attr, int pid)
{
	(void)pid;
	if (!attr->exclude_kernel) {
		errno = EACCES;
		return -1;
	}
	return dup(0);
}

static void test_parse(void **state)
{
	(void)state;
	struct pl_counter_set s;
	struct pl_error err;
	assert_int_equal(pl_counters_parse(&s, "auto", &err), 0);
	assert_int_equal(s.n, PL_CTR_COUNT - 1); /* every counter but the syscalls tracepoint */
	for (size_t i = 0; i < s.n; i++)
		assert_int_not_equal(s.id[i], PL_CTR_SYSCALLS);
	assert_int_equal(pl_counters_parse(&s, "syscalls", &err), 0);
	assert_int_equal(s.n, 1);
	assert_int_equal(s.attr[0].type, PERF_TYPE_TRACEPOINT);
	pl_counters_add(&s, PL_CTR_SYSCALLS);
	assert_int_equal(s.n, 1);
	assert_int_equal(pl_counters_parse(&s, "none", &err), 0);
	assert_int_equal(s.n, 0);
	assert_int_equal(pl_counters_parse(&s, "cycles,instructions,cycles", &err), 0);
	assert_int_equal(s.n, 2);
	assert_int_equal(s.id[0], PL_CTR_CYCLES);
	assert_true(s.attr[0].inherit && s.attr[0].enable_on_exec && s.attr[0].disabled);
	assert_int_equal(pl_counters_parse(&s, "cycles,nope", &err), PL_EINPUT);
	assert_non_null(strstr(err.msg, "unknown counter 'nope'"));
	assert_int_equal(pl_counters_parse(&s, ",", &err), PL_EINPUT);
	assert_int_equal(pl_counter_lookup("L1-dcache-load-misses"), PL_CTR_L1D_LOAD_MISSES);
}

static void test_unsupported_marked_with_hint(void **state)
{
	(void)state;
	int errs[] = {ENOENT, EOPNOTSUPP, EACCES};
	for (size_t k = 0; k < 3; k++) {
		refuse_errno = errs[k];
		struct pl_counter_set s;
		assert_int_equal(pl_counters_parse(&s, "auto", NULL), 0);
		pl_counters_probe(&s, refuse_hw_open);
		for (size_t i = 0; i < s.n; i++) {
			int hw = pl_counter_def(s.id[i])->hardware;
			assert_int_equal(s.supported[i], !hw);
			if (hw)
				assert_int_equal(s.err[i], errs[k]);
		}
		assert_int_equal(pl_counters_active(&s), 4);
	}
	assert_non_null(strstr(pl_counter_hint(EACCES), "perf_event_paranoid"));
	assert_non_null(strstr(pl_counter_hint(ENOENT), "not available"));
	assert_non_null(strstr(pl_counter_hint(EOPNOTSUPP), "not available"));
}

static void test_paranoid_falls_back_to_user_space(void **state)
{
	(void)state;
	struct pl_counter_set s;
	pl_counters_parse(&s, "instructions", NULL);
	pl_counters_probe(&s, paranoid_open);
	assert_int_equal(s.supported[0], 1);
	assert_int_equal(s.attr[0].exclude_kernel, 1);
}

static void test_read_scales_multiplexed(void **state)
{
	(void)state;
	int p[2];
	assert_int_equal(pipe(p), 0);
	uint64_t v[3] = {1000, 200, 100}; /* ran half the time it was enabled */
	assert_int_equal(write(p[1], v, sizeof(v)), (ssize_t)sizeof(v));
	double value;
	assert_int_equal(pl_counter_read(p[0], &value), 0);
	assert_true(value > 1999.0 && value < 2001.0);
	uint64_t never[3] = {0, 100, 0}; /* enabled, never scheduled: unknown */
	assert_int_equal(write(p[1], never, sizeof(never)), (ssize_t)sizeof(never));
	assert_int_equal(pl_counter_read(p[0], &value), -1);
	close(p[0]);
	close(p[1]);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_parse),
	    cmocka_unit_test(test_unsupported_marked_with_hint),
	    cmocka_unit_test(test_paranoid_falls_back_to_user_space),
	    cmocka_unit_test(test_read_scales_multiplexed),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
