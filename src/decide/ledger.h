/*
 * The ledger: one JSON line per verdict, appended to a file the user
 * commits (conventionally docs/perf/baseline_ledger.jsonl). An append is
 * atomic: under an exclusive lock (on its directory) the old content plus the new line is
 * written to FILE.tmp, synced and renamed over FILE, so a process killed at
 * any instant leaves either the old ledger or the new one, never a partial
 * line, and two writers never interleave.
 */
#ifndef PL_LEDGER_H
#define PL_LEDGER_H

#include <jansson.h>

#include "error.h"

int pl_ledger_append(const char *path, json_t *entry, struct pl_error *err);

#endif
