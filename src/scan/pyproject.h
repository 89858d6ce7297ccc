/*
 * scan's settings from a project's pyproject.toml, as ruff reads its own:
 *
 *   [tool.perfloop.scan]
 *   select = ["PY", "C001"]      # ids or prefixes; replaces the default set
 *   ignore = ["PY031"]
 *   exclude = ["vendor", "build"]
 *   advisory = true              # also the advisory rules
 *
 *   [tool.perfloop.scan.per-file-ignores]
 *   "tests/test_*.py" = ["PY010"]
 *
 * Debian 12 has no C TOML library (only C++ and Perl ones), so this reads
 * the TOML that such a table is written in: comments, basic and literal
 * strings, booleans, and arrays of strings over several lines; anything
 * else inside these tables is an error naming file, line and key, and the
 * rest of the file is only scanned for table headers.
 */
#ifndef PL_PYPROJECT_H
#define PL_PYPROJECT_H

#include <stddef.h>

#include "error.h"

struct pl_strlist {
	char **v;
	size_t n;
};

struct pl_per_file {
	char *glob; /* relative to the directory of pyproject.toml */
	struct pl_strlist ids;
};

struct pl_scan_config {
	char *path; /* the pyproject.toml read; NULL: none */
	char *dir;  /* its directory, absolute */
	struct pl_strlist select, ignore, exclude;
	int has_select;
	int advisory; /* -1 not set */
	struct pl_per_file *per_file;
	size_t nper_file;
};

/* Read [tool.perfloop.scan] from the file at path. 1 read, 0 the file has
 * no such table, <0 an error (PL_EINPUT: file:line: what; PL_ENOMEM). */
int pl_pyproject_read(const char *path, struct pl_scan_config *out, struct pl_error *err);

/* The nearest pyproject.toml with a [tool.perfloop.scan] table, from dir
 * up to the project's root (the git work tree's top; outside git, the
 * nearest directory with a pyproject.toml), never above it; read as above.
 * 0 when there is none. */
int pl_pyproject_find(const char *dir, struct pl_scan_config *out, struct pl_error *err);

void pl_scan_config_release(struct pl_scan_config *c);

#endif
