/*
 * Parameter sweeps for `bench -P`: NAME=V1,V2,...  NAME=LO..HI[:STEP]
 * NAME=LO..HI*FACTOR. Several parameters give every combination, the first
 * one varying slowest.
 */
#ifndef PL_PARAMS_H
#define PL_PARAMS_H

#include <stddef.h>

#include "error.h"
#include "words.h"

struct pl_param {
	char *name;
	struct pl_argv values;
};

/* Parse one -P argument. */
int pl_param_parse(const char *spec, struct pl_param *out, struct pl_error *err);
void pl_param_release(struct pl_param *p);

/* The most benchmarks one bench or one perfloop.yaml benchmark may make
 * (commands x combinations): past it a sweep would run for days and its
 * list alone fill the memory. */
#define PL_PARAMS_MAX_BENCHES 10000

/* Number of combinations of k parameters (1 when k == 0; SIZE_MAX where
 * the product does not fit). */
size_t pl_params_combinations(const struct pl_param *p, size_t k);
/* For combination index i, the value index of each parameter in idx[k]. */
void pl_params_combination(const struct pl_param *p, size_t k, size_t i, size_t *idx);

#endif
