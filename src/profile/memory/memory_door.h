/*
 * src/profile/memory/: allocations (--alloc): the preload's records read back and charged
 * to Python and native call sites (the preload itself is src/preload/).
 *
 * May include: util/, os/, profile/, profile/python/, profile/native/; never a folder above it (scripts/check-layers
 * fails on that). This header is the folder's door: a command or another
 * folder may include it to use all of the folder; modules inside include
 * each other's headers directly.
 */
#ifndef PL_PROFILE_MEMORY_DOOR_H
#define PL_PROFILE_MEMORY_DOOR_H

#include "allocprof.h"

#endif
