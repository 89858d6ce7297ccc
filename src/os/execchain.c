/*
 * The program a command ends as, past its wrappers (see execchain.h).
 *
 * One tracer, no threads: the command starts stopped under PTRACE_TRACEME,
 * with every fork, vfork, clone and exec reported; each exec's image is
 * read from /proc/PID/exe (a script's is its interpreter's, so a bash
 * script counts as bash) and judged by its file name. Known pids are
 * polled one by one, never waitpid(-1), so nothing else of the caller's is
 * reaped. At the end every process seen is killed with SIGKILL and reaped:
 * the program itself never runs its first instruction here.
 */
#include "execchain.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ptrace.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "monotime.h"

int pl_exec_is_wrapper(const char *path)
{
	static const char *const names[] = {
	    "sh",     "dash",	  "bash",     "zsh",	 "ksh",	    "mksh",    "busybox",
	    "env",    "nice",	  "ionice",   "chrt",	 "taskset", "setarch", "stdbuf",
	    "nohup",  "readlink", "realpath", "basename", "dirname", "uname",   "cat",
	    "head",   "tail",	  "sed",      "grep",	 "egrep",   "fgrep",   "awk",
	    "gawk",   "mawk",	  "cut",      "tr",	 "mkdir",   "ls",      "which",
	    "id",     "expr",	  "test",     "[",	 "printf",  "echo",    "true",
	    "false",  "sort",	  "uniq",     "wc",	 "date",    "hostname", "tty",
	    "locale", "getconf",  "command",  "type"};
	const char *base = strrchr(path, '/');
	base = base ? base + 1 : path;
	for (size_t i = 0; i < sizeof names / sizeof *names; i++)
		if (!strcmp(base, names[i]))
			return 1;
	return 0;
}

void pl_exec_chain_release(struct pl_exec_chain *c)
{
	pl_argv_release(&c->argv);
	pl_argv_release(&c->envp);
	c->resolved = 0;
}

/* A NUL-separated /proc file (cmdline, environ) as a vector. */
static int read_vector(pid_t pid, const char *what, struct pl_argv *out)
{
	char path[64];
	snprintf(path, sizeof path, "/proc/%d/%s", (int)pid, what);
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -1;
	size_t cap = 4096, len = 0;
	char *buf = malloc(cap);
	ssize_t r = 0;
	while (buf && (r = read(fd, buf + len, cap - len)) > 0) {
		len += (size_t)r;
		if (len == cap) {
			char *nb = realloc(buf, cap *= 2);
			if (!nb)
				free(buf);
			buf = nb;
		}
	}
	close(fd);
	if (!buf || r < 0) {
		free(buf);
		return -1;
	}
	int rc = 0;
	for (size_t i = 0; i < len && !rc;) {
		size_t n = strnlen(buf + i, len - i);
		rc = pl_argv_push(out, buf + i, n);
		i += n + 1;
	}
	free(buf);
	return rc ? -1 : 0;
}

struct tracer {
	pid_t *pids;
	size_t n, cap;
};

static int add_pid(struct tracer *t, pid_t p)
{
	for (size_t i = 0; i < t->n; i++)
		if (t->pids[i] == p)
			return 0;
	if (t->n == t->cap) {
		size_t cap = t->cap ? t->cap * 2 : 16;
		pid_t *np = realloc(t->pids, cap * sizeof *np);
		if (!np)
			return -1;
		t->pids = np;
		t->cap = cap;
	}
	t->pids[t->n++] = p;
	return 0;
}

static void drop_pid(struct tracer *t, size_t i)
{
	t->pids[i] = t->pids[--t->n];
}

/* Kill and reap every process seen (a killed tracee reports its exit to
 * us even when another process is its parent). */
static void finish(struct tracer *t, pid_t pgid)
{
	kill(-pgid, SIGKILL);
	for (size_t i = 0; i < t->n; i++)
		kill(t->pids[i], SIGKILL);
	double end = pl_now_s() + 5;
	while (t->n && pl_now_s() < end) {
		int any = 0;
		for (size_t i = 0; i < t->n;) {
			int st;
			pid_t w = waitpid(t->pids[i], &st, WNOHANG | __WALL);
			if (w == t->pids[i] && (WIFEXITED(st) || WIFSIGNALED(st))) {
				drop_pid(t, i);
				any = 1;
			} else if (w < 0) {
				drop_pid(t, i);
				any = 1;
			} else
				i++;
		}
		if (!any) {
			struct timespec ts = {0, 1000000};
			nanosleep(&ts, NULL);
		}
	}
	free(t->pids);
	t->pids = NULL;
	t->n = t->cap = 0;
}

static int same_file(int fd, pid_t pid)
{
	char path[64];
	snprintf(path, sizeof path, "/proc/%d/fd/0", (int)pid);
	struct stat a, b;
	if (fstat(fd, &a) != 0 || stat(path, &b) != 0)
		return 0;
	return a.st_dev == b.st_dev && a.st_ino == b.st_ino;
}

/* The command's own process exec'd exe, not a wrapper: take it. */
static int take(struct pl_exec_chain *out, pid_t pid, const char *exe, int in_fd)
{
	if (!same_file(in_fd, pid)) {
		snprintf(out->why, sizeof out->why,
			 "not resolved: its standard input changed on the way to '%.180s'", exe);
		return 0;
	}
	char path[64];
	snprintf(path, sizeof path, "/proc/%d/cwd", (int)pid);
	ssize_t n = readlink(path, out->cwd, sizeof out->cwd - 1);
	if (n <= 0 || read_vector(pid, "cmdline", &out->argv) != 0 || out->argv.n == 0 ||
	    read_vector(pid, "environ", &out->envp) != 0) {
		pl_exec_chain_release(out);
		snprintf(out->why, sizeof out->why, "not resolved: cannot read /proc/%d",
			 (int)pid);
		return 0;
	}
	out->cwd[n] = '\0';
	snprintf(out->exe, sizeof out->exe, "%s", exe);
	out->resolved = 1;
	return 1;
}

int pl_exec_chain(char *const argv[], char *const envp[], int in_fd, double timeout_s,
		  struct pl_exec_chain *out)
{
	memset(out, 0, sizeof *out);
	int null_fd = open("/dev/null", O_RDWR | O_CLOEXEC);
	if (null_fd < 0) {
		snprintf(out->why, sizeof out->why, "not resolved: cannot open /dev/null");
		return 0;
	}
	if (in_fd < 0)
		in_fd = null_fd;
	pid_t pid = fork();
	if (pid == 0) {
		setpgid(0, 0);
		dup2(in_fd, 0);
		dup2(null_fd, 1);
		dup2(null_fd, 2);
		if (ptrace(PTRACE_TRACEME, 0, NULL, NULL) != 0)
			_exit(126);
		raise(SIGSTOP);
		extern char **environ;
		environ = (char **)envp;
		execvp(argv[0], argv);
		_exit(127);
	}
	if (pid < 0) {
		close(null_fd);
		snprintf(out->why, sizeof out->why, "not resolved: fork: %s", strerror(errno));
		return 0;
	}
	setpgid(pid, pid);
	struct tracer t = {0};
	int st;
	if (add_pid(&t, pid) != 0 || waitpid(pid, &st, __WALL) != pid || !WIFSTOPPED(st) ||
	    ptrace(PTRACE_SETOPTIONS, pid, NULL,
		   (void *)(long)(PTRACE_O_TRACEEXEC | PTRACE_O_TRACEFORK | PTRACE_O_TRACEVFORK |
				  PTRACE_O_TRACECLONE | PTRACE_O_EXITKILL)) != 0 ||
	    ptrace(PTRACE_CONT, pid, NULL, NULL) != 0) {
		snprintf(out->why, sizeof out->why, "not resolved: ptrace is not allowed here");
		goto done;
	}
	int main_execs = 0, done = 0;
	double end = pl_now_s() + (timeout_s > 0 ? timeout_s : 10);
	while (!done) {
		int any = 0;
		for (size_t i = 0; i < t.n && !done;) {
			pid_t p = t.pids[i];
			pid_t w = waitpid(p, &st, WNOHANG | __WALL);
			if (w == 0) {
				i++;
				continue;
			}
			any = 1;
			if (w < 0 || WIFEXITED(st) || WIFSIGNALED(st)) {
				if (p == pid) {
					snprintf(out->why, sizeof out->why,
						 "not resolved: the command ended before it ran a "
						 "program other than a shell or a tool a wrapper uses");
					done = 1;
				}
				drop_pid(&t, i);
				continue;
			}
			i++;
			int sig = WSTOPSIG(st), event = (unsigned)st >> 16, pass = 0;
			if (event == PTRACE_EVENT_FORK || event == PTRACE_EVENT_VFORK ||
			    event == PTRACE_EVENT_CLONE) {
				unsigned long child = 0;
				if (ptrace(PTRACE_GETEVENTMSG, p, NULL, &child) == 0 && child &&
				    add_pid(&t, (pid_t)child) != 0)
					done = 1;
			} else if (event == PTRACE_EVENT_EXEC) {
				char path[64], exe[4096];
				snprintf(path, sizeof path, "/proc/%d/exe", (int)p);
				ssize_t n = readlink(path, exe, sizeof exe - 1);
				exe[n > 0 ? n : 0] = '\0';
				int wrapper = n > 0 && pl_exec_is_wrapper(exe);
				if (p == pid && !wrapper) {
					if (main_execs == 0)
						snprintf(out->why, sizeof out->why,
							 "not resolved: the command is the program");
					else
						take(out, p, exe, in_fd);
					done = 1;
				} else if (!wrapper) {
					snprintf(out->why, sizeof out->why,
						 "not resolved: '%.180s' ran before the program (the "
						 "command does work of its own)",
						 n > 0 ? exe : "?");
					done = 1;
				} else {
					out->skipped++;
					main_execs += p == pid;
				}
			} else if (sig != SIGSTOP && sig != SIGTRAP)
				pass = sig; /* a signal for the process: deliver it */
			if (!done)
				ptrace(PTRACE_CONT, w, NULL, (void *)(long)pass);
		}
		if (!done && pl_now_s() > end) {
			snprintf(out->why, sizeof out->why,
				 "not resolved: its wrappers ran for more than %g s", timeout_s);
			done = 1;
		}
		if (!done && !any) {
			struct timespec ts = {0, 200000};
			nanosleep(&ts, NULL);
		}
	}
done:
	finish(&t, pid);
	close(null_fd);
	return 0;
}
