/*
 * Reading perfloop's YAML files (perfloop.yaml, docs/perf/intake-*.yaml)
 * with libyaml: the document with each node's line, and the checks every
 * reader makes, each saying the first thing wrong as one line,
 * FILE:LINE: KEY.PATH: what (PL_EINPUT).
 */
#ifndef PL_YAMLREAD_H
#define PL_YAMLREAD_H

#include <yaml.h>

#include "error.h"

struct pl_yaml {
	yaml_document_t doc;
	const char *path;
	struct pl_error *err;
	int loaded;
};

/* Read and parse path (a syntax error is PL_EINPUT with its line). */
int pl_yaml_load(const char *path, struct pl_yaml *y, struct pl_error *err);
void pl_yaml_release(struct pl_yaml *y);
/* Load path, hand its root node (NULL: an empty file) to read, release:
 * the status of the load, else read's. */
typedef int (*pl_yaml_root_fn)(struct pl_yaml *c, yaml_node_t *root, void *arg);
int pl_yaml_read(const char *path, pl_yaml_root_fn read, void *arg, struct pl_error *err);
yaml_node_t *pl_yaml_root(struct pl_yaml *y); /* NULL: an empty file */
yaml_node_t *pl_yaml_node(struct pl_yaml *y, int id);

/* 1-based; 0 for NULL */
int pl_yaml_line(const yaml_node_t *n);
/* PL_EINPUT with "PATH:LINE: WHERE: " and fmt (one %s: arg) */
int pl_yaml_bad(struct pl_yaml *c, const yaml_node_t *n, const char *where, const char *fmt,
		const char *arg);
/* a scalar's text, or NULL */
const char *pl_yaml_scalar(const yaml_node_t *n);
/* a plain null (~, null, or nothing) */
int pl_yaml_is_null(const yaml_node_t *v);
/* A mapping's keys: plain words, each once, each in known (NULL-terminated;
 * NULL: any), with "did you mean" for a near miss. */
int pl_yaml_keys(struct pl_yaml *c, yaml_node_t *map, const char *where, const char *const *known);
/* Each entry of a mapping whose keys pl_yaml_keys accepts (known as
 * there), with its path "WHERE.KEY" for messages; what names what the
 * mapping should hold, for the error where it is not one. Stops at the
 * first status fn returns other than PL_OK, and returns it. */
typedef int (*pl_yaml_entry_fn)(struct pl_yaml *c, const char *key, yaml_node_t *v, const char *at,
				void *arg);
int pl_yaml_each(struct pl_yaml *c, yaml_node_t *map, const char *where, const char *what,
		 const char *const *known, pl_yaml_entry_fn fn, void *arg);

/* typed values: a non-empty string (malloc'd into *out, replacing it), an
 * integer in [lo, hi], a share (0.05 or 5%), true/false, a number >= lo */
int pl_yaml_string(struct pl_yaml *c, yaml_node_t *v, const char *where, char **out);
int pl_yaml_int(struct pl_yaml *c, yaml_node_t *v, const char *where, long lo, long hi, int *out);
int pl_yaml_share(struct pl_yaml *c, yaml_node_t *v, const char *where, double *out);
int pl_yaml_bool(struct pl_yaml *c, yaml_node_t *v, const char *where, int *out);
int pl_yaml_number(struct pl_yaml *c, yaml_node_t *v, const char *where, double lo, double *out);

#endif
