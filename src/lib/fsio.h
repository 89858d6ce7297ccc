/*
 * Files written so that a reader never sees half of one: write to a
 * temporary name in the same directory, fsync, rename over the target.
 */
#ifndef PL_FSIO_H
#define PL_FSIO_H

#include <stddef.h>

#include "error.h"

int pl_fsio_write_atomic(const char *path, const void *data, size_t len, struct pl_error *err);

#endif
