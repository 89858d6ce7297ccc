/*
 * Native stack sampling (see native.h).
 *
 * Written here rather than driving `perf record`: the product is one
 * command with no perf.data file, stacks unwound as they arrive and memory
 * bounded by what is distinct (frames, stacks), not by the run's length.
 * The pieces that are someone else's craft come from libraries: the kernel
 * samples, elfutils unwinds (CFI) and symbolizes (ELF, DWARF, debuginfo
 * lookup by build-id and .gnu_debuglink), libstdc++ demangles.
 *
 * Here: the sampling loop, the stacks as sampled (symbolized at the end)
 * and --memory's RSS, and the --mode mixed entry points. Beside it, one
 * concern a file (native_int.h): native_rings.c (perf events, records),
 * native_maps.c (processes' maps), native_unwind.c, native_syms.c.
 */
#include "native.h"

#include <dirent.h>
#include <elfutils/libdwfl.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "hash.h"
#include "launch.h"
#include "memtrack.h"
#include "monotime.h"
#include "native_int.h"
#include "procid.h"
#include "runq.h"
#include "profdata.h"

const char *pl_unwind_name(enum pl_unwind u)
{
	return u == PL_UNWIND_FP ? "fp" : u == PL_UNWIND_DWARF ? "dwarf" : "auto";
}

/* ---- the stacks as sampled ---- */

static long special(struct nat *N, long *id, const char *name)
{
	if (*id == -2)
		*id = pl_prof_frame(N->prof, name, "", 0, 0, 0);
	return *id;
}

static void raw_add(struct nat *N, const uint64_t *tok, size_t len)
{
	if (N->nraw * 2 >= N->capraw) {
		size_t cap = N->capraw ? N->capraw * 2 : 1024;
		struct rawstk *t = calloc(cap, sizeof(*t));
		if (!t) {
			N->oom = 1;
			return;
		}
		for (size_t i = 0; i < N->capraw; i++) {
			if (!N->raw[i].used)
				continue;
			size_t j = N->raw[i].hash & (cap - 1);
			while (t[j].used)
				j = (j + 1) & (cap - 1);
			t[j] = N->raw[i];
		}
		free(N->raw);
		N->raw = t;
		N->capraw = cap;
	}
	uint64_t h = pl_fnv1a_bytes(1469598103934665603ULL, tok, len * sizeof(*tok));
	size_t j = h & (N->capraw - 1);
	while (N->raw[j].used) {
		struct rawstk *r = &N->raw[j];
		if (r->hash == h && r->len == len &&
		    memcmp(N->tok + r->off, tok, len * sizeof(*tok)) == 0) {
			r->count++;
			N->last_hash = h;
			N->last_off = r->off;
			return;
		}
		j = (j + 1) & (N->capraw - 1);
	}
	if (N->ntok + len > N->captok) {
		size_t cap = N->captok ? N->captok * 2 : 65536;
		while (cap < N->ntok + len)
			cap *= 2;
		uint64_t *g = realloc(N->tok, cap * sizeof(*g));
		if (!g) {
			N->oom = 1;
			return;
		}
		N->tok = g;
		N->captok = cap;
	}
	memcpy(N->tok + N->ntok, tok, len * sizeof(*tok));
	N->raw[j] = (struct rawstk){h, 1, (uint32_t)N->ntok, (uint32_t)len, 1, 0};
	N->last_hash = h;
	N->last_off = (uint32_t)N->ntok;
	N->ntok += len;
	N->nraw++;
}

void pl_native_add_stack(struct nat *N, struct nproc *p, pid_t tid, const uint64_t *pcs, size_t n,
			 int in_kernel)
{
	/* leaf first; symbolized in finish() */
	size_t depth = 0, cap = MAX_DEPTH + 4;
	uint64_t *t = N->cur;
	/* the kernel's frames, where --kernel got them: named from kallsyms */
	for (size_t i = 0; i < N->nkpcs && depth < cap; i++) {
		const char *name = pl_native_ksym_name(N->kpcs[i]);
		char buf[300];
		snprintf(buf, sizeof(buf), "%s [kernel]", name ? name : "?");
		long id = pl_prof_frame(N->prof, buf, "[kernel.kallsyms]", 0, 0, 0);
		if (id >= 0)
			t[depth++] = TAG | (uint64_t)id;
	}
	if (in_kernel && !N->nkpcs && special(N, &N->kernel_frame, "[kernel]") >= 0)
		t[depth++] = TAG | (uint64_t)N->kernel_frame;
	for (size_t i = 0; i < n && depth < cap; i++) {
		const struct nmap *m = p ? pl_native_map_find(p, pcs[i]) : NULL;
		if (!m) {
			if (special(N, &N->unknown_frame, "[unknown]") >= 0)
				t[depth++] = TAG | (uint64_t)N->unknown_frame;
			continue;
		}
		if (m->file == VDSO_FILE) {
			if (special(N, &N->vdso_frame, "[vdso]") >= 0)
				t[depth++] = TAG | (uint64_t)N->vdso_frame;
			continue;
		}
		if (m->file == NO_FILE) {
			if (special(N, &N->anon_frame, "[anonymous executable memory (JIT?)]") >= 0)
				t[depth++] = TAG | (uint64_t)N->anon_frame;
			continue;
		}
		struct nfile *f = &N->files[m->file];
		/* opened at first sight, kept open: a program deleted when it
		 * exits is still read at the end (symbols load only then) */
		pl_native_file_load(f);
		uint64_t addr = pcs[i] - pl_native_map_bias(f, m);
		t[depth++] = ((uint64_t)(m->file + 1) << 48) | (addr & ADDR_MASK);
	}
	/* the synthetic roots: thread, then process */
	char buf[96];
	if (N->o->threads) {
		snprintf(buf, sizeof(buf), "thread %d", (int)tid);
		long id = pl_prof_frame(N->prof, buf, "", 0, 0, 1);
		if (id >= 0)
			t[depth++] = TAG | (uint64_t)id;
	}
	if (N->o->subprocs && p) {
		if (p->frame < 0) {
			snprintf(buf, sizeof(buf), "process %d %s", (int)p->pid, p->comm);
			p->frame = pl_prof_frame(N->prof, buf, "", 0, 0, 1);
		}
		if (p->frame >= 0)
			t[depth++] = TAG | (uint64_t)p->frame;
	}
	if (depth) {
		raw_add(N, t, depth);
		if (p && !N->oom) {
			p->mem_hash = N->last_hash;
			p->mem_off = N->last_off;
			p->mem_has = 1;
		}
	}
}

/* the raw stack (hash, offset) names, or NULL */
static struct rawstk *raw_find(struct nat *N, uint64_t h, uint32_t off)
{
	if (!N->capraw)
		return NULL;
	for (size_t j = h & (N->capraw - 1); N->raw[j].used; j = (j + 1) & (N->capraw - 1))
		if (N->raw[j].hash == h && N->raw[j].off == off)
			return &N->raw[j];
	return NULL;
}

/* --memory, every pass of the loop: each process's RSS; a rise is charged
 * to the stack of its latest sample (counted uncharged without one), the
 * total goes into the series */
static void mem_tick(struct nat *N, double t)
{
	struct pl_memtrack *m = N->o->mem;
	double total = 0;
	struct nproc *riser = NULL;
	double most = 0;
	for (size_t i = 0; i < N->nprocs; i++) {
		struct nproc *p = &N->procs[i];
		if (p->statm_fd == -2)
			continue;
		double rss = pl_memtrack_rss(p->pid, &p->statm_fd);
		if (!(rss > 0)) {
			if (p->statm_fd >= 0)
				close(p->statm_fd);
			p->statm_fd = -2;
			continue;
		}
		total += rss;
		double rise = p->rss > 0 ? rss - p->rss : 0;
		p->rss = rss;
		if (rise < 0)
			pl_memtrack_release_bytes(m, -rise);
		if (!(rise > 0))
			continue;
		struct rawstk *r = p->mem_has ? raw_find(N, p->mem_hash, p->mem_off) : NULL;
		if (r)
			r->grow += rise;
		else if (pl_memtrack_charge(m, NULL, NULL, 0, rise) < 0)
			N->oom = 1;
		if (r && rise > most) {
			most = rise;
			riser = p;
		}
	}
	if (total > m->peak_rss && riser) {
		N->peak_has = 1;
		N->peak_hash = riser->mem_hash;
		N->peak_off = riser->mem_off;
	}
	if (pl_memtrack_point(m, t, total, NULL, NULL, 0) < 0)
		N->oom = 1;
	if (pl_memtrack_rollup_due(m, t)) { /* PSS and USS, 4 times a second */
		double pss = 0, uss = 0, ps, us;
		for (size_t i = 0; i < N->nprocs; i++)
			if (N->procs[i].statm_fd != -2 &&
			    pl_memtrack_rollup(N->procs[i].pid, &ps, &us) == 0) {
				pss += ps;
				uss += us;
			}
		if (pl_memtrack_rollup_point(m, t, pss, uss) < 0)
			N->oom = 1;
	}
}

/* The sampled stacks into the profile, symbolized now that sampling is over. */
static void finish(struct nat *N)
{
	for (size_t i = 0; i < N->capraw && !N->oom; i++) {
		struct rawstk *r = &N->raw[i];
		if (!r->used)
			continue;
		const uint64_t *t = N->tok + r->off;
		size_t depth = 0, cap = sizeof(N->ids) / sizeof(N->ids[0]);
		int root_entry = 0, seen_file = 0;
		for (size_t k = r->len; k-- > 0;) { /* root first: find the root-most file frame */
			if ((t[k] & TAG) == TAG)
				continue;
			root_entry =
			    pl_native_entry_fileaddr(N, (int)(t[k] >> 48) - 1, t[k] & ADDR_MASK);
			seen_file = 1;
			break;
		}
		if (!seen_file || !root_entry)
			N->st->truncated += r->count;
		for (size_t k = 0; k < r->len && depth < cap; k++) {
			if ((t[k] & TAG) == TAG) {
				N->ids[depth++] = (uint32_t)(t[k] & ADDR_MASK);
				continue;
			}
			const uint32_t *ids;
			size_t n =
			    pl_native_frames_for(N, (int)(t[k] >> 48) - 1, t[k] & ADDR_MASK, &ids);
			for (size_t j = 0; j < n && depth < cap; j++)
				N->ids[depth++] = ids[j];
		}
		for (size_t a = 0; a < depth / 2; a++) {
			uint32_t x = N->ids[a];
			N->ids[a] = N->ids[depth - 1 - a];
			N->ids[depth - 1 - a] = x;
		}
		if (depth && pl_prof_add(N->prof, N->ids, depth, r->count) < 0)
			N->oom = 1;
		if (N->o->mem && r->grow > 0 &&
		    pl_memtrack_charge(N->o->mem, N->prof, N->ids, depth, r->grow) < 0)
			N->oom = 1;
		if (N->o->mem && N->peak_has && r->hash == N->peak_hash && r->off == N->peak_off &&
		    pl_memtrack_peak_stack(N->o->mem, N->prof, N->ids, depth) < 0)
			N->oom = 1;
	}
}

/* ---- the sampling loop ---- */

static void stop(pid_t pid, int *status)
{
	kill(pid, SIGTERM);
	for (int i = 0; i < 100; i++) {
		if (waitpid(pid, status, WNOHANG) == pid)
			return;
		struct timespec ts = {0, 10000000};
		nanosleep(&ts, NULL);
	}
	kill(pid, SIGKILL);
	waitpid(pid, status, 0);
}

static double cpu_now(void)
{
	struct rusage ru;
	getrusage(RUSAGE_SELF, &ru);
	return (double)ru.ru_utime.tv_sec + (double)ru.ru_utime.tv_usec * 1e-6 +
	       (double)ru.ru_stime.tv_sec + (double)ru.ru_stime.tv_usec * 1e-6;
}

static void release(struct nat *N)
{
	for (size_t i = 0; i < N->nrings; i++)
		if (N->rings[i].base)
			munmap(N->rings[i].base, N->rings[i].size + N->page);
	for (size_t i = 0; i < N->nfds; i++)
		close(N->fds[i]);
	for (size_t i = 0; i < N->nprocs; i++) {
		if (N->procs[i].dwfl)
			dwfl_end(N->procs[i].dwfl);
		if (N->procs[i].statm_fd >= 0)
			close(N->procs[i].statm_fd);
		free(N->procs[i].maps);
	}
	for (size_t i = 0; i < N->nfiles; i++) {
		if (N->files[i].dwfl)
			dwfl_end(N->files[i].dwfl);
		free(N->files[i].cur);
		free(N->files[i].syms);
		free(N->files[i].path);
	}
	if (N->vdso_fi > 0)
		close(N->vdso_fd);
	free(N->rings);
	free(N->fds);
	free(N->procs);
	free(N->files);
	free(N->keys);
	free(N->fids);
	free(N->raw);
	free(N->tok);
}

int pl_native_profile(char **argv, pid_t pid, const struct pl_native_opts *o, struct pl_prof *prof,
		      struct pl_native_stats *st, int *status, struct pl_error *err)
{
	struct nat *N = calloc(1, sizeof(*N));
	if (!N)
		return PL_ENOMEM;
	memset(st, 0, sizeof(*st));
	N->o = o;
	N->st = st;
	N->prof = prof;
	N->page = (size_t)sysconf(_SC_PAGESIZE);
	st->kernel_sampled = 1;
	st->unwind = o->unwind;
#if defined(__x86_64__)
	if (st->unwind == PL_UNWIND_AUTO)
		st->unwind = PL_UNWIND_DWARF;
#else
	if (st->unwind == PL_UNWIND_DWARF) {
		free(N);
		return pl_error_set(err, PL_EINPUT,
				    "--unwind dwarf: only on x86-64 for now; use --unwind fp");
	}
	st->unwind = PL_UNWIND_FP;
#endif
	N->kernel_frame = N->unknown_frame = N->anon_frame = N->vdso_frame =
	    -2; /* interned when first seen */
	/* every mapped file stays open until the end (a deleted program stays
	 * readable): a program with hundreds of libraries needs the fds */
	struct rlimit rl;
	if (getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_cur < rl.rlim_max) {
		rl.rlim_cur = rl.rlim_max;
		setrlimit(RLIMIT_NOFILE, &rl);
	}
	long ncpu = sysconf(_SC_NPROCESSORS_CONF);
	if (ncpu < 1)
		ncpu = 1;
	N->rings = calloc((size_t)ncpu, sizeof(*N->rings));
	if (!N->rings) {
		free(N);
		return PL_ENOMEM;
	}
	N->nrings = (size_t)ncpu;
	for (long c = 0; c < ncpu; c++)
		N->rings[c].fd = -1;

	struct perf_event_attr a;
	int rc = PL_OK;
	pid_t child = -1;
	struct pl_launch L = {-1, -1, -1};
	struct pl_procid who = {.pid = pid, .pidfd = -1};
	*status = 0;
	if (argv) {
		if ((rc = pl_launch_start(argv, &L, err)) != PL_OK)
			goto out;
		child = L.pid;
		pl_native_init_attr(N, &a, 1);
		rc = pl_native_open_task(N, &a, child, (int)ncpu, err);
		if (rc != PL_OK) {
			pl_launch_end(&L, status);
			child = -1;
			goto out;
		}
		struct nproc *p = pl_native_proc_get(N, child, 1);
		if (p)
			snprintf(p->comm, sizeof(p->comm), "%s", argv[0]);
		if ((rc = pl_launch_go(&L, argv[0], status, err)) != PL_OK) {
			child = -1;
			goto out;
		}
	} else {
		if (pl_procid_open(&who, pid) < 0) {
			rc = pl_error_set(err, PL_EINPUT, "no process with PID %d", (int)pid);
			goto out;
		}
		pl_native_init_attr(N, &a, 0);
		struct nproc *p = pl_native_proc_get(N, pid, 1);
		if (!p) {
			rc = PL_ENOMEM;
			goto out;
		}
		char path[64];
		snprintf(path, sizeof(path), "/proc/%d/comm", (int)pid);
		FILE *f = fopen(path, "r");
		if (f) {
			if (fgets(p->comm, sizeof(p->comm), f))
				p->comm[strcspn(p->comm, "\n")] = '\0';
			fclose(f);
		}
		pl_native_maps_from_proc(N, p);
		snprintf(path, sizeof(path), "/proc/%d/task", (int)pid);
		DIR *d = opendir(path);
		if (!d) {
			rc = pl_error_set(err, PL_EINPUT, "no process with PID %d", (int)pid);
			goto out;
		}
		struct dirent *de;
		while ((de = readdir(d)) && rc == PL_OK)
			if (de->d_name[0] >= '0' && de->d_name[0] <= '9')
				rc = pl_native_open_task(N, &a, (pid_t)atoi(de->d_name), (int)ncpu,
							 err);
		closedir(d);
		if (rc != PL_OK)
			goto out;
	}

	/* the loop: drain the rings as they fill, until the command ends */
	double t0 = pl_now_s(), c0 = cpu_now();
	struct pollfd *pfd = calloc((size_t)ncpu, sizeof(*pfd));
	if (!pfd) {
		rc = PL_ENOMEM;
		goto out;
	}
	size_t np = 0;
	for (long c = 0; c < ncpu; c++)
		if (N->rings[c].fd >= 0)
			pfd[np++] = (struct pollfd){N->rings[c].fd, POLLIN, 0};
	int done = 0, stopped = 0;
	while (!done && !N->oom) {
		int r = poll(pfd, np, 20);
		(void)r;
		for (long c = 0; c < ncpu; c++)
			if (N->rings[c].base)
				pl_native_drain(N, &N->rings[c]);
		if (o->mem)
			mem_tick(N, pl_now_s() - t0);
		if (o->runq)
			pl_runq_tick(o->runq, child > 0 ? child : pid, pl_now_s());
		if (child > 0 && waitpid(child, status, WNOHANG) == child) {
			child = -1;
			done = 1;
		}
		if (!argv) {
			int hup = 1;
			for (size_t i = 0; i < np; i++)
				hup &= (pfd[i].revents & POLLHUP) != 0;
			if ((np && hup) || pl_procid_gone(&who))
				done = 1; /* its number may be another's now */
		}
		if (o->interrupted && *o->interrupted)
			done = stopped = 1;
		if (o->duration > 0 && pl_now_s() - t0 >= o->duration)
			done = stopped = 1;
	}
	free(pfd);
	if (child > 0 && stopped) {
		stop(child, status);
		child = -1;
		st->stopped = 1;
	}
	for (long c = 0; c < ncpu; c++) /* what arrived while it ended */
		if (N->rings[c].base)
			pl_native_drain(N, &N->rings[c]);
	st->elapsed_s = pl_now_s() - t0;
	finish(N);
	st->cpu_s = cpu_now() - c0;
	if (N->oom)
		rc = PL_ENOMEM;
out:
	if (child > 0)
		stop(child, status);
	pl_launch_end(&L, status);
	pl_procid_close(&who);
	release(N);
	free(N);
	return rc;
}

/* ---- the symbolizer and unwinder for --mode mixed ---- */

struct pl_native_syms *pl_native_syms_new(struct pl_prof *prof, int lines)
{
	struct nat *N = calloc(1, sizeof(*N));
	if (!N)
		return NULL;
	N->own_o.lines = lines;
	N->o = &N->own_o;
	N->st = calloc(1, sizeof(*N->st));
	if (!N->st) {
		free(N);
		return NULL;
	}
	N->prof = prof;
	N->page = (size_t)sysconf(_SC_PAGESIZE);
	N->kernel_frame = N->unknown_frame = N->anon_frame = N->vdso_frame = -2;
	return (struct pl_native_syms *)N;
}

void pl_native_syms_free(struct pl_native_syms *s)
{
	struct nat *N = (struct nat *)s;
	if (!N)
		return;
	free(N->st);
	release(N);
	free(N);
}

static int is_entry(struct nat *N, struct nproc *p, uint64_t pc)
{
	const struct nmap *m = p ? pl_native_map_find(p, pc) : NULL;
	if (!m || m->file < 0)
		return 0;
	struct nfile *f = &N->files[m->file];
	if (pl_native_file_load(f) < 0)
		return 0;
	return pl_native_entry_fileaddr(N, m->file, pc - pl_native_map_bias(f, m));
}

/* A hash of the process's executable mappings (the lines of
 * /proc/PID/maps with x in their permissions): what the unwinder and the
 * symbols depend on. The heap's and the allocator's anonymous mappings
 * change all the time in a Python or PyTorch process, and hashing them
 * too threw the unwinder's modules away every few ticks (mixed mode at
 * 1 kHz delivered about half of it, re-reading libtorch's tables). */
static uint64_t maps_hash(pid_t pid)
{
	char path[64], buf[8192];
	snprintf(path, sizeof(path), "/proc/%d/maps", (int)pid);
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return 0;
	uint64_t h = 1469598103934665603ULL;
	ssize_t n;
	size_t total = 0, have = 0;
	char line[1024]; /* the line read so far (a longer one is cut) */
	while ((n = read(fd, buf, sizeof(buf))) > 0) {
		total += (size_t)n;
		for (ssize_t i = 0; i < n; i++) {
			if (buf[i] != '\n') {
				if (have < sizeof line)
					line[have++] = buf[i];
				continue;
			}
			/* "start-end perms ...": perms is the second field */
			const char *sp = memchr(line, ' ', have);
			if (sp && (size_t)(sp - line) + 4 < have && sp[3] == 'x')
				h = pl_fnv1a_bytes(h, line, have);
			have = 0;
		}
	}
	close(fd);
	/* nothing: a process that has exited (a zombie's maps are empty) is
	 * not one that unmapped everything: what was read before stands */
	return total ? h : 0;
}

void pl_native_syms_maps(struct pl_native_syms *s, pid_t pid)
{
	struct nat *N = (struct nat *)s;
	uint64_t h = maps_hash(pid);
	if (!h || h == N->maps_hash)
		return;
	struct nproc *p = pl_native_proc_get(N, pid, 1);
	if (!p)
		return;
	pl_native_proc_reset(p);
	pl_native_maps_from_proc(N, p);
	N->maps_hash = h;
}

void pl_native_syms_maps_text(struct pl_native_syms *s, pid_t pid, const char *text, size_t len)
{
	struct nat *N = (struct nat *)s;
	struct nproc *p = pl_native_proc_get(N, pid, 1);
	if (!p || !len)
		return;
	FILE *f = fmemopen((void *)text, len, "r");
	if (!f)
		return;
	pl_native_proc_reset(p);
	pl_native_maps_from(N, p, f);
	fclose(f);
}

size_t pl_native_unwind(struct pl_native_syms *s, pid_t pid, pid_t tid, const uint64_t regs[17],
			const uint8_t *stack, uint64_t len, uint64_t *pcs, size_t max)
{
	struct nat *N = (struct nat *)s;
	struct nproc *p = pl_native_proc_get(N, pid, 0);
	if (!p || max == 0)
		return 0;
	struct unw *u = &N->u;
	memcpy(u->regs, regs, sizeof(u->regs));
	u->tid = tid;
	u->sp = regs[7];
	u->stack = stack;
	u->stack_len = len;
	u->pcs = pcs;
	u->n = 0;
	u->max = max;
	if (pl_native_proc_dwfl(N, p) == 0)
		dwfl_getthread_frames(p->dwfl, tid, pl_native_frame_cb, u);
	if (u->n == 0) {
		pcs[0] = regs[16];
		u->n = 1;
	}
	return u->n;
}

size_t pl_native_pc_frames(struct pl_native_syms *s, pid_t pid, uint64_t pc, const uint32_t **ids,
			   enum pl_native_kind *kind)
{
	struct nat *N = (struct nat *)s;
	struct nproc *p = pl_native_proc_get(N, pid, 0);
	const struct nmap *m = p ? pl_native_map_find(p, pc) : NULL;
	*kind = PL_NATIVE_UNMAPPED;
	if (!m)
		return 0;
	*kind = PL_NATIVE_OTHER;
	if (m->file < 0) {
		long *which = m->file == VDSO_FILE ? &N->vdso_frame : &N->anon_frame;
		if (special(N, which,
			    m->file == VDSO_FILE ? "[vdso]"
						 : "[anonymous executable memory (JIT?)]") < 0)
			return 0;
		N->fids_one = (uint32_t)*which;
		*ids = &N->fids_one;
		return 1;
	}
	struct nfile *f = &N->files[m->file];
	pl_native_file_load(f);
	uint64_t addr = pc - pl_native_map_bias(f, m);
	size_t k = pl_native_frames_for(N, m->file, addr, ids);
	if (f->is_interp) {
		*kind = PL_NATIVE_INTERP;
		if (k &&
		    strcmp(N->prof->frames[(*ids)[k - 1]].name, "_PyEval_EvalFrameDefault") == 0)
			*kind = PL_NATIVE_EVAL;
	}
	return k;
}

int pl_native_is_entry(struct pl_native_syms *s, pid_t pid, uint64_t pc)
{
	struct nat *N = (struct nat *)s;
	return is_entry(N, pl_native_proc_get(N, pid, 0), pc);
}

size_t pl_native_splice(struct pl_native_syms *s, pid_t pid, const uint64_t *pcs, size_t n,
			const uint32_t *py, const uint8_t *entry, size_t npy, uint32_t *out,
			size_t cap, int *approx, int *unmatched)
{
	size_t depth = 0, k = 0, boundary = n;
	*approx = *unmatched = 0;
	if (npy) {
		int eval = 0;
		for (size_t i = 0; i < n && !eval; i++) {
			const uint32_t *ids;
			enum pl_native_kind kind;
			pl_native_pc_frames(s, pid, pcs[i], &ids, &kind);
			eval = kind == PL_NATIVE_EVAL;
			if (kind == PL_NATIVE_INTERP && boundary == n)
				boundary = i;
		}
		if (eval)
			boundary = n;
		else if (boundary < n)
			*approx = 1;
	}
	for (size_t i = 0; i < n && depth < cap; i++) {
		const uint32_t *ids;
		enum pl_native_kind kind;
		size_t m = pl_native_pc_frames(s, pid, pcs[i], &ids, &kind);
		if (kind == PL_NATIVE_UNMAPPED)
			break;
		if (i == boundary)
			for (; k < npy && depth < cap; k++)
				out[depth++] = py[k];
		if (kind == PL_NATIVE_EVAL && k < npy) {
			while (k < npy && depth < cap) {
				out[depth++] = py[k];
				if (entry[k++])
					break;
			}
			continue;
		}
		if ((kind == PL_NATIVE_INTERP || kind == PL_NATIVE_EVAL) && npy)
			continue; /* the interpreter's own code: its Python frames say it */
		for (size_t j = 0; j < m && depth < cap; j++)
			out[depth++] = ids[j];
	}
	if (k < npy)
		*unmatched = 1;
	for (; k < npy && depth < cap; k++)
		out[depth++] = py[k];
	return depth;
}
