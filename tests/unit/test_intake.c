/* Unit tests for src/report/intake.c: the template reads back with its
 * measurements and every estimate listed as empty; a filled one is
 * complete and described; each malformed field is one error naming the
 * file, the line and the key. */
#include <math.h>
#include <string.h>
#include <unistd.h>

#include "testutil.h"

#include "intake.h"

static char path[64];

static int load(const char *text, struct pl_intake *in, struct pl_error *err)
{
	snprintf(path, sizeof path, "/tmp/perfloop-intake-XXXXXX");
	int fd = mkstemp(path);
	assert_true(fd >= 0);
	assert_int_equal(write(fd, text, strlen(text)), (ssize_t)strlen(text));
	close(fd);
	int rc = pl_intake_load(path, in, err);
	unlink(path);
	return rc;
}

static void test_template_round_trip(void **state)
{
	(void)state;
	json_t *summary = json_pack(
	    "{s:s, s:[{s:s, s:{s:{s:f}}, s:{s:{s:f}, s:{s:f}}, s:{s:{s:f}}}]}", "schema",
	    "perfloop.bench/1", "benchmarks", "name", "parse", "dimensions", "timing", "value",
	    0.0214, "stats", "cpu_s", "p50", 0.02, "max_rss_bytes", "p50", 3145728.0, "counters",
	    "instructions", "value", 1.5e8);
	char *text = pl_intake_template("parse", summary, "before.json", NULL);
	json_decref(summary);
	assert_non_null(text);
	struct pl_intake in;
	struct pl_error err = {{0}};
	if (load(text, &in, &err) != PL_OK)
		fail_msg("%s\n%s", err.msg, text);
	free(text);
	assert_string_equal(in.name, "parse");
	assert_string_equal(in.benchmark, "parse");
	assert_string_equal(in.measured_from, "before.json");
	assert_true(fabs(in.measured[PL_IM_WALL] - 0.0214) < 1e-9);
	assert_true(fabs(in.measured[PL_IM_CPU] - 0.02) < 1e-9);
	assert_true(in.measured[PL_IM_RSS] == 3145728.0 && in.measured[PL_IM_INSN] == 1.5e8);
	for (int i = 0; i < PL_IN_NCOUNTS; i++)
		assert_true(isnan(in.counts[i]));
	assert_string_equal(in.missing, "kpi.metric, kpi.workload, frequency, dominant_cost, "
					"largest_plausible_improvement");
	assert_int_equal(in.missing_line, 9); /* kpi.metric's */
	pl_intake_release(&in);
	/* no summary: nothing measured */
	text = pl_intake_template("x", NULL, NULL, NULL);
	assert_int_equal(load(text, &in, &err), PL_OK);
	free(text);
	assert_null(in.measured_from);
	assert_true(isnan(in.measured[PL_IM_WALL]) && !in.benchmark);
	pl_intake_release(&in);
}

static void test_filled(void **state)
{
	(void)state;
	struct pl_intake in;
	struct pl_error err = {{0}};
	assert_int_equal(load("schema: perfloop.intake/1\n"
			      "name: train\n"
			      "benchmark: step\n"
			      "kpi: {metric: step time, workload: batch 32 x 2048 tokens}\n"
			      "frequency: per step\n"
			      "counts: {bytes_moved: 4e9, launches: 1200, synchronizations: ~}\n"
			      "dominant_cost: memory bandwidth\n"
			      "largest_plausible_improvement: 1.5x from fusing the optimizer\n",
			      &in, &err),
			 PL_OK);
	assert_string_equal(in.missing, "");
	assert_true(in.counts[PL_IN_BYTES] == 4e9 && in.counts[PL_IN_LAUNCHES] == 1200 &&
		    isnan(in.counts[PL_IN_SYNCS]));
	char line[1600];
	pl_intake_describe(&in, line, sizeof line);
	assert_string_equal(line, "intake 'train': KPI step time on batch 32 x 2048 tokens, per "
				  "step; ~4e9 bytes_moved, ~1200 launches; expected dominant "
				  "cost: memory bandwidth; largest plausible improvement: 1.5x from "
				  "fusing the optimizer (all estimates)");
	pl_intake_release(&in);
	/* a field left out entirely is missing too */
	assert_int_equal(load("schema: perfloop.intake/1\nname: t\nkpi: {metric: m, workload: w}\n"
			      "frequency: setup\ndominant_cost: I/O\n",
			      &in, &err),
			 PL_OK);
	assert_string_equal(in.missing, "largest_plausible_improvement");
	pl_intake_release(&in);
	/* no kpi at all: both of its fields are missing */
	assert_int_equal(load("schema: perfloop.intake/1\nname: t\nfrequency: setup\n"
			      "dominant_cost: I/O\nlargest_plausible_improvement: 2x\n",
			      &in, &err),
			 PL_OK);
	assert_string_equal(in.missing, "kpi.metric, kpi.workload");
	pl_intake_release(&in);
}

static void test_errors(void **state)
{
	(void)state;
	static const struct {
		const char *text, *line, *says;
	} cases[] = {
	    {"schema: perfloop.intake/1\nname: [x\n", ":3:", "not YAML"},
	    {"schema: perfloop.intake/2\nname: x\n", ":1:", "schema: expected perfloop.intake/1"},
	    {"name: x\n", ":1:", "schema: missing"},
	    {"schema: perfloop.intake/1\n", ":1:", "name: missing"},
	    {"schema: perfloop.intake/1\nname: x\nfrequncy: setup\n", ":3:",
	     "unknown key 'frequncy' (did you mean 'frequency'?)"},
	    {"schema: perfloop.intake/1\nname: x\nfrequency: hourly\n", ":3:",
	     "frequency: expected setup, per batch"},
	    {"schema: perfloop.intake/1\nname: x\ncounts: {bytes_moved: -1}\n", ":3:",
	     "counts.bytes_moved: expected a number >= 0, got '-1'"},
	    {"schema: perfloop.intake/1\nname: x\ncounts: {flops: 1}\n", ":3:",
	     "counts: unknown key 'flops'"},
	    {"schema: perfloop.intake/1\nname: x\nkpi: fast\n", ":3:", "kpi: expected a mapping"},
	    {"schema: perfloop.intake/1\nname: x\nmeasured: {wall_s: soon}\n", ":3:",
	     "measured.wall_s: expected a number"},
	    {"- a\n", ":1:", "the file: expected a mapping"},
	    {"schema: perfloop.intake/1\nname: x\nbenchmark: {a: 1}\n", ":3:",
	     "benchmark: expected a benchmark's name"},
	};
	for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
		struct pl_intake in;
		struct pl_error err = {{0}};
		int rc = load(cases[i].text, &in, &err);
		if (rc != PL_EINPUT || !strstr(err.msg, cases[i].says) ||
		    !strstr(err.msg, cases[i].line) || strncmp(err.msg, path, strlen(path)) != 0)
			fail_msg("case %zu: rc %d, '%s' (want %s and '%s')", i, rc, err.msg,
				 cases[i].line, cases[i].says);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_template_round_trip),
	    cmocka_unit_test(test_filled),
	    cmocka_unit_test(test_errors),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
