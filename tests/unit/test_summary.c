/* Unit tests for src/measure/summary.c and the statistics of a run (benchstats.c):
 * a run built by hand, written, read back, and damaged in several ways. */
#include <math.h>
#include <string.h>
#include <unistd.h>

#include "testutil.h"

#include "benchrun.h"
#include "summary.h"

static void make_run(struct pl_bench_run *run, double noise)
{
	memset(run, 0, sizeof(*run));
	pl_bench_config_defaults(&run->cfg);
	run->cfg.resamples = 500;
	pl_counters_parse(&run->cfg.counters, "task-clock,instructions", NULL);
	run->cfg.counters.supported[1] = 0; /* as on a VM without a PMU */
	run->cfg.counters.err[1] = 2;
	snprintf(run->started, sizeof(run->started), "2026-12-02T00:00:00Z");
	pl_fingerprint_read(&run->fp);
	const char *cmds[] = {"a 1", "b 2"};
	for (int k = 0; k < 2; k++) {
		assert_int_equal(pl_bench_add(run, NULL, cmds[k], 0, NULL, NULL, NULL), 0);
		struct pl_bench *b = &run->bench[k];
		b->cap = 20;
		b->samples = calloc(b->cap, sizeof(*b->samples));
		for (int i = 0; i < 20; i++) {
			struct pl_sample *s = &b->samples[b->n++];
			double base = k ? 0.2 : 0.1;
			s->wall_s = base * (1 + noise * ((i % 5) - 2) / 2.0);
			s->user_s = s->wall_s * 0.9;
			s->sys_s = s->wall_s * 0.05;
			s->max_rss_kb = 2048;
			s->counted = 1;
			s->counter[0] = s->user_s * 1e9;
			s->counter_ok[0] = 1;
		}
		b->state = PL_BENCH_DONE;
	}
}

static void test_build_write_load(void **state)
{
	(void)state;
	struct pl_bench_run run;
	make_run(&run, 0.01);
	assert_int_equal(pl_bench_finish(&run), 0);
	assert_int_equal(run.ncmp, 1);
	assert_int_equal(run.cmp[0].change, PL_CHANGE_SLOWER);
	json_t *doc = pl_summary_build(&run, NULL);
	assert_non_null(doc);
	char path[] = "/tmp/perfloop-summary-XXXXXX";
	int fd = mkstemp(path);
	close(fd);
	struct pl_error err;
	assert_int_equal(pl_summary_write(path, doc, &err), 0);
	json_decref(doc);

	json_t *back;
	assert_int_equal(pl_summary_load(path, &back, &err), 0);
	json_t *b0 = json_array_get(json_object_get(back, "benchmarks"), 0);
	json_t *counters = json_object_get(b0, "counters");
	assert_string_equal(json_string_value(json_object_get(counters, "instructions")),
			    "unsupported");
	assert_true(json_is_object(json_object_get(counters, "task-clock")));
	assert_true(json_is_string(
	    json_object_get(json_object_get(back, "unsupported_counters"), "instructions")));
	json_t *dims = json_object_get(b0, "dimensions");
	assert_true(json_is_true(json_object_get(json_object_get(dims, "timing"), "scored")));
	assert_null(json_object_get(dims, "instructions"));
	double *x;
	size_t n;
	assert_int_equal(pl_summary_wall_samples(back, "b 2", &x, &n), 0);
	assert_int_equal(n, 20);
	free(x);
	assert_int_equal(pl_summary_wall_samples(back, "zzz", &x, &n), PL_EINPUT);
	json_decref(back);
	unlink(path);
	pl_bench_run_release(&run);
}

static void test_noise_gate(void **state)
{
	(void)state;
	struct pl_bench_run run;
	make_run(&run, 0.2); /* CV ~ 0.14 */
	pl_bench_finish(&run);
	struct pl_dimension d[16];
	size_t nd = pl_summary_dimensions(&run, &run.bench[0], d, 16);
	assert_true(nd >= 4);
	assert_string_equal(d[0].name, "timing");
	for (size_t i = 0; i < nd; i++) {
		assert_false(d[i].scored);
		assert_non_null(strstr(d[i].reason, "CV"));
	}
	pl_bench_run_release(&run);
}

static void test_memory_floor_and_diagnostics(void **state)
{
	(void)state;
	struct pl_bench_run run;
	make_run(&run, 0.01);
	pl_counters_parse(&run.cfg.counters, "page-faults", NULL);
	for (int k = 0; k < 2; k++)
		for (size_t i = 0; i < run.bench[k].n; i++) {
			run.bench[k].samples[i].counter[0] = 100;
			run.bench[k].samples[i].counter_ok[0] = 1;
		}
	run.bench[0].rss_floor_kb = 2000; /* the samples' 2048 KiB is within 10% */
	run.bench[1].rss_floor_kb = 1000;
	pl_bench_finish(&run);
	struct pl_dimension d[16];
	size_t nd = pl_summary_dimensions(&run, &run.bench[0], d, 16);
	int seen = 0;
	for (size_t i = 0; i < nd; i++) {
		if (strcmp(d[i].name, "memory") == 0) {
			assert_false(d[i].scored);
			assert_non_null(strstr(d[i].reason, "perfloop's own"));
			seen++;
		}
		if (strcmp(d[i].name, "page_faults") == 0) {
			assert_false(d[i].scored);
			assert_non_null(strstr(d[i].reason, "diagnostic"));
			seen++;
		}
	}
	assert_int_equal(seen, 2);
	nd = pl_summary_dimensions(&run, &run.bench[1], d, 16);
	for (size_t i = 0; i < nd; i++)
		if (strcmp(d[i].name, "memory") == 0)
			assert_true(d[i].scored);
	pl_bench_run_release(&run);
}

static void expect_load_error(const char *text, const char *want)
{
	char path[] = "/tmp/perfloop-bad-XXXXXX";
	int fd = mkstemp(path);
	assert_int_equal(write(fd, text, strlen(text)), (ssize_t)strlen(text));
	close(fd);
	json_t *doc;
	struct pl_error err;
	assert_int_equal(pl_summary_load(path, &doc, &err), PL_EINPUT);
	assert_null(doc);
	if (!strstr(err.msg, want))
		fail_msg("error '%s' lacks '%s'", err.msg, want);
	assert_non_null(strstr(err.msg, path));
	unlink(path);
}

static void test_load_errors(void **state)
{
	(void)state;
	expect_load_error("{\"schema\": \"perfloop.bench/1\", \"benchmarks\": [", ":1:");
	expect_load_error("[]", "$: expected an object");
	expect_load_error("{}", "schema: missing");
	expect_load_error("{\"schema\": \"perfloop.bench/2\"}", "got \"perfloop.bench/2\"");
	expect_load_error("{\"schema\": \"perfloop.bench/1\"}", "benchmarks: expected an array");
	expect_load_error("{\"schema\": \"perfloop.bench/1\", \"benchmarks\": [{}]}",
			  "benchmarks[0].name");
	expect_load_error("{\"schema\": \"perfloop.bench/1\", \"benchmarks\": [{\"name\": \"a\", "
			  "\"samples\": [{\"wall_s\": 1}, {\"wall_s\": \"x\"}]}]}",
			  "benchmarks[0].samples[1].wall_s");
	expect_load_error("{\"schema\": \"perfloop.bench/1\", \"schema\": \"x\"}", "duplicate");
	expect_load_error("{\"schema\": \"perfloop.bench/1\", \"benchmarks\": [{\"name\": \"a\", "
			  "\"samples\": [{\"wall_s\": 1}], \"stats\": {\"wall_s\": {\"p50\": \"1\"}}}]}",
			  "benchmarks[0].stats.wall_s.p50: expected a number");
}

/* write run's summary to a fresh file; returns its path (static) */
static const char *written(struct pl_bench_run *run)
{
	static char path[64];
	snprintf(path, sizeof(path), "/tmp/perfloop-fig-XXXXXX");
	int fd = mkstemp(path);
	close(fd);
	json_t *doc = pl_summary_build(run, NULL);
	assert_non_null(doc);
	struct pl_error err;
	assert_int_equal(pl_summary_write(path, doc, &err), 0);
	json_decref(doc);
	return path;
}

/* load path after setting benchmarks[0]'s field (a path of object keys, or
 * "samples" for the first sample's wall time) to value; expect the error
 * to name the field, or success where want is NULL */
static void expect_figure(const char *path, const char *obj, const char *key, double value,
			  const char *want)
{
	struct pl_error err;
	json_t *doc;
	assert_int_equal(pl_summary_load(path, &doc, &err), 0);
	json_t *b0 = json_array_get(json_object_get(doc, "benchmarks"), 0);
	json_t *o = strcmp(obj, "samples") == 0
			? json_array_get(json_object_get(b0, "samples"), 0)
			: json_object_get(json_object_get(b0, obj),
					  strcmp(obj, "stats") == 0 ? "wall_s" : "timing");
	assert_non_null(o);
	if (isnan(value))
		json_object_del(o, key);
	else
		json_object_set_new(o, key, json_real(value));
	char edited[] = "/tmp/perfloop-edited-XXXXXX";
	close(mkstemp(edited));
	assert_int_equal(pl_summary_write(edited, doc, &err), 0);
	json_decref(doc);
	json_t *back = NULL;
	int rc = pl_summary_load(edited, &back, &err);
	if (!want) {
		if (rc != 0)
			fail_msg("%s", err.msg);
	} else {
		assert_int_equal(rc, PL_EINPUT);
		assert_null(back);
		if (!strstr(err.msg, want))
			fail_msg("error '%s' lacks '%s'", err.msg, want);
	}
	json_decref(back);
	unlink(edited);
}

/* verify takes the gain and the noise from a summary's figures and counts
 * the samples; the reader refuses a file whose wall-time figures are not
 * its samples', whatever the batching, the runs left uncounted, or how
 * nearly equal the samples are */
static void test_figures_are_the_samples(void **state)
{
	(void)state;
	const double noises[] = {0.01, 0, 1e-12};
	for (size_t k = 0; k < sizeof(noises) / sizeof(noises[0]); k++) {
		struct pl_bench_run run;
		make_run(&run, noises[k]);
		for (size_t i = 0; i < run.nbench; i++)
			run.bench[i].batch = 2;
		run.bench[0].samples[3].counted = 0;
		run.bench[0].samples[8].wall_s *= 7;
		assert_int_equal(pl_bench_finish(&run), 0);
		const char *path = written(&run);
		pl_bench_run_release(&run);
		struct pl_error err;
		json_t *doc;
		if (pl_summary_load(path, &doc, &err) != 0)
			fail_msg("noise %g: %s", noises[k], err.msg);
		json_t *w = json_object_get(
		    json_object_get(json_array_get(json_object_get(doc, "benchmarks"), 0), "stats"),
		    "wall_s");
		assert_int_equal(json_integer_value(json_object_get(w, "n")), 9);
		json_decref(doc);
		if (k > 0) {
			unlink(path);
			continue;
		}
		expect_figure(path, "stats", "n", 10, "benchmarks[0].stats.wall_s.n: 10 is not");
		expect_figure(path, "stats", "p50", 0.05, "benchmarks[0].stats.wall_s.p50");
		expect_figure(path, "stats", "cv", 0.5, "benchmarks[0].stats.wall_s.cv");
		expect_figure(path, "dimensions", "value", 0.05,
			      "benchmarks[0].dimensions.timing.value: 0.05 is not the median");
		expect_figure(path, "dimensions", "cv", 0.001, "benchmarks[0].dimensions.timing.cv");
		expect_figure(path, "dimensions", "value", -1, "dimensions.timing.value");
		/* a sample changed under its figures: the file pieced together */
		expect_figure(path, "samples", "wall_s", 30, "benchmarks[0].stats.wall_s.p50");
		/* a figure left out is not a wrong one (hand-written, older) */
		expect_figure(path, "stats", "p50", NAN, NULL);
		expect_figure(path, "dimensions", "cv", NAN, NULL);
		unlink(path);
	}
}

/* Two separate measurements: in doubt where either timing is over the
 * noise gate or the later speed probe ran slower; each reason named. */
static void test_doubt(void **state)
{
	(void)state;
	char buf[600];
	double speed = -1;
	json_t *p1 = json_pack("{s:f, s:f}", "chain_fast_s", 0.001, "ports_fast_s", 0.002);
	json_t *p2 = json_pack("{s:f, s:f}", "chain_fast_s", 0.00103, "ports_fast_s", 0.002);
	json_t *slow = json_pack("{s:f, s:f}", "chain_fast_s", 0.0015, "ports_fast_s", 0.002);
	/* quiet both sides, the probe within 4%: not in doubt */
	assert_null(
	    pl_summary_doubt(0.01, 0.02, p1, p2, "a.json", "this run", buf, sizeof buf, &speed));
	assert_true(speed == 0);
	/* a faster machine now is no doubt either */
	assert_null(pl_summary_doubt(0.01, 0.02, slow, p1, "a", "b", buf, sizeof buf, &speed));
	/* no probe on one side: only the CVs tell */
	assert_null(pl_summary_doubt(0.01, 0.02, NULL, slow, "a", "b", buf, sizeof buf, &speed));
	assert_string_equal(
	    pl_summary_doubt(0.06, 0.09, p1, slow, "a.json", "this run", buf, sizeof buf, &speed),
	    "this run's timing is N/A (CV 9.0% > 5%); a.json's timing is N/A (CV 6.0% > 5%); "
	    "the machine ran slower in this run: its speed probe took 1.000 ms in a.json, "
	    "1.500 ms in this run (+50.0%)");
	assert_true(fabs(speed - 0.5) < 1e-9);
	/* a long name truncates the text, never writes past it */
	char small[20];
	char name[300];
	memset(name, 'x', sizeof name - 1);
	name[sizeof name - 1] = 0;
	assert_non_null(
	    pl_summary_doubt(0.06, 0.09, p1, slow, name, name, small, sizeof small, &speed));
	assert_int_equal(strlen(small), sizeof small - 1);
	json_decref(p1);
	json_decref(p2);
	json_decref(slow);
}

/* In doubt, a slowdown stands on a CPU time whose whole interval is past
 * twice (scaled by the probe's slowdown) and whose gain passes the
 * threshold; else why not. */
static void test_cpu_stands(void **state)
{
	(void)state;
	char why[300];
	struct pl_comparison c = {.ratio = 3.0, .ci_lo = 2.5, .ci_hi = 3.5};
	assert_int_equal(pl_summary_cpu_stands(&c, 0.5, 0, 0.01, "a", why, sizeof why), 1);
	/* a machine 50% slower asks 3x: 2.5x is not wholly past it */
	assert_int_equal(pl_summary_cpu_stands(&c, 0.5, 0.5, 0.01, "a", why, sizeof why), 0);
	assert_string_equal(why, "its CPU time changed +200.0% (95% CI 2.50x-3.50x), not wholly "
				 "past the 3.0x that would tell");
	/* past twice, but what it added is a sliver of the run */
	assert_int_equal(pl_summary_cpu_stands(&c, 0.004, 0, 0.01, "a.json", why, sizeof why), 0);
	assert_string_equal(why, "the CPU time it added is 0.4% of a.json's fastest run, within "
				 "the 1% threshold");
	assert_int_equal(pl_summary_cpu_stands(NULL, 0.5, 0, 0.01, "a", why, sizeof why), 0);
	assert_string_equal(why, "its CPU time was not measured");
	/* an interval that is not a number is no evidence */
	struct pl_comparison nan_c = {.ratio = NAN, .ci_lo = NAN, .ci_hi = NAN};
	assert_int_equal(pl_summary_cpu_stands(&nan_c, 0.5, 0, 0.01, "a", why, sizeof why), 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_build_write_load),
	    cmocka_unit_test(test_noise_gate),
	    cmocka_unit_test(test_memory_floor_and_diagnostics),
	    cmocka_unit_test(test_load_errors),
	    cmocka_unit_test(test_figures_are_the_samples),
	    cmocka_unit_test(test_doubt),
	    cmocka_unit_test(test_cpu_stands),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
