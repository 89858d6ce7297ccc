/*
 * src/profile/python/: sampling CPython from outside: finding the interpreter in another
 * process, its layout per version, one stack of every thread per tick.
 *
 * May include: util/, os/, profile/; never a folder above it (scripts/check-layers
 * fails on that). This header is the folder's door: a command or another
 * folder may include it to use all of the folder; modules inside include
 * each other's headers directly.
 */
#ifndef PL_PROFILE_PYTHON_DOOR_H
#define PL_PROFILE_PYTHON_DOOR_H

#include "py311.h"
#include "py312.h"
#include "pydebug.h"
#include "pylayout.h"
#include "pyobj.h"
#include "pyproc.h"
#include "pystack.h"

#endif
