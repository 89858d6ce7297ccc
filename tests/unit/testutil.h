/* Helpers shared by the cmocka unit tests. cmocka's headers need these
 * includes first, in this order. */
#ifndef PL_TESTUTIL_H
#define PL_TESTUTIL_H

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include <cmocka.h>
#include <jansson.h>

/* Load a JSON file from tests/data (PERFLOOP_TEST_DATA, set by CTest). */
static inline json_t *pl_test_load_json(const char *name)
{
	const char *dir = getenv("PERFLOOP_TEST_DATA");
	char path[4096];
	snprintf(path, sizeof(path), "%s/%s", dir ? dir : "tests/data", name);
	json_error_t jerr;
	json_t *root = json_load_file(path, 0, &jerr);
	if (!root)
		fail_msg("cannot load '%s': %s", path, jerr.text);
	return root;
}

/* Copy a JSON array of numbers into a malloc'd double array. */
static inline double *pl_test_doubles(json_t *arr, size_t *n)
{
	*n = json_array_size(arr);
	double *x = malloc((*n ? *n : 1) * sizeof(*x));
	for (size_t i = 0; i < *n; i++)
		x[i] = json_number_value(json_array_get(arr, i));
	return x;
}

#define assert_close(a, b, rel)                                                                    \
	do {                                                                                       \
		double _a = (a), _b = (b);                                                         \
		double _tol = (rel) * (fabs(_b) > 1e-300 ? fabs(_b) : 1.0);                        \
		if (!(fabs(_a - _b) <= _tol))                                                      \
			fail_msg("%s = %.17g, expected %.17g (tolerance %.3g)", #a, _a, _b, _tol); \
	} while (0)

#endif
