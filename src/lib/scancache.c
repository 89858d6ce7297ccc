/*
 * scan's result cache: see scancache.h. An entry is a small JSON object:
 * {"path", "len", "lines", "errors", "warnings", "findings": [...]}, the
 * findings in the findings-1 format, under its key's name.
 */
#include "scancache.h"

#include <errno.h>
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
	c->salt = pl_scan_cache_self(salt);
	char *top = work_top();
	if (!top)
		return -1;
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
			snprintf(ign, sizeof ign, "%s/.gitignore", path);
			struct pl_error err;
			if (stat(ign, &st) != 0 && pl_fsio_write_atomic(ign, "*\n", 2, &err) != 0)
				return -1;
		}
	}
	c->dir = strdup(path);
	return c->dir ? 0 : -1;
}

void pl_scan_cache_release(struct pl_scan_cache *c)
{
	free(c->dir);
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

static void entry_path(const struct pl_scan_cache *c, const char *key, char *out, size_t len)
{
	snprintf(out, len, "%s/%.2s/%s.json", c->dir, key, key + 2);
}

int pl_scan_cache_get(const struct pl_scan_cache *c, const char *key, struct pl_scan_file *f)
{
	if (!c->dir)
		return 0;
	char path[PATH_MAX];
	entry_path(c, key, path, sizeof path);
	json_t *doc = json_load_file(path, 0, NULL);
	if (!doc)
		return 0;
	int ok = 0;
	json_t *p = json_object_get(doc, "path"), *len = json_object_get(doc, "len");
	json_t *lines = json_object_get(doc, "lines"), *errs = json_object_get(doc, "errors");
	json_t *warn = json_object_get(doc, "warnings"), *fs = json_object_get(doc, "findings");
	/* the key says it all; these guard against a damaged or foreign file */
	if (!json_is_string(p) || strcmp(json_string_value(p), f->path) || !json_is_integer(len) ||
	    json_integer_value(len) != (json_int_t)f->len || !json_is_integer(lines) ||
	    !json_is_integer(errs) || !json_is_array(fs) || (warn && !json_is_null(warn) && !json_is_string(warn)))
		goto out;
	struct pl_findings got = {0};
	if (json_array_size(fs)) {
		got.v = calloc(json_array_size(fs), sizeof *got.v);
		if (!got.v)
			goto out;
	}
	size_t i;
	json_t *o;
	json_array_foreach(fs, i, o)
	{
		struct pl_error err;
		if (pl_finding_from_json(o, path, &got.v[got.n], &err) != 0) {
			pl_findings_release(&got);
			goto out;
		}
		got.n++;
	}
	char *w = json_is_string(warn) ? strdup(json_string_value(warn)) : NULL;
	if (json_is_string(warn) && !w) {
		pl_findings_release(&got);
		goto out;
	}
	f->lines = (size_t)json_integer_value(lines);
	f->error_nodes = (size_t)json_integer_value(errs);
	f->warnings = w;
	f->findings = got;
	f->findings_cap = got.n;
	ok = 1;
out:
	json_decref(doc);
	return ok;
}

void pl_scan_cache_put(const struct pl_scan_cache *c, const char *key,
		       const struct pl_scan_file *f)
{
	if (!c->dir)
		return;
	json_t *fs = json_array();
	for (size_t i = 0; fs && i < f->findings.n; i++)
		json_array_append_new(fs, pl_finding_to_json(&f->findings.v[i]));
	json_t *doc = json_pack("{s:s, s:I, s:I, s:I, s:s?, s:o?}", "path", f->path, "len",
				(json_int_t)f->len, "lines", (json_int_t)f->lines, "errors",
				(json_int_t)f->error_nodes, "warnings", f->warnings, "findings", fs);
	char *text = doc ? json_dumps(doc, JSON_COMPACT) : NULL;
	json_decref(doc);
	if (!text)
		return;
	char path[PATH_MAX];
	snprintf(path, sizeof path, "%s/%.2s", c->dir, key);
	if (mkdir(path, 0755) == 0 || errno == EEXIST) {
		/* a temporary file renamed into place, not synced: a cache
		 * need not survive a crash, and a damaged entry is a miss */
		char tmp[PATH_MAX + 16];
		entry_path(c, key, path, sizeof path);
		snprintf(tmp, sizeof tmp, "%s.XXXXXX", path);
		int fd = mkstemp(tmp);
		if (fd >= 0) {
			int ok = pl_fsio_write_all(fd, text, strlen(text)) == 0;
			ok = close(fd) == 0 && ok;
			if (!ok || rename(tmp, path) != 0)
				unlink(tmp);
		}
	}
	free(text);
}
