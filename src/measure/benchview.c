/*
 * Bench output (see benchview.h). Medians lead because benchmark
 * distributions are skewed; the mean is shown beside them for hyperfine's
 * users. Exports are built in memory and written atomically by the command.
 */
#include "benchview.h"
#include "metric.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "strbuf.h"
#include "summary.h"

void pl_benchview_machine(FILE *f, const struct pl_style *st, const struct pl_bench_run *run)
{
	const struct pl_quiet *q = &run->quiet;
	int cpu = run->fp.pinned_cpu;
	char where[32] = "the CPUs";
	if (cpu >= 0)
		snprintf(where, sizeof(where), "CPU %d", cpu);
	if (run->unpinned_why[0])
		fprintf(f, "%sNot pinned: %s%s\n", pl_c(st, PL_DIM), run->unpinned_why,
			pl_c(st, PL_RESET));
	if (run->extended)
		fprintf(f,
			"%sA close call (significant, but the interval crossed the 1%% line): "
			"every command measured %s as long%s\n",
			pl_c(st, PL_DIM), run->extended == 1 ? "twice" : "three times",
			pl_c(st, PL_RESET));
	if (cpu < 0 && !q->checked)
		return;
	fprintf(f, "%s", pl_c(st, PL_DIM));
	if (cpu >= 0)
		fprintf(f, "Runs pinned to CPU %d (by %s)", cpu, run->pinned_by);
	else
		fprintf(f, "Runs not pinned");
	if (q->checked && q->quiet && q->waited_s > 0)
		fprintf(f, "; waited %.1f s for %s to be idle", q->waited_s, where);
	else if (q->checked && !q->quiet)
		fprintf(f, "%s; %s", pl_c(st, PL_RESET), pl_c(st, PL_YELLOW));
	if (q->checked && !q->quiet)
		fprintf(f, "%s was still %.0f%% busy with other work after %.1f s: measured "
			   "anyway (perfloop system show lists what runs)",
			where, q->busy * 100, q->waited_s);
	fprintf(f, "%s\n", pl_c(st, PL_RESET));
	const struct pl_speedprobe *sp = &run->sp;
	if (run->probe_slowest > PL_PROBE_CONTENDED)
		fprintf(f,
			"%sThe CPU ran up to %.1fx slower at times (speed probe: the host's other "
			"work); waited %.1f s in all for it to recover, and left out what was "
			"measured while it was slow%s\n",
			pl_c(st, PL_DIM), run->probe_slowest, sp->waited_s, pl_c(st, PL_RESET));
}

static void verdict_line(FILE *f, const struct pl_style *st, const char *name, const char *refname,
			 double ratio, double lo, double hi, double p, enum pl_change ch,
			 const char *dim)
{
	const char *col = ch == PL_CHANGE_FASTER   ? PL_GREEN
			  : ch == PL_CHANGE_SLOWER ? PL_RED
						   : PL_DIM;
	char rel[64];
	int sim = dim && strncmp(dim, "sim_", 4) == 0;
	int other = dim && strcmp(dim, "timing") != 0;
	if (other && !sim) /* the program's own number: not necessarily a time */
		snprintf(rel, sizeof(rel), "%.2f× %s than", ratio < 1 ? 1.0 / ratio : ratio,
			 ratio < 1 ? "lower" : "higher");
	else if (ratio < 1)
		snprintf(rel, sizeof(rel), "%.2f× faster than", 1.0 / ratio);
	else
		snprintf(rel, sizeof(rel), "%.2f× slower than", ratio);
	fprintf(f, "  %s%s%s %s %s%s%s%s%s\n", pl_c(st, PL_BOLD), name, pl_c(st, PL_RESET), rel,
		pl_c(st, PL_BOLD), refname, pl_c(st, PL_RESET), other ? " on " : "",
		other ? dim : "");
	if (sim)
		fprintf(f,
			"    ratio %.3f  range [%.3f, %.3f]  simulated, deterministic  → %s%s%s\n",
			ratio, lo, hi, pl_c(st, col), pl_change_name(ch), pl_c(st, PL_RESET));
	else
		fprintf(f, "    ratio %.3f  95%% CI [%.3f, %.3f]  p = %.2g  → %s%s%s\n", ratio, lo,
			hi, p, pl_c(st, col), pl_change_name(ch), pl_c(st, PL_RESET));
}

/* The commands in run->sort's order (as given where it cannot sort:
 * failed commands last). NULL out of memory: the caller uses 0..n. */
static size_t *view_order(const struct pl_bench_run *run)
{
	size_t *o = malloc((run->nbench ? run->nbench : 1) * sizeof *o);
	if (!o)
		return NULL;
	for (size_t i = 0; i < run->nbench; i++)
		o[i] = i;
	for (size_t i = 1; run->sort && i < run->nbench; i++) { /* stable insertion */
		size_t x = o[i], j = i;
		const struct pl_bench *bx = &run->bench[x];
		double kx = !bx->wall.present ? INFINITY
			    : run->sort == 2   ? bx->wall.d.mean
					       : bx->wall.d.p50;
		while (j > 0) {
			const struct pl_bench *by = &run->bench[o[j - 1]];
			double ky = !by->wall.present ? INFINITY
				    : run->sort == 2   ? by->wall.d.mean
						       : by->wall.d.p50;
			if (ky <= kx)
				break;
			o[j] = o[j - 1];
			j--;
		}
		o[j] = x;
	}
	return o;
}

#define ORDER(o, k) ((o) ? (o)[k] : (k))

void pl_benchview_table(FILE *f, const struct pl_style *st, const struct pl_bench_run *run)
{
	char a[32], b[32], c[32], d[32];
	size_t *ord = view_order(run);
	for (size_t at = 0; at < run->nbench; at++) {
		size_t i = ORDER(ord, at);
		const struct pl_bench *bn = &run->bench[i];
		fprintf(f, "%sBenchmark %zu: %s%s\n", pl_c(st, PL_BOLD), i + 1, bn->name,
			pl_c(st, PL_RESET));
		if (strcmp(bn->name, bn->command) != 0)
			fprintf(f, "  %s%s%s\n", pl_c(st, PL_DIM), bn->command, pl_c(st, PL_RESET));
		if (!bn->wall.present) {
			fprintf(f, "  %sno completed runs%s", pl_c(st, PL_RED), pl_c(st, PL_RESET));
			if (bn->state == PL_BENCH_FAILED)
				fprintf(f, ": %s", bn->failure);
			fprintf(f, "\n\n");
			continue;
		}
		const struct pl_describe *w = &bn->wall.d;
		double scale;
		const char *unit;
		pl_time_unit(w->p50, &scale, &unit);
		fprintf(f,
			"  Time (%smedian%s ± MAD):  %s%8.3f %s%s ± %7.3f %s    [User: %s, System: "
			"%s]\n",
			pl_c(st, PL_GREEN), pl_c(st, PL_RESET), pl_c(st, PL_GREEN), w->p50 * scale,
			unit, pl_c(st, PL_RESET), w->mad * scale, unit,
			pl_fmt_time(a, sizeof(a), bn->user.d.p50),
			pl_fmt_time(b, sizeof(b), bn->sys.d.p50));
		fprintf(f, "  Time (mean ± σ):      %8.3f %s ± %7.3f %s    CV %.1f%%\n",
			w->mean * scale, unit, w->stdev * scale, unit, w->cv * 100);
		if (bn->batch > 1)
			fprintf(f,
				"  Range (min … max):    %8.3f %s … %.3f %s    %zu samples of %zu "
				"runs",
				w->min * scale, unit, w->max * scale, unit, w->n, bn->batch);
		else
			fprintf(f, "  Range (min … max):    %8.3f %s … %.3f %s    %zu runs",
				w->min * scale, unit, w->max * scale, unit, w->n);
		if (w->n_outliers)
			fprintf(f, ", %s%zu outlier%s%s", pl_c(st, PL_YELLOW), w->n_outliers,
				w->n_outliers > 1 ? "s" : "", pl_c(st, PL_RESET));
		if (bn->contended > bn->contended_kept)
			fprintf(f, ", %s%zu runs on a contended CPU left out%s",
				pl_c(st, PL_YELLOW), bn->contended - bn->contended_kept,
				pl_c(st, PL_RESET));
		if (bn->contended_kept)
			fprintf(f, ", %s%zu on a contended CPU counted (too many to leave out)%s",
				pl_c(st, PL_YELLOW), bn->contended_kept, pl_c(st, PL_RESET));
		fprintf(f, "\n");
		if (bn->batch > 1 && bn->wall_exec.present)
			fprintf(f,
				"  Per run:              median %s, CV %.1f%%; a sample is the mean "
				"of %zu runs (%s)\n",
				pl_fmt_time(c, sizeof(c), bn->wall_exec.d.p50),
				bn->wall_exec.d.cv * 100, bn->batch, bn->batch_why);
		fprintf(f, "  95%% CI of median:     [%.3f %s, %.3f %s]   p90 %s, p99 %s\n",
			bn->wall.ci_lo * scale, unit, bn->wall.ci_hi * scale, unit,
			pl_fmt_time(c, sizeof(c), w->p90), pl_fmt_time(d, sizeof(d), w->p99));
		fprintf(f, "  Max RSS:              %s\n",
			pl_fmt_bytes(a, sizeof(a), bn->rss.d.p50));
		if (run->cfg.alloc_dir && bn->alloc_bytes.present)
			fprintf(f, "  Allocated (median):   %s in %.0f calls per run\n",
				pl_fmt_bytes(a, sizeof(a), bn->alloc_bytes.d.p50),
				bn->alloc_calls.present ? bn->alloc_calls.d.p50 : 0.0);
		if (run->cfg.memory && bn->minflt.present)
			fprintf(f, "  Page faults (median): %.0f minor, %.0f major per run\n",
				bn->minflt.d.p50, bn->majflt.present ? bn->majflt.d.p50 : 0.0);
		int any = 0;
		for (size_t k = 0; k < run->cfg.counters.n; k++) {
			if (!run->cfg.counters.supported[k] || !bn->counter[k].present)
				continue;
			const struct pl_counter_def *def = pl_counter_def(run->cfg.counters.id[k]);
			double v = bn->counter[k].d.p50;
			if (strcmp(def->unit, "ns") == 0)
				pl_fmt_time(a, sizeof(a), v * 1e-9);
			else
				pl_fmt_count(a, sizeof(a), v);
			fprintf(f, "%s%s %s", any ? ", " : "  Counters (median):    ", def->name,
				a);
			any = 1;
		}
		if (any)
			fprintf(f, "\n");
		struct pl_dimension dims[PL_CTR_COUNT + 16];
		size_t nd = pl_summary_dimensions(run, bn, dims, sizeof(dims) / sizeof(dims[0]));
		for (size_t k = 0; k < nd; k++) {
			if (strcmp(dims[k].name, "ipc") == 0 ||
			    strstr(dims[k].name, "_rate") != NULL)
				fprintf(f, "  %-22s%.3f\n", dims[k].name, dims[k].value);
		}
		if (run->cfg.metric && bn->reported.present) {
			size_t nv = 0, nr = 0;
			for (size_t k = 0; k < bn->n; k++)
				if (bn->samples[k].counted && !isnan(bn->samples[k].metric)) {
					nv += bn->samples[k].metric_n;
					nr++;
				}
			fprintf(f,
				"  %s (the program's): median %.6g, CV %.1f%%, range %.6g … %.6g over "
				"%zu runs (%zu values read)%s\n",
				run->cfg.metric->name, bn->reported.d.p50, bn->reported.d.cv * 100,
				bn->reported.d.min, bn->reported.d.max, nr, nv,
				run->cfg.metric->higher ? ", higher is better" : "");
		}
		if (bn->sim_n) {
			pl_fmt_count(a, sizeof(a), bn->sim_ir_st.d.p50);
			fprintf(f, "  Simulated (Valgrind): %s instructions, CV %.3f%% over %zu runs", a,
				bn->sim_ir_st.d.cv * 100, bn->sim_n);
			if (bn->sim_cyc_st.present) {
				pl_fmt_count(a, sizeof(a), bn->sim_cyc_st.d.p50);
				fprintf(f, "; est. cycles %s", a);
			}
			fprintf(f, "\n");
			if (bn->sim_as[0])
				fprintf(f,
					"  %s  as %.200s (past %d wrapper process%s: not counted)%s\n",
					pl_c(st, PL_DIM), bn->sim_as, bn->sim_skipped,
					bn->sim_skipped == 1 ? "" : "es", pl_c(st, PL_RESET));
		} else if (bn->sim_why[0]) {
			fprintf(f, "  %sSimulated: %s%s\n", pl_c(st, PL_DIM), bn->sim_why,
				pl_c(st, PL_RESET));
		}
		if (nd > 0 && !dims[0].scored) {
			char cause[600];
			pl_bench_noise_cause(&run->cfg, bn, cause, sizeof(cause));
			fprintf(f, "  %s! timing N/A: CV %.1f%% > 5%% is too noisy to compare: %s%s\n",
				pl_c(st, PL_YELLOW), w->cv * 100, cause, pl_c(st, PL_RESET));
			for (size_t k = 0; k < nd; k++)
				if (!strncmp(dims[k].name, "sim_", 4) && dims[k].scored) {
					fprintf(f,
						"  %s→ decided on %s (simulated: deterministic here; "
						"blind to waiting, parallelism and this CPU's caches)%s\n",
						pl_c(st, PL_GREEN),
						bn->sim_cyc_st.present ? "sim_cycles" : "sim_instructions",
						pl_c(st, PL_RESET));
					break;
				}
		}
		if (bn->state == PL_BENCH_FAILED)
			fprintf(f, "  %s! stopped: %s%s\n", pl_c(st, PL_RED), bn->failure,
				pl_c(st, PL_RESET));
		fprintf(f, "\n");
	}
	free(ord);
	int unsup = 0;
	for (size_t k = 0; k < run->cfg.counters.n && !run->quiet_counters; k++) {
		if (run->cfg.counters.supported[k])
			continue;
		const struct pl_counter_def *def = pl_counter_def(run->cfg.counters.id[k]);
		fprintf(f, "%s%s%s%s", unsup ? ", " : "", pl_c(st, PL_DIM),
			unsup ? "" : "Counters unsupported here: ", def->name);
		unsup++;
	}
	if (unsup) {
		/* one hint per distinct reason */
		int shown[256] = {0};
		fprintf(f, "\n");
		for (size_t k = 0; k < run->cfg.counters.n; k++) {
			int e = run->cfg.counters.err[k];
			if (run->cfg.counters.supported[k] || e < 0 || e >= 256 || shown[e])
				continue;
			shown[e] = 1;
			fprintf(f, "  (%s)\n", pl_counter_hint(e));
		}
		fprintf(f, "%s\n", pl_c(st, PL_RESET));
	}
}

void pl_benchview_comparisons(FILE *f, const struct pl_style *st, const struct pl_bench_run *run)
{
	if (run->ncmp == 0)
		return;
	fprintf(f, "%sSummary%s (reference: %s)\n", pl_c(st, PL_BOLD), pl_c(st, PL_RESET),
		run->bench[run->reference].name);
	int any_sim = 0;
	for (size_t i = 0; i < run->ncmp; i++) {
		const struct pl_comparison *c = &run->cmp[i];
		verdict_line(f, st, run->bench[c->bench].name, run->bench[c->reference].name,
			     c->ratio, c->ci_lo, c->ci_hi, c->p, c->change, c->dimension);
		int sim = c->dimension && strncmp(c->dimension, "sim_", 4) == 0;
		any_sim |= sim;
		size_t pair[2] = {c->bench, c->reference};
		for (int k = 0; k < 2; k++) {
			const struct pl_bench *b = &run->bench[pair[k]];
			if (run->cfg.metric) { /* the program's number was compared */
				if (b->reported.present && b->reported.d.cv > PL_NOISE_CV_MAX)
					fprintf(f,
						"    %snote: %s's %s is noisy (CV %.1f%%): N/A for "
						"verify%s\n",
						pl_c(st, PL_YELLOW), b->name, run->cfg.metric->name,
						b->reported.d.cv * 100, pl_c(st, PL_RESET));
				continue;
			}
			if (b->wall.d.cv > PL_NOISE_CV_MAX)
				fprintf(f,
					"    %snote: %s is noisy (CV %.1f%%): its timing is N/A "
					"for verify%s%s\n",
					pl_c(st, PL_YELLOW), b->name, b->wall.d.cv * 100,
					sim ? "; the simulated counts decided" : "",
					pl_c(st, PL_RESET));
		}
	}
	fprintf(f, "  %s(a verdict needs p < 0.05 and the whole interval beyond ±1%%%s)%s\n",
		pl_c(st, PL_DIM),
		any_sim ? "; on simulated counts, the whole range of the runs beyond ±1%" : "",
		pl_c(st, PL_RESET));
}

void pl_benchview_baseline(FILE *f, const struct pl_style *st, json_t *baseline)
{
	json_t *cmps = json_object_get(baseline, "comparisons");
	if (!json_array_size(cmps))
		return;
	fprintf(f, "%sAgainst baseline%s %s\n", pl_c(st, PL_BOLD), pl_c(st, PL_RESET),
		json_string_value(json_object_get(baseline, "file")));
	size_t i;
	json_t *c;
	json_array_foreach(cmps, i, c)
	{
		const char *v = json_string_value(json_object_get(c, "verdict"));
		enum pl_change ch = strcmp(v, "faster") == 0   ? PL_CHANGE_FASTER
				    : strcmp(v, "slower") == 0 ? PL_CHANGE_SLOWER
							       : PL_CHANGE_NONE;
		json_t *ci = json_object_get(c, "ci95");
		verdict_line(f, st, json_string_value(json_object_get(c, "name")), "baseline",
			     json_number_value(json_object_get(c, "ratio")),
			     json_number_value(json_array_get(ci, 0)),
			     json_number_value(json_array_get(ci, 1)),
			     json_number_value(json_object_get(c, "p_value")), ch,
			     json_string_value(json_object_get(c, "dimension")));
		const char *doubt = json_string_value(json_object_get(c, "doubt"));
		if (doubt)
			fprintf(f,
				"    %snote: in doubt: %s; --fail-on-regression calls a slowdown "
				"only where the CPU time's 95%% interval lies past 2x%s\n",
				pl_c(st, PL_YELLOW), doubt, pl_c(st, PL_RESET));
	}
}

static void csv_field(struct pl_strbuf *b, const char *s)
{
	if (!strpbrk(s, ",\"\n")) {
		pl_strbuf_printf(b, "%s", s);
		return;
	}
	pl_strbuf_printf(b, "\"");
	for (const char *p = s; *p; p++)
		pl_strbuf_printf(b, *p == '"' ? "\"\"" : "%c", *p);
	pl_strbuf_printf(b, "\"");
}

static double ref_median(const struct pl_bench_run *run)
{
	return run->nbench ? run->bench[run->reference].wall.d.p50 : NAN;
}

char *pl_benchview_markdown(const struct pl_bench_run *run)
{
	struct pl_strbuf b = {0};
	double ref = ref_median(run), scale = 1e3;
	pl_strbuf_printf(
	    &b, "| Command | Median [ms] | Mean [ms] | Min [ms] | Max [ms] | Relative |\n");
	pl_strbuf_printf(&b, "|:---|---:|---:|---:|---:|---:|\n");
	size_t *ord = view_order(run);
	for (size_t at = 0; at < run->nbench; at++) {
		size_t i = ORDER(ord, at);
		const struct pl_bench *bn = &run->bench[i];
		if (!bn->wall.present) {
			pl_strbuf_printf(&b, "| `%s` | failed | | | | |\n", bn->name);
			continue;
		}
		const struct pl_describe *w = &bn->wall.d;
		pl_strbuf_printf(&b, "| `%s` | %.1f ± %.1f | %.1f ± %.1f | %.1f | %.1f | ",
				 bn->name, w->p50 * scale, w->mad * scale, w->mean * scale,
				 w->stdev * scale, w->min * scale, w->max * scale);
		if (i == run->reference || run->nbench == 1) {
			pl_strbuf_printf(&b, "1.00 |\n");
			continue;
		}
		const struct pl_comparison *c = NULL;
		for (size_t k = 0; k < run->ncmp; k++)
			if (run->cmp[k].bench == i)
				c = &run->cmp[k];
		if (c)
			pl_strbuf_printf(&b, "%.2f [%.2f, %.2f] |\n", c->ratio, c->ci_lo, c->ci_hi);
		else
			pl_strbuf_printf(&b, "%.2f |\n", w->p50 / ref);
	}
	free(ord);
	return pl_strbuf_take(&b);
}

char *pl_benchview_csv(const struct pl_bench_run *run)
{
	struct pl_strbuf b = {0};
	pl_strbuf_printf(&b,
			 "command,median,mean,stddev,mad,min,max,user,system,max_rss_bytes,runs");
	const struct pl_bench *first = run->nbench ? &run->bench[0] : NULL;
	for (size_t p = 0; first && p < first->nparams; p++)
		pl_strbuf_printf(&b, ",parameter_%s", first->param_names[p]);
	pl_strbuf_printf(&b, "\n");
	size_t *ord = view_order(run);
	for (size_t at = 0; at < run->nbench; at++) {
		const struct pl_bench *bn = &run->bench[ORDER(ord, at)];
		const struct pl_describe *w = &bn->wall.d;
		csv_field(&b, bn->name);
		pl_strbuf_printf(&b, ",%.9g,%.9g,%.9g,%.9g,%.9g,%.9g,%.9g,%.9g,%.0f,%zu", w->p50,
				 w->mean, w->stdev, w->mad, w->min, w->max, bn->user.d.mean,
				 bn->sys.d.mean, bn->rss.d.p50, w->n);
		for (size_t p = 0; p < bn->nparams; p++) {
			pl_strbuf_printf(&b, ",");
			csv_field(&b, bn->param_values[p]);
		}
		pl_strbuf_printf(&b, "\n");
	}
	free(ord);
	return pl_strbuf_take(&b);
}

char *pl_benchview_hyperfine(const struct pl_bench_run *run)
{
	json_t *results = json_array();
	for (size_t i = 0; i < run->nbench; i++) {
		const struct pl_bench *bn = &run->bench[i];
		json_t *times = json_array(), *codes = json_array(), *params = json_object();
		for (size_t s = 0; s < bn->n; s++) {
			if (!bn->samples[s].counted)
				continue;
			json_array_append_new(times, json_real(bn->samples[s].wall_s));
			json_array_append_new(codes, json_integer(bn->samples[s].exit_code));
		}
		for (size_t p = 0; p < bn->nparams; p++)
			json_object_set_new(params, bn->param_names[p],
					    json_string(bn->param_values[p]));
		const struct pl_describe *w = &bn->wall.d;
		json_t *r =
		    json_pack("{s:s, s:f, s:f, s:f, s:f, s:f, s:f, s:f, s:o, s:o}", "command",
			      bn->name, "mean", w->mean, "stddev", w->stdev, "median", w->p50,
			      "user", bn->user.d.mean, "system", bn->sys.d.mean, "min", w->min,
			      "max", w->max, "times", times, "exit_codes", codes);
		if (bn->nparams)
			json_object_set_new(r, "parameters", params);
		else
			json_decref(params);
		json_array_append_new(results, r);
	}
	json_t *doc = json_pack("{s:o}", "results", results);
	char *text = json_dumps(doc, JSON_INDENT(2) | JSON_REAL_PRECISION(12));
	json_decref(doc);
	return text;
}
