/*
 * Private to the scanner (scan.c, scanrun.c): the per-file scan that the
 * file driver runs on each of its threads.
 */
#ifndef PL_SCAN_INT_H
#define PL_SCAN_INT_H

#include <tree_sitter/api.h>

#include "scan.h"

/* One file's findings with this thread's parser and query cursor. */
int pl_scan_with(TSParser *parser, TSQueryCursor *qc, const struct pl_rules *rules,
		 const struct pl_scan_opts *o, struct pl_scan_file *f);

#endif
