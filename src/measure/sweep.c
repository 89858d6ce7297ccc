/*
 * Size sweeps' complexity (sweep.h): the points gathered per command and
 * dimension from a finished bench run, fitted, and said: as JSON in the
 * summary ("complexity"), as a small table on the terminal, and as
 * findings for select's stop gate.
 */
#include "sweep.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "complexity.h"
#include "counters.h"
#include "strbuf.h"

int pl_sweep_size(const char *v, double *out)
{
	char *end;
	double x = strtod(v, &end);
	if (end == v || *end || !(x > 0) || !isfinite(x))
		return -1;
	*out = x;
	return 0;
}

enum dim { D_WALL, D_CPU, D_RSS, D_INSN, D_COUNT };
static const char *const dim_names[D_COUNT] = {"wall_s", "cpu_s", "max_rss_bytes",
					       "instructions"};

static double value_of(const struct pl_bench *b, enum dim d)
{
	const struct pl_metric_stats *m = d == D_WALL	? &b->wall
					  : d == D_CPU	? &b->cpu
					  : d == D_RSS	? &b->rss
							: &b->counter[PL_CTR_INSTRUCTIONS];
	return m->present && m->d.n ? m->d.p50 : NAN;
}

static json_t *one_fit(const char *tmpl, const char *param, enum dim d, const double *n,
		       const double *y, size_t k, int expect)
{
	struct pl_cx_fit f;
	if (pl_cx_fit(n, y, k, &f) < 0)
		return NULL;
	json_t *pts = json_array(), *rms = json_object();
	for (size_t i = 0; i < k; i++)
		json_array_append_new(pts, json_pack("{s:f, s:f}", "n", n[i], "value", y[i]));
	for (int c = 0; c < PL_CX_COUNT; c++)
		json_object_set_new(rms, pl_cx_name((enum pl_cx_class)c), json_real(f.rms[c]));
	json_t *o = json_pack(
	    "{s:s, s:s, s:s, s:o, s:s, s:f, s:o, s:f, s:o, s:b, s:f, s:o}", "command", tmpl,
	    "parameter", param, "dimension", dim_names[d], "points", pts, "class",
	    pl_cx_name(f.best), "exponent", round(f.exponent * 1000) / 1000, "exponent_ci95",
	    isnan(f.exp_lo) ? json_null()
			    : json_pack("[f, f]", round(f.exp_lo * 1000) / 1000,
					round(f.exp_hi * 1000) / 1000),
	    "constant", f.exp_a, "rms", rms, "weak", f.weak, "range", f.range, "expect",
	    expect >= 0 ? json_string(pl_cx_name((enum pl_cx_class)expect)) : json_null());
	if (!o)
		return NULL;
	if (f.weak) {
		char why[160];
		snprintf(why, sizeof why, "%zu sizes over a %.0fx range: 4 sizes over 16x or more "
			 "make a fit to trust", k, f.range);
		json_object_set_new(o, "weak_why", json_string(why));
	}
	/* the stop gate's finding: timing only (memory grows for other
	 * reasons); an exponent beyond the limit, and with its 95% interval
	 * wholly above the expected power (1 without --expect): a noisy sweep
	 * whose interval spans the expectation is no finding (a linear program
	 * on a busy host once fitted n^2.15, interval 0-4) */
	double power = expect >= 0 ? pl_cx_power((enum pl_cx_class)expect) : 1;
	double limit = expect >= 0 ? power + 0.5 : 1.8;
	int over = (expect >= 0 ? f.exponent > limit : f.exponent >= limit) &&
		   (isnan(f.exp_lo) || f.exp_lo > power);
	if ((d == D_WALL || d == D_CPU) && over && f.best != PL_CX_1) {
		char msg[400];
		const char *of = d == D_CPU ? " (CPU time)" : " (wall time)";
		if (expect >= 0)
			snprintf(msg, sizeof msg,
				 "the cost%s grows as n^%.2f (fitted O(%s)), above the expected O(%s)",
				 of, f.exponent, pl_cx_name(f.best),
				 pl_cx_name((enum pl_cx_class)expect));
		else
			snprintf(msg, sizeof msg,
				 "the cost%s grows as n^%.2f (fitted O(%s)): superlinear in %s", of,
				 f.exponent, pl_cx_name(f.best), param);
		json_object_set_new(o, "finding",
				    json_pack("{s:s, s:s, s:s, s:f}", "severity", "high", "message", msg,
					      "basis", dim_names[d], "exponent",
					      round(f.exponent * 1000) / 1000));
	} else {
		json_object_set_new(o, "finding", json_null());
	}
	return o;
}

json_t *pl_sweep_fits(const struct pl_bench_run *run, const char *const *templates,
		      size_t ncmds, size_t combos, int expect)
{
	json_t *out = json_array();
	if (!out || combos < 2 || ncmds * combos != run->nbench)
		return out;
	double *n = calloc(combos, sizeof *n), *y = calloc(combos, sizeof *y);
	if (!n || !y) {
		free(n);
		free(y);
		json_decref(out);
		return NULL;
	}
	for (size_t ci = 0; ci < ncmds; ci++) {
		const struct pl_bench *b0 = &run->bench[ci * combos];
		if (b0->nparams != 1)
			break;
		json_t *fitted[D_COUNT] = {NULL};
		for (int d = 0; d < D_COUNT; d++) {
			size_t k = 0;
			for (size_t j = 0; j < combos; j++) {
				const struct pl_bench *b = &run->bench[ci * combos + j];
				double x, v = value_of(b, (enum dim)d);
				if (b->state == PL_BENCH_FAILED || pl_sweep_size(b->param_values[0], &x) < 0 ||
				    !(v > 0))
					continue;
				n[k] = x;
				y[k++] = v;
			}
			if (k < 2 || (d != D_WALL && k < combos))
				continue;
			json_t *fit = one_fit(templates[ci], b0->param_names[0], (enum dim)d, n, y, k,
					      expect);
			if (fit) {
				json_array_append_new(out, fit);
				fitted[d] = fit;
			}
		}
		/* one timing finding per command, on its wall-time fit: from the
		 * wall time, else from the CPU time where the wall time was too
		 * noisy to tell (a shared host steals wall time; the CPU time of
		 * a single-threaded program is the steadier curve) */
		json_t *wf = fitted[D_WALL] ? json_object_get(fitted[D_WALL], "finding") : NULL;
		json_t *cf = fitted[D_CPU] ? json_object_get(fitted[D_CPU], "finding") : NULL;
		/* "too noisy to tell": the wall's interval reaches the limit, so
		 * it cannot rule out the growth the CPU time shows (a quadratic's
		 * wall fit bent to n^1.72, interval 1.51-1.94, while five
		 * processes shared 2 CPUs; its CPU time fitted n^2.00,
		 * 1.90-2.11). A wall time wholly below the limit (a clearly
		 * linear wall time of a program whose threads' CPU time grows)
		 * is no finding. */
		json_t *wci = fitted[D_WALL] ? json_object_get(fitted[D_WALL], "exponent_ci95") : NULL;
		double power = expect >= 0 ? pl_cx_power((enum pl_cx_class)expect) : 1;
		double limit = expect >= 0 ? power + 0.5 : 1.8;
		int noisy = json_array_size(wci) == 2 &&
			    json_number_value(json_array_get(wci, 1)) >= limit;
		if (fitted[D_WALL] && !json_is_object(wf) && json_is_object(cf) && noisy)
			json_object_set(fitted[D_WALL], "finding", cf);
		if (fitted[D_CPU])
			json_object_set_new(fitted[D_CPU], "finding", json_null());
	}
	free(n);
	free(y);
	return out;
}

static void fmt_value(char *buf, size_t len, const char *dim, double v)
{
	if (!strcmp(dim, "wall_s"))
		pl_fmt_time(buf, len, v);
	else if (!strcmp(dim, "max_rss_bytes"))
		pl_fmt_bytes(buf, len, v);
	else
		snprintf(buf, len, "%.4g", v);
}

void pl_sweep_print(FILE *f, const struct pl_style *st, json_t *fits)
{
	size_t i;
	json_t *o;
	json_array_foreach(fits, i, o)
	{
		const char *dim = json_string_value(json_object_get(o, "dimension"));
		const char *param = json_string_value(json_object_get(o, "parameter"));
		const char *cls = json_string_value(json_object_get(o, "class"));
		int wall = !strcmp(dim, "wall_s");
		if (!wall)
			continue; /* memory and instructions: in the JSON (a peak RSS
				   * hides small growth under the process's floor) */
		fprintf(f, "\n%sComplexity%s of '%s' (wall time median vs %s):\n", pl_c(st, PL_BOLD),
			pl_c(st, PL_RESET), json_string_value(json_object_get(o, "command")), param);
		{
			fprintf(f, "  %12s  %12s\n", param, "median");
			size_t k;
			json_t *p;
			json_array_foreach(json_object_get(o, "points"), k, p)
			{
				char v[48];
				fmt_value(v, sizeof v, dim,
					  json_number_value(json_object_get(p, "value")));
				double n = json_number_value(json_object_get(p, "n"));
				if (n == floor(n) && n < 1e15)
					fprintf(f, "  %12.0f  %12s\n", n, v);
				else
					fprintf(f, "  %12.6g  %12s\n", n, v);
			}
		}
		char c[48];
		fmt_value(c, sizeof c, dim, json_number_value(json_object_get(o, "constant")));
		json_t *ci = json_object_get(o, "exponent_ci95");
		fprintf(f, "  fitted: O(%s), exponent %.2f", cls,
			json_number_value(json_object_get(o, "exponent")));
		if (json_array_size(ci) == 2 && strcmp(cls, "1"))
			fprintf(f, " (95%% CI %.2f-%.2f)", json_number_value(json_array_get(ci, 0)),
				json_number_value(json_array_get(ci, 1)));
		fprintf(f, ", constant part %s\n", c);
		fprintf(f, "  RMS of each class:");
		const char *name;
		json_t *r;
		json_object_foreach(json_object_get(o, "rms"), name, r)
		    fprintf(f, " %s %.1f%%", name, 100 * json_number_value(r));
		fputc('\n', f);
		if (json_is_true(json_object_get(o, "weak")))
			fprintf(f, "  %swarning%s: a weak fit: %s\n", pl_c(st, PL_YELLOW), pl_c(st, PL_RESET),
				json_string_value(json_object_get(o, "weak_why")));
		json_t *fd = json_object_get(o, "finding");
		if (json_is_object(fd))
			fprintf(f, "  %sfinding [%s]%s: %s\n", pl_c(st, PL_RED),
				json_string_value(json_object_get(fd, "severity")), pl_c(st, PL_RESET),
				json_string_value(json_object_get(fd, "message")));
	}
}

/* ---- the plot ---- */

#define PW 760.0 /* the picture's width; its height grows with the legend */
#define X0 90.0	  /* the plot area */
#define X1 730.0
#define Y0 60.0
#define Y1 400.0
#define MAXPTS 256

static const char *const colours[] = {"#1f6fb4", "#d9541e", "#2a9d3a", "#8e44ad", "#b8860b",
				       "#c0392b"};

struct axis {
	double lo, hi; /* log10 of the ends */
};

static void axis_fit(struct axis *a, double min, double max)
{
	double lo = log10(min), hi = log10(max);
	if (hi - lo < 1) { /* at least a decade, centred */
		double mid = (lo + hi) / 2;
		lo = mid - 0.5;
		hi = mid + 0.5;
	}
	double pad = (hi - lo) * 0.06;
	a->lo = lo - pad;
	a->hi = hi + pad;
}

static double to_x(const struct axis *a, double v)
{
	return X0 + (log10(v) - a->lo) / (a->hi - a->lo) * (X1 - X0);
}

static double to_y(const struct axis *a, double v)
{
	return Y1 - (log10(v) - a->lo) / (a->hi - a->lo) * (Y1 - Y0);
}

/* Ticks at 1, 2, 5 times each power of ten (1 alone over more than three
 * decades), with grid lines and labels. */
static void ticks(struct pl_strbuf *b, const struct axis *a, int vertical, int time)
{
	int step125 = a->hi - a->lo <= 3;
	for (int e = (int)floor(a->lo); e <= (int)ceil(a->hi); e++)
		for (int m = 1; m <= 5; m += m == 1 ? 1 : 3) {
			if (m > 1 && !step125)
				break;
			double v = m * pow(10, e), l = log10(v);
			if (l < a->lo || l > a->hi)
				continue;
			char lab[48];
			if (time)
				pl_fmt_time(lab, sizeof lab, v);
			else
				snprintf(lab, sizeof lab, "%g", v);
			if (vertical) {
				double y = to_y(a, v);
				pl_strbuf_printf(b,
						 "<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" "
						 "class=\"grid\"/>\n<text x=\"%.1f\" y=\"%.1f\" "
						 "text-anchor=\"end\">%s</text>\n",
						 X0, y, X1, y, X0 - 6, y + 4, lab);
			} else {
				double x = to_x(a, v);
				pl_strbuf_printf(b,
						 "<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" "
						 "class=\"grid\"/>\n<text x=\"%.1f\" y=\"%.1f\" "
						 "text-anchor=\"middle\">%s</text>\n",
						 x, Y0, x, Y1, x, Y1 + 16, lab);
			}
		}
}

/* A fit's points into n, y (at most MAXPTS); their count. */
static size_t fit_points(json_t *o, double *n, double *y)
{
	size_t k = 0, i;
	json_t *p;
	json_array_foreach(json_object_get(o, "points"), i, p)
	{
		if (k == MAXPTS)
			break;
		n[k] = json_number_value(json_object_get(p, "n"));
		y[k] = json_number_value(json_object_get(p, "value"));
		if (n[k] > 0 && y[k] > 0)
			k++;
	}
	return k;
}

/* A wall-time fit's points (into n, y) fitted again (the class's own a
 * and c, for its line): their count, or 0 for another dimension or too
 * few points. */
static size_t wall_fit(json_t *o, double *n, double *y, struct pl_cx_fit *f)
{
	if (strcmp(json_string_value(json_object_get(o, "dimension")) ?: "", "wall_s") != 0)
		return 0;
	size_t k = fit_points(o, n, y);
	return k >= 2 && pl_cx_fit(n, y, k, f) == 0 ? k : 0;
}

char *pl_sweep_svg(json_t *fits)
{
	double n[MAXPTS], y[MAXPTS];
	double nmin = INFINITY, nmax = 0, vmin = INFINITY, vmax = 0;
	const char *param = NULL;
	size_t nseries = 0, i;
	json_t *o;
	/* the ranges: the points and the fitted lines over them */
	json_array_foreach(fits, i, o)
	{
		struct pl_cx_fit f;
		size_t k = wall_fit(o, n, y, &f);
		if (!k)
			continue;
		param = json_string_value(json_object_get(o, "parameter"));
		nseries++;
		for (size_t j = 0; j < k; j++) {
			double fy = pl_cx_eval(&f, f.best, n[j]);
			nmin = fmin(nmin, n[j]);
			nmax = fmax(nmax, n[j]);
			vmin = fmin(vmin, fmin(y[j], fy > 0 ? fy : y[j]));
			vmax = fmax(vmax, fmax(y[j], fy));
		}
	}
	if (!nseries)
		return NULL;
	double ph = Y1 + 66 + 18.0 * (double)nseries;
	struct axis ax, ay;
	axis_fit(&ax, nmin, nmax);
	axis_fit(&ay, vmin, vmax);
	struct pl_strbuf b = {0};
	pl_strbuf_printf(&b,
			 "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
			 "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"%.0f\" height=\"%.0f\" "
			 "viewBox=\"0 0 %.0f %.0f\" font-family=\"sans-serif\" font-size=\"12\">\n"
			 "<style>.grid{stroke:#ddd;stroke-width:1}.axis{stroke:#333;fill:none}"
			 "text{fill:#222}</style>\n"
			 "<rect width=\"100%%\" height=\"100%%\" fill=\"#fff\"/>\n"
			 "<text x=\"%.0f\" y=\"28\" font-size=\"16\" text-anchor=\"middle\">"
			 "Wall time (median) against ",
			 PW, ph, PW, ph, PW / 2);
	pl_strbuf_xml(&b, param);
	pl_strbuf_puts(&b, ", log-log</text>\n");
	ticks(&b, &ax, 0, 0);
	ticks(&b, &ay, 1, 1);
	pl_strbuf_printf(&b,
			 "<rect x=\"%.0f\" y=\"%.0f\" width=\"%.0f\" height=\"%.0f\" class=\"axis\"/>\n"
			 "<text x=\"%.0f\" y=\"%.0f\" text-anchor=\"middle\">",
			 X0, Y0, X1 - X0, Y1 - Y0, (X0 + X1) / 2, Y1 + 36);
	pl_strbuf_xml(&b, param);
	pl_strbuf_printf(&b,
			 "</text>\n<text transform=\"translate(18 %.0f) rotate(-90)\" "
			 "text-anchor=\"middle\">wall time</text>\n",
			 (Y0 + Y1) / 2);
	size_t s = 0;
	json_array_foreach(fits, i, o)
	{
		struct pl_cx_fit f;
		size_t k = wall_fit(o, n, y, &f);
		if (!k)
			continue;
		const char *col = colours[s % (sizeof colours / sizeof *colours)];
		double lo = INFINITY, hi = 0;
		for (size_t j = 0; j < k; j++) {
			lo = fmin(lo, n[j]);
			hi = fmax(hi, n[j]);
		}
		/* the fitted class, 64 steps evenly spaced in log n */
		pl_strbuf_printf(&b, "<polyline fill=\"none\" stroke=\"%s\" stroke-width=\"2\" "
				     "stroke-dasharray=\"6 4\" points=\"", col);
		for (int t = 0; t <= 64; t++) {
			double x = lo * pow(hi / lo, t / 64.0), v = pl_cx_eval(&f, f.best, x);
			if (v > 0)
				pl_strbuf_printf(&b, "%s%.1f,%.1f", t ? " " : "", to_x(&ax, x),
						 to_y(&ay, v));
		}
		pl_strbuf_puts(&b, "\"/>\n");
		for (size_t j = 0; j < k; j++) {
			char v[48];
			pl_fmt_time(v, sizeof v, y[j]);
			pl_strbuf_printf(&b,
					 "<circle cx=\"%.1f\" cy=\"%.1f\" r=\"4\" fill=\"%s\">"
					 "<title>%g: %s</title></circle>\n",
					 to_x(&ax, n[j]), to_y(&ay, y[j]), col, n[j], v);
		}
		/* its legend line, below the plot */
		double ly = Y1 + 60 + 18.0 * (double)s;
		const char *cmd = json_string_value(json_object_get(o, "command"));
		char shown[72];
		snprintf(shown, sizeof shown, "%s", cmd ? cmd : "?");
		if (cmd && strlen(cmd) >= sizeof shown) { /* cut at a character */
			size_t cut = sizeof shown - 4;
			while (cut > 0 && ((unsigned char)shown[cut] & 0xc0) == 0x80)
				cut--;
			memcpy(shown + cut, "...", 4);
		}
		pl_strbuf_printf(&b,
				 "<rect x=\"%.0f\" y=\"%.0f\" width=\"12\" height=\"12\" fill=\"%s\"/>\n"
				 "<text x=\"%.0f\" y=\"%.0f\">",
				 X0, ly - 10, col, X0 + 18, ly);
		pl_strbuf_xml(&b, shown);
		pl_strbuf_printf(&b, ": O(%s), exponent %.2f", pl_cx_name(f.best),
				 json_number_value(json_object_get(o, "exponent")));
		json_t *fd = json_object_get(o, "finding");
		if (json_is_object(fd)) {
			pl_strbuf_puts(&b, " - finding [");
			pl_strbuf_xml(&b, json_string_value(json_object_get(fd, "severity")));
			pl_strbuf_puts(&b, "]");
		}
		pl_strbuf_puts(&b, "</text>\n");
		s++;
	}
	pl_strbuf_puts(&b, "</svg>\n");
	return pl_strbuf_take(&b);
}

int pl_sweep_findings(json_t *fits, struct pl_findings *out)
{
	size_t i;
	json_t *o;
	json_array_foreach(fits, i, o)
	{
		json_t *fd = json_object_get(o, "finding");
		if (!json_is_object(fd))
			continue;
		const char *cmd = json_string_value(json_object_get(o, "command"));
		struct pl_finding *x = pl_findings_add_measured(
		    out, "complexity", cmd, "complexity_exponent", "Cost grows faster than expected",
		    json_string_value(json_object_get(fd, "message")),
		    "find the step whose work grows with the size (profile the largest size) and "
		    "replace it with an algorithm of a lower class: index, sort once, hash",
		    "complexity_exponent", "",
		    json_number_value(json_object_get(fd, "exponent") ?: json_object_get(o, "exponent")));
		if (!x)
			return -1;
		x->severity = PL_SEV_HIGH;
		x->level = 1;
		x->confidence = json_is_true(json_object_get(o, "weak")) ? 0.6 : 0.9;
	}
	return 0;
}
