/*
 * See pystack.h. Offsets are those of CPython's own headers (Include/internal
 * pycore_runtime.h, pycore_interp.h, pycore_frame.h, cpython/pystate.h,
 * cpython/code.h) for x86-64 and other LP64 targets, in py311.h, which a
 * test checks against the headers of each interpreter installed here.
 */
#include "pystack.h"
#include "grow.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/uio.h>
#include <unistd.h>

#include "pyproc.h"
#include "pylayout.h"
#include "pyobj.h"

struct pl_pyline {
	uint32_t end; /* exclusive end of the range, in code units */
	int32_t line; /* -1: no line */
};

#define MAX_CHUNK_READ (8u << 20)
#define MAX_THREADS 4096
#define MAX_INTERPS 64
#define MAX_STR 4096
#define MAX_LINETABLE (1u << 20)
#define MAX_WINDOWS 64
#define MAX_IS_READ 256
#define MAX_GIL_READ 64
#define MAX_TS_READ 1024
#define MAX_FR_READ 512
#define MAX_CO_READ 1024

struct window {
	uint64_t addr;
	size_t len;
	uint8_t *buf;
	size_t cap;
};

struct chunk {
	uint64_t addr, end;
};

/* threading's name of a thread (pyobj.h), read once in a while */
struct tname {
	unsigned long tid;
	uint64_t obj;	  /* the Thread object it was read from */
	unsigned read_at; /* sample number */
	char *name;	  /* NULL: none could be read */
};

struct tidfd {
	unsigned long tid;
	int fd;
	unsigned seen; /* sample number it was last seen in */
};

struct pl_pystack {
	struct pl_pyproc proc;
	struct pylayout layout;
	const struct pylayout *L; /* &layout */
	char version[32];
	/* code cache: open addressing by address */
	struct pl_pycode **codes;
	size_t ncodes, capcodes;
	/* replaced entries: kept, since callers may key by their address */
	struct pl_pycode **retired;
	size_t nretired, capretired;
	/* per-thread scratch */
	struct pl_pyframe *frames;
	uint64_t *fcode, *finstr; /* code address, instruction pointer per frame */
	uint8_t *fentry;	  /* per frame: the first of its eval call */
	uint64_t *faddr;	  /* per frame: its address (dump --locals) */
	uint8_t *fprint;	  /* per frame: the code object's identity fields */
	struct window win[MAX_WINDOWS];
	size_t nwin;
	struct chunk *chunks;
	size_t nchunks, capchunks;
	int chunks_listed;
	/* /proc/PID/task/TID/stat, kept open */
	struct tidfd *tids;
	size_t ntids, captids;
	unsigned sampleno;
	struct tname *tnames;
	size_t ntnames, captnames;
	uint64_t froot; /* the root frame of the thread walked last */
	uint64_t interp;   /* the first interpreter, read once */
	uint64_t first_ts; /* its first thread state when last read */
};

/* Read n ranges (addr[i], len[i]) into buf[i] in one system call: the
 * number of leading ranges read whole (n when all were), or -1 with errno
 * when not even the first was. */
static int readn(pid_t pid, size_t n, const uint64_t *addr, void *const *buf, const size_t *len)
{
	struct iovec local[4], remote[4];
	for (size_t i = 0; i < n; i++) {
		local[i] = (struct iovec){buf[i], len[i]};
		remote[i] = (struct iovec){(void *)(uintptr_t)addr[i], len[i]};
		if (!addr[i]) {
			n = i; /* read what comes before a null pointer */
			break;
		}
	}
	if (n == 0) {
		errno = EFAULT;
		return -1;
	}
	ssize_t got = process_vm_readv(pid, local, n, remote, n, 0);
	if (got < 0)
		return -1;
	int whole = 0;
	for (size_t i = 0; i < n && got >= (ssize_t)len[i]; i++) {
		got -= (ssize_t)len[i];
		whole++;
	}
	if (whole == 0)
		errno = EFAULT;
	return whole ? whole : -1;
}

static int read2(pid_t pid, uint64_t a, void *abuf, size_t alen, uint64_t b, void *bbuf,
		 size_t blen)
{
	uint64_t addr[2] = {a, b};
	void *buf[2] = {abuf, bbuf};
	size_t len[2] = {alen, blen};
	return readn(pid, 2, addr, buf, len) == 2 ? 0 : -1;
}

static inline uint64_t rd64(const uint8_t *p)
{
	uint64_t v;
	memcpy(&v, p, 8);
	return v;
}
static inline int32_t rd32(const uint8_t *p)
{
	int32_t v;
	memcpy(&v, p, 4);
	return v;
}

/* ---- line tables (Objects/locations.md of CPython 3.11) ---- */

static int read_varint(const uint8_t *t, size_t len, size_t *i, unsigned *out)
{
	unsigned v = 0, shift = 0;
	for (;;) {
		if (*i >= len || shift > 28)
			return -1;
		uint8_t b = t[(*i)++];
		v |= (unsigned)(b & 63) << shift;
		shift += 6;
		if (!(b & 64))
			break;
	}
	*out = v;
	return 0;
}

static int read_svarint(const uint8_t *t, size_t len, size_t *i, int *out)
{
	unsigned u;
	if (read_varint(t, len, i, &u) < 0)
		return -1;
	*out = (u & 1) ? -(int)(u >> 1) : (int)(u >> 1);
	return 0;
}

/* Decode the table into ranges; calls add(end, line) per entry. Returns 0,
 * or -1 for a malformed table (what was decoded stays valid). */
static int decode_311(const uint8_t *t, size_t len, int firstline,
		      int (*add)(void *, uint32_t, int32_t), void *arg)
{
	size_t i = 0;
	uint32_t addr = 0;
	int line = firstline;
	while (i < len) {
		uint8_t first = t[i++];
		if (!(first & 0x80))
			return -1;
		int code = (first >> 3) & 15;
		uint32_t length = (uint32_t)(first & 7) + 1;
		int delta = 0;
		unsigned skip;
		switch (code) {
		case 15: /* no location */
			break;
		case 14: /* long form */
			if (read_svarint(t, len, &i, &delta) < 0 ||
			    read_varint(t, len, &i, &skip) < 0 ||
			    read_varint(t, len, &i, &skip) < 0 ||
			    read_varint(t, len, &i, &skip) < 0)
				return -1;
			break;
		case 13: /* no columns */
			if (read_svarint(t, len, &i, &delta) < 0)
				return -1;
			break;
		case 10:
		case 11:
		case 12: /* one line, two column bytes */
			delta = code - 10;
			i += 2;
			break;
		default: /* short form: same line, one column byte */
			i += 1;
			break;
		}
		if (i > len)
			return -1;
		line += delta;
		addr += length;
		if (add(arg, addr, code == 15 ? -1 : line) < 0)
			return -1;
	}
	return 0;
}

/* An instruction with no location (CPython says None: a loop's jump back
 * to its head, after the body's last line) is given the line of the
 * nearest one before it that has one, as dis shows it: its samples stay
 * in the loop they belong to, not on the function's def line, where 12%
 * of a pair loop's samples once went (t706). */
struct find_line {
	long instr;
	int line, last, found;
};

static int find_line_add(void *arg, uint32_t end, int32_t line)
{
	struct find_line *f = arg;
	if (!f->found && f->instr < (long)end) {
		f->line = line >= 0 ? line : f->last;
		f->found = 1;
	}
	if (line >= 0)
		f->last = line;
	return 0;
}

int pl_py311_line(const uint8_t *table, size_t len, int firstline, long instr)
{
	struct find_line f = {instr, firstline, firstline, 0};
	if (instr < 0)
		return firstline;
	decode_311(table, len, firstline, find_line_add, &f);
	return f.found ? f.line : firstline;
}

struct collect {
	struct pl_pycode *c;
	size_t cap;
};

static int collect_add(void *arg, uint32_t end, int32_t line)
{
	struct collect *k = arg;
	struct pl_pycode *c = k->c;
	if (pl_grow((void **)&c->lines, &k->cap, c->nlines + 1, sizeof *c->lines, 16) < 0)
		return -1;
	c->lines[c->nlines].end = end;
	c->lines[c->nlines].line = line;
	c->nlines++;
	return 0;
}

static int code_line(const struct pl_pycode *c, long instr)
{
	if (instr < 0 || c->nlines == 0)
		return c->firstline;
	size_t lo = 0, hi = c->nlines;
	while (lo < hi) {
		size_t mid = (lo + hi) / 2;
		if ((long)c->lines[mid].end <= instr)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (lo == c->nlines)
		return c->firstline;
	while (lo > 0 && c->lines[lo].line < 0) /* no location: as pl_py311_line */
		lo--;
	return c->lines[lo].line >= 0 ? c->lines[lo].line : c->firstline;
}

/* ---- strings ---- */

static void put_utf8(char *out, size_t *o, uint32_t ch)
{
	if (ch < 0x80) {
		out[(*o)++] = (char)ch;
	} else if (ch < 0x800) {
		out[(*o)++] = (char)(0xc0 | ch >> 6);
		out[(*o)++] = (char)(0x80 | (ch & 63));
	} else if (ch < 0x10000) {
		out[(*o)++] = (char)(0xe0 | ch >> 12);
		out[(*o)++] = (char)(0x80 | (ch >> 6 & 63));
		out[(*o)++] = (char)(0x80 | (ch & 63));
	} else {
		out[(*o)++] = (char)(0xf0 | ch >> 18);
		out[(*o)++] = (char)(0x80 | (ch >> 12 & 63));
		out[(*o)++] = (char)(0x80 | (ch >> 6 & 63));
		out[(*o)++] = (char)(0x80 | (ch & 63));
	}
}

size_t pl_pystr_utf8(unsigned kind, const uint8_t *raw, size_t length, char *out)
{
	size_t o = 0;
	for (size_t i = 0; i < length; i++) {
		uint32_t ch = kind == 1	  ? raw[i]
			      : kind == 2 ? (uint32_t)(raw[2 * i] | raw[2 * i + 1] << 8)
					  : (uint32_t)rd32(raw + 4 * i);
		if (ch == 0 || ch > 0x10ffff)
			ch = '?';
		put_utf8(out, &o, ch);
	}
	out[o] = '\0';
	return o;
}

/* A str object as malloc'd UTF-8, or NULL. */
static char *read_str(struct pl_pystack *s, uint64_t addr)
{
	const struct pylayout *L = s->L;
	uint8_t hdr[128];
	if (pl_pyproc_read(s->proc.pid, addr, hdr, L->str_compact_data) < 0)
		return NULL;
	uint64_t length = rd64(hdr + L->str_length);
	uint32_t state = (uint32_t)rd32(hdr + L->str_state);
	unsigned kind = (state >> 2) & 7, compact = (state >> 5) & 1, ascii = (state >> 6) & 1;
	if (!compact || (kind != 1 && kind != 2 && kind != 4) || (ascii && kind != 1))
		return NULL;
	if (length > MAX_STR)
		length = MAX_STR;
	size_t off = ascii ? L->str_ascii_data : L->str_compact_data;
	uint8_t *raw = malloc(length * kind + 1);
	char *out = malloc(length * 4 + 1);
	if (!raw || !out || pl_pyproc_read(s->proc.pid, addr + off, raw, length * kind) < 0) {
		free(raw);
		free(out);
		return NULL;
	}
	pl_pystr_utf8(kind, raw, length, out);
	free(raw);
	return out;
}

/* ---- code objects ---- */

static void free_code(struct pl_pycode *c)
{
	if (!c)
		return;
	free(c->name);
	free(c->file);
	free(c->lines);
	free(c);
}

static struct pl_pycode *read_code(struct pl_pystack *s, uint64_t addr)
{
	const struct pylayout *L = s->L;
	uint8_t co[MAX_CO_READ];
	if (pl_pyproc_read(s->proc.pid, addr, co, L->co_read) < 0)
		return NULL;
	if (s->proc.code_type && rd64(co + L->ob_type) != s->proc.code_type)
		return NULL; /* not a code object: a torn read */
	struct pl_pycode *c = calloc(1, sizeof *c);
	if (!c)
		return NULL;
	c->addr = addr;
	c->qualname_ptr = rd64(co + L->co_qualname);
	c->filename_ptr = rd64(co + L->co_filename);
	c->firstline = rd32(co + L->co_firstlineno);
	c->name = read_str(s, rd64(co + L->co_qualname));
	c->file = read_str(s, rd64(co + L->co_filename));
	if (!c->name || !c->file || c->firstline < 0) {
		free_code(c);
		return NULL;
	}
	uint64_t lt = rd64(co + L->co_linetable);
	uint8_t bh[64];
	if (lt && pl_pyproc_read(s->proc.pid, lt, bh, L->bytes_data) == 0) {
		uint64_t n = rd64(bh + L->var_size);
		if (n > 0 && n <= MAX_LINETABLE) {
			uint8_t *t = malloc(n);
			if (t && pl_pyproc_read(s->proc.pid, lt + L->bytes_data, t, n) == 0) {
				struct collect k = {c, 0};
				decode_311(t, n, c->firstline, collect_add, &k);
			}
			free(t);
		}
	}
	return c;
}

static size_t code_slot(uint64_t addr, size_t cap)
{
	return (size_t)((addr >> 4) * 0x9e3779b97f4a7c15ULL) & (cap - 1);
}

static int code_insert(struct pl_pystack *s, struct pl_pycode *c)
{
	if ((s->ncodes + 1) * 2 > s->capcodes) {
		size_t cap = s->capcodes ? s->capcodes * 2 : 1024;
		struct pl_pycode **t = calloc(cap, sizeof *t);
		if (!t)
			return -1;
		for (size_t i = 0; i < s->capcodes; i++) {
			struct pl_pycode *o = s->codes[i];
			if (!o)
				continue;
			size_t j = code_slot(o->addr, cap);
			while (t[j])
				j = (j + 1) & (cap - 1);
			t[j] = o;
		}
		free(s->codes);
		s->codes = t;
		s->capcodes = cap;
	}
	size_t j = code_slot(c->addr, s->capcodes);
	while (s->codes[j])
		j = (j + 1) & (s->capcodes - 1);
	s->codes[j] = c;
	s->ncodes++;
	return 0;
}

/* The identity fields read for every frame of a sample, in one system
 * call: a code object freed and another allocated at its address (modules'
 * code after import, exec'd code) must not be reported under the old name. */

static int fingerprint_matches(const struct pylayout *L, const struct pl_pycode *c,
			       const uint8_t *fp)
{
	return rd32(fp + L->co_firstlineno - L->fp_off) == c->firstline &&
	       rd64(fp + L->co_filename - L->fp_off) == c->filename_ptr &&
	       rd64(fp + L->co_qualname - L->fp_off) == c->qualname_ptr;
}

static struct pl_pycode **find_slot(struct pl_pystack *s, uint64_t addr)
{
	if (!s->capcodes)
		return NULL;
	size_t j = code_slot(addr, s->capcodes);
	while (s->codes[j]) {
		if (s->codes[j]->addr == addr)
			return &s->codes[j];
		j = (j + 1) & (s->capcodes - 1);
	}
	return NULL;
}

static const struct pl_pycode *lookup_code(struct pl_pystack *s, uint64_t addr, const uint8_t *fp)
{
	struct pl_pycode **slot = find_slot(s, addr);
	if (slot && fingerprint_matches(s->L, *slot, fp))
		return *slot;
	struct pl_pycode *c = read_code(s, addr);
	if (!c)
		return NULL;
	if (slot) {
		if (pl_grow((void **)&s->retired, &s->capretired, s->nretired + 1,
			    sizeof *s->retired, 64) < 0) {
			free_code(c);
			return NULL;
		}
		s->retired[s->nretired++] = *slot;
		*slot = c;
		return c;
	}
	if (code_insert(s, c) < 0) {
		free_code(c);
		return NULL;
	}
	return c;
}

/* Read the identity fields of the code objects of frames [0, n). */
static int read_fingerprints(struct pl_pystack *s, size_t n)
{
	const struct pylayout *L = s->L;
	size_t len = L->fp_len;
	struct iovec local[256], remote[256];
	for (size_t i = 0; i < n;) {
		size_t k = 0;
		for (; k < 256 && i + k < n; k++) {
			local[k].iov_base = s->fprint + (i + k) * len;
			local[k].iov_len = len;
			remote[k].iov_base = (void *)(uintptr_t)(s->fcode[i + k] + L->fp_off);
			remote[k].iov_len = len;
		}
		ssize_t got = process_vm_readv(s->proc.pid, local, k, remote, k, 0);
		if (got != (ssize_t)(k * len))
			return -1;
		i += k;
	}
	return 0;
}

/* ---- frames, read through windows over the data stack ---- */

static struct window *window_read(struct pl_pystack *s, uint64_t addr, size_t len)
{
	if (s->nwin == MAX_WINDOWS || len == 0 || len > MAX_CHUNK_READ)
		return NULL;
	struct window *w = &s->win[s->nwin];
	if (w->cap < len) {
		size_t cap = len < 4096 ? 4096 : len;
		uint8_t *b = realloc(w->buf, cap);
		if (!b)
			return NULL;
		w->buf = b;
		w->cap = cap;
	}
	if (pl_pyproc_read(s->proc.pid, addr, w->buf, len) < 0)
		return NULL;
	w->addr = addr;
	w->len = len;
	s->nwin++;
	return w;
}

static const uint8_t *in_windows(struct pl_pystack *s, uint64_t addr, size_t len)
{
	for (size_t i = 0; i < s->nwin; i++) {
		struct window *w = &s->win[i];
		if (addr >= w->addr && addr - w->addr <= w->len && w->len - (addr - w->addr) >= len)
			return w->buf + (addr - w->addr);
	}
	return NULL;
}

/* List the thread's earlier data stack chunks (the current one is read
 * eagerly). */
static void list_chunks(struct pl_pystack *s, uint64_t current)
{
	s->chunks_listed = 1;
	s->nchunks = 0;
	uint8_t h[16];
	if (!current || pl_pyproc_read(s->proc.pid, current, h, sizeof h) < 0)
		return;
	uint64_t prev = rd64(h);
	for (int k = 0; prev && k < 4096; k++) {
		if (pl_pyproc_read(s->proc.pid, prev, h, sizeof h) < 0)
			return;
		uint64_t size = rd64(h + s->L->chunk_size);
		if (size < 16 || size > MAX_CHUNK_READ)
			return;
		if (pl_grow((void **)&s->chunks, &s->capchunks, s->nchunks + 1, sizeof *s->chunks,
			    16) < 0)
			return;
		s->chunks[s->nchunks++] = (struct chunk){prev, prev + size};
		prev = rd64(h);
	}
}

static const uint8_t *frame_bytes(struct pl_pystack *s, uint64_t addr, uint64_t chunk)
{
	size_t len = s->L->fr_read;
	const uint8_t *p = in_windows(s, addr, len);
	if (p)
		return p;
	if (!s->chunks_listed)
		list_chunks(s, chunk);
	for (size_t i = 0; i < s->nchunks; i++) {
		struct chunk *c = &s->chunks[i];
		if (addr >= c->addr && addr < c->end) {
			struct window *w = window_read(s, c->addr, c->end - c->addr);
			if (w && (p = in_windows(s, addr, len)))
				return p;
			break;
		}
	}
	/* a generator's or coroutine's frame, or a frame object's */
	struct window *w = window_read(s, addr, len);
	return w ? w->buf : NULL;
}

/* ---- threads ---- */

static int thread_state(struct pl_pystack *s, unsigned long tid, char *state)
{
	struct tidfd *t = NULL;
	for (size_t i = 0; i < s->ntids; i++)
		if (s->tids[i].tid == tid) {
			t = &s->tids[i];
			break;
		}
	if (!t) {
		char path[96];
		snprintf(path, sizeof path, "/proc/%d/task/%lu/stat", (int)s->proc.pid, tid);
		int fd = open(path, O_RDONLY | O_CLOEXEC);
		if (fd < 0)
			return -1;
		if (pl_grow((void **)&s->tids, &s->captids, s->ntids + 1, sizeof *s->tids, 16) <
		    0) {
			close(fd);
			return -1;
		}
		t = &s->tids[s->ntids++];
		t->tid = tid;
		t->fd = fd;
	}
	t->seen = s->sampleno;
	char buf[512];
	ssize_t n = pread(t->fd, buf, sizeof buf - 1, 0);
	if (n <= 0)
		return -1;
	buf[n] = '\0';
	char *p = strrchr(buf, ')');
	if (!p || p[1] != ' ')
		return -1;
	*state = p[2];
	return 0;
}

/* Close the stat files of threads not seen for a while. */
static void prune_tids(struct pl_pystack *s)
{
	size_t k = 0;
	for (size_t i = 0; i < s->ntids; i++) {
		if (s->sampleno - s->tids[i].seen > 64)
			close(s->tids[i].fd);
		else
			s->tids[k++] = s->tids[i];
	}
	s->ntids = k;
}

/* 0: read; -1: torn or unreadable. */
static int walk_thread(struct pl_pystack *s, const uint8_t *ts, struct pl_pythread *t)
{
	const struct pylayout *L = s->L;
	uint64_t chunk = rd64(ts + L->ts_chunk), top = rd64(ts + L->ts_top);
	uint64_t cframe = L->frame_in_ts ? 0 : rd64(ts + L->ts_cframe);
	uint64_t frame = L->frame_in_ts ? rd64(ts + L->ts_current_frame) : 0;
	s->nwin = 0;
	s->chunks_listed = 0;
	t->depth = 0;
	t->truncated = 0;
	if (L->frame_in_ts ? !frame : !cframe)
		return 0; /* not running Python code */
	/* the current data stack chunk in one read; before 3.13, together with
	 * the current frame pointer */
	struct window *w = &s->win[0];
	size_t len = chunk && top > chunk && top - chunk <= MAX_CHUNK_READ ? top - chunk : 0;
	if (len && w->cap < len) {
		uint8_t *b = realloc(w->buf, len < 65536 ? 65536 : len);
		if (!b)
			return -1;
		w->buf = b;
		w->cap = len < 65536 ? 65536 : len;
	}
	int got;
	if (L->frame_in_ts)
		got = len && pl_pyproc_read(s->proc.pid, chunk, w->buf, len) == 0;
	else
		got = len && read2(s->proc.pid, cframe + L->cf_current_frame, &frame, 8, chunk,
				   w->buf, len) == 0;
	if (got) {
		w->addr = chunk;
		w->len = len;
		s->nwin = 1;
	} else if (!L->frame_in_ts &&
		   pl_pyproc_read(s->proc.pid, cframe + L->cf_current_frame, &frame, 8) < 0) {
		return -1;
	}
	size_t n = 0;
	s->froot = 0;
	for (size_t steps = 0; frame; steps++) {
		if (n == PL_PYSTACK_MAX_DEPTH || steps == 2 * PL_PYSTACK_MAX_DEPTH) {
			t->truncated = 1;
			break;
		}
		const uint8_t *f = frame_bytes(s, frame, chunk);
		if (!f)
			return -1;
		uint64_t code = rd64(f + L->fr_code) & L->code_mask, prev = rd64(f + L->fr_previous);
		int owner = f[L->fr_owner];
		if (owner > L->fr_entry_max || prev == frame)
			return -1;
		uint64_t here = frame;
		frame = prev;
		if (owner > L->fr_owner_max) {
			/* an entry frame on the C stack: no Python code; the frame
			 * above it was the first of its eval call */
			if (n)
				s->fentry[n - 1] = 1;
			continue;
		}
		if (!code)
			return -1;
		s->froot = here;
		s->faddr[n] = here;
		s->fcode[n] = code;
		s->finstr[n] = rd64(f + L->fr_instr);
		s->fentry[n] = L->fr_is_entry && f[L->fr_is_entry];
		n++;
	}
	if (n)
		s->fentry[n - 1] = 1;
	if (read_fingerprints(s, n) < 0)
		return -1;
	for (size_t i = 0; i < n; i++) {
		const struct pl_pycode *c = lookup_code(s, s->fcode[i], s->fprint + i * L->fp_len);
		if (!c)
			return -1;
		long idx = ((int64_t)(s->finstr[i] - (s->fcode[i] + L->co_code_adaptive))) / 2;
		s->frames[i].code = c;
		s->frames[i].line = code_line(c, idx);
		s->frames[i].entry = s->fentry[i];
	}
	t->depth = n;
	return 0;
}

/* ---- thread names (pyobj.h) ---- */

#define MAX_ATTRS 64 /* entries of a dictionary searched */
#define NAME_REREAD 256 /* samples after which a name is read again */

static int str_is(struct pl_pystack *s, uint64_t addr, const char *want)
{
	char *v = read_str(s, addr);
	int eq = v && strcmp(v, want) == 0;
	free(v);
	return eq;
}

/* The value for key in a PyDictKeysObject: from values[] where the table
 * is split (values given), else from the entry; 0 when absent. The
 * entries are searched in order (no hashing: a handful of attributes). */
static uint64_t keys_lookup(struct pl_pystack *s, uint64_t keys, uint64_t values, const char *key)
{
	uint8_t h[PL_PYOBJ_DK_INDICES];
	if (!keys || pl_pyproc_read(s->proc.pid, keys, h, sizeof h) < 0)
		return 0;
	unsigned lib = h[PL_PYOBJ_DK_LOG2_INDEX_BYTES], kind = h[PL_PYOBJ_DK_KIND];
	int64_t n = (int64_t)rd64(h + PL_PYOBJ_DK_NENTRIES);
	if (lib > 32 || kind > 2 || n <= 0 || n > MAX_ATTRS)
		return 0;
	size_t esz = kind == 0 ? 24 : 16, koff = kind == 0 ? 8 : 0;
	uint8_t e[MAX_ATTRS * 24];
	if (pl_pyproc_read(s->proc.pid, keys + PL_PYOBJ_DK_INDICES + ((uint64_t)1 << lib), e,
			   (size_t)n * esz) < 0)
		return 0;
	for (int64_t i = 0; i < n; i++) {
		uint64_t k = rd64(e + (size_t)i * esz + koff), v;
		if (!k || !str_is(s, k, key))
			continue;
		if (!values)
			return rd64(e + (size_t)i * esz + koff + 8);
		return pl_pyproc_read(s->proc.pid, values + 8 * (uint64_t)i, &v, 8) < 0 ? 0 : v;
	}
	return 0;
}

static uint64_t dict_lookup(struct pl_pystack *s, uint64_t dict, const char *key)
{
	uint8_t d[PL_PYOBJ_DICT_VALUES + 8];
	if (pl_pyproc_read(s->proc.pid, dict, d, sizeof d) < 0)
		return 0;
	uint64_t values = rd64(d + PL_PYOBJ_DICT_VALUES);
	if (values && s->L->minor >= 13)
		values += PL_PYOBJ_VALUES_HEADER_313;
	return keys_lookup(s, rd64(d + PL_PYOBJ_DICT_KEYS), values, key);
}

/* The str attribute `attr` of an instance of a Python class (one with a
 * managed dictionary), as malloc'd UTF-8, or NULL. */
static char *instance_str(struct pl_pystack *s, uint64_t obj, const char *attr)
{
	pid_t pid = s->proc.pid;
	int minor = s->L->minor;
	uint64_t type, pre[2], keys = 0, v = 0;
	uint8_t tp[PL_PYOBJ_TP_FLAGS + 8];
	if (pl_pyproc_read(pid, obj + s->L->ob_type, &type, 8) < 0 ||
	    pl_pyproc_read(pid, type, tp, sizeof tp) < 0 ||
	    pl_pyproc_read(pid, obj + PL_PYOBJ_VALUES_311, pre, sizeof pre) < 0)
		return NULL;
	uint64_t flags = rd64(tp + PL_PYOBJ_TP_FLAGS), basic = rd64(tp + PL_PYOBJ_TP_BASICSIZE);
	if (!(flags & PL_PYOBJ_TPFLAGS_MANAGED_DICT) || basic > 4096)
		return NULL;
	uint64_t slot = pre[1]; /* at PL_PYOBJ_MANAGED_DICT */
	uint64_t cached = type + pl_pyobj_cached_keys(minor);
	if (minor == 12 && (slot & 1)) {
		if (pl_pyproc_read(pid, cached, &keys, 8) == 0)
			v = keys_lookup(s, keys, slot + 1, attr); /* stored as values - 1 */
	} else if (slot) {
		v = dict_lookup(s, slot, attr);
	} else if (minor == 11 && pre[0]) {
		if (pl_pyproc_read(pid, cached, &keys, 8) == 0)
			v = keys_lookup(s, keys, pre[0], attr);
	} else if (minor >= 13 && (flags & PL_PYOBJ_TPFLAGS_INLINE_VALUES)) {
		uint8_t hdr[4];
		if (pl_pyproc_read(pid, obj + basic, hdr, 4) == 0 && hdr[3] /* valid */ &&
		    pl_pyproc_read(pid, cached, &keys, 8) == 0)
			v = keys_lookup(s, keys, obj + basic + PL_PYOBJ_VALUES_HEADER_313, attr);
	}
	return v ? read_str(s, v) : NULL;
}

static int ends_with(const char *s, const char *end)
{
	size_t a = strlen(s), b = strlen(end);
	return a >= b && strcmp(s + a - b, end) == 0;
}

/* threading's name for the thread just walked (t), or NULL: its root
 * frame is Thread._bootstrap(self), and self's _name is read once per
 * NAME_REREAD samples (a program may rename a running thread). */
static const char *thread_name(struct pl_pystack *s, const struct pl_pythread *t)
{
	size_t locals = pl_pyobj_fr_locals(s->L->minor);
	if (!locals || !pl_pyobj_cached_keys(s->L->minor) || !s->froot || t->truncated ||
	    !t->depth)
		return NULL;
	const struct pl_pycode *root = s->frames[t->depth - 1].code;
	if (!root->name || !root->file || strcmp(root->name, "Thread._bootstrap") != 0 ||
	    !ends_with(root->file, "threading.py"))
		return NULL;
	uint64_t obj;
	const uint8_t *p = in_windows(s, s->froot + locals, 8);
	if (p)
		obj = rd64(p);
	else if (pl_pyproc_read(s->proc.pid, s->froot + locals, &obj, 8) < 0)
		return NULL;
	obj &= s->L->code_mask; /* a tagged reference in 3.14+, as the code's */
	if (!obj)
		return NULL;
	struct tname *e = NULL;
	for (size_t i = 0; i < s->ntnames && !e; i++)
		if (s->tnames[i].tid == t->tid)
			e = &s->tnames[i];
	if (e && e->obj == obj && s->sampleno - e->read_at < NAME_REREAD)
		return e->name;
	if (!e) {
		if (s->ntnames == MAX_THREADS) { /* threads come and go: start over */
			for (size_t i = 0; i < s->ntnames; i++)
				free(s->tnames[i].name);
			s->ntnames = 0;
		}
		if (pl_grow((void **)&s->tnames, &s->captnames, s->ntnames + 1, sizeof *s->tnames,
			    16) < 0)
			return NULL;
		e = &s->tnames[s->ntnames++];
		*e = (struct tname){.tid = t->tid};
	}
	free(e->name);
	e->obj = obj;
	e->read_at = s->sampleno;
	e->name = instance_str(s, obj, "_name");
	return e->name;
}

/* ---- dump --locals (CPython 3.11 to 3.13) ---- */

#define LOCALS_MAX 256	   /* locals of one frame shown */
#define LOCAL_TEXT 120	   /* a value's text, at most */
#define CO_FAST_LOCAL 0x20 /* the kinds of co_localspluskinds */
#define CO_FAST_CELL 0x40
#define CO_FAST_FREE 0x80

/* a NUL-terminated C string of the target, at most len - 1 bytes */
static int read_cstr(struct pl_pystack *s, uint64_t addr, char *out, size_t len)
{
	if (!addr || pl_pyproc_read(s->proc.pid, addr, out, len - 1) < 0) {
		/* near the end of a mapping: a shorter read */
		if (!addr || pl_pyproc_read(s->proc.pid, addr, out, 16) < 0)
			return -1;
		out[16] = '\0';
		return 0;
	}
	out[len - 1] = '\0';
	return 0;
}

/* What an object of the target is, as text (its value where it is a
 * number, a string, None or a bool; its size where it is a container;
 * its type and address otherwise), into out; its type's name into type. */
static void value_text(struct pl_pystack *s, uint64_t obj, char *out, size_t len, char *type,
		       size_t tlen)
{
	uint8_t o[32];
	pid_t pid = s->proc.pid;
	const struct pylayout *L = s->L;
	snprintf(type, tlen, "?");
	if (pl_pyproc_read(pid, obj, o, sizeof o) < 0) {
		snprintf(out, len, "<unreadable at %#llx>", (unsigned long long)obj);
		return;
	}
	uint64_t tp = rd64(o + L->ob_type), tpname;
	if (pl_pyproc_read(pid, tp + PL_PYOBJ_TYPE_NAME, &tpname, 8) < 0 ||
	    read_cstr(s, tpname, type, tlen) < 0) {
		snprintf(out, len, "<object at %#llx>", (unsigned long long)obj);
		return;
	}
	int64_t size = (int64_t)rd64(o + PL_PYOBJ_VAR_SIZE);
	if (!strcmp(type, "NoneType")) {
		snprintf(out, len, "None");
	} else if (!strcmp(type, "int") || !strcmp(type, "bool")) {
		/* 3.11: the signed digit count in ob_size; 3.12 on: lv_tag,
		 * the count shifted by 3 over the sign (0 +, 1 zero, 2 -) */
		if (L->minor >= 12) {
			uint64_t tag = rd64(o + PL_PYOBJ_LONG_TAG);
			size = (int64_t)(tag >> 3) * ((tag & 3) == 2 ? -1 : 1);
		}
		uint64_t n = (uint64_t)(size < 0 ? -size : size);
		uint32_t d[3] = {0, 0, 0};
		if (n > 2 || (n && pl_pyproc_read(pid, obj + PL_PYOBJ_LONG_DIGIT, d, n * 4) < 0)) {
			snprintf(out, len, "<int of %llu 30-bit digits>", (unsigned long long)n);
			return;
		}
		uint64_t v = (uint64_t)d[0] | (uint64_t)d[1] << 30;
		if (!strcmp(type, "bool"))
			snprintf(out, len, "%s", v ? "True" : "False");
		else
			snprintf(out, len, "%s%llu", size < 0 ? "-" : "", (unsigned long long)v);
	} else if (!strcmp(type, "float")) {
		double v;
		memcpy(&v, o + PL_PYOBJ_FLOAT_VAL, sizeof v);
		/* the shortest of 15 and 17 digits that reads back the same,
		 * as Python's repr does (0.1, not 0.10000000000000001) */
		snprintf(out, len, "%.15g", v);
		if (strtod(out, NULL) != v)
			snprintf(out, len, "%.17g", v);
	} else if (!strcmp(type, "str")) {
		char *t = read_str(s, obj);
		if (!t) {
			snprintf(out, len, "<str at %#llx>", (unsigned long long)obj);
			return;
		}
		size_t tl = strlen(t);
		int cut = tl + 3 > len;
		snprintf(out, len, "'%.*s%s", cut ? (int)len - 6 : (int)tl, t, cut ? "..." : "'");
		free(t);
	} else if (!strcmp(type, "list") || !strcmp(type, "tuple") || !strcmp(type, "bytes") ||
		   !strcmp(type, "bytearray")) {
		snprintf(out, len, "<%s of %lld>", type, (long long)size);
	} else if (!strcmp(type, "dict")) {
		snprintf(out, len, "<dict of %lld>", (long long)(int64_t)rd64(o + PL_PYOBJ_DICT_USED));
	} else if (!strcmp(type, "set") || !strcmp(type, "frozenset")) {
		snprintf(out, len, "<%s of %lld>", type, (long long)(int64_t)rd64(o + PL_PYOBJ_SET_USED));
	} else {
		snprintf(out, len, "<%s at %#llx>", type, (unsigned long long)obj);
	}
}

void pl_pylocals_free(struct pl_pylocal *v, size_t n)
{
	for (size_t i = 0; v && i < n; i++) {
		free(v[i].name);
		free(v[i].value);
		free(v[i].type);
	}
	free(v);
}

int pl_pystack_locals(struct pl_pystack *s, size_t i, struct pl_pylocal **out, size_t *n)
{
	*out = NULL;
	*n = 0;
	size_t co_names = pl_pyobj_co_names(s->L->minor), fr_locals = pl_pyobj_fr_locals(s->L->minor);
	if (!co_names || !fr_locals || s->L->code_mask != ~(uint64_t)0)
		return PL_ENOTSUP;
	if (i >= PL_PYSTACK_MAX_DEPTH || !s->frames[i].code)
		return PL_EINPUT;
	pid_t pid = s->proc.pid;
	uint8_t co[16];
	if (pl_pyproc_read(pid, s->frames[i].code->addr + co_names, co, sizeof co) < 0)
		return PL_EFAILED;
	uint64_t names = rd64(co), kinds = rd64(co + 8), nn;
	/* how many: the names tuple's size */
	if (pl_pyproc_read(pid, names + PL_PYOBJ_VAR_SIZE, &nn, 8) < 0)
		return PL_EFAILED;
	int64_t nlp = (int64_t)nn;
	if (nlp <= 0)
		return PL_OK;
	size_t k = (size_t)nlp < LOCALS_MAX ? (size_t)nlp : LOCALS_MAX;
	uint64_t nameptr[LOCALS_MAX], val[LOCALS_MAX];
	uint8_t kind[LOCALS_MAX];
	if (pl_pyproc_read(pid, names + PL_PYOBJ_TUPLE_ITEM, nameptr, k * 8) < 0 ||
	    pl_pyproc_read(pid, kinds + PL_PYOBJ_BYTES_DATA, kind, k) < 0 ||
	    pl_pyproc_read(pid, s->faddr[i] + fr_locals, val, k * 8) < 0)
		return PL_EFAILED;
	struct pl_pylocal *v = calloc(k, sizeof *v);
	if (!v)
		return PL_ENOMEM;
	size_t m = 0;
	for (size_t j = 0; j < k; j++) {
		uint64_t obj = val[j];
		if (!obj)
			continue; /* not bound yet */
		if (kind[j] & (CO_FAST_CELL | CO_FAST_FREE)) {
			/* a cell: the value it holds (a cell the frame has not
			 * made yet holds the value itself, read as such) */
			char t[64], x[16];
			value_text(s, obj, x, sizeof x, t, sizeof t);
			if (!strcmp(t, "cell") &&
			    (pl_pyproc_read(pid, obj + PL_PYOBJ_CELL_REF, &obj, 8) < 0 || !obj))
				continue;
		} else if (!(kind[j] & CO_FAST_LOCAL)) {
			continue;
		}
		char value[LOCAL_TEXT], type[64];
		value_text(s, obj, value, sizeof value, type, sizeof type);
		char *name = read_str(s, nameptr[j]);
		v[m].name = name ? name : strdup("?");
		v[m].value = strdup(value);
		v[m].type = strdup(type);
		if (!v[m].name || !v[m].value || !v[m].type) {
			pl_pylocals_free(v, m + 1);
			return PL_ENOMEM;
		}
		m++;
	}
	*out = v;
	*n = m;
	return PL_OK;
}

int pl_pystack_sample(struct pl_pystack *s, unsigned flags, pl_pythread_fn fn, void *arg,
		      struct pl_pysample_stats *st)
{
	int with_idle = (flags & PL_PYSAMPLE_IDLE) != 0;
	const struct pylayout *L = s->L;
	pid_t pid = s->proc.pid;
	s->sampleno++;
	if (!s->interp || s->sampleno % 1024 == 0) {
		if (pl_pyproc_read(pid, s->proc.runtime + L->rt_interp_head, &s->interp, 8) < 0)
			return errno == ESRCH ? PL_ESYS : PL_EFAILED;
	}
	uint64_t interp = s->interp;
	for (int ni = 0; interp && ni < MAX_INTERPS; ni++) {
		/* the thread list, which thread holds the GIL and (speculatively)
		 * the thread state that headed the list last time, in one read */
		uint8_t is[MAX_IS_READ], gil[MAX_GIL_READ] = {0}, ts0[MAX_TS_READ];
		uint64_t gil_base = L->gil_in_interp ? interp : s->proc.runtime;
		uint64_t addr[3] = {interp + L->is_lo, gil_base + L->gil_lo,
				    ni == 0 ? s->first_ts : 0};
		void *buf[3] = {is, gil, ts0};
		size_t len[3] = {L->is_read, L->gil_read, L->ts_read};
		int got = readn(pid, 3, addr, buf, len);
		if (got < 2) {
			s->interp = 0; /* read it again next time */
			return errno == ESRCH ? PL_ESYS : PL_EFAILED;
		}
		uint64_t holder = rd32(gil + (L->gil_locked - L->gil_lo))
				      ? rd64(gil + (L->gil_holder - L->gil_lo))
				      : 0;
		uint64_t tsaddr = rd64(is + L->is_threads_head - L->is_lo);
		int have_ts0 = got == 3 && tsaddr == s->first_ts;
		if (ni == 0)
			s->first_ts = tsaddr;
		for (int nt = 0; tsaddr && nt < MAX_THREADS; nt++) {
			uint8_t tsbuf[MAX_TS_READ];
			const uint8_t *ts = tsbuf;
			if (nt == 0 && have_ts0) {
				ts = ts0;
			} else if (pl_pyproc_read(pid, tsaddr, tsbuf, L->ts_read) < 0) {
				st->errors++;
				break;
			}
			struct pl_pythread t = {0};
			t.tid = (unsigned long)rd64(ts + L->ts_native_tid);
			t.gil = holder && tsaddr == holder;
			if (!t.gil && (flags & PL_PYSAMPLE_GIL_ONLY)) {
				st->nogil++;
				tsaddr = rd64(ts + L->ts_next);
				continue;
			}
			/* the GIL's holder runs Python: no need to ask the kernel */
			char state = 'R';
			if (tsaddr != holder && thread_state(s, t.tid, &state) < 0) {
				/* the thread exited, its state not yet unlinked */
				tsaddr = rd64(ts + L->ts_next);
				continue;
			}
			t.idle = state != 'R';
			if (t.idle && !with_idle) {
				st->idle++;
			} else if (walk_thread(s, ts, &t) < 0) {
				st->errors++;
			} else {
				t.frames = s->frames;
				t.name = flags & PL_PYSAMPLE_NAMES ? thread_name(s, &t) : NULL;
				st->threads++;
				fn(arg, &t);
			}
			tsaddr = rd64(ts + L->ts_next);
		}
		interp = rd64(is + L->is_next - L->is_lo);
	}
	if (s->sampleno % 256 == 0)
		prune_tids(s);
	return PL_OK;
}

/* ---- open / close ---- */

static size_t max_end(const size_t *off, size_t n, size_t width)
{
	size_t m = 0;
	for (size_t i = 0; i < n; i++)
		if (off[i] + width > m)
			m = off[i] + width;
	return m;
}

/* The read sizes that follow from the offsets; -1 when an offset is beyond
 * what a sample reads (a layout that cannot be right). */
static int finish_layout(struct pylayout *L)
{
	size_t is[] = {L->is_next, L->is_threads_head};
	size_t gil[] = {L->gil_holder, L->gil_locked};
	size_t ts[] = {L->ts_next, L->ts_cframe, L->ts_current_frame, L->ts_native_tid,
		       L->ts_chunk, L->ts_top};
	size_t fr[] = {L->fr_code, L->fr_previous, L->fr_instr, L->fr_owner};
	size_t co[] = {L->co_firstlineno, L->co_filename, L->co_qualname, L->co_linetable,
		       L->co_code_adaptive, L->ob_type};
	size_t fp[] = {L->co_firstlineno, L->co_filename, L->co_qualname};
	L->is_lo = L->is_next < L->is_threads_head ? L->is_next : L->is_threads_head;
	L->is_read = max_end(is, 2, 8) - L->is_lo;
	L->ts_read = max_end(ts, 6, 8);
	if (max_end(fr, 4, 8) > L->fr_read)
		L->fr_read = max_end(fr, 4, 8);
	L->co_read = max_end(co, 6, 8);
	L->fp_off = L->co_firstlineno;
	for (size_t i = 1; i < 3; i++)
		if (fp[i] < L->fp_off)
			L->fp_off = fp[i];
	L->fp_len = max_end(fp, 3, 8) - L->fp_off;
	L->gil_lo = L->gil_holder < L->gil_locked ? L->gil_holder : L->gil_locked;
	L->gil_read = max_end(gil, 2, 8) - L->gil_lo;
	if (L->is_read > MAX_IS_READ || L->ts_read > MAX_TS_READ || L->fr_read > MAX_FR_READ ||
	    L->co_read > MAX_CO_READ || L->gil_read > MAX_GIL_READ || L->fp_len > 128 ||
	    L->str_compact_data > 128 || L->str_ascii_data > L->str_compact_data ||
	    L->str_state + 4 > L->str_ascii_data || L->str_length + 8 > L->str_ascii_data ||
	    L->bytes_data < L->var_size + 8 || L->bytes_data > 64)
		return -1;
	return 0;
}

/* 3.13 and later: the layout from the _Py_DebugOffsets at the start of the
 * target's _PyRuntime. */
static int layout_from_debug_offsets(struct pl_pystack *s, struct pl_error *err)
{
	const struct pl_pydebug_pos *P = pl_pylayout_pos(s->proc.minor);
	int pid = (int)s->proc.pid;
	if (!P)
		return pl_error_set(err, PL_ENOTSUP,
				    "process %d runs Python %s, which perfloop profile does not "
				    "know (it reads CPython 3.11 to 3.15)",
				    pid, s->version);
	uint8_t d[1024];
	if (P->total > sizeof d || pl_pyproc_read(s->proc.pid, s->proc.runtime, d, P->total) < 0)
		return pl_error_set(err, errno == EPERM ? PL_ESYS : PL_EINPUT,
				    "cannot read the debug offsets of process %d: %s", pid,
				    strerror(errno));
	struct pylayout *L = &s->layout;
	switch (pl_pylayout_debug(L, d, P)) {
	case PL_PYLAYOUT_NO_COOKIE:
		return pl_error_set(err, PL_ENOTSUP,
				    "process %d runs Python %s but its _PyRuntime does not start "
				    "with the _Py_DebugOffsets cookie: perfloop cannot read it",
				    pid, s->version);
	case PL_PYLAYOUT_OTHER_VERSION:
		return pl_error_set(err, PL_ENOTSUP,
				    "process %d: its debug offsets are for version %#llx, not "
				    "Python %s: perfloop cannot read it",
				    pid, (unsigned long long)rd64(d + P->version), s->version);
	case PL_PYLAYOUT_FREE_THREADED:
		return pl_error_set(err, PL_ENOTSUP,
				    "process %d runs a free-threaded (no-GIL) build of Python %s, "
				    "which perfloop profile cannot read yet",
				    pid, s->version);
	default:
		break;
	}
	size_t ts_size = (size_t)rd64(d + P->ts_size);
	if (L->ts_top + 8 > ts_size || L->ts_current_frame + 8 > ts_size || finish_layout(L) < 0)
		return pl_error_set(err, PL_ENOTSUP,
				    "process %d runs Python %s, whose debug offsets do not look "
				    "like a CPython 3.%d build perfloop can read",
				    pid, s->version, s->proc.minor);
	return PL_OK;
}

static void free_scratch(struct pl_pystack *s)
{
	free(s->frames);
	free(s->fcode);
	free(s->fentry);
	free(s->faddr);
	free(s->finstr);
	free(s->fprint);
}

int pl_pystack_open(pid_t pid, struct pl_pystack **out, struct pl_error *err)
{
	struct pl_pystack *s = calloc(1, sizeof *s);
	if (!s)
		return pl_error_set(err, PL_ENOMEM, "out of memory");
	int rc = pl_pyproc_attach(pid, &s->proc, err);
	if (rc < 0) {
		free(s);
		return rc;
	}
	snprintf(s->version, sizeof s->version, "%d.%d.%d", s->proc.major, s->proc.minor,
		 s->proc.micro);
	s->L = &s->layout;
	if (s->proc.major == 3 && (s->proc.minor == 11 || s->proc.minor == 12)) {
		s->layout = s->proc.minor == 11 ? pl_py311_layout : pl_py312_layout;
		if (finish_layout(&s->layout) < 0)
			rc = pl_error_set(err, PL_EFAILED, "internal: CPython 3.%d layout",
					  s->proc.minor);
	} else if (s->proc.major == 3 && s->proc.minor >= 13) {
		rc = layout_from_debug_offsets(s, err);
	} else {
		rc = pl_error_set(err, PL_ENOTSUP,
				  "process %d runs Python %s, which perfloop profile cannot read "
				  "(it reads CPython 3.11 to 3.15)",
				  (int)pid, s->version);
	}
	if (rc < 0) {
		free(s);
		return rc;
	}
	s->frames = malloc(PL_PYSTACK_MAX_DEPTH * sizeof *s->frames);
	s->fcode = malloc(PL_PYSTACK_MAX_DEPTH * sizeof *s->fcode);
	s->finstr = malloc(PL_PYSTACK_MAX_DEPTH * sizeof *s->finstr);
	s->fentry = malloc(PL_PYSTACK_MAX_DEPTH);
	s->faddr = malloc(PL_PYSTACK_MAX_DEPTH * sizeof *s->faddr);
	s->fprint = malloc(PL_PYSTACK_MAX_DEPTH * s->L->fp_len);
	if (!s->frames || !s->fcode || !s->finstr || !s->fentry || !s->faddr || !s->fprint) {
		free_scratch(s);
		free(s);
		return pl_error_set(err, PL_ENOMEM, "out of memory");
	}
	*out = s;
	return PL_OK;
}

const char *pl_pystack_version(const struct pl_pystack *s)
{
	return s->version;
}

void pl_pystack_close(struct pl_pystack *s)
{
	if (!s)
		return;
	for (size_t i = 0; i < s->capcodes; i++)
		free_code(s->codes[i]);
	free(s->codes);
	for (size_t i = 0; i < s->nretired; i++)
		free_code(s->retired[i]);
	free(s->retired);
	free_scratch(s);
	for (size_t i = 0; i < MAX_WINDOWS; i++)
		free(s->win[i].buf);
	free(s->chunks);
	for (size_t i = 0; i < s->ntids; i++)
		close(s->tids[i].fd);
	free(s->tids);
	for (size_t i = 0; i < s->ntnames; i++)
		free(s->tnames[i].name);
	free(s->tnames);
	free(s);
}
