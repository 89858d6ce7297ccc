/* Unit tests for src/scan/scancache.c: keys that change with everything a
 * result depends on, a round trip, and entries that must not be served
 * (damaged, another file's, written by another perfloop or rule set). */
#include <limits.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "testutil.h"

#include "hash.h"
#include "scan.h"
#include "scancache.h"

/* A cache in a fresh directory (cwd there: no .git above /tmp). */
static void open_cache(struct pl_scan_cache *c, uint64_t salt, char *dir, size_t len)
{
	snprintf(dir, len, "/tmp/pl-scancache-XXXXXX");
	assert_non_null(mkdtemp(dir));
	assert_int_equal(chdir(dir), 0);
	assert_int_equal(pl_scan_cache_init(c, salt), 0);
	assert_non_null(c->dir);
	char ign[PATH_MAX];
	snprintf(ign, sizeof ign, "%s/.perfloop/.gitignore", dir);
	struct stat st;
	assert_int_equal(stat(ign, &st), 0); /* git ignores the whole cache */
}

static struct pl_scan_file file(const char *path, const char *text)
{
	struct pl_scan_file f = {0};
	f.path = strdup(path);
	f.text = strdup(text);
	f.len = strlen(text);
	return f;
}

static void one_finding(struct pl_scan_file *f)
{
	f->findings.v = calloc(1, sizeof *f->findings.v);
	struct pl_finding *x = &f->findings.v[0];
	x->id = strdup("PF-000000000001");
	x->leaf = strdup("PY010");
	x->signal = strdup(".item() inside a training loop");
	x->path = strdup(f->path);
	x->function = strdup("train");
	x->suggested_action = strdup("read it every N steps");
	x->metric_name = strdup("anti_pattern");
	x->evidence_text = strdup("loss.item()");
	x->severity_note = strdup("rated low, not medium: in test code");
	x->severity = PL_SEV_LOW;
	x->status = PL_FST_STATIC;
	x->line = 7;
	x->column = 9;
	x->confidence = 0.8;
	x->level = 5;
	f->findings.n = 1;
	f->lines = 12;
	f->error_nodes = 1;
	f->warnings = strdup("a.py:3: unused suppression of PY003\n");
}

static void test_keys(void **state)
{
	(void)state;
	struct pl_scan_cache a = {.salt = 1}, b = {.salt = 2};
	struct pl_scan_file f = file("a.py", "x = 1\n"), g = file("b.py", "x = 1\n"),
			    h = file("a.py", "x = 2\n");
	char k1[33], k2[33], k3[33], k4[33], k5[33];
	pl_scan_cache_key(&a, &f, k1);
	pl_scan_cache_key(&a, &f, k5);
	pl_scan_cache_key(&b, &f, k2); /* other rules, options or perfloop */
	pl_scan_cache_key(&a, &g, k3); /* other path, same text */
	pl_scan_cache_key(&a, &h, k4); /* one byte changed */
	assert_string_equal(k1, k5);
	assert_int_equal(strlen(k1), 32);
	assert_string_not_equal(k1, k2);
	assert_string_not_equal(k1, k3);
	assert_string_not_equal(k1, k4);
	/* the salt's parts: each changes it */
	uint64_t s = pl_scan_cache_salt(PL_FNV_INIT, "rules");
	assert_true(pl_scan_cache_salt(s, "advisory") != pl_scan_cache_salt(s, ""));
	assert_true(pl_scan_cache_self(s) != s);
	assert_true(pl_scan_cache_self(s) == pl_scan_cache_self(s));
	pl_scan_file_release(&f);
	pl_scan_file_release(&g);
	pl_scan_file_release(&h);
}

static void test_round_trip_and_misses(void **state)
{
	(void)state;
	char dir[64], key[33], other[33];
	struct pl_scan_cache c;
	open_cache(&c, 42, dir, sizeof dir);
	struct pl_scan_file f = file("pkg/tests/a.py", "for x in y:\n    loss.item()\n");
	pl_scan_cache_key(&c, &f, key);
	struct pl_scan_file got = file(f.path, f.text);
	assert_int_equal(pl_scan_cache_get(&c, key, &got), 0); /* empty cache */
	one_finding(&f);
	pl_scan_cache_put(&c, key, &f);
	assert_int_equal(pl_scan_cache_get(&c, key, &got), 1); /* kept, not saved yet */
	pl_scan_file_release(&got);
	assert_int_equal(pl_scan_cache_save(&c), 0);
	/* a later scan (a new cache object) reads what was saved */
	struct pl_scan_cache again;
	assert_int_equal(pl_scan_cache_init(&again, 42), 0);
	got = file(f.path, f.text);
	assert_int_equal(pl_scan_cache_get(&again, key, &got), 1);
	pl_scan_cache_release(&again);
	assert_int_equal(got.lines, 12);
	assert_int_equal(got.error_nodes, 1);
	assert_string_equal(got.warnings, f.warnings);
	assert_int_equal(got.findings.n, 1);
	struct pl_finding *x = &got.findings.v[0];
	assert_string_equal(x->leaf, "PY010");
	assert_string_equal(x->severity_note, "rated low, not medium: in test code");
	assert_int_equal(x->severity, PL_SEV_LOW);
	assert_int_equal(x->line, 7);
	assert_int_equal(x->column, 9);
	pl_scan_file_release(&got);

	/* another cache (other rules, options or perfloop) does not see it */
	struct pl_scan_cache c2;
	assert_int_equal(pl_scan_cache_init(&c2, 43), 0);
	pl_scan_cache_key(&c2, &f, other);
	got = file(f.path, f.text);
	assert_int_equal(pl_scan_cache_get(&c2, other, &got), 0);
	/* an entry under the key whose path or length differ: not served */
	struct pl_scan_file moved = file("pkg/a.py", f.text);
	assert_int_equal(pl_scan_cache_get(&c, key, &moved), 0);
	pl_scan_file_release(&moved);
	/* a damaged file reads as empty; an entry that is not one is a miss */
	FILE *fp = fopen(c.file, "w");
	assert_non_null(fp);
	fputs("{\"format\": 1, \"entries\": {\"", fp);
	fclose(fp);
	struct pl_scan_cache damaged;
	assert_int_equal(pl_scan_cache_init(&damaged, 42), 0);
	assert_int_equal(pl_scan_cache_get(&damaged, key, &got), 0);
	pl_scan_cache_release(&damaged);
	fp = fopen(c.file, "w");
	fprintf(fp, "{\"format\": 1, \"entries\": {\"%s\": {\"path\": \"pkg/tests/a.py\", \"len\": %zu, "
		    "\"lines\": 1, \"errors\": 0, \"findings\": [{\"leaf\": \"PY010\"}]}}}",
		key, f.len);
	fclose(fp);
	assert_int_equal(pl_scan_cache_init(&damaged, 42), 0);
	assert_int_equal(pl_scan_cache_get(&damaged, key, &got), 0); /* a finding that is not one */
	pl_scan_cache_release(&damaged);
	assert_int_equal(got.findings.n, 0);
	pl_scan_file_release(&got);
	pl_scan_file_release(&f);
	pl_scan_cache_release(&c);
	pl_scan_cache_release(&c2);
	char cmd[128];
	snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
	assert_int_equal(system(cmd), 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_keys),
	    cmocka_unit_test(test_round_trip_and_misses),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
