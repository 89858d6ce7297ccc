/*
 * src/measure/: the bench engine and what it writes: runs and their statistics, the
 * deterministic measure (simulated counts), the program's own metric,
 * summaries and their dimensions, sweeps, specs.
 *
 * May include: util/, os/, profile/ and its sampling folders; never a folder above it (scripts/check-layers
 * fails on that). This header is the folder's door: a command or another
 * folder may include it to use all of the folder; modules inside include
 * each other's headers directly.
 */
#ifndef PL_MEASURE_DOOR_H
#define PL_MEASURE_DOOR_H

#include "benchrun.h"
#include "benchview.h"
#include "complexity.h"
#include "fingerprint.h"
#include "metric.h"
#include "params.h"
#include "simcount.h"
#include "spec.h"
#include "speedprobe.h"
#include "summary.h"
#include "sweep.h"
#include "tiers.h"

#endif
