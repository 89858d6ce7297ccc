/*
 * Presenting a finished benchmark run: the terminal table (hyperfine's
 * layout plus perfloop's intervals, counters and verdicts) and the exports
 * (Markdown, CSV, hyperfine's JSON layout so its plot scripts keep working).
 */
#ifndef PL_BENCHVIEW_H
#define PL_BENCHVIEW_H

#include <jansson.h>
#include <stdio.h>

#include "benchrun.h"
#include "render.h"

/* One line: the CPU the runs were pinned to and what the wait for a quiet
 * CPU found (nothing when neither applies). */
void pl_benchview_machine(FILE *f, const struct pl_style *st, const struct pl_bench_run *run);
void pl_benchview_table(FILE *f, const struct pl_style *st, const struct pl_bench_run *run);
void pl_benchview_comparisons(FILE *f, const struct pl_style *st, const struct pl_bench_run *run);
/* Lines comparing with a saved baseline (the array built by the command). */
void pl_benchview_baseline(FILE *f, const struct pl_style *st, json_t *baseline);

/* Exports: malloc'd text. */
char *pl_benchview_markdown(const struct pl_bench_run *run);
char *pl_benchview_csv(const struct pl_bench_run *run);
char *pl_benchview_hyperfine(const struct pl_bench_run *run);

#endif
