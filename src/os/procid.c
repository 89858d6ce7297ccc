/*
 * One process, known by more than its number (procid.h).
 */
#include "procid.h"

#include <errno.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#ifdef __has_include
#if __has_include(<valgrind/valgrind.h>)
#include <valgrind/valgrind.h>
#endif
#endif
#ifndef RUNNING_ON_VALGRIND
#define RUNNING_ON_VALGRIND 0
#endif

const char *pl_proc_stat_read(const char *path, char *buf, size_t len)
{
	FILE *f = fopen(path, "re");
	if (!f)
		return NULL;
	size_t n = fread(buf, 1, len - 1, f);
	fclose(f);
	buf[n] = '\0';
	char *q = strrchr(buf, ')'); /* the name may hold spaces and ')' */
	return q && q[1] == ' ' && q[2] ? q + 2 : NULL;
}

unsigned long long pl_proc_start(pid_t pid)
{
	char p[64], buf[1024];
	snprintf(p, sizeof p, "/proc/%ld/stat", (long)pid);
	const char *s = pl_proc_stat_read(p, buf, sizeof buf);
	unsigned long long start = 0;
	if (!s || sscanf(s,
			 "%*c %*d %*d %*d %*d %*d %*u %*u %*u %*u %*u %*u %*u %*d %*d %*d "
			 "%*d %*d %*d %llu",
			 &start) != 1)
		start = 0;
	return start;
}

/* the state letter of /proc/PID/stat: 'Z' for a zombie, 0 when none */
static char proc_state(pid_t pid)
{
	char p[64], buf[512];
	snprintf(p, sizeof p, "/proc/%ld/stat", (long)pid);
	const char *s = pl_proc_stat_read(p, buf, sizeof buf);
	return s ? *s : 0;
}

int pl_procid_open(struct pl_procid *p, pid_t pid)
{
	p->pid = pid;
	p->pidfd = -1;
	p->start = pl_proc_start(pid);
#ifdef SYS_pidfd_open
	if (RUNNING_ON_VALGRIND == 0)
		p->pidfd = (int)syscall(SYS_pidfd_open, pid, 0);
#endif
	if (p->pidfd < 0 && p->start == 0 && (kill(pid, 0) != 0 && errno == ESRCH))
		return -1;
	if (p->pidfd >= 0 && p->start == 0)
		p->start = pl_proc_start(pid);
	return p->pidfd >= 0 || p->start ? 0 : -1;
}

int pl_procid_gone(const struct pl_procid *p)
{
	if (p->pidfd >= 0) {
		struct pollfd pfd = {.fd = p->pidfd, .events = POLLIN};
		return poll(&pfd, 1, 0) > 0;
	}
	unsigned long long now = pl_proc_start(p->pid);
	if (now == 0 || (p->start && now != p->start))
		return 1;
	return proc_state(p->pid) == 'Z';
}

void pl_procid_close(struct pl_procid *p)
{
	if (p->pidfd >= 0)
		close(p->pidfd);
	p->pidfd = -1;
}
