/*
 * Scanning many files (pl_scan_files, declared in scan.h): two phases over
 * a shared work list, each on up to `threads` threads. The first reads
 * every file and takes what the cache (scancache.c) already has; the rules
 * are compiled only for the languages left, and the second phase scans
 * those files (pl_scan_with, scan.c) and stores their results. Apart from
 * scan.c so that the per-file scanner never depends on the cache, which
 * depends on it.
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
