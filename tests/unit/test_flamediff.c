/*
 * The differential flame graph and its movers (report/flamediff.c), on
 * small hand-made folded profiles: a frame that grew, one that shrank, one
 * only before, one only after, a frame whose share stayed though its
 * count did not (the totals differ six times), the table's order, and the
 * widths of what vanished.
 */
#include "testutil.h"

#include <math.h>
#include <string.h>
#include <unistd.h>

#include "error.h"
#include "flamediff.h"
#include "profdata.h"
#include "strbuf.h"

/* 100 samples before, 600 after. Own shares, before -> after: grow 10% ->
 * 40%, shrink 50% -> 20%, gone 20% -> none, leaf (under new) none -> 20%,
 * same 20% -> 20% (20 -> 120 samples). */
static const char before_txt[] = "main (app.py:1);grow (app.py:3) 10\n"
				 "main (app.py:1);shrink (app.py:7) 50\n"
				 "main (app.py:1);gone (app.py:9) 20\n"
				 "main (app.py:1);same (app.py:12) 20\n";
static const char after_txt[] = "main (app.py:1);grow (app.py:3) 240\n"
				"main (app.py:1);shrink (app.py:7) 120\n"
				"main (app.py:1);new (app.py:11);leaf (app.py:20) 120\n"
				"main (app.py:1);same (app.py:12) 120\n";

/* text as a folded file, read back as report --diff reads it */
static void folded(struct pl_prof *p, const char *text)
{
	char path[] = "/tmp/test_flamediff.XXXXXX";
	int fd = mkstemp(path);
	assert_true(fd >= 0);
	assert_int_equal(write(fd, text, strlen(text)), (ssize_t)strlen(text));
	close(fd);
	memset(p, 0, sizeof *p);
	struct pl_error err = {{0}};
	int rc = pl_prof_read_folded(path, p, &err);
	unlink(path);
	assert_int_equal(rc, PL_OK);
}

struct pair {
	struct pl_prof before, after;
	struct pl_flamediff_in in;
};

static void pair_make(struct pair *p, const char *b, const char *a)
{
	folded(&p->before, b);
	folded(&p->after, a);
	p->in = (struct pl_flamediff_in){&p->before, &p->after, "before.folded", "after.folded"};
}

static void pair_release(struct pair *p)
{
	pl_prof_release(&p->before);
	pl_prof_release(&p->after);
}

struct frame {
	double x, w;
	unsigned r, g, b;
	int dashed;
	char title[512];
};

/* the frame of that label in the SVG */
static struct frame frame_of(const char *svg, const char *label)
{
	char key[256];
	snprintf(key, sizeof key, "<g class=\"f\" data-n=\"%s\"", label);
	const char *g = strstr(svg, key);
	if (!g)
		fail_msg("no frame '%s'", label);
	struct frame f = {0};
	assert_int_equal(sscanf(strstr(g, "data-x="), "data-x=\"%lf\" data-w=\"%lf\"", &f.x, &f.w),
			 2);
	const char *t = strstr(g, "<title>") + 7, *te = strstr(t, "</title>");
	snprintf(f.title, sizeof f.title, "%.*s", (int)(te - t), t);
	const char *end = strstr(g, "</g>");
	const char *fill = strstr(g, "fill=\"rgb(");
	assert_true(fill && fill < end);
	assert_int_equal(sscanf(fill, "fill=\"rgb(%u,%u,%u)", &f.r, &f.g, &f.b), 3);
	const char *dash = strstr(g, "stroke-dasharray");
	f.dashed = dash && dash < end;
	return f;
}

static char *svg_of(const struct pl_flamediff_in *in)
{
	struct pl_strbuf b = {0};
	assert_int_equal(pl_flamediff_svg_to(in, &b), PL_OK);
	char *s = pl_strbuf_take(&b);
	assert_non_null(s);
	return s;
}

static void colours_say_how_own_shares_moved(void **state)
{
	(void)state;
	struct pair p;
	pair_make(&p, before_txt, after_txt);
	char *svg = svg_of(&p.in);
	struct frame grow = frame_of(svg, "grow (app.py:3)"),
		     shrink = frame_of(svg, "shrink (app.py:7)");
	struct frame gone = frame_of(svg, "gone (app.py:9)"),
		     leaf = frame_of(svg, "leaf (app.py:20)");
	struct frame same = frame_of(svg, "same (app.py:12)"),
		     main_ = frame_of(svg, "main (app.py:1)");
	struct frame new_ = frame_of(svg, "new (app.py:11)");
	/* grew 30 points, the largest change: full red; shrank 30: full blue */
	assert_int_equal(grow.r, 255);
	assert_true(grow.g < 100 && grow.g == grow.b);
	assert_int_equal(shrink.b, 255);
	assert_true(shrink.r < 100 && shrink.r == shrink.g);
	/* 20 points: the same hues, lighter */
	assert_int_equal(leaf.r, 255);
	assert_true(leaf.g > grow.g && leaf.g < 215);
	assert_int_equal(gone.b, 255);
	assert_true(gone.r > shrink.r && gone.r < 215);
	/* a share that stayed (20% of 100, 20% of 600) and callers with no
	 * samples of their own: white */
	assert_true(same.r == 255 && same.g == 255 && same.b == 255);
	assert_true(main_.r == 255 && main_.g == 255 && main_.b == 255);
	assert_true(new_.r == 255 && new_.g == 255 && new_.b == 255);
	/* the numbers in the tooltips */
	assert_non_null(strstr(grow.title, "after 240 samples, 40.00%; before 10, 10.00%"));
	assert_non_null(strstr(grow.title, "+30.00 points since before"));
	assert_non_null(strstr(shrink.title, "-30.00 points since before"));
	assert_non_null(strstr(same.title, "+0.00 points since before"));
	assert_non_null(strstr(gone.title, "only before"));
	assert_non_null(strstr(leaf.title, "only after"));
	assert_non_null(strstr(svg, "full colour 30.00 points"));
	free(svg);
	pair_release(&p);
}

static void widths_are_after_and_what_vanished_is_drawn(void **state)
{
	(void)state;
	struct pair p;
	pair_make(&p, before_txt, after_txt);
	char *svg = svg_of(&p.in);
	/* after's own samples; the path only before has at its 20% of before
	 * in after's samples (120 of 600), dashed; the frames under which it
	 * ran that much wider */
	struct frame all = frame_of(svg, "all"), main_ = frame_of(svg, "main (app.py:1)");
	struct frame grow = frame_of(svg, "grow (app.py:3)"),
		     gone = frame_of(svg, "gone (app.py:9)");
	struct frame leaf = frame_of(svg, "leaf (app.py:20)");
	assert_close(grow.w, 240, 1e-9);
	assert_close(leaf.w, 120, 1e-9);
	assert_close(gone.w, 120, 1e-9);
	assert_true(gone.dashed);
	assert_false(grow.dashed);
	assert_close(main_.w, 720, 1e-9);
	assert_close(all.w, 720, 1e-9);
	/* children in name order, side by side */
	assert_close(gone.x, 0, 1e-9);
	assert_close(grow.x, 120, 1e-9);
	assert_close(leaf.x, 360, 1e-9);
	free(svg);
	pair_release(&p);
}

static void shares_not_counts(void **state)
{
	(void)state;
	/* twice the run, the same program: nothing moved */
	struct pair p;
	pair_make(&p, "main (a.py:1);f (a.py:2) 3\nmain (a.py:1);g (a.py:5) 1\n",
		  "main (a.py:1);f (a.py:2) 6000\nmain (a.py:1);g (a.py:5) 2000\n");
	char *svg = svg_of(&p.in);
	struct frame f = frame_of(svg, "f (a.py:2)"), g = frame_of(svg, "g (a.py:5)");
	assert_true(f.r == 255 && f.g == 255 && f.b == 255);
	assert_true(g.r == 255 && g.g == 255 && g.b == 255);
	assert_non_null(strstr(svg, "no frame's own share moved"));
	free(svg);
	struct pl_flamediff_mover *m;
	size_t n;
	assert_int_equal(pl_flamediff_movers(&p.in, &m, &n), PL_OK);
	assert_int_equal(n, 2);
	for (size_t i = 0; i < n; i++)
		assert_close(m[i].after_share, m[i].before_share, 1e-12);
	pl_flamediff_movers_free(m, n);
	pair_release(&p);
}

static void movers_largest_change_first(void **state)
{
	(void)state;
	struct pair p;
	pair_make(&p, before_txt, after_txt);
	struct pl_flamediff_mover *m;
	size_t n;
	assert_int_equal(pl_flamediff_movers(&p.in, &m, &n), PL_OK);
	/* main and new have no samples of their own in either: not movers */
	assert_int_equal(n, 5);
	/* +30 and -30 tie (ordered by label), then -20 and +20, then 0 */
	const char *order[] = {"grow (app.py:3)", "shrink (app.py:7)", "gone (app.py:9)",
			       "leaf (app.py:20)", "same (app.py:12)"};
	for (size_t i = 0; i < n; i++)
		assert_string_equal(m[i].label, order[i]);
	assert_int_equal(m[0].before, 10);
	assert_int_equal(m[0].after, 240);
	assert_close(m[0].before_share, 0.10, 1e-12);
	assert_close(m[0].after_share, 0.40, 1e-12);
	assert_int_equal(m[2].after, 0);
	assert_int_equal(m[3].before, 0);

	char *t = pl_flamediff_table(&p.in, m, n, 3, 0);
	assert_non_null(t);
	assert_string_equal(t,
			    "Own share of the samples: before.folded (100 samples) -> after.folded "
			    "(600 samples)\n"
			    "  before    after   change  function\n"
			    "  10.00%   40.00%   +30.00  grow (app.py:3)\n"
			    "  50.00%   20.00%   -30.00  shrink (app.py:7)\n"
			    "  20.00%    0.00%   -20.00  gone (app.py:9)\n"
			    "(change: in percentage points; 3 of 5 functions with samples of "
			    "their own, the largest change first)\n");
	free(t);
	t = pl_flamediff_table(&p.in, m, n, n, 1);
	assert_non_null(strstr(t, "| 20.00% | 20.00% | +0.00 | same (app.py:12) |\n"));
	free(t);
	pl_flamediff_movers_free(m, n);
	pair_release(&p);
}

static void an_exact_tie_is_broken_by_label(void **state)
{
	(void)state;
	/* z: 10% -> 40%, y: 20% -> 50%: both +30 points, though as doubles
	 * 0.4 - 0.1 > 0.5 - 0.2; compared exactly, the tie goes by label */
	struct pair p;
	pair_make(&p, "m (a.py:1);z (a.py:2) 1\nm (a.py:1);y (a.py:3) 2\nm (a.py:1);x (a.py:4) 7\n",
		  "m (a.py:1);z (a.py:2) 4\nm (a.py:1);y (a.py:3) 5\nm (a.py:1);x (a.py:4) 1\n");
	struct pl_flamediff_mover *m;
	size_t n;
	assert_int_equal(pl_flamediff_movers(&p.in, &m, &n), PL_OK);
	assert_int_equal(n, 3);
	assert_string_equal(m[0].label, "x (a.py:4)"); /* -60 points */
	assert_string_equal(m[1].label, "y (a.py:3)");
	assert_string_equal(m[2].label, "z (a.py:2)");
	assert_true(m[2].after_share - m[2].before_share > m[1].after_share - m[1].before_share);
	pl_flamediff_movers_free(m, n);
	pair_release(&p);
}

static void markdown_cells_escape_pipes(void **state)
{
	(void)state;
	struct pair p;
	pair_make(&p, "a|b (x.py:1) 1\n", "a|b (x.py:1) 1\nc (x.py:2) 1\n");
	struct pl_flamediff_mover *m;
	size_t n;
	assert_int_equal(pl_flamediff_movers(&p.in, &m, &n), PL_OK);
	char *t = pl_flamediff_table(&p.in, m, n, n, 1);
	assert_non_null(strstr(t, "| a\\|b (x.py:1) |"));
	free(t);
	pl_flamediff_movers_free(m, n);
	pair_release(&p);
}

static void html_has_the_graph_and_the_table(void **state)
{
	(void)state;
	struct pair p;
	pair_make(&p, before_txt, after_txt);
	char *h = pl_flamediff_html(&p.in, 2);
	assert_non_null(h);
	assert_non_null(strstr(h, "<svg class=\"flame diff\""));
	assert_null(strstr(h, "<script")); /* the page's script drives it */
	assert_non_null(strstr(h, "<td>grow (app.py:3)</td>"));
	assert_non_null(strstr(h, "<td>shrink (app.py:7)</td>"));
	assert_null(strstr(h, "<td>gone (app.py:9)</td>")); /* two rows */
	free(h);
	pair_release(&p);
}

static void a_profile_without_samples_is_refused(void **state)
{
	(void)state;
	struct pl_prof empty = {0}, after;
	folded(&after, after_txt);
	struct pl_flamediff_in in = {&empty, &after, "empty.folded", "after.folded"};
	struct pl_strbuf b = {0};
	assert_int_equal(pl_flamediff_svg_to(&in, &b), PL_EINPUT);
	free(pl_strbuf_take(&b));
	struct pl_flamediff_mover *m;
	size_t n;
	assert_int_equal(pl_flamediff_movers(&in, &m, &n), PL_EINPUT);
	assert_null(m);
	struct pl_error err = {{0}};
	assert_int_equal(pl_flamediff_write_svg(&in, "/tmp/never-written.svg", &err), PL_EINPUT);
	assert_string_equal(err.msg, "'empty.folded': no samples");
	assert_int_equal(access("/tmp/never-written.svg", F_OK), -1);
	assert_null(pl_flamediff_html(&in, 5));
	pl_prof_release(&after);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(colours_say_how_own_shares_moved),
	    cmocka_unit_test(widths_are_after_and_what_vanished_is_drawn),
	    cmocka_unit_test(shares_not_counts),
	    cmocka_unit_test(movers_largest_change_first),
	    cmocka_unit_test(an_exact_tie_is_broken_by_label),
	    cmocka_unit_test(markdown_cells_escape_pipes),
	    cmocka_unit_test(html_has_the_graph_and_the_table),
	    cmocka_unit_test(a_profile_without_samples_is_refused),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
