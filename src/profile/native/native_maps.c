/*
 * The native profiler's map of each process: its executable mappings,
 * sorted and never overlapping, from MMAP2 records as they arrive or from
 * /proc/PID/maps (a process attached with -p, profile --mode mixed). A
 * process in a chroot or another mount namespace (a container) names its
 * own files: they are reached through its root, /proc/PID/root, and opened
 * while it is there. Unmapping leaves no record, so a mapping is known gone
 * when another lands where its file lay. Private to the native profiler
 * (native_int.h).
 */
#include "native_int.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "hash.h"

/* ---- a process's root: chroots and containers ---- */

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

int pl_native_proc_file_index(struct nat *N, struct nproc *p, const char *name)
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
				return pl_native_file_index(N, name);
			int fi = pl_native_file_index(N, full);
			if (fi >= 0)
				pl_native_file_load(&N->files[fi]);
			return fi;
		}
	}
	if (!p->root[0])
		return pl_native_file_index(N, name);
	char full[4096];
	snprintf(full, sizeof(full), "%s%s", p->root, name);
	return pl_native_file_index(N, full);
}

/* ---- processes and their maps ---- */

struct nproc *pl_native_proc_get(struct nat *N, pid_t pid, int create)
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
void pl_native_proc_reset_after(struct nproc *p, uint64_t after)
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

void pl_native_proc_reset(struct nproc *p)
{
	pl_native_proc_reset_after(p, UINT64_MAX);
}

/* Where a mapping's file lies once loaded: each PT_LOAD segment at the
 * mapping's bias, page-rounded (the mapping alone for a file not read).
 * The loader maps every segment, so no other file lies there while this
 * one is loaded. Returns the count (at most 16). */
static size_t map_segments(struct nat *N, const struct nmap *m, uint64_t lo[16], uint64_t hi[16])
{
	struct nfile *f = m->file >= 0 && m->segs ? &N->files[m->file] : NULL;
	if (f)
		pl_native_file_header(f);
	uint64_t b = f ? pl_native_map_bias(f, m) : 0;
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

void pl_native_map_add(struct nat *N, struct nproc *p, uint64_t start, uint64_t len, uint64_t pgoff,
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
				   (file < 0 || pl_native_map_bias(&N->files[file], &m) ==
						    pl_native_map_bias(&N->files[file], &nm));
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
			if (m.start == start && m.end == end && m.pgoff == pgoff &&
			    m.file == file) {
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

const struct nmap *pl_native_map_find(const struct nproc *p, uint64_t addr)
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
uint64_t pl_native_maps_from_proc(struct nat *N, struct nproc *p)
{
	char path[64];
	snprintf(path, sizeof(path), "/proc/%d/maps", (int)p->pid);
	FILE *f = fopen(path, "r");
	if (!f)
		return 0;
	uint64_t h = pl_native_maps_from(N, p, f);
	fclose(f);
	return h;
}

/* maps lines from f (a /proc/PID/maps or a copy of one) */
uint64_t pl_native_maps_from(struct nat *N, struct nproc *p, FILE *f)
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
		int fi = strcmp(name, "[vdso]") == 0 ? pl_native_vdso_file(N, e - s) : NO_FILE, segs = 1;
		size_t len = strlen(name);
		if (len > 10 && strcmp(name + len - 10, " (deleted)") == 0) {
			/* whatever is at that path now is not the file mapped
			 * (replaced by an upgrade, or gone): not read */
			name[len - 10] = '\0';
			char gone[4200];
			snprintf(gone, sizeof(gone), "%s (not the mapped file)", name);
			fi = pl_native_file_index(N, gone);
			segs = 0;
		} else if (name[0] == '/') {
			/* a container's path names its own file, whatever this
			 * host has at that path (its libc: the wrong symbols) */
			proc_root(p);
			fi = !p->other_ns && access(name, R_OK) == 0
				 ? pl_native_file_index(N, name)
				 : pl_native_proc_file_index(N, p, name);
		}
		pl_native_map_add(N, p, s, e - s, off, fi, 0, segs);
	}
	return h ? h : 1;
}
