/*
 * The native profiler's symbolizer: a (file, address) into frames, with
 * function, source file and line from DWARF (inlined calls as frames of
 * their own), else the symbol table, else module+0xOFFSET. Each file is
 * read once, offline, by its own libdwfl Dwfl at its own addresses, so
 * that one cache of frames serves every process mapping it; the frames of
 * an address are cached too. The kernel's functions come from
 * /proc/kallsyms, C++ names are demangled by libstdc++ found at run time.
 * Private to the native profiler (native_int.h).
 */
#include "native_int.h"

#include <dlfcn.h>
#include <dwarf.h>
#include <elfutils/libdw.h>
#include <elfutils/libdwfl.h>
#include <fcntl.h>
#include <gelf.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/auxv.h>
#include <sys/mman.h>
#include <unistd.h>

#include "profdata.h"

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

const char *pl_native_ksym_name(uint64_t addr)
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
const Dwfl_Callbacks pl_native_proc_cb = {
    .find_elf = dwfl_linux_proc_find_elf,
    .find_debuginfo = dwfl_standard_find_debuginfo,
    .debuginfo_path = &debuginfo_path,
};

int pl_native_file_index(struct nat *N, const char *path)
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
	f->is_interp =
	    strncmp(f->name, "python3", 7) == 0 || strncmp(f->name, "libpython3", 10) == 0;
	return (int)N->nfiles++;
}

/* The kernel maps one vDSO image into every 64-bit process, so perfloop's
 * own is the target's when the sizes agree (the image has no per-process
 * part; the data pages beside it are not executable and not mapped here).
 * A copy in a memfd gives libdw its CFI: a sample taken in clock_gettime
 * or gettimeofday unwinds to its caller, where without it the unwinder
 * could only guess by frame pointer, and about 3 in 100 such samples of a
 * program timing itself ended as a stack of "[vdso]" alone (t613). As
 * perf does it, with its own copy of the target's image in its cache. */
static uint64_t own_vdso(uint64_t *len)
{
	uint64_t at = getauxval(AT_SYSINFO_EHDR);
	FILE *f = at ? fopen("/proc/self/maps", "r") : NULL;
	char line[512];
	*len = 0;
	while (f && fgets(line, sizeof(line), f)) {
		unsigned long long s, e;
		if (strstr(line, "[vdso]") && sscanf(line, "%llx-%llx", &s, &e) == 2 && s == at)
			*len = e - s;
	}
	if (f)
		fclose(f);
	return *len ? at : 0;
}

int pl_native_vdso_file(struct nat *N, uint64_t len)
{
	if (N->vdso_fi == 0) {
		N->vdso_fi = -1;
		uint64_t own_len, at = own_vdso(&own_len);
		int fd = at ? memfd_create("perfloop-vdso", MFD_CLOEXEC) : -1;
		if (fd >= 0 && write(fd, (const void *)at, own_len) == (ssize_t)own_len) {
			char path[64];
			snprintf(path, sizeof(path), "/proc/self/fd/%d", fd);
			int fi = pl_native_file_index(N, path);
			if (fi >= 0) {
				N->files[fi].name = N->files[fi].show = "[vdso]";
				N->vdso_fi = fi + 1;
				N->vdso_fd = fd;
				N->vdso_len = own_len;
				fd = -1;
			}
		}
		if (fd >= 0)
			close(fd);
	}
	return N->vdso_fi > 0 && len == N->vdso_len ? N->vdso_fi - 1 : VDSO_FILE;
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

void pl_native_file_header(struct nfile *f)
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
uint64_t pl_native_map_bias(const struct nfile *f, const struct nmap *m)
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

int pl_native_file_load(struct nfile *f)
{
	if (f->state)
		return f->state;
	f->state = -1;
	pl_native_file_header(f);
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

static int nsym_cmp(const void *a, const void *b)
{
	const struct nsym *x = a, *y = b;
	return x->lo < y->lo ? -1 : x->lo > y->lo ? 1 : (x->hi > y->hi) - (x->hi < y->hi);
}

/* The file's function symbols, sorted once (what dwfl_module_addrinfo
 * answers, found by a binary search instead of a scan of the table). */
static void build_syms(struct nfile *f)
{
	f->syms_built = 1;
	int n = dwfl_module_getsymtab(f->mod);
	if (n <= 1)
		return;
	struct nsym *v = malloc((size_t)n * sizeof *v);
	if (!v)
		return;
	size_t k = 0;
	for (int i = 1; i < n; i++) {
		GElf_Sym sym;
		GElf_Addr a;
		const char *name = dwfl_module_getsym_info(f->mod, i, &sym, &a, NULL, NULL, NULL);
		int type = GELF_ST_TYPE(sym.st_info);
		/* assembly's functions can be untyped: with a size, they count */
		if (!name || !*name || !a ||
		    (type != STT_FUNC && type != STT_GNU_IFUNC &&
		     (type != STT_NOTYPE || !sym.st_size || sym.st_shndx == SHN_UNDEF)))
			continue;
		v[k++] = (struct nsym){a, a + sym.st_size, name};
	}
	qsort(v, k, sizeof *v, nsym_cmp);
	/* a symbol without a size runs to the next one */
	for (size_t i = 0; i < k; i++)
		if (v[i].hi == v[i].lo)
			v[i].hi = i + 1 < k ? v[i + 1].lo : v[i].lo + 1;
	f->syms = v;
	f->nsyms = k;
}

/* The function symbol holding addr (NULL: none); *off its offset. Of
 * symbols that hold it, the one starting last (the innermost). */
static const char *sym_at(struct nfile *f, uint64_t addr, uint64_t *off)
{
	if (!f->syms_built)
		build_syms(f);
	size_t lo = 0, hi = f->nsyms;
	while (lo < hi) { /* the first symbol starting after addr */
		size_t mid = lo + (hi - lo) / 2;
		if (f->syms[mid].lo <= addr)
			lo = mid + 1;
		else
			hi = mid;
	}
	for (size_t i = lo; i-- > 0 && lo - i <= 8;)
		if (addr < f->syms[i].hi) {
			*off = addr - f->syms[i].lo;
			return f->syms[i].name;
		}
	return NULL;
}

static size_t symbolize(struct nat *N, int fi, uint64_t addr, uint32_t *out, size_t max)
{
	struct nfile *f = &N->files[fi];
	char buf[600];
	if (pl_native_file_load(f) < 0) {
		snprintf(buf, sizeof(buf), "%s+0x%llx", f->name, (unsigned long long)addr);
		long id = intern(N, buf, f->show, 0, 0);
		if (id < 0)
			return 0;
		out[0] = (uint32_t)id;
		return 1;
	}
	size_t n = 0;
	uint64_t off = 0;
	const char *symname = sym_at(f, addr, &off);
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
			long id = intern(N, buf,
					 cur_src     ? cur_src
					 : decl_file ? decl_file
						     : f->show,
					 cur_line, decl);
			free(owned);
			if (id < 0)
				break;
			out[n++] = (uint32_t)id;
			/* the caller runs this at the call site */
			Dwarf_Attribute a;
			Dwarf_Word cf = 0, cl = 0;
			if (dwarf_formudata(dwarf_attr(&scopes[i], DW_AT_call_file, &a), &cf) ==
				0 &&
			    files && cf < nfiles)
				cur_src = dwarf_filesrc(files, cf, NULL, NULL);
			if (dwarf_formudata(dwarf_attr(&scopes[i], DW_AT_call_line, &a), &cl) == 0)
				cur_line = (int)cl;
			continue;
		}
		long id = intern(N, name,
				 cur_src     ? cur_src
				 : decl_file ? decl_file
					     : f->show,
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
size_t pl_native_frames_for(struct nat *N, int fi, uint64_t addr, const uint32_t **ids)
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

/* Is a file address in the program's entry (_start) or libc's or a
 * thread's start routines: the bottom of a complete user stack? */
static int entry_lookup(struct nat *N, int fi, uint64_t addr)
{
	struct nfile *f = &N->files[fi];
	if (pl_native_file_load(f) < 0)
		return 0;
	uint64_t off;
	const char *s = sym_at(f, addr, &off);
	if (!s) /* stripped: _start is at the entry point (a few dozen bytes) */
		return f->entry && addr >= f->entry && addr < f->entry + 64;
	return (strcmp(s, "_start") == 0 || strcmp(s, "__libc_start_main") == 0 ||
		strcmp(s, "__libc_start_call_main") == 0 || strcmp(s, "clone3") == 0 ||
		strcmp(s, "clone") == 0 || strcmp(s, "start_thread") == 0);
}

/* entry_lookup, remembered: libdw 0.188 looks a name up by scanning the
 * symbol table, and every distinct stack asks for its root (66,000 stacks
 * rooted in libc took 20 s of symbol scans) */
int pl_native_entry_fileaddr(struct nat *N, int fi, uint64_t addr)
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
