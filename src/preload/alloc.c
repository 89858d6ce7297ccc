/*
 * libperfloop-alloc.so: `perfloop profile --alloc`'s allocation sampler,
 * loaded into the measured program with LD_PRELOAD.
 *
 * It interposes malloc, calloc, realloc, reallocarray, free, the aligned
 * allocators, anonymous mmap/munmap, and samples the bytes allocated the
 * way tcmalloc's and jemalloc's heap profilers do: each thread counts
 * down an exponentially distributed number of bytes (mean RATE) and the
 * allocation that crosses zero is sampled, so an allocation of s bytes is
 * sampled with probability 1 - exp(-s/RATE) whatever the sizes around it,
 * and weighting it by s / (1 - exp(-s/RATE)) (done by the reader) gives an
 * unbiased estimate of the bytes by stack. A sampled allocation's stack is
 * taken with glibc's backtrace() (the unwinder that reads .eh_frame: no
 * frame pointers needed); its address is kept so that its free is seen.
 * Everything else costs a countdown and, per free, one bit read from a
 * 16 KiB bitmap.
 *
 * Why ours and not heaptrack's or memray's: those trace every allocation
 * (heaptrack: ~1.5-5x on allocation-heavy code); sampling bounds the cost
 * and still answers "which stacks allocate and keep the bytes".
 *
 * Output: one file per process, $PERFLOOP_ALLOC_DIR/alloc.PID.N, written
 * through a buffer:
 *   "PLALLOC1" u64 rate  u32 pid  u32 ppid
 *   'm' u32 len bytes    a piece of /proc/self/maps (at start, after a
 *                        dlopen, at exit); 'M' u32 0 ends a copy
 *   'A' u64 t_ns u64 addr u64 size u32 tid u32 nframes u64 pcs[nframes]
 *   'P' u32 n {u64 code u8 entry}[n]   after an 'A' whose thread runs
 *                        Python: its Python frames, leaf first (entry: the
 *                        first frame of its _PyEval_EvalFrameDefault call)
 *   'C' u64 code i32 firstline str qualname str filename   a code object,
 *                        before the first 'P' that names it (again when
 *                        its address is reused); str: u8 kind (1, 2, 4;
 *                        0: unreadable) u32 length, length * kind bytes
 *   'F' u64 t_ns u64 addr              a sampled allocation freed
 *   'Z' u64 t_ns                        a Python program's own code is over
 *                        (an atexit callback registered first, so run last,
 *                        before the interpreter's teardown frees its
 *                        modules): what is live now is what it kept
 *   'E' u64 t_ns u64 calls u64 bytes u64 dropped   at exit: exact totals
 * (native byte order: the reader is the perfloop that started it).
 *
 * Python frames: in a CPython 3.11+ process (the interpreter exports
 * Py_Version), a sampled allocation's thread's own frame chain is read in
 * place, from the thread state PyGILState_GetThisThreadState gives it
 * (this thread's, the GIL held or not: a thread reading its own frames
 * sees them whole, as faulthandler does), with the layouts pystack.c uses
 * (profile/python/pylayout.h). Each code object's names are written once.
 *
 * A forked child starts its own file; an exec'd program loads this again
 * (LD_PRELOAD is inherited) and starts another. Not malloc'd, anything
 * here: the buffers are static or mmap'd.
 *
 * What the measured program must not notice (t618):
 * - a vfork child (vfork, clone(CLONE_VM), Python's subprocess) runs in
 *   the parent's memory and gets no fork handler: nothing here writes or
 *   stops anything in a process that is not the file's (owner_pid). If
 *   such a child calls exit(), it runs and uses up the parent's atexit
 *   handlers and destructors (ours too, and atexit() fails after); the
 *   child says so (hooks_lost) and the parent writes its totals when main
 *   returns or exit() is called (both wrapped here) instead.
 * - a signal handler that allocates or frees interrupts its own thread
 *   anywhere, our locked sections too: a thread never waits for a lock it
 *   may hold itself (hold_mu, hold_tc). Its allocations are counted (one
 *   instruction per counter) but not sampled, its frees of sampled blocks
 *   wait in a per-thread queue for the lock's release.
 * - dlopen is not interposed: glibc resolves a bare name by its caller's
 *   RUNPATH and $ORIGIN, and a wrapper would be the caller. Loads and
 *   unloads are seen in dl_iterate_phdr's counters at the next sample
 *   (dlmopen's and libc's own too): the maps are read again, Python looked
 *   for again.
 */
#include <dlfcn.h>
#include <errno.h>
#include <execinfo.h>
#include <fcntl.h>
#include <link.h>
#include <math.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "../profile/python/pylayout.h"

#define EXPORT __attribute__((visibility("default")))
#define TLS __thread __attribute__((tls_model("initial-exec")))

#define MAX_FRAMES 128
#define FILTER_BITS 17 /* a 16 KiB bitmap, read on every free: stays in L1 */

static void *(*real_malloc)(size_t);
static void *(*real_calloc)(size_t, size_t);
static void *(*real_realloc)(void *, size_t);
static void (*real_free)(void *);
static int (*real_posix_memalign)(void **, size_t, size_t);
static void *(*real_aligned_alloc)(size_t, size_t);
static void *(*real_memalign)(size_t, size_t);
static void *(*real_valloc)(size_t);
static void *(*real_pvalloc)(size_t);
static void *(*real_mmap)(void *, size_t, int, int, int, off_t);
static int (*real_munmap)(void *, size_t);
static void (*real_exit)(int);
static void (*real_libc_exit)(int);
typedef int (*main_fn)(int, char **, char **);
static int (*real_start_main)(main_fn, int, char **, void (*)(void), void (*)(void), void (*)(void),
			      void *);
static main_fn real_main;

/* 0: not started, 1: resolving (dlsym's own allocations from boot[]),
 * 2: sampling, 3: off (no output directory, or stopped at exit) */
static atomic_int state;
static char boot[1 << 16] __attribute__((aligned(64)));
static atomic_size_t boot_used;

static uint64_t rate = 512 * 1024;
static int out_fd = -1;
static char out_dir[3800];
static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;
static unsigned char buf[1 << 16];
static size_t buf_len;
static int maps_dirty = 1;
static int sampled_any; /* a sample was written: the maps matter */
static atomic_ullong calls, bytes, dropped;
static uintptr_t self_lo, self_hi; /* this library's text: its frames are left out */
/* the process the output file is this one's: a vfork child (same memory,
 * no fork handler) is not, and writes nothing */
static pid_t owner_pid;
/* set by a child of ours sharing our memory whose exit() ran (and used
 * up) our atexit handler and destructor: the process's exit is seen by
 * the wrapped main and exit() instead */
static atomic_int hooks_lost;
/* dl_iterate_phdr's objects loaded and unloaded when the maps were read */
static unsigned long long seen_adds, seen_subs;
static int py_tries; /* samples left that look for a late libpython */

/* the sampled addresses: an exact table under mu, and a bitmap filter
 * read without a lock, so that a free of an unsampled block (nearly all)
 * costs one load */
static _Atomic uint64_t filter_bits[(1u << FILTER_BITS) / 64];
static uint16_t *filter; /* per bit, how many sampled blocks set it (under mu) */
static uintptr_t *table;
static size_t table_cap, table_used, table_tomb;
#define TOMB ((uintptr_t)1)

static TLS int64_t left;
static TLS uint64_t rng;
/* volatile: set around our own calls that come back into malloc here
 * (dlsym, the unwinder's first load): not the program's allocations; GCC,
 * not seeing that, dropped a busy = 1 before py_find's dlsym */
static TLS volatile int busy;
/* This thread is in sample() or holds mu (hold_mu), or holds tc_mu
 * (hold_tc): set before the lock is taken, cleared after it is released,
 * so that a signal handler landing anywhere in between sees it and does
 * not wait for a lock its own thread holds (a program freeing in a signal
 * handler deadlocked). Counters, not flags: sample() takes mu inside. */
static TLS volatile int hold_mu, hold_tc;
/* frees of sampled blocks made by a handler while hold_mu: recorded by
 * the thread when it releases mu (a slot is taken with one instruction,
 * so a nested handler cannot take the same one) */
#define PEND_MAX 64
static TLS struct {
	uintptr_t addr;
	uint64_t t;
} pend[PEND_MAX];
static TLS unsigned pend_n;
static TLS uint32_t t_tid; /* gettid(), once per thread */
/* each thread's exact counts, in a line of its own that only its thread
 * writes (so the allocation path touches no shared cache line), linked in
 * one list that the process's exit sums under tc_mu. A thread's exit (a
 * key's destructor) adds its counts to the totals and frees its line for
 * the next thread. Summing the live threads' lines, not waiting for them
 * to add theirs, is what makes the totals exact: Python's join() returns
 * before the thread's key destructors run, and the process's exit could
 * write the totals first (t612 lost a thread's 64 MiB once in CI) */
struct tcount {
	_Atomic uint64_t calls, bytes;
	struct tcount *next;
	int used;
} __attribute__((aligned(64)));
static struct tcount *tcounts;
static pthread_mutex_t tc_mu = PTHREAD_MUTEX_INITIALIZER;
static TLS struct tcount *t_count;
static pthread_key_t tc_key;
static int tc_key_ok;

static int in_boot(const void *p)
{
	return (const char *)p >= boot && (const char *)p < boot + sizeof(boot);
}

static void *boot_alloc(size_t n)
{
	n = (n + 15) & ~(size_t)15;
	size_t at = atomic_fetch_add(&boot_used, n);
	if (at + n > sizeof(boot))
		return NULL;
	return boot + at;
}

static uint64_t now_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static uint64_t next_rand(void)
{
	if (!rng) {
		const char *s = getenv("PERFLOOP_ALLOC_SEED");
		rng = (s ? strtoull(s, NULL, 10) : (uint64_t)now_ns()) ^
		      ((uint64_t)syscall(SYS_gettid) * 0x9e3779b97f4a7c15ULL);
		if (!rng)
			rng = 1;
	}
	/* xorshift64* */
	rng ^= rng >> 12;
	rng ^= rng << 25;
	rng ^= rng >> 27;
	return rng * 0x2545f4914f6cdd1dULL;
}

/* bytes until the next sample: exponential with mean rate */
static int64_t draw(void)
{
	double u = ((double)(next_rand() >> 11) + 0.5) / 9007199254740992.0;
	double x = -log(u) * (double)rate;
	return x < 1 ? 1 : x > 9e18 ? INT64_MAX : (int64_t)x;
}

/* ---- output (under mu) ---- */

static void flush_locked(void)
{
	size_t off = 0;
	while (out_fd >= 0 && off < buf_len) {
		ssize_t w = write(out_fd, buf + off, buf_len - off);
		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0)
			break;
		off += (size_t)w;
	}
	buf_len = 0;
}

static void put(const void *p, size_t n)
{
	if (buf_len + n > sizeof(buf))
		flush_locked();
	memcpy(buf + buf_len, p, n);
	buf_len += n;
}

static void put_u8(uint8_t v) { put(&v, 1); }
static void put_u32(uint32_t v) { put(&v, 4); }
static void put_u64(uint64_t v) { put(&v, 8); }

static void maps_locked(void)
{
	int fd = open("/proc/self/maps", O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return;
	static char chunk[16384];
	ssize_t n;
	while ((n = read(fd, chunk, sizeof(chunk))) > 0) {
		put_u8('m');
		put_u32((uint32_t)n);
		put(chunk, (size_t)n);
	}
	close(fd);
	put_u8('M');
	put_u32(0);
	maps_dirty = 0;
}

static void open_output_locked(void)
{
	char path[4000];
	int pid = (int)getpid();
	for (int seq = 0; seq < 1000; seq++) {
		snprintf(path, sizeof(path), "%s/alloc.%d.%d", out_dir, pid, seq);
		out_fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
		if (out_fd >= 0 || errno != EEXIST)
			break;
	}
	if (out_fd < 0) {
		atomic_store(&state, 3);
		return;
	}
	buf_len = 0;
	put("PLALLOC1", 8);
	put_u64(rate);
	put_u32((uint32_t)pid);
	put_u32((uint32_t)getppid());
	maps_dirty = 1;
}

/* ---- the sampled set (table under mu) ---- */

static size_t slot_of(uintptr_t a, size_t cap)
{
	uint64_t h = (uint64_t)a * 0x9e3779b97f4a7c15ULL;
	return (size_t)(h >> 20) & (cap - 1);
}

static size_t filter_of(uintptr_t a)
{
	uint64_t h = (uint64_t)a * 0xff51afd7ed558ccdULL;
	return (size_t)(h >> (64 - FILTER_BITS));
}

static void *raw_pages(size_t n)
{
	void *p = real_mmap ? real_mmap(NULL, n, PROT_READ | PROT_WRITE,
					 MAP_PRIVATE | MAP_ANONYMOUS, -1, 0)
			    : MAP_FAILED;
	return p == MAP_FAILED ? NULL : p;
}

static int table_grow_locked(void)
{
	size_t cap = table_cap ? table_cap * 2 : 1 << 16;
	uintptr_t *t = raw_pages(cap * sizeof(*t));
	if (!t)
		return -1;
	for (size_t i = 0; i < table_cap; i++) {
		uintptr_t a = table[i];
		if (a > TOMB) {
			size_t s = slot_of(a, cap);
			while (t[s])
				s = (s + 1) & (cap - 1);
			t[s] = a;
		}
	}
	if (table)
		real_munmap(table, table_cap * sizeof(*table));
	table = t;
	table_cap = cap;
	table_tomb = 0;
	return 0;
}

static int table_add_locked(uintptr_t a)
{
	if ((table_used + table_tomb + 1) * 4 > table_cap * 3 && table_grow_locked() != 0)
		return -1;
	size_t s = slot_of(a, table_cap);
	while (table[s] > TOMB) {
		if (table[s] == a)
			return 0; /* already there (a block freed unseen, then reused) */
		s = (s + 1) & (table_cap - 1);
	}
	if (table[s] == TOMB)
		table_tomb--;
	table[s] = a;
	table_used++;
	size_t f = filter_of(a);
	if (filter[f]++ == 0)
		atomic_fetch_or_explicit(&filter_bits[f / 64], 1ULL << (f % 64), memory_order_relaxed);
	return 0;
}

static int table_del_locked(uintptr_t a)
{
	if (!table_cap)
		return 0;
	size_t s = slot_of(a, table_cap);
	while (table[s]) {
		if (table[s] == a) {
			table[s] = TOMB;
			table_used--;
			table_tomb++;
			size_t f = filter_of(a);
			if (--filter[f] == 0)
				atomic_fetch_and_explicit(&filter_bits[f / 64], ~(1ULL << (f % 64)),
							  memory_order_relaxed);
			return 1;
		}
		s = (s + 1) & (table_cap - 1);
	}
	return 0;
}

/* ---- Python frames ---- */

#define PY_MAX 256	  /* frames kept, leaf first: deeper stacks lose their root */
#define PY_SEEN (1u << 12) /* code objects whose names were written */
#define PY_MAX_STR 4096

static struct pylayout py;
static atomic_int py_on; /* py filled, the functions found */
static void *(*py_this_tstate)(void);
static uintptr_t py_code_type;
static struct {
	uintptr_t code, qualname, filename;
} py_seen[PY_SEEN]; /* under mu */

static inline uintptr_t ld(uintptr_t a) { return *(const uintptr_t *)a; }

static void py_find_locked(void);

/* Is this process a CPython we can read? At start and after a dlopen (an
 * embedding program may load libpython late). */
static void py_find(void)
{
	if (atomic_load(&py_on) || busy)
		return;
	busy = 1; /* dlsym's failures allocate their messages: ours, not the program's */
	py_find_locked();
	busy = 0;
}

static void py_find_locked(void)
{
	const unsigned long *ver = dlsym(RTLD_DEFAULT, "Py_Version");
	void *gs = dlsym(RTLD_DEFAULT, "PyGILState_GetThisThreadState");
	void *ct = dlsym(RTLD_DEFAULT, "PyCode_Type");
	if (!ver || !gs || !ct || (*ver >> 24 & 0xff) != 3)
		return;
	int minor = (int)(*ver >> 16 & 0xff);
	if (minor == 11) {
		py = pl_py311_layout;
	} else if (minor == 12) {
		py = pl_py312_layout;
	} else {
		const struct pl_pydebug_pos *P = pl_pylayout_pos(minor);
		const uint8_t *rt = dlsym(RTLD_DEFAULT, "_PyRuntime");
		if (!P || !rt || pl_pylayout_debug(&py, rt, P) != PL_PYLAYOUT_OK)
			return;
	}
	*(void **)&py_this_tstate = gs;
	py_code_type = (uintptr_t)ct;
	atomic_store_explicit(&py_on, 1, memory_order_release);
}

/* This thread's Python frames, leaf first: 0 where it runs none, or where
 * what it reads does not hold together (never a partial stack). */
static size_t py_walk(uintptr_t *codes, uint8_t *entry)
{
	if (!atomic_load_explicit(&py_on, memory_order_acquire))
		return 0;
	uintptr_t ts = (uintptr_t)py_this_tstate();
	if (!ts)
		return 0;
	const struct pylayout *L = &py;
	uintptr_t frame;
	if (L->frame_in_ts) {
		frame = ld(ts + L->ts_current_frame);
	} else {
		uintptr_t cf = ld(ts + L->ts_cframe);
		frame = cf ? ld(cf + L->cf_current_frame) : 0;
	}
	size_t n = 0;
	for (size_t steps = 0; frame && n < PY_MAX; steps++) {
		if (steps == 4 * PY_MAX)
			return 0;
		uintptr_t code = ld(frame + L->fr_code) & L->code_mask;
		uintptr_t prev = ld(frame + L->fr_previous);
		int owner = *(const uint8_t *)(frame + L->fr_owner);
		if (owner > L->fr_entry_max || prev == frame)
			return 0;
		uintptr_t here = frame;
		frame = prev;
		if (owner > L->fr_owner_max) { /* an entry frame on the C stack */
			if (n)
				entry[n - 1] = 1;
			continue;
		}
		if (!code || ld(code + L->ob_type) != py_code_type)
			return 0;
		codes[n] = code;
		entry[n] = L->fr_is_entry && *(const uint8_t *)(here + L->fr_is_entry);
		n++;
	}
	if (n)
		entry[n - 1] = 1;
	return n;
}

static void py_str_locked(uintptr_t s)
{
	const struct pylayout *L = &py;
	uint32_t st = *(const uint32_t *)(s + L->str_state);
	uint64_t len = ld(s + L->str_length);
	unsigned kind = (st >> 2) & 7, compact = (st >> 5) & 1, ascii = (st >> 6) & 1;
	if (!compact || (kind != 1 && kind != 2 && kind != 4) || (ascii && kind != 1)) {
		put_u8(0);
		put_u32(0);
		return;
	}
	if (len > PY_MAX_STR)
		len = PY_MAX_STR;
	put_u8((uint8_t)kind);
	put_u32((uint32_t)len);
	put((const void *)(s + (ascii ? L->str_ascii_data : L->str_compact_data)), len * kind);
}

/* A 'C' record for code unless written already (the same names at the
 * same address). */
static void py_code_locked(uintptr_t code)
{
	const struct pylayout *L = &py;
	uintptr_t qn = ld(code + L->co_qualname), fn = ld(code + L->co_filename);
	size_t h = (size_t)(((uint64_t)code >> 4) * 0x9e3779b97f4a7c15ULL >> 40) & (PY_SEEN - 1);
	size_t at = h;
	for (size_t i = 0; i < 8; i++) {
		size_t j = (h + i) & (PY_SEEN - 1);
		if (py_seen[j].code == code) {
			if (py_seen[j].qualname == qn && py_seen[j].filename == fn)
				return;
			at = j;
			break;
		}
		if (!py_seen[j].code) {
			at = j;
			break;
		}
	}
	py_seen[at].code = code;
	py_seen[at].qualname = qn;
	py_seen[at].filename = fn;
	put_u8('C');
	put_u64(code);
	put_u32(*(const uint32_t *)(code + L->co_firstlineno));
	py_str_locked(qn);
	py_str_locked(fn);
}

/* ---- locks a signal handler may meet ---- */

#define FENCE() atomic_signal_fence(memory_order_seq_cst)

/* Is this the process the output is for? Not in a vfork child, nor in a
 * raw clone's child (no fork handler ran): a syscall, so only where
 * something would be written. */
static int owner(void) { return (pid_t)syscall(SYS_getpid) == owner_pid; }

/* A sampled block's free: its 'F' record (under mu) */
static void freed_locked(uintptr_t a, uint64_t t)
{
	if (table_del_locked(a) && out_fd >= 0 && owner()) {
		put_u8('F');
		put_u64(t);
		put_u64((uint64_t)a);
	}
}

/* the frees this thread's handlers queued while it held mu (under mu;
 * a handler landing here queues more, seen by the next round) */
static void pend_drain_locked(void)
{
	unsigned done = 0, n;
	while ((n = __atomic_load_n(&pend_n, __ATOMIC_RELAXED)) != 0) {
		for (; done < n && done < PEND_MAX; done++)
			freed_locked(pend[done].addr, pend[done].t);
		if (__atomic_compare_exchange_n(&pend_n, &n, 0, 0, __ATOMIC_RELAXED,
						__ATOMIC_RELAXED))
			break;
	}
}

static void mu_lock(void)
{
	hold_mu++;
	FENCE();
	pthread_mutex_lock(&mu);
}

static void mu_unlock(void)
{
	for (;;) {
		pend_drain_locked();
		pthread_mutex_unlock(&mu);
		FENCE();
		hold_mu--;
		FENCE();
		/* a handler that came between the drain and here queued its
		 * free: record it now, not at some later sample */
		if (hold_mu || !__atomic_load_n(&pend_n, __ATOMIC_RELAXED))
			return;
		mu_lock();
	}
}

static void tc_lock(void)
{
	hold_tc++;
	FENCE();
	pthread_mutex_lock(&tc_mu);
}

static void tc_unlock(void)
{
	pthread_mutex_unlock(&tc_mu);
	FENCE();
	hold_tc--;
}

/* n more in a counter only this thread writes, in one instruction: a
 * signal handler on this thread cannot land between a load and a store
 * and have its count overwritten (x86-64: an add to memory, not locked,
 * as no other thread writes the line; elsewhere an atomic add) */
static inline void bump(_Atomic uint64_t *v, uint64_t n)
{
#if defined(__x86_64__)
	__asm__ volatile("addq %1, %0" : "+m"(*(uint64_t *)v) : "er"(n));
#else
	atomic_fetch_add_explicit(v, n, memory_order_relaxed);
#endif
}

/* ---- loaded objects ---- */

static int objects_count(struct dl_phdr_info *info, size_t size, void *out)
{
	if (size >= offsetof(struct dl_phdr_info, dlpi_subs) + sizeof(info->dlpi_subs)) {
		((unsigned long long *)out)[0] = info->dlpi_adds;
		((unsigned long long *)out)[1] = info->dlpi_subs;
	}
	return 1; /* the counters are the process's: the first object tells */
}

/* objects loaded and unloaded so far (dlopen, dlmopen, libc's own loads,
 * dlclose): where they differ from seen_*, the maps are stale */
static void objects_now(unsigned long long *adds, unsigned long long *subs)
{
	unsigned long long c[2] = {0, 0};
	dl_iterate_phdr(objects_count, c);
	*adds = c[0];
	*subs = c[1];
}

/* ---- sampling ---- */

/* sample()'s end: a free queued by a handler after mu's release is
 * recorded now */
static void sample_leave(void)
{
	FENCE();
	hold_mu--;
	FENCE();
	if (!hold_mu && __atomic_load_n(&pend_n, __ATOMIC_RELAXED)) {
		mu_lock();
		mu_unlock();
	}
}

static void sample(void *p, size_t size)
{
	if (!p || atomic_load_explicit(&state, memory_order_relaxed) != 2 || !owner())
		return;
	/* from here to the end: a handler's allocation on this thread is
	 * counted, not sampled (nor is the unwinder entered twice) */
	hold_mu++;
	FENCE();
	void *pcs[MAX_FRAMES];
	int got = backtrace(pcs, MAX_FRAMES), n = 0;
	/* our frames (the allocator's, the wrapped main) are not the program's */
	for (int i = 0; i < got; i++)
		if ((uintptr_t)pcs[i] < self_lo || (uintptr_t)pcs[i] >= self_hi)
			pcs[n++] = pcs[i];
	/* after the stack: an object its frames are in was loaded before */
	unsigned long long adds, subs;
	objects_now(&adds, &subs);
	/* an embedding program may load libpython late; a sample taken while
	 * its dlopen is still under way sees it counted but not yet usable, so
	 * the next samples ask again (a bounded number of times: a program
	 * that is no Python pays for a few lookups per load, not forever) */
	if (adds != __atomic_load_n(&seen_adds, __ATOMIC_RELAXED) ||
	    subs != __atomic_load_n(&seen_subs, __ATOMIC_RELAXED))
		__atomic_store_n(&py_tries, 64, __ATOMIC_RELAXED);
	if (!atomic_load(&py_on) && __atomic_load_n(&py_tries, __ATOMIC_RELAXED) > 0) {
		__atomic_fetch_sub(&py_tries, 1, __ATOMIC_RELAXED);
		py_find();
	}
	uintptr_t codes[PY_MAX];
	uint8_t entry[PY_MAX];
	size_t npy = py_walk(codes, entry);
	uint64_t t = now_ns();
	mu_lock();
	if (adds != seen_adds || subs != seen_subs) {
		__atomic_store_n(&seen_adds, adds, __ATOMIC_RELAXED);
		__atomic_store_n(&seen_subs, subs, __ATOMIC_RELAXED);
		maps_dirty = 1; /* the new objects' code is in this sample's maps */
	}
	if (out_fd >= 0) {
		if (table_add_locked((uintptr_t)p) != 0) {
			atomic_fetch_add(&dropped, 1);
		} else {
			if (maps_dirty)
				maps_locked();
			sampled_any = 1;
			for (size_t i = 0; i < npy; i++)
				py_code_locked(codes[i]);
			put_u8('A');
			put_u64(t);
			put_u64((uint64_t)(uintptr_t)p);
			put_u64(size);
			if (!t_tid)
				t_tid = (uint32_t)syscall(SYS_gettid);
			put_u32(t_tid);
			put_u32((uint32_t)n);
			for (int i = 0; i < n; i++)
				put_u64((uint64_t)(uintptr_t)pcs[i]);
			if (npy) {
				put_u8('P');
				put_u32((uint32_t)npy);
				for (size_t i = 0; i < npy; i++) {
					put_u64(codes[i]);
					put_u8(entry[i]);
				}
			}
		}
	}
	mu_unlock();
	sample_leave();
}

/* a free line for this thread, or NULL (no memory: it counts in the
 * shared totals) */
static struct tcount *tcount_take(void)
{
	tc_lock();
	struct tcount *c = tcounts;
	while (c && c->used)
		c = c->next;
	if (!c) {
		size_t n = 4096 / sizeof(*c);
		struct tcount *page = raw_pages(n * sizeof(*c));
		for (size_t i = 0; page && i < n; i++) {
			page[i].next = tcounts;
			tcounts = &page[i];
		}
		c = page;
	}
	if (c)
		c->used = 1;
	tc_unlock();
	return c;
}

static void thread_gone(void *arg)
{
	struct tcount *c = arg;
	/* a handler from here on counts in the shared totals (hold_tc), not
	 * in the line being given back */
	tc_lock();
	t_count = NULL;
	FENCE();
	atomic_fetch_add(&calls, atomic_load_explicit(&c->calls, memory_order_relaxed));
	atomic_fetch_add(&bytes, atomic_load_explicit(&c->bytes, memory_order_relaxed));
	atomic_store_explicit(&c->calls, 0, memory_order_relaxed);
	atomic_store_explicit(&c->bytes, 0, memory_order_relaxed);
	c->used = 0;
	tc_unlock();
	/* an allocation by a later destructor takes a line again (glibc
	 * runs the destructors again for a key set by one) */
}

/* the totals: what exited threads added and what live ones hold */
static void count_totals(uint64_t *ncalls, uint64_t *nbytes)
{
	tc_lock();
	uint64_t c = atomic_load(&calls), b = atomic_load(&bytes);
	for (struct tcount *t = tcounts; t; t = t->next) {
		c += atomic_load_explicit(&t->calls, memory_order_relaxed);
		b += atomic_load_explicit(&t->bytes, memory_order_relaxed);
	}
	tc_unlock();
	*ncalls = c;
	*nbytes = b;
}

static inline void counted(void *p, size_t size)
{
	if (!p || busy)
		return;
	struct tcount *c = t_count;
	if (__builtin_expect(!c, 0)) {
		/* lines only while sampling, where the key that frees a line at
		 * its thread's exit exists: a process whose sampler is off (no
		 * key) would take a line per thread, never given back, and
		 * count for no one */
		if (atomic_load_explicit(&state, memory_order_relaxed) != 2)
			return;
		/* a handler on a thread taking or giving back its line: the
		 * shared totals, not tc_mu (the thread holds it) */
		c = tc_key_ok && !hold_tc ? tcount_take() : NULL;
		if (!c) {
			atomic_fetch_add_explicit(&calls, 1, memory_order_relaxed);
			atomic_fetch_add_explicit(&bytes, size, memory_order_relaxed);
			return;
		}
		/* set before the key: setspecific may allocate and come back */
		t_count = c;
		pthread_setspecific(tc_key, c);
	}
	bump(&c->calls, 1);
	bump(&c->bytes, size);
	if (!left)
		left = draw();
	left -= (int64_t)(size ? size : 1);
	if (left > 0)
		return;
	left = draw();
	if (hold_mu) {
		/* a handler's, while its thread samples or holds mu: counted,
		 * but its sample cannot be taken without waiting on ourselves */
		atomic_fetch_add_explicit(&dropped, 1, memory_order_relaxed);
		return;
	}
	sample(p, size);
}

static inline void released(void *p)
{
	size_t f = filter_of((uintptr_t)p);
	if (!(atomic_load_explicit(&filter_bits[f / 64], memory_order_relaxed) >> (f % 64) & 1))
		return;
	uint64_t t = now_ns();
	if (hold_mu) {
		/* a handler's free while its thread holds mu: queued for the
		 * thread to record as it lets go */
		unsigned i = __atomic_fetch_add(&pend_n, 1, __ATOMIC_RELAXED);
		if (i < PEND_MAX) {
			pend[i].addr = (uintptr_t)p;
			pend[i].t = t;
		} else {
			atomic_fetch_add_explicit(&dropped, 1, memory_order_relaxed);
		}
		return;
	}
	mu_lock();
	freed_locked((uintptr_t)p, t);
	mu_unlock();
}

/* ---- start, fork, exit ---- */

/* The totals and the last maps, at the process's exit. hooks: called by
 * the atexit handler or the destructor (not by _exit or the wrappers). */
static void finish(int hooks)
{
	if (!owner()) {
		/* a child in our memory (vfork, clone(CLONE_VM)) ending: the
		 * file and the sampling are the parent's, which goes on. Its
		 * exit() has used up the parent's exit handlers, ours too */
		if (hooks)
			atomic_store(&hooks_lost, 1);
		return;
	}
	/* a signal handler's exit while its thread is in a locked section:
	 * what the lock guards is half-written. Left as a kill leaves it */
	if (hold_mu || hold_tc)
		return;
	if (atomic_exchange(&state, 3) != 2)
		return;
	uint64_t ncalls, nbytes;
	count_totals(&ncalls, &nbytes);
	unsigned long long adds, subs;
	objects_now(&adds, &subs);
	mu_lock();
	if (adds != seen_adds || subs != seen_subs)
		maps_dirty = 1;
	if (out_fd >= 0) {
		if (maps_dirty && sampled_any) /* bench --alloc samples nothing: no maps */
			maps_locked();
		put_u8('E');
		put_u64(now_ns());
		put_u64(ncalls);
		put_u64(nbytes);
		put_u64(atomic_load(&dropped));
		flush_locked();
		close(out_fd);
		out_fd = -1;
	}
	mu_unlock();
}

static void finish_hook(void) { finish(1); }

/* fork() is async-signal-safe: one from a handler whose thread holds our
 * locks takes none (the child starts afresh all the same) */
static TLS int fork_unlocked;
static void at_fork_prepare(void)
{
	fork_unlocked = hold_mu || hold_tc;
	if (fork_unlocked)
		return;
	tc_lock();
	mu_lock();
}
static void at_fork_parent(void)
{
	if (fork_unlocked)
		return;
	mu_unlock();
	tc_unlock();
}
static void at_fork_child(void)
{
	/* the parent writes what its buffer holds; the child starts its own
	 * file (its inherited blocks' frees are not its allocations: the
	 * reader ignores frees of blocks it never saw) */
	pthread_mutex_init(&mu, NULL);
	owner_pid = (pid_t)syscall(SYS_getpid);
	hold_mu = hold_tc = 0;
	pend_n = 0; /* the parent records those frees */
	buf_len = 0;
	if (out_fd >= 0)
		close(out_fd);
	out_fd = -1;
	atomic_store(&calls, 0);
	atomic_store(&bytes, 0);
	/* the other threads are gone in the child: their lines are free */
	pthread_mutex_init(&tc_mu, NULL);
	for (struct tcount *c = tcounts; c; c = c->next) {
		atomic_store(&c->calls, 0);
		atomic_store(&c->bytes, 0);
		c->used = c == t_count;
	}
	t_tid = 0;
	atomic_store(&dropped, 0);
	memset(py_seen, 0, sizeof py_seen); /* the names go in the child's file too */
	if (atomic_load(&state) == 2)
		open_output_locked();
}

/* this library's loaded extent, from its program headers */
static int self_extent(struct dl_phdr_info *info, size_t size, void *base)
{
	(void)size;
	if ((void *)info->dlpi_addr != base)
		return 0;
	for (int i = 0; i < info->dlpi_phnum; i++) {
		const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
		if (ph->p_type != PT_LOAD || !(ph->p_flags & PF_X))
			continue;
		uintptr_t lo = info->dlpi_addr + ph->p_vaddr, hi = lo + ph->p_memsz;
		if (!self_lo || lo < self_lo)
			self_lo = lo;
		if (hi > self_hi)
			self_hi = hi;
	}
	return 1;
}

static void resolve(void)
{
	int expect = 0;
	if (!atomic_compare_exchange_strong(&state, &expect, 1))
		return;
	real_malloc = dlsym(RTLD_NEXT, "malloc");
	real_calloc = dlsym(RTLD_NEXT, "calloc");
	real_realloc = dlsym(RTLD_NEXT, "realloc");
	real_free = dlsym(RTLD_NEXT, "free");
	real_posix_memalign = dlsym(RTLD_NEXT, "posix_memalign");
	real_aligned_alloc = dlsym(RTLD_NEXT, "aligned_alloc");
	real_memalign = dlsym(RTLD_NEXT, "memalign");
	real_valloc = dlsym(RTLD_NEXT, "valloc");
	real_pvalloc = dlsym(RTLD_NEXT, "pvalloc");
	real_mmap = dlsym(RTLD_NEXT, "mmap");
	real_munmap = dlsym(RTLD_NEXT, "munmap");
	real_exit = dlsym(RTLD_NEXT, "_exit");
	real_libc_exit = dlsym(RTLD_NEXT, "exit");
	*(void **)&real_start_main = dlsym(RTLD_NEXT, "__libc_start_main");
	owner_pid = (pid_t)syscall(SYS_getpid);
	const char *dir = getenv("PERFLOOP_ALLOC_DIR");
	const char *r = getenv("PERFLOOP_ALLOC_RATE");
	if (r && strtoull(r, NULL, 10) > 0)
		rate = strtoull(r, NULL, 10);
	if (!dir || !*dir || strlen(dir) >= sizeof(out_dir) || !real_malloc || !real_free ||
	    !real_mmap || !real_munmap) {
		atomic_store(&state, 3);
		return;
	}
	snprintf(out_dir, sizeof(out_dir), "%s", dir);
	Dl_info info;
	if (dladdr((void *)resolve, &info) && info.dli_fbase)
		dl_iterate_phdr(self_extent, info.dli_fbase);
	filter = raw_pages(sizeof(*filter) << FILTER_BITS);
	if (!filter) {
		atomic_store(&state, 3);
		return;
	}
	/* backtrace loads the unwinder on first use (it allocates): now */
	busy = 1;
	void *warm[4];
	backtrace(warm, 4);
	busy = 0;
	py_find();
	objects_now(&seen_adds, &seen_subs); /* the maps are read at the first sample */
	pthread_atfork(at_fork_prepare, at_fork_parent, at_fork_child);
	tc_key_ok = pthread_key_create(&tc_key, thread_gone) == 0;
	mu_lock();
	open_output_locked();
	mu_unlock();
	if (out_fd >= 0) {
		atomic_store(&state, 2);
		atexit(finish_hook);
	}
}

/* The end of a Python program's own code. Its interpreter's teardown
 * frees every module's globals (what the program kept), so "live at exit"
 * was always 0 B. An atexit callback registered first runs last of them,
 * after the program's own and before the teardown: it writes a 'Z' record.
 * It is registered from an audit hook (PySys_AddAuditHook is documented
 * safe before Py_Initialize) at the first cpython.run_* event (run_file,
 * run_command, run_module, run_stdin: the interpreter is up and the GIL
 * held), through the stable C API found with dlsym. (The audit event of
 * the teardown itself, cpython._PySys_ClearAuditHooks, comes after the
 * modules are freed: too late.) */
struct py_methoddef { /* PyMethodDef, stable ABI */
	const char *name;
	void *(*meth)(void *, void *);
	int flags;
	const char *doc;
};
static int fin_hooked;
static void *(*py_none_ref)(const char *, ...); /* Py_BuildValue */

static void *fin_callback(void *self, void *unused)
{
	(void)self;
	(void)unused;
	if (owner()) {
		int was = busy;
		busy = 1;
		mu_lock();
		if (out_fd >= 0) {
			put_u8('Z');
			put_u64(now_ns());
		}
		mu_unlock();
		busy = was;
	}
	return py_none_ref(""); /* None, a new reference */
}

static struct py_methoddef fin_def = {"_perfloop_alloc_end", fin_callback, 0x0004 /* METH_NOARGS */,
				       NULL};

static void fin_register(void)
{
	void *(*import)(const char *) = NULL, *(*getattr)(void *, const char *) = NULL,
	     *(*newfn)(void *, void *, void *) = NULL, *(*call)(void *, ...) = NULL;
	void (*decref)(void *) = NULL, (*clear)(void) = NULL;
	*(void **)&import = dlsym(RTLD_DEFAULT, "PyImport_ImportModule");
	*(void **)&getattr = dlsym(RTLD_DEFAULT, "PyObject_GetAttrString");
	*(void **)&newfn = dlsym(RTLD_DEFAULT, "PyCFunction_NewEx");
	*(void **)&call = dlsym(RTLD_DEFAULT, "PyObject_CallFunctionObjArgs");
	*(void **)&decref = dlsym(RTLD_DEFAULT, "Py_DecRef");
	*(void **)&clear = dlsym(RTLD_DEFAULT, "PyErr_Clear");
	*(void **)&py_none_ref = dlsym(RTLD_DEFAULT, "Py_BuildValue");
	if (!import || !getattr || !newfn || !call || !decref || !clear || !py_none_ref)
		return;
	void *mod = import("atexit");
	void *reg = mod ? getattr(mod, "register") : NULL;
	void *fn = reg ? newfn(&fin_def, NULL, NULL) : NULL;
	void *r = fn ? call(reg, fn, NULL) : NULL;
	if (!r)
		clear(); /* never leave the program an exception of ours */
	if (r)
		decref(r);
	if (fn)
		decref(fn);
	if (reg)
		decref(reg);
	if (mod)
		decref(mod);
}

static int fin_hook(const char *event, void *args, void *user)
{
	(void)args;
	(void)user;
	if (fin_hooked || strncmp(event, "cpython.run_", 12) != 0 || !owner())
		return 0;
	fin_hooked = 1; /* before the import, whose own events come back here */
	int was = busy;
	busy = 1; /* the interpreter's allocations for it are ours */
	fin_register();
	busy = was;
	return 0;
}

/* Hooked at start only, before the interpreter runs; a libpython loaded
 * later is not hooked: calling into it from inside malloc could run Python
 * code. */
static void py_hook_finalize(void)
{
	if (!atomic_load(&py_on))
		return;
	int (*add)(int (*)(const char *, void *, void *), void *) = NULL;
	busy = 1;
	*(void **)&add = dlsym(RTLD_DEFAULT, "PySys_AddAuditHook");
	busy = 0;
	if (add)
		add(fin_hook, NULL);
}

__attribute__((constructor)) static void start(void)
{
	resolve();
	if (atomic_load(&state) == 2)
		py_hook_finalize();
}
__attribute__((destructor)) static void stop(void) { finish(1); }

static inline int ready(void)
{
	int s = atomic_load_explicit(&state, memory_order_acquire);
	if (s == 0) {
		resolve();
		s = atomic_load(&state);
	}
	return s;
}

/* ---- the interposed functions ---- */

EXPORT void *malloc(size_t n)
{
	if (ready() == 1 && !real_malloc)
		return boot_alloc(n);
	void *p = real_malloc(n);
	counted(p, n);
	return p;
}

EXPORT void *calloc(size_t k, size_t n)
{
	if (ready() == 1 && !real_calloc) {
		if (n && k > SIZE_MAX / n)
			return NULL;
		return boot_alloc(k * n); /* static storage: already zero */
	}
	void *p = real_calloc(k, n);
	counted(p, k * n);
	return p;
}

EXPORT void free(void *p)
{
	if (!p || in_boot(p))
		return;
	if (ready() == 1 && !real_free)
		return;
	released(p);
	real_free(p);
}

EXPORT void *realloc(void *p, size_t n)
{
	if (in_boot(p)) {
		void *q = malloc(n);
		size_t room = (size_t)(boot + sizeof(boot) - (char *)p);
		if (q)
			memcpy(q, p, n < room ? n : room);
		return q;
	}
	if (ready() == 1 && !real_realloc)
		return boot_alloc(n);
	released(p);
	void *q = real_realloc(p, n);
	counted(q, n);
	return q;
}

EXPORT void *reallocarray(void *p, size_t k, size_t n)
{
	if (n && k > SIZE_MAX / n) {
		errno = ENOMEM;
		return NULL;
	}
	return realloc(p, k * n);
}

EXPORT int posix_memalign(void **out, size_t align, size_t n)
{
	ready();
	int rc = real_posix_memalign(out, align, n);
	if (rc == 0)
		counted(*out, n);
	return rc;
}

EXPORT void *aligned_alloc(size_t align, size_t n)
{
	ready();
	void *p = real_aligned_alloc(align, n);
	counted(p, n);
	return p;
}

EXPORT void *memalign(size_t align, size_t n)
{
	ready();
	void *p = real_memalign(align, n);
	counted(p, n);
	return p;
}

EXPORT void *valloc(size_t n)
{
	ready();
	void *p = real_valloc(n);
	counted(p, n);
	return p;
}

EXPORT void *pvalloc(size_t n)
{
	ready();
	void *p = real_pvalloc(n);
	counted(p, n);
	return p;
}

EXPORT void *mmap(void *addr, size_t len, int prot, int flags, int fd, off_t off)
{
	if (!real_mmap)
		return (void *)syscall(SYS_mmap, addr, len, prot, flags, fd, off);
	void *p = real_mmap(addr, len, prot, flags, fd, off);
	if (p != MAP_FAILED && (flags & MAP_ANONYMOUS))
		counted(p, len);
	return p;
}

EXPORT void *mmap64(void *addr, size_t len, int prot, int flags, int fd, off_t off)
{
	return mmap(addr, len, prot, flags, fd, off);
}

EXPORT int munmap(void *addr, size_t len)
{
	if (!real_munmap)
		return (int)syscall(SYS_munmap, addr, len);
	released(addr);
	return real_munmap(addr, len);
}

/* ---- the process's end ---- */

EXPORT void _exit(int code)
{
	finish(0);
	if (real_exit)
		real_exit(code);
	syscall(SYS_exit_group, code);
	__builtin_unreachable();
}

EXPORT void _Exit(int code) { _exit(code); }

/* exit() and main's return: where the atexit handlers and destructors are
 * gone (hooks_lost), the totals are written here; otherwise by them, as
 * late as they run (the program's own exit handlers allocate too) */
EXPORT void exit(int code)
{
	if (atomic_load(&hooks_lost))
		finish(0);
	if (!real_libc_exit)
		*(void **)&real_libc_exit = dlsym(RTLD_NEXT, "exit");
	if (real_libc_exit)
		real_libc_exit(code);
	syscall(SYS_exit_group, code);
	__builtin_unreachable();
}

static int wrapped_main(int argc, char **argv, char **envp)
{
	int rc = real_main(argc, argv, envp);
	if (atomic_load(&hooks_lost))
		finish(0);
	return rc;
}

EXPORT int __libc_start_main(main_fn m, int argc, char **argv, void (*init)(void),
			     void (*fini)(void), void (*rtld_fini)(void), void *stack_end)
{
	if (!real_start_main)
		*(void **)&real_start_main = dlsym(RTLD_NEXT, "__libc_start_main");
	real_main = m;
	return real_start_main(wrapped_main, argc, argv, init, fini, rtld_fini, stack_end);
}
