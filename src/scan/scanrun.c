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
#include "scancache.h"

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

/* Does text import a module or name called word: a word of an `import`
 * or `from ... import` statement (its parenthesized continuation lines
 * too), `from .evaluation import *`, `import utils`, `from models import
 * (Generator, discriminator_loss)`? */
static int imports(const char *text, size_t len, const char *word, size_t wl)
{
	const char *p = text, *end = text + len;
	int open = 0; /* inside an import's parentheses */
	while (p < end) {
		const char *eol = memchr(p, '\n', (size_t)(end - p));
		if (!eol)
			eol = end;
		const char *q = p;
		while (q < eol && (*q == ' ' || *q == '\t'))
			q++;
		int stmt = open || (eol - q > 7 && !memcmp(q, "import ", 7)) ||
			   (eol - q > 5 && !memcmp(q, "from ", 5));
		if (stmt) {
			for (const char *c = q; c < eol;) {
				if (*c == '#')
					break;
				if (*c == '(')
					open = 1;
				else if (*c == ')')
					open = 0;
				if (!(*c == '_' || (*c >= 'a' && *c <= 'z') || (*c >= 'A' && *c <= 'Z'))) {
					c++;
					continue;
				}
				const char *w = c;
				while (c < eol && (*c == '_' || (*c >= 'a' && *c <= 'z') ||
						   (*c >= 'A' && *c <= 'Z') || (*c >= '0' && *c <= '9')))
					c++;
				if ((size_t)(c - w) == wl && !memcmp(w, word, wl))
					return 1;
			}
		}
		p = eol + 1;
	}
	return 0;
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
	if (rc == 0 && !atomic_load(&w.failed) && join_pending(w.files, n) < 0)
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
