/* Unit tests for src/measure/tiers.c, src/decide/verdict.c and src/decide/ledger.c:
 * every acceptance rule fails on its own, the tier table, atomic appends. */
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "testutil.h"

#include "ledger.h"
#include "tiers.h"
#include "verdict.h"

/* A minimal valid summary with one benchmark. */
static json_t *summary(double timing, double cv, int scored, double memory, int n,
		       const char *kernel)
{
	json_t *samples = json_array();
	for (int i = 0; i < n; i++)
		json_array_append_new(samples,
				      json_pack("{s:f, s:b}", "wall_s", timing, "counted", 1));
	return json_pack("{s:s, s:{s:s, s:s, s:s, s:s, s:n}, s:[{s:s, s:o, s:{s:{s:f, s:f, s:b}, "
			 "s:{s:f, s:f, s:b}, s:{s:f, s:f, s:b}}}]}",
			 "schema", "perfloop.bench/1", "fingerprint", "cpu_model", "EPYC", "kernel",
			 kernel, "governor", "unknown", "smt", "off", "python", "benchmarks",
			 "name", "app", "samples", samples, "dimensions", "timing", "value", timing,
			 "cv", cv, "scored", scored, "memory", "value", memory, "cv", 0.01,
			 "scored", 1, "ipc", "value", 1.6, "cv", 0.01, "scored", 1);
}

static struct pl_verdict run(json_t *b, json_t *a, int suite_exit, double min_gain)
{
	struct pl_verify_input in = {.before = b,
				     .after = a,
				     .before_path = "b.json",
				     .after_path = "a.json",
				     .min_gain = min_gain,
				     .suite_given = suite_exit >= -1,
				     .suite_exit = suite_exit,
				     .suite_what = "given"};
	struct pl_verdict v;
	struct pl_error err;
	if (pl_verify(&in, &v, &err) != 0)
		fail_msg("%s", err.msg);
	json_decref(b);
	json_decref(a);
	return v;
}

static int failed(const struct pl_verdict *v, const char *name)
{
	for (int i = 0; i < v->nrules; i++)
		if (strcmp(v->rule[i].name, name) == 0)
			return !v->rule[i].passed;
	fail_msg("no rule %s", name);
	return 0;
}

static const char *detail(const struct pl_verdict *v, const char *name)
{
	for (int i = 0; i < v->nrules; i++)
		if (strcmp(v->rule[i].name, name) == 0)
			return v->rule[i].detail;
	fail_msg("no rule %s", name);
	return "";
}

static int nfailed(const struct pl_verdict *v)
{
	int k = 0;
	for (int i = 0; i < v->nrules; i++)
		k += !v->rule[i].passed;
	return k;
}

static void test_accept(void **state)
{
	(void)state;
	struct pl_verdict v = run(summary(1.0, 0.01, 1, 100, 5, "6.1"),
				  summary(0.9, 0.01, 1, 100, 5, "6.1"), 0, 0.05);
	assert_int_equal(v.kind, PL_ACCEPT);
	assert_int_equal(nfailed(&v), 0);
	assert_true(v.gain > 0.099 && v.gain < 0.101);
	pl_verdict_release(&v);
}

static void test_each_rule_alone(void **state)
{
	(void)state;
	struct pl_verdict v;
	/* gain below min: no feasible win */
	v = run(summary(1.0, 0.01, 1, 100, 5, "6.1"), summary(0.97, 0.01, 1, 100, 5, "6.1"), 0,
		0.05);
	assert_int_equal(v.kind, PL_NO_FEASIBLE_WIN);
	assert_true(failed(&v, "target_improved") && nfailed(&v) == 1);
	pl_verdict_release(&v);
	/* target worse by >= min gain: reject */
	v = run(summary(1.0, 0.01, 1, 100, 5, "6.1"), summary(1.08, 0.01, 1, 100, 5, "6.1"), 0,
		0.05);
	assert_int_equal(v.kind, PL_REJECT);
	pl_verdict_release(&v);
	/* noise */
	v = run(summary(1.0, 0.01, 1, 100, 5, "6.1"), summary(0.8, 0.09, 0, 100, 5, "6.1"), 0,
		0.05);
	assert_int_equal(v.kind, PL_REJECT);
	assert_true(failed(&v, "timing_not_noisy") && nfailed(&v) == 1);
	pl_verdict_release(&v);
	/* samples */
	v = run(summary(1.0, 0.01, 1, 100, 2, "6.1"), summary(0.8, 0.01, 1, 100, 5, "6.1"), 0,
		0.05);
	assert_int_equal(v.kind, PL_REJECT);
	assert_true(failed(&v, "enough_samples") && nfailed(&v) == 1);
	pl_verdict_release(&v);
	/* fingerprint, naming the field */
	v = run(summary(1.0, 0.01, 1, 100, 5, "6.1"), summary(0.8, 0.01, 1, 100, 5, "6.2"), 0,
		0.05);
	assert_int_equal(v.kind, PL_REJECT);
	assert_true(failed(&v, "fingerprint_match") && nfailed(&v) == 1);
	assert_non_null(strstr(v.rule[3].detail, "kernel"));
	pl_verdict_release(&v);
	/* a perfloop.yaml benchmark changed between the runs: its keys named;
	 * the same one, or a spec on one side only, passes */
	json_t *b = summary(1.0, 0.01, 1, 100, 5, "6.1"), *a = summary(0.8, 0.01, 1, 100, 5, "6.1");
	json_object_set_new(b, "spec",
			    json_pack("{s:s, s:s, s:s, s:{s:s, s:i, s:o}}", "file", "perfloop.yaml",
				      "benchmark", "app", "hash", "00000000000000aa", "settings",
				      "cmd", "./app", "warmup", 1, "env", json_object()));
	json_object_set(a, "spec", json_object_get(b, "spec"));
	v = run(json_incref(b), json_incref(a), 0, 0.05);
	assert_int_equal(v.kind, PL_ACCEPT);
	assert_non_null(strstr(detail(&v, "same_spec"), "both measured perfloop.yaml's 'app'"));
	pl_verdict_release(&v);
	json_object_set_new(a, "spec",
			    json_pack("{s:s, s:s, s:s, s:{s:s, s:i, s:{s:s}}}", "file", "perfloop.yaml",
				      "benchmark", "app", "hash", "00000000000000bb", "settings",
				      "cmd", "./app", "warmup", 2, "env", "OMP_NUM_THREADS", "1"));
	v = run(json_incref(b), json_incref(a), 0, 0.05);
	assert_int_equal(v.kind, PL_REJECT);
	assert_true(failed(&v, "same_spec") && nfailed(&v) == 1);
	assert_non_null(strstr(detail(&v, "same_spec"), "(warmup, env; spec hash"));
	pl_verdict_release(&v);
	json_object_del(b, "spec");
	v = run(b, a, 0, 0.05);
	assert_false(failed(&v, "same_spec"));
	assert_non_null(strstr(detail(&v, "same_spec"), "only the after run"));
	pl_verdict_release(&v);
	/* suite red, and suite unknown */
	v = run(summary(1.0, 0.01, 1, 100, 5, "6.1"), summary(0.8, 0.01, 1, 100, 5, "6.1"), 3,
		0.05);
	assert_int_equal(v.kind, PL_REJECT);
	assert_true(failed(&v, "suite_green") && nfailed(&v) == 1);
	pl_verdict_release(&v);
	v = run(summary(1.0, 0.01, 1, 100, 5, "6.1"), summary(0.8, 0.01, 1, 100, 5, "6.1"), -2,
		0.05);
	assert_int_equal(v.kind, PL_REJECT);
	assert_true(failed(&v, "suite_green"));
	pl_verdict_release(&v);
	/* another dimension 10% worse is one tier: reject; 9% is not */
	v = run(summary(1.0, 0.01, 1, 100, 5, "6.1"), summary(0.8, 0.01, 1, 110, 5, "6.1"), 0,
		0.05);
	assert_int_equal(v.kind, PL_REJECT);
	assert_true(failed(&v, "no_tier_regression") && nfailed(&v) == 1);
	assert_non_null(strstr(detail(&v, "no_tier_regression"), "memory tier 3 -> 4"));
	pl_verdict_release(&v);
	v = run(summary(1.0, 0.01, 1, 100, 5, "6.1"), summary(0.8, 0.01, 1, 109, 5, "6.1"), 0,
		0.05);
	assert_int_equal(v.kind, PL_ACCEPT);
	pl_verdict_release(&v);
}

/* A faster time bought with parallelism: the after's CPU time grows (two
 * workers), which judged as a dimension would reject it; judged only when
 * the after is not running on several CPUs at once */
static void test_parallel_speedup(void **state)
{
	(void)state;
	for (int parallel = 0; parallel < 2; parallel++) {
		json_t *b = summary(1.0, 0.01, 1, 100, 5, "6.1"), *a = summary(0.6, 0.01, 1, 100, 5, "6.1");
		json_t *db = json_object_get(json_array_get(json_object_get(b, "benchmarks"), 0), "dimensions");
		json_t *da = json_object_get(json_array_get(json_object_get(a, "benchmarks"), 0), "dimensions");
		/* before: 1.0 s of CPU in 1.0 s of wall; after: 1.2 s of CPU in 0.6 s
		 * (2 CPUs at once), or 1.15 s of CPU in 1.2 s (one CPU, 15% more CPU:
		 * a tier worse, judged); min_gain -1 lets the target rule pass */
		json_object_set_new(db, "cpu", json_pack("{s:f, s:f, s:b}", "value", 1.0, "cv", 0.01, "scored", 1));
		json_object_set_new(da, "cpu", json_pack("{s:f, s:f, s:b}", "value", parallel ? 1.2 : 1.15, "cv", 0.01, "scored", 1));
		if (!parallel)
			json_object_set_new(json_object_get(da, "timing"), "value", json_real(1.2));
		struct pl_verdict v = run(b, a, 0, -1.0);
		if (parallel) {
			assert_false(failed(&v, "no_tier_regression"));
			assert_non_null(strstr(detail(&v, "no_tier_regression"), "cpu and task_clock not judged"));
		} else {
			assert_true(failed(&v, "no_tier_regression"));
			assert_non_null(strstr(detail(&v, "no_tier_regression"), "cpu tier"));
		}
		pl_verdict_release(&v);
	}
}

static void test_different_benchmarks_and_missing_target(void **state)
{
	(void)state;
	json_t *b = summary(1.0, 0.01, 1, 100, 5, "6.1"), *a = summary(0.9, 0.01, 1, 100, 5, "6.1");
	json_object_set_new(json_array_get(json_object_get(a, "benchmarks"), 0), "name",
			    json_string("other"));
	struct pl_verify_input in = {.before = b,
				     .after = a,
				     .before_path = "b.json",
				     .after_path = "a.json",
				     .min_gain = 0.05};
	struct pl_verdict v;
	struct pl_error err;
	assert_int_equal(pl_verify(&in, &v, &err), PL_EINPUT);
	assert_non_null(strstr(err.msg, "different benchmarks"));
	json_object_set_new(json_array_get(json_object_get(a, "benchmarks"), 0), "name",
			    json_string("app"));
	in.target = "l1_miss_rate";
	assert_int_equal(pl_verify(&in, &v, &err), PL_EINPUT);
	assert_non_null(strstr(err.msg, "b.json: benchmarks[0].dimensions.l1_miss_rate: missing"));
	json_decref(a);
	json_decref(b);
}

static void test_tiers(void **state)
{
	(void)state;
	assert_int_equal(pl_tier_absolute("ipc", 2.5), 1);
	assert_int_equal(pl_tier_absolute("ipc", 1.2), 3);
	assert_int_equal(pl_tier_absolute("ipc", 0.2), 5);
	assert_int_equal(pl_tier_absolute("l1_miss_rate", 0.01), 1);
	assert_int_equal(pl_tier_absolute("l1_miss_rate", 0.2), 5);
	assert_int_equal(pl_tier_absolute("complexity_exponent", 2.0), 4);
	assert_int_equal(pl_tier_absolute("timing", 1.0), 0);
	assert_int_equal(pl_tier_relative("timing", 1.0, 1.0), 3);
	assert_int_equal(pl_tier_relative("timing", 1.0, 1.099), 3);
	assert_int_equal(pl_tier_relative("timing", 1.0, 1.10), 4);
	assert_int_equal(pl_tier_relative("timing", 1.0, 1.25), 5);
	assert_int_equal(pl_tier_relative("timing", 1.0, 0.85), 2);
	assert_int_equal(pl_tier_relative("memory", 100, 1000), 5);
	/* higher is better: ipc falling 20% is two tiers worse */
	assert_int_equal(pl_tier_relative("ipc", 2.0, 1.6), 5);
}

static void test_ledger_appends_whole_lines(void **state)
{
	(void)state;
	char dir[] = "/tmp/perfloop-ledger-XXXXXX";
	assert_non_null(mkdtemp(dir));
	char path[256];
	snprintf(path, sizeof(path), "%s/ledger.jsonl", dir);
	struct pl_error err;
	/* concurrent writers: every line lands, none interleaved */
	for (int p = 0; p < 4; p++) {
		if (fork() == 0) {
			for (int i = 0; i < 25; i++) {
				json_t *e =
				    json_pack("{s:i, s:i, s:s}", "writer", p, "i", i, "pad",
					      "xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx");
				if (pl_ledger_append(path, e, &err) != 0)
					_exit(1);
				json_decref(e);
			}
			_exit(0);
		}
	}
	for (int p = 0; p < 4; p++) {
		int st;
		wait(&st);
		assert_true(WIFEXITED(st) && WEXITSTATUS(st) == 0);
	}
	FILE *f = fopen(path, "r");
	char line[512];
	int lines = 0;
	while (fgets(line, sizeof(line), f)) {
		json_error_t jerr;
		json_t *o = json_loads(line, 0, &jerr);
		assert_non_null(o);
		json_decref(o);
		lines++;
	}
	fclose(f);
	assert_int_equal(lines, 100);
	/* a file whose last line is partial is refused, not appended to */
	f = fopen(path, "a");
	fputs("{\"broken\":", f);
	fclose(f);
	json_t *e = json_pack("{s:i}", "x", 1);
	assert_int_equal(pl_ledger_append(path, e, &err), PL_EINPUT);
	assert_non_null(strstr(err.msg, "incomplete"));
	json_decref(e);
	char cmd[300];
	snprintf(cmd, sizeof(cmd), "rm -rf %s", dir);
	assert_int_equal(system(cmd), 0);
}

/* A machine that ran 38.6% faster during the after explains a 50% faster
 * wall time only where the time was spent on the CPU: a run that is 95%
 * asleep is judged on its gain, a CPU-bound one is measured again. */
static void test_speed_change_weighed_by_cpu_share(void **state)
{
	(void)state;
	for (int bound = 0; bound < 2; bound++) {
		json_t *side[2] = {summary(1.0, 0.01, 1, 100, 5, "6.1"),
				   summary(0.5, 0.01, 1, 100, 5, "6.1")};
		for (int k = 0; k < 2; k++) {
			json_t *s, *samples = json_object_get(
				       json_array_get(json_object_get(side[k], "benchmarks"), 0),
				       "samples");
			size_t i;
			json_array_foreach(samples, i, s)
			{
				double wall = json_number_value(json_object_get(s, "wall_s"));
				json_object_set_new(s, "user_s", json_real(wall * (bound ? 0.9 : 0.04)));
				json_object_set_new(s, "sys_s", json_real(wall * 0.01));
			}
			json_object_set_new(json_object_get(side[k], "fingerprint"), "speed_probe",
					    json_pack("{s:f}", "chain_fast_s", k ? 0.166e-3 : 0.270e-3));
		}
		struct pl_verdict v = run(side[0], side[1], 0, 0.05);
		if (bound) {
			assert_true(failed(&v, "fingerprint_match"));
			assert_non_null(strstr(detail(&v, "fingerprint_match"), "machine_speed"));
		} else {
			assert_false(failed(&v, "fingerprint_match"));
			assert_non_null(strstr(detail(&v, "fingerprint_match"), "spent on a CPU"));
			assert_int_equal(v.kind, PL_ACCEPT);
		}
		pl_verdict_release(&v);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_accept),
	    cmocka_unit_test(test_each_rule_alone),
	    cmocka_unit_test(test_different_benchmarks_and_missing_target),
	    cmocka_unit_test(test_tiers),
	    cmocka_unit_test(test_parallel_speedup),
	    cmocka_unit_test(test_speed_change_weighed_by_cpu_share),
	    cmocka_unit_test(test_ledger_appends_whole_lines),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
