/*
 * The native profiler's perf events: one sampling event per task and CPU,
 * opened with perf_event_open (the CPU clock by default, or a counter of
 * counters.h), one ring buffer per CPU that every task's events write
 * into, and the records read from them: SAMPLE (a stack, by frame-pointer
 * callchain or unwound from the user registers and stack it copies),
 * MMAP2, COMM (an exec), FORK, EXIT and LOST. Private to the native
 * profiler (native_int.h).
 */
#include "native_int.h"

#include <errno.h>
#include <linux/perf_event.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/sysmacros.h>
#include <unistd.h>
#if defined(__x86_64__)
#include <asm/perf_regs.h>
#endif

#include "counters.h"

#define RING_PAGES 1024 /* the most tried: 4 MiB per CPU */

/* ---- records ---- */

static void on_sample(struct nat *N, const struct perf_event_header *h)
{
	const uint8_t *p = (const uint8_t *)(h + 1), *end = (const uint8_t *)h + h->size;
#define TAKE(dst)                                                                                  \
	do {                                                                                       \
		if (p + sizeof(dst) > end)                                                         \
			return;                                                                    \
		memcpy(&(dst), p, sizeof(dst));                                                    \
		p += sizeof(dst);                                                                  \
	} while (0)
	uint64_t ip = 0, t = 0, nr = 0;
	uint32_t pid = 0, tid = 0;
	TAKE(ip);
	TAKE(pid);
	TAKE(tid);
	TAKE(t);
	N->st->samples++;
	struct nproc *proc = pl_native_proc_get(N, (pid_t)pid, 1);
	if (!proc)
		return;
	int in_kernel = (h->misc & PERF_RECORD_MISC_CPUMODE_MASK) == PERF_RECORD_MISC_KERNEL;
	if (in_kernel)
		N->st->kernel++;
	size_t n = 0;
	N->nkpcs = 0;
	if (N->sample_type & PERF_SAMPLE_CALLCHAIN) {
		TAKE(nr);
		const uint8_t *chain = p;
		if (p + nr * 8 > end)
			return;
		p += nr * 8;
		uint64_t ctx = PERF_CONTEXT_USER;
		for (uint64_t i = 0; i < nr && n < MAX_DEPTH; i++) {
			uint64_t v;
			memcpy(&v, chain + i * 8, 8);
			if (v >= (uint64_t)PERF_CONTEXT_MAX) {
				ctx = v;
				continue;
			}
			if (ctx == PERF_CONTEXT_KERNEL) {
				if (N->nkpcs < sizeof(N->kpcs) / sizeof(N->kpcs[0]))
					N->kpcs[N->nkpcs++] = v;
				continue;
			}
			if (ctx != PERF_CONTEXT_USER || N->st->unwind != PL_UNWIND_FP)
				continue;
			N->pcs[n] = n == 0 ? v : v - 1;
			n++;
		}
	}
#if defined(__x86_64__)
	if (N->sample_type & PERF_SAMPLE_REGS_USER) {
		uint64_t abi = 0, regs[32] = {0};
		TAKE(abi);
		if (abi != PERF_SAMPLE_REGS_ABI_NONE) {
			if (p + N->nregs * 8 > end)
				return;
			memcpy(regs, p, N->nregs * 8);
			p += N->nregs * 8;
		}
		uint64_t size = 0, dyn = 0;
		TAKE(size);
		const uint8_t *stack = p;
		if (size) {
			if (p + size + 8 > end)
				return;
			p += size;
			TAKE(dyn);
		}
		n = 0;
		if (abi != PERF_SAMPLE_REGS_ABI_NONE && pl_native_proc_dwfl(N, proc) == 0) {
			struct unw *u = &N->u;
			/* perf's order: ax bx cx dx si di bp sp ip r8..r15 */
			static const int to_dwarf[17] = {0,  3,	 2,  1,	 4,  5,	 6,  7, 9,
							 10, 11, 12, 13, 14, 15, 16, 8};
			for (int i = 0; i < 17; i++)
				u->regs[i] = regs[to_dwarf[i]];
			u->tid = (pid_t)tid;
			u->sp = regs[7];
			u->stack = stack;
			u->stack_len = dyn < size ? dyn : size;
			u->pcs = N->pcs;
			u->n = 0;
			u->max = MAX_DEPTH;
			dwfl_getthread_frames(proc->dwfl, (pid_t)tid, pl_native_frame_cb, u);
			n = u->n;
			if (n == 0) {
				N->pcs[0] = regs[8];
				n = 1;
			}
		}
	}
#endif
	(void)ip;
	(void)t;
	pl_native_add_stack(N, proc, (pid_t)tid, N->pcs, n, in_kernel);
#undef TAKE
}

/* a non-sample record's time: the last 8 bytes of its sample_id trailer
 * (sample_id_all with PERF_SAMPLE_TID | PERF_SAMPLE_TIME: pid, tid, time) */
static uint64_t record_time(const struct perf_event_header *h)
{
	uint64_t t = 0;
	if (h->size >= sizeof(*h) + 16)
		memcpy(&t, (const uint8_t *)h + h->size - 8, 8);
	return t;
}

static void on_record(struct nat *N, const struct perf_event_header *h)
{
	const uint8_t *body = (const uint8_t *)(h + 1);
	switch (h->type) {
	case PERF_RECORD_SAMPLE:
		on_sample(N, h);
		break;
	case PERF_RECORD_MMAP2: {
		struct {
			uint32_t pid, tid;
			uint64_t addr, len, pgoff;
			uint32_t maj, min;
			uint64_t ino, ino_generation;
			uint32_t prot, flags;
		} m;
		if (h->size < sizeof(*h) + sizeof(m) + 1)
			break;
		memcpy(&m, body, sizeof(m));
		const char *name = (const char *)body + sizeof(m);
		size_t room = h->size - sizeof(*h) - sizeof(m);
		if (!memchr(name, '\0', room) || !(m.prot & PROT_EXEC))
			break;
		struct nproc *p = pl_native_proc_get(N, (pid_t)m.pid, 1);
		if (!p)
			break;
		int fi = name[0] == '/'		       ? pl_native_proc_file_index(N, p, name)
			 : strcmp(name, "[vdso]") == 0 ? pl_native_vdso_file(N, m.len)
						       : NO_FILE;
		/* the file at that path now is not the one mapped (replaced since,
		 * or another mount namespace): its symbols and unwind tables would
		 * be another program's, so none are used */
		struct stat sb;
		if (fi >= 0 && m.ino &&
		    (stat(N->files[fi].path, &sb) != 0 || (uint64_t)sb.st_ino != m.ino ||
		     major(sb.st_dev) != m.maj || minor(sb.st_dev) != m.min)) {
			char stale[4200];
			snprintf(stale, sizeof(stale), "%s (not the mapped file)",
				 N->files[fi].show);
			fi = pl_native_file_index(N, stale);
		}
		uint64_t t = record_time(h);
		if (t && t < p->exec_t)
			break; /* the program before the latest exec, read late */
		pl_native_map_add(N, p, m.addr, m.len, m.pgoff, fi, t, 1);
		break;
	}
	case PERF_RECORD_COMM: {
		uint32_t pid, tid;
		if (h->size < sizeof(*h) + 9)
			break;
		memcpy(&pid, body, 4);
		memcpy(&tid, body + 4, 4);
		struct nproc *p = pl_native_proc_get(N, (pid_t)pid, 1);
		if (!p)
			break;
		if (h->misc & PERF_RECORD_MISC_COMM_EXEC) {
			/* a new program: its maps follow (or came already) */
			uint64_t t = record_time(h);
			if (!t || t >= p->exec_t) {
				pl_native_proc_reset_after(p, t ? t : UINT64_MAX);
				p->exec_t = t;
			}
		}
		const char *c = (const char *)body + 8;
		size_t room = h->size - sizeof(*h) - 8;
		if (pid == tid && memchr(c, '\0', room)) /* a thread's name is not the process's */
			snprintf(p->comm, sizeof(p->comm), "%s", c);
		break;
	}
	case PERF_RECORD_FORK: {
		uint32_t v[4]; /* pid ppid tid ptid */
		if (h->size < sizeof(*h) + sizeof(v))
			break;
		memcpy(v, body, sizeof(v));
		if (v[0] == v[1])
			break; /* a thread: it shares its process's maps */
		struct nproc *parent = pl_native_proc_get(N, (pid_t)v[1], 0);
		struct nproc *child = pl_native_proc_get(N, (pid_t)v[0], 1);
		parent = pl_native_proc_get(N, (pid_t)v[1],
					    0); /* pl_native_proc_get may move the array */
		if (!child || !parent || child == parent)
			break;
		/* the child's exec read first (the rings are drained one CPU
		 * after the other): its maps are its new program's, not a
		 * copy of its parent's */
		uint64_t t = record_time(h);
		if (t && t < child->exec_t)
			break;
		snprintf(child->comm, sizeof(child->comm), "%s", parent->comm);
		if (child->n == 0 && parent->n) { /* as the parent's, none reported yet */
			struct nmap *g = malloc(parent->n * sizeof(*g));
			if (!g) {
				N->oom = 1;
				break;
			}
			memcpy(g, parent->maps, parent->n * sizeof(*g));
			for (size_t i = 0; i < parent->n; i++)
				g[i].reported = 0;
			free(child->maps);
			child->maps = g;
			child->n = child->cap = parent->n;
			child->dirty = 1;
			break;
		}
		for (size_t i = 0; i < parent->n; i++)
			pl_native_map_add(N, child, parent->maps[i].start,
					  parent->maps[i].end - parent->maps[i].start,
					  parent->maps[i].pgoff, parent->maps[i].file,
					  parent->maps[i].t, parent->maps[i].segs);
		break;
	}
	case PERF_RECORD_EXIT: {
		uint32_t v[4];
		if (h->size < sizeof(*h) + sizeof(v))
			break;
		memcpy(v, body, sizeof(v));
		struct nproc *p = pl_native_proc_get(N, (pid_t)v[0], 0);
		if (p && v[0] == v[2] && p->dwfl) { /* the process is gone: free its unwinder */
			dwfl_end(p->dwfl);
			p->dwfl = NULL;
			p->attached = 0;
		}
		break;
	}
	case PERF_RECORD_LOST: {
		uint64_t v[2]; /* id, lost */
		if (h->size >= sizeof(*h) + sizeof(v)) {
			memcpy(v, body, sizeof(v));
			N->st->lost += v[1];
		}
		break;
	}
	default:
		break;
	}
}

void pl_native_drain(struct nat *N, struct ring *r)
{
	struct perf_event_mmap_page *meta = r->base;
	uint8_t *data = (uint8_t *)r->base + N->page;
	uint64_t head = __atomic_load_n(&meta->data_head, __ATOMIC_ACQUIRE);
	uint64_t tail = meta->data_tail;
	while (tail < head && !N->oom) {
		size_t at = (size_t)(tail % r->size);
		struct perf_event_header hdr;
		if (at + sizeof(hdr) <= r->size) {
			memcpy(&hdr, data + at, sizeof(hdr));
		} else {
			size_t first = r->size - at;
			memcpy(&hdr, data + at, first);
			memcpy((uint8_t *)&hdr + first, data, sizeof(hdr) - first);
		}
		if (hdr.size < sizeof(hdr) || tail + hdr.size > head)
			break;
		const struct perf_event_header *rec;
		if (at + hdr.size <= r->size) {
			rec = (const struct perf_event_header *)(data + at);
		} else {
			size_t first = r->size - at;
			memcpy(N->scratch, data + at, first);
			memcpy(N->scratch + first, data, hdr.size - first);
			rec = (const struct perf_event_header *)N->scratch;
		}
		on_record(N, rec);
		tail += hdr.size;
	}
	__atomic_store_n(&meta->data_tail, tail, __ATOMIC_RELEASE);
}

/* ---- events ---- */

static long perf_open(struct perf_event_attr *a, pid_t pid, int cpu, int group)
{
	return syscall(SYS_perf_event_open, a, pid, cpu, group, PERF_FLAG_FD_CLOEXEC);
}

static int paranoid(void)
{
	FILE *f = fopen("/proc/sys/kernel/perf_event_paranoid", "r");
	int v = 2;
	if (f) {
		if (fscanf(f, "%d", &v) != 1)
			v = 2;
		fclose(f);
	}
	return v;
}

static int open_error(int e, pid_t pid, struct pl_error *err)
{
	if (e == EACCES || e == EPERM)
		return pl_error_set(err, PL_EINPUT,
				    "perf_event_open: %s for pid %d (kernel.perf_event_paranoid is "
				    "%d: sampling your own processes needs 2 or lower, another "
				    "user's needs root or CAP_PERFMON and ptrace rights)",
				    strerror(e), (int)pid, paranoid());
	if (e == ESRCH)
		return pl_error_set(err, PL_EINPUT, "no process with PID %d", (int)pid);
	if (e == ENOSYS)
		return pl_error_set(err, PL_EINPUT,
				    "perf_event_open: %s (this kernel has no perf events for "
				    "sampling: CONFIG_PERF_EVENTS)",
				    strerror(e));
	if (e == ENOENT || e == ENODEV || e == EOPNOTSUPP)
		return pl_error_set(
		    err, PL_EINPUT,
		    "perf_event_open: %s: this machine cannot sample that event (a "
		    "hardware counter on a VM without a PMU?); the default CPU clock "
		    "works everywhere",
		    strerror(e));
	return pl_error_set(err, PL_ESYS, "perf_event_open: %s", strerror(e));
}

static int add_fd(struct nat *N, int fd)
{
	if (N->nfds == N->capfds) {
		size_t cap = N->capfds ? N->capfds * 2 : 16;
		int *g = realloc(N->fds, cap * sizeof(*g));
		if (!g)
			return -1;
		N->fds = g;
		N->capfds = cap;
	}
	N->fds[N->nfds++] = fd;
	return 0;
}

/* Open the sampling event for one task on every CPU; the first task's
 * events own the rings, later ones write into them. */
int pl_native_open_task(struct nat *N, struct perf_event_attr *a, pid_t pid, int ncpu,
			struct pl_error *err)
{
	for (int c = 0; c < ncpu; c++) {
		long fd = perf_open(a, pid, c, -1);
		if (fd < 0 && (errno == EACCES || errno == EPERM) && N->o->kernel)
			return pl_error_set(
			    err, PL_EINPUT,
			    "--kernel: perf_event_open: %s (kernel call chains need "
			    "kernel.perf_event_paranoid 1 or lower, root or "
			    "CAP_PERFMON; it is %d)",
			    strerror(errno), paranoid());
		if (fd < 0 && (errno == EACCES || errno == EPERM) && !a->exclude_kernel) {
			a->exclude_kernel = 1; /* paranoid 2: user space only */
			N->st->kernel_sampled = 0;
			fd = perf_open(a, pid, c, -1);
		}
		if (fd < 0) {
			int e = errno;
			char path[64], on[8] = "1";
			snprintf(path, sizeof(path), "/sys/devices/system/cpu/cpu%d/online", c);
			FILE *f = fopen(path, "r");
			if (f) {
				if (!fgets(on, sizeof(on), f))
					on[0] = '1';
				fclose(f);
			}
			if ((e == ENODEV || e == EINVAL) && on[0] == '0')
				continue; /* an offline CPU */
			if (e == EINVAL)
				return pl_error_set(err, PL_EINPUT,
						    "perf_event_open: %s (is --rate above "
						    "kernel.perf_event_max_sample_rate?)",
						    strerror(e));
			return open_error(e, pid, err);
		}
		if (add_fd(N, (int)fd) < 0) {
			close((int)fd);
			return PL_ENOMEM;
		}
		if ((size_t)c < N->nrings && N->rings[c].fd >= 0) {
			if (ioctl((int)fd, PERF_EVENT_IOC_SET_OUTPUT, N->rings[c].fd) != 0)
				return pl_error_set(err, PL_ESYS, "PERF_EVENT_IOC_SET_OUTPUT: %s",
						    strerror(errno));
			continue;
		}
		/* 4 MiB per CPU where allowed (a DWARF sample is about 17 KiB), less
		 * where perf_event_mlock_kb says so */
		void *base = MAP_FAILED;
		size_t pages = RING_PAGES;
		for (; pages >= 16; pages /= 2) {
			base = mmap(NULL, (pages + 1) * N->page, PROT_READ | PROT_WRITE, MAP_SHARED,
				    (int)fd, 0);
			if (base != MAP_FAILED || errno != EPERM)
				break;
		}
		if (base == MAP_FAILED)
			return pl_error_set(err, PL_EINPUT,
					    "cannot map the sample buffer (%s): raise "
					    "kernel.perf_event_mlock_kb or ulimit -l",
					    strerror(errno));
		N->rings[c] = (struct ring){(int)fd, base, pages * N->page};
	}
	return PL_OK;
}

void pl_native_init_attr(struct nat *N, struct perf_event_attr *a, int launched)
{
	memset(a, 0, sizeof(*a));
	a->size = sizeof(*a);
	a->type = PERF_TYPE_SOFTWARE;
	a->config = PERF_COUNT_SW_CPU_CLOCK;
	a->sample_period = (uint64_t)(1e9 / N->o->rate);
	if (N->o->event >= 0) {
		const struct pl_counter_def *d = pl_counter_def(N->o->event);
		a->type = d->type;
		a->config = d->config;
		if (d->type == PERF_TYPE_SOFTWARE && d->config == PERF_COUNT_SW_TASK_CLOCK) {
			/* nanoseconds, like the CPU clock */
		} else if (d->type == PERF_TYPE_SOFTWARE) {
			a->sample_period = 1; /* page faults, switches, migrations: each one */
		} else {
			a->freq = 1; /* hardware counts: about --rate samples a second */
			a->sample_freq = (uint64_t)N->o->rate;
		}
	}
	a->sample_type = PERF_SAMPLE_IP | PERF_SAMPLE_TID | PERF_SAMPLE_TIME;
	a->disabled = launched;
	a->enable_on_exec = launched;
	a->inherit = 1;
	a->mmap = 1;
	a->mmap2 = 1;
	a->comm = 1;
	a->comm_exec = 1;
	a->task = 1;
	a->sample_id_all = 1;
	a->exclude_hv = 1;
	a->exclude_callchain_kernel = 1;
	a->wakeup_watermark = 64 * N->page;
	a->watermark = 1;
	if (N->o->kernel) {
		/* the kernel's part of the chain; the user part as --unwind says */
		a->sample_type |= PERF_SAMPLE_CALLCHAIN;
		a->exclude_callchain_kernel = 0;
		a->exclude_callchain_user = N->st->unwind != PL_UNWIND_FP;
		a->sample_max_stack = 127;
	}
	if (N->st->unwind == PL_UNWIND_FP) {
		a->sample_type |= PERF_SAMPLE_CALLCHAIN;
		/* at most the kernel's limit (perf_event_max_stack, 127 by default) */
		int max = 127;
		FILE *f = fopen("/proc/sys/kernel/perf_event_max_stack", "r");
		if (f) {
			if (fscanf(f, "%d", &max) != 1)
				max = 127;
			fclose(f);
		}
		a->sample_max_stack = (uint16_t)(max > 0 && max < 65535 ? max : 127);
	} else {
#if defined(__x86_64__)
		a->sample_type |= PERF_SAMPLE_REGS_USER | PERF_SAMPLE_STACK_USER;
		a->sample_regs_user = (1ULL << PERF_REG_X86_AX) | (1ULL << PERF_REG_X86_BX) |
				      (1ULL << PERF_REG_X86_CX) | (1ULL << PERF_REG_X86_DX) |
				      (1ULL << PERF_REG_X86_SI) | (1ULL << PERF_REG_X86_DI) |
				      (1ULL << PERF_REG_X86_BP) | (1ULL << PERF_REG_X86_SP) |
				      (1ULL << PERF_REG_X86_IP) | (0xffULL << PERF_REG_X86_R8);
		a->sample_stack_user = N->o->stack_bytes ? N->o->stack_bytes : 16384;
		N->nregs = 17;
#endif
	}
	N->sample_type = a->sample_type;
}
