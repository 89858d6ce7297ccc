/*
 * scan's result cache (as ruff's and mypy's): one file's findings, kept in
 * .perfloop/cache/scan/ under the work tree's top, keyed by everything the
 * result depends on: the file's path and content, the rules, the scan's
 * options and perfloop itself (its version and the binary's build id, so
 * a rebuilt perfloop never reads an older one's results). The entries of
 * one salt live in one file, read at the start and written once at the
 * end (one file, not one per source file: a cold scan of 1,400 files
 * spent a second of system time creating and renaming entries), to a
 * temporary file renamed into place: two scans at once each read a whole
 * file, and the last to finish writes it. A damaged file reads as empty.
 */
#ifndef PL_SCANCACHE_H
#define PL_SCANCACHE_H

#include <stddef.h>
#include <stdint.h>

struct pl_scan_file;

#include <jansson.h>
#include <pthread.h>

struct pl_scan_cache {
	char *dir;     /* .../.perfloop/cache/scan; NULL: no cache */
	uint64_t salt; /* perfloop, the rules and the options */
	char *file;    /* dir/SALT.json: every entry of this salt, one file */
	json_t *entries; /* as read: key -> entry (read-only once loaded) */
	json_t *fresh;	 /* written by this scan, under mu */
	pthread_mutex_t mu;
};

/* What a cache key depends on besides the file: the rules' source text
 * and the options, as one hash (pl_scan_cache_salt), and perfloop's
 * identity (version, build id; pl_scan_cache_init adds them). */
uint64_t pl_scan_cache_salt(uint64_t h, const char *part);

/* The cache for a scan started in cwd: under the git work tree's top
 * (the nearest directory above with .git), or cwd. 0, or -1 where it
 * cannot be made (the scan runs without it). */
int pl_scan_cache_init(struct pl_scan_cache *c, uint64_t salt);
void pl_scan_cache_release(struct pl_scan_cache *c);

/* The entry's name for f (path, text and len set): 32 hex digits. */
void pl_scan_cache_key(const struct pl_scan_cache *c, const struct pl_scan_file *f, char key[33]);

/* 1 and f's lines, error_nodes, warnings and findings filled from the
 * entry; 0 no usable entry. */
int pl_scan_cache_get(struct pl_scan_cache *c, const char *key, struct pl_scan_file *f);

/* Keep f's result for save (thread-safe); not one with more findings than
 * this (generated code): rescanning it is cheaper than its entry. */
#define PL_SCAN_CACHE_MAX_FINDINGS 2000
void pl_scan_cache_put(struct pl_scan_cache *c, const char *key, const struct pl_scan_file *f);

/* Write what put kept, with the older entries it does not supersede
 * (nothing new: nothing written). 0, or -1 (the cache is left as it was). */
int pl_scan_cache_save(struct pl_scan_cache *c);

/* perfloop's identity for the salt: its version and, where the binary has
 * one, its GNU build id. */
uint64_t pl_scan_cache_self(uint64_t h);

#endif
