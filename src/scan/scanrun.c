/*
 * Scanning many files (pl_scan_files, declared in scan.h): two phases over
 * a shared work list, each on up to `threads` threads. The first reads
 * every file and takes what the cache (scancache.c) already has; the rules
 * are compiled only for the languages left, and the second phase scans
 * those files (pl_scan_with, scan.c) and stores their results. Apart from
 * scan.c so that the per-file scanner never depends on the cache, which
 * depends on it. Last, the one look across files (join_pending): a
 * finding that holds only if another file's training step calls its
 * function is kept or dropped here, after the cache, which keeps each
 * file's result on its own.
 */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "scan_int.h"
#include <ctype.h>
#include "scancache.h"
#include "hash.h"
#include "words.h"

static int read_file(const char *path, char **text, size_t *len)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -1;
	struct stat st;
	if (fstat(fd, &st) < 0 || !S_ISREG(st.st_mode) || st.st_size > (off_t)UINT32_MAX / 2) {
		int e = S_ISREG(st.st_mode) ? EFBIG : EISDIR;
		close(fd);
		errno = e;
		return -1;
	}
	char *buf = malloc((size_t)st.st_size + 1);
	size_t got = 0;
	while (buf && got < (size_t)st.st_size) {
		ssize_t n = read(fd, buf + got, (size_t)st.st_size - got);
		if (n <= 0)
			break;
		got += (size_t)n;
	}
	close(fd);
	if (!buf)
		return -1;
	buf[got] = '\0';
	*text = buf;
	*len = got;
	return 0;
}

static void import_paths(const char *text, size_t len,
			 void (*fn)(const char *p, size_t n, void *ctx), void *ctx);

struct word {
	const char *s;
	size_t n;
	int found;
};

/* a path of an import: does one of its dotted parts equal the word? */
static void has_word(const char *p, size_t n, void *ctx)
{
	struct word *x = ctx;
	for (size_t i = 0, start = 0; i <= n && !x->found; i++)
		if (i == n || p[i] == '.') {
			x->found = i - start == x->n && !memcmp(p + start, x->s, x->n);
			start = i + 1;
		}
}

/* Does text import a module or name called word: a part of a path its
 * import statements name (import_paths): `from .evaluation import *`,
 * `import utils`, `from models import (Generator, discriminator_loss)`? */
static int imports(const char *text, size_t len, const char *word, size_t wl)
{
	struct word x = {word, wl, 0};
	import_paths(text, len, has_word, &x);
	return x.found;
}

/* The module a file is imported as: its name less .py, or for a
 * package's __init__.py its directory's name. */
static size_t module_name(const char *path, const char **name)
{
	const char *base = strrchr(path, '/');
	base = base ? base + 1 : path;
	const char *dot = strrchr(base, '.');
	size_t n = dot ? (size_t)(dot - base) : strlen(base);
	if (n == 8 && !memcmp(base, "__init__", 8) && base > path + 1) {
		const char *dir = base - 1, *d = dir;
		while (d > path && d[-1] != '/')
			d--;
		*name = d;
		return (size_t)(dir - d);
	}
	*name = base;
	return n;
}

/* The first "name line" of calls (pl_scan_step_calls) for name: its line,
 * or 0. */
static long called_at(const char *calls, const char *name)
{
	size_t nl = strlen(name);
	for (const char *p = calls; p && *p;) {
		if (!strncmp(p, name, nl) && p[nl] == ' ')
			return strtol(p + nl + 1, NULL, 10);
		p = strchr(p, '\n');
		p = p ? p + 1 : NULL;
	}
	return 0;
}

/* Each pending finding (in-training-step with no caller in its own file:
 * needs_caller is its function's "name", or a method's "name Class")
 * holds where another Python file calls that name once per training step
 * and imports the finding's module (a method: its class; `from metrics
 * import accuracy` does not vouch for another file's accuracy), names a
 * device where the finding's file does not ("!" first), and that call is
 * not a finding of the same rule already; it then says where it is called
 * from. The rest are dropped. 0, or -1 out of memory. */
static int join_pending(struct pl_scan_file *files, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		struct pl_scan_file *f = &files[i];
		const char *mod = NULL;
		size_t ml = f->path ? module_name(f->path, &mod) : 0;
		for (size_t k = f->findings.n; k-- > 0;) {
			struct pl_finding *x = &f->findings.v[k];
			if (!x->needs_caller)
				continue;
			char name[256];
			int device = x->needs_caller[0] == '!';
			snprintf(name, sizeof name, "%s", x->needs_caller + device);
			char *cls = strchr(name, ' ');
			if (cls)
				*cls++ = '\0';
			size_t j = 0;
			long line = 0;
			for (; j < n && !line; j++) {
				const struct pl_scan_file *g = &files[j];
				if (j == i || g->lang != f->lang || !g->step_calls || !g->text ||
				    (device && !g->step_device))
					continue;
				line = called_at(g->step_calls, name);
				if (line && (cls ? !imports(g->text, g->len, cls, strlen(cls))
						 : !imports(g->text, g->len, mod, ml)))
					line = 0;
				/* the call's own line reported already (to_cpu(loss).item()) */
				for (size_t q = 0; line && q < g->findings.n; q++)
					if (g->findings.v[q].line == line &&
					    !strcmp(g->findings.v[q].leaf, x->leaf))
						line = -1;
				if (line < 0) {
					line = 0;
					j = n;
				}
			}
			if (!line) {
				pl_findings_remove(&f->findings, k);
				continue;
			}
			char *t = NULL;
			if (asprintf(&t, "%s (called on every training step: %s:%ld)",
				     x->evidence_text ? x->evidence_text : "", files[j - 1].path,
				     line) < 0)
				return -1;
			free(x->evidence_text);
			x->evidence_text = t;
			free(x->needs_caller);
			x->needs_caller = NULL;
		}
	}
	return 0;
}

/* The name a Python line starting a top-level definition defines
 * ("def NAME", "async def NAME", "class NAME"): its length, name at *out;
 * 0 where the line starts none. */
static size_t def_name(const char *l, const char *end, const char **out)
{
	static const char *const kw[] = {"def ", "async def ", "class "};
	for (size_t k = 0; k < 3; k++) {
		size_t kl = strlen(kw[k]);
		if ((size_t)(end - l) > kl && !memcmp(l, kw[k], kl)) {
			const char *p = l + kl, *q;
			while (p < end && *p == ' ')
				p++;
			for (q = p; q < end && (isalnum((unsigned char)*q) || *q == '_'); q++)
				;
			*out = p;
			return (size_t)(q - p);
		}
	}
	return 0;
}

/* Whether a top-level name is one something outside the code calls by
 * convention: a test (test_*, Test*), a dunder, the entry point main. */
static int called_by_convention(const char *p, size_t n)
{
	return (n >= 4 && !memcmp(p, "test", 4)) || (n >= 4 && !memcmp(p, "Test", 4)) ||
	       (n >= 2 && p[0] == '_' && p[1] == '_') || (n == 4 && !memcmp(p, "main", 4));
}

/* f's findings (sorted by line) each get the top-level def or class they
 * are in, read from the lines' indentation: a line at column 0 that is not
 * blank, a comment or a decorator ends the one before; a decorated
 * definition (a framework calls it: @app.route, @register) or one called
 * by convention gets none, and so does module code. 0, or -1 out of
 * memory. */
static int mark_tops(struct pl_scan_file *f)
{
	const char *t = f->text, *end = f->text + f->len, *top = NULL;
	size_t topn = 0, k = 0;
	int decorated = 0;
	long line = 1;
	for (const char *l = t; l < end && k < f->findings.n; line++) {
		const char *nl = memchr(l, '\n', (size_t)(end - l));
		const char *le = nl ? nl : end;
		if (le > l && *l != ' ' && *l != '\t' && *l != '#' && *l != '\r') {
			const char *nm = NULL;
			size_t n = def_name(l, le, &nm);
			if (*l == '@') {
				decorated = 1;
			} else if (n) {
				top = decorated || called_by_convention(nm, n) ? NULL : nm;
				topn = n;
				decorated = 0;
			} else {
				top = NULL;
				decorated = 0;
			}
		}
		for (; k < f->findings.n && f->findings.v[k].line <= line; k++) {
			if (f->findings.v[k].line != line || !top)
				continue;
			char *c = strndup(top, topn);
			if (!c)
				return -1;
			f->findings.v[k].unreferenced = c;
		}
		l = nl ? nl + 1 : end;
	}
	return 0;
}

/* Whether the identifier at t[i..i+n) is the name a def or class
 * statement defines (not a use of it). */
static int defined_here(const char *t, size_t i)
{
	size_t j = i;
	while (j > 0 && (t[j - 1] == ' ' || t[j - 1] == '\t'))
		j--;
	return (j >= 3 && !memcmp(t + j - 3, "def", 3) &&
		(j == 3 || !(isalnum((unsigned char)t[j - 4]) || t[j - 4] == '_'))) ||
	       (j >= 5 && !memcmp(t + j - 5, "class", 5) &&
		(j == 5 || !(isalnum((unsigned char)t[j - 6]) || t[j - 6] == '_')));
}

/* A set of names: each once, found by hash (open addressing, index +
 * 1), with a mark each. */
struct nameset {
	struct pl_argv v;
	size_t *slot, cap;
	unsigned char *mark;
};

static void nameset_release(struct nameset *s)
{
	pl_argv_release(&s->v);
	free(s->slot);
	free(s->mark);
	memset(s, 0, sizeof *s);
}

/* The index of w[0..n), or -1. */
static long nameset_find(const struct nameset *s, const char *w, size_t n)
{
	if (!s->cap)
		return -1;
	for (size_t h = (size_t)pl_fnv1a_bytes(PL_FNV_INIT, w, n) & (s->cap - 1); s->slot[h];
	     h = (h + 1) & (s->cap - 1)) {
		size_t j = s->slot[h] - 1;
		if (strlen(s->v.v[j]) == n && !memcmp(s->v.v[j], w, n))
			return (long)j;
	}
	return -1;
}

/* Add w[0..n) where it is not in s yet (the table grows as it fills).
 * 0, or -1 out of memory. */
static int nameset_add(struct nameset *s, const char *w, size_t n)
{
	if (nameset_find(s, w, n) >= 0)
		return 0;
	if (pl_argv_push(&s->v, w, n) < 0)
		return -1;
	unsigned char *m = realloc(s->mark, s->v.n);
	if (!m)
		return -1;
	s->mark = m;
	s->mark[s->v.n - 1] = 0;
	if (2 * s->v.n > s->cap) {
		size_t cap = s->cap ? 2 * s->cap : 16;
		size_t *slot = calloc(cap, sizeof *slot);
		if (!slot)
			return -1;
		free(s->slot);
		s->slot = slot;
		s->cap = cap;
		for (size_t j = 0; j < s->v.n; j++) {
			size_t h = (size_t)pl_fnv1a(PL_FNV_INIT, s->v.v[j]) & (cap - 1);
			while (slot[h])
				h = (h + 1) & (cap - 1);
			slot[h] = j + 1;
		}
		return 0;
	}
	size_t h = (size_t)pl_fnv1a_bytes(PL_FNV_INIT, w, n) & (s->cap - 1);
	while (s->slot[h])
		h = (h + 1) & (s->cap - 1);
	s->slot[h] = s->v.n;
	return 0;
}

/* The dotted module path of a Python file relative to the scan's root:
 * "utils/loss.py" is "utils.loss", "pkg/__init__.py" "pkg"; into buf, its
 * length (0 where it does not fit). */
static size_t module_path(const char *path, char *buf, size_t cap)
{
	while (path[0] == '.' && path[1] == '/')
		path += 2;
	size_t n = strlen(path);
	if (n > 3 && !strcmp(path + n - 3, ".py"))
		n -= 3;
	if (n >= 9 && !memcmp(path + n - 9, "/__init__", 9))
		n -= 9;
	if (n == 0 || n >= cap)
		return 0;
	for (size_t i = 0; i < n; i++)
		buf[i] = path[i] == '/' ? '.' : path[i];
	buf[n] = '\0';
	return n;
}

/* Each module path text's import statements name, leading dots dropped:
 * `import a.b as c, d` names a.b and d; `from p.q import (x, y as z)`
 * names p.q, p.q.x and p.q.y (x may be a submodule); `from . import m`
 * names m. Given to fn(path, len, ctx). Statements continue over
 * parentheses and backslashes; a string or comment ends the reading. */
static void import_paths(const char *text, size_t len,
			 void (*fn)(const char *p, size_t n, void *ctx), void *ctx)
{
	const char *p = text, *end = text + len;
	while (p < end) {
		const char *eol = memchr(p, '\n', (size_t)(end - p));
		if (!eol)
			eol = end;
		const char *q = p;
		while (q < eol && (*q == ' ' || *q == '\t'))
			q++;
		int is_from = eol - q > 5 && !memcmp(q, "from ", 5);
		int is_import = eol - q > 7 && !memcmp(q, "import ", 7);
		if (!is_from && !is_import) {
			p = eol + 1;
			continue;
		}
		/* the statement's words, dots kept: "from", "p.q", "import", "x" */
		char base[256] = "", word[256];
		int after_import = is_import, paren = 0, as = 0;
		const char *c = q + (is_from ? 5 : 7);
		while (c < end) {
			if (*c == '\n') {
				if (!paren && c[-1] != '\\')
					break;
				c++;
				continue;
			}
			if (*c == '#' || *c == '"' || *c == '\'' || *c == ';')
				break;
			if (*c == '(')
				paren = 1;
			else if (*c == ')')
				paren = 0;
			if (*c == ',')
				as = 0;
			if (!(*c == '.' || *c == '_' || isalnum((unsigned char)*c))) {
				c++;
				continue;
			}
			const char *w = c;
			while (c < end && (*c == '.' || *c == '_' || isalnum((unsigned char)*c)))
				c++;
			size_t wl = (size_t)(c - w);
			if (wl == 6 && !memcmp(w, "import", 6)) {
				after_import = 1;
				continue;
			}
			if (wl == 2 && !memcmp(w, "as", 2)) {
				as = 1;
				continue;
			}
			if (as)
				continue;
			while (wl && *w == '.') {
				w++;
				wl--;
			}
			if (!after_import) { /* from's module */
				snprintf(base, sizeof base, "%.*s", (int)wl, w);
				if (wl)
					fn(w, wl, ctx);
				continue;
			}
			if (!wl || (wl == 1 && *w == '*'))
				continue;
			if (is_from && base[0]) {
				int k = snprintf(word, sizeof word, "%s.%.*s", base, (int)wl, w);
				if (k > 0 && (size_t)k < sizeof word)
					fn(word, (size_t)k, ctx);
			} else {
				fn(w, wl, ctx);
			}
		}
		p = c < end ? c + 1 : end;
	}
}

/* An import's path: the module paths that end with it (at a dot) are
 * imported; mods holds every suffix of every candidate's path. */
static void mark_import(const char *w, size_t n, void *ctx)
{
	struct nameset *mods = ctx;
	long j = nameset_find(mods, w, n);
	if (j >= 0)
		mods->mark[j] = 1;
}

/* Whether a module path (utils.loss) is imported: one of its suffixes at
 * a dot (loss, utils.loss) was marked. */
static int module_imported(const struct nameset *mods, const char *m, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (i == 0 || m[i - 1] == '.') {
			long j = nameset_find(mods, m + i, n - i);
			if (j >= 0 && mods->mark[j])
				return 1;
		}
	return 0;
}

/* A whole-project scan (pl_scan_opts.whole): each Python finding in a
 * top-level def or class that no scanned file names anywhere else (in
 * code, a string such as a registry's "Name" or __all__, or a comment),
 * in a module another scanned file imports, keeps that name in
 * unreferenced; the others' is cleared. A module nothing imports is a
 * script or an entry point, whose functions something outside may call:
 * those are not judged. One pass over the import lines, one over every
 * file's identifiers, each looked up among the candidates. 0, or -1 out
 * of memory. */
static int mark_unreferenced(struct pl_scan_file *files, size_t n)
{
	struct nameset names = {0}, mods = {0};
	int rc = 0;
	for (size_t i = 0; i < n && rc == 0; i++) {
		struct pl_scan_file *f = &files[i];
		if (f->lang != PL_LANG_PYTHON || !f->text || !f->findings.n)
			continue;
		rc = mark_tops(f);
		char mp[512];
		size_t ml = 0;
		for (size_t k = 0; rc == 0 && k < f->findings.n && !ml; k++)
			if (f->findings.v[k].unreferenced && (ml = module_path(f->path, mp, sizeof mp)))
				for (size_t c = 0; rc == 0 && c < ml; c++)
					if (c == 0 || mp[c - 1] == '.')
						rc = nameset_add(&mods, mp + c, ml - c);
	}
	/* which of those modules a file imports (`from utils.loss import
	 * ComputeLoss`, `from .loss import *`, `import lib`; not `from
	 * torch.utils.data import DataLoader` for a data.py of the project) */
	for (size_t i = 0; i < n && rc == 0 && mods.v.n; i++)
		if (files[i].lang == PL_LANG_PYTHON && files[i].text)
			import_paths(files[i].text, files[i].len, mark_import, &mods);
	/* the candidates: the names of the findings in imported modules */
	for (size_t i = 0; i < n && rc == 0; i++) {
		struct pl_scan_file *f = &files[i];
		char mp[512];
		size_t ml = f->path ? module_path(f->path, mp, sizeof mp) : 0;
		int imported = ml && module_imported(&mods, mp, ml);
		for (size_t k = 0; rc == 0 && k < f->findings.n; k++) {
			struct pl_finding *x = &f->findings.v[k];
			if (!x->unreferenced)
				continue;
			if (!imported) {
				free(x->unreferenced);
				x->unreferenced = NULL;
			} else {
				rc = nameset_add(&names, x->unreferenced, strlen(x->unreferenced));
			}
		}
	}
	/* every identifier of every file, but a def's or class's own name;
	 * hashed only where its first letter and length are a candidate's */
	unsigned char first[256] = {0}, lens[65] = {0};
	for (size_t j = 0; j < names.v.n; j++) {
		size_t l = strlen(names.v.v[j]);
		first[(unsigned char)names.v.v[j][0]] = 1;
		lens[l < 64 ? l : 64] = 1;
	}
	size_t left = names.v.n;
	for (size_t i = 0; i < n && left && rc == 0; i++) {
		const struct pl_scan_file *g = &files[i];
		if (g->lang != PL_LANG_PYTHON || !g->text)
			continue;
		const char *t = g->text;
		for (size_t p = 0; p < g->len && left;) {
			unsigned char c = (unsigned char)t[p];
			if (!(isalpha(c) || c == '_')) {
				p++;
				continue;
			}
			size_t q = p + 1;
			while (q < g->len && (isalnum((unsigned char)t[q]) || t[q] == '_'))
				q++;
			long j = first[c] && lens[q - p < 64 ? q - p : 64]
				     ? nameset_find(&names, t + p, q - p)
				     : -1;
			if (j >= 0 && !names.mark[j] && !defined_here(t, p)) {
				names.mark[j] = 1;
				left--;
			}
			p = q;
		}
	}
	for (size_t i = 0; i < n && rc == 0; i++)
		for (size_t k = 0; k < files[i].findings.n; k++) {
			struct pl_finding *x = &files[i].findings.v[k];
			long j = x->unreferenced ? nameset_find(&names, x->unreferenced,
								strlen(x->unreferenced))
						 : -1;
			if (x->unreferenced && (j < 0 || names.mark[j])) {
				free(x->unreferenced);
				x->unreferenced = NULL;
			}
		}
	nameset_release(&names);
	nameset_release(&mods);
	return rc;
}

struct work {
	struct pl_rules *rules;
	const struct pl_scan_opts *o;
	struct pl_scan_cache *cache;
	const char *const *paths;
	struct pl_scan_file *files;
	size_t n;
	atomic_size_t next;
	atomic_int failed;
	int phase;	 /* 0: read, and take what the cache has; 1: scan the rest */
	char (*keys)[33]; /* per file, with a cache */
	unsigned char *done; /* per file: read failed, or served from the cache */
};

static void *worker(void *arg)
{
	struct work *w = arg;
	TSParser *p = ts_parser_new();
	TSQueryCursor *qc = ts_query_cursor_new();
	if (!p || !qc) {
		atomic_store(&w->failed, 1);
	} else {
		for (;;) {
			size_t i = atomic_fetch_add(&w->next, 1);
			if (i >= w->n)
				break;
			struct pl_scan_file *f = &w->files[i];
			if (w->phase == 1) {
				if (w->done[i])
					continue;
				if (pl_scan_with(p, qc, w->rules, w->o, f) < 0)
					atomic_store(&w->failed, 1);
				else if (w->cache)
					pl_scan_cache_put(w->cache, w->keys[i], f);
				continue;
			}
			f->path = strdup(w->paths[i]);
			f->lang = (enum pl_lang)pl_scan_lang(w->paths[i]);
			if (!f->path) {
				atomic_store(&w->failed, 1);
				w->done[i] = 1;
				continue;
			}
			if (read_file(f->path, &f->text, &f->len) < 0) {
				f->unreadable = 1;
				f->read_errno = errno;
				w->done[i] = 1;
				continue;
			}
			if (w->cache) {
				pl_scan_cache_key(w->cache, f, w->keys[i]);
				w->done[i] = pl_scan_cache_get(w->cache, w->keys[i], f) ? 2 : 0;
			}
		}
	}
	if (qc)
		ts_query_cursor_delete(qc);
	if (p)
		ts_parser_delete(p);
	return NULL;
}

/* One phase of w over every file, on `threads` threads. */
static void run_phase(struct work *w, int phase, int threads)
{
	w->phase = phase;
	atomic_store(&w->next, 0);
	pthread_t tid[64];
	int started = 0;
	for (int i = 1; i < threads && i < 64; i++)
		if (pthread_create(&tid[started], NULL, worker, w) == 0)
			started++;
	worker(w);
	for (int i = 0; i < started; i++)
		pthread_join(tid[i], NULL);
}

int pl_scan_files(struct pl_rules *rules, const struct pl_scan_opts *o,
		  struct pl_scan_cache *cache, const char *const *paths, size_t n,
		  int threads, struct pl_scan_file **out, size_t *cached, struct pl_error *err)
{
	struct work w = {rules, o, cache && cache->dir ? cache : NULL, paths,
			 calloc(n ? n : 1, sizeof(struct pl_scan_file)), n, 0, 0, 0, NULL, NULL};
	w.done = calloc(n ? n : 1, 1);
	w.keys = w.cache ? calloc(n ? n : 1, sizeof *w.keys) : NULL;
	if (!w.files || !w.done || (w.cache && !w.keys)) {
		free(w.files);
		free(w.done);
		free(w.keys);
		return pl_error_set(err, PL_ENOMEM, "out of memory");
	}
	if (threads < 1)
		threads = 1;
	if ((size_t)threads > n)
		threads = n ? (int)n : 1;
	run_phase(&w, 0, threads);
	size_t hits = 0, todo = 0;
	unsigned langs = 0; /* the languages of the files to scan */
	for (size_t i = 0; i < n; i++) {
		hits += w.done[i] == 2;
		todo += w.done[i] == 0;
		if (w.done[i] == 0 && (int)w.files[i].lang >= 0)
			langs |= 1u << w.files[i].lang;
	}
	if (cached)
		*cached = hits;
	int rc = 0;
	if (todo && !atomic_load(&w.failed)) {
		rc = pl_rules_compile(rules, o, langs, err);
		if (rc == 0)
			run_phase(&w, 1, threads);
	}
	free(w.done);
	free(w.keys);
	if (rc == 0 && !atomic_load(&w.failed) &&
	    (join_pending(w.files, n) < 0 || (o->whole && mark_unreferenced(w.files, n) < 0)))
		rc = pl_error_set(err, PL_ENOMEM, "out of memory");
	if (rc < 0) {
		for (size_t i = 0; i < n; i++)
			pl_scan_file_release(&w.files[i]);
		free(w.files);
		return rc;
	}
	if (atomic_load(&w.failed)) {
		for (size_t i = 0; i < n; i++)
			pl_scan_file_release(&w.files[i]);
		free(w.files);
		return pl_error_set(err, PL_ENOMEM, "out of memory while scanning");
	}
	*out = w.files;
	return 0;
}
