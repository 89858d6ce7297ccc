/*
 * src/profile/syscalls/: system calls (--syscalls): raw_syscalls tracepoints per task, each
 * call matched with its exit, the slowest calls' stacks.
 *
 * May include: util/, os/, profile/, profile/python/, profile/native/; never a folder above it (scripts/check-layers
 * fails on that). This header is the folder's door: a command or another
 * folder may include it to use all of the folder; modules inside include
 * each other's headers directly.
 */
#ifndef PL_PROFILE_SYSCALLS_DOOR_H
#define PL_PROFILE_SYSCALLS_DOOR_H

#include "syscalls.h"

#endif
