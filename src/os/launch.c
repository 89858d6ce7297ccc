/*
 * A program started paused: see launch.h.
 */
#include "launch.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

int pl_launch_start(char **argv, struct pl_launch *l, struct pl_error *err)
{
	int go[2], ex[2];
	l->pid = -1;
	l->go = l->ex = -1;
	if (pipe2(go, O_CLOEXEC) < 0)
		return pl_error_set(err, PL_ESYS, "pipe: %s", strerror(errno));
	if (pipe2(ex, O_CLOEXEC) < 0) {
		close(go[0]);
		close(go[1]);
		return pl_error_set(err, PL_ESYS, "pipe: %s", strerror(errno));
	}
	pid_t child = fork();
	if (child < 0) {
		int e = errno;
		close(go[0]);
		close(go[1]);
		close(ex[0]);
		close(ex[1]);
		return pl_error_set(err, PL_ESYS, "fork: %s", strerror(e));
	}
	if (child == 0) {
		char c;
		close(go[1]);
		close(ex[0]);
		signal(SIGINT, SIG_DFL);
		signal(SIGTERM, SIG_DFL);
		if (read(go[0], &c, 1) != 1)
			_exit(127);
		execvp(argv[0], argv);
		int e = errno;
		(void)!write(ex[1], &e, sizeof(e));
		_exit(127);
	}
	close(go[0]);
	close(ex[1]);
	l->pid = child;
	l->go = go[1];
	l->ex = ex[0];
	return PL_OK;
}

int pl_launch_go(struct pl_launch *l, const char *argv0, int *status, struct pl_error *err)
{
	(void)!write(l->go, "g", 1);
	close(l->go);
	l->go = -1;
	int e = 0;
	ssize_t n;
	do
		n = read(l->ex, &e, sizeof(e));
	while (n < 0 && errno == EINTR);
	close(l->ex);
	l->ex = -1;
	if (n == (ssize_t)sizeof(e)) {
		waitpid(l->pid, status, 0);
		l->pid = -1;
		return pl_error_set(err, PL_ENOEXEC, "cannot run '%s': %s", argv0, strerror(e));
	}
	return PL_OK;
}

void pl_launch_end(struct pl_launch *l, int *status)
{
	if (l->go >= 0) { /* never let go: it exits on the closed pipe */
		close(l->go);
		l->go = -1;
		if (l->pid > 0) {
			waitpid(l->pid, status, 0);
			l->pid = -1;
		}
	}
	if (l->ex >= 0)
		close(l->ex);
	l->ex = -1;
}
