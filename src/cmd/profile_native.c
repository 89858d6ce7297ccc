/*
 * perfloop profile --mode native and --mode mixed, beside profile/native/.
 * Native mode hands the sampling to pl_native_profile (perf_event_open) and
 * prints its report; mixed mode stops the threads at each tick with ptrace
 * to read their Python and native stacks of the same instant, and splices
 * them (profile_python.c launches or attaches, calls the loop, reports).
 */
#include "profile_int.h"

#include <dirent.h>
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ptrace.h>
#include <sys/resource.h>
#include <sys/uio.h>
#include <sys/user.h>
#include <sys/wait.h>
#include <time.h>

#include "counters.h"
#include "grow.h"
#include "monotime.h"

#if defined(__x86_64__)
/* ---- --mode mixed: Python and native stacks of the same instant ----
 *
 * Each tick stops the running threads (PTRACE_INTERRUPT on threads seized
 * once), reads the Python stacks while they are stopped (so both views
 * are of the same instant), takes each thread's registers and the top of
 * its stack, lets them go, then unwinds with DWARF (profile/native/native.c).
 * The native stack is kept, except CPython's own code: each
 * _PyEval_EvalFrameDefault frame becomes the Python frames it was running
 * (up to the first frame of that call, pl_pyframe.entry), and the other
 * interpreter frames (call machinery) are left out. Stopping costs the
 * program a few tens of microseconds per thread and tick: see
 * docs/profile.md. */

#define MIXED_STACK (64 * 1024)
#define MIXED_MAX_PCS 2048

struct mthread {
	pid_t tid;
	int asked;    /* interrupted this tick, its stop not seen yet */
	int stopped;  /* in the interrupt stop we asked for */
	int listen;   /* a group stop: resume with PTRACE_LISTEN */
	int gone;
	uint64_t regs[17];
	uint8_t *stack;
	size_t stack_len;
	/* its Python stack at this tick */
	struct pl_pyframe *py;
	size_t npy, cappy;
	int idle, has_py;
	char pyname[64]; /* threading's name, or "" */
};

struct mixed {
	struct mthread *th;
	size_t n, cap;
	pid_t pid;
	int done;      /* the process ended */
	int *status;
	size_t approx; /* samples merged at the interpreter's boundary */
	uint64_t pcs[MIXED_MAX_PCS];
	uint32_t pyids[PL_PYSTACK_MAX_DEPTH];
	uint8_t pyentry[PL_PYSTACK_MAX_DEPTH];
	struct profiler *P;
	uint32_t trids[PL_PYSTACK_MAX_DEPTH]; /* the training split's */
};

static struct mthread *mt_find(struct mixed *M, pid_t tid)
{
	for (size_t i = 0; i < M->n; i++)
		if (M->th[i].tid == tid)
			return &M->th[i];
	return NULL;
}

/* Seize the threads not seized yet. */
static void mt_refresh(struct mixed *M)
{
	char path[64];
	snprintf(path, sizeof path, "/proc/%d/task", (int)M->pid);
	DIR *d = opendir(path);
	if (!d)
		return;
	struct dirent *e;
	while ((e = readdir(d))) {
		if (e->d_name[0] < '0' || e->d_name[0] > '9')
			continue;
		pid_t tid = (pid_t)atoi(e->d_name);
		struct mthread *t = mt_find(M, tid);
		if (t && !t->gone)
			continue;
		/* room first: a thread seized but not recorded would have its
		 * stops ignored and stay stopped */
		if (!t && pl_grow((void **)&M->th, &M->cap, M->n + 1, sizeof *M->th, 16) < 0)
			break;
		if (ptrace(PTRACE_SEIZE, tid, NULL, NULL) != 0)
			continue;
		if (!t) {
			t = &M->th[M->n++];
			memset(t, 0, sizeof *t);
		}
		t->tid = tid;
		t->gone = 0;
	}
	closedir(d);
}

/* Handle one wait status of a tracee. */
static void mt_event(struct mixed *M, pid_t w, int st)
{
	struct mthread *t = mt_find(M, w);
	if (WIFEXITED(st) || WIFSIGNALED(st)) {
		if (t)
			t->gone = 1;
		if (w == M->pid) {
			M->done = 1;
			*M->status = st;
		}
		return;
	}
	if (!WIFSTOPPED(st) || !t)
		return;
	int sig = WSTOPSIG(st), event = st >> 16;
	if (event == PTRACE_EVENT_STOP) {
		int group = sig == SIGSTOP || sig == SIGTSTP || sig == SIGTTIN || sig == SIGTTOU;
		if (t->asked) {
			t->asked = 0;
			t->stopped = 1;
			t->listen = group;
			return;
		}
		/* a stop we did not ask for this tick (a late one, or the program
		 * stopped by Ctrl-Z): never leave it there; LISTEN keeps a group
		 * stop a stop that SIGCONT ends */
		ptrace(group ? PTRACE_LISTEN : PTRACE_CONT, w, NULL, NULL);
		return;
	}
	/* a signal on its way to the program: let it through */
	ptrace(PTRACE_CONT, w, NULL, (void *)(long)sig);
}

/* Wait up to limit_s for the asked threads' stops (handling whatever else
 * comes); the ones that do not come are given up for this tick. */
static void mt_wait(struct mixed *M, double limit_s)
{
	double end = pl_now_s() + limit_s;
	for (;;) {
		size_t pending = 0;
		for (size_t i = 0; i < M->n; i++)
			pending += M->th[i].asked && !M->th[i].gone;
		if (!pending || M->done)
			return;
		int st;
		pid_t w = waitpid(-1, &st, WNOHANG | __WALL);
		if (w > 0) {
			mt_event(M, w, st);
			continue;
		}
		if (w < 0 || pl_now_s() > end)
			break;
		struct timespec ts = {0, 50000};
		nanosleep(&ts, NULL);
	}
	for (size_t i = 0; i < M->n; i++)
		M->th[i].asked = 0; /* a stop that comes later is resumed by mt_event */
}

static int running(pid_t pid, pid_t tid)
{
	char path[96], buf[512];
	snprintf(path, sizeof path, "/proc/%d/task/%d/stat", (int)pid, (int)tid);
	profile_read_small(path, buf, sizeof buf);
	const char *p = strrchr(buf, ')');
	return p && p[1] == ' ' && p[2] == 'R';
}

static void on_mixed_thread(void *arg, const struct pl_pythread *t)
{
	struct mixed *M = arg;
	/* the training split reads every thread, waiting or not (as in
	 * Python mode): the loop's wait for a batch is the point */
	if (M->P->torch && profile_train_thread(M->P, t, M->trids) < 0)
		M->P->oom = 1;
	struct mthread *m = mt_find(M, (pid_t)t->tid);
	if (!m || !m->stopped)
		return;
	if (pl_grow((void **)&m->py, &m->cappy, t->depth ? t->depth : 1, sizeof *m->py, 64) < 0)
		return;
	memcpy(m->py, t->frames, t->depth * sizeof *m->py);
	m->npy = t->depth;
	m->has_py = 1;
	snprintf(m->pyname, sizeof m->pyname, "%s", t->name ? t->name : "");
	m->idle = t->idle;
}

/* One thread's merged stack into the profile. */
static void mixed_add(struct profiler *P, struct pl_native_syms *syms, struct mixed *M,
		      struct mthread *t)
{
	size_t n = t->stack_len ? pl_native_unwind(syms, M->pid, t->tid, t->regs, t->stack,
						   t->stack_len, M->pcs, MIXED_MAX_PCS)
				: 0;
	size_t cap = PL_PYSTACK_MAX_DEPTH, npy = 0;
	for (size_t i = 0; i < t->npy; i++) {
		long id = profile_frame_id(P, &t->py[i]);
		if (id >= 0) {
			M->pyids[npy] = (uint32_t)id;
			M->pyentry[npy++] = (uint8_t)t->py[i].entry;
		} else if (t->py[i].entry && npy) { /* out of memory: keep the boundary */
			M->pyentry[npy - 1] = 1;
		}
	}
	int approx, unmatched;
	size_t depth = pl_native_splice(syms, M->pid, M->pcs, n, M->pyids, M->pyentry, npy, P->ids,
					cap, &approx, &unmatched);
	M->approx += (size_t)approx;
	P->stats.errors += (size_t)unmatched;
	if (P->o.threads && depth < cap) {
		long id = profile_thread_frame(P, M->pid, (unsigned long)t->tid,
					       t->pyname[0] ? t->pyname : NULL);
		if (id >= 0)
			P->ids[depth++] = (uint32_t)id;
	}
	for (size_t i = 0; i < depth / 2; i++) {
		uint32_t x = P->ids[i];
		P->ids[i] = P->ids[depth - 1 - i];
		P->ids[depth - 1 - i] = x;
	}
	if (depth && pl_prof_add(&P->prof, P->ids, depth, 1) < 0)
		P->oom = 1;
	if (P->o.memory && depth && !P->mhave) { /* --memory: this tick's stack */
		memcpy(P->mstack, P->ids, depth * sizeof *P->ids);
		P->mdepth = depth;
		P->mhave = 1;
	}
	P->stats.threads++;
}

int profile_mixed_loop(struct profiler *P, const struct pl_ctx *ctx, pid_t child, int *status,
		       int *reaped, struct pl_error *err)
{
	struct opts *o = &P->o;
	struct mixed M = {.pid = P->t[0].pid, .status = status, .P = P};
	struct pl_native_syms *syms = pl_native_syms_new(&P->prof, o->lines);
	if (!syms)
		return PL_ENOMEM;
	pl_native_syms_maps(syms, M.pid);
	mt_refresh(&M);
	if (M.n == 0) {
		pl_native_syms_free(syms);
		return pl_error_set(err, PL_EINPUT,
				    "--mode mixed: cannot trace process %d (%s): it needs ptrace "
				    "rights (your own child, or kernel.yama.ptrace_scope 0, or "
				    "CAP_SYS_PTRACE) and no other debugger attached",
				    (int)M.pid, strerror(errno));
	}
	long period_ns = (long)(1e9 / o->rate);
	struct timespec next;
	clock_gettime(CLOCK_MONOTONIC, &next);
	double start = pl_now_s(), last_tick = start;
	uint64_t jitter = profile_jitter_seed();
	while (!M.done && !P->oom) {
		next.tv_nsec += profile_jittered(&jitter, period_ns);
		while (next.tv_nsec >= 1000000000L) {
			next.tv_nsec -= 1000000000L;
			next.tv_sec++;
		}
		struct timespec cur;
		clock_gettime(CLOCK_MONOTONIC, &cur);
		if ((double)(cur.tv_sec - next.tv_sec) + (double)(cur.tv_nsec - next.tv_nsec) * 1e-9 >
		    (double)period_ns * 1e-9)
			next = cur;
		while (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &next, NULL) == EINTR &&
		       !*ctx->interrupted)
			;
		if (*ctx->interrupted)
			break;
		P->ticks++;
		profile_live_line(P, 0);
		double tnow = pl_now_s();
		P->tick_dt = tnow - last_tick < 10.0 / o->rate ? tnow - last_tick : 1.0 / o->rate;
		last_tick = tnow;
		P->cur = &P->t[0];
		profile_torch_poll(P);
		/* signals and exits that came in meanwhile */
		int st;
		pid_t w;
		while ((w = waitpid(-1, &st, WNOHANG | __WALL)) > 0)
			mt_event(&M, w, st);
		if (M.done)
			break;
		if (P->ticks % 16 == 1) {
			mt_refresh(&M);
			pl_native_syms_maps(syms, M.pid);
		}
		/* stop the threads that are running (all of them with --idle) */
		for (size_t i = 0; i < M.n; i++) {
			struct mthread *t = &M.th[i];
			t->stopped = t->has_py = t->asked = 0; /* every stopped one was resumed */
			t->npy = 0;
			t->stack_len = 0;
			if (t->gone || (!o->idle && !running(M.pid, t->tid)))
				continue;
			t->asked = ptrace(PTRACE_INTERRUPT, t->tid, NULL, NULL) == 0;
		}
		mt_wait(&M, 0.1);
		if (M.done)
			break;
		/* Python stacks, registers and stacks while they stand still */
		if (P->t[0].st)
		{
			struct pl_pysample_stats ps = {0};
			unsigned names = P->o.threads ? PL_PYSAMPLE_NAMES : 0;
			pl_pystack_sample(P->t[0].st, PL_PYSAMPLE_IDLE | names, on_mixed_thread, &M,
					  &ps);
		}
		for (size_t i = 0; i < M.n; i++) {
			struct mthread *t = &M.th[i];
			if (!t->stopped)
				continue;
			struct user_regs_struct r;
			if (ptrace(PTRACE_GETREGS, t->tid, NULL, &r) == 0) {
				uint64_t dw[17] = {r.rax, r.rdx, r.rcx, r.rbx, r.rsi, r.rdi,
						   r.rbp, r.rsp, r.r8,	r.r9,  r.r10, r.r11,
						   r.r12, r.r13, r.r14, r.r15, r.rip};
				memcpy(t->regs, dw, sizeof dw);
				if (!t->stack && !(t->stack = malloc(MIXED_STACK)))
					P->oom = 1;
				for (size_t want = MIXED_STACK; t->stack && want >= 4096; want /= 2) {
					struct iovec lv = {t->stack, want};
					struct iovec rv = {(void *)(uintptr_t)r.rsp, want};
					ssize_t got = process_vm_readv(M.pid, &lv, 1, &rv, 1, 0);
					if (got > 0) {
						t->stack_len = (size_t)got;
						break;
					}
				}
			}
			ptrace(t->listen ? PTRACE_LISTEN : PTRACE_CONT, t->tid, NULL, NULL);
		}
		P->mhave = 0;
		for (size_t i = 0; i < M.n; i++) {
			struct mthread *t = &M.th[i];
			/* only running threads were stopped (all with --idle): the
			 * Python reader's idle flag sees the stop itself */
			if (t->stopped)
				mixed_add(P, syms, &M, t);
		}
		if (o->memory) { /* the RSS now; a rise charged to this tick's stack */
			P->mtotal = 0;
			double now = pl_now_s() - start;
			if (profile_memory_tick(P, &P->t[0]) < 0 ||
			    pl_memtrack_point(&P->mem, now, P->mtotal, &P->prof, P->mstack,
					      P->mhave ? P->mdepth : 0) < 0 ||
			    profile_memory_rollup(P, now) < 0)
				P->oom = 1;
		}
		if (o->duration > 0 && pl_now_s() - start >= o->duration)
			break;
	}
	/* let the program go: stop each thread still traced and detach it (a
	 * tracee must be stopped to be detached); a thread that does not stop
	 * within the time is detached by the kernel when perfloop exits */
	if (!M.done) {
		for (size_t i = 0; i < M.n; i++) {
			struct mthread *t = &M.th[i];
			t->stopped = 0;
			t->asked = !t->gone && ptrace(PTRACE_INTERRUPT, t->tid, NULL, NULL) == 0;
		}
		mt_wait(&M, 1.0);
		for (size_t i = 0; i < M.n; i++)
			if (M.th[i].stopped && !M.th[i].gone)
				ptrace(PTRACE_DETACH, M.th[i].tid, NULL, NULL);
	}
	if (M.done && child > 0)
		*reaped = 1;
	if (M.approx)
		fprintf(stderr,
			"perfloop: note: this interpreter hides _PyEval_EvalFrameDefault (no "
			"symbol): in %zu samples the Python frames were placed at the "
			"interpreter's innermost frame, exact unless C called back into "
			"Python\n",
			M.approx);
	for (size_t i = 0; i < M.n; i++) {
		free(M.th[i].stack);
		free(M.th[i].py);
	}
	free(M.th);
	pl_native_syms_free(syms);
	return P->oom ? PL_ENOMEM : PL_OK;
}
#else
int profile_mixed_loop(struct profiler *P, const struct pl_ctx *ctx, pid_t child, int *status,
		       int *reaped, struct pl_error *err)
{
	(void)P, (void)ctx, (void)child, (void)status, (void)reaped;
	return pl_error_set(err, PL_EINPUT, "--mode mixed: only on x86-64 for now");
}
#endif

/* --mode native: perf_event_open sampling (profile/native/native.c), the same
 * table and outputs. */
int profile_native(struct profiler *P, const struct pl_ctx *ctx, const char *cwd)
{
	struct opts *o = &P->o;
	struct pl_native_opts no = {.rate = o->rate,
				    .unwind = o->unwind,
				    .lines = o->lines,
				    .threads = o->threads,
				    .subprocs = o->subprocs,
				    .duration = o->duration,
				    .event = o->event,
				    .kernel = o->kernel,
				    .mem = o->memory ? &P->mem : NULL,
				    .runq = &P->runq,
				    .interrupted = ctx->interrupted};
	struct pl_native_stats st;
	struct pl_error err = {{0}};
	int status = 0;
	int rc = pl_native_profile(o->argv, o->pid, &no, &P->prof, &st, &status, &err);
	if (rc != PL_OK) {
		pl_prof_release(&P->prof);
		return pl_die(pl_exit_code(rc), "%s", rc == PL_ENOMEM ? "out of memory" : err.msg);
	}
	char title[600];
	profile_command_title(o, title, sizeof title);
	printf("perfloop profile: %s (native, %s unwinding%s%s)\n", title, pl_unwind_name(st.unwind),
	       o->event >= 0 ? ", event " : "", o->event >= 0 ? pl_counter_def(o->event)->name : "");
	uint64_t complete = st.samples - st.truncated;
	printf("  %llu samples in %.2f s of %llu process%s, %llu lost, %.1f%% of stacks complete "
	       "to the entry point",
	       (unsigned long long)st.samples, st.elapsed_s, (unsigned long long)st.processes,
	       st.processes == 1 ? "" : "es", (unsigned long long)st.lost,
	       st.samples ? 100.0 * (double)complete / (double)st.samples : 0.0);
	if (!st.kernel_sampled)
		printf(", kernel time not sampled (perf_event_paranoid)");
	printf("\n  profiler CPU %.1f%% of one core\n",
	       st.elapsed_s > 0 ? 100.0 * st.cpu_s / st.elapsed_s : 0.0);
	if (st.lost)
		fprintf(stderr,
			"perfloop: warning: the kernel dropped %llu samples (perfloop fell "
			"behind); a lower --rate keeps up\n",
			(unsigned long long)st.lost);
	if (profile_print_table(P) < 0) {
		pl_prof_release(&P->prof);
		return pl_die(PL_EXIT_INTERNAL, "out of memory");
	}
	if (P->prof.samples == 0)
		fprintf(stderr, "perfloop: warning: no sample was taken (the program used "
				"less CPU time than one sampling period?)\n");
	if (o->memory) {
		/* the launched program is the only child reaped: its high-water mark */
		if (o->argv && getrusage(RUSAGE_CHILDREN, &P->child_ru) == 0)
			P->child_ru_set = 1;
		profile_print_memory(P);
	}
	rc = profile_write_outputs(P, title, cwd, NULL);
	pl_prof_release(&P->prof);
	pl_memtrack_release(&P->mem);
	if (rc)
		return rc;
	if (!*ctx->interrupted && o->argv && st.stopped) {
		fprintf(stderr, "perfloop: stopped '%s' after %.0f s (--duration)\n", o->argv[0],
			o->duration);
		return PL_EXIT_OK;
	}
	return profile_exit_status(o, ctx, status);
}

