/*
 * cProfile's and profile's output (pstats: `python -m cProfile -o x.prof`,
 * Profile.dump_stats) read as perfloop's stacks (see pstats.h).
 *
 * The file is one value in CPython's marshal format: a dict from
 * (filename, line, function) to (primitive calls, calls, self seconds,
 * cumulative seconds, callers), callers a dict from the calling function's
 * key to that edge's own (primitive calls, calls, self, cumulative). The
 * reader below takes the marshal types such a file holds (dicts, tuples,
 * ints, floats, strings, references); Python's own marshal module is not
 * asked (no interpreter is needed, and a file from any 3.x reads alike).
 *
 * Why not our own stacks from elsewhere: pstats keeps no stacks, only
 * edges. They are rebuilt as flameprof does: from each root (a function
 * no listed function calls), a callee's share along an edge is the edge's
 * cumulative time over the sum of its callers' edges (so that the shares
 * of its callers add up to 1 and no self time is lost), and a function's
 * self time is spread over its paths by those shares. Exact where a
 * function is reached by one path; an estimate where several paths share
 * it (which caller's calls were the slow ones is not in the file). A
 * recursive call's time stays in the frame already on the path.
 */
#include "pstats.h"

#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- marshal ---- */

enum mk { M_NONE, M_INT, M_FLOAT, M_STR, M_TUPLE, M_DICT, M_OTHER };

struct mval {
	enum mk kind;
	double num;	      /* M_INT, M_FLOAT */
	const char *s;	      /* M_STR: into a copy owned by the arena */
	size_t n;	      /* M_STR: bytes; M_TUPLE: items; M_DICT: pairs */
	struct mval **items; /* M_TUPLE: n; M_DICT: 2n, key then value */
};

struct mreader {
	const unsigned char *p, *end;
	struct mval **refs; /* FLAG_REF'd values, by index */
	size_t nrefs, caprefs;
	void **owned; /* everything allocated, freed at once */
	size_t nowned, capowned;
	int depth;
	const char *why; /* the first problem */
};

static void *own(struct mreader *r, void *x)
{
	if (!x)
		return NULL;
	if (r->nowned == r->capowned) {
		size_t cap = r->capowned ? r->capowned * 2 : 256;
		void **v = realloc(r->owned, cap * sizeof *v);
		if (!v) {
			free(x);
			return NULL;
		}
		r->owned = v;
		r->capowned = cap;
	}
	r->owned[r->nowned++] = x;
	return x;
}

static int need(struct mreader *r, size_t n)
{
	if ((size_t)(r->end - r->p) < n) {
		r->why = "the file ends inside a value";
		return -1;
	}
	return 0;
}

static int64_t rd32(struct mreader *r)
{
	uint32_t v = (uint32_t)r->p[0] | (uint32_t)r->p[1] << 8 | (uint32_t)r->p[2] << 16 |
		     (uint32_t)r->p[3] << 24;
	r->p += 4;
	return (int32_t)v;
}

static struct mval *rd_value(struct mreader *r);

static struct mval *new_val(struct mreader *r, enum mk kind, int flag)
{
	struct mval *v = own(r, calloc(1, sizeof *v));
	if (!v) {
		r->why = "out of memory";
		return NULL;
	}
	v->kind = kind;
	if (flag) {
		if (r->nrefs == r->caprefs) {
			size_t cap = r->caprefs ? r->caprefs * 2 : 256;
			struct mval **g = realloc(r->refs, cap * sizeof *g);
			if (!g) {
				r->why = "out of memory";
				return NULL;
			}
			r->refs = g;
			r->caprefs = cap;
		}
		r->refs[r->nrefs++] = v;
	}
	return v;
}

static struct mval *rd_str(struct mreader *r, int flag, size_t n)
{
	if (need(r, n) < 0)
		return NULL;
	struct mval *v = new_val(r, M_STR, flag);
	char *s = v ? own(r, malloc(n + 1)) : NULL;
	if (!s) {
		r->why = "out of memory";
		return NULL;
	}
	memcpy(s, r->p, n);
	s[n] = '\0';
	r->p += n;
	v->s = s;
	v->n = n;
	return v;
}

static struct mval *rd_items(struct mreader *r, struct mval *v, size_t n)
{
	/* each item takes a byte at least: a count past the file's end is
	 * refused before anything is allocated for it */
	if (n > (size_t)(r->end - r->p)) {
		r->why = "a tuple longer than the file";
		return NULL;
	}
	v->items = own(r, calloc(n + 1, sizeof *v->items));
	if (!v->items) {
		r->why = "out of memory";
		return NULL;
	}
	v->n = n;
	for (size_t i = 0; i < n; i++)
		if (!(v->items[i] = rd_value(r)))
			return NULL;
	return v;
}

static struct mval *rd_value(struct mreader *r)
{
	if (r->why || need(r, 1) < 0)
		return NULL;
	if (++r->depth > 64) {
		r->why = "values nested deeper than 64";
		return NULL;
	}
	int code = *r->p++;
	int flag = code & 0x80;
	struct mval *v = NULL;
	size_t n;
	switch (code & 0x7f) {
	case 'N':
	case 'T':
	case 'F':
	case '.': /* Ellipsis */
	case 'S': /* StopIteration */
		v = new_val(r, M_NONE, flag);
		if (v && (code & 0x7f) != 'N') {
			v->kind = M_INT;
			v->num = (code & 0x7f) == 'T';
		}
		break;
	case 'i':
		if (need(r, 4) < 0)
			break;
		if ((v = new_val(r, M_INT, flag)))
			v->num = (double)rd32(r);
		break;
	case 'l': { /* a long: 15-bit digits, the sign on the count */
		if (need(r, 4) < 0)
			break;
		int64_t nd = rd32(r);
		size_t ad = (size_t)(nd < 0 ? -nd : nd);
		if (need(r, ad * 2) < 0)
			break;
		double x = 0;
		for (size_t i = ad; i-- > 0;)
			x = x * 32768.0 + (double)(r->p[2 * i] | r->p[2 * i + 1] << 8);
		r->p += ad * 2;
		if ((v = new_val(r, M_INT, flag)))
			v->num = nd < 0 ? -x : x;
		break;
	}
	case 'g': { /* a binary float, little-endian */
		if (need(r, 8) < 0)
			break;
		uint64_t bits = 0;
		for (int i = 7; i >= 0; i--)
			bits = bits << 8 | r->p[i];
		r->p += 8;
		double d;
		memcpy(&d, &bits, sizeof d);
		if ((v = new_val(r, M_FLOAT, flag)))
			v->num = d;
		break;
	}
	case 'f': { /* a float as text (marshal version 0) */
		if (need(r, 1) < 0)
			break;
		n = *r->p++;
		if (need(r, n) < 0)
			break;
		char buf[260];
		memcpy(buf, r->p, n);
		buf[n] = '\0';
		r->p += n;
		if ((v = new_val(r, M_FLOAT, flag)))
			v->num = strtod(buf, NULL);
		break;
	}
	case 'z': /* short ASCII */
	case 'Z': /* ... interned */
		if (need(r, 1) < 0)
			break;
		n = *r->p++;
		v = rd_str(r, flag, n);
		break;
	case 'a': /* ASCII */
	case 'A': /* ... interned */
	case 'u': /* UTF-8 */
	case 't': /* ... interned */
	case 's': /* bytes */
		if (need(r, 4) < 0)
			break;
		n = (size_t)(uint32_t)rd32(r);
		v = rd_str(r, flag, n);
		break;
	case ')': /* a small tuple */
		if (need(r, 1) < 0)
			break;
		n = *r->p++;
		if ((v = new_val(r, M_TUPLE, flag)))
			v = rd_items(r, v, n);
		break;
	case '(':
	case '[': /* a list reads as a tuple */
		if (need(r, 4) < 0)
			break;
		n = (size_t)(uint32_t)rd32(r);
		if ((v = new_val(r, M_TUPLE, flag)))
			v = rd_items(r, v, n);
		break;
	case '{': {
		if (!(v = new_val(r, M_DICT, flag)))
			break;
		size_t cap = 0;
		for (;;) {
			if (need(r, 1) < 0) {
				v = NULL;
				break;
			}
			if (*r->p == '0') { /* TYPE_NULL ends it */
				r->p++;
				break;
			}
			if (v->n * 2 + 2 > cap) {
				size_t c = cap ? cap * 2 : 16;
				struct mval **g = calloc(c, sizeof *g);
				if (!g || !own(r, g)) {
					r->why = "out of memory";
					v = NULL;
					break;
				}
				if (v->items)
					memcpy(g, v->items, v->n * 2 * sizeof *g);
				v->items = g;
				cap = c;
			}
			struct mval *k = rd_value(r), *x = k ? rd_value(r) : NULL;
			if (!x) {
				v = NULL;
				break;
			}
			v->items[v->n * 2] = k;
			v->items[v->n * 2 + 1] = x;
			v->n++;
		}
		break;
	}
	case 'r': {
		if (need(r, 4) < 0)
			break;
		int64_t i = rd32(r);
		if (i < 0 || (size_t)i >= r->nrefs || !r->refs[i]) {
			r->why = "a reference to a value not read";
			break;
		}
		v = r->refs[i];
		break;
	}
	default:
		if (!r->why)
			r->why = "a value of a type a profile does not hold (code, set...)";
	}
	r->depth--;
	if (!v && !r->why)
		r->why = "the file ends inside a value";
	return v;
}

static void mreader_free(struct mreader *r)
{
	for (size_t i = 0; i < r->nowned; i++)
		free(r->owned[i]);
	free(r->owned);
	free(r->refs);
}

int pl_pstats_sniff(const unsigned char *t, size_t len)
{
	/* a dict ({, with or without FLAG_REF) whose first key is a tuple */
	return len >= 2 && (t[0] == '{' || t[0] == ('{' | 0x80)) &&
	       ((t[1] & 0x7f) == ')' || (t[1] & 0x7f) == '(' || (t[1] & 0x7f) == 'r');
}

/* ---- the call graph ---- */

struct fn {
	const struct mval *key; /* (file, line, name) */
	double tt, ct;		/* self, cumulative seconds */
	double in_ct;		/* its callers' edges' cumulative seconds, summed */
	long frame;		/* its frame id */
	/* its callees: (callee, the edge's cumulative seconds) */
	struct edge *out;
	size_t nout, capout;
	int called; /* some listed function calls it */
	int on_path;
	int reached; /* walked from a root */
};

struct edge {
	size_t to;
	double ct;
};

struct walk {
	struct pl_prof *p;
	struct fn *f;
	uint32_t ids[256];
	size_t emitted, visits;
};

#define PSTATS_MAX_STACKS 200000
#define PSTATS_MAX_VISITS 1000000 /* paths walked, emitted or not */
#define PSTATS_MIN_US 1.0

static int key_eq(const struct mval *a, const struct mval *b)
{
	if (a == b)
		return 1;
	if (a->kind != b->kind)
		return 0;
	if (a->kind == M_STR)
		return a->n == b->n && !memcmp(a->s, b->s, a->n);
	if (a->kind == M_INT || a->kind == M_FLOAT)
		return a->num == b->num;
	if (a->kind != M_TUPLE || a->n != b->n)
		return 0;
	for (size_t i = 0; i < a->n; i++)
		if (!key_eq(a->items[i], b->items[i]))
			return 0;
	return 1;
}

/* weight: microseconds along this path; factor: the path's share of f */
static int walk(struct walk *w, size_t i, size_t depth, double factor)
{
	struct fn *f = &w->f[i];
	/* past the caps (depth, stacks, paths walked) the rest is left out */
	if (depth >= sizeof w->ids / sizeof *w->ids || w->emitted >= PSTATS_MAX_STACKS ||
	    ++w->visits > PSTATS_MAX_VISITS)
		return 0;
	w->ids[depth] = (uint32_t)f->frame;
	f->reached = 1;
	double self = f->tt * factor * 1e6;
	if (self >= PSTATS_MIN_US) {
		uint64_t c = (uint64_t)llround(self);
		if (c <= PL_PROF_MAX_COUNT - w->p->samples) {
			if (pl_prof_add(w->p, w->ids, depth + 1, c) < 0)
				return -1;
			w->emitted++;
		}
	}
	f->on_path = 1;
	for (size_t k = 0; k < f->nout; k++) {
		struct fn *g = &w->f[f->out[k].to];
		/* recursion: its time is already in the frame on the path */
		if (g->on_path)
			continue;
		/* its callers' shares sum to 1: every self second is kept */
		double share = g->in_ct > 0 ? factor * f->out[k].ct / g->in_ct : factor;
		if ((g->ct > g->tt ? g->ct : g->tt) * share * 1e6 < PSTATS_MIN_US)
			continue;
		if (walk(w, f->out[k].to, depth + 1, share) < 0) {
			f->on_path = 0;
			return -1;
		}
	}
	f->on_path = 0;
	return 0;
}

static const char *str_of(const struct mval *v)
{
	return v && v->kind == M_STR ? v->s : NULL;
}

static double num_of(const struct mval *v)
{
	return v && (v->kind == M_INT || v->kind == M_FLOAT) ? v->num : NAN;
}

/* a time in seconds: finite, not negative, at most a year (a count of
 * microseconds stays far from overflow) */
static double seconds(double x)
{
	return x > 0 && x < 3.2e7 ? x : 0;
}

/* a key (file, line, name) well formed */
static int is_key(const struct mval *k)
{
	return k && k->kind == M_TUPLE && k->n == 3 && str_of(k->items[0]) &&
	       !isnan(num_of(k->items[1])) && str_of(k->items[2]);
}

static uint64_t key_hash(const struct mval *k)
{
	uint64_t h = 1469598103934665603ULL;
	for (int i = 0; i < 3; i++) {
		const struct mval *x = k->items[i];
		if (x->kind == M_STR)
			for (size_t j = 0; j < x->n; j++)
				h = (h ^ (unsigned char)x->s[j]) * 1099511628211ULL;
		else
			h = (h ^ (uint64_t)(int64_t)x->num) * 1099511628211ULL;
		h = (h ^ 0xff) * 1099511628211ULL;
	}
	return h;
}

/* the functions' keys, open addressing over cap (a power of two) slots
 * holding index + 1 */
static size_t find_fn(const struct fn *f, const size_t *slot, size_t cap, const struct mval *key)
{
	for (size_t s = key_hash(key) & (cap - 1);; s = (s + 1) & (cap - 1)) {
		if (!slot[s])
			return SIZE_MAX;
		if (key_eq(f[slot[s] - 1].key, key))
			return slot[s] - 1;
	}
}

int pl_pstats_read(const unsigned char *buf, size_t len, const char *path, struct pl_prof *p,
		   struct pl_error *err)
{
	struct mreader r = {.p = buf, .end = buf + len};
	struct mval *doc = rd_value(&r);
	if (!doc) {
		int rc = pl_error_set(err, PL_EINPUT, "%s: byte %zu: not a pstats file: %s", path,
				      (size_t)(r.p - buf), r.why ? r.why : "unreadable");
		mreader_free(&r);
		return rc;
	}
	if (doc->kind != M_DICT) {
		mreader_free(&r);
		return pl_error_set(err, PL_EINPUT, "%s: not a pstats file: not a dict", path);
	}
	struct fn *f = calloc(doc->n + 1, sizeof *f);
	int rc = f ? PL_OK : PL_ENOMEM;
	/* the functions */
	for (size_t i = 0; i < doc->n && rc == PL_OK; i++) {
		const struct mval *k = doc->items[2 * i], *v = doc->items[2 * i + 1];
		if (!is_key(k) || v->kind != M_TUPLE || v->n < 5 || isnan(num_of(v->items[2])) ||
		    isnan(num_of(v->items[3])) || v->items[4]->kind != M_DICT) {
			rc = pl_error_set(err, PL_EINPUT,
					  "%s: entry %zu: expected (file, line, function) -> (calls, "
					  "calls, self s, cumulative s, callers)",
					  path, i + 1);
			break;
		}
		f[i].key = k;
		f[i].tt = seconds(num_of(v->items[2]));
		f[i].ct = seconds(num_of(v->items[3]));
		const char *file = str_of(k->items[0]), *name = str_of(k->items[2]);
		int line = (int)num_of(k->items[1]);
		/* builtins: ('~', 0, '<built-in method time.sleep>') */
		int builtin = !strcmp(file, "~");
		f[i].frame = pl_prof_frame(p, name, builtin ? "" : file, builtin ? 0 : line,
					   builtin ? 0 : line, 0);
		if (f[i].frame < 0)
			rc = PL_ENOMEM;
	}
	size_t cap = 16;
	while (cap < doc->n * 2)
		cap *= 2;
	size_t *slot = rc == PL_OK ? calloc(cap, sizeof *slot) : NULL;
	if (!slot && rc == PL_OK)
		rc = PL_ENOMEM;
	for (size_t i = 0; i < doc->n && rc == PL_OK; i++) {
		size_t s0 = key_hash(f[i].key) & (cap - 1);
		while (slot[s0])
			s0 = (s0 + 1) & (cap - 1);
		slot[s0] = i + 1;
	}
	/* the edges: each function's callers, turned into callees */
	for (size_t i = 0; i < doc->n && rc == PL_OK; i++) {
		const struct mval *callers = doc->items[2 * i + 1]->items[4];
		for (size_t c = 0; c < callers->n && rc == PL_OK; c++) {
			const struct mval *ck = callers->items[2 * c], *cv = callers->items[2 * c + 1];
			size_t from = is_key(ck) ? find_fn(f, slot, cap, ck) : SIZE_MAX;
			if (from == SIZE_MAX || from == i)
				continue;
			/* cProfile: (calls, calls, self, cumulative); profile: a count,
			 * the edge's time then the calls' share of the function's */
			double ect = cv->kind == M_TUPLE && cv->n >= 4 ? num_of(cv->items[3]) : NAN;
			if (isnan(ect)) {
				double nc = num_of(doc->items[2 * i + 1]->items[1]);
				double calls = num_of(cv);
				ect = nc > 0 && calls >= 0 ? f[i].ct * (calls < nc ? calls / nc : 1)
							   : f[i].ct;
			}
			struct fn *a = &f[from];
			if (a->nout == a->capout) {
				size_t ncap = a->capout ? a->capout * 2 : 4;
				struct edge *g = realloc(a->out, ncap * sizeof *g);
				if (!g) {
					rc = PL_ENOMEM;
					break;
				}
				a->out = g;
				a->capout = ncap;
			}
			a->out[a->nout++] = (struct edge){i, seconds(ect)};
			f[i].in_ct += seconds(ect);
			f[i].called = 1;
		}
	}
	struct walk w = {.p = p, .f = f};
	for (size_t i = 0; i < doc->n && rc == PL_OK; i++)
		if (!f[i].called && walk(&w, i, 0, 1.0) < 0)
			rc = PL_ENOMEM;
	/* a function no root reaches (a cycle of calls with no entry from
	 * outside it): its self time as a stack of its own, never dropped */
	for (size_t i = 0; i < doc->n && rc == PL_OK; i++) {
		double self = f[i].tt * 1e6;
		if (f[i].reached || self < PSTATS_MIN_US)
			continue;
		uint32_t id = (uint32_t)f[i].frame;
		uint64_t c = (uint64_t)llround(self);
		if (c <= PL_PROF_MAX_COUNT - p->samples && pl_prof_add(p, &id, 1, c) < 0)
			rc = PL_ENOMEM;
	}
	free(slot);
	if (rc == PL_OK && p->samples == 0 && doc->n)
		rc = pl_error_set(err, PL_EINPUT,
				  "%s: a pstats file whose functions took no measurable time "
				  "(under %g us each)",
				  path, PSTATS_MIN_US);
	for (size_t i = 0; f && i < doc->n; i++)
		free(f[i].out);
	free(f);
	mreader_free(&r);
	return rc;
}
