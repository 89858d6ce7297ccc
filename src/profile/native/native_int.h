/*
 * Private to the native profiler (src/profile/native/native*.c): no other
 * file includes it; callers use native.h. The state one sampling run (or
 * one pl_native_syms) holds, struct nat, and what its files share: each
 * section below names the file that defines it. native.c runs the loop and
 * keeps the stacks as sampled; native_rings.c opens the perf events and
 * reads their records; native_maps.c knows each process's mappings (a
 * container's files by /proc/PID/root); native_unwind.c unwinds with libdw;
 * native_syms.c turns (file, address) into frames.
 */
#ifndef PL_NATIVE_INT_H
#define PL_NATIVE_INT_H

#include <elfutils/libdw.h>
#include <elfutils/libdwfl.h>
#include <linux/perf_event.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/types.h>

#include "error.h"
#include "native.h"

#define MAX_DEPTH 1024
#define NO_FILE (-1)
#define VDSO_FILE (-2) /* the kernel's [vdso]: named, not read */

struct nfile {
	char *path;	  /* as mapped (" (deleted)" removed) */
	const char *name; /* its basename */
	const char *show; /* path as the process names it (no /proc/PID/root) */
	int state;	  /* 0 not loaded, 1 loaded, -1 unreadable */
	int is_exec;	  /* ET_EXEC: addresses are absolute */
	int is_interp;	  /* python3.x or libpython3.x */
	int exec_known;	  /* the header was read (or tried) */
	uint64_t entry;	  /* e_entry: where _start is, named or not */
	struct {
		uint64_t vaddr, offset, filesz, memsz;
		uint32_t flags;
	} load[16]; /* PT_LOAD segments: a mapping's file offset -> address */
	int nload;
	Dwfl *dwfl; /* offline, the file alone at its own addresses */
	Dwfl_Module *mod;
	/* its compile units by address, for a file without .debug_aranges
	 * (clang and rustc write none by default, and libdw 0.188 finds no
	 * unit for an address without them: no lines, no inlined frames) */
	struct curange *cur;
	size_t ncur;
	int cur_built;
	/* its function symbols by address (libdw 0.188 scans the whole table
	 * for each address: libtorch's, on every new PC) */
	struct nsym *syms;
	size_t nsyms;
	int syms_built;
};

struct nsym {
	uint64_t lo, hi;
	const char *name; /* in the module's string table */
};

struct curange {
	uint64_t lo, hi;
	Dwarf_Off die; /* the unit's DIE */
};

struct nmap {
	uint64_t start, end, pgoff;
	int file;	   /* index in files, NO_FILE for anonymous memory */
	int reported;	   /* in the process's unwinding Dwfl */
	uint64_t t;	   /* its MMAP2 record's time (0: read from /proc) */
	uint64_t ilo, ihi; /* where its file's segments lie, first to last */
	int segs;	   /* the file read is the one mapped: its segments say where it lies */
};

struct nproc {
	pid_t pid;
	struct nmap *maps; /* sorted by start, not overlapping */
	size_t n, cap;
	Dwfl *dwfl; /* for DWARF unwinding: every mapped module at its address */
	int attached, dirty;
	int stale;  /* a reported module was unmapped or mapped over: report all anew */
	long frame; /* synthetic "process" frame, -1 none */
	char comm[32];
	char root[512]; /* where its "/" is on this host ("" for "/"), read once per exec */
	int root_known;
	int other_ns; /* in another mount namespace (a container): files by /proc/PID/root */
	/* --memory: /proc/PID/statm (-1 not open, -2 gone), its RSS last read,
	 * and its latest sample's raw stack (hash, token offset) */
	int statm_fd;
	double rss;
	uint64_t mem_hash;
	uint32_t mem_off;
	int mem_has;
	uint64_t exec_t; /* its latest exec's COMM record time */
};

/* (file, address) -> the frames it symbolizes to, innermost first */
struct fkey {
	int file;
	uint64_t addr;
	uint32_t off, n; /* in nat.fids */
	int used;
};

/* a distinct stack as sampled: tokens leaf first, (file + 1) << 48 | file
 * address, or TAG | a frame id already interned (synthetic, [kernel]...) */
struct rawstk {
	uint64_t hash, count;
	uint32_t off, len;
	int used;
	double grow; /* --memory: bytes of RSS growth charged to it */
};
#define TAG (0xffffULL << 48)
#define ADDR_MASK ((1ULL << 48) - 1)

/* the sample being unwound, for libdw's callbacks */
struct unw {
	pid_t tid;
	uint64_t regs[17]; /* DWARF order: rax rdx rcx rbx rsi rdi rbp rsp r8-r15 rip */
	const uint8_t *stack;
	uint64_t sp, stack_len;
	uint64_t *pcs;
	size_t n, max;
};

struct ring {
	int fd;
	void *base;
	size_t size; /* data area */
};

#define ENTRY_MEMO 256
struct entry_memo {
	uint64_t key;
	int is, used;
};

struct nat {
	const struct pl_native_opts *o;
	struct entry_memo entry_memo[ENTRY_MEMO];
	uint64_t last_hash; /* the raw stack raw_add() last counted */
	uint32_t last_off;
	int peak_has; /* --memory: the raw stack charged when the total RSS peaked */
	uint64_t peak_hash;
	uint32_t peak_off;
	struct pl_native_stats *st;
	struct pl_prof *prof;
	struct nfile *files;
	size_t nfiles, capfiles;
	struct nproc *procs;
	size_t nprocs, capprocs;
	struct fkey *keys;
	size_t nkeys, capkeys;
	uint32_t *fids;
	size_t nfids, capfids;
	struct ring *rings;
	size_t nrings;
	int *fds; /* every event fd */
	size_t nfds, capfds;
	uint64_t sample_type;
	size_t nregs;
	uint8_t scratch[65536];
	uint64_t pcs[MAX_DEPTH];
	uint64_t kpcs[128]; /* this sample's kernel frames (--kernel), leaf first */
	size_t nkpcs;
	uint32_t ids[MAX_DEPTH * 4 + 4];
	struct unw u;
	long kernel_frame, unknown_frame, anon_frame, vdso_frame;
	int vdso_fi; /* the [vdso] copy's file index + 1; 0 not made yet, -1 none */
	int vdso_fd; /* the memfd holding it (valid while vdso_fi > 0) */
	uint64_t vdso_len;
	size_t page;
	int oom;
	/* native mode's stacks as sampled, symbolized only at the end, so that
	 * reading symbols and debug info (even from debuginfod) never keeps
	 * perfloop from draining the rings */
	struct rawstk *raw;
	size_t nraw, capraw;
	uint64_t *tok;
	size_t ntok, captok;
	uint64_t cur[MAX_DEPTH + 8];
	struct pl_native_opts own_o; /* pl_native_syms_new's */
	uint32_t fids_one;
	uint64_t maps_hash; /* of /proc/PID/maps when last read */
};

/* ---- native.c: the stacks as sampled ---- */

void pl_native_add_stack(struct nat *N, struct nproc *p, pid_t tid, const uint64_t *pcs, size_t n,
			 int in_kernel);

/* ---- native_rings.c: perf events, their rings and records ---- */

void pl_native_init_attr(struct nat *N, struct perf_event_attr *a, int launched);
/* Open the sampling event for one task on every CPU; the first task's
 * events own the rings, later ones write into them. */
int pl_native_open_task(struct nat *N, struct perf_event_attr *a, pid_t pid, int ncpu,
			struct pl_error *err);
/* Every record the ring holds, handled; the ring's tail moved past them. */
void pl_native_drain(struct nat *N, struct ring *r);

/* ---- native_maps.c: processes and their maps ---- */

struct nproc *pl_native_proc_get(struct nat *N, pid_t pid, int create);
/* A new program in p: its maps are forgotten, but for those recorded after
 * `after` (pl_native_proc_reset: all of them). */
void pl_native_proc_reset_after(struct nproc *p, uint64_t after);
void pl_native_proc_reset(struct nproc *p);
/* A file as p names it, as a file index (a container's under /proc/PID/root). */
int pl_native_proc_file_index(struct nat *N, struct nproc *p, const char *name);
void pl_native_map_add(struct nat *N, struct nproc *p, uint64_t start, uint64_t len, uint64_t pgoff,
		       int file, uint64_t t, int segs);
const struct nmap *pl_native_map_find(const struct nproc *p, uint64_t addr);
/* The executable mappings of a running process, as MMAP2 records would
 * have told (for -p), or of a copy of its /proc/PID/maps (f). Returns a
 * hash of the file (0 when unreadable). */
uint64_t pl_native_maps_from_proc(struct nat *N, struct nproc *p);
uint64_t pl_native_maps_from(struct nat *N, struct nproc *p, FILE *f);

/* ---- native_unwind.c: DWARF unwinding with libdw ---- */

/* dwfl_getthread_frames' callback: each frame's pc into the struct unw */
int pl_native_frame_cb(Dwfl_Frame *state, void *arg);
/* Bring the process's unwinding Dwfl up to date with its maps. */
int pl_native_proc_dwfl(struct nat *N, struct nproc *p);

/* ---- native_syms.c: files and symbolization ---- */

/* how the unwinder's Dwfl finds a process's ELF files, and their debug
 * info as the symbolizer finds it */
extern const Dwfl_Callbacks pl_native_proc_cb;
/* a kernel address's function (/proc/kallsyms), or NULL */
const char *pl_native_ksym_name(uint64_t addr);
/* The file index for a process's [vdso] mapping of len bytes: a copy of
 * perfloop's own vDSO, or VDSO_FILE (named, not read) where there is none
 * of that size */
int pl_native_vdso_file(struct nat *N, uint64_t len);

/* a path's index in N->files, added when new (NO_FILE out of memory) */
int pl_native_file_index(struct nat *N, const char *path);
/* The ELF type, entry point and PT_LOAD table, read once. */
void pl_native_file_header(struct nfile *f);
/* The load bias of a mapping: runtime address - file address. */
uint64_t pl_native_map_bias(const struct nfile *f, const struct nmap *m);
/* The file opened for symbols (once): 1, or -1 when it cannot be read. */
int pl_native_file_load(struct nfile *f);
/* Frames for (file, address), cached. Returns how many, stored at *ids. */
size_t pl_native_frames_for(struct nat *N, int fi, uint64_t addr, const uint32_t **ids);
/* Is a file address the program's or a thread's entry (remembered)? */
int pl_native_entry_fileaddr(struct nat *N, int fi, uint64_t addr);

#endif
