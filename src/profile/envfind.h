/*
 * Findings about the environment a profile can prove from its native
 * frames (`perfloop profile --mode native|mixed`): a library the job
 * spends its time in that the machine could replace. So far the reference
 * BLAS (`env.reference-blas`).
 */
#ifndef PL_ENVFIND_H
#define PL_ENVFIND_H

#include "findings.h"
#include "profdata.h"

/* The share of samples in the reference BLAS that makes the finding. */
#define PL_ENV_BLAS_MIN_SHARE 0.05

/* Add what the profile proves to out: the number of findings added (0,
 * 1), or -1 out of memory. */
int pl_prof_env_findings(const struct pl_prof *p, struct pl_findings *out);

#endif
