/*
 * The complexity of a bench run's size sweeps: for each command swept over
 * one numeric parameter (bench -P n=...), the cost at each size (wall
 * median; CPU time, peak RSS and instructions where measured) fitted by
 * complexity.c, with the findings SPEC.md's stop gate asks for: an
 * exponent above the class the user expects (--expect) by more than 0.5,
 * or at least 1.8 with no expectation, is a high-severity algorithmic
 * (level 1) finding.
 */
#ifndef PL_SWEEP_H
#define PL_SWEEP_H

#include <jansson.h>
#include <stdio.h>

#include "benchrun.h"
#include "findings.h"
#include "render.h"

/* A parameter's value as a size: a number > 0, all of it. 0, or -1. */
int pl_sweep_size(const char *v, double *out);

/* The fits of run, whose benchmarks are ncmds commands (templates[i], as
 * given, with {NAME}) x combos values of its one parameter, in that order.
 * expect: an enum pl_cx_class, or -1. A JSON array (empty where nothing
 * was swept), NULL out of memory. */
json_t *pl_sweep_fits(const struct pl_bench_run *run, const char *const *templates,
		      size_t ncmds, size_t combos, int expect);

/* The terminal view: per swept command, n against the median and the fit. */
void pl_sweep_print(FILE *f, const struct pl_style *st, json_t *fits);

/* The wall-time fits drawn as an SVG (no script): cost against the size
 * on log-log axes, each command's medians as points and its fitted class
 * as a line, with a legend. Malloc'd text; NULL when no wall-time fit is
 * in fits or out of memory. */
char *pl_sweep_svg(json_t *fits);

/* The fits' findings (perfloop.findings/1 entries) into out. 0, or -1. */
int pl_sweep_findings(json_t *fits, struct pl_findings *out);

#endif
