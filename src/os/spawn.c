/*
 * Process spawning for measurement.
 *
 * The child is created the way glibc's posix_spawn creates it, with
 * clone(CLONE_VM | CLONE_VFORK) on a small private stack, so starting a run
 * costs what posix_spawn costs (a fork() of perfloop was measured 25% slower
 * per /bin/true run on our VMs, see docs/PERFORMANCE.md). We do not call
 * posix_spawn itself because the child must open the perf counters on itself
 * (pid 0, enable_on_exec, inherit) between clone and exec: that is the only
 * way to count exactly the program and its descendants. With CLONE_FILES the
 * counter fds land in perfloop's table too; the child then unshares its
 * table before redirecting stdio, so perfloop's own fds are never touched.
 *
 * The child runs on perfloop's memory while perfloop is suspended, so it uses
 * raw system calls only, and is built without sanitizer instrumentation.
 *
 * Under Valgrind (make memcheck), which runs a vfork as a fork and refuses
 * CLONE_FILES, the child has its own memory: it reports a failure through a
 * close-on-exec pipe instead, exec's time is taken when that pipe closes,
 * and its counters stay its own (none are read).
 */
#include "spawn.h"
#include "monotime.h"

#include "strbuf.h"
#include "words.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#if defined(__has_include)
#if __has_include(<valgrind/valgrind.h>)
#include <valgrind/valgrind.h>
#endif
#endif
#ifndef RUNNING_ON_VALGRIND
#define RUNNING_ON_VALGRIND 0
#endif

extern char **environ;

#define CHILD_STACK_SIZE (64 * 1024)

struct child_ctx {
	const char *path;
	char *const *argv;
	char **envp;
	int fd[3]; /* sources for 0,1,2; -2 keeps perfloop's */
	const struct pl_counter_set *counters;
	int counter_fd[PL_CTR_COUNT];
	sigset_t mask; /* perfloop's mask before blocking, restored for exec */
	int fail_errno;
	const char *fail_stage;
	struct timespec exec_at; /* taken by the child just before execve */
	int report_fd;		 /* -1, or (Valgrind) where a failure is written */
};

/* what a fork-like child (Valgrind) writes to report_fd when it fails; the
 * stage's address is the same in the parent (a fork's copy), and a long
 * leaves no padding unwritten */
struct child_report {
	const char *stage;
	long err;
};

__attribute__((no_sanitize("address", "undefined"))) static int child_main(void *arg)
{
	struct child_ctx *c = arg;
	if (c->counters) {
		/* Software counters share one group: opening and closing a group
		 * member costs about half of a lone event on our VMs. Hardware
		 * ones stay alone so that a PMU with few counters can still
		 * multiplex them (a group is scheduled all or nothing). */
		int leader = -1;
		for (size_t i = 0; i < c->counters->n; i++) {
			if (!c->counters->supported[i])
				continue;
			struct perf_event_attr a = c->counters->attr[i];
			int group = -1;
			if (a.type == PERF_TYPE_SOFTWARE && leader >= 0) {
				a.disabled = 0;
				a.enable_on_exec = 0;
				group = leader;
			}
			c->counter_fd[i] = (int)syscall(SYS_perf_event_open, &a, 0, -1, group,
							PERF_FLAG_FD_CLOEXEC);
			if (a.type == PERF_TYPE_SOFTWARE && leader < 0)
				leader = c->counter_fd[i];
		}
	}
	if (syscall(SYS_unshare, CLONE_FILES) != 0) {
		c->fail_stage = "unshare";
		goto fail;
	}
	syscall(SYS_setpgid, 0, 0);
	for (int t = 0; t < 3; t++) {
		if (c->fd[t] == -2 || c->fd[t] == t)
			continue;
		if (syscall(SYS_dup3, c->fd[t], t, 0) < 0) {
			c->fail_stage = "redirect";
			goto fail;
		}
	}
	syscall(SYS_rt_sigprocmask, SIG_SETMASK, &c->mask, NULL, _NSIG / 8);
	clock_gettime(CLOCK_MONOTONIC, &c->exec_at);
	syscall(SYS_execve, c->path, c->argv, c->envp);
	c->fail_stage = "exec";
fail:
	c->fail_errno = errno;
	if (c->report_fd >= 0) {
		struct child_report msg = {c->fail_stage, c->fail_errno};
		syscall(SYS_write, c->report_fd, &msg, sizeof msg);
	}
	syscall(SYS_exit, 127);
	return 127;
}

char *pl_spawn_which(const char *argv0)
{
	if (!argv0 || !*argv0)
		return NULL;
	if (strchr(argv0, '/'))
		return strdup(argv0);
	const char *path = getenv("PATH");
	if (!path)
		path = "/usr/local/bin:/usr/bin:/bin";
	size_t alen = strlen(argv0);
	for (const char *p = path;;) {
		const char *end = strchr(p, ':');
		size_t dlen = end ? (size_t)(end - p) : strlen(p);
		char *cand = malloc(dlen + alen + 3);
		if (!cand)
			return NULL;
		if (dlen == 0)
			snprintf(cand, dlen + alen + 3, "./%s", argv0);
		else
			snprintf(cand, dlen + alen + 3, "%.*s/%s", (int)dlen, p, argv0);
		if (access(cand, X_OK) == 0)
			return cand;
		free(cand);
		if (!end)
			return NULL;
		p = end + 1;
	}
}

const char *pl_signal_name(int sig, char *buf, size_t len)
{
	const char *abbrev = sigabbrev_np(sig);
	if (abbrev)
		snprintf(buf, len, "SIG%s", abbrev);
	else
		snprintf(buf, len, "signal %d", sig);
	return buf;
}

static void kill_group(pid_t pid)
{
	/* The child made itself a group leader before exec; a failure here
	 * means the group is already gone. */
	if (kill(-pid, SIGKILL) != 0)
		kill(pid, SIGKILL);
}

/* A child stopped by a signal (SIGTTOU when it touched the terminal from
 * its own process group, SIGTSTP, SIGSTOP) would wait for ever: it is
 * killed and the stop reported. */
static void on_stop(pid_t pid, int status, int *stopped, int *killed)
{
	*stopped = WSTOPSIG(status);
	kill_group(pid);
	kill(pid, SIGCONT);
	*killed = 1;
}

/* Reaped (1), still running or stopped and now killed (0), error (-1). */
static int stopped_now(pid_t pid, int *status, struct rusage *ru, int *stopped, int *killed)
{
	pid_t w = wait4(pid, status, WNOHANG | WUNTRACED, ru);
	if (w != pid)
		return w < 0 && errno != EINTR ? -1 : 0;
	if (WIFSTOPPED(*status)) {
		on_stop(pid, *status, stopped, killed);
		return 0;
	}
	return 1;
}

/* Wait for pid, honouring the deadline (0: none) and the interrupt flag. */
static int wait_child(pid_t pid, double deadline, const volatile sig_atomic_t *interrupted,
		      int *status, struct rusage *ru, int *timed_out, int *was_interrupted,
		      int *stopped)
{
	/* Valgrind 3.19 (Debian 12) lacks pidfd_open and says so on stderr:
	 * under it the deadline is watched by polling */
	int pidfd = deadline > 0 && RUNNING_ON_VALGRIND == 0
			    ? (int)syscall(SYS_pidfd_open, pid, 0)
			    : -1;
	int killed = 0;
	for (;;) {
		if (interrupted && *interrupted && !killed) {
			kill_group(pid);
			killed = 1;
			*was_interrupted = 1;
		}
		double left = 0.25;
		if (deadline > 0 && !killed) {
			left = deadline - pl_now_s();
			if (left <= 0) {
				kill_group(pid);
				killed = 1;
				*timed_out = 1;
				continue;
			}
			if (left > 0.25)
				left = 0.25;
		}
		if (killed || deadline <= 0) {
			/* no deadline: block, but wake for a stop as for an exit */
			pid_t w = wait4(pid, status, killed ? 0 : WUNTRACED, ru);
			if (w == pid && !killed && WIFSTOPPED(*status)) {
				on_stop(pid, *status, stopped, &killed);
				continue;
			}
			if (w == pid)
				break;
			if (w < 0 && errno == EINTR)
				continue;
			goto sys_fail;
		}
		if (pidfd >= 0) {
			/* exits wake us at once; stops are looked for 4 times a second */
			struct pollfd pfd = {.fd = pidfd, .events = POLLIN};
			struct timespec ts = {.tv_sec = 0, .tv_nsec = (long)(left * 1e9)};
			int r = ppoll(&pfd, 1, &ts, NULL);
			if (r < 0 && errno != EINTR)
				goto sys_fail;
		} else {
			struct timespec ts = {0, 1000000};
			nanosleep(&ts, NULL);
		}
		int r = stopped_now(pid, status, ru, stopped, &killed);
		if (r < 0)
			goto sys_fail;
		if (r > 0)
			break;
	}
	if (pidfd >= 0)
		close(pidfd);
	return PL_OK;
sys_fail:
	if (pidfd >= 0)
		close(pidfd);
	return PL_ESYS;
}

int pl_spawn_can_count(void)
{
	return RUNNING_ON_VALGRIND == 0;
}

int pl_spawn_run(const struct pl_spawn_opts *opts, struct pl_run_result *result,
		 struct pl_error *err)
{
	memset(result, 0, sizeof(*result));
	char *path = pl_spawn_which(opts->argv[0]);
	if (!path)
		return pl_error_set(err, PL_ENOEXEC, "cannot start '%s': command not found",
				    opts->argv[0]);

	struct child_ctx c = {.path = path,
			      .argv = opts->argv,
			      .envp = environ,
			      .counters = opts->counters,
			      .report_fd = -1};
	int report[2] = {-1, -1};
	int forked = RUNNING_ON_VALGRIND != 0;
	if (forked)
		c.counters = NULL;
	int devnull = -1;
	int want[3] = {opts->stdin_fd, opts->stdout_fd, opts->stderr_fd};
	for (int t = 0; t < 3; t++) {
		if (want[t] >= 0 || want[t] == -2) {
			c.fd[t] = want[t];
			continue;
		}
		if (devnull < 0) {
			devnull = open("/dev/null", O_RDWR | O_CLOEXEC);
			if (devnull < 0) {
				free(path);
				return pl_error_set(err, PL_ESYS, "cannot open '/dev/null': %s",
						    strerror(errno));
			}
		}
		c.fd[t] = devnull;
	}
	for (int i = 0; i < PL_CTR_COUNT; i++)
		c.counter_fd[i] = -1;

	/* The child shares our memory: keep every handler of ours out of it
	 * until exec has replaced it. */
	sigset_t all;
	sigfillset(&all);
	pthread_sigmask(SIG_BLOCK, &all, &c.mask);

	char *stack = malloc(CHILD_STACK_SIZE);
	if (!stack) {
		pthread_sigmask(SIG_SETMASK, &c.mask, NULL);
		free(path);
		if (devnull >= 0)
			close(devnull);
		return PL_ENOMEM;
	}
	if (forked) {
		if (pipe2(report, O_CLOEXEC) != 0) {
			int e = errno;
			pthread_sigmask(SIG_SETMASK, &c.mask, NULL);
			free(stack);
			free(path);
			if (devnull >= 0)
				close(devnull);
			return pl_error_set(err, PL_ESYS, "cannot start '%s': %s", opts->argv[0],
					    strerror(e));
		}
		c.report_fd = report[1];
	}
	double t0 = pl_now_s();
	pid_t pid = clone(child_main, stack + CHILD_STACK_SIZE,
			  CLONE_VM | CLONE_VFORK | (forked ? 0 : CLONE_FILES) | SIGCHLD, &c);
	int clone_errno = errno;
	if (forked) {
		close(report[1]);
		if (pid >= 0) {
			/* nothing read: the pipe closed at exec */
			struct child_report msg;
			ssize_t n;
			while ((n = read(report[0], &msg, sizeof msg)) < 0 && errno == EINTR)
				;
			if (n == (ssize_t)sizeof msg) {
				c.fail_stage = msg.stage;
				c.fail_errno = (int)msg.err;
			}
			clock_gettime(CLOCK_MONOTONIC, &c.exec_at);
		}
		close(report[0]);
	}
	pthread_sigmask(SIG_SETMASK, &c.mask, NULL);
	free(stack);
	if (devnull >= 0)
		close(devnull);

	int rc = PL_OK;
	if (pid < 0) {
		rc = pl_error_set(err, PL_ESYS, "cannot start '%s': %s", opts->argv[0],
				  strerror(clone_errno));
		goto out;
	}
	int status = 0, timed_out = 0, was_interrupted = 0;
	struct rusage ru;
	memset(&ru, 0, sizeof(ru));
	if (c.fail_stage) {
		waitpid(pid, &status, 0);
		rc =
		    pl_error_set(err, PL_ENOEXEC, "cannot start '%s': %s%s%s", opts->argv[0],
				 strerror(c.fail_errno), strcmp(c.fail_stage, "exec") ? " at " : "",
				 strcmp(c.fail_stage, "exec") ? c.fail_stage : "");
		goto out;
	}
	if (opts->drain) {
		/* our copy of the write end must go, or the read never ends */
		close(opts->drain->write_fd);
		opts->drain->write_fd = -1;
		char buf[8192];
		ssize_t n;
		while ((n = read(opts->drain->read_fd, buf, sizeof(buf))) != 0) {
			if (n < 0 && errno == EINTR)
				continue;
			if (n < 0)
				break;
			pl_strbuf_append(opts->drain->out, buf, (size_t)n);
		}
	}
	double deadline = opts->timeout_s > 0 ? t0 + opts->timeout_s : 0;
	int stopped = 0;
	if (wait_child(pid, deadline, opts->interrupted, &status, &ru, &timed_out,
		       &was_interrupted, &stopped) != PL_OK) {
		rc = pl_error_set(err, PL_ESYS, "cannot wait for '%s': %s", opts->argv[0],
				  strerror(errno));
		goto out;
	}
	double t1 = pl_now_s();
	/* The run starts at exec: creating the process and opening counters
	 * is harness cost, not the command's. */
	result->wall_s = t1 - ((double)c.exec_at.tv_sec + (double)c.exec_at.tv_nsec * 1e-9);
	result->span_s = t1 - t0;
	result->user_s = (double)ru.ru_utime.tv_sec + (double)ru.ru_utime.tv_usec * 1e-6;
	result->sys_s = (double)ru.ru_stime.tv_sec + (double)ru.ru_stime.tv_usec * 1e-6;
	result->max_rss_kb = ru.ru_maxrss;
	result->minflt = ru.ru_minflt;
	result->majflt = ru.ru_majflt;
	result->timed_out = timed_out;
	result->stopped = stopped;
	if (WIFEXITED(status))
		result->exit_code = WEXITSTATUS(status);
	else if (WIFSIGNALED(status))
		result->signal = WTERMSIG(status);
	if (opts->counters) {
		for (size_t i = 0; i < opts->counters->n; i++) {
			if (c.counter_fd[i] < 0)
				continue;
			result->counter_ok[i] =
			    pl_counter_read(c.counter_fd[i], &result->counter[i]) == 0;
		}
	}
	if (was_interrupted)
		rc = pl_error_set(err, PL_EINTR, "interrupted");
out:
	for (int i = 0; i < PL_CTR_COUNT; i++)
		if (c.counter_fd[i] >= 0)
			close(c.counter_fd[i]);
	free(path);
	return rc;
}

int pl_spawn_capture(char *const *argv, double timeout_s, char *out, size_t len)
{
	out[0] = '\0';
	int pipefd[2];
	if (pipe2(pipefd, O_CLOEXEC) != 0)
		return -1;
	struct pl_spawn_opts o = {.argv = argv,
				  .stdin_fd = -1,
				  .stdout_fd = pipefd[1],
				  .stderr_fd = -1,
				  .timeout_s = timeout_s};
	struct pl_run_result r;
	/* Output larger than the pipe buffer would block the child while we
	 * wait for it; what we capture (versions, a commit id) is tiny. */
	int rc = pl_spawn_run(&o, &r, NULL);
	close(pipefd[1]);
	size_t got = 0;
	while (got + 1 < len) {
		ssize_t n = read(pipefd[0], out + got, len - 1 - got);
		if (n <= 0)
			break;
		got += (size_t)n;
	}
	close(pipefd[0]);
	out[got] = '\0';
	while (got > 0 && (out[got - 1] == '\n' || out[got - 1] == '\r'))
		out[--got] = '\0';
	if (rc != PL_OK || r.timed_out || r.signal)
		return -1;
	return r.exit_code;
}

int pl_spawn_output(char *const *argv, int keep_stderr, char **out, size_t *len)
{
	*out = NULL;
	*len = 0;
	int pipefd[2];
	if (pipe2(pipefd, O_CLOEXEC) != 0)
		return -1;
	struct pl_strbuf buf = {0};
	struct pl_spawn_drain drain = {pipefd[0], pipefd[1], &buf};
	struct pl_spawn_opts o = {.argv = argv,
				  .stdin_fd = -1,
				  .stdout_fd = pipefd[1],
				  .stderr_fd = keep_stderr ? -2 : -1,
				  .drain = &drain};
	struct pl_run_result r;
	int rc = pl_spawn_run(&o, &r, NULL);
	if (drain.write_fd >= 0)
		close(drain.write_fd);
	close(pipefd[0]);
	pl_strbuf_puts(&buf, "");
	size_t n = buf.len;
	*out = pl_strbuf_take(&buf);
	if (!*out)
		return -1;
	*len = n;
	if (rc != PL_OK || r.timed_out || r.signal)
		return -1;
	return r.exit_code;
}

int pl_spawn_suite(const char *cmd, double timeout_s, const volatile sig_atomic_t *interrupted,
		   int *exit_code, struct pl_error *err)
{
	struct pl_argv argv;
	int rc = pl_words_split(cmd, &argv, err);
	if (rc != PL_OK)
		return rc;
	struct pl_spawn_opts o = {.argv = argv.v,
				  .stdin_fd = -1,
				  .stdout_fd = 2,
				  .stderr_fd = -2,
				  .timeout_s = timeout_s,
				  .interrupted = interrupted};
	struct pl_run_result r;
	rc = pl_spawn_run(&o, &r, err);
	pl_argv_release(&argv);
	if (rc == PL_OK)
		*exit_code = r.signal || r.timed_out || r.stopped ? -1 : r.exit_code;
	if (rc == PL_OK && (r.timed_out || r.stopped)) {
		char sig[32];
		if (r.timed_out)
			fprintf(stderr, "perfloop: the suite '%s' timed out after %g s (killed)\n",
				cmd, timeout_s);
		else
			fprintf(stderr, "perfloop: the suite '%s' was stopped by %s and killed\n",
				cmd, pl_signal_name(r.stopped, sig, sizeof(sig)));
	}
	return rc;
}
