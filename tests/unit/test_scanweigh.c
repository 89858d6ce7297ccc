/* Unit tests for src/scan/scanweigh.c: findings weighed by a folded
 * profile, by line where the profile has lines and by function where it
 * has not; recursion counted once; a finding the profile never ran kept
 * and marked; a file that is not folded stacks refused with its line. */
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "testutil.h"

#include "scan.h"
#include "scanweigh.h"

static void add_finding(struct pl_scan_file *f, const char *leaf, const char *func, long line)
{
	f->findings.v = realloc(f->findings.v, (f->findings.n + 1) * sizeof *f->findings.v);
	struct pl_finding *x = &f->findings.v[f->findings.n++];
	memset(x, 0, sizeof *x);
	x->id = strdup("PF-000000000001");
	x->leaf = strdup(leaf);
	x->signal = strdup("a pattern");
	x->path = strdup(f->path);
	x->function = strdup(func);
	x->suggested_action = strdup("fix it");
	x->metric_name = strdup("anti_pattern");
	x->evidence_text = strdup("code");
	x->severity = PL_SEV_MEDIUM;
	x->status = PL_FST_STATIC;
	x->line = line;
	x->confidence = 0.8;
	x->level = 5;
}

static void write_file(const char *path, const char *text)
{
	FILE *f = fopen(path, "w");
	assert_non_null(f);
	fputs(text, f);
	fclose(f);
}

static void test_by_line(void **state)
{
	(void)state;
	char dir[] = "/tmp/pl-weigh-XXXXXX";
	assert_non_null(mkdtemp(dir));
	assert_int_equal(chdir(dir), 0);
	write_file("train.py", "x\n");
	struct pl_scan_file f = {0};
	f.path = strdup("train.py");
	add_finding(&f, "PY010", "train", 12);  /* hot: 40 of 100 samples */
	add_finding(&f, "PY003", "train", 20);  /* 1 of 100 */
	add_finding(&f, "PY004", "helper", 30); /* never run */
	/* a profile taken elsewhere, paths relative to its root; lines vary
	 * within train (12, 15, 20): a --lines profile; train recursing on
	 * line 12 counts its stack once */
	write_file("p.folded", "<module> (proj/train.py:1);Trainer.train (proj/train.py:12);"
			       "Trainer.train (proj/train.py:12);item (torch/_tensor.py:5) 40\n"
			       "<module> (proj/train.py:1);Trainer.train (proj/train.py:15) 59\n"
			       "<module> (proj/train.py:1);Trainer.train (proj/train.py:20) 1\n");
	struct pl_weigh_summary s;
	struct pl_error err;
	assert_int_equal(pl_scan_weigh(&f, 1, "p.folded", -1, &s, &err), PL_OK);
	assert_true(s.has_lines);
	assert_close(s.samples, 100, 1e-9);
	assert_close(s.explained, 41, 1e-9);
	assert_int_equal(s.measured, 2);
	assert_int_equal(s.unseen, 1);
	struct pl_finding *a = &f.findings.v[0], *b = &f.findings.v[1], *c = &f.findings.v[2];
	assert_close(pl_finding_profile_share(a), 0.40, 1e-9);
	assert_int_equal(a->severity, PL_SEV_CRITICAL);
	assert_int_equal(a->status, PL_FST_MEASURED);
	assert_close(json_real_value(json_object_get(a->evidence_numbers, "function_share")), 1.0,
		     1e-9);
	assert_close(pl_finding_profile_share(b), 0.01, 1e-9);
	assert_int_equal(b->severity, PL_SEV_LOW);
	assert_true(pl_finding_profile_share(c) < 0);
	assert_int_equal(c->severity, PL_SEV_MEDIUM); /* as the rule said */
	assert_non_null(strstr(c->severity_note, "not seen in the profile"));
	pl_scan_file_release(&f);

	/* without --lines: each frame at its function's first line: the
	 * function's share decides */
	memset(&f, 0, sizeof f);
	f.path = strdup("train.py");
	add_finding(&f, "PY010", "train", 12);
	write_file("q.folded", "main (train.py:1);train (train.py:10);op (lib.py:3) 30\n"
			       "main (train.py:1);other (train.py:40) 70\n");
	assert_int_equal(pl_scan_weigh(&f, 1, "q.folded", -1, &s, &err), PL_OK);
	assert_false(s.has_lines);
	assert_close(pl_finding_profile_share(&f.findings.v[0]), 0.30, 1e-9);
	assert_int_equal(f.findings.v[0].severity, PL_SEV_CRITICAL);
	assert_close(s.explained, 30, 1e-9);
	/* told it has lines (profile --lines --scan): the line's share, 0 */
	pl_scan_file_release(&f);
	memset(&f, 0, sizeof f);
	f.path = strdup("train.py");
	add_finding(&f, "PY010", "train", 12);
	assert_int_equal(pl_scan_weigh(&f, 1, "q.folded", 1, &s, &err), PL_OK);
	assert_true(s.has_lines);
	assert_close(pl_finding_profile_share(&f.findings.v[0]), 0.0, 1e-9);

	/* not folded stacks: the line that is not */
	write_file("bad.folded", "a;b 3\nthis is not a profile\n");
	assert_int_equal(pl_scan_weigh(&f, 1, "bad.folded", -1, &s, &err), PL_EINPUT);
	assert_non_null(strstr(err.msg, "bad.folded:2:"));
	assert_int_equal(pl_scan_weigh(&f, 1, "missing.folded", -1, &s, &err), PL_EINPUT);
	assert_non_null(strstr(err.msg, "option '--profile'"));
	pl_scan_file_release(&f);
	unlink("train.py");
	unlink("p.folded");
	unlink("q.folded");
	unlink("bad.folded");
	assert_int_equal(chdir("/"), 0);
	rmdir(dir);
}

/* pl_scan_weigh_hot: an advisory rule's finding (PY002) stays where the
 * profile measured it at 2% or more; one under that goes, and what the
 * findings explain is counted without it; other rules' findings stay
 * whatever their share, as pl_scan_weigh keeps them. */
static void test_advisory_kept_where_hot(void **state)
{
	(void)state;
	char dir[] = "/tmp/pl-weigh-hot-XXXXXX";
	assert_non_null(mkdtemp(dir));
	assert_int_equal(chdir(dir), 0);
	write_file("train.py", "x\n");
	struct pl_rules rules = {0};
	struct pl_error err;
	assert_int_equal(pl_rules_load(&rules, &err), 0);
	struct pl_scan_file f = {0};
	f.path = strdup("train.py");
	add_finding(&f, "PY002", "train", 12); /* advisory, 40 of 100: kept */
	add_finding(&f, "PY004", "train", 15); /* on by default, 1 of 100 */
	add_finding(&f, "PY002", "train", 20); /* advisory, 1 of 100: goes */
	add_finding(&f, "PY002", "helper", 30); /* advisory, never run: goes */
	write_file("p.folded", "<module> (train.py:1);train (train.py:12) 40\n"
			       "<module> (train.py:1);train (train.py:15) 1\n"
			       "<module> (train.py:1);train (train.py:20) 1\n"
			       "<module> (train.py:1);train (train.py:25) 58\n");
	struct pl_weigh_summary s;
	assert_int_equal(pl_scan_weigh_hot(&f, 1, "p.folded", -1, &rules, &s, &err), PL_OK);
	assert_int_equal(f.findings.n, 2);
	assert_string_equal(f.findings.v[0].leaf, "PY002");
	assert_int_equal(f.findings.v[0].line, 12);
	assert_int_equal(f.findings.v[0].severity, PL_SEV_CRITICAL);
	assert_string_equal(f.findings.v[1].leaf, "PY004");
	assert_int_equal(f.findings.v[1].severity, PL_SEV_LOW);
	assert_int_equal(s.cold_advisory, 2);
	assert_int_equal(s.measured, 2);
	assert_int_equal(s.unseen, 0);
	assert_close(s.samples, 100, 1e-9);
	assert_close(s.explained, 41, 1e-9); /* lines 12 and 15, not 20 */
	pl_scan_file_release(&f);
	/* without the rules (--advisory): every finding stays */
	memset(&f, 0, sizeof f);
	f.path = strdup("train.py");
	add_finding(&f, "PY002", "train", 20);
	assert_int_equal(pl_scan_weigh_hot(&f, 1, "p.folded", -1, NULL, &s, &err), PL_OK);
	assert_int_equal(f.findings.n, 1);
	assert_int_equal(s.cold_advisory, 0);
	assert_close(s.explained, 1, 1e-9);
	pl_scan_file_release(&f);
	pl_rules_release(&rules);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_by_line),
	    cmocka_unit_test(test_advisory_kept_where_hot),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
