/*
 * src/profile/native/: sampling native code: perf event rings per CPU, per-process maps,
 * DWARF unwinding and symbolization (--mode native and mixed).
 *
 * May include: util/, os/, profile/, profile/python/; never a folder above it (scripts/check-layers
 * fails on that). This header is the folder's door: a command or another
 * folder may include it to use all of the folder; modules inside include
 * each other's headers directly.
 */
#ifndef PL_PROFILE_NATIVE_DOOR_H
#define PL_PROFILE_NATIVE_DOOR_H

#include "native.h"

#endif
