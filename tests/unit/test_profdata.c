/*
 * The profile in memory and what is written from it: self/total counts
 * (recursion counted once), folded lines, speedscope structure, the flame
 * graph's frames and widths, findings thresholds.
 */
#include "testutil.h"

#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "error.h"
#include "envfind.h"
#include "findings.h"
#include "profdata.h"
#include "strbuf.h"
#include "torchops.h"

/* main -> a -> b (3 samples), main -> a (2), main -> r -> r -> r (5) */
static void build(struct pl_prof *p, long id[5])
{
	memset(p, 0, sizeof *p);
	id[0] = pl_prof_frame(p, "main", "/src/app.py", 1, 1, 0);
	id[1] = pl_prof_frame(p, "a", "/src/app.py", 10, 10, 0);
	id[2] = pl_prof_frame(p, "b;x", "/src/lib.py", 20, 20, 0);
	id[3] = pl_prof_frame(p, "r", "/src/app.py", 30, 30, 0);
	id[4] = pl_prof_frame(p, "main", "/src/app.py", 1, 1, 0); /* interned again */
	uint32_t s1[] = {(uint32_t)id[0], (uint32_t)id[1], (uint32_t)id[2]};
	uint32_t s2[] = {(uint32_t)id[0], (uint32_t)id[1]};
	uint32_t s3[] = {(uint32_t)id[0], (uint32_t)id[3], (uint32_t)id[3], (uint32_t)id[3]};
	assert_int_equal(pl_prof_add(p, s1, 3, 2), 0);
	assert_int_equal(pl_prof_add(p, s2, 2, 2), 0);
	assert_int_equal(pl_prof_add(p, s3, 4, 5), 0);
	assert_int_equal(pl_prof_add(p, s1, 3, 1), 0); /* merges with the first */
}

static void frames_intern_and_stacks_merge(void **state)
{
	(void)state;
	struct pl_prof p;
	long id[5];
	build(&p, id);
	assert_int_equal(id[4], id[0]);
	assert_int_equal(p.nframes, 4);
	assert_int_equal(p.nstacks, 3);
	assert_int_equal(p.samples, 10);
	uint64_t *self, *total;
	assert_int_equal(pl_prof_totals(&p, &self, &total), 0);
	assert_int_equal(self[id[0]], 0);
	assert_int_equal(total[id[0]], 10);
	assert_int_equal(self[id[1]], 2);
	assert_int_equal(total[id[1]], 5);
	assert_int_equal(self[id[2]], 3);
	assert_int_equal(self[id[3]], 5);
	assert_int_equal(total[id[3]], 5); /* recursion counted once per sample */
	free(self);
	free(total);
	pl_prof_release(&p);
}

static void folded_is_sorted_root_first_and_escapes_semicolons(void **state)
{
	(void)state;
	struct pl_prof p;
	long id[5];
	build(&p, id);
	char *f = pl_prof_folded(&p);
	assert_string_equal(f, "main (/src/app.py:1);a (/src/app.py:10) 2\n"
			       "main (/src/app.py:1);a (/src/app.py:10);b,x (/src/lib.py:20) 3\n"
			       "main (/src/app.py:1);r (/src/app.py:30);r (/src/app.py:30);r "
			       "(/src/app.py:30) 5\n");
	free(f);
	pl_prof_release(&p);
}

static int cmp_line(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/* n seeded random stacks of 1 to maxdepth (at most 12) of the 8 frames
 * id, each counted 1 to maxcount times */
static void add_random_stacks(struct pl_prof *p, const long id[8], int n, size_t maxdepth,
			      unsigned maxcount, unsigned seed)
{
	for (int k = 0; k < n; k++) {
		uint32_t st[12];
		seed = seed * 1103515245u + 12345u;
		size_t depth = 1 + (seed >> 16) % maxdepth;
		for (size_t i = 0; i < depth; i++) {
			seed = seed * 1103515245u + 12345u;
			st[i] = (uint32_t)id[(seed >> 16) % 8];
		}
		assert_int_equal(pl_prof_add(p, st, depth, 1 + (seed >> 8) % maxcount), 0);
	}
}

/* The folded writer sorts through cursors over the frames' labels, never
 * making the lines: its order must be that of the lines themselves, with
 * labels that hold spaces, one label a prefix of another, two frames
 * whose labels are equal once ';' is escaped, stacks prefixes of others
 * and counts that differ; the file written and the string the same. */
static void folded_order_is_the_lines_order(void **state)
{
	(void)state;
	struct pl_prof p;
	memset(&p, 0, sizeof p);
	/* synthetic frames are labelled by name alone: "a" ends where "a !"
	 * goes on with a byte below the count's digits; "a;b" and "a,b" are
	 * one label once escaped */
	const char *names[] = {"a", "a !", "ab", "a;b", "a,b", "b [inlined]", "~", " "};
	const int synthetic[] = {1, 1, 0, 1, 1, 0, 1, 0};
	long id[8];
	for (int i = 0; i < 8; i++)
		id[i] = pl_prof_frame(&p, names[i], "f.c", i % 3, 1, synthetic[i]);
	add_random_stacks(&p, id, 3000, 6, 20, 7);
	char *text = pl_prof_folded(&p);
	assert_non_null(text);
	size_t n = 0;
	char **lines = malloc((p.nstacks + 1) * sizeof *lines);
	for (char *l = strtok(strdup(text), "\n"); l; l = strtok(NULL, "\n"))
		lines[n++] = l;
	assert_int_equal(n, p.nstacks);
	char **sorted = malloc(n * sizeof *sorted);
	memcpy(sorted, lines, n * sizeof *sorted);
	qsort(sorted, n, sizeof *sorted, cmp_line);
	for (size_t i = 0; i < n; i++)
		assert_string_equal(lines[i], sorted[i]);
	char path[] = "/tmp/perfloop-folded-XXXXXX";
	int fd = mkstemp(path);
	assert_true(fd >= 0);
	assert_int_equal(pl_prof_folded_fd(&p, fd), 0);
	off_t size = lseek(fd, 0, SEEK_END);
	assert_int_equal((size_t)size, strlen(text));
	char *back = malloc((size_t)size + 1);
	assert_int_equal(pread(fd, back, (size_t)size, 0), size);
	back[size] = '\0';
	assert_string_equal(back, text);
	close(fd);
	unlink(path);
	free(back);
	free(lines[0]);
	free(lines);
	free(sorted);
	free(text);
	pl_prof_release(&p);
}

static void speedscope_samples_index_frames(void **state)
{
	(void)state;
	struct pl_prof p;
	long id[5];
	build(&p, id);
	char *text = pl_prof_speedscope(&p, "t", "perfloop test");
	json_error_t e;
	json_t *d = json_loads(text, 0, &e);
	assert_non_null(d);
	assert_string_equal(json_string_value(json_object_get(d, "$schema")),
			    "https://www.speedscope.app/file-format-schema.json");
	json_t *frames = json_object_get(json_object_get(d, "shared"), "frames");
	assert_int_equal(json_array_size(frames), 4);
	json_t *prof = json_array_get(json_object_get(d, "profiles"), 0);
	assert_string_equal(json_string_value(json_object_get(prof, "type")), "sampled");
	assert_int_equal(json_integer_value(json_object_get(prof, "endValue")), 10);
	json_t *samples = json_object_get(prof, "samples"), *w = json_object_get(prof, "weights");
	assert_int_equal(json_array_size(samples), json_array_size(w));
	json_int_t sum = 0;
	size_t i;
	json_t *v;
	json_array_foreach(w, i, v) sum += json_integer_value(v);
	assert_int_equal(sum, 10);
	/* the first stack: root first */
	json_t *s0 = json_array_get(samples, 0);
	assert_int_equal(json_integer_value(json_array_get(s0, 0)), id[0]);
	assert_int_equal(json_integer_value(json_array_get(s0, 2)), id[2]);
	json_decref(d);
	free(text);
	pl_prof_release(&p);
}

static size_t count(const char *s, const char *what)
{
	size_t n = 0;
	for (const char *p = strstr(s, what); p; p = strstr(p + 1, what))
		n++;
	return n;
}

static void svg_has_one_frame_per_tree_node(void **state)
{
	(void)state;
	struct pl_prof p;
	long id[5];
	build(&p, id);
	char *svg = pl_prof_svg(&p, "title <&>", "sub");
	/* all, main, a, b, r, r, r: 7 nodes */
	assert_int_equal(count(svg, "<g class=\"f\""), 7);
	assert_non_null(strstr(svg, "title &lt;&amp;&gt;"));
	assert_non_null(strstr(svg, "data-x=\"0\" data-w=\"10\" data-d=\"0\""));
	/* children in name order: a (5 samples) at 0, r (5) at 5 */
	assert_non_null(strstr(svg, "data-x=\"0\" data-w=\"5\" data-d=\"2\"><title>a "));
	assert_non_null(strstr(svg, "data-x=\"5\" data-w=\"5\" data-d=\"2\"><title>r "));
	assert_non_null(strstr(svg, "data-x=\"5\" data-w=\"5\" data-d=\"4\"><title>r "));
	free(svg);
	pl_prof_release(&p);
}

static char *read_all(const char *path)
{
	FILE *f = fopen(path, "rb");
	assert_non_null(f);
	fseek(f, 0, SEEK_END);
	long n = ftell(f);
	rewind(f);
	char *s = malloc((size_t)n + 1);
	assert_int_equal(fread(s, 1, (size_t)n, f), (size_t)n);
	s[n] = '\0';
	fclose(f);
	return s;
}

/* The outputs written as they are made (pl_prof_write, spilled every
 * 64 KiB) are the texts made whole, byte for byte, over many more bytes
 * than one spill; speedscope's stays valid JSON whatever the names hold
 * (quotes, backslashes, control characters, bytes that are not UTF-8). */
static void streamed_outputs_are_the_texts(void **state)
{
	(void)state;
	struct pl_prof p;
	memset(&p, 0, sizeof p);
	const char *names[] = {"plain", "q\"uote", "back\\slash", "tab\there", "bad\xff\376byte",
			       "caf\xc3\xa9 \xf0\x9f\x94\xa5", "cut\xe2\x82", "<&>"};
	long id[8];
	for (int i = 0; i < 8; i++)
		id[i] = pl_prof_frame(&p, names[i], i % 2 ? "/src/a\"b.py" : "/src/x.c", i, 1, i == 7);
	add_random_stacks(&p, id, 12000, 12, 9, 11);
	char dir[] = "/tmp/perfloop-out-XXXXXX";
	assert_non_null(mkdtemp(dir));
	char path[64];
	snprintf(path, sizeof path, "%s/out", dir);
	struct pl_error err;
	struct pl_prof_out how[] = {
	    {.kind = PL_OUT_FOLDED},
	    {.kind = PL_OUT_SVG, .title = "t <1>", .subtitle = "s"},
	    {.kind = PL_OUT_SVG, .title = "t", .subtitle = "s", .min_px = 0.1},
	    {.kind = PL_OUT_SPEEDSCOPE, .title = "n\"ame", .subtitle = "perfloop test"},
	};
	for (size_t k = 0; k < sizeof how / sizeof how[0]; k++) {
		char *want = how[k].kind == PL_OUT_FOLDED ? pl_prof_folded(&p)
			     : how[k].kind == PL_OUT_SVG
				 ? pl_prof_svg_min(&p, how[k].title, how[k].subtitle, how[k].min_px)
				 : pl_prof_speedscope(&p, how[k].title, how[k].subtitle);
		assert_non_null(want);
		assert_true(strlen(want) > PL_STRBUF_CHUNK); /* more than one spill */
		assert_int_equal(pl_prof_write(&p, &how[k], path, &err), 0);
		char *got = read_all(path);
		assert_string_equal(got, want);
		free(got);
		free(want);
	}
	/* the speedscope file read back: names as given, the bytes that are
	 * not UTF-8 as U+FFFD */
	json_error_t je;
	json_t *d = json_load_file(path, 0, &je);
	assert_non_null(d);
	json_t *frames = json_object_get(json_object_get(d, "shared"), "frames");
	assert_int_equal(json_array_size(frames), 8);
	const char *want[] = {"plain", "q\"uote", "back\\slash", "tab\there",
			      "bad\xef\xbf\xbd\xef\xbf\275byte", "caf\xc3\xa9 \xf0\x9f\x94\xa5",
			      "cut\xef\xbf\xbd\xef\xbf\xbd", "<&>"};
	for (size_t i = 0; i < 8; i++) {
		json_t *f = json_array_get(frames, (size_t)id[i]);
		assert_string_equal(json_string_value(json_object_get(f, "name")), want[i]);
		assert_true(i == 7 ? !json_object_get(f, "file")
				   : json_integer_value(json_object_get(f, "line")) == (json_int_t)i);
	}
	json_t *prof = json_array_get(json_object_get(d, "profiles"), 0);
	assert_string_equal(json_string_value(json_object_get(prof, "name")), "n\"ame");
	assert_int_equal(json_array_size(json_object_get(prof, "samples")), p.nstacks);
	json_decref(d);
	unlink(path);
	rmdir(dir);
	pl_prof_release(&p);
}

/* A spilled buffer whose write fails says so, with the write's errno. */
static void spill_failure_is_reported(void **state)
{
	(void)state;
	int fd = open("/dev/full", O_WRONLY);
	if (fd < 0)
		skip();
	struct pl_strbuf b = pl_strbuf_to_fd(fd);
	for (int i = 0; i < 20000; i++)
		pl_strbuf_puts(&b, "0123456789");
	pl_strbuf_spill(&b, PL_STRBUF_CHUNK);
	assert_true(b.failed);
	pl_strbuf_puts(&b, "more"); /* a no-op now */
	errno = 0;
	assert_int_equal(pl_strbuf_finish_fd(&b), -1);
	assert_int_equal(errno, ENOSPC);
	close(fd);
}

static void findings_above_the_share_threshold(void **state)
{
	(void)state;
	struct pl_prof p;
	long id[5];
	build(&p, id);
	struct pl_findings f = {0};
	assert_int_equal(pl_prof_findings(&p, 0.25, 10, 1000, "/src", &f), 0);
	assert_int_equal(f.n, 2); /* r 50%, b 30%; a 20% is below */
	assert_string_equal(f.v[0].function, "r");
	assert_string_equal(f.v[0].path, "app.py");
	assert_int_equal(f.v[0].severity, PL_SEV_HIGH);
	assert_int_equal(f.v[0].status, PL_FST_MEASURED);
	assert_close(f.v[0].metric_value, 0.5, 1e-12);
	assert_close(f.v[0].ratio, 2.0, 1e-12);
	assert_string_equal(f.v[1].function, "b;x");
	assert_int_equal(f.v[1].severity, PL_SEV_MEDIUM);
	pl_findings_release(&f);
	pl_prof_release(&p);
}

/* env.reference-blas: samples whose innermost frame is in Debian's
 * reference BLAS (its alternative's directory), 5% of them or more */
static void reference_blas_proved_by_its_frames(void **state)
{
	(void)state;
	struct pl_prof p = {0};
	long mm = pl_prof_frame(&p, "matmul", "train.py", 3, 3, 0);
	long gemm = pl_prof_frame(&p, "sgemm_", "/usr/lib/x86_64-linux-gnu/blas/libblas.so.3.11.0",
				  0, 0, 0);
	long other = pl_prof_frame(&p, "step", "train.py", 9, 9, 0);
	uint32_t a[] = {(uint32_t)mm, (uint32_t)gemm}, b[] = {(uint32_t)other};
	assert_int_equal(pl_prof_add(&p, a, 2, 40), 0);
	assert_int_equal(pl_prof_add(&p, b, 1, 60), 0);
	struct pl_findings f = {0};
	assert_int_equal(pl_prof_env_findings(&p, &f), 1);
	assert_int_equal(f.n, 1);
	assert_string_equal(f.v[0].leaf, "env.reference-blas");
	assert_close(f.v[0].metric_value, 0.40, 1e-12);
	assert_int_equal(f.v[0].severity, PL_SEV_HIGH);
	assert_int_equal(f.v[0].level, 8);
	assert_non_null(strstr(f.v[0].suggested_action, "libopenblas0-pthread"));
	pl_findings_release(&f);
	pl_prof_release(&p);
	/* an optimised one, or too little time in it: nothing */
	memset(&p, 0, sizeof p);
	mm = pl_prof_frame(&p, "matmul", "train.py", 3, 3, 0);
	gemm = pl_prof_frame(&p, "sgemm_", "/usr/lib/x86_64-linux-gnu/blas/libblas.so.3.11.0", 0,
			     0, 0);
	long ob = pl_prof_frame(&p, "sgemm_kernel",
				"/usr/lib/x86_64-linux-gnu/openblas-pthread/libblas.so.3", 0, 0, 0);
	uint32_t c[] = {(uint32_t)mm, (uint32_t)gemm}, d[] = {(uint32_t)mm, (uint32_t)ob};
	assert_int_equal(pl_prof_add(&p, c, 2, 4), 0);
	assert_int_equal(pl_prof_add(&p, d, 2, 96), 0);
	assert_int_equal(pl_prof_env_findings(&p, &f), 0);
	assert_int_equal(f.n, 0);
	pl_prof_release(&p);
}

/* libtorch's frames by operator: each sample to its innermost at::_ops
 * frame (mm under matmul), most samples first */
static void torch_operators_innermost_first(void **state)
{
	(void)state;
	char op[96];
	assert_true(pl_torch_op_name("at::_ops::mm::call(at::Tensor const&, at::Tensor const&)", op,
				     sizeof op));
	assert_string_equal(op, "mm");
	assert_true(pl_torch_op_name("at::Tensor at::_ops::addmm::redispatch(c10::DispatchKeySet)",
				     op, sizeof op));
	assert_string_equal(op, "addmm");
	assert_false(pl_torch_op_name("at::native::mm_out", op, sizeof op));
	assert_false(pl_torch_op_name("my_ops::at::_ops::x", op, sizeof op));
	struct pl_prof p = {0};
	long py = pl_prof_frame(&p, "forward", "model.py", 3, 3, 0);
	long mat = pl_prof_frame(&p, "at::_ops::matmul::call(at::Tensor const&)", "libtorch_cpu.so",
				 0, 0, 0);
	long mm = pl_prof_frame(&p, "at::_ops::mm::call(at::Tensor const&)", "libtorch_cpu.so", 0,
				0, 0);
	long gemm = pl_prof_frame(&p, "sgemm_", "libblas.so.3", 0, 0, 0);
	long relu = pl_prof_frame(&p, "at::_ops::relu::call(at::Tensor const&)",
				  "libtorch_cpu.so", 0, 0, 0);
	uint32_t a[] = {(uint32_t)py, (uint32_t)mat, (uint32_t)mm, (uint32_t)gemm},
		 b[] = {(uint32_t)py, (uint32_t)mat}, c[] = {(uint32_t)py, (uint32_t)relu},
		 d[] = {(uint32_t)py};
	assert_int_equal(pl_prof_add(&p, a, 4, 70), 0);
	assert_int_equal(pl_prof_add(&p, b, 2, 5), 0);
	assert_int_equal(pl_prof_add(&p, c, 2, 10), 0);
	assert_int_equal(pl_prof_add(&p, d, 1, 15), 0);
	struct pl_torch_op *ops;
	size_t n;
	assert_int_equal(pl_torch_ops(&p, &ops, &n), 0);
	assert_int_equal(n, 3);
	assert_string_equal(ops[0].name, "mm");
	assert_int_equal(ops[0].samples, 70);
	assert_string_equal(ops[1].name, "relu");
	assert_int_equal(ops[1].samples, 10);
	assert_string_equal(ops[2].name, "matmul");
	assert_int_equal(ops[2].samples, 5);
	free(ops);
	pl_prof_release(&p);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(torch_operators_innermost_first),
	    cmocka_unit_test(reference_blas_proved_by_its_frames),
	    cmocka_unit_test(frames_intern_and_stacks_merge),
	    cmocka_unit_test(folded_is_sorted_root_first_and_escapes_semicolons),
	    cmocka_unit_test(folded_order_is_the_lines_order),
	    cmocka_unit_test(speedscope_samples_index_frames),
	    cmocka_unit_test(svg_has_one_frame_per_tree_node),
	    cmocka_unit_test(streamed_outputs_are_the_texts),
	    cmocka_unit_test(spill_failure_is_reported),
	    cmocka_unit_test(findings_above_the_share_threshold),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
