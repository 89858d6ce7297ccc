/*
 * Growing an array by doubling: the one place that spells it out.
 *     if (pl_grow((void **)&v, &cap, n + 1, sizeof *v, 16) < 0) return -1;
 * makes room for at least `need` elements (first allocation: `first`),
 * keeping v unchanged when out of memory.
 */
#ifndef PL_GROW_H
#define PL_GROW_H

#include <stdlib.h>

static inline int pl_grow(void **v, size_t *cap, size_t need, size_t elem, size_t first)
{
	if (need <= *cap)
		return 0;
	size_t ncap = *cap ? *cap : first;
	while (ncap < need)
		ncap *= 2;
	void *n = realloc(*v, ncap * elem);
	if (!n)
		return -1;
	*v = n;
	*cap = ncap;
	return 0;
}

#endif
