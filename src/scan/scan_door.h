/*
 * src/scan/: static rules over source: rules as data, tree-sitter matching,
 * suppressions, the result cache, pyproject.toml settings.
 *
 * May include: util/, os/, profile/ (findings), measure/; never a folder above it (scripts/check-layers
 * fails on that). This header is the folder's door: a command or another
 * folder may include it to use all of the folder; modules inside include
 * each other's headers directly.
 */
#ifndef PL_SCAN_DOOR_H
#define PL_SCAN_DOOR_H

#include "pyproject.h"
#include "scan.h"
#include "scancache.h"
#include "scanmatch.h"
#include "scanweigh.h"
#include "suppress.h"

#endif
