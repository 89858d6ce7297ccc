/*
 * perfloop profile, Python mode (and perfloop top, which is this mode
 * redrawing its table): launch or attach to a CPython program and sample
 * its Python stacks from outside (profile/python/pystack.c), following its
 * children with --subprocesses, then print the report; the table and the
 * files are written by profile_out.c. Mixed mode starts and reports here
 * too; its sampling loop, which stops the threads, is profile_native.c's.
 *
 * The sampling loop paces itself with absolute deadlines
 * (clock_nanosleep(TIMER_ABSTIME)), so time spent sampling does not slow
 * the rate; a tick that is already late is taken at once and the next
 * deadline moves on from now, never bursting to catch up.
 */
#include "profile_int.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "grow.h"
#include "monotime.h"
#include "pyproc.h"
#include "spawn.h"

/* This process's own CPU time (user + system), seconds. */
static double self_cpu_s(void)
{
	struct rusage ru;
	getrusage(RUSAGE_SELF, &ru);
	return (double)ru.ru_utime.tv_sec + (double)ru.ru_utime.tv_usec * 1e-6 +
	       (double)ru.ru_stime.tv_sec + (double)ru.ru_stime.tv_usec * 1e-6;
}

static size_t ptr_slot(const void *code, int line, size_t cap)
{
	uint64_t h = ((uint64_t)(uintptr_t)code >> 4) * 0x9e3779b97f4a7c15ULL ^ (uint64_t)line;
	return (size_t)(h * 0x9e3779b97f4a7c15ULL >> 17) & (cap - 1);
}

long profile_frame_id(struct profiler *P, const struct pl_pyframe *f)
{
	int line = P->o.lines ? f->line : f->code->firstline;
	if (P->nfc * 2 >= P->capfc) {
		size_t cap = P->capfc ? P->capfc * 2 : 4096;
		struct fcache_ent *n = calloc(cap, sizeof *n);
		if (!n)
			return -1;
		for (size_t i = 0; i < P->capfc; i++) {
			if (!P->fc[i].code)
				continue;
			size_t j = ptr_slot(P->fc[i].code, P->fc[i].line, cap);
			while (n[j].code)
				j = (j + 1) & (cap - 1);
			n[j] = P->fc[i];
		}
		free(P->fc);
		P->fc = n;
		P->capfc = cap;
	}
	size_t j = ptr_slot(f->code, line, P->capfc);
	while (P->fc[j].code) {
		if (P->fc[j].code == f->code && P->fc[j].line == line)
			return P->fc[j].id;
		j = (j + 1) & (P->capfc - 1);
	}
	long id =
	    pl_prof_frame(&P->prof, f->code->name, f->code->file, line, f->code->firstline, 0);
	if (id < 0)
		return -1;
	P->fc[j] = (struct fcache_ent){f->code, line, (uint32_t)id};
	P->nfc++;
	return id;
}

void profile_read_small(const char *path, char *buf, size_t len)
{
	buf[0] = '\0';
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return;
	ssize_t n = read(fd, buf, len - 1);
	close(fd);
	buf[n > 0 ? n : 0] = '\0';
	buf[strcspn(buf, "\n")] = '\0';
}

/* The frame "thread TID (NAME)"; pyname: threading's name for it where
 * the process was read for one (a thread renamed while running gets a
 * frame of each name). */
long profile_thread_frame(struct profiler *P, pid_t pid, unsigned long tid, const char *pyname)
{
	struct thread_frame *tf = NULL;
	for (size_t i = 0; i < P->ntf && !tf; i++)
		if (P->tf[i].pid == pid && P->tf[i].tid == tid)
			tf = &P->tf[i];
	if (tf && (!pyname || !strncmp(tf->name, pyname, sizeof tf->name - 1)))
		return tf->id;
	char name[64], label[128];
	pl_thread_name(pid, tid, pyname, name, sizeof name);
	snprintf(label, sizeof label, "thread %lu (%s)", tid, name);
	long id = pl_prof_frame(&P->prof, label, "", 0, 0, 1);
	if (id < 0)
		return -1;
	if (!tf) {
		if (pl_grow((void **)&P->tf, &P->captf, P->ntf + 1, sizeof *P->tf, 16) < 0)
			return -1;
		tf = &P->tf[P->ntf++];
	}
	*tf = (struct thread_frame){pid, tid, (uint32_t)id, ""};
	snprintf(tf->name, sizeof tf->name, "%s", pyname ? pyname : "");
	return id;
}

/* The line the loop's own frame (the caller of __next__) is at in this
 * stack, 0 where it is not on it: the outermost frame of that function. */
static int loop_frame_line(const struct profiler *P, const struct pl_pythread *t)
{
	if (!P->loop_file[0])
		return 0;
	for (size_t k = t->depth; k-- > 0;) {
		const struct pl_pyframe *f = &t->frames[k];
		if (f->code && !strcmp(f->code->name, P->loop_func) &&
		    !strcmp(f->code->file, P->loop_file))
			return f->line > 0 ? f->line : 0;
	}
	return 0;
}

/* Classify a thread's stack (frame ids, root first) for the training
 * split, by the outermost frame that names a phase; where it is in the
 * loop (the update, the loop frame's line) marks steps whose fetch was
 * too short to be sampled (profile/trainloop.c). */
#define PHASE_UPDATE 0x80 /* in fphase: the frame is an optimizer's step */
#define PHASE_WORKER 5	  /* ... and its PL_TRAIN_WORKER_* bits, shifted */
#define PHASE_LOADER 3	  /* ... and its PL_TRAIN_LOADER_* bits, shifted */

/* What frame id says for the training split (cached): its phase + 1 and
 * the bits above; 0 out of memory. */
static unsigned char frame_bits(struct profiler *P, uint32_t id)
{
	if (pl_grow((void **)&P->fphase, &P->capfphase, (size_t)id + 1, 1, 4096) < 0)
		return 0;
	if (id >= P->ntrained) {
		memset(P->fphase + P->ntrained, 0, (size_t)id + 1 - P->ntrained);
		P->ntrained = (size_t)id + 1;
	}
	if (!P->fphase[id]) {
		const struct pl_prof_frame *f = &P->prof.frames[id];
		P->fphase[id] =
		    (unsigned char)((pl_train_frame_phase(f->name, f->file) + 1) |
				    (pl_train_frame_update(f->name, f->file) ? PHASE_UPDATE : 0) |
				    (pl_train_frame_worker(f->name, f->file) << PHASE_WORKER) |
				    (pl_train_frame_loader(f->name, f->file) << PHASE_LOADER));
	}
	return P->fphase[id];
}

static int train_sample(struct profiler *P, const struct pl_pythread *t, const uint32_t *ids,
			size_t n)
{
	enum pl_train_phase ph = PL_TRAIN_OTHER;
	struct pl_train_where where = {0, 0, 0, 0};
	size_t i = 0;
	for (; i < n && ph == PL_TRAIN_OTHER; i++) {
		unsigned char b = frame_bits(P, ids[i]);
		if (!b)
			return -1;
		ph = (enum pl_train_phase)((b & 0x07) - 1);
		where.update = (b & PHASE_UPDATE) != 0;
		where.worker |= (b >> PHASE_WORKER) & 0x03;
		if (ph == PL_TRAIN_DATA && i > 0 && !P->loop_file[0]) {
			/* the caller of __next__, at the line it runs (ids are root
			 * first, t->frames leaf first) */
			const struct pl_pyframe *c = &t->frames[t->depth - i];
			snprintf(P->loop_file, sizeof P->loop_file, "%s", c->code->file);
			snprintf(P->loop_func, sizeof P->loop_func, "%s", c->code->name);
			P->loop_line = c->line;
		}
	}
	/* a fetch: which iterator, a few frames below __next__ */
	for (size_t k = i; ph == PL_TRAIN_DATA && k < n && k < i + 4; k++) {
		unsigned char b = frame_bits(P, ids[k]);
		if (!b)
			return -1;
		where.loader |= (b >> PHASE_LOADER) & 0x03;
	}
	where.line = loop_frame_line(P, t);
	return pl_train_add_at(&P->train, P->cur->pid, t->tid, ph, where, P->tick_dt);
}

int profile_train_thread(struct profiler *P, const struct pl_pythread *t, uint32_t *buf)
{
	size_t n = 0;
	for (size_t i = t->depth; i-- > 0;) {
		long id = profile_frame_id(P, &t->frames[i]);
		if (id < 0)
			return -1;
		buf[n++] = (uint32_t)id;
	}
	return n ? train_sample(P, t, buf, n) : 0;
}

uint64_t profile_jitter_seed(void)
{
	return ((uint64_t)(pl_now_s() * 1e9) ^ ((uint64_t)getpid() << 32)) | 1;
}

long profile_jittered(uint64_t *state, long period_ns)
{
	uint64_t x = *state;
	x ^= x << 13;
	x ^= x >> 7;
	x ^= x << 17;
	*state = x;
	return period_ns / 2 + (long)((x >> 11) % (uint64_t)(period_ns + 1));
}

void profile_torch_poll(struct profiler *P)
{
	/* every ~50 ms for the first 10 s, then every ~1 s (checking each
	 * second missed a short job's first second: 48 of its 80 steps, its
	 * import taking about that long) */
	unsigned long long fast = (unsigned long long)(P->o.rate / 20) + 1,
			   slow = (unsigned long long)P->o.rate + 1,
			   until = (unsigned long long)(P->o.rate * 10);
	if (P->torch || P->ticks % (P->ticks < until ? fast : slow) != 1)
		return;
	for (size_t i = 0; i < P->nt && !P->torch; i++)
		P->torch = P->t[i].st && pl_pyproc_maps_has(P->t[i].pid, "/libtorch");
}

/* --fold-imports: frame i (leaf-first index) is importlib's; the module
 * being imported is the first `<module>` frame nearer the leaf. One
 * synthetic frame, "(import json)", stands for all of them. */
static long import_frame(struct profiler *P, const struct pl_pythread *t, size_t i)
{
	const char *mod = NULL;
	for (size_t k = i; k-- > 0 && !mod;) {
		const struct pl_pycode *c = t->frames[k].code;
		if (c && c->name && c->file && !strcmp(c->name, "<module>") && c->file[0] != '<')
			mod = pl_prof_shown_file(&P->prof, c->file);
	}
	char label[300];
	if (!mod) {
		snprintf(label, sizeof label, "(import)");
	} else {
		size_t len = strlen(mod);
		if (len > 12 && !strcmp(mod + len - 12, "/__init__.py"))
			len -= 12;
		else if (len > 3 && !strcmp(mod + len - 3, ".py"))
			len -= 3;
		snprintf(label, sizeof label, "(import %.*s)", (int)len, mod);
		for (char *c = label + 8; *c; c++)
			if (*c == '/')
				*c = '.';
	}
	return pl_prof_frame(&P->prof, label, "", 0, 0, 1);
}

static void on_thread(void *arg, const struct pl_pythread *t)
{
	struct profiler *P = arg;
	size_t n = 0;
	if (t->depth == 0)
		return; /* no Python frame: starting, or in C code only */
	if (!t->idle)
		P->ca.tid = t->tid;
	if (P->cur->frame >= 0)
		P->ids[n++] = (uint32_t)P->cur->frame;
	if (P->o.threads) {
		long id = profile_thread_frame(P, P->cur->pid, t->tid, t->name);
		if (id < 0)
			goto oom;
		P->ids[n++] = (uint32_t)id;
	}
	if (t->truncated) {
		long id = pl_prof_frame(&P->prof, "(deeper frames not read)", "", 0, 0, 1);
		if (id < 0)
			goto oom;
		P->ids[n++] = (uint32_t)id;
	}
	size_t first = n;
	for (size_t i = t->depth; i-- > 0;) {
		const struct pl_pycode *c = t->frames[i].code;
		if (P->o.fold_imports && c && c->file && !strncmp(c->file, "<frozen importlib", 17)) {
			long id = import_frame(P, t, i);
			if (id < 0)
				goto oom;
			P->ids[n++] = (uint32_t)id;
			break;
		}
		long id = profile_frame_id(P, &t->frames[i]);
		if (id < 0)
			goto oom;
		P->ids[n++] = (uint32_t)id;
	}
	if (P->torch && train_sample(P, t, P->ids + first, n - first) < 0)
		goto oom;
	if (t->idle && !P->o.idle) { /* read for the training split only */
		P->stats.idle++;
		return;
	}
	if (P->o.gil && !t->gil) { /* the same */
		P->stats.nogil++;
		return;
	}
	if (t->idle) {
		/* --idle: a waiting thread's stack ends in "(idle)", so that the
		 * flame graph tells waiting from running and no hot-function
		 * finding names a sleep (synthetic frames are never findings) */
		long id = pl_prof_frame(&P->prof, "(idle)", "", 0, 0, 1);
		if (id < 0)
			goto oom;
		P->ids[n++] = (uint32_t)id;
	}
	if (pl_prof_add(&P->prof, P->ids, n, 1) < 0)
		goto oom;
	if (P->o.memory && (!P->mhave || (t->gil && !P->mgil))) {
		memcpy(P->mstack, P->ids, n * sizeof *P->ids);
		P->mdepth = n;
		P->mhave = 1;
		P->mgil = t->gil;
	}
	return;
oom:
	P->oom = 1;
}

static void cpu_avoid_init(struct cpu_avoid *ca)
{
	ca->avoiding = -1;
	ca->fd = -1;
	ca->on = sched_getaffinity(0, sizeof ca->allowed, &ca->allowed) == 0 &&
		 CPU_COUNT(&ca->allowed) >= 2;
}

/* The CPU the thread last seen running is on; perfloop's affinity set to
 * all its allowed CPUs but that one when it changed. */
static void cpu_avoid_update(struct cpu_avoid *ca)
{
	if (!ca->on || !ca->tid)
		return;
	if (ca->fd < 0 || ca->fd_tid != ca->tid) {
		if (ca->fd >= 0)
			close(ca->fd);
		char path[64];
		snprintf(path, sizeof path, "/proc/%lu/stat", ca->tid);
		ca->fd = open(path, O_RDONLY | O_CLOEXEC);
		ca->fd_tid = ca->tid;
		if (ca->fd < 0)
			return;
	}
	char buf[1024];
	ssize_t n = pread(ca->fd, buf, sizeof buf - 1, 0);
	if (n <= 0)
		return;
	buf[n] = '\0';
	char *p = strrchr(buf, ')');
	/* after "comm)": state is field 3, processor field 39 */
	for (int field = 2; p && field < 39; field++)
		p = strchr(p + 1, ' ');
	if (!p)
		return;
	int cpu = atoi(p + 1);
	if (cpu == ca->avoiding || cpu < 0 || cpu >= CPU_SETSIZE || !CPU_ISSET(cpu, &ca->allowed))
		return;
	cpu_set_t set = ca->allowed;
	CPU_CLR(cpu, &set);
	if (sched_setaffinity(0, sizeof set, &set) == 0)
		ca->avoiding = cpu;
}

static struct target *add_target(struct profiler *P, pid_t pid, struct pl_pystack *st)
{
	if (pl_grow((void **)&P->t, &P->capt, P->nt + 1, sizeof *P->t, 8) < 0)
		return NULL;
	struct target *t = &P->t[P->nt++];
	memset(t, 0, sizeof *t);
	t->pid = pid;
	t->st = st;
	t->frame = -1;
	t->statm_fd = -1;
	if (pl_procid_open(&t->id, pid) < 0)
		t->gone = 1; /* ended before it was seen */
	pl_pyproc_cmdline(pid, t->cmd, sizeof t->cmd);
	return t;
}

static struct target *find_target(struct profiler *P, pid_t pid)
{
	for (size_t i = 0; i < P->nt; i++)
		if (P->t[i].pid == pid)
			return &P->t[i];
	return NULL;
}

/* Try to attach a pending target: 0 attached, or the library status. */
static int try_attach(struct profiler *P, struct target *t, struct pl_error *err)
{
	struct pl_pystack *st;
	int rc = pl_pystack_open(t->pid, &st, err);
	if (rc < 0)
		return rc;
	t->st = st;
	t->fails = 0;
	pl_pyproc_cmdline(t->pid, t->cmd, sizeof t->cmd);
	if (P->o.subprocs && t->frame < 0) {
		char label[400];
		snprintf(label, sizeof label, "process %d: %s", (int)t->pid, t->cmd);
		t->frame = pl_prof_frame(&P->prof, label, "", 0, 0, 1);
	}
	return 0;
}

/* Add every descendant of the targets that is not known yet (pending until
 * it is seen to be CPython). */
static void scan_children(struct profiler *P)
{
	for (size_t i = 0; i < P->nt; i++) {
		if (P->t[i].gone)
			continue;
		pid_t pid = P->t[i].pid;
		char path[96];
		snprintf(path, sizeof path, "/proc/%d/task", (int)pid);
		DIR *d = opendir(path);
		if (!d)
			continue;
		struct dirent *e;
		while ((e = readdir(d))) {
			if (e->d_name[0] == '.')
				continue;
			char cpath[320], buf[4096];
			snprintf(cpath, sizeof cpath, "/proc/%d/task/%s/children", (int)pid,
				 e->d_name);
			profile_read_small(cpath, buf, sizeof buf);
			for (char *save = NULL, *w = strtok_r(buf, " ", &save); w;
			     w = strtok_r(NULL, " ", &save)) {
				pid_t c = (pid_t)atoi(w);
				if (c > 0 && !find_target(P, c))
					add_target(P, c, NULL); /* may move P->t */
			}
		}
		closedir(d);
	}
}

/* Launch argv; its exec failure is reported through a close-on-exec pipe. */
static pid_t launch(char **argv, struct pl_error *err)
{
	int fds[2];
	if (pipe2(fds, O_CLOEXEC) < 0) {
		pl_error_set(err, PL_ESYS, "pipe: %s", strerror(errno));
		return -1;
	}
	pid_t pid = fork();
	if (pid < 0) {
		pl_error_set(err, PL_ESYS, "fork: %s", strerror(errno));
		close(fds[0]);
		close(fds[1]);
		return -1;
	}
	if (pid == 0) {
		close(fds[0]);
		signal(SIGINT, SIG_DFL);
		signal(SIGTERM, SIG_DFL);
		execvp(argv[0], argv);
		int e = errno;
		(void)!write(fds[1], &e, sizeof e);
		_exit(127);
	}
	close(fds[1]);
	int e = 0;
	ssize_t n;
	do
		n = read(fds[0], &e, sizeof e);
	while (n < 0 && errno == EINTR);
	close(fds[0]);
	if (n == (ssize_t)sizeof e) {
		waitpid(pid, NULL, 0);
		pl_error_set(err, PL_ENOEXEC, "cannot run '%s': %s", argv[0], strerror(e));
		return -1;
	}
	return pid;
}

static void sleep_s(double s)
{
	struct timespec ts = {(time_t)s, (long)((s - (double)(time_t)s) * 1e9)};
	nanosleep(&ts, NULL);
}

/* wait4, keeping the launched program's resource use once it is reaped. */
static pid_t reap(struct profiler *P, pid_t pid, int *status, int flags)
{
	struct rusage ru;
	pid_t r = wait4(pid, status, flags, &ru);
	if (r == pid) {
		P->child_ru = ru;
		P->child_ru_set = 1;
	}
	return r;
}

/* Stop a launched program: SIGTERM, then SIGKILL after 2 s; reap it. */
static void stop_child(struct profiler *P, pid_t pid, int *status)
{
	kill(pid, SIGTERM);
	for (int i = 0; i < 200; i++) {
		if (reap(P, pid, status, WNOHANG) == pid)
			return;
		sleep_s(0.01);
	}
	kill(pid, SIGKILL);
	reap(P, pid, status, 0);
}

static void print_ms(const char *what, const struct pl_steps_dist *d)
{
	printf("%s p50 %.1f ms, p90 %.1f ms, max %.1f ms", what, d->p50 * 1e3, d->p90 * 1e3,
	       d->max * 1e3);
}

/* The data vs compute split of the training loop, where one was seen:
 * printed, and in *out. 1 found, 0 none, -1 out of memory. */
static int train_report(struct profiler *P, const char *cwd, struct pl_steps *out)
{
	memset(out, 0, sizeof(*out));
	const struct pl_train_thread *x = pl_train_loop_thread(&P->train);
	if (!x)
		return 0;
	int rc = pl_steps_compute(out, x->data, x->total, x->nsteps, -1);
	if (rc == PL_ENOMEM)
		return -1;
	if (rc != PL_OK)
		return 0;
	/* what was seen of the loader: the main process loading, or workers
	 * (counted and timed where --subprocesses followed them; -1 where not) */
	if (P->train.loader & PL_TRAIN_LOADER_WORKERS)
		pl_steps_set_loader(out, P->train.nworkers ? (int)P->train.nworkers : -1,
				    P->train.worker_load_s, (int)sysconf(_SC_NPROCESSORS_ONLN));
	else if (P->train.loader & PL_TRAIN_LOADER_SINGLE)
		pl_steps_set_loader(out, 0, 0, (int)sysconf(_SC_NPROCESSORS_ONLN));
	snprintf(out->data_field, sizeof out->data_field, "data (DataLoader __next__)");
	snprintf(out->total_field, sizeof out->total_field, "step (batch to batch)");
	printf("\nTraining loop: thread %lu of pid %d, %zu steps (%zu of warm-up apart), "
	       "wall-clock time, waits included\n",
	       x->tid, (int)x->pid, out->n, out->warmup);
	printf("  waiting for data %.1f%% of the step time (%.2f s of %.2f s) at %s:%d (%s)\n",
	       100 * out->data_share, out->data.sum, out->total.sum, pl_prof_relative(P->loop_file, cwd),
	       P->loop_line, P->loop_func);
	printf("  per step: ");
	print_ms("data", &out->data);
	printf("; ");
	print_ms("step", &out->total);
	printf("\n  in the loop's thread: forward %.2f s, backward %.2f s, optimizer %.2f s, "
	       "data %.2f s, other %.2f s\n",
	       x->t[PL_TRAIN_FORWARD], x->t[PL_TRAIN_BACKWARD], x->t[PL_TRAIN_OPTIM],
	       x->t[PL_TRAIN_DATA], x->t[PL_TRAIN_OTHER]);
	if (out->warmup)
		printf("  warm-up (%zu steps): data %.1f%% of %.2f s\n", out->warmup,
		       100 * out->w_data_share, out->w_total.sum);
	/* each worker followed: the share of its time loading a batch, the
	 * rest waiting for the next index (idle) */
	if (P->train.nworkers) {
		printf("  DataLoader workers, busy loading (the rest idle, waiting for work):");
		for (size_t i = 0; i < P->train.nworkers && i < 16; i++)
			printf("%s pid %d %.0f%%", i ? "," : "", (int)P->train.workers[i],
			       P->train.worker_seen_s[i] > 0
				   ? 100 * P->train.worker_busy_s[i] / P->train.worker_seen_s[i]
				   : 0.0);
		if (P->train.nworkers > 16)
			printf(", and %zu more", P->train.nworkers - 16);
		printf("\n");
	}
	if (out->data_share > 0.3) {
		char advice[700];
		pl_steps_advice(out, advice, sizeof advice);
		printf("  ! data-loading bound (ml.data-loading-bound): the step waits for its "
		       "batch: %s\n",
		       advice);
	}
	return 1;
}

static void release(struct profiler *P)
{
	for (size_t i = 0; i < P->nt; i++) {
		pl_pystack_close(P->t[i].st);
		pl_procid_close(&P->t[i].id);
		if (P->t[i].statm_fd >= 0)
			close(P->t[i].statm_fd);
	}
	free(P->t);
	free(P->mstack);
	pl_memtrack_release(&P->mem);
	free(P->fc);
	free(P->tf);
	free(P->ids);
	free(P->fphase);
	pl_gpu_release(&P->gpu);
	pl_train_release(&P->train);
	if (P->ca.fd >= 0)
		close(P->ca.fd);
	pl_prof_release(&P->prof);
}

/* Wait until the launched root is CPython (or, with --subprocesses, just
 * running). 0, or an exit code after printing the error. */
static int wait_for_python(struct profiler *P, pid_t child, const struct pl_ctx *ctx, int *status,
			   int *reaped)
{
	struct pl_error err = {{0}};
	double t0 = pl_now_s();
	for (;;) {
		int rc = try_attach(P, &P->t[0], &err);
		if (rc == 0)
			return 0;
		if (rc != PL_EINPUT && !P->o.subprocs) {
			stop_child(P, child, status);
			*reaped = 1;
			return pl_die(PL_EXIT_USAGE, "%s", err.msg);
		}
		if (reap(P, child, status, WNOHANG) == child) {
			*reaped = 1;
			if (P->o.subprocs)
				return 0;
			return pl_die(
			    PL_EXIT_USAGE,
			    "'%s' exited before a CPython interpreter could be read in it",
			    P->o.argv[0]);
		}
		if (*ctx->interrupted)
			return 0;
		if (P->o.subprocs && pl_now_s() - t0 > 0.05)
			return 0; /* a wrapper (shell, launcher): its children are followed */
		if (pl_now_s() - t0 > 5.0) {
			stop_child(P, child, status);
			*reaped = 1;
			return pl_die(PL_EXIT_USAGE,
				      "'%s' did not run a CPython interpreter within 5 s (%s); "
				      "use --subprocesses if it starts Python as a child",
				      P->o.argv[0], err.msg);
		}
		sleep_s(0.001);
	}
}

/* Python and mixed mode: attach or launch, sample until the program ends
 * (or --duration, or Ctrl-C), then the report and the outputs. */
int profile_python(struct profiler *P, const struct pl_ctx *ctx, const char *cwd)
{
	struct opts *o = &P->o;
	P->ids = malloc((PL_PYSTACK_MAX_DEPTH + 4) * sizeof *P->ids);
	P->mstack = o->memory ? malloc((PL_PYSTACK_MAX_DEPTH + 4) * sizeof *P->mstack) : NULL;
	if (!P->ids || (o->memory && !P->mstack)) {
		free(P->ids);
		free(P->mstack);
		return pl_die(PL_EXIT_INTERNAL, "out of memory");
	}
	struct pl_error err = {{0}};
	pid_t child = -1;
	int status = 0, reaped = 0, rc = 0;
	if (o->argv) {
		child = launch(o->argv, &err);
		if (child < 0) {
			release(P);
			return pl_die(PL_EXIT_USAGE, "%s", err.msg);
		}
		add_target(P, child, NULL);
		rc = wait_for_python(P, child, ctx, &status, &reaped);
		if (rc) {
			release(P);
			return rc;
		}
	} else {
		add_target(P, o->pid, NULL);
		int r = try_attach(P, &P->t[0], &err);
		if (r < 0) {
			release(P);
			return pl_die(PL_EXIT_USAGE, "%s", err.msg);
		}
	}

	/* PERFLOOP_PROFILE_SHARE_CPU=1 turns the CPU avoidance off, to measure
	 * the bias it removes (bench/profile.sh) */
	const char *share = getenv("PERFLOOP_PROFILE_SHARE_CPU");
	if (!share || strcmp(share, "1") != 0)
		cpu_avoid_init(&P->ca);

	if (o->gpu && pl_gpu_start(&P->gpu, o->gpu_hz) == PL_ENOMEM) {
		release(P);
		return pl_die(PL_EXIT_INTERNAL, "out of memory");
	}
	pl_gpu_set_pid(&P->gpu, child > 0 ? child : o->pid);

	/* the sampling loop */
	long period_ns = (long)(1e9 / o->rate);
	unsigned long long children_every = (unsigned long long)(o->rate / 10) + 1;
	unsigned long long attach_every = (unsigned long long)(o->rate / 50) + 1;
	unsigned long long reap_every = (unsigned long long)(o->rate / 100) + 1;
	struct timespec next;
	clock_gettime(CLOCK_MONOTONIC, &next);
	double start = pl_now_s(), cpu0 = self_cpu_s(), last_tick = start;
	P->live = isatty(STDERR_FILENO);
	P->live_start = start;
	P->table_last = start; /* top's first table after a second of samples */
	int stopped_by_us = 0;
	if (o->mode == MODE_MIXED && !reaped) {
		int mrc = profile_mixed_loop(P, ctx, child, &status, &reaped, &err);
		if (mrc != PL_OK) {
			if (child > 0 && !reaped)
				stop_child(P, child, &status);
			release(P);
			return pl_die(pl_exit_code(mrc), "%s",
				      mrc == PL_ENOMEM ? "out of memory" : err.msg);
		}
		/* reaped by the tracer's waitpid(-1): the kernel's high-water mark */
		if (o->memory && reaped && getrusage(RUSAGE_CHILDREN, &P->child_ru) == 0)
			P->child_ru_set = 1;
	}
	/* each interval drawn from 0.5-1.5 periods (mean: the period): a
	 * loop whose period is near a multiple of the sampling period was
	 * otherwise seen at one phase only, a 1 ms forward-backward pass read
	 * as all forward for a whole step (aliasing). tick_dt is each tick's
	 * measured interval, so the weights stay exact. */
	uint64_t jitter = profile_jitter_seed();
	while (!reaped && o->mode != MODE_MIXED) {
		next.tv_nsec += profile_jittered(&jitter, period_ns);
		while (next.tv_nsec >= 1000000000L) {
			next.tv_nsec -= 1000000000L;
			next.tv_sec++;
		}
		struct timespec cur;
		clock_gettime(CLOCK_MONOTONIC, &cur);
		double late = (double)(cur.tv_sec - next.tv_sec) +
			      (double)(cur.tv_nsec - next.tv_nsec) * 1e-9;
		if (late > (double)period_ns * 1e-9)
			next = cur; /* too late: sample now, never burst to catch up */
		while (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &next, NULL) == EINTR &&
		       !*ctx->interrupted)
			;
		if (*ctx->interrupted)
			break;
		P->ticks++;
		if (o->live_table)
			profile_top_refresh(P);
		else
			profile_live_line(P, 0);
		double tnow = pl_now_s();
		P->tick_dt = tnow - last_tick < 10.0 / o->rate ? tnow - last_tick : 1.0 / o->rate;
		last_tick = tnow;
		profile_torch_poll(P);
		size_t live = 0;
		P->mtotal = 0;
		for (size_t i = 0; i < P->nt; i++) {
			struct target *t = &P->t[i];
			if (t->gone)
				continue;
			/* ended: never read whichever program gets its number next
			 * (without a pidfd, /proc is asked every 10th tick) */
			if ((t->id.pidfd >= 0 || P->ticks % 10 == 0) && pl_procid_gone(&t->id)) {
				t->gone = 1;
				continue;
			}
			if (!t->st) {
				/* not CPython yet: try for 5 s at 50 Hz, then only watch it
				 * (a shell or launcher whose children are followed) */
				if (P->ticks % attach_every == 0 && t->tries++ < 250)
					try_attach(P, t, &err);
				live += !t->gone;
				continue;
			}
			P->cur = t;
			P->mhave = P->mgil = 0;
			/* a training profile reads every thread for its split */
			unsigned flags = (o->idle || P->torch ? PL_PYSAMPLE_IDLE : 0) |
					 (o->gil && !P->torch ? PL_PYSAMPLE_GIL_ONLY : 0) |
					 (o->threads ? PL_PYSAMPLE_NAMES : 0);
			int r = pl_pystack_sample(t->st, flags, on_thread, P, &P->stats);
			if (r == PL_ESYS) {
				t->gone = 1;
				continue;
			}
			live++;
			if (o->memory && profile_memory_tick(P, t) < 0)
				P->oom = 1;
			if (r == PL_EFAILED) {
				P->stats.errors++;
				if (++t->fails > 20) { /* exec'd something else: attach again */
					pl_pystack_close(t->st);
					t->st = NULL;
				}
			} else {
				t->fails = 0;
			}
		}
		if (o->memory && (pl_memtrack_point(&P->mem, tnow - start, P->mtotal, &P->prof,
						    P->mstack, P->mhave ? P->mdepth : 0) < 0 ||
				  profile_memory_rollup(P, tnow - start) < 0))
			P->oom = 1;
		if (P->oom)
			break;
		if (o->subprocs && P->ticks % children_every == 0)
			scan_children(P);
		pl_runq_tick(&P->runq, P->t[0].pid, tnow);
		if (P->ticks % reap_every == 0)
			cpu_avoid_update(&P->ca);
		/* the child's exit shows as unreadable memory at once; reap it then,
		 * or every 10 ms for a child that is not (yet) read */
		if (child > 0 && (P->t[0].gone || !P->t[0].st || P->ticks % reap_every == 0) &&
		    reap(P, child, &status, WNOHANG) == child)
			reaped = 1;
		if (child < 0 && P->t[0].gone)
			break;
		if (child < 0 && live == 0)
			break;
		if (o->duration > 0 && pl_now_s() - start >= o->duration)
			break;
	}
	double elapsed = pl_now_s() - start, cpu = self_cpu_s() - cpu0;
	profile_live_line(P, 1);
	pl_gpu_stop(&P->gpu);
	if (child > 0 && !reaped) {
		stop_child(P, child, &status);
		reaped = 1;
		stopped_by_us = 1;
	}
	if (P->oom) {
		release(P);
		return pl_die(PL_EXIT_INTERNAL, "out of memory");
	}

	/* report */
	struct target *root = &P->t[0];
	const char *version = root->st ? pl_pystack_version(root->st) : "?";
	char title[512];
	if (o->argv)
		snprintf(title, sizeof title, "%s", root->cmd);
	else
		snprintf(title, sizeof title, "pid %d: %s", (int)root->pid, root->cmd);
	size_t nproc = 0;
	for (size_t i = 0; i < P->nt; i++)
		nproc += P->t[i].st != NULL || P->t[i].fails;
	double rate = elapsed > 0 ? (double)P->ticks / elapsed : 0;
	size_t tried = P->stats.threads + P->stats.errors;
	printf("perfloop %s: %s (pid %d, CPython %s%s)\n", o->live_table ? "top" : "profile", title,
	       (int)root->pid, version,
	       o->mode == MODE_MIXED ? ", mixed Python + native stacks" : "");
	printf("  %llu samples in %.2f s: %.0f/s delivered (asked %.0f), %zu errors (%.2f%%)",
	       (unsigned long long)P->prof.samples, elapsed, rate, o->rate, P->stats.errors,
	       tried ? 100.0 * (double)P->stats.errors / (double)tried : 0.0);
	if (!o->idle && P->stats.idle)
		printf(", %zu idle thread samples left out", P->stats.idle);
	if (o->gil)
		printf(", %zu samples of threads without the GIL left out", P->stats.nogil);
	if (o->subprocs)
		printf(", %zu processes", nproc);
	printf("\n  profiler CPU %.1f%% of one core\n", elapsed > 0 ? 100.0 * cpu / elapsed : 0.0);
	if (o->memory)
		profile_print_memory(P);
	if (profile_print_table(P) < 0) {
		release(P);
		return pl_die(PL_EXIT_INTERNAL, "out of memory");
	}
	if (P->prof.samples == 0)
		fprintf(stderr, "perfloop: warning: no Python stack was sampled%s\n",
			o->idle ? "" : " (threads not running are left out; --idle keeps them)");
	struct pl_steps steps;
	int trained = train_report(P, cwd, &steps);
	if (trained < 0) {
		release(P);
		return pl_die(PL_EXIT_INTERNAL, "out of memory");
	}
	if (o->gpu) {
		printf("\n");
		pl_gpu_print(stdout, &P->gpu);
	}
	rc = profile_write_outputs(P, title, cwd, trained ? &steps : NULL);
	release(P);
	if (rc)
		return rc;
	if (*ctx->interrupted) {
		fprintf(stderr, "perfloop: interrupted: the profile holds what was gathered\n");
		return PL_EXIT_INTERRUPTED;
	}
	if (child > 0 && stopped_by_us) {
		fprintf(stderr, "perfloop: stopped '%s' after %.0f s (--duration)\n", o->argv[0],
			o->duration);
		return PL_EXIT_OK;
	}
	if (child > 0 && WIFSIGNALED(status)) {
		char sig[32];
		fprintf(stderr, "perfloop: '%s' was killed by %s\n", o->argv[0],
			pl_signal_name(WTERMSIG(status), sig, sizeof sig));
		return PL_EXIT_FAILED;
	}
	if (child > 0 && WIFEXITED(status) && WEXITSTATUS(status) != 0) {
		fprintf(stderr, "perfloop: '%s' exited with status %d\n", o->argv[0],
			WEXITSTATUS(status));
		return PL_EXIT_FAILED;
	}
	return PL_EXIT_OK;
}
