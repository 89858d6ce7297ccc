/*
 * src/os/: Linux as perfloop uses it: starting a measured process (clone, counters
 * opened between clone and exec, timeouts), perf event counters, tracefs,
 * a program launched stopped for a profiler, the machine's CPUs and
 * settings, running git, the rank under a launcher.
 *
 * May include: util/; never a folder above it (scripts/check-layers
 * fails on that). This header is the folder's door: a command or another
 * folder may include it to use all of the folder; modules inside include
 * each other's headers directly.
 */
#ifndef PL_OS_DOOR_H
#define PL_OS_DOOR_H

#include "counters.h"
#include "gitrun.h"
#include "launch.h"
#include "machine.h"
#include "ranks.h"
#include "spawn.h"
#include "tracefs.h"

#endif
