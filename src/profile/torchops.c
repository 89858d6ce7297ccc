/*
 * PyTorch operators in a native or mixed profile (see torchops.h). One
 * pass to name each frame's operator, one over the stacks, innermost
 * operator frame first.
 */
#include "torchops.h"

#include <stdlib.h>
#include <string.h>

int pl_torch_op_name(const char *frame, char *op, size_t len)
{
	static const char prefix[] = "at::_ops::";
	const char *p = frame ? strstr(frame, prefix) : NULL;
	if (!p || (p != frame && p[-1] != ' ' && p[-1] != '(')) /* a return type before it */
		return 0;
	p += sizeof prefix - 1;
	const char *end = strstr(p, "::");
	if (!end || end == p || (size_t)(end - p) >= len)
		return 0;
	memcpy(op, p, (size_t)(end - p));
	op[end - p] = '\0';
	return 1;
}

static int cmp_op(const void *a, const void *b)
{
	const struct pl_torch_op *x = a, *y = b;
	if (x->samples != y->samples)
		return x->samples > y->samples ? -1 : 1;
	return strcmp(x->name, y->name);
}

int pl_torch_ops(const struct pl_prof *p, struct pl_torch_op **out, size_t *n)
{
	*out = NULL;
	*n = 0;
	/* per frame: its operator's index + 1, 0 none */
	uint32_t *op_of = calloc(p->nframes ? p->nframes : 1, sizeof *op_of);
	struct pl_torch_op *ops = NULL;
	size_t nops = 0, cap = 0;
	if (!op_of)
		return -1;
	for (size_t i = 0; i < p->nframes; i++) {
		char name[96];
		if (p->frames[i].synthetic || !pl_torch_op_name(p->frames[i].name, name, sizeof name))
			continue;
		size_t k = 0;
		while (k < nops && strcmp(ops[k].name, name))
			k++;
		if (k == nops) {
			if (nops == cap) {
				size_t nc = cap ? cap * 2 : 16;
				struct pl_torch_op *v = realloc(ops, nc * sizeof *v);
				if (!v) {
					free(ops);
					free(op_of);
					return -1;
				}
				ops = v;
				cap = nc;
			}
			memset(&ops[nops], 0, sizeof ops[nops]);
			memcpy(ops[nops].name, name, sizeof name);
			nops++;
		}
		op_of[i] = (uint32_t)k + 1;
	}
	for (size_t s = 0; nops && s < p->nstacks; s++) {
		const struct pl_prof_stack *st = &p->stacks[s];
		for (size_t d = st->depth; d-- > 0;) { /* root first: from the leaf */
			uint32_t k = op_of[p->ids[st->off + d]];
			if (k) {
				ops[k - 1].samples += st->count;
				break;
			}
		}
	}
	free(op_of);
	if (nops)
		qsort(ops, nops, sizeof *ops, cmp_op);
	*out = ops;
	*n = nops;
	return 0;
}
