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
#include "linux/counters.h"

/* The parameter's value as a size: a number > 0, all of it. */
static int size_of(const char *v, double *out)
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
	/* the stop gate's finding: timing only (memory grows for other reasons) */
	double limit = expect >= 0 ? pl_cx_power((enum pl_cx_class)expect) + 0.5 : 1.8;
	int over = expect >= 0 ? f.exponent > limit : f.exponent >= limit;
	if (d == D_WALL && over && f.best != PL_CX_1) {
		char msg[400];
		if (expect >= 0)
			snprintf(msg, sizeof msg,
				 "the cost grows as n^%.2f (fitted O(%s)), above the expected O(%s)",
				 f.exponent, pl_cx_name(f.best), pl_cx_name((enum pl_cx_class)expect));
		else
			snprintf(msg, sizeof msg,
				 "the cost grows as n^%.2f (fitted O(%s)): superlinear in %s",
				 f.exponent, pl_cx_name(f.best), param);
		json_object_set_new(o, "finding", json_pack("{s:s, s:s}", "severity", "high",
							    "message", msg));
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
		for (int d = 0; d < D_COUNT; d++) {
			size_t k = 0;
			for (size_t j = 0; j < combos; j++) {
				const struct pl_bench *b = &run->bench[ci * combos + j];
				double x, v = value_of(b, (enum dim)d);
				if (b->state == PL_BENCH_FAILED || size_of(b->param_values[0], &x) < 0 ||
				    !(v > 0))
					continue;
				n[k] = x;
				y[k++] = v;
			}
			if (k < 2 || (d != D_WALL && k < combos))
				continue;
			json_t *fit = one_fit(templates[ci], b0->param_names[0], (enum dim)d, n, y, k,
					      expect);
			if (fit)
				json_array_append_new(out, fit);
		}
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
		    "complexity_exponent", "", json_number_value(json_object_get(o, "exponent")));
		if (!x)
			return -1;
		x->severity = PL_SEV_HIGH;
		x->level = 1;
		x->confidence = json_is_true(json_object_get(o, "weak")) ? 0.6 : 0.9;
	}
	return 0;
}
