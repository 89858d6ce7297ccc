/*
 * src/profile/: what a profile is, whatever sampled it: interned frames and merged
 * stacks (profdata) and their folded/speedscope writers, findings
 * documents, training steps and loops, RSS over time, the GPU. The ways
 * to sample sit below it in python/, native/, memory/ and syscalls/.
 *
 * May include: util/, os/; never a folder above it (scripts/check-layers
 * fails on that). This header is the folder's door: a command or another
 * folder may include it to use all of the folder; modules inside include
 * each other's headers directly.
 */
#ifndef PL_PROFILE_DOOR_H
#define PL_PROFILE_DOOR_H

#include "envfind.h"
#include "findings.h"
#include "gpu.h"
#include "memtrack.h"
#include "profdata.h"
#include "steps.h"
#include "torchops.h"
#include "trainloop.h"

#endif
