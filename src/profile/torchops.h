/*
 * PyTorch operators in a native or mixed profile: libtorch's frames
 * grouped by the operator they dispatch (`at::_ops::mm::call`,
 * `at::_ops::addmm::redispatch`, ... are `mm`, `addmm`). Each sample is
 * charged to the innermost operator on its stack (the most specific: mm
 * under matmul under linear), so the rows add up to the samples spent in
 * operators, beside the C functions that did the work (sgemm_, a
 * vectorised kernel) that the hot-function table shows. torch.profiler's
 * operator view, from outside the process.
 */
#ifndef PL_TORCHOPS_H
#define PL_TORCHOPS_H

#include <stddef.h>
#include <stdint.h>

#include "profdata.h"

struct pl_torch_op {
	char name[96];	 /* the operator, "mm" */
	uint64_t samples; /* samples whose innermost operator it is */
};

/* The operators of p, most samples first; *n 0 where p has none. 0, or
 * -1 out of memory. *out is malloc'd. */
int pl_torch_ops(const struct pl_prof *p, struct pl_torch_op **out, size_t *n);

/* The operator a frame's name dispatches ("mm" for at::_ops::mm::call),
 * in op[len]; 0 where it is not an operator's frame. */
int pl_torch_op_name(const char *frame, char *op, size_t len);

#endif
