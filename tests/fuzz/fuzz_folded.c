/*
 * Collapsed stacks (perfloop's, py-spy's, flamegraph.pl's, inferno's), and
 * every other format profread.h reads by content (speedscope, a Chrome
 * trace, Austin's samples, perf script's text, cProfile's pstats): read, then written back as folded, speedscope, the SVG flame graph and its HTML
 * page, and its findings; and compared, both ways, with a small profile
 * (report --diff's table, SVG and HTML).
 */
#include "fuzz.h"

#include "findings.h"
#include "flamediff.h"
#include "profdata.h"
#include "profread.h"
#include "strbuf.h"

/* p against q: the movers' table, the SVG, the HTML block */
static void diff(const struct pl_prof *before, const struct pl_prof *after)
{
	struct pl_flamediff_in in = {before, after, "before", "after"};
	struct pl_flamediff_mover *m = NULL;
	size_t n = 0;
	if (pl_flamediff_movers(&in, &m, &n) == 0) {
		free(pl_flamediff_table(&in, m, n, 15, 0));
		free(pl_flamediff_table(&in, m, n, n, 1));
	}
	pl_flamediff_movers_free(m, n);
	struct pl_strbuf b = {0};
	pl_flamediff_svg_to(&in, &b);
	free(pl_strbuf_take(&b));
	free(pl_flamediff_html(&in, 15));
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char path[128];
	pl_fuzz_path(path, sizeof path, "in.folded");
	if (pl_fuzz_write(path, data, size) < 0)
		return 0;
	struct pl_prof p = {0};
	struct pl_error err = {{0}};
	const char *format;
	if (pl_prof_read_any(path, &p, &format, &err) == 0) {
		free(pl_prof_folded(&p));
		free(pl_prof_speedscope(&p, "fuzz", "fuzz"));
		free(pl_prof_svg(&p, "fuzz", "sub"));
		free(pl_prof_html_page(&p, "fuzz", "sub"));
		struct pl_findings f = {0};
		pl_prof_findings(&p, 0.05, 20, 100, "/tmp", &f);
		pl_findings_release(&f);
		struct pl_prof q = {0};
		long a = pl_prof_frame(&q, "main", "app.py", 1, 1, 0);
		long b = pl_prof_frame(&q, "f", "app.py", 2, 2, 0);
		uint32_t st[] = {(uint32_t)a, (uint32_t)b};
		if (a >= 0 && b >= 0 && pl_prof_add(&q, st, 2, 3) == 0) {
			diff(&q, &p);
			diff(&p, &q);
		}
		pl_prof_release(&q);
	}
	pl_prof_release(&p);
	unlink(path);
	return 0;
}
