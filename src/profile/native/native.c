/*
 * Native stack sampling (see native.h).
 *
 * Written here rather than driving `perf record`: the product is one
 * command with no perf.data file, stacks unwound as they arrive and memory
 * bounded by what is distinct (frames, stacks), not by the run's length.
 * The pieces that are someone else's craft come from libraries: the kernel
 * samples, elfutils unwinds (CFI) and symbolizes (ELF, DWARF, debuginfo
 * lookup by build-id and .gnu_debuglink), libstdc++ demangles.
 */
#include "native.h"

#include <dlfcn.h>
#include <dwarf.h>
#include <elfutils/libdw.h>
#include <elfutils/libdwfl.h>
#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <linux/perf_event.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include <dirent.h>
#if defined(__x86_64__)
#include <asm/perf_regs.h>
#endif

#include "hash.h"
#include "monotime.h"
#include "counters.h"
#include "launch.h"

#define RING_PAGES 1024 /* the most tried: 4 MiB per CPU */
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
	Dwfl *dwfl;	  /* offline, the file alone at its own addresses */
	Dwfl_Module *mod;
	/* its compile units by address, for a file without .debug_aranges
	 * (clang and rustc write none by default, and libdw 0.188 finds no
	 * unit for an address without them: no lines, no inlined frames) */
	struct curange *cur;
	size_t ncur;
	int cur_built;
};

struct curange {
	uint64_t lo, hi;
	Dwarf_Off die; /* the unit's DIE */
};

struct nmap {
	uint64_t start, end, pgoff;
	int file; /* index in files, NO_FILE for anonymous memory */
	int reported; /* in the process's unwinding Dwfl */
	uint64_t t;   /* its MMAP2 record's time (0: read from /proc) */
	uint64_t ilo, ihi; /* where its file's segments lie, first to last */
	int segs;	   /* the file read is the one mapped: its segments say where it lies */
};

struct nproc {
	pid_t pid;
	struct nmap *maps; /* sorted by start, not overlapping */
	size_t n, cap;
	Dwfl *dwfl; /* for DWARF unwinding: every mapped module at its address */
	int attached, dirty;
	int stale; /* a reported module was unmapped or mapped over: report all anew */
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
	uint64_t maps_hash;	     /* of /proc/PID/maps when last read */
};

const char *pl_unwind_name(enum pl_unwind u)
{
	return u == PL_UNWIND_FP ? "fp" : u == PL_UNWIND_DWARF ? "dwarf" : "auto";
}

static uint64_t mix64(uint64_t x)
{
	x ^= x >> 33;
	x *= 0xff51afd7ed558ccdULL;
	x ^= x >> 33;
	x *= 0xc4ceb9fe1a85ec53ULL;
	return x ^ (x >> 33);
}

/* ---- demangling: libstdc++'s, found at run time (no C++ in the build) ---- */

typedef char *(*demangle_fn)(const char *, char *, size_t *, int *);

static char *demangle(const char *name)
{
	static int tried;
	static demangle_fn fn;
	if (!name || name[0] != '_' || name[1] != 'Z')
		return NULL;
	if (!tried) {
		tried = 1;
		void *h = dlopen("libstdc++.so.6", RTLD_LAZY | RTLD_LOCAL);
		if (h)
			*(void **)&fn = dlsym(h, "__cxa_demangle");
	}
	if (!fn)
		return NULL;
	int status = 0;
	char *out = fn(name, NULL, NULL, &status);
	if (status != 0) {
		free(out);
		return NULL;
	}
	return out;
}

/* ---- the kernel's symbols (/proc/kallsyms), for --kernel ---- */

struct ksym {
	uint64_t addr;
	char *name;
};

static int cmp_ksym(const void *a, const void *b)
{
	const struct ksym *x = a, *y = b;
	return (x->addr > y->addr) - (x->addr < y->addr);
}

/* Loaded once; NULL names where kptr_restrict hides the addresses. */
static size_t kallsyms(struct ksym **out)
{
	static struct ksym *tab;
	static size_t n;
	static int tried;
	if (!tried) {
		tried = 1;
		FILE *f = fopen("/proc/kallsyms", "r");
		size_t cap = 0;
		char line[512];
		while (f && fgets(line, sizeof(line), f)) {
			unsigned long long a;
			char type, name[256];
			if (sscanf(line, "%llx %c %255s", &a, &type, name) != 3 || a == 0)
				continue;
			if (type != 't' && type != 'T' && type != 'w' && type != 'W')
				continue;
			if (n == cap) {
				cap = cap ? cap * 2 : 65536;
				struct ksym *g = realloc(tab, cap * sizeof(*g));
				if (!g)
					break;
				tab = g;
			}
			tab[n].addr = a;
			tab[n].name = strdup(name);
			if (tab[n].name)
				n++;
		}
		if (f)
			fclose(f);
		if (n)
			qsort(tab, n, sizeof(*tab), cmp_ksym);
	}
	*out = tab;
	return n;
}

static const char *ksym_name(uint64_t addr)
{
	struct ksym *t;
	size_t n = kallsyms(&t), lo = 0, hi = n;
	if (!n || addr < t[0].addr)
		return NULL;
	while (hi - lo > 1) {
		size_t mid = (lo + hi) / 2;
		if (t[mid].addr <= addr)
			lo = mid;
		else
			hi = mid;
	}
	return t[lo].name;
}

/* ---- files and symbolization ---- */

static char *debuginfo_path;
static const Dwfl_Callbacks offline_cb = {
    .find_elf = dwfl_build_id_find_elf,
    .find_debuginfo = dwfl_standard_find_debuginfo,
    .section_address = dwfl_offline_section_address,
    .debuginfo_path = &debuginfo_path,
};
static const Dwfl_Callbacks proc_cb = {
    .find_elf = dwfl_linux_proc_find_elf,
    .find_debuginfo = dwfl_standard_find_debuginfo,
    .debuginfo_path = &debuginfo_path,
};

static int file_index(struct nat *N, const char *path)
{
	char clean[4096];
	snprintf(clean, sizeof(clean), "%s", path);
	size_t len = strlen(clean);
	if (len > 10 && strcmp(clean + len - 10, " (deleted)") == 0)
		clean[len - 10] = '\0';
	for (size_t i = 0; i < N->nfiles; i++)
		if (strcmp(N->files[i].path, clean) == 0)
			return (int)i;
	if (N->nfiles == N->capfiles) {
		size_t cap = N->capfiles ? N->capfiles * 2 : 64;
		struct nfile *g = realloc(N->files, cap * sizeof(*g));
		if (!g) {
			N->oom = 1;
			return NO_FILE;
		}
		N->files = g;
		N->capfiles = cap;
	}
	struct nfile *f = &N->files[N->nfiles];
	memset(f, 0, sizeof(*f));
	f->path = strdup(clean);
	if (!f->path) {
		N->oom = 1;
		return NO_FILE;
	}
	const char *slash = strrchr(f->path, '/');
	f->name = slash ? slash + 1 : f->path;
	/* a container's file, reached through /proc/PID/root, is shown by
	 * the path the process gave it */
	int skip = 0;
	sscanf(f->path, "/proc/%*[0-9]/root%n", &skip);
	f->show = skip && f->path[skip] == '/' ? f->path + skip : f->path;
	f->is_interp = strncmp(f->name, "python3", 7) == 0 || strncmp(f->name, "libpython3", 10) == 0;
	return (int)N->nfiles++;
}

/* The ELF type, entry point and PT_LOAD table. */
static void read_header(struct nfile *f, Elf *e)
{
	GElf_Ehdr eh;
	size_t n = 0;
	f->exec_known = 1;
	if (!e || !gelf_getehdr(e, &eh) || elf_getphdrnum(e, &n) != 0)
		return;
	f->is_exec = eh.e_type == ET_EXEC;
	f->entry = eh.e_entry;
	f->nload = 0;
	for (size_t i = 0; i < n && f->nload < 16; i++) {
		GElf_Phdr ph;
		if (!gelf_getphdr(e, (int)i, &ph) || ph.p_type != PT_LOAD)
			continue;
		f->load[f->nload].vaddr = ph.p_vaddr;
		f->load[f->nload].offset = ph.p_offset;
		f->load[f->nload].filesz = ph.p_filesz;
		f->load[f->nload].memsz = ph.p_memsz;
		f->load[f->nload].flags = ph.p_flags;
		f->nload++;
	}
}

static void file_header(struct nfile *f)
{
	if (f->exec_known)
		return;
	f->exec_known = 1;
	elf_version(EV_CURRENT); /* libdwfl calls it, but this may come first */
	int fd = open(f->path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return;
	Elf *e = elf_begin(fd, ELF_C_READ_MMAP, NULL);
	read_header(f, e);
	if (e)
		elf_end(e);
	close(fd);
}

/* The load bias of a mapping: runtime address - file address. The
 * segment holding the mapping's file offset says which address that
 * offset has (lld puts code at p_vaddr = p_offset + 0x1000, so start -
 * pgoff alone would be a page off). The mappings kept are executable, so
 * an executable segment is asked first: lld's code starts inside the
 * file page that ends its read-only segment, whose bias is a page off. */
static uint64_t map_bias(const struct nfile *f, const struct nmap *m)
{
	for (int x = 1; x >= 0; x--)
		for (int i = 0; i < f->nload; i++) {
			uint64_t off = f->load[i].offset & ~(uint64_t)0xfff;
			if ((x && !(f->load[i].flags & PF_X)) || m->pgoff < off ||
			    m->pgoff >= f->load[i].offset + f->load[i].filesz)
				continue;
			return m->start - (f->load[i].vaddr - f->load[i].offset + m->pgoff);
		}
	return f->is_exec ? 0 : m->start - m->pgoff;
}

static int file_load(struct nfile *f)
{
	if (f->state)
		return f->state;
	f->state = -1;
	file_header(f);
	if (access(f->path, R_OK) != 0)
		return -1;
	f->dwfl = dwfl_begin(&offline_cb);
	if (!f->dwfl)
		return -1;
	dwfl_report_begin(f->dwfl);
	f->mod = dwfl_report_elf(f->dwfl, f->name, f->path, -1, 0, false);
	dwfl_report_end(f->dwfl, NULL, NULL);
	if (!f->mod) {
		dwfl_end(f->dwfl);
		f->dwfl = NULL;
		return -1;
	}
	f->state = 1;
	return 1;
}

static long intern(struct nat *N, const char *name, const char *file, int line, int func_line)
{
	if (!N->o->lines)
		line = func_line;
	long id = pl_prof_frame(N->prof, name, file, line, func_line, 0);
	if (id < 0)
		N->oom = 1;
	return id;
}

static const char *die_name(Dwarf_Die *die, char **owned)
{
	Dwarf_Attribute a;
	*owned = NULL;
	const char *link = dwarf_formstring(dwarf_attr_integrate(die, DW_AT_linkage_name, &a));
	if (!link)
		link = dwarf_formstring(dwarf_attr_integrate(die, DW_AT_MIPS_linkage_name, &a));
	if (link && (*owned = demangle(link)))
		return *owned;
	const char *n = dwarf_diename(die);
	return n ? n : link;
}

static int die_decl_line(Dwarf_Die *die)
{
	int line = 0;
	if (dwarf_decl_line(die, &line) != 0) {
		Dwarf_Attribute a;
		Dwarf_Die origin;
		if (dwarf_attr(die, DW_AT_abstract_origin, &a) && dwarf_formref_die(&a, &origin))
			dwarf_decl_line(&origin, &line);
	}
	return line;
}

/* whether p's mount namespace is not this process's */
static int other_mount_ns(pid_t pid)
{
	char path[64];
	struct stat mine, its;
	snprintf(path, sizeof(path), "/proc/%d/ns/mnt", (int)pid);
	return stat(path, &its) == 0 && stat("/proc/self/ns/mnt", &mine) == 0 &&
	       (its.st_ino != mine.st_ino || its.st_dev != mine.st_dev);
}

/* A path as the process sees it, as a path on this host: a program in a
 * chroot or container maps its own /usr/lib/...; reading the host's file of
 * that name would symbolize and unwind with the wrong library. A chroot's
 * root is a directory here; a container's (another mount namespace) is
 * reached through /proc/PID/root, as py-spy reaches it and perf enters the
 * namespace; its files are opened at once, while the process is there. */
static void proc_root(struct nproc *p)
{
	if (p->root_known)
		return;
	char link[64];
	snprintf(link, sizeof(link), "/proc/%d/root", (int)p->pid);
	ssize_t n = readlink(link, p->root, sizeof(p->root) - 1);
	p->root[n > 0 ? n : 0] = '\0';
	if (strcmp(p->root, "/") == 0)
		p->root[0] = '\0';
	p->root_known = n > 0;
	p->other_ns = n > 0 && other_mount_ns(p->pid);
}

static int proc_file_index(struct nat *N, struct nproc *p, const char *name)
{
	proc_root(p);
	if (p->other_ns) {
		char full[4096];
		snprintf(full, sizeof(full), "/proc/%d/root%s", (int)p->pid, name);
		struct stat in, here;
		if (stat(full, &in) == 0) {
			/* the host's own file (a systemd service's private /tmp
			 * leaves /usr shared): read once for every process */
			if (stat(name, &here) == 0 && here.st_dev == in.st_dev &&
			    here.st_ino == in.st_ino)
				return file_index(N, name);
			int fi = file_index(N, full);
			if (fi >= 0)
				file_load(&N->files[fi]);
			return fi;
		}
	}
	if (!p->root[0])
		return file_index(N, name);
	char full[4096];
	snprintf(full, sizeof(full), "%s%s", p->root, name);
	return file_index(N, full);
}

/* The frames an address in a file stands for, innermost first: the
 * functions inlined there (marked), then the function holding them. */
static int cmp_curange(const void *a, const void *b)
{
	const struct curange *x = a, *y = b;
	return x->lo < y->lo ? -1 : x->lo > y->lo;
}

/* Every unit's address ranges, sorted, read once per file. */
static void units_index(struct nfile *f)
{
	f->cur_built = 1;
	Dwarf_Addr bias;
	Dwarf *dw = dwfl_module_getdwarf(f->mod, &bias);
	if (!dw)
		return;
	size_t cap = 0, hsize;
	Dwarf_Off off = 0, next;
	while (dwarf_nextcu(dw, off, &next, &hsize, NULL, NULL, NULL) == 0) {
		Dwarf_Die die;
		Dwarf_Addr base, lo, hi;
		ptrdiff_t it = 0;
		if (dwarf_offdie(dw, off + hsize, &die))
			while ((it = dwarf_ranges(&die, it, &base, &lo, &hi)) > 0) {
				if (hi <= lo)
					continue;
				if (f->ncur == cap) {
					size_t c = cap ? cap * 2 : 64;
					struct curange *g = realloc(f->cur, c * sizeof(*g));
					if (!g)
						return;
					f->cur = g;
					cap = c;
				}
				f->cur[f->ncur++] = (struct curange){lo, hi, off + hsize};
			}
		off = next;
	}
	if (f->ncur) /* a file whose units have no ranges: nothing to sort (found by fuzz/elf) */
		qsort(f->cur, f->ncur, sizeof(*f->cur), cmp_curange);
}

/* The unit holding a file address where libdw's own lookup found none. */
static Dwarf_Die *unit_at(struct nfile *f, uint64_t addr, Dwarf_Addr *bias, Dwarf_Die *mem)
{
	if (!f->cur_built)
		units_index(f);
	Dwarf *dw = f->ncur ? dwfl_module_getdwarf(f->mod, bias) : NULL;
	if (!dw)
		return NULL;
	uint64_t a = addr - *bias;
	size_t lo = 0, hi = f->ncur; /* the first range starting after a */
	while (lo < hi) {
		size_t mid = (lo + hi) / 2;
		if (f->cur[mid].lo <= a)
			lo = mid + 1;
		else
			hi = mid;
	}
	for (size_t i = lo; i-- > 0 && lo - i <= 8;) /* overlapping units: a few back */
		if (a < f->cur[i].hi)
			return dwarf_offdie(dw, f->cur[i].die, mem);
	return NULL;
}

static size_t symbolize(struct nat *N, int fi, uint64_t addr, uint32_t *out, size_t max)
{
	struct nfile *f = &N->files[fi];
	char buf[600];
	if (file_load(f) < 0) {
		snprintf(buf, sizeof(buf), "%s+0x%llx", f->name, (unsigned long long)addr);
		long id = intern(N, buf, f->show, 0, 0);
		if (id < 0)
			return 0;
		out[0] = (uint32_t)id;
		return 1;
	}
	size_t n = 0;
	GElf_Off off = 0;
	GElf_Sym sym;
	const char *symname =
	    dwfl_module_addrinfo(f->mod, addr, &off, &sym, NULL, NULL, NULL);
	int line = 0;
	const char *src = NULL;
	Dwfl_Line *l = dwfl_module_getsrc(f->mod, addr);
	if (l)
		src = dwfl_lineinfo(l, NULL, &line, NULL, NULL, NULL);

	Dwarf_Addr bias = 0;
	Dwarf_Die cu_mem;
	Dwarf_Die *cu = dwfl_module_addrdie(f->mod, addr, &bias);
	if (!cu && (cu = unit_at(f, addr, &bias, &cu_mem)) && !l) {
		Dwarf_Line *dl = dwarf_getsrc_die(cu, addr - bias);
		if (dl && (src = dwarf_linesrc(dl, NULL, NULL)))
			dwarf_lineno(dl, &line);
	}
	Dwarf_Die *scopes = NULL;
	int ns = cu ? dwarf_getscopes(cu, addr - bias, &scopes) : 0;
	if (ns > 0) {
		/* past an inlined subroutine, dwarf_getscopes goes on with the
		 * scopes of its abstract definition (the unit), not with the
		 * function it was inlined into: the innermost scope's own
		 * parents are the concrete chain */
		Dwarf_Die *chain = NULL;
		int nc = dwarf_getscopes_die(&scopes[0], &chain);
		if (nc > 0) {
			free(scopes);
			scopes = chain;
			ns = nc;
		} else {
			free(chain);
		}
	}
	Dwarf_Files *files = NULL;
	size_t nfiles = 0;
	if (cu)
		dwarf_getsrcfiles(cu, &files, &nfiles);
	/* innermost first: each inlined subroutine, then its caller, whose
	 * line is the inlined one's call site */
	const char *cur_src = src;
	int cur_line = line;
	for (int i = 0; i < ns && n < max; i++) {
		int tag = dwarf_tag(&scopes[i]);
		if (tag != DW_TAG_inlined_subroutine && tag != DW_TAG_subprogram)
			continue;
		char *owned;
		const char *name = die_name(&scopes[i], &owned);
		if (!name)
			name = symname ? symname : "?";
		int decl = die_decl_line(&scopes[i]);
		const char *decl_file = dwarf_decl_file(&scopes[i]);
		if (tag == DW_TAG_inlined_subroutine) {
			snprintf(buf, sizeof(buf), "%s [inlined]", name);
			long id = intern(N, buf, cur_src ? cur_src : decl_file ? decl_file : f->show,
					 cur_line, decl);
			free(owned);
			if (id < 0)
				break;
			out[n++] = (uint32_t)id;
			/* the caller runs this at the call site */
			Dwarf_Attribute a;
			Dwarf_Word cf = 0, cl = 0;
			if (dwarf_formudata(dwarf_attr(&scopes[i], DW_AT_call_file, &a), &cf) == 0 &&
			    files && cf < nfiles)
				cur_src = dwarf_filesrc(files, cf, NULL, NULL);
			if (dwarf_formudata(dwarf_attr(&scopes[i], DW_AT_call_line, &a), &cl) == 0)
				cur_line = (int)cl;
			continue;
		}
		long id = intern(N, name, cur_src ? cur_src : decl_file ? decl_file : f->show,
				 cur_line, decl);
		free(owned);
		if (id >= 0)
			out[n++] = (uint32_t)id;
		break; /* the outermost function */
	}
	free(scopes);
	if (n == 0) {
		/* no DWARF here: the symbol table, or module+offset */
		char *owned = demangle(symname);
		if (symname) {
			snprintf(buf, sizeof(buf), "%s", owned ? owned : symname);
		} else {
			/* a function without a symbol: named by where its unwind
			 * table entry (FDE) starts, so that its addresses group as
			 * one function */
			uint64_t start = addr;
			Dwarf_Addr cbias = 0;
			Dwarf_CFI *cfi = dwfl_module_eh_cfi(f->mod, &cbias);
			Dwarf_Frame *fr = NULL;
			if (cfi && dwarf_cfi_addrframe(cfi, addr - cbias, &fr) == 0) {
				Dwarf_Addr lo, hi;
				bool sig;
				if (dwarf_frame_info(fr, &lo, &hi, &sig) >= 0)
					start = lo + cbias;
				free(fr);
			}
			snprintf(buf, sizeof(buf), "%s+0x%llx", f->name, (unsigned long long)start);
		}
		free(owned);
		long id = intern(N, buf, src ? src : f->show, src ? line : 0, 0);
		if (id >= 0)
			out[n++] = (uint32_t)id;
	}
	return n;
}

/* Frames for (file, address), cached. Returns how many, stored at *ids. */
static size_t frames_for(struct nat *N, int fi, uint64_t addr, const uint32_t **ids)
{
	if (N->nkeys * 2 >= N->capkeys) {
		size_t cap = N->capkeys ? N->capkeys * 2 : 4096;
		struct fkey *t = calloc(cap, sizeof(*t));
		if (!t) {
			N->oom = 1;
			return 0;
		}
		for (size_t i = 0; i < N->capkeys; i++) {
			if (!N->keys[i].used)
				continue;
			uint64_t h = mix64(N->keys[i].addr ^ ((uint64_t)N->keys[i].file << 48));
			size_t s = h & (cap - 1);
			while (t[s].used)
				s = (s + 1) & (cap - 1);
			t[s] = N->keys[i];
		}
		free(N->keys);
		N->keys = t;
		N->capkeys = cap;
	}
	uint64_t h = mix64(addr ^ ((uint64_t)fi << 48));
	size_t s = h & (N->capkeys - 1);
	while (N->keys[s].used) {
		if (N->keys[s].file == fi && N->keys[s].addr == addr) {
			*ids = N->fids + N->keys[s].off;
			return N->keys[s].n;
		}
		s = (s + 1) & (N->capkeys - 1);
	}
	uint32_t tmp[64];
	size_t n = symbolize(N, fi, addr, tmp, 64);
	if (N->nfids + n > N->capfids) {
		size_t cap = N->capfids ? N->capfids * 2 : 8192;
		while (cap < N->nfids + n)
			cap *= 2;
		uint32_t *g = realloc(N->fids, cap * sizeof(*g));
		if (!g) {
			N->oom = 1;
			return 0;
		}
		N->fids = g;
		N->capfids = cap;
	}
	memcpy(N->fids + N->nfids, tmp, n * sizeof(*tmp));
	N->keys[s] = (struct fkey){fi, addr, (uint32_t)N->nfids, (uint32_t)n, 1};
	N->nfids += n;
	N->nkeys++;
	*ids = N->fids + N->keys[s].off;
	return n;
}

/* ---- processes and their maps ---- */

static struct nproc *proc_get(struct nat *N, pid_t pid, int create)
{
	for (size_t i = N->nprocs; i-- > 0;)
		if (N->procs[i].pid == pid)
			return &N->procs[i];
	if (!create)
		return NULL;
	if (N->nprocs == N->capprocs) {
		size_t cap = N->capprocs ? N->capprocs * 2 : 16;
		struct nproc *g = realloc(N->procs, cap * sizeof(*g));
		if (!g) {
			N->oom = 1;
			return NULL;
		}
		N->procs = g;
		N->capprocs = cap;
	}
	struct nproc *p = &N->procs[N->nprocs++];
	memset(p, 0, sizeof(*p));
	p->pid = pid;
	p->frame = -1;
	p->statm_fd = -1;
	N->st->processes++;
	return p;
}

/* A new program in p: its maps are forgotten, but for those recorded after
 * `after` (the rings are drained one CPU after the other, so a program that
 * moved to another CPU between its exec and ld.so mapping libc can have
 * libc's MMAP2 read before the exec's COMM: wiping it then left every
 * stack without libc's frames, t606 once in CI) */
static void proc_reset_after(struct nproc *p, uint64_t after)
{
	p->root_known = 0;
	if (p->dwfl)
		dwfl_end(p->dwfl);
	p->dwfl = NULL;
	p->attached = 0;
	size_t w = 0;
	for (size_t i = 0; i < p->n; i++)
		if (p->maps[i].t > after) {
			p->maps[w] = p->maps[i];
			p->maps[w++].reported = 0;
		}
	p->n = w;
	p->dirty = 1;
	p->frame = -1;
}

static void proc_reset(struct nproc *p)
{
	proc_reset_after(p, UINT64_MAX);
}

/* Where a mapping's file lies once loaded: each PT_LOAD segment at the
 * mapping's bias, page-rounded (the mapping alone for a file not read).
 * The loader maps every segment, so no other file lies there while this
 * one is loaded. Returns the count (at most 16). */
static size_t map_segments(struct nat *N, const struct nmap *m, uint64_t lo[16], uint64_t hi[16])
{
	struct nfile *f = m->file >= 0 && m->segs ? &N->files[m->file] : NULL;
	if (f)
		file_header(f);
	uint64_t b = f ? map_bias(f, m) : 0;
	size_t n = 0;
	for (int i = 0; f && i < f->nload; i++) {
		uint64_t a = b + f->load[i].vaddr, z = a + f->load[i].memsz;
		if (a < b || z < a || f->load[i].memsz > (1ULL << 40)) {
			n = 0; /* not a real file's sizes */
			break;
		}
		lo[n] = a & ~(uint64_t)0xfff;
		hi[n] = (z + 0xfff) & ~(uint64_t)0xfff;
		n += hi[n] > lo[n];
	}
	if (n == 0) {
		lo[0] = m->start;
		hi[0] = m->end;
		n = 1;
	}
	return n;
}

static int segments_meet(const uint64_t *alo, const uint64_t *ahi, size_t an, const uint64_t *blo,
			 const uint64_t *bhi, size_t bn)
{
	for (size_t i = 0; i < an; i++)
		for (size_t j = 0; j < bn; j++)
			if (alo[i] < bhi[j] && ahi[i] > blo[j])
				return 1;
	return 0;
}

static void map_add(struct nat *N, struct nproc *p, uint64_t start, uint64_t len, uint64_t pgoff,
		    int file, uint64_t t, int segs)
{
	uint64_t end = start + len;
	struct nmap nm = {start, end, pgoff, file, 0, t, start, end, segs};
	uint64_t lo[16], hi[16], mlo[16], mhi[16];
	size_t nseg = map_segments(N, &nm, lo, hi);
	for (size_t i = 0; i < nseg; i++) {
		nm.ilo = lo[i] < nm.ilo ? lo[i] : nm.ilo;
		nm.ihi = hi[i] > nm.ihi ? hi[i] : nm.ihi;
	}
	/* Unmapping leaves no record: a library unloaded is known gone only
	 * when another is mapped where its file lay (Open MPI dlcloses the
	 * components it does not pick, then loads others there). A mapping
	 * the new one covers is trimmed; one whose file the new one's file
	 * meets is dropped (an anonymous one drops no file: a program may
	 * make part of its own data executable). One recorded later than
	 * this record stays, and
	 * this record is dropped instead (the rings are read one CPU after
	 * the other, so an older record can come after a newer one). */
	struct nmap extra = {0};
	int has_extra = 0;
	for (size_t pass = t ? 0 : 1; pass < 2; pass++) {
		size_t w = 0;
		for (size_t i = 0; i < p->n; i++) {
			struct nmap m = p->maps[i];
			int same = m.file == file &&
				   (file < 0 || map_bias(&N->files[file], &m) ==
							map_bias(&N->files[file], &nm));
			int meet = m.start < end && m.end > start;
			if (!meet && !same && file >= 0 && m.file >= 0 && m.ilo < nm.ihi &&
			    m.ihi > nm.ilo) {
				size_t mn = map_segments(N, &m, mlo, mhi);
				meet = segments_meet(lo, hi, nseg, mlo, mhi, mn);
			}
			if (pass == 0) {
				if (meet && m.t > t)
					return; /* this record is older than what is there */
				continue;
			}
			if (!meet) {
				p->maps[w++] = m;
				continue;
			}
			if (m.start == start && m.end == end && m.pgoff == pgoff && m.file == file) {
				nm.reported = m.reported; /* the same mapping told again */
				continue;
			}
			/* the unwinder's Dwfl still has another file there: it is
			 * begun again (t119: the new module's frames ended every
			 * stack through it) */
			if (m.reported && !same)
				p->stale = 1;
			if (m.end <= start || m.start >= end) /* another file's */
				continue;
			if (m.start < start && m.end > end) { /* split around the new one */
				extra = m;
				extra.pgoff += end - m.start;
				extra.start = end;
				has_extra = 1;
				m.end = start;
				p->maps[w++] = m;
				continue;
			}
			if (m.start < start) {
				m.end = start;
				p->maps[w++] = m;
			} else if (m.end > end) {
				m.pgoff += end - m.start;
				m.start = end;
				p->maps[w++] = m;
			}
		}
		if (pass == 1)
			p->n = w;
	}
	for (int k = 0; k < 1 + has_extra; k++) {
		if (p->n == p->cap) {
			size_t cap = p->cap ? p->cap * 2 : 32;
			struct nmap *g = realloc(p->maps, cap * sizeof(*g));
			if (!g) {
				N->oom = 1;
				return;
			}
			p->maps = g;
			p->cap = cap;
		}
		struct nmap add = k == 0 ? nm : extra;
		size_t i = p->n;
		while (i > 0 && p->maps[i - 1].start > add.start) {
			p->maps[i] = p->maps[i - 1];
			i--;
		}
		p->maps[i] = add;
		p->n++;
	}
	p->dirty = 1;
}

static const struct nmap *map_find(const struct nproc *p, uint64_t addr)
{
	size_t lo = 0, hi = p->n;
	while (lo < hi) {
		size_t mid = (lo + hi) / 2;
		if (p->maps[mid].end <= addr)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (lo < p->n && p->maps[lo].start <= addr && addr < p->maps[lo].end)
		return &p->maps[lo];
	return NULL;
}

/* The executable mappings of a running process, as MMAP2 records would
 * have told (for -p). Returns a hash of the file (0 when unreadable). */
static uint64_t maps_from(struct nat *N, struct nproc *p, FILE *f);

static uint64_t maps_from_proc(struct nat *N, struct nproc *p)
{
	char path[64];
	snprintf(path, sizeof(path), "/proc/%d/maps", (int)p->pid);
	FILE *f = fopen(path, "r");
	if (!f)
		return 0;
	uint64_t h = maps_from(N, p, f);
	fclose(f);
	return h;
}

/* maps lines from f (a /proc/PID/maps or a copy of one) */
static uint64_t maps_from(struct nat *N, struct nproc *p, FILE *f)
{
	char line[4600];
	uint64_t h = 1469598103934665603ULL;
	while (fgets(line, sizeof(line), f)) {
		h = pl_fnv1a(h, line);
		unsigned long long s, e, off;
		char perms[8];
		int pos = 0;
		if (sscanf(line, "%llx-%llx %7s %llx %*s %*s%n", &s, &e, perms, &off, &pos) < 4)
			continue;
		if (perms[2] != 'x')
			continue;
		char *name = line + pos;
		while (*name == ' ')
			name++;
		name[strcspn(name, "\n")] = '\0';
		/* /proc/PID/maps shows paths as this process sees them (a
		 * chrooted target's under its root already); another mount
		 * namespace's may only make sense under /proc/PID/root */
		int fi = strcmp(name, "[vdso]") == 0 ? VDSO_FILE : NO_FILE, segs = 1;
		size_t len = strlen(name);
		if (len > 10 && strcmp(name + len - 10, " (deleted)") == 0) {
			/* whatever is at that path now is not the file mapped
			 * (replaced by an upgrade, or gone): not read */
			name[len - 10] = '\0';
			char gone[4200];
			snprintf(gone, sizeof(gone), "%s (not the mapped file)", name);
			fi = file_index(N, gone);
			segs = 0;
		} else if (name[0] == '/') {
			/* a container's path names its own file, whatever this
			 * host has at that path (its libc: the wrong symbols) */
			proc_root(p);
			fi = !p->other_ns && access(name, R_OK) == 0 ? file_index(N, name)
								     : proc_file_index(N, p, name);
		}
		map_add(N, p, s, e - s, off, fi, 0, segs);
	}
	return h ? h : 1;
}

/* ---- unwinding ---- */

static int frame_cb(Dwfl_Frame *state, void *arg)
{
	struct unw *u = arg;
	Dwarf_Addr pc;
	bool act;
	if (!dwfl_frame_pc(state, &pc, &act))
		return DWARF_CB_ABORT;
	if (u->n >= u->max)
		return DWARF_CB_ABORT;
	u->pcs[u->n] = act || u->n == 0 ? pc : pc - 1;
	u->n++;
	return DWARF_CB_OK;
}

static pid_t cb_next_thread(Dwfl *dwfl, void *arg, void **thread_argp)
{
	(void)dwfl;
	struct unw *u = arg;
	if (*thread_argp)
		return 0;
	*thread_argp = u;
	return u->tid;
}

static bool cb_get_thread(Dwfl *dwfl, pid_t tid, void *arg, void **thread_argp)
{
	(void)dwfl;
	(void)tid;
	*thread_argp = arg;
	return true;
}

static bool cb_memory_read(Dwfl *dwfl, Dwarf_Addr addr, Dwarf_Word *result, void *arg)
{
	(void)dwfl;
	struct unw *u = arg;
	if (addr < u->sp || u->stack_len < sizeof(*result) ||
	    addr - u->sp > u->stack_len - sizeof(*result))
		return false;
	memcpy(result, u->stack + (addr - u->sp), sizeof(*result));
	return true;
}

static bool cb_set_initial_registers(Dwfl_Thread *thread, void *arg)
{
	struct unw *u = arg;
	Dwarf_Word regs[17];
	for (int i = 0; i < 17; i++)
		regs[i] = u->regs[i];
	return dwfl_thread_state_registers(thread, 0, 17, regs);
}

static const Dwfl_Thread_Callbacks thread_cb = {
    .next_thread = cb_next_thread,
    .get_thread = cb_get_thread,
    .memory_read = cb_memory_read,
    .set_initial_registers = cb_set_initial_registers,
};

/* Bring the process's unwinding Dwfl up to date with its maps. */
static int proc_dwfl(struct nat *N, struct nproc *p)
{
	if (p->dwfl && !p->dirty)
		return 0;
	if (p->dwfl && p->stale) {
		/* a module gone: begin again (libdwfl cannot take a module back,
		 * nor be told again of one it has when it opens the file anew) */
		dwfl_end(p->dwfl);
		p->dwfl = NULL;
		p->attached = 0;
	}
	p->stale = 0;
	if (!p->dwfl) {
		p->dwfl = dwfl_begin(&proc_cb);
		if (!p->dwfl)
			return -1;
		for (size_t i = 0; i < p->n; i++)
			p->maps[i].reported = 0;
		dwfl_report_begin(p->dwfl);
	} else {
		dwfl_report_begin_add(p->dwfl);
	}
	for (size_t i = 0; i < p->n; i++) {
		struct nmap *m = &p->maps[i];
		if (m->reported || m->file < 0)
			continue;
		m->reported = 1;
		struct nfile *f = &N->files[m->file];
		file_load(f);
		uint64_t base = map_bias(f, m);
		/* a file with two executable mappings is one module (asking the
		 * Dwfl which module covers an address while modules are being
		 * reported answers from a stale table: it once hid libblas
		 * behind libonnx) */
		int dup = 0;
		for (size_t j = 0; j < p->n && !dup; j++)
			dup = j < i && p->maps[j].file == m->file && p->maps[j].reported &&
			      map_bias(f, &p->maps[j]) == base;
		if (!dup)
			dwfl_report_elf(p->dwfl, f->name, f->path, -1, base, false);
	}
	dwfl_report_end(p->dwfl, NULL, NULL);
	p->dirty = 0;
	if (!p->attached) {
		if (!dwfl_attach_state(p->dwfl, NULL, p->pid, &thread_cb, &N->u))
			return -1;
		p->attached = 1;
	}
	return 0;
}

/* ---- records ---- */

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

static void add_stack(struct nat *N, struct nproc *p, pid_t tid, const uint64_t *pcs, size_t n,
		      int in_kernel)
{
	/* leaf first; symbolized in finish() */
	size_t depth = 0, cap = MAX_DEPTH + 4;
	uint64_t *t = N->cur;
	/* the kernel's frames, where --kernel got them: named from kallsyms */
	for (size_t i = 0; i < N->nkpcs && depth < cap; i++) {
		const char *name = ksym_name(N->kpcs[i]);
		char buf[300];
		snprintf(buf, sizeof(buf), "%s [kernel]", name ? name : "?");
		long id = pl_prof_frame(N->prof, buf, "[kernel.kallsyms]", 0, 0, 0);
		if (id >= 0)
			t[depth++] = TAG | (uint64_t)id;
	}
	if (in_kernel && !N->nkpcs && special(N, &N->kernel_frame, "[kernel]") >= 0)
		t[depth++] = TAG | (uint64_t)N->kernel_frame;
	for (size_t i = 0; i < n && depth < cap; i++) {
		const struct nmap *m = p ? map_find(p, pcs[i]) : NULL;
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
		file_load(f);
		uint64_t addr = pcs[i] - map_bias(f, m);
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

/* Is a file address in the program's entry (_start) or libc's or a
 * thread's start routines: the bottom of a complete user stack? */
static int entry_lookup(struct nat *N, int fi, uint64_t addr)
{
	struct nfile *f = &N->files[fi];
	if (file_load(f) < 0)
		return 0;
	const char *s = dwfl_module_addrname(f->mod, addr);
	if (!s) /* stripped: _start is at the entry point (a few dozen bytes) */
		return f->entry && addr >= f->entry && addr < f->entry + 64;
	return (strcmp(s, "_start") == 0 || strcmp(s, "__libc_start_main") == 0 ||
		     strcmp(s, "__libc_start_call_main") == 0 || strcmp(s, "clone3") == 0 ||
		     strcmp(s, "clone") == 0 || strcmp(s, "start_thread") == 0);
}

/* entry_lookup, remembered: libdw 0.188 looks a name up by scanning the
 * symbol table, and every distinct stack asks for its root (66,000 stacks
 * rooted in libc took 20 s of symbol scans) */
static int entry_fileaddr(struct nat *N, int fi, uint64_t addr)
{
	uint64_t key = ((uint64_t)(fi + 1) << 48) ^ addr;
	struct entry_memo *e = &N->entry_memo[mix64(key) & (ENTRY_MEMO - 1)];
	if (!e->used || e->key != key) {
		e->key = key;
		e->is = entry_lookup(N, fi, addr);
		e->used = 1;
	}
	return e->is;
}

static int is_entry(struct nat *N, struct nproc *p, uint64_t pc)
{
	const struct nmap *m = p ? map_find(p, pc) : NULL;
	if (!m || m->file < 0)
		return 0;
	struct nfile *f = &N->files[m->file];
	if (file_load(f) < 0)
		return 0;
	return entry_fileaddr(N, m->file, pc - map_bias(f, m));
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
			root_entry = entry_fileaddr(N, (int)(t[k] >> 48) - 1, t[k] & ADDR_MASK);
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
			size_t n = frames_for(N, (int)(t[k] >> 48) - 1, t[k] & ADDR_MASK, &ids);
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
	struct nproc *proc = proc_get(N, (pid_t)pid, 1);
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
		if (abi != PERF_SAMPLE_REGS_ABI_NONE && proc_dwfl(N, proc) == 0) {
			struct unw *u = &N->u;
			/* perf's order: ax bx cx dx si di bp sp ip r8..r15 */
			static const int to_dwarf[17] = {0, 3, 2, 1, 4, 5, 6, 7, 9,
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
			dwfl_getthread_frames(proc->dwfl, (pid_t)tid, frame_cb, u);
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
	add_stack(N, proc, (pid_t)tid, N->pcs, n, in_kernel);
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
		struct nproc *p = proc_get(N, (pid_t)m.pid, 1);
		if (!p)
			break;
		int fi = name[0] == '/'			? proc_file_index(N, p, name)
			 : strcmp(name, "[vdso]") == 0 ? VDSO_FILE
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
			fi = file_index(N, stale);
		}
		uint64_t t = record_time(h);
		if (t && t < p->exec_t)
			break; /* the program before the latest exec, read late */
		map_add(N, p, m.addr, m.len, m.pgoff, fi, t, 1);
		break;
	}
	case PERF_RECORD_COMM: {
		uint32_t pid, tid;
		if (h->size < sizeof(*h) + 9)
			break;
		memcpy(&pid, body, 4);
		memcpy(&tid, body + 4, 4);
		struct nproc *p = proc_get(N, (pid_t)pid, 1);
		if (!p)
			break;
		if (h->misc & PERF_RECORD_MISC_COMM_EXEC) {
			/* a new program: its maps follow (or came already) */
			uint64_t t = record_time(h);
			if (!t || t >= p->exec_t) {
				proc_reset_after(p, t ? t : UINT64_MAX);
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
		struct nproc *parent = proc_get(N, (pid_t)v[1], 0);
		struct nproc *child = proc_get(N, (pid_t)v[0], 1);
		parent = proc_get(N, (pid_t)v[1], 0); /* proc_get may move the array */
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
			map_add(N, child, parent->maps[i].start,
				parent->maps[i].end - parent->maps[i].start, parent->maps[i].pgoff,
				parent->maps[i].file, parent->maps[i].t, parent->maps[i].segs);
		break;
	}
	case PERF_RECORD_EXIT: {
		uint32_t v[4];
		if (h->size < sizeof(*h) + sizeof(v))
			break;
		memcpy(v, body, sizeof(v));
		struct nproc *p = proc_get(N, (pid_t)v[0], 0);
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

static void drain(struct nat *N, struct ring *r)
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
		return pl_error_set(err, PL_EINPUT,
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
static int open_task(struct nat *N, struct perf_event_attr *a, pid_t pid, int ncpu,
		     struct pl_error *err)
{
	for (int c = 0; c < ncpu; c++) {
		long fd = perf_open(a, pid, c, -1);
		if (fd < 0 && (errno == EACCES || errno == EPERM) && N->o->kernel)
			return pl_error_set(err, PL_EINPUT,
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

static void init_attr(struct nat *N, struct perf_event_attr *a, int launched)
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
		free(N->files[i].path);
	}
	free(N->rings);
	free(N->fds);
	free(N->procs);
	free(N->files);
	free(N->keys);
	free(N->fids);
	free(N->raw);
	free(N->tok);
}

int pl_native_profile(char **argv, pid_t pid, const struct pl_native_opts *o,
		      struct pl_prof *prof, struct pl_native_stats *st, int *status,
		      struct pl_error *err)
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
	N->kernel_frame = N->unknown_frame = N->anon_frame = N->vdso_frame = -2; /* interned when first seen */
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
	*status = 0;
	if (argv) {
		if ((rc = pl_launch_start(argv, &L, err)) != PL_OK)
			goto out;
		child = L.pid;
		init_attr(N, &a, 1);
		rc = open_task(N, &a, child, (int)ncpu, err);
		if (rc != PL_OK) {
			pl_launch_end(&L, status);
			child = -1;
			goto out;
		}
		struct nproc *p = proc_get(N, child, 1);
		if (p)
			snprintf(p->comm, sizeof(p->comm), "%s", argv[0]);
		if ((rc = pl_launch_go(&L, argv[0], status, err)) != PL_OK) {
			child = -1;
			goto out;
		}
	} else {
		init_attr(N, &a, 0);
		struct nproc *p = proc_get(N, pid, 1);
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
		maps_from_proc(N, p);
		snprintf(path, sizeof(path), "/proc/%d/task", (int)pid);
		DIR *d = opendir(path);
		if (!d) {
			rc = pl_error_set(err, PL_EINPUT, "no process with PID %d", (int)pid);
			goto out;
		}
		struct dirent *de;
		while ((de = readdir(d)) && rc == PL_OK)
			if (de->d_name[0] >= '0' && de->d_name[0] <= '9')
				rc = open_task(N, &a, (pid_t)atoi(de->d_name), (int)ncpu, err);
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
				drain(N, &N->rings[c]);
		if (o->mem)
			mem_tick(N, pl_now_s() - t0);
		if (child > 0 && waitpid(child, status, WNOHANG) == child) {
			child = -1;
			done = 1;
		}
		if (!argv) {
			int hup = 1;
			for (size_t i = 0; i < np; i++)
				hup &= (pfd[i].revents & POLLHUP) != 0;
			if ((np && hup) || kill(pid, 0) != 0)
				done = 1;
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
			drain(N, &N->rings[c]);
	st->elapsed_s = pl_now_s() - t0;
	finish(N);
	st->cpu_s = cpu_now() - c0;
	if (N->oom)
		rc = PL_ENOMEM;
out:
	if (child > 0)
		stop(child, status);
	pl_launch_end(&L, status);
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

static uint64_t maps_hash(pid_t pid)
{
	char path[64], buf[8192];
	snprintf(path, sizeof(path), "/proc/%d/maps", (int)pid);
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return 0;
	uint64_t h = 1469598103934665603ULL;
	ssize_t n;
	size_t total = 0;
	while ((n = read(fd, buf, sizeof(buf))) > 0) {
		h = pl_fnv1a_bytes(h, buf, (size_t)n);
		total += (size_t)n;
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
	struct nproc *p = proc_get(N, pid, 1);
	if (!p)
		return;
	proc_reset(p);
	maps_from_proc(N, p);
	N->maps_hash = h;
}

void pl_native_syms_maps_text(struct pl_native_syms *s, pid_t pid, const char *text, size_t len)
{
	struct nat *N = (struct nat *)s;
	struct nproc *p = proc_get(N, pid, 1);
	if (!p || !len)
		return;
	FILE *f = fmemopen((void *)text, len, "r");
	if (!f)
		return;
	proc_reset(p);
	maps_from(N, p, f);
	fclose(f);
}

size_t pl_native_unwind(struct pl_native_syms *s, pid_t pid, pid_t tid, const uint64_t regs[17],
			const uint8_t *stack, uint64_t len, uint64_t *pcs, size_t max)
{
	struct nat *N = (struct nat *)s;
	struct nproc *p = proc_get(N, pid, 0);
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
	if (proc_dwfl(N, p) == 0)
		dwfl_getthread_frames(p->dwfl, tid, frame_cb, u);
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
	struct nproc *p = proc_get(N, pid, 0);
	const struct nmap *m = p ? map_find(p, pc) : NULL;
	*kind = PL_NATIVE_UNMAPPED;
	if (!m)
		return 0;
	*kind = PL_NATIVE_OTHER;
	if (m->file < 0) {
		long *which = m->file == VDSO_FILE ? &N->vdso_frame : &N->anon_frame;
		if (special(N, which,
			    m->file == VDSO_FILE ? "[vdso]" : "[anonymous executable memory (JIT?)]") < 0)
			return 0;
		N->fids_one = (uint32_t)*which;
		*ids = &N->fids_one;
		return 1;
	}
	struct nfile *f = &N->files[m->file];
	file_load(f);
	uint64_t addr = pc - map_bias(f, m);
	size_t k = frames_for(N, m->file, addr, ids);
	if (f->is_interp) {
		*kind = PL_NATIVE_INTERP;
		if (k && strcmp(N->prof->frames[(*ids)[k - 1]].name, "_PyEval_EvalFrameDefault") == 0)
			*kind = PL_NATIVE_EVAL;
	}
	return k;
}

int pl_native_is_entry(struct pl_native_syms *s, pid_t pid, uint64_t pc)
{
	struct nat *N = (struct nat *)s;
	return is_entry(N, proc_get(N, pid, 0), pc);
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
