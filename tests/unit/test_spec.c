/* Unit tests for src/measure/spec.c: perfloop.yaml read into its benchmarks,
 * every kind of error said as FILE:LINE: KEY: what, the options a
 * benchmark stands for, its hash and the keys two settings differ in. */
#include <string.h>
#include <unistd.h>

#include "testutil.h"

#include "spec.h"

static char path[64];

/* Write text to a temporary file and load it; the status. */
static int load(const char *text, struct pl_spec *s, struct pl_error *err)
{
	snprintf(path, sizeof path, "/tmp/perfloop-spec-XXXXXX");
	int fd = mkstemp(path);
	assert_true(fd >= 0);
	assert_int_equal(write(fd, text, strlen(text)), (ssize_t)strlen(text));
	close(fd);
	int rc = pl_spec_load(path, s, err);
	unlink(path);
	return rc;
}

static const char good[] = "suite: make test\n"
			   "ledger: docs/perf/baseline_ledger.jsonl\n"
			   "benchmarks:\n"
			   "  parse-large:\n"
			   "    cmd: ./build/parser {file}\n"
			   "    params: {file: [data/small.json, data/large.json]}\n"
			   "    warmup: 2\n"
			   "    min_runs: 15\n"
			   "    env: {OMP_NUM_THREADS: \"1\"}\n"
			   "    target: timing\n"
			   "  sweep:\n"
			   "    cmd: ./prog {n}\n"
			   "    params:\n"
			   "      n: 1000..64000*2\n"
			   "    expect: n log n\n"
			   "    shell: true\n"
			   "policy: {min_gain: 0.05, max_cv: 5%, max_iterations: 3}\n";

static void test_good(void **state)
{
	(void)state;
	struct pl_spec s;
	struct pl_error err = {{0}};
	assert_int_equal(load(good, &s, &err), PL_OK);
	assert_string_equal(s.suite, "make test");
	assert_string_equal(s.ledger, "docs/perf/baseline_ledger.jsonl");
	assert_true(s.min_gain == 0.05 && s.max_cv == 0.05 && s.max_iterations == 3);
	assert_int_equal(s.nbench, 2);
	const struct pl_spec_bench *b = pl_spec_get(&s, "parse-large");
	assert_non_null(b);
	assert_int_equal(b->line, 5);
	assert_string_equal(b->cmd, "./build/parser {file}");
	assert_true(b->warmup == 2 && b->min_runs == 15 && !b->shell && !b->expect);
	assert_true(b->nparams == 1 && !strcmp(b->params[0].key, "file") &&
		    !strcmp(b->params[0].value, "data/small.json,data/large.json"));
	assert_true(b->nenv == 1 && !strcmp(b->env[0].key, "OMP_NUM_THREADS") &&
		    !strcmp(b->env[0].value, "1"));
	assert_string_equal(b->target, "timing");
	/* the options it stands for */
	struct pl_argv a = {0};
	assert_int_equal(pl_spec_bench_args(b, &a), PL_OK);
	const char *want[] = {"--warmup", "2", "--min-runs", "15", "-P",
			      "file=data/small.json,data/large.json"};
	assert_int_equal(a.n, 6);
	for (size_t i = 0; i < 6; i++)
		assert_string_equal(a.v[i], want[i]);
	pl_argv_release(&a);
	const struct pl_spec_bench *w = pl_spec_get(&s, "sweep");
	assert_true(w && w->shell && w->warmup == -1 && !strcmp(w->expect, "n log n"));
	assert_int_equal(pl_spec_bench_args(w, &a), PL_OK);
	assert_int_equal(a.n, 5); /* -P n=..., --expect 'n log n', --shell */
	assert_string_equal(a.v[1], "n=1000..64000*2");
	assert_string_equal(a.v[4], "--shell");
	pl_argv_release(&a);
	assert_null(pl_spec_get(&s, "nope"));
	/* the summary's record, and the keys two records differ in */
	json_t *j1 = pl_spec_bench_json(&s, b);
	assert_string_equal(json_string_value(json_object_get(j1, "hash")), b->hash);
	assert_int_equal(strlen(b->hash), 16);
	assert_string_not_equal(b->hash, w->hash);
	json_t *j2 = json_deep_copy(j1);
	char keys[200];
	pl_spec_diff(j1, j2, keys, sizeof keys);
	assert_string_equal(keys, "");
	json_object_set_new(json_object_get(j2, "settings"), "warmup", json_integer(3));
	json_object_set_new(json_object_get(json_object_get(j2, "settings"), "env"), "X",
			    json_string("1"));
	pl_spec_diff(j1, j2, keys, sizeof keys);
	assert_string_equal(keys, "env, warmup");
	json_decref(j1);
	json_decref(j2);
	pl_spec_release(&s);
}

/* A benchmark as the loop's commands: one per combination, named, the
 * environment through env(1) and a shell one through sh -c, quoted for
 * bench's word splitter. */
static void test_commands(void **state)
{
	(void)state;
	struct pl_spec s;
	struct pl_error err = {{0}};
	assert_int_equal(load("benchmarks:\n"
			      "  a:\n"
			      "    cmd: ./x {n} {m}\n"
			      "    params: {n: [1, 2], m: [p]}\n"
			      "    env: {K: \"it's\", L: \"2\"}\n"
			      "  b:\n"
			      "    cmd: echo $HOME | wc -c\n"
			      "    shell: true\n",
			      &s, &err),
			 PL_OK);
	struct pl_argv cmds = {0}, names = {0};
	assert_int_equal(pl_spec_commands(&s.bench[0], &cmds, &names, &err), PL_OK);
	assert_int_equal(pl_spec_commands(&s.bench[1], &cmds, &names, &err), PL_OK);
	assert_int_equal(cmds.n, 3);
	assert_string_equal(cmds.v[0], "env 'K=it'\\''s' 'L=2' ./x 1 p");
	assert_string_equal(cmds.v[1], "env 'K=it'\\''s' 'L=2' ./x 2 p");
	assert_string_equal(cmds.v[2], "sh -c 'echo $HOME | wc -c'");
	assert_string_equal(names.v[0], "a n=1 m=p");
	assert_string_equal(names.v[1], "a n=2 m=p");
	assert_string_equal(names.v[2], "b");
	/* as bench splits them: the quoted value comes back whole */
	struct pl_argv w = {0};
	assert_int_equal(pl_words_split(cmds.v[0], &w, &err), PL_OK);
	assert_int_equal(w.n, 6); /* env, K=..., L=2, ./x, 1, p */
	assert_string_equal(w.v[1], "K=it's");
	pl_argv_release(&w);
	pl_argv_release(&cmds);
	pl_argv_release(&names);
	pl_spec_release(&s);
}

/* The hash follows what a measurement depends on, and only that. */
static void test_hash(void **state)
{
	(void)state;
	const char *texts[] = {
	    "benchmarks:\n  a:\n    cmd: ./x\n",
	    "benchmarks:\n  a:\n    cmd: ./y\n",
	    "benchmarks:\n  a:\n    cmd: ./x\n    warmup: 1\n",
	    "benchmarks:\n  a:\n    cmd: ./x\n    env: {A: \"1\"}\n",
	    "benchmarks:\n  a:\n    cmd: ./x {n}\n    params: {n: [1, 2]}\n",
	    "benchmarks:\n  a:\n    cmd: ./x {n}\n    params: {n: [1, 3]}\n",
	};
	char hashes[6][17];
	for (size_t i = 0; i < 6; i++) {
		struct pl_spec s;
		struct pl_error err = {{0}};
		assert_int_equal(load(texts[i], &s, &err), PL_OK);
		memcpy(hashes[i], s.bench[0].hash, 17);
		pl_spec_release(&s);
		for (size_t j = 0; j < i; j++)
			assert_string_not_equal(hashes[i], hashes[j]);
	}
	/* the environment in another order: the same hash; the parameters'
	 * order is theirs (it orders the runs) */
	struct pl_spec e1, e2;
	struct pl_error ee = {{0}};
	assert_int_equal(load("benchmarks:\n  a:\n    cmd: ./x\n    env: {A: \"1\", B: \"2\"}\n", &e1,
			      &ee),
			 PL_OK);
	assert_int_equal(load("benchmarks:\n  a:\n    cmd: ./x\n    env: {B: \"2\", A: \"1\"}\n", &e2,
			      &ee),
			 PL_OK);
	assert_string_equal(e1.bench[0].hash, e2.bench[0].hash);
	pl_spec_release(&e1);
	pl_spec_release(&e2);
	/* the same settings written another way: the same hash */
	struct pl_spec s;
	struct pl_error err = {{0}};
	assert_int_equal(load("# a comment\nsuite: make check\nbenchmarks:\n  a: {cmd: ./x}\n", &s,
			      &err),
			 PL_OK);
	assert_string_equal(s.bench[0].hash, hashes[0]);
	pl_spec_release(&s);
}

/* Each error names the file, the line and the key. */
static void test_errors(void **state)
{
	(void)state;
	static const struct {
		const char *text, *line, *says;
	} cases[] = {
	    {"benchmarks:\n  a: [cmd\n", ":3:", "not YAML"},
	    {"", ":", "empty"},
	    {"- a\n- b\n", ":1:", "expected a mapping"},
	    {"suite: make test\nbenchmark:\n  a: {cmd: x}\n", ":2:",
	     "the file: unknown key 'benchmark' (did you mean 'benchmarks'?)"},
	    {"suite: make test\njobs: 4\n", ":2:",
	     "the file: unknown key 'jobs' (known: suite, ledger, benchmarks, policy)"},
	    {"benchmarks:\n  a:\n    cmd: ./x\n    warmpu: 2\n", ":4:",
	     "benchmarks.a: unknown key 'warmpu' (did you mean 'warmup'?)"},
	    {"benchmarks:\n  a:\n    params: {n: [1, 2]}\n", ":3:", "benchmarks.a: no 'cmd'"},
	    {"benchmarks:\n  a:\n    cmd: ./x\n    warmup: two\n", ":4:",
	     "benchmarks.a.warmup: expected an integer from 0 to 1000000, got 'two'"},
	    {"benchmarks:\n  a:\n    cmd: ./x\n    min_runs: 1\n", ":4:",
	     "benchmarks.a.min_runs: expected an integer from 2"},
	    {"benchmarks:\n  a:\n    cmd: ./x\n    shell: yes\n", ":4:",
	     "benchmarks.a.shell: expected true or false, got 'yes'"},
	    {"benchmarks:\n  a:\n    cmd: [./x]\n", ":3:", "benchmarks.a.cmd: expected a string"},
	    {"benchmarks:\n  a:\n    cmd: ./x {n}\n    params: {n: 10..1}\n", ":4:",
	     "benchmarks.a.params.n: bad range 'n=10..1'"},
	    {"benchmarks:\n  a:\n    cmd: ./x {f}\n    params: {f: [\"a,b\"]}\n", ":4:",
	     "benchmarks.a.params.f: each value of a list must be a string without a comma or '..'"},
	    {"benchmarks:\n  a:\n    cmd: ./x {n}\n    params: {n: [1..4]}\n", ":4:",
	     "benchmarks.a.params.n: each value of a list must be a string without a comma or '..'"},
	    {"benchmarks:\n  a:\n    params: {n: [1]}\n    cmd: ./x {n} | wc\n", ":4:",
	     "benchmarks.a.cmd: "},
	    {"benchmarks:\n  a:\n    cmd: ~\n", ":3:", "benchmarks.a.cmd: expected a string"},
	    {"benchmarks:\n  a: {cmd: ./x}\n---\nbenchmarks:\n  b: {cmd: ./y}\n", ":4:",
	     "a second YAML document"},
	    /* not UTF-8: a reader error, its line counted up to the byte */
	    {"benchmarks:\n  a: {cmd: ./x}\n  b: {cmd: ./\xff}\n", ":3:", "not YAML"},
	    {"benchmarks:\n  a:\n    cmd: ./x\n    env: {1A: x}\n", ":4:",
	     "benchmarks.a.env.1A: not a variable name"},
	    {"benchmarks:\n  a:\n    cmd: ./x {n}\n    params: {n: 1..8*2}\n    expect: n^4\n",
	     ":5:", "benchmarks.a.expect: expected 1, log n, n, n log n, n^2 or n^3, got 'n^4'"},
	    {"benchmarks:\n  a:\n    cmd: ./x\n    expect: n\n", ":3:",
	     "benchmarks.a: 'expect' needs a size sweep"},
	    {"benchmarks:\n  a:\n    cmd: ./x\n    target: Wall Time\n", ":4:",
	     "benchmarks.a.target: expected a dimension's name"},
	    {"benchmarks:\n  a b:\n    cmd: ./x\n", ":3:", "benchmarks.a b: a benchmark's name is"},
	    {"benchmarks:\n  a: {cmd: ./x}\n  a: {cmd: ./y}\n", ":3:",
	     "benchmarks: the key 'a' is given twice"},
	    {"benchmarks: [a, b]\n", ":1:", "benchmarks: expected a mapping"},
	    {"benchmarks:\n  a: {cmd: ./x}\npolicy: {min_gain: lots}\n", ":3:",
	     "policy.min_gain: expected a fraction or a percentage"},
	    {"benchmarks:\n  a: {cmd: ./x}\npolicy: {max_iterations: 0}\n", ":3:",
	     "policy.max_iterations: expected an integer from 1"},
	    {"benchmarks:\n  a: {cmd: ./x}\npolicy: {max_tries: 3}\n", ":3:",
	     "policy: unknown key 'max_tries'"},
	    {"suite: [make]\n", ":1:", "suite: expected a string"},
	};
	for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
		struct pl_spec s;
		struct pl_error err = {{0}};
		int rc = load(cases[i].text, &s, &err);
		if (rc != PL_EINPUT || !strstr(err.msg, cases[i].says) ||
		    !strstr(err.msg, cases[i].line) || strncmp(err.msg, path, strlen(path)) != 0)
			fail_msg("case %zu: rc %d, '%s' (want %s and '%s')", i, rc, err.msg,
				 cases[i].line, cases[i].says);
	}
	struct pl_spec s;
	struct pl_error err = {{0}};
	assert_int_equal(pl_spec_load("/nonexistent/perfloop.yaml", &s, &err), PL_EINPUT);
	assert_non_null(strstr(err.msg, "/nonexistent/perfloop.yaml: No such file"));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_good),
	    cmocka_unit_test(test_commands),
	    cmocka_unit_test(test_hash),
	    cmocka_unit_test(test_errors),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
