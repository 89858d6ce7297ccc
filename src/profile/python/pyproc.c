/*
 * See pyproc.h. The ELF work uses libelf (Debian's libelf-dev); nothing here
 * writes to or stops the target.
 */
#include "pyproc.h"

#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <libelf.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/uio.h>
#include <unistd.h>

int pl_pyproc_read(pid_t pid, uint64_t addr, void *buf, size_t len)
{
	struct iovec local = {buf, len};
	struct iovec remote = {(void *)(uintptr_t)addr, len};
	if (len == 0)
		return 0;
	if (addr == 0) {
		errno = EFAULT;
		return -1;
	}
	ssize_t n = process_vm_readv(pid, &local, 1, &remote, 1, 0);
	if (n == (ssize_t)len)
		return 0;
	if (n >= 0)
		errno = EFAULT;
	return -1;
}

void pl_pyproc_cmdline(pid_t pid, char *buf, size_t len)
{
	char path[64];
	buf[0] = '\0';
	snprintf(path, sizeof path, "/proc/%d/cmdline", (int)pid);
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return;
	ssize_t n = read(fd, buf, len - 1);
	close(fd);
	if (n <= 0)
		return;
	buf[n] = '\0';
	while (n > 0 && buf[n - 1] == '\0')
		n--;
	for (ssize_t i = 0; i < n; i++)
		if ((unsigned char)buf[i] < 0x20)
			buf[i] = ' '; /* argument separators, newlines of `-c` code */
}

int pl_pyproc_maps_has(pid_t pid, const char *needle)
{
	char path[64];
	snprintf(path, sizeof path, "/proc/%d/maps", (int)pid);
	FILE *f = fopen(path, "re");
	if (!f)
		return 0;
	char line[4096];
	int found = 0;
	while (!found && fgets(line, sizeof line, f))
		found = strstr(line, needle) != NULL;
	fclose(f);
	return found;
}

struct syms {
	uint64_t runtime, version, code_type;
	uint64_t min_vaddr; /* lowest PT_LOAD address, page-aligned */
	int is_dyn;	    /* ET_DYN: loaded at a bias */
};

static void scan_symtab(Elf *elf, Elf_Scn *scn, GElf_Shdr *sh, struct syms *s)
{
	Elf_Data *data = elf_getdata(scn, NULL);
	if (!data || sh->sh_entsize == 0)
		return;
	size_t n = sh->sh_size / sh->sh_entsize;
	for (size_t i = 0; i < n; i++) {
		GElf_Sym sym;
		if (!gelf_getsym(data, (int)i, &sym) || sym.st_value == 0)
			continue;
		if (sym.st_shndx == SHN_UNDEF)
			continue;
		const char *name = elf_strptr(elf, sh->sh_link, sym.st_name);
		if (!name || (name[0] != '_' && name[0] != 'P'))
			continue;
		if (!s->runtime && strcmp(name, "_PyRuntime") == 0)
			s->runtime = sym.st_value;
		else if (!s->version && strcmp(name, "Py_Version") == 0)
			s->version = sym.st_value;
		else if (!s->code_type && strcmp(name, "PyCode_Type") == 0)
			s->code_type = sym.st_value;
	}
}

/* 0 when the file has _PyRuntime; -1 otherwise, or when inode is not 0
 * and the file at path is another one (the same path in another mount
 * namespace or chroot). */
static int read_syms(const char *path, unsigned long inode, struct syms *s)
{
	memset(s, 0, sizeof *s);
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -1;
	struct stat st;
	if (inode && (fstat(fd, &st) < 0 || st.st_ino != inode)) {
		close(fd);
		return -1;
	}
	elf_version(EV_CURRENT);
	Elf *elf = elf_begin(fd, ELF_C_READ_MMAP, NULL);
	if (!elf || elf_kind(elf) != ELF_K_ELF) {
		if (elf)
			elf_end(elf);
		close(fd);
		return -1;
	}
	GElf_Ehdr eh;
	size_t nph = 0;
	if (gelf_getehdr(elf, &eh) && elf_getphdrnum(elf, &nph) == 0) {
		s->is_dyn = eh.e_type == ET_DYN;
		s->min_vaddr = UINT64_MAX;
		for (size_t i = 0; i < nph; i++) {
			GElf_Phdr ph;
			if (gelf_getphdr(elf, (int)i, &ph) && ph.p_type == PT_LOAD &&
			    ph.p_vaddr < s->min_vaddr)
				s->min_vaddr = ph.p_vaddr & ~(uint64_t)0xfff;
		}
		/* .dynsym first (what the loader sees), then .symtab if present,
		 * then the .PyRuntime section 3.12+ put _PyRuntime in (stripped
		 * binaries without the symbol exported) */
		for (int pass = 0; pass < 2 && !s->runtime; pass++) {
			Elf_Scn *scn = NULL;
			while ((scn = elf_nextscn(elf, scn))) {
				GElf_Shdr sh;
				if (!gelf_getshdr(scn, &sh))
					continue;
				if (sh.sh_type == (pass == 0 ? SHT_DYNSYM : SHT_SYMTAB))
					scan_symtab(elf, scn, &sh, s);
			}
		}
		size_t shstrndx;
		if (!s->runtime && elf_getshdrstrndx(elf, &shstrndx) == 0) {
			Elf_Scn *scn = NULL;
			while ((scn = elf_nextscn(elf, scn))) {
				GElf_Shdr sh;
				const char *name;
				if (gelf_getshdr(scn, &sh) &&
				    (name = elf_strptr(elf, shstrndx, sh.sh_name)) &&
				    strcmp(name, ".PyRuntime") == 0 && sh.sh_addr) {
					s->runtime = sh.sh_addr;
					break;
				}
			}
		}
	}
	elf_end(elf);
	close(fd);
	return s->runtime ? 0 : -1;
}

int pl_pyproc_elf_runtime(const char *path, uint64_t *runtime)
{
	struct syms s;
	int rc = read_syms(path, 0, &s);
	*runtime = s.runtime;
	return rc;
}

struct mapping {
	uint64_t start, end;
	uint64_t offset;
	unsigned long inode;
	int writable;
	char path[1024];
};

static int is_libpython(const char *path)
{
	const char *b = strrchr(path, '/');
	b = b ? b + 1 : path;
	return strncmp(b, "libpython3", 10) == 0 && strstr(b, ".so");
}

/* Parse "python3.12" or "libpython3.12.so" for a version to name. */
static int version_from_name(const char *path, int *major, int *minor)
{
	const char *b = strrchr(path, '/');
	b = b ? b + 1 : path;
	const char *p = strstr(b, "python");
	return p && sscanf(p, "python%d.%d", major, minor) == 2 ? 0 : -1;
}

static int try_file(pid_t pid, const struct mapping *maps, size_t nmaps, const char *path,
		    struct pl_pyproc *p)
{
	struct syms s;
	char alt[1200];
	const struct mapping *m = NULL;
	for (size_t i = 0; i < nmaps && !m; i++)
		if (strcmp(maps[i].path, path) == 0)
			m = &maps[i];
	/* the mapped file itself (needs CAP_SYS_ADMIN or CAP_CHECKPOINT_RESTORE),
	 * else the path if it is the same file, else the path in the target's
	 * root: it may live in another mount namespace or a chroot */
	int found = 0;
	if (m) {
		snprintf(alt, sizeof alt, "/proc/%d/map_files/%llx-%llx", (int)pid,
			 (unsigned long long)m->start, (unsigned long long)m->end);
		found = read_syms(alt, m->inode, &s) == 0;
	}
	/* by path: first the same file (inode), then any (overlay file systems
	 * show another inode than the mapped file's) */
	for (int pass = 0; pass < (m ? 2 : 1) && !found; pass++) {
		unsigned long inode = m && pass == 0 ? m->inode : 0;
		found = read_syms(path, inode, &s) == 0;
		if (!found) {
			snprintf(alt, sizeof alt, "/proc/%d/root%s", (int)pid, path);
			found = read_syms(alt, inode, &s) == 0;
		}
	}
	if (!found)
		return -1;
	uint64_t bias = 0;
	if (s.is_dyn) {
		uint64_t base = UINT64_MAX;
		for (size_t i = 0; i < nmaps; i++)
			if (maps[i].offset == 0 && strcmp(maps[i].path, path) == 0 &&
			    maps[i].start < base)
				base = maps[i].start;
		if (base == UINT64_MAX)
			return -1;
		bias = base - s.min_vaddr;
	}
	p->runtime = s.runtime + bias;
	p->code_type = s.code_type ? s.code_type + bias : 0;
	p->hexversion = 0;
	if (s.version) {
		unsigned long v = 0;
		if (pl_pyproc_read(pid, s.version + bias, &v, sizeof v) < 0)
			return -2;
		p->hexversion = v;
	} else {
		/* 3.13+: the _Py_DebugOffsets at the start of _PyRuntime say */
		char dbg[16];
		if (pl_pyproc_read(pid, p->runtime, dbg, sizeof dbg) < 0)
			return -2;
		if (memcmp(dbg, "xdebugpy", 8) == 0)
			memcpy(&p->hexversion, dbg + 8, sizeof p->hexversion);
	}
	snprintf(p->binary, sizeof p->binary, "%s", path);
	return 0;
}

/* The checked scan, for an interpreter whose _PyRuntime has neither a
 * symbol nor its section (a stripped, embedded build): 3.13 and later start
 * _PyRuntime with the _Py_DebugOffsets cookie "xdebugpy" and the version,
 * so the writable mappings of the file named path are searched for the
 * cookie, at 8-byte alignment, followed by a plausible 3.13+ version. 0
 * found; -1 not found; -2 the memory could not be read. */
#define SCAN_STEP (1u << 20)
static int scan_for_runtime(pid_t pid, const struct mapping *maps, size_t nmaps, const char *path,
			    struct pl_pyproc *p)
{
	uint8_t *buf = malloc(SCAN_STEP + 16);
	if (!buf)
		return -1;
	int rc = -1;
	for (size_t i = 0; i < nmaps && rc == -1; i++) {
		const struct mapping *m = &maps[i];
		if (!m->writable || strcmp(m->path, path) != 0)
			continue;
		for (uint64_t a = m->start; a < m->end && rc == -1; a += SCAN_STEP) {
			size_t len = m->end - a > SCAN_STEP ? SCAN_STEP : (size_t)(m->end - a);
			if (pl_pyproc_read(pid, a, buf, len) < 0) {
				rc = errno == EFAULT ? -1 : -2;
				break;
			}
			for (size_t o = 0; o + 16 <= len; o += 8) {
				if (memcmp(buf + o, "xdebugpy", 8) != 0)
					continue;
				uint64_t v;
				memcpy(&v, buf + o + 8, 8);
				if ((v >> 24) == 3 && (v >> 16 & 0xff) >= 13 && (v >> 16 & 0xff) < 64) {
					p->runtime = a + o;
					p->hexversion = (unsigned long)v;
					p->code_type = 0;
					snprintf(p->binary, sizeof p->binary, "%s", path);
					rc = 0;
					break;
				}
			}
		}
	}
	free(buf);
	return rc;
}

int pl_pyproc_attach(pid_t pid, struct pl_pyproc *p, struct pl_error *err)
{
	char path[64], line[1400];
	memset(p, 0, sizeof *p);
	p->pid = pid;
	snprintf(path, sizeof path, "/proc/%d/maps", (int)pid);
	FILE *f = fopen(path, "re");
	if (!f) {
		if (errno == ENOENT)
			return pl_error_set(err, PL_EINPUT, "no process with PID %d", (int)pid);
		return pl_error_set(err, PL_ESYS,
				    "cannot read /proc/%d/maps: %s (reading another user's "
				    "process needs CAP_SYS_PTRACE)",
				    (int)pid, strerror(errno));
	}
	struct mapping *maps = NULL;
	size_t n = 0, cap = 0;
	while (fgets(line, sizeof line, f)) {
		unsigned long long start, end, off;
		char perms[8];
		int pos = 0;
		unsigned long inode = 0;
		if (sscanf(line, "%llx-%llx %7s %llx %*s %lu%n", &start, &end, perms, &off, &inode,
			   &pos) < 5)
			continue;
		char *pth = line + pos;
		while (*pth == ' ')
			pth++;
		pth[strcspn(pth, "\n")] = '\0';
		if (pth[0] != '/')
			continue;
		if (n == cap) {
			cap = cap ? cap * 2 : 64;
			struct mapping *nm = realloc(maps, cap * sizeof *maps);
			if (!nm) {
				free(maps);
				fclose(f);
				return pl_error_set(err, PL_ENOMEM, "out of memory");
			}
			maps = nm;
		}
		maps[n].start = start;
		maps[n].end = end;
		maps[n].writable = perms[1] == 'w';
		maps[n].inode = inode;
		maps[n].offset = off;
		snprintf(maps[n].path, sizeof maps[n].path, "%s", pth);
		n++;
	}
	fclose(f);

	/* libpython first: an executable linked against it has no _PyRuntime */
	int rc = -1;
	char tried_buf[1024];
	const char *tried = NULL; /* the first candidate file, for messages */
	for (int pass = 0; pass < 2 && rc == -1; pass++) {
		for (size_t i = 0; i < n && rc == -1; i++) {
			if (maps[i].offset != 0)
				continue;
			int lib = is_libpython(maps[i].path);
			const char *b = strrchr(maps[i].path, '/');
			int exe = b && strncmp(b + 1, "python", 6) == 0;
			if (pass == 0 ? !lib : !exe)
				continue;
			if (!tried) {
				snprintf(tried_buf, sizeof tried_buf, "%s", maps[i].path);
				tried = tried_buf;
			}
			rc = try_file(pid, maps, n, maps[i].path, p);
		}
	}
	if (rc == -1) {
		/* any executable: embedded interpreters, renamed binaries */
		char exe[1024];
		snprintf(path, sizeof path, "/proc/%d/exe", (int)pid);
		ssize_t k = readlink(path, exe, sizeof exe - 1);
		if (k > 0) {
			exe[k] = '\0';
			rc = try_file(pid, maps, n, exe, p);
		}
	}
	if (rc == -1) {
		/* no symbol and no section: scan the candidates' data (3.13+),
		 * then the executable's when it was not one of them */
		int exe_scanned = 0;
		char exe[1024];
		snprintf(path, sizeof path, "/proc/%d/exe", (int)pid);
		ssize_t k = readlink(path, exe, sizeof exe - 1);
		exe[k > 0 ? k : 0] = '\0';
		for (size_t i = 0; i < n && rc == -1; i++) {
			if (maps[i].offset != 0)
				continue;
			const char *b = strrchr(maps[i].path, '/');
			if (is_libpython(maps[i].path) || (b && strncmp(b + 1, "python", 6) == 0)) {
				rc = scan_for_runtime(pid, maps, n, maps[i].path, p);
				exe_scanned |= strcmp(maps[i].path, exe) == 0;
			}
		}
		if (rc == -1 && exe[0] && !exe_scanned)
			rc = scan_for_runtime(pid, maps, n, exe, p);
	}
	int major = 0, minor = 0;
	int named = tried && version_from_name(tried, &major, &minor) == 0;
	free(maps);
	if (rc == -2) {
		int e = errno;
		if (e == ESRCH)
			return pl_error_set(err, PL_EINPUT, "process %d exited", (int)pid);
		if (e == EFAULT) /* exec'd between reading its maps and its memory */
			return pl_error_set(err, PL_EINPUT,
					    "process %d changed while it was read (an exec?)",
					    (int)pid);
		return pl_error_set(err, PL_ESYS,
				    "cannot read the memory of process %d: %s (needs the same "
				    "user and ptrace access: CAP_SYS_PTRACE, or "
				    "kernel.yama.ptrace_scope=0)",
				    (int)pid, strerror(e));
	}
	if (rc < 0) {
		char cmd[256];
		pl_pyproc_cmdline(pid, cmd, sizeof cmd);
		if (named)
			return pl_error_set(err, PL_EINPUT,
					    "process %d (%s) runs Python %d.%d, which perfloop "
					    "cannot read: no _PyRuntime symbol in %s",
					    (int)pid, cmd, major, minor, tried);
		return pl_error_set(err, PL_EINPUT,
				    "process %d (%s) is not a CPython process: no libpython or "
				    "python executable with a _PyRuntime symbol is mapped",
				    (int)pid, cmd);
	}
	if (p->hexversion == 0) {
		/* before 3.11 there is no Py_Version: the file name tells */
		if (named)
			return pl_error_set(err, PL_ENOTSUP,
					    "process %d runs Python %d.%d; perfloop profile reads "
					    "CPython 3.11 to 3.15",
					    (int)pid, major, minor);
		return pl_error_set(err, PL_ENOTSUP,
				    "process %d runs a CPython older than 3.11 (no Py_Version "
				    "symbol in %s); perfloop profile reads CPython 3.11 to 3.15",
				    (int)pid, p->binary);
	}
	p->major = (int)(p->hexversion >> 24) & 0xff;
	p->minor = (int)(p->hexversion >> 16) & 0xff;
	p->micro = (int)(p->hexversion >> 8) & 0xff;
	return PL_OK;
}
