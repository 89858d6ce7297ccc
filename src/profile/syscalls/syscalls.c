/*
 * profile --syscalls: see syscalls.h.
 */
#include "syscalls.h"
#include "tracefs.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <linux/perf_event.h>
#include <math.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/mount.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "grow.h"
#include "render.h"
#include "launch.h"
#include "native.h"
#include "procid.h"
#include "pystack.h"

extern const char *const pl_syscall_names[];
extern const int pl_syscall_names_n;

const char *pl_syscall_name(int nr)
{
	return nr >= 0 && nr < pl_syscall_names_n && pl_syscall_names[nr] ? pl_syscall_names[nr]
									   : NULL;
}

/* what a call is to the tracer: the read and write family (fd in
 * args[0], bytes in the return value), opens, closes, syncs, clones */
enum { K_NONE, K_READ, K_WRITE, K_OPEN, K_CLOSE, K_SYNC, K_CLONE };
static int kind_of(const char *name)
{
	static const struct {
		const char *name;
		int kind;
	} k[] = {{"read", K_READ},	   {"pread64", K_READ},	     {"readv", K_READ},
		 {"preadv", K_READ},	   {"preadv2", K_READ},	     {"recvfrom", K_READ},
		 {"recvmsg", K_READ},	   {"write", K_WRITE},	     {"pwrite64", K_WRITE},
		 {"writev", K_WRITE},	   {"pwritev", K_WRITE},     {"pwritev2", K_WRITE},
		 {"sendto", K_WRITE},	   {"sendmsg", K_WRITE},     {"openat", K_OPEN},
		 {"open", K_OPEN},	   {"creat", K_OPEN},	     {"openat2", K_OPEN},
		 {"close", K_CLOSE},	   {"fsync", K_SYNC},	     {"fdatasync", K_SYNC},
		 {"clone", K_CLONE},	   {"clone3", K_CLONE},	     {"fork", K_CLONE},
		 {"vfork", K_CLONE}};
	for (size_t i = 0; name && i < sizeof k / sizeof *k; i++)
		if (strcmp(name, k[i].name) == 0)
			return k[i].kind;
	return K_NONE;
}

/* by call number, worked out once */
static unsigned char kinds[PL_SYS_MAX];
static void kinds_init(void)
{
	for (int i = 0; i < PL_SYS_MAX; i++)
		kinds[i] = (unsigned char)kind_of(pl_syscall_name(i));
}

/* ---- histogram: 4 buckets per power of two of ns ---- */

static int bucket(uint64_t ns)
{
	if (ns < 4)
		return (int)ns;
	int e = 63 - __builtin_clzll(ns);		/* 2^e <= ns */
	int sub = (int)((ns >> (e - 2)) & 3);		/* the next two bits */
	int b = 4 * (e - 1) + sub;
	return b < PL_SYS_HIST ? b : PL_SYS_HIST - 1;
}

static double bucket_mid(int b)
{
	if (b < 4)
		return b;
	int e = b / 4 + 1, sub = b % 4;
	double lo = ldexp(1.0, e) * (1 + sub / 4.0);
	return lo * (1 + 1 / 8.0); /* the middle of a quarter */
}

double pl_sys_p99(const struct pl_sys_stat *st)
{
	if (!st->timed)
		return 0;
	uint64_t want = (uint64_t)ceil(0.99 * (double)st->timed), seen = 0;
	for (int b = 0; b < PL_SYS_HIST; b++) {
		seen += st->hist[b];
		if (seen >= want) {
			double v = bucket_mid(b);
			return (v > (double)st->max_ns ? (double)st->max_ns : v) * 1e-9;
		}
	}
	return (double)st->max_ns * 1e-9;
}

/* ---- the trace ---- */

static uint64_t mono_ns(void);

/* a traced thread's user registers and stack where it left its CPU */
struct blk {
	uint64_t regs[17]; /* native.c's order: rax..rsp, r8..r15, rip */
	uint32_t len;
	uint8_t stack[];
};

struct ev {
	uint64_t t;
	uint32_t pid, tid;
	int exit; /* 0 enter, 1 exit, 2 a switch (blk) */
	struct blk *blk;
	long id;
	long ret;     /* exit */
	uint64_t arg0; /* enter */
};

/* a thread's Python stack, read while it waited in a call */
struct pyst {
	uint64_t t; /* when it was read (mono_ns) */
	size_t n;
	uint32_t *ids;	/* frame ids in the profile, leaf first */
	uint8_t *entry; /* the outermost frame of its evaluation call */
};

static void pyst_free(struct pyst *y)
{
	if (y) {
		free(y->ids);
		free(y->entry);
		free(y);
	}
}

struct pend { /* a thread inside a call */
	uint32_t tid;
	long id;
	uint64_t t, arg0;
	int used;
	struct blk *blk; /* where it blocked in this call */
	uint32_t blk_pid; /* its process */
	struct pyst *py; /* its Python frames meanwhile (n 0: none read) */
};

#define PY_SEEN 16 /* the processes asked whether they are CPython */

#define MAPS_SEEN 32

struct tracer {
	struct pl_syscalls *s;
	int *ringfd; /* per CPU, the fd its ring is mapped from (-1 none) */
	int *fds;
	size_t nfds;
	void **rings;
	size_t ring_bytes, page;
	long ncpu;
	struct ev *evs;
	size_t nev, capev;
	struct pend *pend;
	size_t cappend, npend;
	int oom;
	/* the switch tracepoint's rings (per CPU) and the unwinder */
	int *sringfd;
	void **srings;
	size_t sring_bytes;
	uint8_t *srec; /* one record, unwrapped */
	struct pl_native_syms *syms;
	struct {
		uint32_t pid;
		uint64_t t; /* its maps last read (mono_ns) */
	} maps_seen[MAPS_SEEN];
	struct {
		uint32_t pid;
		struct pl_pystack *st; /* NULL: not a CPython perfloop reads */
	} py_seen[PY_SEEN];
	size_t npy_seen;
	/* the thread whose Python stack is being read, and what was read */
	uint32_t py_tid;
	struct pyst *py_got;
};

/* ev: "group/name" */
static int push_ev(struct tracer *T, const struct ev *e)
{
	if (pl_grow((void **)&T->evs, &T->capev, T->nev + 1, sizeof *T->evs, 65536) < 0)
		return -1;
	T->evs[T->nev++] = *e;
	return 0;
}

/* The next whole record of a ring's data (bytes long) at *tail, before
 * head: its header in *h, its first cap bytes unwrapped into rec (*n of
 * them); *tail moves past it. 0 when there is none. */
static int ring_next(const uint8_t *data, size_t bytes, uint64_t *tail, uint64_t head,
		     struct perf_event_header *h, uint8_t *rec, size_t cap, size_t *n)
{
	if (*tail >= head)
		return 0;
	size_t at = (size_t)(*tail % bytes);
	for (size_t i = 0; i < sizeof *h; i++)
		((uint8_t *)h)[i] = data[(at + i) % bytes];
	if (h->size < sizeof *h || *tail + h->size > head)
		return 0;
	*n = h->size < cap ? h->size : cap;
	for (size_t i = 0; i < *n; i++)
		rec[i] = data[(at + i) % bytes];
	*tail += h->size;
	return 1;
}

/* records of one ring: PERF_SAMPLE_TID | TIME | RAW */
static void drain(struct tracer *T, void *base, int enter_id)
{
	struct perf_event_mmap_page *meta = base;
	uint8_t *data = (uint8_t *)base + T->page;
	uint64_t head = __atomic_load_n(&meta->data_head, __ATOMIC_ACQUIRE);
	uint64_t tail = meta->data_tail;
	uint8_t rec[512];
	struct perf_event_header h;
	size_t n;
	while (!T->oom && ring_next(data, T->ring_bytes, &tail, head, &h, rec, sizeof rec, &n)) {
		if (h.type == PERF_RECORD_LOST) {
			uint64_t lost;
			memcpy(&lost, rec + sizeof h + 8, 8);
			T->s->lost += lost;
			continue;
		}
		if (h.type != PERF_RECORD_SAMPLE || n < sizeof h + 8 + 8 + 4 + 24)
			continue;
		const uint8_t *p = rec + sizeof h;
		struct ev e = {0};
		uint32_t rawsz;
		memcpy(&e.pid, p, 4);
		memcpy(&e.tid, p + 4, 4);
		memcpy(&e.t, p + 8, 8);
		memcpy(&rawsz, p + 16, 4);
		const uint8_t *raw = p + 20;
		if (rawsz < 24 || raw + rawsz > rec + n)
			continue;
		uint16_t type;
		memcpy(&type, raw, 2);
		memcpy(&e.id, raw + 8, 8);
		e.exit = type != enter_id;
		if (e.exit)
			memcpy(&e.ret, raw + 16, 8);
		else
			memcpy(&e.arg0, raw + 16, 8);
		T->s->events++;
		if (push_ev(T, &e) < 0)
			T->oom = 1;
	}
	__atomic_store_n(&meta->data_tail, tail, __ATOMIC_RELEASE);
}

#if defined(__x86_64__)
/* PERF_SAMPLE_REGS_USER: ax bx cx dx si di bp sp ip (bits 0-8), r8-r15
 * (16-23), delivered in bit order */
#define STACK_REGS (0x1ffull | 0xffull << 16)
#define SREC_MAX (PL_SYS_STACK + 512)

/* records of one switch ring: TID | TIME | REGS_USER | STACK_USER */
static void drain_stacks(struct tracer *T, void *base)
{
	struct perf_event_mmap_page *meta = base;
	uint8_t *data = (uint8_t *)base + T->page;
	uint64_t head = __atomic_load_n(&meta->data_head, __ATOMIC_ACQUIRE);
	uint64_t tail = meta->data_tail;
	uint8_t *rec = T->srec;
	struct perf_event_header h;
	size_t n;
	while (!T->oom && ring_next(data, T->sring_bytes, &tail, head, &h, rec, SREC_MAX, &n)) {
		if (n < h.size)
			continue; /* longer than any record asked for */
		if (h.type == PERF_RECORD_LOST) {
			uint64_t lost;
			memcpy(&lost, rec + sizeof h + 8, 8);
			T->s->switches_lost += lost;
			continue;
		}
		const uint8_t *p = rec + sizeof h, *end = rec + h.size;
		if (h.type != PERF_RECORD_SAMPLE || end - p < 8 + 8 + 8)
			continue;
		struct ev e = {0};
		memcpy(&e.pid, p, 4);
		memcpy(&e.tid, p + 4, 4);
		memcpy(&e.t, p + 8, 8);
		uint64_t abi, r[17], size, dyn = 0;
		memcpy(&abi, p + 16, 8);
		p += 24;
		if (!abi || end - p < (ptrdiff_t)sizeof r + 8)
			continue; /* no user registers (a kernel thread) */
		memcpy(r, p, sizeof r);
		p += sizeof r;
		memcpy(&size, p, 8);
		p += 8;
		if (size > (uint64_t)(end - p) || (size && end - p < (ptrdiff_t)(size + 8)))
			continue;
		if (size)
			memcpy(&dyn, p + size, 8);
		if (dyn > size)
			dyn = size;
		struct blk *b = malloc(sizeof *b + dyn);
		if (!b) {
			T->oom = 1;
			break;
		}
		/* ax bx cx dx si di bp sp ip r8..r15 -> rax..rsp r8..r15 rip */
		memcpy(b->regs, r, 8 * sizeof *r);
		memcpy(b->regs + 8, r + 9, 8 * sizeof *r);
		b->regs[16] = r[8];
		b->len = (uint32_t)dyn;
		memcpy(b->stack, p, dyn);
		e.exit = 2;
		e.blk = b;
		T->s->switches++;
		if (push_ev(T, &e) < 0) {
			free(b);
			T->oom = 1;
		}
	}
	__atomic_store_n(&meta->data_tail, tail, __ATOMIC_RELEASE);
}

/* A call of ns nanoseconds ended: kept among the slowest, with its stack
 * copy (*b, taken), unwound at the end (unwinding loads the program's
 * DWARF: done while the calls are counted, it delayed the counting past
 * the program's exit, when its descriptors' paths could no longer be
 * read). The maps were read when the copy was drained. */
static void slow_consider(struct tracer *T, long id, uint64_t ns, uint32_t pid, uint32_t tid,
			  struct blk **b, struct pyst **py)
{
	struct pl_syscalls *s = T->s;
	size_t at = s->nslow;
	if (at == PL_SYS_SLOW) {
		if (ns <= s->slow[PL_SYS_SLOW - 1].ns)
			return;
		at = PL_SYS_SLOW - 1;
		free(s->slow[at].copy);
		pyst_free(s->slow[at].py);
	} else {
		s->nslow++;
	}
	while (at > 0 && s->slow[at - 1].ns < ns) {
		s->slow[at] = s->slow[at - 1];
		at--;
	}
	s->slow[at] = (struct pl_sys_slow){(int)id, (int)pid, (int)tid, ns, NULL, 0, *b, *py};
	*b = NULL;
	*py = NULL;
}

/* The slowest calls' stacks, unwound and symbolized. */
static void slow_unwind(struct tracer *T)
{
	struct pl_syscalls *s = T->s;
	for (size_t i = 0; i < s->nslow; i++) {
		struct pl_sys_slow *w = &s->slow[i];
		struct blk *b = w->copy;
		if (!b || !T->syms)
			continue;
		uint64_t pcs[128];
		size_t n = pl_native_unwind(T->syms, (pid_t)w->pid, (pid_t)w->tid, b->regs, b->stack,
					    b->len, pcs, sizeof pcs / sizeof *pcs);
		uint32_t ids[512 + PL_PYSTACK_MAX_DEPTH];
		size_t d = 0;
		struct pyst *y = w->py;
		if (y && y->n) { /* the Python frames where the interpreter ran them */
			int approx = 0, unmatched = 0;
			d = pl_native_splice(T->syms, (pid_t)w->pid, pcs, n, y->ids, y->entry, y->n,
					     ids, sizeof ids / sizeof *ids, &approx, &unmatched);
			n = 0;
		}
		for (size_t k = 0; k < n; k++) {
			const uint32_t *fid;
			enum pl_native_kind kind;
			size_t m = pl_native_pc_frames(T->syms, (pid_t)w->pid, pcs[k], &fid, &kind);
			if (kind == PL_NATIVE_UNMAPPED)
				break;
			for (size_t j = 0; j < m && d < sizeof ids / sizeof *ids; j++)
				ids[d++] = fid[j];
		}
		if (d && (w->frames = malloc(d * sizeof *ids))) {
			memcpy(w->frames, ids, d * sizeof *ids);
			w->depth = d;
		}
		free(w->copy);
		w->copy = NULL;
		pyst_free(w->py);
		w->py = NULL;
	}
}

static void on_py_thread(void *arg, const struct pl_pythread *t)
{
	struct tracer *T = arg;
	if (t->tid != T->py_tid || T->py_got || !t->depth)
		return;
	struct pyst *y = calloc(1, sizeof *y);
	if (!y || !(y->ids = malloc(t->depth * sizeof *y->ids)) || !(y->entry = malloc(t->depth))) {
		pyst_free(y);
		return;
	}
	for (size_t i = 0; i < t->depth; i++) {
		const struct pl_pyframe *f = &t->frames[i];
		/* the line it waits at: where the call is */
		long id = f->code ? pl_prof_frame(&T->s->prof, f->code->name, f->code->file,
						  f->line, f->code->firstline, 0)
				  : -1;
		if (id < 0)
			continue;
		y->ids[y->n] = (uint32_t)id;
		y->entry[y->n++] = (uint8_t)f->entry;
	}
	y->t = mono_ns();
	T->py_got = y;
}

/* The Python stack of thread tid of pid as it is now (NULL: not a CPython
 * program, or not read). */
static struct pyst *py_stack_now(struct tracer *T, uint32_t pid, uint32_t tid)
{
	size_t k = 0;
	while (k < T->npy_seen && T->py_seen[k].pid != pid)
		k++;
	if (k == T->npy_seen) {
		if (k == PY_SEEN)
			return NULL; /* asked of enough processes */
		struct pl_error ignored = {{0}};
		T->py_seen[k].pid = pid;
		if (pl_pystack_open((pid_t)pid, &T->py_seen[k].st, &ignored) < 0)
			T->py_seen[k].st = NULL;
		T->npy_seen++;
	}
	if (!T->py_seen[k].st)
		return NULL;
	struct pl_pysample_stats ss = {0};
	T->py_tid = tid;
	T->py_got = NULL;
	pl_pystack_sample(T->py_seen[k].st, PL_PYSAMPLE_IDLE, on_py_thread, T, &ss);
	struct pyst *y = T->py_got;
	T->py_got = NULL;
	return y;
}
/* Each thread that has waited in one call for a millisecond or more
 * (a stack copied where it left its CPU), its Python stack read while it
 * still waits (once a call). */
static void py_waiting(struct tracer *T, uint64_t now)
{
	for (size_t i = 0; i < T->cappend; i++) {
		struct pend *p = &T->pend[i];
		if (!p->used || p->id < 0 || !p->blk || p->py || now < p->t + 1000000u)
			continue;
		p->py = py_stack_now(T, p->blk_pid, p->tid);
		if (!p->py) /* not Python (or unreadable): asked once a call */
			p->py = calloc(1, sizeof *p->py);
	}
}

static void py_close(struct tracer *T)
{
	for (size_t k = 0; k < T->npy_seen; k++)
		pl_pystack_close(T->py_seen[k].st);
	T->npy_seen = 0;
}
#else
static void slow_consider(struct tracer *T, long id, uint64_t ns, uint32_t pid, uint32_t tid,
			  struct blk **b, struct pyst **py)
{
	(void)T, (void)id, (void)ns, (void)pid, (void)tid, (void)b, (void)py;
}

static void slow_unwind(struct tracer *T) { (void)T; }
static void py_waiting(struct tracer *T, uint64_t now) { (void)T, (void)now; }
static void py_close(struct tracer *T) { (void)T; }
#endif

static int cmp_ev(const void *a, const void *b)
{
	const struct ev *x = a, *y = b;
	return x->t < y->t ? -1 : x->t > y->t ? 1 : x->exit - y->exit;
}

static struct pend *pend_slot(struct tracer *T, uint32_t tid, int create)
{
	if (create && (T->npend + 1) * 2 > T->cappend) {
		size_t cap = T->cappend ? T->cappend * 2 : 256;
		struct pend *g = calloc(cap, sizeof(*g));
		if (!g)
			return NULL;
		for (size_t i = 0; i < T->cappend; i++)
			if (T->pend[i].used) {
				size_t k = (T->pend[i].tid * 2654435761u) & (cap - 1);
				while (g[k].used)
					k = (k + 1) & (cap - 1);
				g[k] = T->pend[i];
			}
		free(T->pend);
		T->pend = g;
		T->cappend = cap;
	}
	if (!T->cappend)
		return NULL;
	size_t k = (tid * 2654435761u) & (T->cappend - 1);
	while (T->pend[k].used) {
		if (T->pend[k].tid == tid)
			return &T->pend[k];
		k = (k + 1) & (T->cappend - 1);
	}
	if (!create)
		return NULL;
	T->pend[k].used = 1;
	T->pend[k].tid = tid;
	T->npend++;
	return &T->pend[k];
}

/* the live entry of (pid, fd), or a new one (an inherited descriptor,
 * stdin or stdout, has no open of its own) */
static struct pl_sys_file *file_for(struct pl_syscalls *s, int pid, int fd, int fresh)
{
	for (size_t i = s->nfiles; !fresh && i-- > 0;)
		if (s->files[i].pid == pid && s->files[i].fd == fd)
			return &s->files[i];
	for (size_t i = s->nfiles; fresh && i-- > 0;) /* its last holder is retired */
		if (s->files[i].pid == pid && s->files[i].fd == fd)
			s->files[i].fd = -1 - fd;
	if (pl_grow((void **)&s->files, &s->capfiles, s->nfiles + 1, sizeof *s->files, 64) < 0)
		return NULL;
	struct pl_sys_file *f = &s->files[s->nfiles++];
	memset(f, 0, sizeof(*f));
	f->pid = pid;
	f->fd = fd;
	return f;
}

/* After a batch: the paths of descriptors still open (a descriptor closed
 * in the batch had its number reused, or soon will: its path is not read
 * from /proc, where another file may hold it now). */
static void resolve_paths(struct pl_syscalls *s)
{
	for (size_t i = 0; i < s->nfiles; i++) {
		struct pl_sys_file *f = &s->files[i];
		if (f->path[0])
			continue;
		if (f->fd < 0) {
			snprintf(f->path, sizeof f->path,
				 "fd %d (closed before perfloop read its path)", -1 - f->fd);
			f->unknown = 1;
			continue;
		}
		char link[64];
		snprintf(link, sizeof link, "/proc/%d/fd/%d", f->pid, f->fd);
		ssize_t n = readlink(link, f->path, sizeof f->path - 1);
		if (n > 0) {
			f->path[n] = '\0';
		} else {
			snprintf(f->path, sizeof f->path,
				 "fd %d (closed before perfloop read its path)", f->fd);
			f->unknown = 1;
		}
	}
}

/* events up to the watermark, in time order: a call's entry and exit can
 * be in two CPUs' rings (the thread migrated while it blocked) */
static void process(struct tracer *T, uint64_t wm)
{
	if (!T->nev)
		return;
	qsort(T->evs, T->nev, sizeof(*T->evs), cmp_ev);
	size_t k = 0;
	struct pl_syscalls *s = T->s;
	for (; k < T->nev && T->evs[k].t <= wm; k++) {
		struct ev *e = &T->evs[k];
		if (e->exit == 2) { /* left its CPU: inside a call, that call's stack */
			struct pend *p = pend_slot(T, e->tid, 0);
			if (p && p->used && p->id >= 0 && !p->blk) {
				p->blk = e->blk;
				p->blk_pid = e->pid;
			} else
				free(e->blk);
			e->blk = NULL;
			continue;
		}
		if (e->id < 0 || e->id >= PL_SYS_MAX)
			continue;
		if (!e->exit) {
			struct pend *p = pend_slot(T, e->tid, 1);
			if (!p) {
				T->oom = 1;
				return;
			}
			p->id = e->id;
			p->t = e->t;
			p->arg0 = e->arg0;
			free(p->blk);
			p->blk = NULL;
			pyst_free(p->py);
			p->py = NULL;
			continue;
		}
		struct pl_sys_stat *st = &s->st[e->id];
		struct pend *p = pend_slot(T, e->tid, 0);
		int have = p && p->used && p->id == e->id && p->t <= e->t;
		int kind = kinds[e->id];
		/* a new thread or process starts by returning 0 from the clone
		 * its parent made: one call, counted in the parent */
		if (!have && e->ret == 0 && kind == K_CLONE)
			continue;
		st->calls++;
		if (e->ret < 0 && e->ret > -4096)
			st->errors++;
		if (have) {
			uint64_t ns = e->t - p->t;
			st->timed++;
			st->total_ns += ns;
			if (ns > st->max_ns)
				st->max_ns = ns;
			st->hist[bucket(ns)]++;
			/* Python frames read after the call ended are another call's */
			if (p->py && (!p->py->n || p->py->t >= e->t)) {
				pyst_free(p->py);
				p->py = NULL;
			}
			slow_consider(T, e->id, ns, e->pid, e->tid, &p->blk, &p->py);
		}
		int io = kind == K_READ || kind == K_WRITE;
		if (io && e->ret > 0) {
			st->bytes += (uint64_t)e->ret;
			if (have) {
				struct pl_sys_file *f = file_for(s, (int)e->pid, (int)p->arg0, 0);
				if (f && kind == K_READ) {
					f->reads++;
					f->rbytes += (uint64_t)e->ret;
				} else if (f) {
					f->writes++;
					f->wbytes += (uint64_t)e->ret;
				}
			}
		}
		if (kind == K_OPEN && e->ret >= 0) {
			struct pl_sys_file *f = file_for(s, (int)e->pid, (int)e->ret, 1);
			if (f)
				f->opens = 1;
		}
		if (kind == K_SYNC && have && e->ret == 0) {
			struct pl_sys_file *f = file_for(s, (int)e->pid, (int)p->arg0, 0);
			if (f)
				f->syncs++;
		}
		if (kind == K_CLOSE && have && e->ret == 0)
			for (size_t i = s->nfiles; i-- > 0;)
				if (s->files[i].pid == (int)e->pid && s->files[i].fd == (int)p->arg0) {
					s->files[i].fd = -1 - (int)p->arg0;
					break;
				}
		if (p && p->used && p->tid == e->tid) { /* leaves the call */
			p->id = -1;
			free(p->blk);
			p->blk = NULL;
			pyst_free(p->py);
			p->py = NULL;
		}
	}
	/* the calls still inside at the end: exit and exit_group never return
	 * (strace counts them at their entry) */
	memmove(T->evs, T->evs + k, (T->nev - k) * sizeof(*T->evs));
	T->nev -= k;
	resolve_paths(s);
}

static uint64_t mono_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}


/* the threads of pid (its /proc/PID/task), at most max; their count */
static size_t task_ids(pid_t pid, pid_t *out, size_t max)
{
	char p[64];
	snprintf(p, sizeof p, "/proc/%d/task", (int)pid);
	DIR *d = opendir(p);
	size_t n = 0;
	if (!d)
		return 0;
	for (struct dirent *e; n < max && (e = readdir(d));)
		if (e->d_name[0] >= '1' && e->d_name[0] <= '9')
			out[n++] = (pid_t)atoi(e->d_name);
	closedir(d);
	return n;
}

#define TRACE_TASKS_MAX 4096

/* A ring's size: total bytes shared by the CPUs, each given from lo to hi,
 * a power of two of pages (as perf_event_open's mmap wants). Root (or
 * perf_event_paranoid -1, which these tracepoints need) locks it without
 * the per-user limit. */
static size_t ring_size(const struct tracer *T, size_t total, size_t lo, size_t hi)
{
	size_t per = total / (size_t)T->ncpu, pages = 1;
	if (per > hi)
		per = hi;
	while (pages * 2 * T->page <= per)
		pages *= 2;
	if (pages * T->page < lo)
		pages = lo / T->page;
	return pages * T->page;
}

/* The switch tracepoint on every CPU for each task, into rings of its own; without it (no such
 * tracepoint, not permitted, not x86-64) the calls are counted as before
 * and the slowest have no stacks. Its fds join T->fds. */
static void open_stacks(struct tracer *T, const pid_t *tasks, size_t ntasks, int launched)
{
#if defined(__x86_64__)
	const char *root = T->s->tracefs ? T->s->tracefs : "/sys/kernel/tracing";
	int id = pl_tracefs_id(root, "sched/sched_switch");
	if (id < 0)
		return;
	/* 16 MiB in all, 512 KiB to 4 MiB a CPU: 1 MiB a CPU lost a third of
	 * the stacks of 120 fsyncs in a row */
	T->sring_bytes = ring_size(T, 16u << 20, 512u << 10, 4u << 20);
	T->sringfd = malloc((size_t)T->ncpu * sizeof(int));
	T->srings = calloc((size_t)T->ncpu, sizeof(void *));
	T->srec = malloc(SREC_MAX);
	T->syms = pl_native_syms_new(&T->s->prof, 0);
	int *fds = realloc(T->fds, (T->nfds + (size_t)T->ncpu * ntasks) * sizeof(int));
	if (fds)
		T->fds = fds;
	if (!T->sringfd || !T->srings || !T->srec || !T->syms || !fds)
		return;
	for (long c = 0; c < T->ncpu; c++) {
		T->sringfd[c] = -1;
		for (size_t k = 0; k < ntasks; k++) {
			struct perf_event_attr a;
			memset(&a, 0, sizeof a);
			a.size = sizeof a;
			a.type = PERF_TYPE_TRACEPOINT;
			a.config = (uint64_t)id;
			a.sample_period = 1;
			a.sample_type = PERF_SAMPLE_TID | PERF_SAMPLE_TIME | PERF_SAMPLE_REGS_USER |
					PERF_SAMPLE_STACK_USER;
			a.sample_regs_user = STACK_REGS;
			a.sample_stack_user = PL_SYS_STACK;
			a.disabled = launched;
			a.enable_on_exec = launched;
			a.inherit = 1;
			a.use_clockid = 1;
			a.clockid = CLOCK_MONOTONIC;
			a.wakeup_events = 1;
			a.watermark = 1;
			a.wakeup_watermark = (uint32_t)(T->sring_bytes / 4);
			int fd = (int)syscall(SYS_perf_event_open, &a, tasks[k], (int)c, -1,
					      PERF_FLAG_FD_CLOEXEC);
			if (fd < 0)
				continue;
			T->fds[T->nfds++] = fd;
			if (T->sringfd[c] < 0) {
				void *m = mmap(NULL, T->page + T->sring_bytes, PROT_READ | PROT_WRITE,
					       MAP_SHARED, fd, 0);
				if (m == MAP_FAILED)
					continue;
				T->srings[c] = m;
				T->sringfd[c] = fd;
				T->s->stacks = 1;
			} else if (ioctl(fd, PERF_EVENT_IOC_SET_OUTPUT, T->sringfd[c]) != 0) {
				continue;
			}
		}
	}
#else
	(void)T, (void)tasks, (void)ntasks, (void)launched;
#endif
}

static void drain_all_stacks(struct tracer *T)
{
#if defined(__x86_64__)
	size_t from = T->nev;
	for (long c = 0; T->srings && c < T->ncpu; c++)
		if (T->srings[c])
			drain_stacks(T, T->srings[c]);
	/* the maps of the processes that waited, read now: by the time their
	 * calls end and are processed the program may be gone (a program
	 * exits sooner than perfloop catches up with its calls). At most every
	 * 100 ms a process: reading /proc/PID/maps takes the program's mmap
	 * lock, and a torch process's runs to a hundred KiB */
	uint64_t now = mono_ns();
	for (size_t i = from; i < T->nev; i++) {
		uint32_t pid = T->evs[i].pid;
		size_t k = 0;
		while (k < MAPS_SEEN && T->maps_seen[k].pid && T->maps_seen[k].pid != pid)
			k++;
		if (k == MAPS_SEEN) /* full: the oldest slot */
			for (size_t j = k = 0; j < MAPS_SEEN; j++)
				if (T->maps_seen[j].t < T->maps_seen[k].t)
					k = j;
		if (T->maps_seen[k].pid == pid && now - T->maps_seen[k].t < 100000000u)
			continue;
		pl_native_syms_maps(T->syms, (pid_t)pid);
		T->maps_seen[k].pid = pid;
		T->maps_seen[k].t = now;
	}
#else
	(void)T;
#endif
}

static void close_stacks(struct tracer *T)
{
	for (long c = 0; T->srings && c < T->ncpu; c++)
		if (T->srings[c])
			munmap(T->srings[c], T->page + T->sring_bytes);
	free(T->srings);
	free(T->sringfd);
	free(T->srec);
	if (T->syms)
		pl_native_syms_free(T->syms);
}

int pl_syscalls_trace(char **argv, pid_t pid, double duration,
		      const volatile sig_atomic_t *interrupted, struct pl_syscalls *s, int *status,
		      struct pl_error *err)
{
	int enter, leave;
	int rc0 = pl_syscall_tracepoints(&enter, &leave, &s->tracefs, &s->mounted, err);
	if (rc0 != PL_OK)
		return rc0;
	kinds_init();
	struct tracer T = {.s = s};
	T.page = (size_t)sysconf(_SC_PAGESIZE);
	T.ncpu = sysconf(_SC_NPROCESSORS_CONF);
	if (T.ncpu < 1)
		T.ncpu = 1;
	/* 32 MiB in all, 2 to 8 MiB a CPU: a program's burst of 5,000 writes to
	 * /dev/null (about 750 KB of records in a few ms) filled 2 MiB when the
	 * reader fell behind, under ASan 2 runs in 15 on an idle machine
	 * (5,400 events lost) */
	T.ring_bytes = ring_size(&T, 32u << 20, 2u << 20, 8u << 20);
	/* -p: every thread of the process now (each event inherited by the
	 * threads and children it starts later), on every CPU, into one ring
	 * per CPU */
	struct pl_procid who = {.pid = pid, .pidfd = -1};
	if (!argv && pl_procid_open(&who, pid) < 0)
		return pl_error_set(err, PL_EINPUT, "--syscalls: no process %d", (int)pid);
	pid_t *tasks = malloc(TRACE_TASKS_MAX * sizeof(*tasks));
	size_t ntasks = 1;
	if (tasks && argv)
		tasks[0] = 0;
	else if (tasks && !(ntasks = task_ids(pid, tasks, TRACE_TASKS_MAX))) {
		free(tasks);
		pl_procid_close(&who);
		return pl_error_set(err, PL_EINPUT, "--syscalls: no process %d", (int)pid);
	}
	T.fds = tasks ? malloc((size_t)T.ncpu * 2 * ntasks * sizeof(int)) : NULL;
	T.ringfd = malloc((size_t)T.ncpu * sizeof(int));
	T.rings = calloc((size_t)T.ncpu, sizeof(void *));
	if (!T.fds || !T.rings || !T.ringfd) {
		free(tasks);
		free(T.fds);
		free(T.ringfd);
		free(T.rings);
		pl_procid_close(&who);
		return PL_ENOMEM;
	}
	for (long c = 0; c < T.ncpu; c++)
		T.ringfd[c] = -1;
	int rc = PL_OK;
	struct pl_launch L = {-1, -1, -1};
	pid_t child = -1;
	*status = 0;
	if (argv) {
		if ((rc = pl_launch_start(argv, &L, err)) != PL_OK)
			goto out;
		child = L.pid;
		tasks[0] = child;
	}
	for (long c = 0; c < T.ncpu; c++) {
		for (size_t k2 = 0; k2 < 2 * ntasks; k2++) {
			int k = (int)(k2 & 1);
			pid_t task = tasks[k2 / 2];
			struct perf_event_attr a;
			memset(&a, 0, sizeof a);
			a.size = sizeof a;
			a.type = PERF_TYPE_TRACEPOINT;
			a.config = (uint64_t)(k ? leave : enter);
			a.sample_period = 1;
			a.sample_type = PERF_SAMPLE_TID | PERF_SAMPLE_TIME | PERF_SAMPLE_RAW;
			a.disabled = argv != NULL; /* a launched program: from its exec */
			a.enable_on_exec = argv != NULL;
			a.inherit = 1;
			a.use_clockid = 1;
			a.clockid = CLOCK_MONOTONIC;
			a.wakeup_events = 1;
			a.watermark = 1;
			a.wakeup_watermark = (uint32_t)(T.ring_bytes / 4);
			int fd = (int)syscall(SYS_perf_event_open, &a, task, (int)c, -1,
					      PERF_FLAG_FD_CLOEXEC);
			if (fd < 0) {
				if (errno == ENODEV || errno == EINVAL) /* an offline CPU */
					continue;
				if (errno == ESRCH) /* a thread that ended meanwhile */
					continue;
				rc = pl_error_set(
				    err, PL_EINPUT,
				    "--syscalls: perf_event_open of the syscall tracepoints: %s (root, "
				    "or kernel.perf_event_paranoid <= -1, is needed)",
				    strerror(errno));
				goto started;
			}
			T.fds[T.nfds++] = fd;
			if (k == 0 && !T.rings[c]) {
				T.ringfd[c] = fd;
				T.rings[c] = mmap(NULL, T.page + T.ring_bytes, PROT_READ | PROT_WRITE,
						  MAP_SHARED, fd, 0);
				if (T.rings[c] == MAP_FAILED) {
					T.rings[c] = NULL;
					rc = pl_error_set(err, PL_ESYS, "mmap of a ring buffer: %s",
							  strerror(errno));
					goto started;
				}
			} else if (T.rings[c] &&
				   ioctl(fd, PERF_EVENT_IOC_SET_OUTPUT, T.ringfd[c]) != 0) {
				rc = pl_error_set(err, PL_ESYS, "PERF_EVENT_IOC_SET_OUTPUT: %s",
						  strerror(errno));
				goto started;
			}
		}
	}
	if (rc == PL_OK)
		open_stacks(&T, tasks, ntasks, argv != NULL);
	/* the tracepoints' ids are read and the events open: a tracefs we
	 * mounted for them goes (a lazy unmount: nothing of ours holds it) */
	if (s->mounted && s->tracefs && umount2(s->tracefs, MNT_DETACH) != 0)
		s->mounted = 2; /* still mounted: said as such */
started:
	if (rc != PL_OK) {
		pl_launch_end(&L, status);
		child = -1;
		goto out;
	}
	double t0 = (double)mono_ns() * 1e-9;
	if (argv && (rc = pl_launch_go(&L, argv[0], status, err)) != PL_OK) {
		child = -1;
		goto out;
	}
	struct pollfd *pfd = calloc(2 * (size_t)T.ncpu, sizeof(*pfd));
	size_t np = 0;
	for (long c = 0; pfd && c < T.ncpu; c++) {
		if (T.rings[c])
			pfd[np++] = (struct pollfd){T.ringfd[c], POLLIN, 0};
		if (T.srings && T.srings[c]) /* a quarter full wakes perfloop too */
			pfd[np++] = (struct pollfd){T.sringfd[c], POLLIN, 0};
	}
	for (int done = 0; !done && !T.oom;) {
		if (pfd)
			poll(pfd, np, 10);
		uint64_t wm = mono_ns();
		for (long c = 0; c < T.ncpu; c++)
			if (T.rings[c])
				drain(&T, T.rings[c], enter);
		drain_all_stacks(&T);
		process(&T, wm);
		py_waiting(&T, mono_ns());
		if (child > 0 && waitpid(child, status, WNOHANG) == child) {
			child = -1;
			done = 1;
		}
		if (!argv && pl_procid_gone(&who))
			done = 1; /* -p: it ended (its number may be another's now) */
		if (duration > 0 && (double)wm * 1e-9 - t0 >= duration)
			done = 2;
		if ((interrupted && *interrupted) || done == 2) {
			if (child > 0) { /* a launched program ends with the profile */
				kill(child, SIGINT);
				waitpid(child, status, 0);
				child = -1;
			}
			s->stopped = done == 2;
			done = 1;
		}
	}
	free(pfd);
	for (long c = 0; c < T.ncpu; c++)
		if (T.rings[c])
			drain(&T, T.rings[c], enter);
	drain_all_stacks(&T);
	process(&T, UINT64_MAX);
	slow_unwind(&T);
	/* calls entered and never left: exit and exit_group end the process */
	for (size_t i = 0; i < T.cappend; i++)
		if (T.pend[i].used && T.pend[i].id >= 0 && T.pend[i].id < PL_SYS_MAX)
			s->st[T.pend[i].id].calls++;
	s->elapsed_s = (double)mono_ns() * 1e-9 - t0;
	if (T.oom)
		rc = PL_ENOMEM;
out:
	py_close(&T);
	if (child > 0) {
		kill(child, SIGKILL);
		waitpid(child, status, 0);
	}
	pl_launch_end(&L, status);
	for (long c = 0; c < T.ncpu; c++)
		if (T.rings[c])
			munmap(T.rings[c], T.page + T.ring_bytes);
	close_stacks(&T);
	for (size_t i = 0; i < T.nfds; i++)
		close(T.fds[i]);
	free(T.fds);
	free(T.ringfd);
	free(T.rings);
	for (size_t i = 0; i < T.nev; i++)
		free(T.evs[i].blk);
	free(T.evs);
	for (size_t i = 0; i < T.cappend; i++) {
		free(T.pend[i].blk);
		pyst_free(T.pend[i].py);
	}
	free(T.pend);
	free(tasks);
	pl_procid_close(&who);
	return rc;
}

/* ---- reporting ---- */

static int cmp_total(const void *a, const void *b, void *ctx)
{
	const struct pl_syscalls *s = ctx;
	const struct pl_sys_stat *x = &s->st[*(const int *)a], *y = &s->st[*(const int *)b];
	if (x->total_ns != y->total_ns)
		return x->total_ns < y->total_ns ? 1 : -1;
	return x->calls < y->calls ? 1 : x->calls > y->calls ? -1 : 0;
}

static size_t order(const struct pl_syscalls *s, int *ids)
{
	size_t n = 0;
	for (int i = 0; i < PL_SYS_MAX; i++)
		if (s->st[i].calls)
			ids[n++] = i;
	if (n)
		qsort_r(ids, n, sizeof(*ids), cmp_total, (void *)s);
	return n;
}

/* opens counted by path (the descriptors whose path was read), most first */
static struct pl_sys_file *opens_by_path(const struct pl_syscalls *s, size_t *n)
{
	struct pl_sys_file *o = calloc(s->nfiles + 1, sizeof(*o));
	*n = 0;
	for (size_t i = 0; o && i < s->nfiles; i++) {
		const struct pl_sys_file *f = &s->files[i];
		if (!f->opens || f->path[0] != '/')
			continue;
		size_t k = 0;
		while (k < *n && strcmp(o[k].path, f->path))
			k++;
		if (k == *n)
			snprintf(o[(*n)++].path, sizeof o->path, "%s", f->path);
		o[k].opens++;
	}
	for (size_t i = 1; o && i < *n; i++)
		for (size_t j = i; j > 0 && o[j - 1].opens < o[j].opens; j--) {
			struct pl_sys_file t = o[j];
			o[j] = o[j - 1];
			o[j - 1] = t;
		}
	return o;
}

/* the findings' lines, NULL-separated in out (at most max) */
static size_t findings(const struct pl_syscalls *s, char out[][400], size_t max)
{
	size_t n = 0;
	char b[32];
	for (size_t i = 0; i < s->nfiles && n < max; i++) {
		const struct pl_sys_file *f = &s->files[i];
		if (f->reads >= 1000 && f->rbytes / f->reads < 512)
			snprintf(out[n++], 400,
				 "many small reads: %llu reads of %.0f bytes on average from %s "
				 "(%s in all): read in larger blocks (a buffered reader)",
				 (unsigned long long)f->reads, (double)f->rbytes / (double)f->reads,
				 f->path, pl_fmt_bytes(b, sizeof b, (double)f->rbytes));
		if (n < max && f->writes >= 1000 && f->wbytes / f->writes < 512)
			snprintf(out[n++], 400,
				 "many small writes: %llu writes of %.0f bytes on average to %s "
				 "(%s in all): buffer them",
				 (unsigned long long)f->writes, (double)f->wbytes / (double)f->writes,
				 f->path, pl_fmt_bytes(b, sizeof b, (double)f->wbytes));
	}
	for (size_t i = 0; i < s->nfiles && n < max; i++) {
		const struct pl_sys_file *f = &s->files[i];
		if (f->syncs >= 100 && f->writes <= 2 * f->syncs)
			snprintf(out[n++], 400,
				 "an fsync per write: %llu fsync/fdatasync for %llu writes to %s: "
				 "sync once per batch of records",
				 (unsigned long long)f->syncs, (unsigned long long)f->writes, f->path);
	}
	size_t no = 0;
	struct pl_sys_file *op = opens_by_path(s, &no);
	for (size_t i = 0; op && i < no && n < max; i++)
		if (op[i].opens >= 100)
			snprintf(out[n++], 400,
				 "the same file opened %llu times: %s: open it once and keep it",
				 (unsigned long long)op[i].opens, op[i].path);
	free(op);
	return n;
}

static int cmp_file_bytes(const void *a, const void *b, void *ctx)
{
	const struct pl_syscalls *s = ctx;
	const struct pl_sys_file *x = &s->files[*(const size_t *)a], *y = &s->files[*(const size_t *)b];
	uint64_t u = x->rbytes + x->wbytes, v = y->rbytes + y->wbytes;
	return u < v ? 1 : u > v ? -1 : 0;
}

static const char *slow_name(const struct pl_sys_slow *w, char *buf, size_t len)
{
	const char *nm = pl_syscall_name(w->id);
	if (nm)
		return nm;
	snprintf(buf, len, "syscall_%d", w->id);
	return buf;
}

/* The slowest calls, each with the first frames of where it waited. */
static void print_slowest(const struct pl_syscalls *s)
{
	if (!s->nslow)
		return;
	printf("\n  slowest calls%s:\n", s->stacks ? ", and where each waited" : "");
	for (size_t i = 0; i < s->nslow && i < 5; i++) {
		const struct pl_sys_slow *w = &s->slow[i];
		char nb[32], t[32];
		printf("  %-16s %10s  pid %d", slow_name(w, nb, sizeof nb),
		       pl_fmt_seconds(t, sizeof t, (double)w->ns * 1e-9), w->pid);
		if (w->tid != w->pid)
			printf(" thread %d", w->tid);
		printf("\n");
		if (!w->depth) {
			if (s->stacks)
				printf("      (no stack: it did not leave the CPU, or the copy was lost)\n");
			continue;
		}
		printf("      at ");
		for (size_t k = 0; k < w->depth && k < 6; k++) {
			const struct pl_prof_frame *f = &s->prof.frames[w->frames[k]];
			printf("%s%s (%s:%d)", k ? " < " : "", f->name,
			       pl_prof_shown_file(&s->prof, f->file), f->line);
		}
		printf("%s\n", w->depth > 6 ? " < ..." : "");
	}
}

void pl_syscalls_print(const struct pl_syscalls *s, size_t top)
{
	int ids[PL_SYS_MAX];
	size_t n = order(s, ids);
	uint64_t calls = 0, ns = 0;
	for (size_t i = 0; i < n; i++) {
		calls += s->st[ids[i]].calls;
		ns += s->st[ids[i]].total_ns;
	}
	printf("  %llu system calls in %.2f s, %.3f s inside them%s\n", (unsigned long long)calls,
	       s->elapsed_s, (double)ns * 1e-9,
	       s->lost ? " (some events lost: the counts are low)" : "");
	printf("\n  %-18s %10s %7s %11s %10s %10s %10s\n", "syscall", "calls", "errors", "total",
	       "mean", "p99", "bytes");
	for (size_t i = 0; i < n && i < top; i++) {
		const struct pl_sys_stat *st = &s->st[ids[i]];
		const char *nm = pl_syscall_name(ids[i]);
		char name[32], tt[32], mean[32], p99[32], by[32];
		snprintf(name, sizeof name, "%s", nm ? nm : "?");
		if (!nm)
			snprintf(name, sizeof name, "syscall_%d", ids[i]);
		printf("  %-18s %10llu %7llu %11s %10s %10s %10s\n", name,
		       (unsigned long long)st->calls, (unsigned long long)st->errors,
		       pl_fmt_time(tt, sizeof tt, (double)st->total_ns * 1e-9),
		       st->timed ? pl_fmt_time(mean, sizeof mean,
					       (double)st->total_ns * 1e-9 / (double)st->timed)
				 : "-",
		       st->timed ? pl_fmt_time(p99, sizeof p99, pl_sys_p99(st)) : "-",
		       st->bytes ? pl_fmt_bytes(by, sizeof by, (double)st->bytes) : "");
	}
	/* the files read or written most; the short-lived descriptors whose
	 * path was not read, in one line */
	size_t *idx = malloc((s->nfiles + 1) * sizeof(*idx));
	if (idx) {
		size_t k = 0, nu = 0;
		uint64_t ur = 0, uw = 0;
		for (size_t i = 0; i < s->nfiles; i++) {
			const struct pl_sys_file *f = &s->files[i];
			if (!(f->rbytes + f->wbytes))
				continue;
			if (f->unknown) {
				nu++;
				ur += f->rbytes;
				uw += f->wbytes;
			} else {
				idx[k++] = i;
			}
		}
		if (k)
			qsort_r(idx, k, sizeof(*idx), cmp_file_bytes, (void *)s);
		if (k || nu)
			printf("\n  %-10s %-10s %9s %9s  %s\n", "read", "written", "reads", "writes",
			       "file");
		char r[32], w[32];
		for (size_t i = 0; i < k && i < 10; i++) {
			const struct pl_sys_file *f = &s->files[idx[i]];
			printf("  %-10s %-10s %9llu %9llu  %s\n",
			       pl_fmt_bytes(r, sizeof r, (double)f->rbytes),
			       pl_fmt_bytes(w, sizeof w, (double)f->wbytes),
			       (unsigned long long)f->reads, (unsigned long long)f->writes, f->path);
		}
		if (k > 10)
			printf("  ... %zu more files (PREFIX.syscalls.json lists them)\n", k - 10);
		if (nu)
			printf("  %-10s %-10s %9s %9s  %zu short-lived descriptors (closed before "
			       "perfloop read their paths)\n",
			       pl_fmt_bytes(r, sizeof r, (double)ur), pl_fmt_bytes(w, sizeof w, (double)uw),
			       "", "", nu);
		free(idx);
	}
	char fl[8][400];
	size_t nf = findings(s, fl, 8);
	if (nf)
		printf("\n");
	for (size_t i = 0; i < nf; i++)
		printf("  finding (I/O): %s\n", fl[i]);
	print_slowest(s);
}

json_t *pl_syscalls_json(const struct pl_syscalls *s, const char *command)
{
	int ids[PL_SYS_MAX];
	size_t n = order(s, ids);
	json_t *calls = json_array();
	for (size_t i = 0; i < n; i++) {
		const struct pl_sys_stat *st = &s->st[ids[i]];
		const char *nm = pl_syscall_name(ids[i]);
		char name[32];
		snprintf(name, sizeof name, "%s", nm ? nm : "?");
		if (!nm)
			snprintf(name, sizeof name, "syscall_%d", ids[i]);
		json_array_append_new(
		    calls, json_pack("{s:s, s:i, s:I, s:I, s:I, s:f, s:f, s:f, s:I}", "name", name, "nr",
				     ids[i], "calls", (json_int_t)st->calls, "errors",
				     (json_int_t)st->errors, "timed", (json_int_t)st->timed,
				     "total_s", (double)st->total_ns * 1e-9, "max_s",
				     (double)st->max_ns * 1e-9, "p99_s", pl_sys_p99(st), "bytes",
				     (json_int_t)st->bytes));
	}
	json_t *files = json_array();
	for (size_t i = 0; i < s->nfiles; i++) {
		const struct pl_sys_file *f = &s->files[i];
		if (!f->reads && !f->writes)
			continue;
		json_array_append_new(
		    files, json_pack("{s:i, s:s, s:I, s:I, s:I, s:I}", "pid", f->pid, "path", f->path,
				     "reads", (json_int_t)f->reads, "writes", (json_int_t)f->writes,
				     "read_bytes", (json_int_t)f->rbytes, "written_bytes",
				     (json_int_t)f->wbytes));
	}
	json_t *opens = json_array();
	size_t no = 0;
	struct pl_sys_file *op = opens_by_path(s, &no);
	for (size_t i = 0; op && i < no; i++)
		json_array_append_new(opens, json_pack("{s:s, s:I}", "path", op[i].path, "opens",
						       (json_int_t)op[i].opens));
	free(op);
	json_t *fj = json_array();
	char fl[8][400];
	size_t nf = findings(s, fl, 8);
	for (size_t i = 0; i < nf; i++)
		json_array_append_new(fj, json_pack("{s:s, s:s, s:i, s:s}", "category", "io",
						    "severity", "medium", "level", 3, "message",
						    fl[i]));
	json_t *slow = json_array();
	for (size_t i = 0; i < s->nslow; i++) {
		const struct pl_sys_slow *w = &s->slow[i];
		char nb[32];
		json_t *st = json_array();
		for (size_t k = 0; k < w->depth; k++) {
			const struct pl_prof_frame *f = &s->prof.frames[w->frames[k]];
			json_array_append_new(st, json_pack("{s:s, s:s, s:i}", "function", f->name,
							    "file",
							    pl_prof_shown_file(&s->prof, f->file),
							    "line", f->line));
		}
		json_array_append_new(slow, json_pack("{s:s, s:i, s:f, s:i, s:i, s:o}", "name",
						      slow_name(w, nb, sizeof nb), "nr", w->id,
						      "seconds", (double)w->ns * 1e-9, "pid", w->pid,
						      "tid", w->tid, "stack", st));
	}
	return json_pack("{s:s, s:s, s:f, s:I, s:I, s:o, s:o, s:o, s:o, s:o, s:{s:b, s:I, s:I}}",
			 "schema", "perfloop.syscalls/1", "command", command, "elapsed_s",
			 s->elapsed_s, "events", (json_int_t)s->events, "lost", (json_int_t)s->lost,
			 "syscalls", calls, "files", files, "opened", opens, "findings", fj,
			 "slowest", slow, "stacks", "enabled", s->stacks, "copied",
			 (json_int_t)s->switches, "lost", (json_int_t)s->switches_lost);
}

void pl_syscalls_release(struct pl_syscalls *s)
{
	for (size_t i = 0; i < s->nslow; i++) {
		free(s->slow[i].frames);
		free(s->slow[i].copy);
		pyst_free(s->slow[i].py);
	}
	s->nslow = 0;
	pl_prof_release(&s->prof);
	free(s->files);
	s->files = NULL;
	s->nfiles = s->capfiles = 0;
}
