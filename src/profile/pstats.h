/*
 * cProfile's and profile's saved statistics (pstats, `python -m cProfile
 * -o out.prof`) read as stacks: see pstats.c for how the stacks are
 * rebuilt from the call graph's edges.
 */
#ifndef PL_PSTATS_H
#define PL_PSTATS_H

#include <stddef.h>

#include "error.h"
#include "profdata.h"

/* Whether the bytes begin as a pstats file does: a marshalled dict whose
 * first key is a tuple. */
int pl_pstats_sniff(const unsigned char *t, size_t len);

/* The stacks of a pstats file's len bytes into p, weighted in
 * microseconds; PL_EINPUT naming path and the byte or entry where it is
 * not one. */
int pl_pstats_read(const unsigned char *buf, size_t len, const char *path, struct pl_prof *p,
		   struct pl_error *err);

#endif
