/*
 * scan's result cache: see scancache.h. An entry is a small JSON object:
 * {"path", "len", "lines", "errors", "warnings", "findings": [...]}, the
 * findings in the findings-1 format, under its key's name; where the file
 * has them, "step_calls" (the functions it calls once per training step),
 * "step_device" (and it names a device) and "needs_caller" (per finding: null, or the name of its function that
 * another file's step loop must call for it to hold), for the join across
 * files (scanrun.c).
 */
#include "scancache.h"

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <elf.h>
#include <jansson.h>
#include <link.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "fsio.h"
#include "hash.h"
#include "scan.h"

#ifndef PERFLOOP_VERSION
#define PERFLOOP_VERSION "dev"
#endif

uint64_t pl_scan_cache_salt(uint64_t h, const char *part)
{
	return pl_fnv1a(h, part ? part : "") * 31 + 1; /* field separator */
}

static int build_id_cb(struct dl_phdr_info *info, size_t size, void *arg)
{
	(void)size;
	uint64_t *h = arg;
	if (info->dlpi_name && info->dlpi_name[0])
		return 0; /* the main program has an empty name */
	for (int i = 0; i < info->dlpi_phnum; i++) {
		const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
		if (ph->p_type != PT_NOTE)
			continue;
		const char *p = (const char *)(info->dlpi_addr + ph->p_vaddr);
		const char *end = p + ph->p_memsz;
		while (p + sizeof(ElfW(Nhdr)) <= end) {
			const ElfW(Nhdr) *n = (const ElfW(Nhdr) *)p;
			const char *name = p + sizeof *n;
			const char *desc = name + ((n->n_namesz + 3) & ~3u);
			if (desc + n->n_descsz > end)
				break;
			if (n->n_type == NT_GNU_BUILD_ID && n->n_namesz == 4 && !memcmp(name, "GNU", 4)) {
				*h = pl_fnv1a_bytes(*h, desc, n->n_descsz);
				return 1;
			}
			p = desc + ((n->n_descsz + 3) & ~3u);
		}
	}
	return 0;
}

uint64_t pl_scan_cache_self(uint64_t h)
{
	h = pl_scan_cache_salt(h, PERFLOOP_VERSION);
	if (dl_iterate_phdr(build_id_cb, &h) == 0) {
		/* no build id: the binary's size and time stand in */
		struct stat st;
		char buf[64];
		if (stat("/proc/self/exe", &st) == 0) {
			snprintf(buf, sizeof buf, "%lld.%lld.%ld", (long long)st.st_size,
				 (long long)st.st_mtim.tv_sec, (long)st.st_mtim.tv_nsec);
			h = pl_scan_cache_salt(h, buf);
		}
	}
	return h;
}

/* This user's key, mixed into the salt: the cache lives in the project,
 * where a clone or a pull request can ship entries of its own ("findings":
 * [] for a file, hiding what a CI scan would find); without the key no one
 * else can name an entry this perfloop would read. 16 random bytes in
 * $XDG_CACHE_HOME/perfloop/scan-key (or ~/.cache/...), made on first use;
 * -1 where there is no such place (then nothing is cached). */
static int user_key(uint64_t *h)
{
	const char *xdg = getenv("XDG_CACHE_HOME"), *home = getenv("HOME");
	char dir[PATH_MAX], path[PATH_MAX + 16];
	if (xdg && xdg[0] == '/')
		snprintf(dir, sizeof dir, "%s/perfloop", xdg);
	else if (home && home[0] == '/')
		snprintf(dir, sizeof dir, "%s/.cache/perfloop", home);
	else
		return -1;
	snprintf(path, sizeof path, "%s/scan-key", dir);
	unsigned char key[16];
	int fd = open(path, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0) {
		char parent[PATH_MAX];
		snprintf(parent, sizeof parent, "%s", dir);
		char *slash = strrchr(parent, '/');
		if (slash && slash != parent) {
			*slash = '\0';
			mkdir(parent, 0700);
		}
		mkdir(dir, 0700);
		int rfd = open("/dev/urandom", O_RDONLY | O_CLOEXEC);
		ssize_t got = rfd >= 0 ? read(rfd, key, sizeof key) : -1;
		if (rfd >= 0)
			close(rfd);
		if (got != (ssize_t)sizeof key)
			return -1;
		/* a race with another perfloop: whichever key lands is read back */
		char tmp[PATH_MAX + 40];
		snprintf(tmp, sizeof tmp, "%s.%ld", path, (long)getpid());
		int wfd = open(tmp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
		if (wfd < 0)
			return -1;
		int ok = pl_fsio_write_all(wfd, key, sizeof key) == 0;
		close(wfd);
		if (!ok || link(tmp, path) != 0) {
			unlink(tmp);
			if (!ok || errno != EEXIST)
				return -1;
		}
		unlink(tmp);
		fd = open(path, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
		if (fd < 0)
			return -1;
	}
	struct stat st;
	ssize_t n = fstat(fd, &st) == 0 && S_ISREG(st.st_mode) ? read(fd, key, sizeof key) : -1;
	close(fd);
	if (n != (ssize_t)sizeof key)
		return -1;
	*h = pl_fnv1a_bytes(*h, key, sizeof key);
	return 0;
}

/* the nearest directory at or above cwd holding .git, or cwd */
static char *work_top(void)
{
	char cwd[PATH_MAX];
	if (!getcwd(cwd, sizeof cwd))
		return NULL;
	char dir[PATH_MAX];
	snprintf(dir, sizeof dir, "%s", cwd);
	for (;;) {
		char git[PATH_MAX + 8];
		struct stat st;
		snprintf(git, sizeof git, "%s/.git", dir);
		if (lstat(git, &st) == 0)
			return strdup(dir);
		char *slash = strrchr(dir, '/');
		if (!slash || slash == dir)
			return strdup(cwd);
		*slash = '\0';
	}
}

int pl_scan_cache_init(struct pl_scan_cache *c, uint64_t salt)
{
	memset(c, 0, sizeof *c);
	pthread_mutex_init(&c->mu, NULL);
	c->salt = pl_scan_cache_self(salt);
	c->fresh = json_object();
	char *top = work_top();
	char why[600];
	/* never through a symlink a clone shipped (.perfloop/cache -> elsewhere) */
	if (!top || !c->fresh || user_key(&c->salt) != 0 ||
	    pl_fsio_state_problem(top, why, sizeof why)) {
		free(top);
		return -1;
	}
	char path[PATH_MAX];
	const char *parts[] = {"/.perfloop", "/cache", "/scan"};
	size_t n = (size_t)snprintf(path, sizeof path, "%s", top);
	free(top);
	for (int i = 0; i < 3; i++) {
		n += (size_t)snprintf(path + n, sizeof path - n, "%s", parts[i]);
		if (n >= sizeof path || (mkdir(path, 0755) != 0 && errno != EEXIST))
			return -1;
		if (i == 0) { /* the loop's own directory: git ignores all of it */
			char ign[PATH_MAX + 16];
			struct stat st;
			struct pl_error err;
			snprintf(ign, sizeof ign, "%s/.gitignore", path);
			if (stat(ign, &st) != 0 && pl_fsio_write_atomic(ign, "*\n", 2, &err) != 0)
				return -1;
		}
	}
	c->dir = strdup(path);
	if (asprintf(&c->file, "%s/%016llx.json", path, (unsigned long long)c->salt) < 0)
		c->file = NULL;
	if (!c->dir || !c->file) {
		free(c->dir);
		free(c->file);
		c->dir = c->file = NULL;
		return -1;
	}
	/* one file per salt: read once here, written once by save */
	json_t *doc = json_load_file(c->file, 0, NULL);
	json_t *e = json_object_get(doc, "entries");
	if (json_is_object(e) && json_integer_value(json_object_get(doc, "format")) == 1)
		c->entries = json_incref(e);
	json_decref(doc);
	return 0;
}

void pl_scan_cache_release(struct pl_scan_cache *c)
{
	if (!c->fresh && !c->dir)
		return;
	free(c->dir);
	free(c->file);
	json_decref(c->entries);
	json_decref(c->fresh);
	pthread_mutex_destroy(&c->mu);
	memset(c, 0, sizeof *c);
}

void pl_scan_cache_key(const struct pl_scan_cache *c, const struct pl_scan_file *f, char key[33])
{
	/* two 64-bit FNV-1a over everything, from different starts */
	uint64_t a = pl_scan_cache_salt(c->salt, f->path);
	uint64_t b = pl_scan_cache_salt(c->salt ^ 0x9e3779b97f4a7c15ULL, f->path);
	a = pl_fnv1a_bytes(a, f->text, f->len);
	b = pl_fnv1a_bytes(b ^ (uint64_t)f->len, f->text, f->len);
	snprintf(key, 33, "%016llx%016llx", (unsigned long long)a, (unsigned long long)b);
}

/* f's result from one entry: 1, or 0 where it is not one */
static int from_entry(json_t *doc, struct pl_scan_file *f, const char *where)
{
	json_t *p = json_object_get(doc, "path"), *len = json_object_get(doc, "len");
	json_t *lines = json_object_get(doc, "lines"), *errs = json_object_get(doc, "errors");
	json_t *warn = json_object_get(doc, "warnings"), *fs = json_object_get(doc, "findings");
	json_t *calls = json_object_get(doc, "step_calls"), *needs = json_object_get(doc, "needs_caller");
	/* the key says it all; these guard against a damaged or foreign entry */
	if (!json_is_string(p) || strcmp(json_string_value(p), f->path) || !json_is_integer(len) ||
	    json_integer_value(len) != (json_int_t)f->len || !json_is_integer(lines) ||
	    !json_is_integer(errs) || !json_is_array(fs) ||
	    (warn && !json_is_null(warn) && !json_is_string(warn)) ||
	    (calls && !json_is_string(calls)) ||
	    (needs && (!json_is_array(needs) || json_array_size(needs) != json_array_size(fs))))
		return 0;
	struct pl_findings got = {0};
	if (json_array_size(fs) && !(got.v = calloc(json_array_size(fs), sizeof *got.v)))
		return 0;
	size_t i;
	json_t *o;
	json_array_foreach(fs, i, o)
	{
		struct pl_error err;
		if (pl_finding_from_json(o, where, &got.v[got.n], &err) != 0) {
			pl_findings_release(&got);
			return 0;
		}
		got.n++;
		json_t *nc = json_array_get(needs, i);
		if (json_is_string(nc) &&
		    !(got.v[got.n - 1].needs_caller = strdup(json_string_value(nc)))) {
			pl_findings_release(&got);
			return 0;
		}
	}
	char *w = json_is_string(warn) ? strdup(json_string_value(warn)) : NULL;
	char *sc = json_is_string(calls) ? strdup(json_string_value(calls)) : NULL;
	if ((json_is_string(warn) && !w) || (json_is_string(calls) && !sc)) {
		free(w);
		free(sc);
		pl_findings_release(&got);
		return 0;
	}
	f->step_calls = sc;
	f->step_device = json_is_true(json_object_get(doc, "step_device"));
	f->lines = (size_t)json_integer_value(lines);
	f->error_nodes = (size_t)json_integer_value(errs);
	f->warnings = w;
	f->findings = got;
	f->findings_cap = got.n;
	return 1;
}

int pl_scan_cache_get(struct pl_scan_cache *c, const char *key, struct pl_scan_file *f)
{
	if (!c->dir)
		return 0;
	/* entries is only read once loaded; fresh grows under the lock */
	json_t *e = json_object_get(c->entries, key);
	if (e)
		return from_entry(e, f, c->file);
	pthread_mutex_lock(&c->mu);
	e = json_incref(json_object_get(c->fresh, key));
	pthread_mutex_unlock(&c->mu);
	int ok = e && from_entry(e, f, c->file);
	json_decref(e);
	return ok;
}

void pl_scan_cache_put(struct pl_scan_cache *c, const char *key, const struct pl_scan_file *f)
{
	/* a file with thousands of findings (generated code) is not kept:
	 * its entry would cost more to write and read than to rescan (150,000
	 * findings: a 75 MB cache file, and minutes under ASan) */
	if (!c->dir || f->findings.n > PL_SCAN_CACHE_MAX_FINDINGS)
		return;
	json_t *fs = json_array(), *needs = NULL;
	for (size_t i = 0; fs && i < f->findings.n; i++) {
		json_array_append_new(fs, pl_finding_to_json(&f->findings.v[i]));
		if (f->findings.v[i].needs_caller && !needs) {
			needs = json_array();
			for (size_t k = 0; needs && k < i; k++)
				json_array_append_new(needs, json_null());
		}
		if (needs)
			json_array_append_new(needs, f->findings.v[i].needs_caller
							 ? json_string(f->findings.v[i].needs_caller)
							 : json_null());
	}
	json_t *doc = json_pack("{s:s, s:I, s:I, s:I, s:s?, s:o?}", "path", f->path, "len",
				(json_int_t)f->len, "lines", (json_int_t)f->lines, "errors",
				(json_int_t)f->error_nodes, "warnings", f->warnings, "findings", fs);
	if (!doc) {
		json_decref(needs);
		return;
	}
	/* what the join across files needs (scanrun.c) */
	if (f->step_calls)
		json_object_set_new(doc, "step_calls", json_string(f->step_calls));
	if (f->step_device)
		json_object_set_new(doc, "step_device", json_true());
	if (needs)
		json_object_set_new(doc, "needs_caller", needs);
	pthread_mutex_lock(&c->mu);
	json_object_set_new(c->fresh, key, doc);
	pthread_mutex_unlock(&c->mu);
}

int pl_scan_cache_save(struct pl_scan_cache *c)
{
	if (!c->dir || !json_object_size(c->fresh))
		return 0;
	/* what was there, less the entries the new ones supersede (the same
	 * path, other content), plus the new ones; written whole to a
	 * temporary file and renamed: a reader sees the old file or the new.
	 * Two scans at once: the last to finish wins, each file whole. */
	json_t *all = json_object(), *paths = json_object();
	const char *k;
	json_t *v;
	json_object_foreach(c->fresh, k, v)
	{
		json_t *p = json_object_get(v, "path");
		if (json_is_string(p))
			json_object_set_new(paths, json_string_value(p), json_true());
	}
	json_object_foreach(c->entries, k, v)
	{
		json_t *p = json_object_get(v, "path");
		if (json_is_string(p) && !json_object_get(paths, json_string_value(p)))
			json_object_set(all, k, v);
	}
	json_object_update(all, c->fresh);
	json_decref(paths);
	json_t *doc = json_pack("{s:i, s:o}", "format", 1, "entries", all);
	char *text = doc ? json_dumps(doc, JSON_COMPACT) : NULL;
	json_decref(doc);
	int rc = -1;
	char tmp[PATH_MAX + 16];
	snprintf(tmp, sizeof tmp, "%s.XXXXXX", c->file);
	int fd = text ? mkstemp(tmp) : -1;
	if (fd >= 0) {
		/* not synced: a cache need not survive a crash, and a damaged
		 * file is read as empty */
		int ok = pl_fsio_write_all(fd, text, strlen(text)) == 0;
		ok = close(fd) == 0 && ok;
		if (ok && rename(tmp, c->file) == 0)
			rc = 0;
		else
			unlink(tmp);
	}
	free(text);
	return rc;
}
