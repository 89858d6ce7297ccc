/*
 * Running one tool: this binary started again with the tool's command line
 * in its own process group, its stdout and stderr collected, while the
 * client is still read (a ping answered, progress sent each second). A
 * cancellation stops it in the way its tool allows: a tool that changes
 * the loop's state is asked to stop, never killed.
 */
#include "mcp_int.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "strbuf.h"

static void progress(struct server *S, const char *tool, double elapsed, const char *line)
{
	if (!S->progress)
		return;
	char msg[300];
	snprintf(msg, sizeof msg, "%s: %.0f s%s%.200s", tool, elapsed, line && *line ? ": " : "",
		 line ? line : "");
	mcp_utf8_clean(msg);
	mcp_send_msg(json_pack("{s:s, s:s, s:{s:O, s:i, s:s}}", "jsonrpc", "2.0", "method",
			       "notifications/progress", "params", "progressToken", S->progress,
			       "progress", (int)++S->progress_n, "message", msg));
}

static double now_s(void)
{
	struct timespec t;
	clock_gettime(CLOCK_MONOTONIC, &t);
	return (double)t.tv_sec + (double)t.tv_nsec / 1e9;
}

/* Run this binary with argv (argv[0] a command) in its own process group,
 * collecting stdout and stderr, while still reading the client: a ping is
 * answered, progress is sent each second, and a cancellation stops it.
 * How depends on the tool. One that changes the loop's state (stateful:
 * revert, try, checkpoint, baseline) gets SIGINT alone, never its group:
 * the gits it runs finish their step, perfloop stops at its own safe point
 * (try holds signals through its journalled steps; checkpoint and revert
 * do not look and complete), and nothing kills it:
 * a SIGKILL mid-revert left half a tree and git's index lock. Any other
 * tool's group gets SIGINT (bench writes what it measured) and SIGKILL
 * 5 s later. Returns the exit code, -1 if it could not run or was
 * killed. */
int mcp_run_self(struct server *S, const char *tool, int stateful, char **argv, char **out,
		 char **errtext)
{
	int po[2], pe[2];
	*out = *errtext = NULL;
	if (pipe2(po, O_CLOEXEC) < 0)
		return -1;
	if (pipe2(pe, O_CLOEXEC) < 0) {
		close(po[0]);
		close(po[1]);
		return -1;
	}
	pid_t pid = fork();
	if (pid == 0) {
		setpgid(0, 0);
		int nul = open("/dev/null", O_RDONLY);
		if (nul >= 0)
			dup2(nul, 0);
		dup2(po[1], 1);
		dup2(pe[1], 2);
		if (chdir(S->root) != 0)
			_exit(126);
		execv("/proc/self/exe", argv);
		_exit(127);
	}
	if (pid > 0)
		setpgid(pid, pid); /* either side may win the race */
	close(po[1]);
	close(pe[1]);
	struct pl_strbuf bo = {0}, be = {0};
	struct pollfd fds[3] = {{po[0], POLLIN, 0}, {pe[0], POLLIN, 0}, {0, POLLIN, 0}};
	int open_fds = pid > 0 ? 2 : 0;
	double start = now_s(), last_progress = start, kill_at = 0;
	int stopping = 0;
	char lastline[256] = "";
	while (open_fds) {
		fds[2].fd = S->eof ? -1 : 0;
		int r = poll(fds, 3, 250);
		if (r < 0 && errno != EINTR)
			break;
		for (int i = 0; i < 2; i++) {
			if (fds[i].fd < 0 || !(fds[i].revents & (POLLIN | POLLHUP | POLLERR)))
				continue;
			char buf[65536];
			ssize_t n = read(fds[i].fd, buf, sizeof buf);
			if (n > 0) {
				pl_strbuf_append(i ? &be : &bo, buf, (size_t)n);
				if (i) { /* the last line it said, for progress */
					size_t e = (size_t)n;
					while (e > 0 && (buf[e - 1] == '\n' || buf[e - 1] == '\r'))
						e--;
					size_t b = e;
					while (b > 0 && buf[b - 1] != '\n' && buf[b - 1] != '\r')
						b--;
					if (e > b)
						snprintf(lastline, sizeof lastline, "%.*s", (int)(e - b),
							 buf + b);
				}
			} else {
				close(fds[i].fd);
				fds[i].fd = -1;
				open_fds--;
			}
		}
		if (fds[2].fd >= 0 && (fds[2].revents & (POLLIN | POLLHUP | POLLERR))) {
			mcp_read_input(S);
			int was = S->cancelled;
			mcp_control(S, pid);
			if (S->cancelled && !was && pid > 0) {
				if (stateful) {
					kill(pid, SIGINT);
				} else {
					kill(-pid, SIGINT);
					kill_at = now_s() + 5;
				}
			}
		}
		/* the server told to stop (SIGINT, SIGTERM, SIGHUP): the tool is
		 * stopped once, as a cancellation stops it, never left running.
		 * (A closed stdin is not a stop: `... | perfloop mcp` sends its
		 * requests and closes, and waits for the answers.) */
		if (!stopping && pid > 0 && S->interrupted && *S->interrupted) {
			stopping = 1;
			if (stateful) {
				kill(pid, SIGINT);
			} else {
				kill(-pid, SIGINT);
				if (!kill_at)
					kill_at = now_s() + 5;
			}
		}
		double t = now_s();
		if (kill_at && t > kill_at) {
			kill(-pid, SIGKILL);
			kill_at = 0;
		}
		if (t - last_progress >= 1.0) {
			progress(S, tool, t - start, lastline);
			last_progress = t;
		}
	}
	for (int i = 0; i < 2; i++)
		if (fds[i].fd >= 0)
			close(fds[i].fd);
	int status = 0, rc = -1;
	if (pid > 0 && waitpid(pid, &status, 0) == pid && WIFEXITED(status))
		rc = WEXITSTATUS(status);
	*out = pl_strbuf_take(&bo);
	*errtext = pl_strbuf_take(&be);
	return rc;
}
