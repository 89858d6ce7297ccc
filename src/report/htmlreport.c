/*
 * report --format html (htmlreport.h).
 */
#include "htmlreport.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "findings.h"
#include "flamediff.h"
#include "render.h"
#include "strbuf.h"
#include "sweep.h"

#define esc pl_strbuf_xml /* HTML text and double-quoted attributes */

static const char css[] =
    "body{font:14px/1.4 sans-serif;margin:16px auto;max-width:1280px;color:#222;padding:0 12px}"
    "h1{font-size:22px}h2{font-size:18px;border-bottom:1px solid #ccc;margin-top:28px}"
    "h3{font-size:15px;margin:12px 0 6px}table{border-collapse:collapse;margin:6px 0}"
    "td,th{border:1px solid #ddd;padding:3px 7px;text-align:left;vertical-align:top}"
    "th{background:#f3f3f3}td.num{text-align:right;font-variant-numeric:tabular-nums}"
    ".verdict{border-left:6px solid #888;padding:4px 12px;margin:10px 0;background:#fafafa}"
    ".verdict.accept{border-color:#2a8a2a}.verdict.reject{border-color:#c33}"
    ".verdict.no_feasible_win{border-color:#c90}.pass{color:#2a8a2a}.fail{color:#c33}"
    ".warn{background:#fff4e0;border:1px solid #e0b060;padding:4px 8px;margin:6px 0}"
    "tr.straggler td{background:#fde2e0;font-weight:600}"
    "table.sortable th[data-key]{cursor:pointer}table.sortable th[data-key]:after{content:' \\2195';"
    "color:#999}tbody.finding tr.head{cursor:pointer}tbody.finding tr.head:hover{background:#f6f6ff}"
    "pre{white-space:pre-wrap;margin:4px 0}.muted{color:#777}svg.strip{width:100%;height:auto}"
    "svg.strip text{font:12px sans-serif;fill:#222}.sweep svg{max-width:100%;height:auto}\n";

/* JSON inside <script type="application/json">: '<', '>' and '&' as \u
 * escapes (they only occur inside strings), and U+2028/2029, so that no
 * string can end the element or start a comment */
static void json_in_script(struct pl_strbuf *b, json_t *doc)
{
	char *t = json_dumps(doc, JSON_COMPACT | JSON_ENSURE_ASCII);
	if (!t) {
		b->failed = 1;
		return;
	}
	for (const char *c = t; *c; c++) {
		if (*c == '<')
			pl_strbuf_puts(b, "\\u003c");
		else if (*c == '>')
			pl_strbuf_puts(b, "\\u003e");
		else if (*c == '&')
			pl_strbuf_puts(b, "\\u0026");
		else
			pl_strbuf_append(b, c, 1);
	}
	free(t);
}

static const char *jstr(json_t *o, const char *k)
{
	const char *s = json_string_value(json_object_get(o, k));
	return s ? s : "";
}

static double jnum(json_t *o, const char *k)
{
	return json_number_value(json_object_get(o, k));
}

static const char *base_name(const char *p)
{
	const char *s = strrchr(p, '/');
	return s ? s + 1 : p;
}

/* ---- summary: verdicts and confidence ---- */

static void verdicts(struct pl_strbuf *b, const struct pl_report_input *in)
{
	size_t i;
	json_t *v;
	json_array_foreach(in->verdicts, i, v)
	{
		json_t *d = json_object_get(v, "doc");
		const char *verdict = jstr(d, "verdict"), *target = jstr(d, "target");
		const char *word = strcmp(verdict, "accept") == 0   ? "ACCEPTED"
				   : strcmp(verdict, "reject") == 0 ? "REJECTED"
								    : "NO FEASIBLE WIN";
		char before[48], after[48];
		pl_fmt_dim(before, sizeof before, target, jnum(json_object_get(d, "before"), "p50"));
		pl_fmt_dim(after, sizeof after, target, jnum(json_object_get(d, "after"), "p50"));
		pl_strbuf_puts(b, "<div class=\"verdict ");
		esc(b, verdict);
		pl_strbuf_printf(b, "\"><h3>%s: ", word);
		esc(b, jstr(d, "benchmark"));
		pl_strbuf_puts(b, " \u2014 ");
		esc(b, target);
		pl_strbuf_printf(b, " %s \u2192 %s (%+.1f%%; at least %.1f%% asked)</h3>\n", before,
				 after, jnum(d, "gain") * 100, jnum(d, "min_gain") * 100);
		pl_strbuf_puts(b, "<p class=\"muted\">");
		esc(b, v && json_object_get(v, "file") ? jstr(v, "file") : "");
		pl_strbuf_puts(b, "</p><table><tr><th>Rule</th><th>Result</th><th>Detail</th>"
				  "<th>Numbers</th></tr>\n");
		size_t k;
		json_t *r;
		json_array_foreach(json_object_get(d, "rules"), k, r)
		{
			int ok = json_is_true(json_object_get(r, "passed"));
			pl_strbuf_puts(b, "<tr><td>");
			esc(b, jstr(r, "name"));
			pl_strbuf_printf(b, "</td><td class=\"%s\">%s</td><td>", ok ? "pass" : "fail",
					 ok ? "passed" : "failed");
			esc(b, jstr(r, "detail"));
			pl_strbuf_puts(b, "</td><td>");
			const char *key;
			json_t *num;
			int first = 1;
			json_object_foreach(json_object_get(r, "numbers"), key, num)
			{
				if (!first)
					pl_strbuf_puts(b, ", ");
				first = 0;
				esc(b, key);
				char f[64];
				if (json_is_number(num) && (!strcmp(key, "before_p50") ||
							    !strcmp(key, "after_p50")))
					pl_strbuf_printf(b, " %s",
							 pl_fmt_dim(f, sizeof f, target,
								    json_number_value(num)));
				else if (json_is_number(num))
					pl_strbuf_printf(b, " %s",
							 pl_fmt_dim(f, sizeof f, key,
								    json_number_value(num)));
				else if (json_is_array(num)) { /* a list, or "none" */
					size_t ai;
					json_t *item;
					if (!json_array_size(num))
						pl_strbuf_puts(b, " none");
					json_array_foreach(num, ai, item)
					{
						pl_strbuf_puts(b, ai ? ", " : " ");
						if (json_is_string(item))
							esc(b, json_string_value(item));
						else if (json_is_number(item))
							pl_strbuf_printf(b, "%.6g",
									 json_number_value(item));
					}
				} else if (json_is_string(num)) {
					pl_strbuf_puts(b, " ");
					esc(b, json_string_value(num));
				} else if (json_is_boolean(num))
					pl_strbuf_puts(b, json_is_true(num) ? " true" : " false");
			}
			pl_strbuf_puts(b, "</td></tr>\n");
		}
		pl_strbuf_puts(b, "</table></div>\n");
	}
}

/* ---- benchmarks: strip plots with boxes on one axis ---- */

struct row {
	char label[300];
	double *x;
	size_t n;
	double q1, med, q3;
	int noisy;
};

static int cmp_d(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return x < y ? -1 : x > y;
}

static double quant(const double *x, size_t n, double q)
{
	double at = q * (double)(n - 1);
	size_t i = (size_t)at;
	return i + 1 < n ? x[i] + (at - (double)i) * (x[i + 1] - x[i]) : x[n - 1];
}

struct axis {
	double lo, hi;
	int log;
	double x0, x1; /* pixels */
};

static double ax_px(const struct axis *a, double v)
{
	double f = a->log ? (log(v) - log(a->lo)) / (log(a->hi) - log(a->lo))
			  : (v - a->lo) / (a->hi - a->lo);
	return a->x0 + f * (a->x1 - a->x0);
}

static void strip_plot(struct pl_strbuf *b, struct row *rows, size_t nr)
{
	double lo = INFINITY, hi = -INFINITY;
	for (size_t i = 0; i < nr; i++)
		for (size_t k = 0; k < rows[i].n; k++) {
			lo = fmin(lo, rows[i].x[k]);
			hi = fmax(hi, rows[i].x[k]);
		}
	if (!(lo <= hi) || !(lo > 0))
		return;
	struct axis a = {lo, hi, hi / lo > 10, 270, 1180};
	if (a.log) {
		a.lo = lo / 1.15;
		a.hi = hi * 1.15;
	} else {
		double pad = (hi - lo) * 0.08 + hi * 0.002;
		a.lo = fmax(0, lo - pad);
		a.hi = hi + pad;
	}
	const double RH = 36, TOPY = 8;
	static unsigned char seen[(1200 * 2 + 2) * 17 / 8 + 1];
	double height = TOPY + RH * (double)nr + 44;
	pl_strbuf_printf(b,
			 "<svg class=\"strip\" xmlns=\"http://www.w3.org/2000/svg\" viewBox=\"0 0 "
			 "1200 %.0f\" role=\"img\">\n",
			 height);
	for (size_t i = 0; i < nr; i++) {
		struct row *r = &rows[i];
		double cy = TOPY + RH * (double)i + RH / 2;
		if (r->noisy) {
			pl_strbuf_printf(b,
					 "<rect x=\"%.0f\" y=\"%.1f\" width=\"%.0f\" height=\"%.0f\" "
					 "fill=\"#fde7c8\"><title>timing N/A: too noisy to "
					 "compare</title></rect>\n",
					 a.x0, cy - RH / 2 + 1, a.x1 - a.x0, RH - 2);
		}
		pl_strbuf_printf(b, "<text x=\"260\" y=\"%.1f\" text-anchor=\"end\">", cy + 4);
		esc(b, r->label);
		pl_strbuf_puts(b, "</text>\n");
		double x1 = ax_px(&a, r->x[0]), x2 = ax_px(&a, r->x[r->n - 1]);
		double b1 = ax_px(&a, r->q1), b2 = ax_px(&a, r->q3), m = ax_px(&a, r->med);
		char med[32];
		pl_strbuf_printf(b,
				 "<g class=\"box\"><title>median %s, %zu runs</title>"
				 "<line x1=\"%.1f\" x2=\"%.1f\" y1=\"%.1f\" y2=\"%.1f\" "
				 "stroke=\"#555\"/><rect x=\"%.1f\" y=\"%.1f\" width=\"%.1f\" "
				 "height=\"16\" fill=\"#cfe0f5\" stroke=\"#4a6fa5\"/><line x1=\"%.1f\" "
				 "x2=\"%.1f\" y1=\"%.1f\" y2=\"%.1f\" stroke=\"#123\" "
				 "stroke-width=\"2\"/></g>\n",
				 pl_fmt_time(med, sizeof med, r->med), r->n, x1, x2, cy, cy, b1, cy - 8,
				 fmax(b2 - b1, 1), m, m, cy - 9, cy + 9);
		/* every run a dot, but one dot per half pixel and jitter lane:
		 * thousands of runs at the same time would draw the same picture
		 * thousands of times (10 benchmarks of 10,000 fast runs: 9 MB) */
		memset(seen, 0, sizeof seen);
		/* and at most 3000 (every k-th of the sorted runs beyond that) */
		size_t every = r->n > 3000 ? (r->n + 2999) / 3000 : 1;
		for (size_t k = 0; k < r->n; k += every) {
			unsigned lane = (unsigned)((k * 7919) % 17);
			double px = ax_px(&a, r->x[k]);
			long cell = lround(px * 2) * 17 + lane;
			if (cell >= 0 && cell < (long)(sizeof seen * 8)) {
				if (seen[cell / 8] & (1u << (cell % 8)))
					continue;
				seen[cell / 8] |= (unsigned char)(1u << (cell % 8));
			}
			pl_strbuf_printf(b,
					 "<circle class=\"run\" cx=\"%.1f\" cy=\"%.1f\" r=\"2.4\" "
					 "fill=\"#c0392b\" fill-opacity=\"0.6\"/>\n",
					 px, cy + (double)lane - 8);
		}
		if (every > 1)
			pl_strbuf_printf(b,
					 "<text x=\"1190\" y=\"%.1f\" text-anchor=\"end\" "
					 "class=\"muted\">every %zuth of %zu runs</text>\n",
					 cy - 10, every, r->n);

	}
	/* the axis */
	double ay = TOPY + RH * (double)nr + 6;
	pl_strbuf_printf(b,
			 "<line x1=\"%.0f\" x2=\"%.0f\" y1=\"%.1f\" y2=\"%.1f\" stroke=\"#333\"/>\n",
			 a.x0, a.x1, ay, ay);
	double ticks[32];
	size_t nt = 0;
	if (a.log) {
		for (double d = pow(10, floor(log10(a.lo))); d <= a.hi && nt < 30; d *= 10)
			for (int m = 1; m <= 5 && nt < 30; m += m == 1 ? 1 : 3)
				if (d * m >= a.lo && d * m <= a.hi)
					ticks[nt++] = d * m;
	} else {
		double step = pow(10, floor(log10((a.hi - a.lo) / 5)));
		if ((a.hi - a.lo) / step > 10)
			step *= 2;
		for (double v = ceil(a.lo / step) * step; v <= a.hi && nt < 30; v += step)
			ticks[nt++] = v;
	}
	for (size_t i = 0; i < nt; i++) {
		char t[32];
		double x = ax_px(&a, ticks[i]);
		pl_strbuf_printf(b,
				 "<line x1=\"%.1f\" x2=\"%.1f\" y1=\"%.1f\" y2=\"%.1f\" "
				 "stroke=\"#333\"/><text x=\"%.1f\" y=\"%.1f\" "
				 "text-anchor=\"middle\">%s</text>\n",
				 x, x, ay, ay + 5, x, ay + 19, pl_fmt_time(t, sizeof t, ticks[i]));
	}
	pl_strbuf_printf(b,
			 "<text x=\"%.0f\" y=\"%.1f\" text-anchor=\"middle\" class=\"muted\">run "
			 "time%s (each dot a run; box: quartiles and median; line: range)</text>\n",
			 (a.x0 + a.x1) / 2, ay + 36, a.log ? ", log scale" : "");
	pl_strbuf_puts(b, "</svg>\n");
}

static void benchmarks(struct pl_strbuf *b, const struct pl_report_input *in)
{
	size_t ns = json_array_size(in->summaries), cap = 0;
	size_t i, k;
	json_t *s, *bench;
	json_array_foreach(in->summaries, i, s)
	    cap += json_array_size(json_object_get(json_object_get(s, "doc"), "benchmarks"));
	struct row *rows = calloc(cap + 1, sizeof *rows);
	size_t nr = 0;
	if (!rows) {
		b->failed = 1;
		return;
	}
	json_array_foreach(in->summaries, i, s)
	{
		json_array_foreach(json_object_get(json_object_get(s, "doc"), "benchmarks"), k, bench)
		{
			json_t *samples = json_object_get(bench, "samples");
			struct row *r = &rows[nr];
			r->x = malloc((json_array_size(samples) + 1) * sizeof *r->x);
			if (!r->x) {
				b->failed = 1;
				break;
			}
			size_t j;
			json_t *smp;
			json_array_foreach(samples, j, smp)
			{
				double w = jnum(smp, "wall_s");
				if (json_is_true(json_object_get(smp, "counted")) && w > 0)
					r->x[r->n++] = w;
			}
			if (!r->n) {
				free(r->x);
				r->x = NULL;
				continue;
			}
			qsort(r->x, r->n, sizeof *r->x, cmp_d);
			r->q1 = quant(r->x, r->n, 0.25);
			r->med = quant(r->x, r->n, 0.5);
			r->q3 = quant(r->x, r->n, 0.75);
			json_t *t = json_object_get(json_object_get(bench, "dimensions"), "timing");
			r->noisy = t && !json_is_true(json_object_get(t, "scored"));
			if (ns > 1)
				snprintf(r->label, sizeof r->label, "%.120s (%.150s)",
					 jstr(bench, "name"), base_name(jstr(s, "file")));
			else
				snprintf(r->label, sizeof r->label, "%.280s", jstr(bench, "name"));
			nr++;
		}
	}
	if (nr)
		strip_plot(b, rows, nr);
	int noisy = 0;
	for (size_t j = 0; j < nr; j++) {
		noisy |= rows[j].noisy;
		free(rows[j].x);
	}
	free(rows);
	if (noisy)
		pl_strbuf_puts(b, "<p class=\"warn\">A shaded row's timing is N/A: its runs vary too "
				  "much to compare (its coefficient of variation is over the noise "
				  "gate); its other dimensions may still count.</p>\n");

	/* comparisons: ratio with its interval */
	json_array_foreach(in->summaries, i, s)
	{
		json_t *cmp = json_object_get(json_object_get(s, "doc"), "comparisons");
		if (!json_array_size(cmp))
			continue;
		pl_strbuf_puts(b, "<h3>Comparisons in ");
		esc(b, jstr(s, "file"));
		pl_strbuf_puts(b, "</h3><table><tr><th>Command</th><th>Against</th><th>Time "
				  "ratio</th><th>95% interval</th><th>p</th><th>Result</th></tr>\n");
		json_t *c;
		json_array_foreach(cmp, k, c)
		{
			json_t *ci = json_object_get(c, "ci95");
			pl_strbuf_puts(b, "<tr><td>");
			esc(b, jstr(c, "name"));
			pl_strbuf_puts(b, "</td><td>");
			esc(b, jstr(c, "reference"));
			pl_strbuf_printf(b,
					 "</td><td class=\"num\">%.4g\u00d7</td><td "
					 "class=\"num\">[%.4g, %.4g]</td><td class=\"num\">",
					 jnum(c, "ratio"), json_number_value(json_array_get(ci, 0)),
					 json_number_value(json_array_get(ci, 1)));
			/* a simulated comparison has no p: its counts do not vary */
			if (json_is_number(json_object_get(c, "p_value")))
				pl_strbuf_printf(b, "%.2g</td><td>", jnum(c, "p_value"));
			else
				pl_strbuf_puts(b, "\u2014</td><td>");
			esc(b, jstr(c, "verdict"));
			const char *dim = jstr(c, "dimension");
			if (dim[0] && strcmp(dim, "timing") != 0) {
				pl_strbuf_puts(b, " (on ");
				esc(b, dim);
				pl_strbuf_puts(b, ")");
			}
			pl_strbuf_puts(b, "</td></tr>\n");
		}
		pl_strbuf_puts(b, "</table>\n");
	}

	/* dimensions and tiers */
	json_array_foreach(in->summaries, i, s)
	{
		json_array_foreach(json_object_get(json_object_get(s, "doc"), "benchmarks"), k, bench)
		{
			json_t *dims = json_object_get(bench, "dimensions");
			if (!json_object_size(dims))
				continue;
			pl_strbuf_puts(b, "<h3>");
			esc(b, jstr(bench, "name"));
			pl_strbuf_puts(b, " <span class=\"muted\">");
			esc(b, jstr(bench, "command"));
			pl_strbuf_puts(b, " \u2014 ");
			esc(b, jstr(s, "file"));
			pl_strbuf_puts(b, "</span></h3><table><tr><th>Dimension</th><th>Median</th>"
					  "<th>CV</th><th>Tier</th><th>Scored</th></tr>\n");
			const char *key;
			json_t *d;
			json_object_foreach(dims, key, d)
			{
				char v[48];
				const char *unit = jstr(d, "unit");
				double val = jnum(d, "value");
				if (strcmp(unit, "s") == 0)
					pl_fmt_time(v, sizeof v, val);
				else if (strcmp(unit, "bytes") == 0)
					pl_fmt_bytes(v, sizeof v, val);
				else
					pl_fmt_dim(v, sizeof v, key, val);
				pl_strbuf_puts(b, "<tr><td>");
				esc(b, key);
				pl_strbuf_puts(b, "</td><td class=\"num\">");
				esc(b, v);
				if (strcmp(unit, "s") && strcmp(unit, "bytes") && *unit) {
					pl_strbuf_puts(b, " ");
					esc(b, unit);
				}
				pl_strbuf_printf(b, "</td><td class=\"num\">%.1f%%</td><td "
						    "class=\"num\">%lld</td><td>",
						 jnum(d, "cv") * 100,
						 (long long)json_integer_value(json_object_get(d, "tier")));
				if (json_is_true(json_object_get(d, "scored")))
					pl_strbuf_puts(b, "yes");
				else {
					pl_strbuf_puts(b, "N/A: ");
					esc(b, jstr(d, "reason"));
				}
				pl_strbuf_puts(b, "</td></tr>\n");
			}
			pl_strbuf_puts(b, "</table>\n");
		}
	}
}

/* ---- profiles ---- */

struct top {
	uint32_t id;
	uint64_t self, total;
};

static int cmp_top(const void *a, const void *b)
{
	const struct top *x = a, *y = b;
	return x->self != y->self ? (x->self < y->self ? 1 : -1) : (x->id > y->id) - (x->id < y->id);
}

static void profile_section(struct pl_strbuf *b, const struct pl_html_profile *hp)
{
	const struct pl_prof *p = &hp->prof;
	char sub[96];
	snprintf(sub, sizeof sub, "%llu %s", (unsigned long long)p->samples,
		 p->unit ? p->unit : "samples");
	pl_strbuf_puts(b, "<h3>");
	esc(b, hp->file);
	pl_strbuf_puts(b, "</h3>\n");
	char *svg = pl_prof_svg_html(p, base_name(hp->file), sub);
	if (!svg) {
		b->failed = 1;
		return;
	}
	pl_strbuf_puts(b, svg);
	free(svg);
	uint64_t *self = NULL, *total = NULL;
	if (pl_prof_totals(p, &self, &total) < 0 || !p->samples) {
		free(self);
		free(total);
		return;
	}
	struct top *t = malloc((p->nframes + 1) * sizeof *t);
	size_t n = 0;
	for (size_t i = 0; t && i < p->nframes; i++)
		if (self[i])
			t[n++] = (struct top){(uint32_t)i, self[i], total[i]};
	if (t && n) {
		qsort(t, n, sizeof *t, cmp_top);
		pl_strbuf_puts(b, "<table class=\"top\"><tr><th>Own</th><th>With callees</th>"
				  "<th>Function</th></tr>\n");
		for (size_t i = 0; i < n && i < 15; i++) {
			char *label = pl_prof_label(p, &p->frames[t[i].id]);
			pl_strbuf_printf(b,
					 "<tr><td class=\"num\">%.1f%%</td><td "
					 "class=\"num\">%.1f%%</td><td>",
					 100.0 * (double)t[i].self / (double)p->samples,
					 100.0 * (double)t[i].total / (double)p->samples);
			esc(b, label ? label : "?");
			free(label);
			pl_strbuf_puts(b, "</td></tr>\n");
		}
		pl_strbuf_puts(b, "</table>\n");
	}
	free(t);
	free(self);
	free(total);
}

/* two profiles: the second against the first (flamediff.c) */
static void diff_section(struct pl_strbuf *b, const struct pl_html_profile *before,
			 const struct pl_html_profile *after)
{
	pl_strbuf_puts(b, "<h3 id=\"difference\">Difference: ");
	esc(b, before->file);
	pl_strbuf_puts(b, " \u2192 ");
	esc(b, after->file);
	pl_strbuf_puts(b, "</h3>\n<p class=\"muted\">The second profile's frames and widths, each "
			  "coloured by how its own share of the samples moved since the first: red "
			  "more, blue less, white the same (the tooltip says by how many points); a "
			  "path only the first has is dashed, at its share of the first. Then the "
			  "functions whose own share moved most.</p>\n");
	struct pl_flamediff_in in = {&before->prof, &after->prof, before->file, after->file};
	char *html = pl_flamediff_html(&in, 15);
	if (!html) {
		b->failed = 1;
		return;
	}
	pl_strbuf_puts(b, html);
	free(html);
}

/* ---- complexity sweeps: cost against n on log-log axes, with the fit ---- */

static void complexity(struct pl_strbuf *b, const struct pl_report_input *in)
{
	size_t i;
	json_t *s;
	int opened = 0;
	json_array_foreach(in->summaries, i, s)
	{
		json_t *fits = json_object_get(json_object_get(s, "doc"), "complexity");
		if (!json_array_size(fits))
			continue;
		char *svg = pl_sweep_svg(fits);
		if (!svg)
			continue;
		if (!opened)
			pl_strbuf_puts(b, "<section id=\"complexity\"><h2>Complexity</h2>\n");
		opened = 1;
		pl_strbuf_puts(b, "<h3>");
		esc(b, jstr(s, "file"));
		pl_strbuf_puts(b, "</h3>\n<div class=\"sweep\">");
		const char *start = strstr(svg, "<svg");
		pl_strbuf_puts(b, start ? start : svg);
		free(svg);
		pl_strbuf_puts(b, "</div>\n");
		size_t k;
		json_t *f;
		pl_strbuf_puts(b, "<table><tr><th>Command</th><th>Dimension</th><th>Class</th>"
				  "<th>Exponent</th><th>95% interval</th></tr>\n");
		json_array_foreach(fits, k, f)
		{
			json_t *ci = json_object_get(f, "exponent_ci95");
			pl_strbuf_puts(b, "<tr><td>");
			esc(b, jstr(f, "command"));
			pl_strbuf_puts(b, "</td><td>");
			esc(b, jstr(f, "dimension"));
			pl_strbuf_puts(b, "</td><td>");
			esc(b, jstr(f, "class"));
			pl_strbuf_printf(b, "</td><td class=\"num\">%.2f</td><td class=\"num\">[%.2f, "
					    "%.2f]</td></tr>\n",
					 jnum(f, "exponent"), json_number_value(json_array_get(ci, 0)),
					 json_number_value(json_array_get(ci, 1)));
		}
		pl_strbuf_puts(b, "</table>\n");
	}
	if (opened)
		pl_strbuf_puts(b, "</section>\n");
}

/* ---- ranks: perfloop merge's per-rank tables ---- */

static void rank_cells(struct pl_strbuf *b, json_t *r)
{
	pl_strbuf_printf(b, "<td>%lld</td><td>",
			 (long long)json_integer_value(json_object_get(r, "rank")));
	esc(b, jstr(r, "host"));
	pl_strbuf_puts(b, "</td>");
}

static void ranks_section(struct pl_strbuf *b, const struct pl_report_input *in)
{
	size_t i;
	json_t *e;
	json_array_foreach(in->merges, i, e)
	{
		json_t *d = json_object_get(e, "doc");
		size_t k, j;
		json_t *bm, *r;
		json_array_foreach(json_object_get(json_object_get(d, "summaries"), "benchmarks"),
				   k, bm)
		{
			char t[5][32];
			pl_strbuf_puts(b, "<h3>");
			esc(b, jstr(bm, "name"));
			pl_strbuf_printf(
			    b,
			    " <span class=\"muted\">(%s) \u00b7 median p50 %s \u00b7 "
			    "spread %.2fx \u00b7 %lld straggler%s</span></h3>\n",
			    base_name(jstr(e, "file")),
			    pl_fmt_time(t[0], sizeof t[0], jnum(bm, "median_p50_s")),
			    jnum(bm, "spread"),
			    (long long)json_integer_value(json_object_get(bm, "stragglers")),
			    json_integer_value(json_object_get(bm, "stragglers")) == 1 ? "" : "s");
			pl_strbuf_puts(
			    b, "<table class=\"ranks\"><tr><th>Rank</th><th>Host</th>"
			       "<th>Runs</th><th>p50</th><th>p90</th><th>p99</th><th>Max</th>"
			       "<th>vs the other ranks</th><th></th></tr>\n");
			json_array_foreach(json_object_get(bm, "ranks"), j, r)
			{
				int slow = json_is_true(json_object_get(r, "straggler"));
				pl_strbuf_puts(b, slow ? "<tr class=\"straggler\">" : "<tr>");
				rank_cells(b, r);
				pl_strbuf_printf(
				    b,
				    "<td>%lld</td><td>%s</td><td>%s</td><td>%s</td><td>%s</td>"
				    "<td>%.2fx</td><td>%s</td></tr>\n",
				    (long long)json_integer_value(json_object_get(r, "samples")),
				    pl_fmt_time(t[1], sizeof t[1], jnum(r, "p50_s")),
				    pl_fmt_time(t[2], sizeof t[2], jnum(r, "p90_s")),
				    pl_fmt_time(t[3], sizeof t[3], jnum(r, "p99_s")),
				    pl_fmt_time(t[4], sizeof t[4], jnum(r, "max_s")),
				    jnum(r, "ratio_to_others"), slow ? "straggler" : "");
			}
			pl_strbuf_puts(b, "</table>\n");
		}
		json_array_foreach(json_object_get(d, "problems"), j, r)
		{
			/* the document is read as given: a problem that is no
			 * string is shown empty (the fuzzer's NULL) */
			const char *t = json_string_value(r);
			pl_strbuf_puts(b, "<p class=\"warn\">");
			esc(b, t ? t : "");
			pl_strbuf_puts(b, "</p>\n");
		}
		json_t *pr = json_object_get(d, "profiles");
		if (!pr)
			continue;
		pl_strbuf_printf(b,
				 "<h3>Profiles <span class=\"muted\">(%s) \u00b7 %lld samples "
				 "merged</span></h3>\n<table class=\"ranks\"><tr><th>Rank</th>"
				 "<th>Host</th><th>Samples</th><th>Waiting for data</th><th>In "
				 "collectives</th><th>Top function (self)</th><th></th></tr>\n",
				 base_name(jstr(e, "file")),
				 (long long)json_integer_value(json_object_get(pr, "samples")));
		json_array_foreach(json_object_get(pr, "ranks"), j, r)
		{
			int slow = json_is_true(json_object_get(r, "straggler"));
			pl_strbuf_puts(b, slow ? "<tr class=\"straggler\">" : "<tr>");
			rank_cells(b, r);
			pl_strbuf_printf(
			    b, "<td>%lld</td><td>",
			    (long long)json_integer_value(json_object_get(r, "samples")));
			if (json_is_number(json_object_get(r, "data_share")))
				pl_strbuf_printf(b, "%.1f%%", 100 * jnum(r, "data_share"));
			else
				pl_strbuf_puts(b, "\u2013");
			pl_strbuf_printf(b, "</td><td>%.1f%%</td><td>",
					 100 * jnum(r, "wait_share"));
			esc(b, jstr(r, "top"));
			pl_strbuf_printf(b, " (%.1f%%)</td><td>%s</td></tr>\n",
					 100 * jnum(r, "top_share"), slow ? "straggler" : "");
		}
		pl_strbuf_puts(b, "</table>\n");
	}
}

/* ---- series: memory and GPU over time, the data/compute split ---- */

struct line {
	const char *name, *colour;
	double *t, *y;
	size_t n;
};

/* lines over time on one plot, y from 0; fmt: 'b' bytes, '%' percent */
static void line_chart(struct pl_strbuf *b, const char *title, struct line *ls, size_t nl,
		       char fmt)
{
	double tmax = 0, ymax = 0;
	for (size_t i = 0; i < nl; i++)
		for (size_t k = 0; k < ls[i].n; k++) {
			tmax = fmax(tmax, ls[i].t[k]);
			ymax = fmax(ymax, ls[i].y[k]);
		}
	if (fmt == '%')
		ymax = 100;
	if (!(tmax > 0) || !(ymax > 0))
		return;
	const double X0 = 90, X1 = 1180, Y0 = 40, Y1 = 260;
	pl_strbuf_puts(b, "<svg class=\"strip\" xmlns=\"http://www.w3.org/2000/svg\" viewBox=\"0 0 "
			  "1200 310\" role=\"img\"><text x=\"600\" y=\"20\" "
			  "text-anchor=\"middle\">");
	esc(b, title);
	pl_strbuf_printf(b, "</text>\n<rect x=\"%.0f\" y=\"%.0f\" width=\"%.0f\" height=\"%.0f\" "
			    "fill=\"none\" stroke=\"#999\"/>\n",
			 X0, Y0, X1 - X0, Y1 - Y0);
	for (int k = 0; k <= 4; k++) {
		double v = ymax * k / 4, y = Y1 - (Y1 - Y0) * k / 4;
		char lab[32];
		if (fmt == 'b')
			pl_fmt_bytes(lab, sizeof lab, v);
		else
			snprintf(lab, sizeof lab, "%.0f%%", v);
		pl_strbuf_printf(b, "<text x=\"%.0f\" y=\"%.1f\" text-anchor=\"end\">%s</text>\n",
				 X0 - 6, y + 4, lab);
	}
	for (int k = 0; k <= 4; k++) {
		double v = tmax * k / 4, x = X0 + (X1 - X0) * k / 4;
		pl_strbuf_printf(b, "<text x=\"%.1f\" y=\"%.0f\" text-anchor=\"middle\">%.3g "
				    "s</text>\n",
				 x, Y1 + 18, v);
	}
	for (size_t i = 0; i < nl; i++) {
		if (!ls[i].n)
			continue;
		pl_strbuf_printf(b, "<polyline class=\"series\" fill=\"none\" stroke=\"%s\" "
				    "stroke-width=\"1.5\" points=\"",
				 ls[i].colour);
		for (size_t k = 0; k < ls[i].n; k++)
			pl_strbuf_printf(b, "%.1f,%.1f ", X0 + (X1 - X0) * ls[i].t[k] / tmax,
					 Y1 - (Y1 - Y0) * ls[i].y[k] / ymax);
		pl_strbuf_puts(b, "\"/>\n");
		pl_strbuf_printf(b,
				 "<rect x=\"%.0f\" y=\"%.0f\" width=\"10\" height=\"10\" "
				 "fill=\"%s\"/><text x=\"%.0f\" y=\"%.0f\">",
				 X0 + 200 * (double)i, Y1 + 30, ls[i].colour, X0 + 200 * (double)i + 14,
				 Y1 + 39);
		esc(b, ls[i].name);
		pl_strbuf_puts(b, "</text>\n");
	}
	pl_strbuf_puts(b, "</svg>\n");
}

/* [[t, v, v2...], ...] columns into new arrays */
static size_t columns(json_t *rows, size_t col, double **t, double **y)
{
	size_t n = json_array_size(rows), k = 0, i;
	*t = malloc((n + 1) * sizeof **t);
	*y = malloc((n + 1) * sizeof **y);
	json_t *r;
	json_array_foreach(rows, i, r)
	{
		if (!*t || !*y)
			break;
		json_t *v = json_array_get(r, col);
		if (!json_is_number(v))
			continue;
		(*t)[k] = json_number_value(json_array_get(r, 0));
		(*y)[k++] = json_number_value(v);
	}
	return k;
}

/* per benchmark: its medians over the commits recorded, oldest first, the
 * regressions red (slower than the recording before it), a slowdown in
 * doubt amber (history.c: not called a regression) */
static void history_charts(struct pl_strbuf *b, json_t *benches)
{
	size_t i;
	json_t *bench;
	json_array_foreach(benches, i, bench)
	{
		json_t *pts = json_object_get(bench, "points");
		size_t n = json_array_size(pts), k;
		json_t *p;
		double hi = 0;
		json_array_foreach(pts, k, p)
		    hi = fmax(hi, jnum(p, "p50"));
		if (!n || !(hi > 0))
			continue;
		const double X0 = 90, X1 = 1180, Y0 = 30, Y1 = 200;
		double step = n > 1 ? (X1 - X0 - 40) / (double)(n - 1) : 0;
		pl_strbuf_puts(b, "<svg class=\"strip history\" xmlns=\"http://www.w3.org/2000/svg\" "
				  "viewBox=\"0 0 1200 250\" role=\"img\"><text x=\"600\" y=\"18\" "
				  "text-anchor=\"middle\">");
		esc(b, jstr(bench, "name"));
		pl_strbuf_printf(b, ": median over commits</text>\n<rect x=\"%.0f\" y=\"%.0f\" "
				    "width=\"%.0f\" height=\"%.0f\" fill=\"none\" stroke=\"#999\"/>\n",
				 X0, Y0, X1 - X0, Y1 - Y0);
		for (int t = 0; t <= 4; t++) {
			char lab[32];
			pl_strbuf_printf(b, "<text x=\"%.0f\" y=\"%.1f\" text-anchor=\"end\">%s</text>\n",
					 X0 - 6, Y1 - (Y1 - Y0) * t / 4 + 4,
					 pl_fmt_time(lab, sizeof lab, hi * 1.1 * t / 4));
		}
		pl_strbuf_puts(b, "<polyline fill=\"none\" stroke=\"#2471a3\" points=\"");
		json_array_foreach(pts, k, p)
		    pl_strbuf_printf(b, "%.1f,%.1f ", X0 + 20 + step * (double)k,
				     Y1 - (Y1 - Y0) * jnum(p, "p50") / (hi * 1.1));
		pl_strbuf_puts(b, "\"/>\n");
		size_t every = n / 12 + 1;
		json_array_foreach(pts, k, p)
		{
			int reg = json_is_true(json_object_get(p, "regression"));
			const char *doubt = json_string_value(json_object_get(p, "doubt"));
			int held = doubt && !reg; /* slower, but in doubt */
			double x = X0 + 20 + step * (double)k,
			       y = Y1 - (Y1 - Y0) * jnum(p, "p50") / (hi * 1.1);
			char med[32];
			pl_strbuf_printf(b,
					 "<circle class=\"%s\" cx=\"%.1f\" cy=\"%.1f\" r=\"%d\" "
					 "fill=\"%s\"><title>",
					 reg	? "point regression"
					 : held ? "point doubt"
						: "point",
					 x, y, reg || held ? 6 : 4,
					 reg	? "#c0392b"
					 : held ? "#d68910"
						: "#2471a3");
			esc(b, jstr(p, "commit"));
			pl_strbuf_printf(b, " %s: median %s, %lld runs", jstr(p, "created"),
					 pl_fmt_time(med, sizeof med, jnum(p, "p50")),
					 (long long)json_integer_value(json_object_get(p, "n")));
			if (reg || held)
				pl_strbuf_printf(
				    b, ", %s: %.3f\u00d7 the one before",
				    reg ? "a regression"
					: "slower but in doubt, not called a regression",
				    jnum(p, "ratio"));
			if (doubt) {
				pl_strbuf_puts(b, " (");
				esc(b, doubt);
				pl_strbuf_puts(b, ")");
			}
			pl_strbuf_puts(b, "</title></circle>\n");
			if (k % every == 0) {
				pl_strbuf_printf(b, "<text x=\"%.1f\" y=\"%.0f\" text-anchor=\"middle\">",
						 x, Y1 + 16);
				esc(b, jstr(p, "commit"));
				pl_strbuf_puts(b, "</text>\n");
			}
		}
		pl_strbuf_puts(b, "</svg>\n");
	}
}

static void series_section(struct pl_strbuf *b, const struct pl_report_input *in)
{
	size_t i;
	json_t *e;
	json_array_foreach(in->series, i, e)
	{
		json_t *d = json_object_get(e, "doc");
		const char *schema = jstr(d, "schema");
		pl_strbuf_puts(b, "<h3>");
		esc(b, jstr(e, "file"));
		pl_strbuf_puts(b, "</h3>\n");
		if (strcmp(schema, "perfloop.memory/1") == 0) {
			struct line ls[3] = {{"RSS", "#c0392b", NULL, NULL, 0},
					     {"PSS", "#2471a3", NULL, NULL, 0},
					     {"USS", "#27ae60", NULL, NULL, 0}};
			ls[0].n = columns(json_object_get(d, "series"), 1, &ls[0].t, &ls[0].y);
			ls[1].n = columns(json_object_get(d, "pss_uss_series"), 1, &ls[1].t, &ls[1].y);
			ls[2].n = columns(json_object_get(d, "pss_uss_series"), 2, &ls[2].t, &ls[2].y);
			char peak[32], title[128];
			snprintf(title, sizeof title, "memory over time (RSS peak %s)",
				 pl_fmt_bytes(peak, sizeof peak, jnum(d, "peak_rss_bytes")));
			line_chart(b, title, ls, 3, 'b');
			if (json_is_string(json_object_get(d, "peak_stack"))) {
				pl_strbuf_puts(b, "<p>At the peak: <code>");
				esc(b, jstr(d, "peak_stack"));
				pl_strbuf_puts(b, "</code></p>\n");
			}
			for (int k = 0; k < 3; k++) {
				free(ls[k].t);
				free(ls[k].y);
			}
		} else if (strcmp(schema, "perfloop.gpu/1") == 0) {
			size_t k;
			json_t *dev;
			if (!json_array_size(json_object_get(d, "devices"))) {
				pl_strbuf_puts(b, "<p class=\"muted\">No GPU read: ");
				esc(b, jstr(d, "status"));
				pl_strbuf_puts(b, "</p>\n");
			}
			json_array_foreach(json_object_get(d, "devices"), k, dev)
			{
				json_t *sr = json_object_get(dev, "series");
				json_t *ts = json_object_get(sr, "t"), *us = json_object_get(sr, "util");
				size_t n = json_array_size(ts), m = 0;
				struct line l = {"utilization", "#8e44ad", malloc((n + 1) * sizeof(double)),
						 malloc((n + 1) * sizeof(double)), 0};
				for (size_t j = 0; l.t && l.y && j < n; j++)
					if (json_is_number(json_array_get(us, j))) {
						l.t[m] = json_number_value(json_array_get(ts, j));
						l.y[m++] = json_number_value(json_array_get(us, j));
					}
				l.n = m;
				char title[300];
				snprintf(title, sizeof title, "GPU %zu (%.200s): utilization over time", k,
					 jstr(dev, "name"));
				line_chart(b, title, &l, 1, '%');
				free(l.t);
				free(l.y);
			}
		} else if (strcmp(schema, "perfloop.history") == 0) {
			history_charts(b, json_object_get(d, "benchmarks"));
		} else { /* perfloop.steps/1: the data/compute split */
			json_t *st = json_object_get(d, "steady");
			double data = jnum(json_object_get(st, "data"), "sum_s"),
			       comp = jnum(json_object_get(st, "compute"), "sum_s");
			double share = jnum(st, "data_share");
			pl_strbuf_printf(b,
					 "<svg class=\"strip split\" xmlns=\"http://www.w3.org/2000/svg\" "
					 "viewBox=\"0 0 1200 60\" role=\"img\"><rect x=\"10\" y=\"10\" "
					 "width=\"%.1f\" height=\"26\" fill=\"#e67e22\"><title>waiting for "
					 "data: %.1f%%</title></rect><rect x=\"%.1f\" y=\"10\" "
					 "width=\"%.1f\" height=\"26\" fill=\"#2e86c1\"><title>computing: "
					 "%.1f%%</title></rect><text x=\"14\" y=\"54\">waiting for data "
					 "%.1f%% (%.3g s) \u00b7 computing %.1f%% (%.3g s) over %lld steady "
					 "steps%s</text></svg>\n",
					 1180 * share, 100 * share, 10 + 1180 * share, 1180 * (1 - share),
					 100 * (1 - share), 100 * share, data, 100 * (1 - share), comp,
					 (long long)json_integer_value(json_object_get(d, "steps")),
					 json_is_true(json_object_get(d, "data_bound"))
					     ? ": data-loading bound"
					     : "");
		}
	}
}

/* ---- findings ---- */

static void findings_table(struct pl_strbuf *b, const struct pl_report_input *in)
{
	size_t n = 0;
	const struct pl_finding **f = pl_report_ranked(&in->findings, &n, 0);
	if (!f || !n) {
		free(f);
		return;
	}
	pl_strbuf_puts(b, "<table class=\"sortable\" id=\"findings\"><thead><tr><th "
			  "data-key=\"rank\">#</th><th data-key=\"sev\">Severity</th><th "
			  "data-key=\"level\">Level</th><th data-key=\"file\">File</th>"
			  "<th>Finding</th></tr></thead>\n");
	for (size_t i = 0; i < n; i++) {
		char where[600];
		if (f[i]->line)
			snprintf(where, sizeof where, "%.500s:%ld", f[i]->path, f[i]->line);
		else
			snprintf(where, sizeof where, "%.500s", f[i]->path);
		pl_strbuf_printf(b,
				 "<tbody class=\"finding\" data-rank=\"%zu\" data-sev=\"%d\" "
				 "data-level=\"%d\" data-file=\"",
				 i + 1, (int)f[i]->severity, f[i]->level);
		esc(b, where);
		pl_strbuf_printf(b, "\"><tr class=\"head\"><td class=\"num\">%zu</td><td>%s</td><td "
				    "class=\"num\">%d</td><td>",
				 i + 1, pl_severity_name(f[i]->severity), f[i]->level);
		esc(b, where);
		pl_strbuf_puts(b, "</td><td>");
		esc(b, f[i]->signal ? f[i]->signal : "");
		pl_strbuf_puts(b, "</td></tr><tr class=\"detail\" hidden><td colspan=\"5\"><pre>");
		char *text = pl_report_finding_text(in, f[i], i + 1);
		esc(b, text ? text : "");
		free(text);
		pl_strbuf_puts(b, "</pre></td></tr></tbody>\n");
	}
	pl_strbuf_puts(b, "</table>\n");
	free(f);
}

static const char page_js[] =
    "(function(){\n"
    "var t=document.getElementById('findings');if(!t)return;\n"
    "t.addEventListener('click',function(e){var th=e.target.closest('th[data-key]');\n"
    " if(th){var k=th.getAttribute('data-key'),dir=th.getAttribute('data-dir')==='1'?-1:1;\n"
    "  th.setAttribute('data-dir',dir===1?'1':'0');\n"
    "  var bs=Array.prototype.slice.call(t.querySelectorAll('tbody.finding'));\n"
    "  bs.sort(function(a,b){var x=a.getAttribute('data-'+k),y=b.getAttribute('data-'+k);\n"
    "   var c=k==='file'?x.localeCompare(y):(+x)-(+y);return c*dir||"
    "(+a.getAttribute('data-rank'))-(+b.getAttribute('data-rank'))});\n"
    "  bs.forEach(function(x){t.appendChild(x)});return}\n"
    " var tr=e.target.closest('tr.head');if(tr){var d=tr.nextElementSibling;d.hidden=!d.hidden}});\n"
    "})();\n";

char *pl_report_html(const struct pl_report_input *in, const struct pl_html_profile *profs,
		     size_t nprofs)
{
	struct pl_strbuf b = {0};
	pl_strbuf_puts(&b, "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">"
			   "<meta http-equiv=\"Content-Security-Policy\" content=\"default-src "
			   "'none'; style-src 'unsafe-inline'; script-src 'unsafe-inline'\">"
			   "<meta name=\"viewport\" content=\"width=device-width\">"
			   "<title>perfloop report</title>\n<style>");
	pl_strbuf_puts(&b, css);
	pl_strbuf_puts(&b, pl_html_flame_css);
	pl_strbuf_puts(&b, "</style></head>\n<body>\n<h1>perfloop report</h1>\n");

	/* summary */
	pl_strbuf_puts(&b, "<section id=\"summary\"><h2>Summary</h2>\n");
	size_t nv = json_array_size(in->verdicts);
	if (nv)
		verdicts(&b, in);
	else
		pl_strbuf_puts(&b, "<p class=\"muted\">No verdict among the inputs.</p>\n");
	const char *reason;
	double conf = pl_report_confidence(&in->findings, (int)(nv + json_array_size(in->ledger)),
					   (int)json_array_size(in->summaries), &reason);
	pl_strbuf_puts(&b, "<h3>Confidence</h3><p id=\"confidence\">");
	if (conf > 0)
		pl_strbuf_printf(&b, "%.2f \u2014 ", conf);
	else
		pl_strbuf_puts(&b, "n/a \u2014 ");
	esc(&b, reason);
	pl_strbuf_puts(&b, ".</p></section>\n");

	if (json_array_size(in->summaries)) {
		pl_strbuf_puts(&b, "<section id=\"benchmarks\"><h2>Benchmarks</h2>\n");
		benchmarks(&b, in);
		pl_strbuf_puts(&b, "</section>\n");
	}
	if (json_array_size(in->merges)) {
		pl_strbuf_puts(&b, "<section id=\"ranks\"><h2>Ranks</h2>\n<p class=\"muted\">One "
				   "run's ranks taken together (perfloop merge); a straggler is "
				   "the rank the others wait for.</p>\n");
		ranks_section(&b, in);
		pl_strbuf_puts(&b, "</section>\n");
	}
	complexity(&b, in);
	if (json_array_size(in->series)) {
		pl_strbuf_puts(&b, "<section id=\"series\"><h2>History, training split, memory and GPU</h2>\n");
		series_section(&b, in);
		pl_strbuf_puts(&b, "</section>\n");
	}
	if (nprofs) {
		pl_strbuf_puts(&b, "<section id=\"profiles\"><h2>Profiles</h2>\n<p class=\"muted\">"
				   "Click a frame to zoom, Escape or \u201cReset zoom\u201d to undo; "
				   "the search box takes a regular expression.</p>\n");
		for (size_t i = 0; i < nprofs; i++)
			profile_section(&b, &profs[i]);
		if (nprofs == 2)
			diff_section(&b, &profs[0], &profs[1]);
		pl_strbuf_puts(&b, "</section>\n");
	}
	if (in->findings.n) {
		pl_strbuf_puts(&b, "<section id=\"findings-section\"><h2>Findings</h2>\n<p "
				   "class=\"muted\">Ranked by measured impact; click a heading to "
				   "sort, a row to open it.</p>\n");
		findings_table(&b, in);
		pl_strbuf_puts(&b, "</section>\n");
	}

	/* the text report, and the inputs' verdicts and comparisons as data */
	char *text = pl_report_render(in, PL_REPORT_TEXT, PL_REPORT_FINDINGS);
	pl_strbuf_puts(&b, "<section id=\"text\"><h2>The report as text</h2><details><summary>"
			   "perfloop report</summary><pre>");
	esc(&b, text ? text : "");
	free(text);
	pl_strbuf_puts(&b, "</pre></details></section>\n");
	json_t *data = json_object();
	json_t *vs = json_array(), *cs = json_array();
	size_t i;
	json_t *v;
	json_array_foreach(in->verdicts, i, v)
	    json_array_append(vs, json_object_get(v, "doc"));
	json_array_foreach(in->summaries, i, v)
	{
		json_t *c = json_object_get(json_object_get(v, "doc"), "comparisons");
		json_array_append_new(cs, json_pack("{s:O, s:O}", "file", json_object_get(v, "file"),
						    "comparisons", c ? c : json_null()));
	}
	json_object_set_new(data, "schema", json_string("perfloop.report-data/1"));
	json_object_set_new(data, "verdicts", vs);
	json_object_set_new(data, "comparisons", cs);
	pl_strbuf_puts(&b, "<script type=\"application/json\" id=\"perfloop-data\">");
	json_in_script(&b, data);
	json_decref(data);
	pl_strbuf_puts(&b, "</script>\n<script>\n");
	pl_strbuf_puts(&b, pl_html_flame_js);
	pl_strbuf_puts(&b, page_js);
	pl_strbuf_puts(&b, "</script>\n</body></html>\n");
	return pl_strbuf_take(&b);
}
