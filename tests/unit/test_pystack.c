/*
 * The CPython 3.11 location-table decoder against CPython's own answers:
 * tests/data/py311_linetable.json holds real co_linetable bytes and the line
 * co_lines() gives for every instruction (make_py311_lines.py); where
 * CPython gives none (None), the line of the nearest instruction before it
 * that has one, as dis shows it.
 */
#include "testutil.h"

#include <string.h>

#include "pystack.h"

static uint8_t *unhex(const char *s, size_t *n)
{
	*n = strlen(s) / 2;
	uint8_t *b = malloc(*n ? *n : 1);
	for (size_t i = 0; i < *n; i++) {
		unsigned v;
		sscanf(s + 2 * i, "%2x", &v);
		b[i] = (uint8_t)v;
	}
	return b;
}

static void every_instruction_has_cpythons_line(void **state)
{
	(void)state;
	json_t *root = pl_test_load_json("py311_linetable.json");
	json_t *codes = json_object_get(root, "codes");
	size_t checked = 0, i;
	long nolocation = 0;
	json_t *c;
	assert_true(json_array_size(codes) > 30);
	json_array_foreach(codes, i, c)
	{
		size_t n;
		uint8_t *t = unhex(json_string_value(json_object_get(c, "table")), &n);
		int first = (int)json_integer_value(json_object_get(c, "firstline"));
		size_t k;
		json_t *r;
		int before = first; /* the line of the nearest instruction before with one */
		json_array_foreach(json_object_get(c, "lines"), k, r)
		{
			long s = (long)json_integer_value(json_array_get(r, 0));
			long e = (long)json_integer_value(json_array_get(r, 1));
			int line = (int)json_integer_value(json_array_get(r, 2));
			if (line < 0)
				nolocation += e - s;
			for (long instr = s; instr < e; instr++) {
				int got = pl_py311_line(t, n, first, instr);
				int want = line >= 0 ? line : before;
				if (got != want)
					fail_msg("%s: instruction %ld: line %d, CPython says %d",
						 json_string_value(json_object_get(c, "name")),
						 instr, got, want);
				checked++;
			}
			if (line >= 0)
				before = line;
		}
		free(t);
	}
	assert_true(checked > 1000);
	assert_true(nolocation > 0); /* the data has instructions CPython gives no line */
	json_decref(root);
}

static void before_the_first_instruction_is_the_def_line(void **state)
{
	(void)state;
	const uint8_t t[] = {0x80, 0x00}; /* one short-form entry */
	assert_int_equal(pl_py311_line(t, sizeof t, 7, -1), 7);
	assert_int_equal(pl_py311_line(t, sizeof t, 7, 0), 7);
}

static void a_malformed_table_gives_the_def_line(void **state)
{
	(void)state;
	const uint8_t bad[] = {0x00, 0x01, 0x02};	  /* no entry start bit */
	const uint8_t cut[] = {0xf0 | 0x80, 0x7f | 0x40}; /* long form, varint cut short */
	assert_int_equal(pl_py311_line(bad, sizeof bad, 5, 1), 5);
	assert_int_equal(pl_py311_line(cut, sizeof cut, 5, 0), 5);
	assert_int_equal(pl_py311_line(NULL, 0, 9, 3), 9);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(every_instruction_has_cpythons_line),
	    cmocka_unit_test(before_the_first_instruction_is_the_def_line),
	    cmocka_unit_test(a_malformed_table_gives_the_def_line),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
