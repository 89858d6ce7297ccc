/* Unit tests for src/decide/select.c and src/profile/findings.c: each selection
 * rule, and the findings reader's validation. */
#include <string.h>
#include <unistd.h>

#include "testutil.h"

#include "select.h"

static struct pl_finding mk(const char *id, int level, enum pl_severity sev, const char *metric,
			    double ratio, double confidence)
{
	struct pl_finding f;
	memset(&f, 0, sizeof(f));
	f.id = (char *)id;
	f.path = (char *)"src/x.py";
	f.level = level;
	f.severity = sev;
	f.metric_name = (char *)metric;
	f.ratio = ratio;
	f.has_ratio = ratio > 0;
	f.confidence = confidence;
	f.status = PL_FST_STATIC;
	return f;
}

static const char *pick(struct pl_finding *v, size_t n, const char **ex, size_t nex,
			struct pl_selection *s)
{
	struct pl_findings f = {v, n};
	assert_int_equal(pl_select(&f, ex, nex, s), 0);
	return s->chosen >= 0 ? v[s->chosen].id : NULL;
}

static void test_rank_order(void **state)
{
	(void)state;
	struct pl_selection s;
	/* level first, even against severity */
	struct pl_finding a[] = {mk("B", 2, PL_SEV_CRITICAL, "l1_miss_rate", 0, 0.9),
				 mk("A", 1, PL_SEV_LOW, "loop_count", 0, 0.5)};
	assert_string_equal(pick(a, 2, NULL, 0, &s), "A");
	pl_selection_release(&s);
	/* then severity */
	struct pl_finding b[] = {mk("L", 3, PL_SEV_LOW, "io", 9, 1),
				 mk("H", 3, PL_SEV_HIGH, "io", 1, 0.1)};
	assert_string_equal(pick(b, 2, NULL, 0, &s), "H");
	pl_selection_release(&s);
	/* then ratio */
	struct pl_finding c[] = {mk("R1", 3, PL_SEV_MEDIUM, "io", 1.5, 1),
				 mk("R4", 3, PL_SEV_MEDIUM, "io", 4.2, 0.2)};
	assert_string_equal(pick(c, 2, NULL, 0, &s), "R4");
	assert_non_null(strstr(s.why[0], "ratio"));
	pl_selection_release(&s);
	/* then confidence, then id; input order never matters */
	struct pl_finding d[] = {mk("Z", 3, PL_SEV_MEDIUM, "io", 0, 0.9),
				 mk("Y", 3, PL_SEV_MEDIUM, "io", 0, 0.9),
				 mk("C", 3, PL_SEV_MEDIUM, "io", 0, 0.5)};
	assert_string_equal(pick(d, 3, NULL, 0, &s), "Y");
	pl_selection_release(&s);
	/* scan --profile: a finding measured on the profile's hot lines comes
	 * before one the profile never ran, whatever their rules' levels, and
	 * of two measured the larger share first */
	struct pl_finding e[] = {mk("STATIC", 1, PL_SEV_HIGH, "anti_pattern", 0, 0.9),
				 mk("HOT", 5, PL_SEV_MEDIUM, "profile_share", 0, 0.8),
				 mk("WARM", 5, PL_SEV_MEDIUM, "profile_share", 0, 0.8)};
	e[1].status = e[2].status = PL_FST_MEASURED;
	e[1].has_metric_value = e[2].has_metric_value = 1;
	e[1].metric_value = 0.40;
	e[2].metric_value = 0.10;
	assert_string_equal(pick(e, 3, NULL, 0, &s), "HOT");
	pl_selection_release(&s);
	e[1].metric_value = 0.05;
	assert_string_equal(pick(e, 3, NULL, 0, &s), "WARM");
	pl_selection_release(&s);
	/* the reference BLAS proved hot: before the hot function inside it */
	struct pl_finding g[] = {mk("SGEMM", 1, PL_SEV_HIGH, "cpu_share", 1.7, 0.9),
				 mk("BLAS", 8, PL_SEV_HIGH, "blas_share", 1.7, 0.9)};
	g[0].leaf = (char *)"profile.hot-function";
	g[1].leaf = (char *)"env.reference-blas";
	g[0].status = g[1].status = PL_FST_MEASURED;
	assert_string_equal(pick(g, 2, NULL, 0, &s), "BLAS");
	pl_selection_release(&s);
}

static void test_exclude_and_empty(void **state)
{
	(void)state;
	struct pl_selection s;
	struct pl_finding a[] = {mk("A", 1, PL_SEV_LOW, "x", 0, 1),
				 mk("B", 2, PL_SEV_LOW, "x", 0, 1)};
	const char *ex[] = {"A"};
	assert_string_equal(pick(a, 2, ex, 1, &s), "B");
	assert_non_null(strstr(s.why[0], "excluded"));
	pl_selection_release(&s);
	const char *ex2[] = {"A", "B"};
	assert_null(pick(a, 2, ex2, 2, &s));
	pl_selection_release(&s);
	assert_null(pick(a, 0, NULL, 0, &s));
	pl_selection_release(&s);
}

static void test_stop_gate(void **state)
{
	(void)state;
	struct pl_selection s;
	/* a level-1 non-algorithmic low finding would win on level; the gate
	 * makes only algorithmic ones eligible */
	struct pl_finding a[] = {mk("LOOP", 1, PL_SEV_LOW, "loop_count", 0, 1),
				 mk("ALG", 2, PL_SEV_HIGH, "complexity_exponent", 0, 0.8)};
	assert_string_equal(pick(a, 2, NULL, 0, &s), "ALG");
	assert_true(s.stop_gate);
	assert_non_null(strstr(s.why[0], "stop gate"));
	pl_selection_release(&s);
	/* a medium algorithmic finding does not close the gate */
	struct pl_finding b[] = {mk("LOOP", 1, PL_SEV_LOW, "loop_count", 0, 1),
				 mk("ALG", 2, PL_SEV_MEDIUM, "allocation_churn", 0, 0.8)};
	assert_string_equal(pick(b, 2, NULL, 0, &s), "LOOP");
	assert_false(s.stop_gate);
	pl_selection_release(&s);
}

static void test_level7_guard(void **state)
{
	(void)state;
	struct pl_selection s;
	struct pl_finding a[] = {mk("GPU", 7, PL_SEV_HIGH, "gpu_offload", 10, 1),
				 mk("MEM", 4, PL_SEV_LOW, "allocation_rate", 0, 0.3)};
	assert_string_equal(pick(a, 2, NULL, 0, &s), "MEM");
	pl_selection_release(&s);
	/* even when MEM is excluded (tried), GPU is then allowed: nothing open */
	const char *ex[] = {"MEM"};
	assert_string_equal(pick(a, 2, ex, 1, &s), "GPU");
	pl_selection_release(&s);
	/* only level 7 and 8 open: level 7 is fine */
	struct pl_finding b[] = {mk("GPU", 7, PL_SEV_HIGH, "gpu_offload", 0, 1),
				 mk("CACHE", 8, PL_SEV_HIGH, "cache", 0, 1)};
	assert_string_equal(pick(b, 2, NULL, 0, &s), "GPU");
	pl_selection_release(&s);
	/* a measured data-loading share above 0.3 blocks level 7 */
	struct pl_finding c[] = {mk("GPU", 7, PL_SEV_HIGH, "gpu_offload", 0, 1),
				 mk("DL", 8, PL_SEV_LOW, "data_loading_share", 0, 1)};
	c[1].status = PL_FST_MEASURED;
	c[1].metric_value = 0.42;
	c[1].has_metric_value = 1;
	assert_string_equal(pick(c, 2, NULL, 0, &s), "DL");
	assert_non_null(strstr(s.why[0], "data-loading share 0.42"));
	pl_selection_release(&s);
	c[1].metric_value = 0.2;
	assert_string_equal(pick(c, 2, NULL, 0, &s), "GPU");
	pl_selection_release(&s);
}

/* a training job: the import machinery and the autograd engine's entry
 * are context, a measured data-loading bottleneck ranks above every hot
 * function (the profile of a loop waiting 79% of its step for data chose
 * the torch import, then backward, before) */
static void test_training_ranking(void **state)
{
	(void)state;
	struct pl_selection s;
	struct pl_finding a[] = {mk("IMP", 1, PL_SEV_HIGH, "cpu_share", 2.5, 0.9),
				 mk("BWD", 1, PL_SEV_MEDIUM, "cpu_share", 1.4, 0.9),
				 mk("FWD", 1, PL_SEV_LOW, "cpu_share", 1.1, 0.9),
				 mk("DL", 3, PL_SEV_HIGH, "data_loading_share", 4.76, 0.9)};
	for (int i = 0; i < 3; i++) {
		a[i].leaf = (char *)"profile.hot-function";
		a[i].status = PL_FST_MEASURED;
	}
	a[0].path = (char *)"<frozen importlib._bootstrap>";
	a[0].function = (char *)"_call_with_frames_removed";
	a[1].path = (char *)"/usr/lib/python3/dist-packages/torch/_tensor.py";
	a[1].function = (char *)"backward";
	a[2].path = (char *)"train.py";
	a[2].function = (char *)"forward";
	a[3].leaf = (char *)"ml.data-loading-bound";
	a[3].status = PL_FST_MEASURED;
	a[3].metric_value = 0.79;
	a[3].has_metric_value = 1;
	assert_string_equal(pick(a, 4, NULL, 0, &s), "DL");
	assert_non_null(strstr(s.why[0], "Python's import machinery: context"));
	assert_non_null(strstr(s.why[1], "autograd engine"));
	assert_non_null(strstr(s.why[2], "measured bottleneck DL"));
	pl_selection_release(&s);
	/* data loading tried (excluded): the user's own hot function, never
	 * the machinery */
	const char *ex[] = {"DL"};
	assert_string_equal(pick(a, 4, ex, 1, &s), "FWD");
	pl_selection_release(&s);
	/* a data-loading share under the threshold is no bottleneck: level rules */
	a[3].metric_value = 0.2;
	assert_string_equal(pick(a, 4, NULL, 0, &s), "FWD");
	pl_selection_release(&s);
	/* a user's file named like a machinery folder is not machinery */
	a[2].path = (char *)"mythreading.py";
	assert_false(pl_finding_machinery(&a[2], NULL));
	a[2].path = (char *)"lib/threading.py";
	assert_true(pl_finding_machinery(&a[2], NULL));
}

static void test_finding_id_stable(void **state)
{
	(void)state;
	char a[16], b[16], c[16];
	pl_finding_id("py.nested-loop", "src/a.py", "f", "nested loop over xs", a);
	pl_finding_id("py.nested-loop", "src/a.py", "f", "nested loop over xs", b);
	pl_finding_id("py.nested-loop", "src/a.py", "g", "nested loop over xs", c);
	assert_string_equal(a, b);
	assert_string_not_equal(a, c);
	assert_int_equal(strlen(a), 15);
	assert_int_equal(strncmp(a, "PF-", 3), 0);
}

static const char *good_finding =
    "{\"id\":\"PF-1\",\"leaf\":\"py.x\",\"signal\":\"s\",\"severity\":\"high\","
    "\"status\":\"measured\",\"path\":\"a.py\",\"location\":{\"line\":3,\"column\":1,"
    "\"function\":\"f\"},\"metric\":{\"name\":\"complexity_exponent\",\"value\":2.0,"
    "\"unit\":\"exponent\"},\"evidence\":{\"text\":\"t\",\"numbers\":{\"ratio\":4.2}},"
    "\"confidence\":0.9,\"level\":1,\"suggested_action\":\"use a set\"}";

static void expect_error(const char *findings_array, const char *want)
{
	char path[] = "/tmp/perfloop-findings-XXXXXX";
	int fd = mkstemp(path);
	dprintf(fd,
		"{\"schema\":\"perfloop.findings/1\",\"tool\":\"t\",\"created\":\"x\","
		"\"findings\":%s}",
		findings_array);
	close(fd);
	struct pl_findings f = {0};
	struct pl_error err;
	int rc = pl_findings_load(path, &f, &err);
	unlink(path);
	if (!want) {
		assert_int_equal(rc, 0);
		assert_int_equal(f.n, 1);
		assert_true(f.v[0].has_ratio && f.v[0].ratio == 4.2);
		assert_string_equal(f.v[0].function, "f");
		pl_findings_release(&f);
		return;
	}
	assert_int_equal(rc, PL_EINPUT);
	assert_int_equal(f.n, 0);
	if (!strstr(err.msg, want))
		fail_msg("'%s' lacks '%s'", err.msg, want);
}

static char *replace(const char *s, const char *from, const char *to)
{
	static char buf[2048];
	const char *p = strstr(s, from);
	assert_non_null(p);
	snprintf(buf, sizeof(buf), "[%.*s%s%s]", (int)(p - s), s, to, p + strlen(from));
	return buf;
}

static void test_findings_validation(void **state)
{
	(void)state;
	char ok[2048];
	snprintf(ok, sizeof(ok), "[%s]", good_finding);
	expect_error(ok, NULL);
	expect_error(replace(good_finding, "\"high\"", "\"urgent\""),
		     "findings[0].severity: expected one of critical|high|medium|low");
	expect_error(replace(good_finding, "\"measured\"", "\"guessed\""),
		     "findings[0].status: expected one of statically_confirmed");
	expect_error(replace(good_finding, "\"level\":1", "\"level\":9"), "findings[0].level");
	expect_error(replace(good_finding, "\"confidence\":0.9", "\"confidence\":1.5"),
		     "findings[0].confidence");
	expect_error(replace(good_finding, "\"id\":\"PF-1\",", ""), "findings[0].id: missing");
	expect_error(replace(good_finding, "\"line\":3", "\"line\":-3"),
		     "findings[0].location.line");
	expect_error(replace(good_finding, "\"ratio\":4.2", "\"ratio\":\"big\""),
		     "findings[0].evidence.numbers.ratio");
	char two[4096];
	snprintf(two, sizeof(two), "[%s,%s]", good_finding, "{\"id\":\"x\"}");
	expect_error(two, "findings[1].leaf");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_rank_order),	      cmocka_unit_test(test_exclude_and_empty),
	    cmocka_unit_test(test_stop_gate),	      cmocka_unit_test(test_level7_guard),
	    cmocka_unit_test(test_finding_id_stable), cmocka_unit_test(test_findings_validation),
	    cmocka_unit_test(test_training_ranking),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
