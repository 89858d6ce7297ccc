/*
 * src/loop/: the loop in the user's repository: checkpoint and revert by bytes,
 * baseline and try, the history database.
 *
 * May include: util/ through report/; never a folder above it (scripts/check-layers
 * fails on that). This header is the folder's door: a command or another
 * folder may include it to use all of the folder; modules inside include
 * each other's headers directly.
 */
#ifndef PL_LOOP_DOOR_H
#define PL_LOOP_DOOR_H

#include "gitops.h"
#include "history.h"
#include "loop.h"

#endif
