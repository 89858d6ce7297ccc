/*
 * src/util/: what every other folder uses and that uses nothing of perfloop's:
 * errors and exit codes, growable strings and arrays, hashing, the
 * monotonic clock, shell-like words, atomic file writes and confined
 * paths, YAML with lines, statistics, units and colour.
 *
 * May include: nothing but the C library, jansson and libyaml; never a folder above it (scripts/check-layers
 * fails on that). This header is the folder's door: a command or another
 * folder may include it to use all of the folder; modules inside include
 * each other's headers directly.
 */
#ifndef PL_UTIL_DOOR_H
#define PL_UTIL_DOOR_H

#include "error.h"
#include "fsio.h"
#include "grow.h"
#include "hash.h"
#include "monotime.h"
#include "regexcap.h"
#include "render.h"
#include "stats.h"
#include "strbuf.h"
#include "words.h"
#include "yamlread.h"

#endif
