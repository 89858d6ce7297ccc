/*
 * profile --alloc's reader: see allocprof.h, and src/preload/alloc.c for
 * the file format.
 */
#include "allocprof.h"

#include <dirent.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "fsio.h"
#include "grow.h"
#include "hash.h"
#include "pystack.h"
#include "render.h"
#include "native.h"

#define MAX_FRAMES 256
#define MAX_PY 256 /* the sampler's PY_MAX */

/* frames that allocate on someone else's behalf: the site is the first
 * frame below them */
static int allocator_frame(const char *name)
{
	static const char *const exact[] = {
	    "malloc", "calloc", "realloc", "reallocarray", "free", "aligned_alloc",
	    "posix_memalign", "memalign", "valloc", "pvalloc", "mmap", "mmap64", "strdup",
	    "strndup", "xmalloc", "xcalloc", "xrealloc", "g_malloc", "g_malloc0", "g_realloc",
	    "operator new", "operator new[]", "operator new(unsigned long)",
	    "operator new[](unsigned long)"};
	static const char *const prefix[] = {"__libc_", "_PyMem_", "PyMem_", "_PyObject_Malloc",
					     "PyObject_Malloc", "_PyObject_Calloc",
					     "PyObject_Calloc", "_PyObject_Realloc",
					     "PyObject_Realloc", "std::allocator",
					     "std::__new_allocator", "__gnu_cxx::new_allocator",
					     "std::allocator_traits", "operator new",
					     "__gnu_cxx::__aligned_membuf"};
	for (size_t i = 0; i < sizeof exact / sizeof *exact; i++)
		if (strcmp(name, exact[i]) == 0)
			return 1;
	for (size_t i = 0; i < sizeof prefix / sizeof *prefix; i++)
		if (strncmp(name, prefix[i], strlen(prefix[i])) == 0)
			return 1;
	return 0;
}

/* ---- stacks, interned by their frame ids ---- */

struct intern {
	uint32_t *tab; /* stack index + 1 */
	size_t cap;
};

static uint64_t ids_hash(const uint32_t *ids, size_t n)
{
	uint64_t h = PL_FNV_INIT;
	return pl_fnv1a_bytes(h, ids, n * sizeof(*ids));
}

static long stack_intern(struct pl_alloc *a, struct intern *in, const uint32_t *ids, size_t n)
{
	if ((a->nstacks + 1) * 2 > in->cap) {
		size_t cap = in->cap ? in->cap * 2 : 1024;
		uint32_t *t = calloc(cap, sizeof(*t));
		if (!t)
			return -1;
		for (size_t i = 0; i < a->nstacks; i++) {
			const struct pl_alloc_stack *s = &a->stacks[i];
			size_t k = ids_hash(a->ids + s->off, s->depth) & (cap - 1);
			while (t[k])
				k = (k + 1) & (cap - 1);
			t[k] = (uint32_t)i + 1;
		}
		free(in->tab);
		in->tab = t;
		in->cap = cap;
	}
	size_t k = ids_hash(ids, n) & (in->cap - 1);
	while (in->tab[k]) {
		const struct pl_alloc_stack *s = &a->stacks[in->tab[k] - 1];
		if (s->depth == n && memcmp(a->ids + s->off, ids, n * sizeof(*ids)) == 0)
			return in->tab[k] - 1;
		k = (k + 1) & (in->cap - 1);
	}
	if (pl_grow((void **)&a->stacks, &a->capstacks, a->nstacks + 1, sizeof *a->stacks, 256) < 0 ||
	    pl_grow((void **)&a->ids, &a->capids, a->nids + n, sizeof *a->ids, 4096) < 0)
		return -1;
	struct pl_alloc_stack *s = &a->stacks[a->nstacks];
	memset(s, 0, sizeof(*s));
	s->off = a->nids;
	s->depth = n;
	memcpy(a->ids + a->nids, ids, n * sizeof(*ids));
	a->nids += n;
	/* the site: innermost frame that is not an allocator's (root first,
	 * so from the end) */
	s->site = n ? ids[n - 1] : UINT32_MAX;
	s->pysite = UINT32_MAX;
	for (size_t i = n; i-- > 0;)
		if (ids[i] < a->cap_is_py && a->is_py[ids[i]]) {
			s->pysite = ids[i];
			break;
		}
	for (size_t i = n; i-- > 0;)
		if (!allocator_frame(a->prof.frames[ids[i]].name)) {
			s->site = ids[i];
			break;
		}
	in->tab[k] = (uint32_t)a->nstacks + 1;
	return (long)a->nstacks++;
}

/* ---- live blocks while replaying: address -> (stack, weight) ---- */

struct live {
	uint64_t *addr; /* 0 empty, 1 deleted */
	uint32_t *stack;
	double *w;
	size_t cap, used, dead;
};

static size_t live_slot(uint64_t a, size_t cap)
{
	return (size_t)((a * 0x9e3779b97f4a7c15ULL) >> 17) & (cap - 1);
}

static int live_put(struct live *l, uint64_t a, uint32_t st, double w)
{
	if ((l->used + l->dead + 1) * 2 > l->cap) {
		size_t cap = l->cap ? l->cap * 2 : 4096;
		while ((l->used + 1) * 2 > cap)
			cap *= 2;
		uint64_t *na = calloc(cap, sizeof(*na));
		uint32_t *ns = malloc(cap * sizeof(*ns));
		double *nw = malloc(cap * sizeof(*nw));
		if (!na || !ns || !nw) {
			free(na);
			free(ns);
			free(nw);
			return -1;
		}
		for (size_t i = 0; i < l->cap; i++)
			if (l->addr[i] > 1) {
				size_t k = live_slot(l->addr[i], cap);
				while (na[k])
					k = (k + 1) & (cap - 1);
				na[k] = l->addr[i];
				ns[k] = l->stack[i];
				nw[k] = l->w[i];
			}
		free(l->addr);
		free(l->stack);
		free(l->w);
		l->addr = na;
		l->stack = ns;
		l->w = nw;
		l->cap = cap;
		l->dead = 0;
	}
	size_t k = live_slot(a, l->cap);
	while (l->addr[k] > 1 && l->addr[k] != a)
		k = (k + 1) & (l->cap - 1);
	if (l->addr[k] != a)
		l->used++;
	l->addr[k] = a;
	l->stack[k] = st;
	l->w[k] = w;
	return 0;
}

/* 1 and the block's stack and weight, or 0 when not live */
static int live_take(struct live *l, uint64_t a, uint32_t *st, double *w)
{
	if (!l->cap || a <= 1)
		return 0;
	size_t k = live_slot(a, l->cap);
	while (l->addr[k]) {
		if (l->addr[k] == a) {
			*st = l->stack[k];
			*w = l->w[k];
			l->addr[k] = 1;
			l->used--;
			l->dead++;
			return 1;
		}
		k = (k + 1) & (l->cap - 1);
	}
	return 0;
}

static void live_free(struct live *l)
{
	free(l->addr);
	free(l->stack);
	free(l->w);
	memset(l, 0, sizeof(*l));
}

/* ---- one process's file ---- */

/* ---- code objects named by a 'C' record: address -> frame id ---- */

struct pycodes {
	uint64_t *addr; /* 0: empty */
	uint32_t *id;
	size_t n, cap;
};

static size_t pycode_slot(uint64_t addr, size_t cap)
{
	return (size_t)((addr >> 4) * 0x9e3779b97f4a7c15ULL >> 20) & (cap - 1);
}

static int pycode_put(struct pycodes *c, uint64_t addr, uint32_t id)
{
	if ((c->n + 1) * 2 > c->cap) {
		size_t cap = c->cap ? c->cap * 2 : 1024;
		uint64_t *a = calloc(cap, sizeof *a);
		uint32_t *d = calloc(cap, sizeof *d);
		if (!a || !d) {
			free(a);
			free(d);
			return -1;
		}
		for (size_t i = 0; i < c->cap; i++) {
			if (!c->addr[i])
				continue;
			size_t j = pycode_slot(c->addr[i], cap);
			while (a[j])
				j = (j + 1) & (cap - 1);
			a[j] = c->addr[i];
			d[j] = c->id[i];
		}
		free(c->addr);
		free(c->id);
		c->addr = a;
		c->id = d;
		c->cap = cap;
	}
	size_t j = pycode_slot(addr, c->cap);
	while (c->addr[j] && c->addr[j] != addr)
		j = (j + 1) & (c->cap - 1);
	if (!c->addr[j])
		c->n++;
	c->addr[j] = addr; /* a reused address: the newer names */
	c->id[j] = id;
	return 0;
}

static long pycode_get(const struct pycodes *c, uint64_t addr)
{
	if (!c->cap || !addr)
		return -1;
	for (size_t j = pycode_slot(addr, c->cap); c->addr[j]; j = (j + 1) & (c->cap - 1))
		if (c->addr[j] == addr)
			return c->id[j];
	return -1;
}

struct event {
	uint64_t t, addr;
	uint32_t stack; /* UINT32_MAX: a free */
	double w, c;	/* estimated bytes and calls it stands for */
};

struct reader {
	const unsigned char *p, *end;
	int bad;
};

static int rd(struct reader *r, void *out, size_t n)
{
	if ((size_t)(r->end - r->p) < n) {
		r->bad = 1;
		return -1;
	}
	memcpy(out, r->p, n);
	r->p += n;
	return 0;
}

/* A 'C' record's string as UTF-8 into out (room for 4 * 4096 + 1). */
static int rd_pystr(struct reader *r, char *out)
{
	uint8_t kind;
	uint32_t len;
	if (rd(r, &kind, 1) || rd(r, &len, 4) || len > 4096 ||
	    (kind != 0 && kind != 1 && kind != 2 && kind != 4) ||
	    (size_t)(r->end - r->p) < (size_t)len * kind) {
		r->bad = 1;
		return -1;
	}
	if (!kind || !len)
		snprintf(out, 2, "?");
	else
		pl_pystr_utf8(kind, r->p, len, out);
	r->p += (size_t)len * kind;
	return 0;
}

/* 1 / the probability that an allocation of size bytes is sampled: the
 * calls one sample stands for (times size: the bytes) */
static double inv_p(uint64_t size, uint64_t rate)
{
	double s = size ? (double)size : 1;
	double p = -expm1(-s / (double)rate);
	return p > 0 ? 1 / p : 1;
}

static int read_proc(struct pl_alloc *a, struct intern *in, struct pl_native_syms *syms,
		     const unsigned char *data, size_t len, struct pl_error *err, const char *path)
{
	struct reader r = {data + 8, data + len, 0};
	uint64_t rate;
	uint32_t pid, ppid;
	if (rd(&r, &rate, 8) || rd(&r, &pid, 4) || rd(&r, &ppid, 4) || !rate)
		return pl_error_set(err, PL_EINPUT, "%s: a truncated header", path);
	a->rate = rate;
	struct pl_alloc_proc *pp = realloc(a->procs, (a->nprocs + 1) * sizeof(*pp));
	if (!pp)
		return PL_ENOMEM;
	a->procs = pp;
	struct pl_alloc_proc *P = &a->procs[a->nprocs++];
	memset(P, 0, sizeof(*P));
	P->pid = (int)pid;
	P->ppid = (int)ppid;

	struct event *ev = NULL;
	size_t nev = 0, capev = 0;
	char *maps = NULL;
	size_t mlen = 0, mcap = 0;
	uint64_t t0 = 0, tend = 0, tfin = 0;
	size_t fin_at = 0; /* events before the interpreter's teardown ('Z'), 0: none */
	struct pycodes codes = {0};
	int rc = PL_OK;
	while (r.p < r.end && rc == PL_OK) {
		uint8_t kind = *r.p++;
		if (kind == 'm' || kind == 'M') {
			uint32_t n;
			if (rd(&r, &n, 4) || (size_t)(r.end - r.p) < n)
				break;
			if (kind == 'M') {
				pl_native_syms_maps_text(syms, (pid_t)pid, maps, mlen);
				mlen = 0;
				continue;
			}
			if (mlen + n > mcap) {
				size_t cap = (mlen + n) * 2;
				char *g = realloc(maps, cap);
				if (!g) {
					rc = PL_ENOMEM;
					break;
				}
				maps = g;
				mcap = cap;
			}
			memcpy(maps + mlen, r.p, n);
			mlen += n;
			r.p += n;
		} else if (kind == 'A') {
			uint64_t t, addr, size;
			uint32_t tid, n;
			if (rd(&r, &t, 8) || rd(&r, &addr, 8) || rd(&r, &size, 8) || rd(&r, &tid, 4) ||
			    rd(&r, &n, 4) || (size_t)(r.end - r.p) / 8 < n)
				break;
			uint32_t ids[MAX_FRAMES * 4 + MAX_PY];
			size_t depth = 0;
			/* leaf first in the file; every pc a return address but
			 * the library's own frames, already left out */
			uint64_t pcs[MAX_FRAMES];
			size_t npc = n < MAX_FRAMES ? n : MAX_FRAMES;
			for (size_t i = 0; i < npc; i++) {
				memcpy(&pcs[i], r.p + 8 * i, 8);
				pcs[i]--;
			}
			r.p += 8 * (size_t)n;
			/* its Python frames, leaf first, where the thread ran Python */
			uint32_t py[MAX_PY];
			uint8_t entry[MAX_PY];
			size_t npy = 0;
			if (r.p < r.end && *r.p == 'P') {
				uint32_t m;
				r.p++;
				if (rd(&r, &m, 4) || m > MAX_PY || (size_t)(r.end - r.p) / 9 < m)
					break;
				for (uint32_t i = 0; i < m; i++, r.p += 9) {
					uint64_t code;
					memcpy(&code, r.p, 8);
					long id = pycode_get(&codes, code);
					if (id >= 0) {
						py[npy] = (uint32_t)id;
						entry[npy++] = r.p[8];
					} else if (r.p[8] && npy) {
						entry[npy - 1] = 1;
					}
				}
				P->py_samples += npy > 0;
			}
			if (npy) {
				int approx, unmatched;
				depth = pl_native_splice(syms, (pid_t)pid, pcs, npc, py, entry, npy, ids,
							 sizeof ids / sizeof *ids, &approx, &unmatched);
			} else {
				for (size_t i = 0; i < npc; i++) {
					const uint32_t *fids;
					enum pl_native_kind k;
					size_t m = pl_native_pc_frames(syms, (pid_t)pid, pcs[i], &fids, &k);
					for (size_t j = 0; j < m && depth < sizeof ids / sizeof *ids; j++)
						ids[depth++] = fids[j];
				}
			}
			/* root first */
			for (size_t i = 0; i < depth / 2; i++) {
				uint32_t x = ids[i];
				ids[i] = ids[depth - 1 - i];
				ids[depth - 1 - i] = x;
			}
			if (!depth) {
				long u = pl_prof_frame(&a->prof, "[unknown]", "", 0, 0, 0);
				if (u < 0) {
					rc = PL_ENOMEM;
					break;
				}
				ids[depth++] = (uint32_t)u;
			}
			long st = stack_intern(a, in, ids, depth);
			if (st < 0) {
				rc = PL_ENOMEM;
				break;
			}
			if (pl_grow((void **)&ev, &capev, nev + 1, sizeof *ev, 4096) < 0) {
				rc = PL_ENOMEM;
				break;
			}
			double c = inv_p(size, rate);
			ev[nev++] = (struct event){t, addr, (uint32_t)st, c * (double)(size ? size : 1), c};
			if (!t0)
				t0 = t;
			tend = t > tend ? t : tend;
			P->samples++;
		} else if (kind == 'C') {
			uint64_t code;
			int32_t first;
			static char name[4 * 4096 + 1], file[4 * 4096 + 1];
			if (rd(&r, &code, 8) || rd(&r, &first, 4) || rd_pystr(&r, name) ||
			    rd_pystr(&r, file))
				break;
			long id = pl_prof_frame(&a->prof, name, file, first, first, 0);
			size_t had = a->cap_is_py;
			if (id < 0 || pycode_put(&codes, code, (uint32_t)id) < 0 ||
			    pl_grow((void **)&a->is_py, &a->cap_is_py, (size_t)id + 1, 1, 1024) < 0) {
				rc = PL_ENOMEM;
				break;
			}
			memset(a->is_py + had, 0, a->cap_is_py - had);
			a->is_py[id] = 1;
		} else if (kind == 'F') {
			uint64_t t, addr;
			if (rd(&r, &t, 8) || rd(&r, &addr, 8))
				break;
			if (pl_grow((void **)&ev, &capev, nev + 1, sizeof *ev, 4096) < 0) {
				rc = PL_ENOMEM;
				break;
			}
			ev[nev++] = (struct event){t, addr, UINT32_MAX, 0, 0};
			tend = t > tend ? t : tend;
		} else if (kind == 'Z') { /* the interpreter's teardown begins */
			uint64_t t;
			if (rd(&r, &t, 8))
				break;
			if (!fin_at) {
				fin_at = nev;
				tfin = t;
			}
		} else if (kind == 'E') {
			uint64_t t;
			if (rd(&r, &t, 8) || rd(&r, &P->calls, 8) || rd(&r, &P->bytes, 8) ||
			    rd(&r, &P->dropped, 8))
				break;
			tend = t > tend ? t : tend;
			P->finished = 1;
		} else {
			break; /* a record cut by a kill: what came before stands */
		}
	}
	free(maps);
	free(codes.addr);
	free(codes.id);
	if (rc != PL_OK) {
		free(ev);
		return rc;
	}
	if (a->prof.oom) {
		free(ev);
		return PL_ENOMEM;
	}
	P->duration = tend > t0 ? (double)(tend - t0) / 1e9 : 0;

	/* replay: allocated and live by stack, the peak, the growth by tenths,
	 * up to the end of the program's own code: in a Python program, the
	 * interpreter's teardown ('Z') frees everything, and "live at the end"
	 * would always be 0 */
	struct live l = {0};
	double live = 0;
	size_t peak_at = 0;
	size_t live_n = nev; /* the events live bytes are replayed over */
	int floor_set[10] = {0};
	if (fin_at && tfin > t0) {
		P->ended_at_teardown = 1;
		live_n = fin_at;
		tend = tfin;
	}
	/* the teardown's allocations still count as allocated */
	for (size_t i = live_n; i < nev; i++)
		if (ev[i].stack != UINT32_MAX) {
			struct pl_alloc_stack *s = &a->stacks[ev[i].stack];
			s->alloc_bytes += ev[i].w;
			s->calls += ev[i].c;
			s->samples++;
			P->est_bytes += ev[i].w;
		}
	for (size_t i = 0; i < live_n && rc == PL_OK; i++) {
		struct event *e = &ev[i];
		if (e->stack != UINT32_MAX) {
			struct pl_alloc_stack *s = &a->stacks[e->stack];
			uint32_t ost;
			double ow;
			if (live_take(&l, e->addr, &ost, &ow)) { /* its free went unseen */
				a->stacks[ost].live -= ow;
				live -= ow;
			}
			s->alloc_bytes += e->w;
			s->calls += e->c;
			s->samples++;
			s->live += e->w;
			live += e->w;
			P->est_bytes += e->w;
			if (live_put(&l, e->addr, e->stack, e->w) != 0)
				rc = PL_ENOMEM;
			if (live > P->peak_live) {
				P->peak_live = live;
				P->peak_t = e->t > t0 ? (double)(e->t - t0) / 1e9 : 0;
				peak_at = i + 1;
			}
		} else {
			uint32_t st;
			double w;
			if (live_take(&l, e->addr, &st, &w)) {
				a->stacks[st].live -= w;
				live -= w;
			}
		}
		if (tend > t0) {
			/* a forked child frees inherited blocks before its first
			 * sample: those come before t0 */
			double f = e->t > t0 ? (double)(e->t - t0) / (double)(tend - t0) : 0;
			int tenth = f >= 0.9 ? 9 : (int)(10 * f);
			for (int k = tenth; k < 10; k++)
				P->growth[k] = live;
			if (!floor_set[tenth] || live < P->floor[tenth])
				P->floor[tenth] = live;
			floor_set[tenth] = 1;
		}
	}
	for (int k = 0; k < 10; k++) /* a tenth with no event: as it stood */
		if (!floor_set[k])
			P->floor[k] = k ? P->growth[k - 1] : 0;
	/* sums of doubles: a stack whose blocks were all freed keeps a
	 * rounding residue */
	P->end_live = live < 0.5 ? 0 : live;
	for (size_t i = 0; i < a->nstacks; i++) {
		if (a->stacks[i].live >= 0.5)
			a->stacks[i].live_end += a->stacks[i].live;
		a->stacks[i].live = 0;
	}
	/* live at the peak: the replay again, up to it */
	live_free(&l);
	for (size_t i = 0; i < peak_at && rc == PL_OK; i++) {
		struct event *e = &ev[i];
		uint32_t st;
		double w;
		if (live_take(&l, e->addr, &st, &w))
			a->stacks[st].live -= w;
		if (e->stack != UINT32_MAX) {
			a->stacks[e->stack].live += e->w;
			if (live_put(&l, e->addr, e->stack, e->w) != 0)
				rc = PL_ENOMEM;
		}
	}
	for (size_t i = 0; i < a->nstacks; i++) {
		if (a->stacks[i].live >= 0.5)
			a->stacks[i].live_peak += a->stacks[i].live;
		a->stacks[i].live = 0;
	}
	live_free(&l);
	free(ev);
	return rc;
}

int pl_alloc_read_dir(const char *dir, const char *root, struct pl_alloc *a, struct pl_error *err)
{
	a->prof.root = root;
	DIR *d = opendir(dir);
	if (!d)
		return pl_error_set(err, PL_ESYS, "cannot read '%s'", dir);
	char **names = NULL;
	size_t n = 0;
	struct dirent *de;
	while ((de = readdir(d))) {
		if (strncmp(de->d_name, "alloc.", 6) != 0)
			continue;
		char **g = realloc(names, (n + 1) * sizeof(*g));
		if (!g || !(g[n] = strdup(de->d_name))) {
			free(g ? g : names);
			closedir(d);
			return PL_ENOMEM;
		}
		names = g;
		n++;
	}
	closedir(d);
	struct pl_native_syms *syms = pl_native_syms_new(&a->prof, 0);
	struct intern in = {0};
	int rc = syms ? PL_OK : PL_ENOMEM;
	for (size_t i = 0; i < n && rc == PL_OK; i++) {
		char path[4400];
		snprintf(path, sizeof(path), "%s/%s", dir, names[i]);
		size_t len = 0;
		int missing = 0;
		char *data = pl_fsio_read(path, &len, &missing);
		if (!data) {
			rc = pl_error_set(err, PL_ESYS, "cannot read '%s'", path);
			break;
		}
		if (len < 8 || memcmp(data, "PLALLOC1", 8) != 0)
			a->files_empty++;
		else
			rc = read_proc(a, &in, syms, (const unsigned char *)data, len, err, path);
		free(data);
	}
	for (size_t i = 0; i < n; i++)
		free(names[i]);
	free(names);
	free(in.tab);
	pl_native_syms_free(syms);
	return rc;
}

int pl_alloc_profile(const struct pl_alloc *a, int what, struct pl_prof *out)
{
	memset(out, 0, sizeof(*out));
	out->root = a->prof.root;
	out->unit = "KiB";
	/* the same frame ids: copy the frames first */
	for (size_t i = 0; i < a->prof.nframes; i++) {
		const struct pl_prof_frame *f = &a->prof.frames[i];
		if (pl_prof_frame(out, f->name, f->file, f->line, f->func_line, f->synthetic) < 0)
			return -1;
	}
	uint32_t ids[MAX_FRAMES * 4 + 1];
	for (size_t i = 0; i < a->nstacks; i++) {
		const struct pl_alloc_stack *s = &a->stacks[i];
		double v = what == PL_ALLOC_ALLOCATED  ? s->alloc_bytes
			   : what == PL_ALLOC_LIVE_END ? s->live_end
						       : s->live_peak;
		uint64_t kib = (uint64_t)llround(v / 1024);
		if (kib == 0)
			continue;
		size_t d = s->depth < MAX_FRAMES * 4 ? s->depth : MAX_FRAMES * 4;
		memcpy(ids, a->ids + s->off, d * sizeof(*ids));
		if (pl_prof_add(out, ids, d, kib) != 0)
			return -1;
	}
	return out->oom ? -1 : 0;
}

/* ---- sites: stacks grouped by their allocating frame ---- */

struct site {
	uint32_t frame;
	double alloc, calls, live_end, live_peak;
	uint64_t samples;
};

static int cmp_site(const void *x, const void *y)
{
	const struct site *a = x, *b = y;
	return a->alloc < b->alloc ? 1 : a->alloc > b->alloc ? -1 : (int)a->frame - (int)b->frame;
}

/* By allocating frame, or (python) by innermost Python frame. */
static struct site *sites(const struct pl_alloc *a, int python, size_t *n)
{
	struct site *s = calloc(a->prof.nframes + 1, sizeof(*s));
	if (!s)
		return NULL;
	for (size_t i = 0; i < a->prof.nframes; i++)
		s[i].frame = (uint32_t)i;
	for (size_t i = 0; i < a->nstacks; i++) {
		const struct pl_alloc_stack *st = &a->stacks[i];
		uint32_t at = python ? st->pysite : st->site;
		if (at >= a->prof.nframes)
			continue;
		struct site *x = &s[at];
		x->alloc += st->alloc_bytes;
		x->calls += st->calls;
		x->live_end += st->live_end;
		x->live_peak += st->live_peak;
		x->samples += st->samples;
	}
	size_t k = 0;
	for (size_t i = 0; i < a->prof.nframes; i++)
		if (s[i].samples) {
			s[i].live_end = s[i].live_end < 0.5 ? 0 : s[i].live_end;
			s[i].live_peak = s[i].live_peak < 0.5 ? 0 : s[i].live_peak;
			s[k++] = s[i];
		}
	if (k)
		qsort(s, k, sizeof(*s), cmp_site);
	*n = k;
	return s;
}

static json_t *frame_json(const struct pl_alloc *a, uint32_t id)
{
	const struct pl_prof_frame *f = &a->prof.frames[id];
	return json_pack("{s:s, s:s, s:i}", "function", f->name, "file",
			 pl_prof_shown_file(&a->prof, f->file), "line", f->line);
}

static json_t *sites_json(const struct pl_alloc *a, int python, size_t top)
{
	size_t ns = 0;
	struct site *s = sites(a, python, &ns);
	json_t *out = json_array();
	for (size_t i = 0; s && i < ns && i < top; i++) {
		json_t *f = frame_json(a, s[i].frame);
		json_object_set_new(f, "allocated_bytes", json_real(s[i].alloc));
		json_object_set_new(f, "allocations", json_real(s[i].calls));
		json_object_set_new(f, "live_at_exit_bytes", json_real(s[i].live_end));
		json_object_set_new(f, "live_at_peak_bytes", json_real(s[i].live_peak));
		json_object_set_new(f, "samples", json_integer((json_int_t)s[i].samples));
		json_array_append_new(out, f);
	}
	free(s);
	return out;
}

/* Live bytes retained through a process's run: the least live in each
 * tenth of the run (what stays while temporaries come and go) rose in 6 or
 * more of the 9 steps, and at the end (at exit, or in a Python program
 * when its own code ended, before the interpreter's teardown) at least
 * 1 MiB and 95% of the highest such floor is still live. A temporary built
 * and freed each round raises the peak, not the floor: the rule once
 * asked for the end to be the peak, and a leak beside a large temporary
 * went unreported. The process's index (message in msg), or -1. */
static int growth(const struct pl_alloc *a, char *msg, size_t len)
{
	int best = -1;
	for (size_t i = 0; i < a->nprocs; i++) {
		const struct pl_alloc_proc *p = &a->procs[i];
		int rises = 0;
		double top = p->floor[0];
		for (int k = 1; k < 10; k++) {
			rises += p->floor[k] > p->floor[k - 1] * 1.01;
			top = p->floor[k] > top ? p->floor[k] : top;
		}
		if (p->end_live >= 1 << 20 && p->end_live >= 0.95 * top && rises >= 6 &&
		    (best < 0 || p->end_live > a->procs[best].end_live))
			best = (int)i;
	}
	if (best < 0)
		return -1;
	const struct pl_alloc_proc *p = &a->procs[best];
	/* the site holding most of it */
	size_t ns = 0;
	/* by Python function where the process runs Python */
	struct site *s = sites(a, p->py_samples > 0, &ns);
	if (s && !ns) {
		free(s);
		s = sites(a, 0, &ns);
	}
	size_t top = 0;
	for (size_t i = 1; s && i < ns; i++)
		if (s[i].live_end > s[top].live_end)
			top = i;
	char b[32], c[32];
	int w = snprintf(msg, len,
			 "live memory grows through the run: %s live at %s, what stays rising in "
			 "most tenths of the run (process %d)",
			 pl_fmt_bytes(b, sizeof b, p->end_live),
			 p->ended_at_teardown ? "the end of its code" : "exit", p->pid);
	if (s && ns && s[top].live_end > 0 && w > 0 && (size_t)w < len) {
		const struct pl_prof_frame *f = &a->prof.frames[s[top].frame];
		snprintf(msg + w, len - (size_t)w, "; %s of it allocated in %.100s (%.200s:%d)",
			 pl_fmt_bytes(c, sizeof c, s[top].live_end), f->name,
			 pl_prof_shown_file(&a->prof, f->file), f->line);
	}
	free(s);
	return best;
}

/* Hot allocation sites: a site that makes at least 100,000 allocations
 * (estimated from 10 samples or more) and a fifth of all of them, whose
 * blocks are freed soon after (live at the peak under a tenth of what it
 * allocated): allocation churn inside a loop, where reusing one buffer or a
 * pool saves the allocator's time. Up to max messages in msg; their count. */
#define HOT_CALLS 100000.0
static size_t hot_sites(const struct pl_alloc *a, char msg[][600], size_t max)
{
	double calls = 0, est = 0;
	for (size_t i = 0; i < a->nprocs; i++)
		calls += (double)a->procs[i].calls;
	size_t ns = 0, k = 0;
	struct site *s = sites(a, 0, &ns);
	for (size_t i = 0; s && i < ns; i++)
		est += s[i].calls;
	if (calls < est) /* no totals (killed): the estimates' sum */
		calls = est;
	for (size_t i = 0; s && i < ns && k < max; i++) {
		const struct site *x = &s[i];
		if (x->calls < HOT_CALLS || x->samples < 10 || x->calls < 0.2 * calls ||
		    x->live_peak > 0.1 * x->alloc)
			continue;
		const struct pl_prof_frame *f = &a->prof.frames[x->frame];
		char b[32], n[32];
		snprintf(msg[k++], 600,
			 "hot allocation site: about %s allocations (%.0f%% of all) of %s on "
			 "average in %.100s (%.200s:%d), each freed soon after: allocate once "
			 "outside the loop and reuse the buffer, or pool the blocks",
			 pl_fmt_count(n, sizeof n, x->calls), 100 * x->calls / calls,
			 pl_fmt_bytes(b, sizeof b, x->alloc / x->calls),
			 f->name, pl_prof_shown_file(&a->prof, f->file), f->line);
	}
	free(s);
	return k;
}

static int cmp_live_end(const void *x, const void *y, void *ctx)
{
	const struct pl_alloc *a = ctx;
	double u = a->stacks[*(const size_t *)x].live_end, v = a->stacks[*(const size_t *)y].live_end;
	return u < v ? 1 : u > v ? -1 : 0;
}

json_t *pl_alloc_json(const struct pl_alloc *a, const char *command, size_t top)
{
	double est = 0, live_end = 0;
	uint64_t samples = 0, dropped = 0, calls = 0, bytes = 0;
	json_t *procs = json_array();
	for (size_t i = 0; i < a->nprocs; i++) {
		const struct pl_alloc_proc *p = &a->procs[i];
		calls += p->calls;
		bytes += p->bytes;
		est += p->est_bytes;
		live_end += p->end_live;
		samples += p->samples;
		dropped += p->dropped;
		json_t *g = json_array();
		for (int k = 0; k < 10; k++)
			json_array_append_new(g, json_real(p->growth[k]));
		json_array_append_new(
		    procs, json_pack("{s:i, s:i, s:b, s:I, s:I, s:I, s:I, s:f, s:f, s:f, s:f, s:f, s:o}",
				     "pid", p->pid, "ppid", p->ppid, "finished", p->finished,
				     "allocations", (json_int_t)p->calls, "allocated_bytes_exact",
				     (json_int_t)p->bytes, "samples", (json_int_t)p->samples,
				     "python_samples", (json_int_t)p->py_samples,
				     "allocated_bytes", p->est_bytes, "peak_live_bytes", p->peak_live,
				     "peak_t_s", p->peak_t, "live_at_exit_bytes", p->end_live,
				     "duration_s", p->duration, "live_by_tenth", g));
		json_t *fl = json_array();
		for (int k = 0; k < 10; k++)
			json_array_append_new(fl, json_real(p->floor[k]));
		json_t *last = json_array_get(procs, json_array_size(procs) - 1);
		json_object_set_new(last, "least_live_by_tenth", fl);
		/* where "live at exit" was taken: at exit, or where a Python
		 * program's code ended (its teardown frees everything) */
		json_object_set_new(last, "live_at_exit_taken",
				    json_string(p->ended_at_teardown ? "before_teardown" : "exit"));
	}
	json_t *jsites = sites_json(a, 0, top), *jpy = sites_json(a, 1, top);
	/* live at exit by whole stack: the leak list */
	json_t *leaks = json_array();
	size_t *ord = malloc((a->nstacks + 1) * sizeof(*ord));
	size_t nl = 0;
	for (size_t i = 0; ord && i < a->nstacks; i++)
		if (a->stacks[i].live_end >= 1)
			ord[nl++] = i;
	if (nl)
		qsort_r(ord, nl, sizeof(*ord), cmp_live_end, (void *)a);
	for (size_t i = 0; i < nl && i < top; i++) {
		const struct pl_alloc_stack *st = &a->stacks[ord[i]];
		json_t *fr = json_array();
		for (size_t k = st->depth; k-- > 0;)
			json_array_append_new(fr, frame_json(a, a->ids[st->off + k]));
		json_array_append_new(leaks,
				      json_pack("{s:f, s:I, s:o, s:o}", "bytes", st->live_end, "samples",
						(json_int_t)st->samples, "site",
						frame_json(a, st->site < a->prof.nframes ? st->site
											 : a->ids[st->off]),
						"stack", fr));
	}
	free(ord);
	json_t *findings = json_array();
	char msg[600];
	int gp = growth(a, msg, sizeof msg);
	if (gp >= 0)
		json_array_append_new(findings,
				      json_pack("{s:s, s:s, s:i, s:s, s:i}", "rule", "memory-growth",
						"severity", "critical", "level", 5, "message", msg,
						"pid", a->procs[gp].pid));
	char hot[3][600];
	size_t nh = hot_sites(a, hot, 3);
	for (size_t i = 0; i < nh; i++)
		json_array_append_new(findings, json_pack("{s:s, s:s, s:i, s:s}", "rule",
							  "hot-allocation-site", "severity",
							  "medium", "level", 4, "message", hot[i]));
	return json_pack("{s:s, s:s, s:I, s:I, s:I, s:f, s:f, s:I, s:I, s:I, s:o, s:o, s:o, s:o, s:o}",
			 "schema", "perfloop.alloc/1", "command", command ? command : "", "rate_bytes",
			 (json_int_t)a->rate, "allocations", (json_int_t)calls, "allocated_bytes_exact",
			 (json_int_t)bytes,
			 "allocated_bytes", est, "live_at_exit_bytes", live_end, "samples",
			 (json_int_t)samples, "dropped", (json_int_t)dropped, "processes_without_data",
			 (json_int_t)a->files_empty, "processes", procs, "sites", jsites,
			 "python_sites", jpy, "live_at_exit",
			 leaks, "findings", findings);
}

/* One table, by allocating frame or (python) innermost Python frame;
 * nothing when it has no row. */
static void print_sites(const struct pl_alloc *a, int python, size_t top, double est)
{
	size_t ns = 0;
	struct site *s = sites(a, python, &ns);
	if (!s || !ns) {
		free(s);
		return;
	}
	int teardown = 0;
	for (size_t i = 0; i < a->nprocs; i++)
		teardown |= a->procs[i].ended_at_teardown;
	printf("\n  %-10s %6s %9s %-10s %-10s  %s\n", "allocated", "share", "calls", "at peak",
	       teardown ? "at end" : "at exit", python ? "python function" : "site");
	for (size_t i = 0; i < ns && i < top; i++) {
		const struct pl_prof_frame *f = &a->prof.frames[s[i].frame];
		char c1[32], c2[32], c3[32], n[32];
		printf("  %-10s %5.1f%% %9s %-10s %-10s  %s (%s:%d)\n",
		       pl_fmt_bytes(c1, sizeof c1, s[i].alloc), est > 0 ? 100 * s[i].alloc / est : 0,
		       pl_fmt_count(n, sizeof n, round(s[i].calls)),
		       pl_fmt_bytes(c2, sizeof c2, s[i].live_peak),
		       pl_fmt_bytes(c3, sizeof c3, s[i].live_end), f->name,
		       pl_prof_shown_file(&a->prof, f->file), f->line);
	}
	free(s);
}

void pl_alloc_print(const struct pl_alloc *a, size_t top)
{
	double calls = 0, bytes = 0, est = 0, live = 0, peak = 0;
	uint64_t samples = 0;
	for (size_t i = 0; i < a->nprocs; i++) {
		calls += (double)a->procs[i].calls;
		bytes += (double)a->procs[i].bytes;
		est += a->procs[i].est_bytes;
		live += a->procs[i].end_live;
		samples += a->procs[i].samples;
		if (a->procs[i].peak_live > peak)
			peak = a->procs[i].peak_live;
	}
	char b1[32], b2[32], b3[32], b4[32], rate[32];
	size_t finished = 0;
	for (size_t i = 0; i < a->nprocs; i++)
		finished += a->procs[i].finished;
	if (finished)
		printf("  allocations: %.0f calls, %s", calls, pl_fmt_bytes(b1, sizeof b1, bytes));
	else
		printf("  allocations: no totals (the program ended before writing them)");
	printf(" (sampled: %llu samples, one per %s on average, estimating %s)\n",
	       (unsigned long long)samples, pl_fmt_bytes(rate, sizeof rate, (double)a->rate),
	       pl_fmt_bytes(b2, sizeof b2, est));
	int teardown = 0;
	for (size_t i = 0; i < a->nprocs; i++)
		teardown |= a->procs[i].ended_at_teardown;
	printf("  live: %s at the peak, %s %s\n", pl_fmt_bytes(b3, sizeof b3, peak),
	       pl_fmt_bytes(b4, sizeof b4, live),
	       teardown ? "at the end of the program's code (before the interpreter's teardown "
			  "frees it)"
			: "at exit");
	char msg[600];
	if (growth(a, msg, sizeof msg) >= 0)
		printf("  finding (critical): %s\n", msg);
	char hot[3][600];
	size_t nh = hot_sites(a, hot, 3);
	for (size_t i = 0; i < nh; i++)
		printf("  finding (memory): %s\n", hot[i]);
	print_sites(a, 0, top, est);
	/* a Python program's: what each Python function allocated, itself or
	 * through the extensions it called (numpy, torch) */
	print_sites(a, 1, top, est);
}

int pl_alloc_totals(const char *dir, uint64_t *calls, uint64_t *bytes)
{
	DIR *d = opendir(dir);
	if (!d)
		return 0;
	int n = 0;
	struct dirent *de;
	while ((de = readdir(d))) {
		if (strncmp(de->d_name, "alloc.", 6) != 0)
			continue;
		char path[4400];
		snprintf(path, sizeof path, "%s/%s", dir, de->d_name);
		size_t len = 0;
		int missing = 0;
		char *data = calls || bytes ? pl_fsio_read(path, &len, &missing) : NULL;
		unlink(path);
		if (!data)
			continue;
		/* records after the 24-byte header: 'm'/'M' u32 len + bytes,
		 * 'A' (skipped by its frame count), 'F', and the 'E' wanted */
		struct reader r = {(const unsigned char *)data + 24, (const unsigned char *)data + len, 0};
		while (len >= 24 && !memcmp(data, "PLALLOC1", 8) && r.p < r.end && !r.bad) {
			uint8_t k = *r.p++;
			uint32_t m;
			uint64_t skip[4];
			if (k == 'm' || k == 'M') {
				if (rd(&r, &m, 4) || (size_t)(r.end - r.p) < m)
					break;
				r.p += m;
			} else if (k == 'A') {
				uint32_t tid, nf;
				if (rd(&r, skip, 24) || rd(&r, &tid, 4) || rd(&r, &nf, 4) ||
				    (size_t)(r.end - r.p) / 8 < nf)
					break;
				r.p += 8 * (size_t)nf;
			} else if (k == 'F') {
				if (rd(&r, skip, 16))
					break;
			} else if (k == 'E') {
				if (rd(&r, skip, 32))
					break;
				if (calls)
					*calls += skip[1];
				if (bytes)
					*bytes += skip[2];
				n++;
			} else {
				break;
			}
		}
		free(data);
	}
	closedir(d);
	return n;
}

int pl_alloc_library(char *out, size_t len)
{
	char self[4096];
	ssize_t n = readlink("/proc/self/exe", self, sizeof self - 1);
	if (n <= 0)
		return -1;
	self[n] = '\0';
	char *slash = strrchr(self, '/');
	if (!slash)
		return -1;
	*slash = '\0';
	snprintf(out, len, "%.4000s/libperfloop-alloc.so", self);
	if (access(out, R_OK) == 0)
		return 0;
	snprintf(out, len, "%.4000s/../lib/perfloop/libperfloop-alloc.so", self);
	return access(out, R_OK) == 0 ? 0 : -1;
}

int pl_alloc_env(const char *dir, unsigned long long rate, struct pl_error *err)
{
	char lib[4400], pre[9000], r[32];
	if (pl_alloc_library(lib, sizeof lib) != 0)
		return pl_error_set(err, PL_ESYS,
				    "libperfloop-alloc.so is not beside perfloop nor in "
				    "../lib/perfloop (a broken install)");
	const char *old = getenv("LD_PRELOAD");
	snprintf(pre, sizeof pre, "%s%s%.4000s", lib, old && *old ? ":" : "", old ? old : "");
	snprintf(r, sizeof r, "%llu", rate);
	setenv("LD_PRELOAD", pre, 1);
	setenv("PERFLOOP_ALLOC_DIR", dir, 1);
	setenv("PERFLOOP_ALLOC_RATE", r, 1);
	return PL_OK;
}

void pl_alloc_dir_remove(const char *dir)
{
	pl_alloc_totals(dir, NULL, NULL);
	rmdir(dir);
}

void pl_alloc_release(struct pl_alloc *a)
{
	pl_prof_release(&a->prof);
	free(a->ids);
	free(a->stacks);
	free(a->procs);
	free(a->is_py);
	memset(a, 0, sizeof(*a));
}
