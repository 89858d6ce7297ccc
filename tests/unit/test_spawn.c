/* Unit tests for src/os/spawn.c: exit codes, signals, timeouts, start
 * failures, redirection and counters. */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <string.h>
#include <unistd.h>

#include "testutil.h"

#include "spawn.h"

static int spawn_sh(const char *script, double timeout, struct pl_run_result *r,
		    struct pl_error *err)
{
	char *argv[] = {"/bin/sh", "-c", (char *)script, NULL};
	struct pl_spawn_opts o = {
	    .argv = argv, .stdin_fd = -1, .stdout_fd = -1, .stderr_fd = -1, .timeout_s = timeout};
	return pl_spawn_run(&o, r, err);
}

static void test_exit_and_signal(void **state)
{
	(void)state;
	struct pl_run_result r;
	struct pl_error err;
	assert_int_equal(spawn_sh("exit 7", 0, &r, &err), 0);
	assert_int_equal(r.exit_code, 7);
	assert_int_equal(r.signal, 0);
	assert_true(r.wall_s > 0);
	/* the CPU times cover the child from its clone on: span_s holds that
	 * span, wall_s only from exec (bench's CPUs-at-once divides by span_s) */
	assert_true(r.span_s >= r.wall_s);
	assert_int_equal(spawn_sh("kill -ABRT $$", 0, &r, &err), 0);
	assert_int_equal(r.signal, SIGABRT);
	char buf[32];
	assert_string_equal(pl_signal_name(SIGSEGV, buf, sizeof(buf)), "SIGSEGV");
}

static void test_timeout_kills_group(void **state)
{
	(void)state;
	struct pl_run_result r;
	struct pl_error err;
	assert_int_equal(spawn_sh("sleep 5 & sleep 5; wait", 0.2, &r, &err), 0);
	assert_true(r.timed_out);
	assert_true(r.wall_s < 2.0);
}

static void test_cannot_start(void **state)
{
	(void)state;
	struct pl_run_result r;
	struct pl_error err;
	char *argv[] = {"/nonexistent/prog", NULL};
	struct pl_spawn_opts o = {.argv = argv, .stdin_fd = -1, .stdout_fd = -1, .stderr_fd = -1};
	assert_int_equal(pl_spawn_run(&o, &r, &err), PL_ENOEXEC);
	assert_non_null(strstr(err.msg, "/nonexistent/prog"));
	char *argv2[] = {"no-such-command-xyz", NULL};
	o.argv = argv2;
	assert_int_equal(pl_spawn_run(&o, &r, &err), PL_ENOEXEC);
	assert_non_null(strstr(err.msg, "command not found"));
	char *argv3[] = {"/etc/passwd", NULL};
	o.argv = argv3;
	assert_int_equal(pl_spawn_run(&o, &r, &err), PL_ENOEXEC);
	assert_non_null(strstr(err.msg, "Permission denied"));
}

static void test_redirect_and_fds_untouched(void **state)
{
	(void)state;
	int p[2];
	assert_int_equal(pipe2(p, O_CLOEXEC), 0);
	char script[128];
	/* is either end of our pipe (both close-on-exec) open in the child
	 * under its own number? It must not be. */
	snprintf(
	    script, sizeof(script),
	    "echo out; echo err >&2; [ -e /proc/self/fd/%d ] || [ -e /proc/self/fd/%d ]; echo $?",
	    p[0], p[1]);
	char *argv[] = {"/bin/sh", "-c", script, NULL};
	struct pl_spawn_opts o = {.argv = argv, .stdin_fd = -1, .stdout_fd = p[1], .stderr_fd = -1};
	struct pl_run_result r;
	assert_int_equal(pl_spawn_run(&o, &r, NULL), 0);
	close(p[1]);
	char buf[64] = "";
	ssize_t n = read(p[0], buf, sizeof(buf) - 1);
	close(p[0]);
	assert_true(n > 0);
	/* stdout captured, stderr discarded, perfloop's fds not inherited */
	assert_non_null(strstr(buf, "out\n"));
	assert_null(strstr(buf, "err"));
	assert_int_equal(atoi(strchr(buf, '\n') + 1), 1);
	/* our own stdio is intact */
	assert_true(fcntl(1, F_GETFD) >= 0 || errno == EBADF);
}

static void test_counters_count_the_child(void **state)
{
	(void)state;
	struct pl_counter_set set;
	pl_counters_parse(&set, "task-clock", NULL);
	pl_counters_probe(&set, pl_perf_open);
	if (!set.supported[0] || !pl_spawn_can_count())
		skip();
	char *argv[] = {"/bin/sh", "-c", "i=0; while [ $i -lt 20000 ]; do i=$((i+1)); done", NULL};
	struct pl_spawn_opts o = {
	    .argv = argv, .stdin_fd = -1, .stdout_fd = -1, .stderr_fd = -1, .counters = &set};
	struct pl_run_result r;
	assert_int_equal(pl_spawn_run(&o, &r, NULL), 0);
	assert_true(r.counter_ok[0]);
	double cpu = r.user_s + r.sys_s;
	/* task-clock (ns) agrees with rusage within scheduler-tick slack */
	assert_true(r.counter[0] * 1e-9 > cpu * 0.5 - 0.01);
	assert_true(r.counter[0] * 1e-9 < r.wall_s * 1.05 + 0.01);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_exit_and_signal),
	    cmocka_unit_test(test_timeout_kills_group),
	    cmocka_unit_test(test_cannot_start),
	    cmocka_unit_test(test_redirect_and_fds_untouched),
	    cmocka_unit_test(test_counters_count_the_child),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
