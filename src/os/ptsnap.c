/*
 * One instant of every thread of a process (see ptsnap.h).
 */
#include "ptsnap.h"

#include <dirent.h>
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ptrace.h>
#include <sys/uio.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#if defined(__x86_64__)
#include <sys/user.h>
#endif

#include "grow.h"

void pl_ptsnap_free(struct pl_ptsnap_thread *t, size_t n)
{
	for (size_t i = 0; t && i < n; i++)
		free(t[i].stack);
	free(t);
}

#if defined(__x86_64__)
static double now_s(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

/* Wait for tid's interrupt stop; a signal on its way to the program is
 * passed on meanwhile. 1 stopped, 0 not within the time (or gone). */
static int wait_stop(pid_t tid, double until)
{
	for (;;) {
		int st;
		pid_t w = waitpid(tid, &st, WNOHANG | __WALL);
		if (w < 0 || (w == tid && (WIFEXITED(st) || WIFSIGNALED(st))))
			return 0;
		if (w == tid && WIFSTOPPED(st)) {
			if (st >> 16 == PTRACE_EVENT_STOP)
				return 1; /* ours, or a group stop: it stands still */
			ptrace(PTRACE_CONT, tid, NULL, (void *)(long)WSTOPSIG(st));
			continue;
		}
		if (now_s() > until)
			return 0;
		struct timespec ts = {0, 100000};
		nanosleep(&ts, NULL);
	}
}

int pl_ptsnap_take(pid_t pid, size_t stack_max, void (*fn)(void *), void *arg,
		   struct pl_ptsnap_thread **out, size_t *n, struct pl_error *err)
{
	*out = NULL;
	*n = 0;
	char path[64];
	snprintf(path, sizeof path, "/proc/%d/task", (int)pid);
	DIR *d = opendir(path);
	if (!d)
		return pl_error_set(err, PL_EINPUT, "process %d: %s", (int)pid, strerror(errno));
	struct pl_ptsnap_thread *t = NULL;
	size_t nt = 0, cap = 0;
	int denied = 0, rc = PL_OK;
	struct dirent *e;
	while ((e = readdir(d))) {
		if (e->d_name[0] < '0' || e->d_name[0] > '9')
			continue;
		if (pl_grow((void **)&t, &cap, nt + 1, sizeof *t, 16) < 0) {
			rc = PL_ENOMEM;
			break;
		}
		pid_t tid = (pid_t)atoi(e->d_name);
		if (ptrace(PTRACE_SEIZE, tid, NULL, NULL) != 0) {
			denied |= errno == EPERM;
			continue;
		}
		memset(&t[nt], 0, sizeof *t);
		t[nt++].tid = tid;
	}
	closedir(d);
	if (rc == PL_OK && nt == 0)
		rc = pl_error_set(
		    err, PL_EINPUT,
		    "cannot stop process %d (%s): it needs ptrace rights (your own child, "
		    "kernel.yama.ptrace_scope 0, root or CAP_SYS_PTRACE) and no debugger attached",
		    (int)pid, denied ? strerror(EPERM) : "no thread could be seized");
	/* all interrupted first, then waited for: the threads stop together */
	for (size_t i = 0; rc == PL_OK && i < nt; i++)
		ptrace(PTRACE_INTERRUPT, t[i].tid, NULL, NULL);
	double until = now_s() + 1.0;
	for (size_t i = 0; rc == PL_OK && i < nt; i++)
		t[i].stopped = wait_stop(t[i].tid, until);
	for (size_t i = 0; rc == PL_OK && i < nt; i++) {
		struct user_regs_struct r;
		if (!t[i].stopped || ptrace(PTRACE_GETREGS, t[i].tid, NULL, &r) != 0) {
			t[i].stopped = 0;
			continue;
		}
		uint64_t dw[17] = {r.rax, r.rdx, r.rcx, r.rbx, r.rsi, r.rdi, r.rbp, r.rsp, r.r8,
				   r.r9,  r.r10, r.r11, r.r12, r.r13, r.r14, r.r15, r.rip};
		memcpy(t[i].regs, dw, sizeof dw);
		if (!(t[i].stack = malloc(stack_max ? stack_max : 1))) {
			rc = PL_ENOMEM;
			break;
		}
		/* the stack's top page may be the last mapped: halve until read */
		for (size_t want = stack_max; want >= 4096; want /= 2) {
			struct iovec lv = {t[i].stack, want};
			struct iovec rv = {(void *)(uintptr_t)r.rsp, want};
			ssize_t got = process_vm_readv(pid, &lv, 1, &rv, 1, 0);
			if (got > 0) {
				t[i].stack_len = (size_t)got;
				break;
			}
		}
	}
	if (rc == PL_OK && fn)
		fn(arg);
	for (size_t i = 0; i < nt; i++)
		ptrace(PTRACE_DETACH, t[i].tid, NULL, NULL);
	if (rc != PL_OK) {
		pl_ptsnap_free(t, nt);
		return rc;
	}
	*out = t;
	*n = nt;
	return PL_OK;
}
#else
int pl_ptsnap_take(pid_t pid, size_t stack_max, void (*fn)(void *), void *arg,
		   struct pl_ptsnap_thread **out, size_t *n, struct pl_error *err)
{
	(void)pid, (void)stack_max, (void)fn, (void)arg;
	*out = NULL;
	*n = 0;
	return pl_error_set(err, PL_EINPUT, "native stacks: only on x86-64 for now");
}
#endif
