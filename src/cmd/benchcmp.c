/*
 * perfloop bench --baseline and --fail-on-regression: each benchmark
 * compared with the same-named one of a saved summary (its wall time, the
 * simulated counts where the wall time cannot decide, or --metric's
 * number; why a comparison may be in doubt, and how the CPU time changed),
 * and the regressions that make the exit status 1, against the baseline or
 * else the reference.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench_int.h"
#include "metric.h"
#include "simcount.h"
#include "summary.h"

/* Why a comparison with a saved baseline may be in doubt
 * (pl_summary_doubt), with this run's timing and speed probe. */
static const char *baseline_doubt(const struct pl_bench_run *run, const struct pl_bench *b,
				  json_t *base, json_t *bb, const char *file, char *buf, size_t len,
				  double *speed)
{
	double bcv = json_number_value(
	    json_object_get(json_object_get(json_object_get(bb, "dimensions"), "timing"), "cv"));
	json_t *now = run->probe_fast.lat_s > 0
			  ? json_pack("{s:f, s:f}", "chain_fast_s", run->probe_fast.lat_s,
				      "ports_fast_s", run->probe_fast.thr_s)
			  : NULL;
	const char *why = pl_summary_doubt(
	    bcv, b->wall.d.cv, json_object_get(json_object_get(base, "fingerprint"), "speed_probe"),
	    now, file, "this run", buf, len, speed);
	json_decref(now);
	return why;
}

/* The CPU time (user + sys) of b's samples against the baseline's, by the
 * same comparison as the wall time's: {ratio, ci95, added}, added being
 * the CPU time gained (medians) as a share of the baseline's fastest run,
 * which contention stretched least. JSON null where either side lacks it. */
static json_t *compare_cpu(const struct pl_bench_run *run, const struct pl_bench *b, json_t *base,
			   json_t *bb)
{
	double fast = json_number_value(
	    json_object_get(json_object_get(json_object_get(bb, "stats"), "wall_s"), "min"));
	double *ref = NULL, *cand = malloc((b->n + 1) * sizeof(*cand));
	size_t nr = 0, nc = cand ? pl_bench_values(b, -4, b->batch, cand) : 0;
	struct pl_comparison c;
	json_t *out = NULL;
	if (cand && fast > 0 && pl_summary_cpu_samples(base, b->name, &ref, &nr) == PL_OK &&
	    nr > 0 && nc > 0 &&
	    pl_bench_compare(cand, nc, ref, nr, run->cfg.resamples, run->cfg.seed, &c) == PL_OK) {
		double mb = pl_stats_median_inplace(ref, nr),
		       ma = pl_stats_median_inplace(cand, nc);
		if (mb > 0 && isfinite(c.ratio) && isfinite(c.ci_lo) && isfinite(c.ci_hi))
			out = json_pack("{s:f, s:[f,f], s:f}", "ratio", c.ratio, "ci95", c.ci_lo,
					c.ci_hi, "added", (ma - mb) / fast);
	}
	free(cand);
	free(ref);
	return out ? out : json_null();
}

/* b's simulated counts against the baseline's same-named benchmark's, on
 * the estimated cycles where both simulated the cache, else on the
 * instructions. PL_EINPUT where the baseline has none. */
static int compare_sim(const struct pl_bench *b, json_t *base, struct pl_comparison *c,
		       const char **dim)
{
	double *ref = NULL;
	size_t nr = 0;
	/* the same program on both sides, past its wrappers (os/execchain.h) */
	json_t *bj = pl_summary_bench(base, b->name, NULL);
	const char *as = json_string_value(
	    json_object_get(json_object_get(bj, "sim"), "simulated_as"));
	if ((as == NULL) != (b->sim_as[0] == '\0') || (as && strcmp(as, b->sim_as)))
		return PL_EINPUT;
	const char *d = b->sim_cache ? "sim_cycles" : "sim_instructions";
	if (pl_summary_sim_samples(base, b->name, d, &ref, &nr) != PL_OK) {
		d = "sim_instructions";
		if (pl_summary_sim_samples(base, b->name, d, &ref, &nr) != PL_OK)
			return PL_EINPUT;
	}
	struct pl_comparison s = *c;
	pl_sim_compare(!strcmp(d, "sim_cycles") ? b->sim_cyc : b->sim_ir, b->sim_n, ref, nr, &s);
	free(ref);
	if (!isfinite(s.ratio) || !isfinite(s.ci_lo) || !isfinite(s.ci_hi))
		return PL_EINPUT;
	*c = s;
	*dim = d;
	return PL_OK;
}

/* Compare each benchmark with the same-named one in a saved summary: the
 * wall time's verdict, why it may be in doubt (above), and how the CPU time
 * changed (contention stretches a run's wall time much more than the CPU
 * time it uses, so a doubtful slowdown can stand on it: see bench_regressions()). */
/* With --metric, b's number against the baseline's (each run's value, in
 * its direction; in doubt where either side's is over the noise gate). */
static json_t *compare_metric(const struct pl_bench_run *run, const struct pl_bench *b,
			      json_t *base, const char *file)
{
	const struct pl_metric *m = run->cfg.metric;
	double *ref = NULL, *cand = malloc((b->n + 1) * sizeof(*cand));
	size_t nr = 0, nc = cand ? pl_bench_values(b, -10, 1, cand) : 0;
	struct pl_comparison c;
	json_t *out = NULL;
	if (cand && nc && pl_summary_metric_samples(base, b->name, &ref, &nr) == PL_OK &&
	    pl_bench_compare(cand, nc, ref, nr, run->cfg.resamples, run->cfg.seed, &c) == PL_OK &&
	    isfinite(c.ratio) && isfinite(c.ci_lo) && isfinite(c.ci_hi)) {
		if (m->higher && c.change != PL_CHANGE_NONE)
			c.change = c.change == PL_CHANGE_FASTER ? PL_CHANGE_SLOWER : PL_CHANGE_FASTER;
		struct pl_describe d;
		char doubt[300] = "";
		double bcv = pl_stats_describe(ref, nr, &d) == PL_OK ? d.cv : 0;
		if (bcv > PL_NOISE_CV_MAX || b->reported.d.cv > PL_NOISE_CV_MAX)
			snprintf(doubt, sizeof doubt,
				 "%s's %s varies by %.1f%% (CV), this run's by %.1f%%, over the %.0f%% "
				 "gate",
				 file, m->name, bcv * 100, b->reported.d.cv * 100,
				 PL_NOISE_CV_MAX * 100);
		out = json_pack("{s:s, s:s, s:f, s:[f,f], s:o, s:s, s:o, s:n, s:n}", "name", b->name,
				"dimension", m->name, "ratio", c.ratio, "ci95", c.ci_lo, c.ci_hi,
				"p_value", isfinite(c.p) ? json_real(c.p) : json_null(), "verdict",
				pl_change_name(c.change), "doubt",
				doubt[0] ? json_string(doubt) : json_null(), "cpu", "speed_change");
	}
	free(cand);
	free(ref);
	return out;
}

json_t *bench_compare_baseline(const struct pl_bench_run *run, json_t *base, const char *file)
{
	json_t *cmps = json_array();
	for (size_t i = 0; i < run->nbench; i++) {
		const struct pl_bench *b = &run->bench[i];
		if (run->cfg.metric) {
			json_t *mc = compare_metric(run, b, base, file);
			if (mc)
				json_array_append_new(cmps, mc);
			continue;
		}
		json_t *bb = pl_summary_bench(base, b->name, NULL);
		double *ref = NULL;
		size_t nr = 0;
		if (!bb || pl_summary_wall_samples(base, b->name, &ref, &nr) != PL_OK || nr == 0 ||
		    !b->wall.present) {
			free(ref);
			continue;
		}
		double *cand = malloc((b->n + 1) * sizeof(*cand));
		size_t nc = cand ? pl_bench_values(b, -1, b->batch, cand) : 0;
		struct pl_comparison c;
		if (cand && pl_bench_compare(cand, nc, ref, nr, run->cfg.resamples, run->cfg.seed,
					     &c) == PL_OK) {
			char why[600];
			double speed;
			const char *doubt =
			    baseline_doubt(run, b, base, bb, file, why, sizeof why, &speed);
			/* where either side's wall time cannot decide and both were
			 * simulated, the simulated counts do, and nothing is in doubt:
			 * a busy machine does not move them */
			const char *dim = "timing";
			if (doubt && b->sim_n && compare_sim(b, base, &c, &dim) == PL_OK)
				doubt = NULL;
			json_array_append_new(
			    cmps,
			    json_pack("{s:s, s:s, s:f, s:[f,f], s:o, s:s, s:s?, s:o, s:o}", "name",
				      b->name, "dimension", dim, "ratio", c.ratio, "ci95", c.ci_lo,
				      c.ci_hi, "p_value", isfinite(c.p) ? json_real(c.p) : json_null(),
				      "verdict", pl_change_name(c.change), "doubt", doubt, "cpu",
				      compare_cpu(run, b, base, bb), "speed_change",
				      speed > 0 ? json_real(speed) : json_null()));
		}
		free(cand);
		free(ref);
	}
	return json_pack("{s:s, s:o}", "file", file, "comparisons", cmps);
}

/* --fail-on-regression: each comparison that says "slower" by more than
 * pct percent (the ratio's median) gets one line; returns how many. With
 * --baseline, against it; otherwise each command against the reference.
 * A baseline comparison in doubt is a regression where, whatever the wall
 * time's verdict, the CPU time's 95% interval lies past PL_DOUBT_CPU_MIN
 * times, scaled by the speed probe's slowdown, and the CPU time added
 * alone is a slowdown past the threshold; else a slowdown gets a warning
 * line and is not counted. */
int bench_regressions(const struct pl_bench_run *run, json_t *base_cmp, const char *base_path,
		      double pct)
{
	int n = 0;
	double limit = 1 + pct / 100;
	if (base_cmp) {
		size_t i;
		json_t *c;
		json_array_foreach(json_object_get(base_cmp, "comparisons"), i, c)
		{
			const char *name = json_string_value(json_object_get(c, "name"));
			double ratio = json_number_value(json_object_get(c, "ratio"));
			if (run->cfg.metric) {
				/* the program's number: its own direction, and no CPU
				 * time to stand on where it is in doubt */
				double slow = run->cfg.metric->higher && ratio > 0 ? 1 / ratio : ratio;
				const char *dv = json_string_value(json_object_get(c, "doubt"));
				if (strcmp(json_string_value(json_object_get(c, "verdict")), "slower") ||
				    slow <= limit)
					continue;
				if (dv) {
					fprintf(stderr,
						"perfloop: warning: '%s' looks %.1f%% worse than in %s on "
						"%s, but %s: not called a regression\n",
						name, (slow - 1) * 100, base_path, run->cfg.metric->name,
						dv);
					continue;
				}
				fprintf(stderr,
					"perfloop: regression: '%s' is %.1f%% worse than in %s on %s "
					"(p %.2g)\n",
					name, (slow - 1) * 100, base_path, run->cfg.metric->name,
					json_number_value(json_object_get(c, "p_value")));
				n++;
				continue;
			}
			json_t *ci = json_object_get(c, "ci95");
			int slower =
			    !strcmp(json_string_value(json_object_get(c, "verdict")), "slower");
			const char *doubt = json_string_value(json_object_get(c, "doubt"));
			json_t *cpu = json_object_get(c, "cpu");
			struct pl_comparison cc = {
			    .ratio = json_number_value(json_object_get(cpu, "ratio")),
			    .ci_lo =
				json_number_value(json_array_get(json_object_get(cpu, "ci95"), 0)),
			    .ci_hi =
				json_number_value(json_array_get(json_object_get(cpu, "ci95"), 1))};
			char why[300];
			int cpu_stands = pl_summary_cpu_stands(
			    json_is_object(cpu) ? &cc : NULL,
			    json_number_value(json_object_get(cpu, "added")),
			    json_number_value(json_object_get(c, "speed_change")), pct / 100,
			    base_path, why, sizeof why);
			/* in doubt the wall time's verdict is no evidence either way: a
			 * stalled run in the baseline can hide a real slowdown from it */
			if (ratio <= limit || (!slower && !(doubt && cpu_stands)))
				continue;
			if (doubt && !cpu_stands) {
				fprintf(stderr,
					"perfloop: warning: '%s' looks %.1f%% slower than in %s, "
					"but %s, and %s: not called a regression; measure both "
					"again on a quieter machine\n",
					name, (ratio - 1) * 100, base_path, doubt, why);
				continue;
			}
			const char *dim = json_string_value(json_object_get(c, "dimension"));
			if (dim && strncmp(dim, "sim_", 4) == 0)
				fprintf(stderr,
					"perfloop: regression: '%s' is %.1f%% slower than in %s on "
					"%s (simulated under Valgrind: range %.3f-%.3f",
					name, (ratio - 1) * 100, base_path, dim,
					json_number_value(json_array_get(ci, 0)),
					json_number_value(json_array_get(ci, 1)));
			else
				fprintf(stderr,
					"perfloop: regression: '%s' is %.1f%% slower than in %s "
					"(95%% CI %.3f-%.3f, p %.2g",
					name, (ratio - 1) * 100, base_path,
					json_number_value(json_array_get(ci, 0)),
					json_number_value(json_array_get(ci, 1)),
					json_number_value(json_object_get(c, "p_value")));
			if (doubt)
				fprintf(stderr,
					"; %s, but its CPU time grew %.1fx (95%% CI %.2fx-%.2fx)",
					doubt, cc.ratio, cc.ci_lo, cc.ci_hi);
			fprintf(stderr, ")\n");
			n++;
		}
		return n;
	}
	for (size_t i = 0; i < run->ncmp; i++) {
		const struct pl_comparison *c = &run->cmp[i];
		/* a number where higher is better (samples/s): its fall is the
		 * slowdown, 1 / ratio */
		double slow = run->cfg.metric && run->cfg.metric->higher && c->ratio > 0
				  ? 1 / c->ratio
				  : c->ratio;
		if (c->change != PL_CHANGE_SLOWER || slow <= limit)
			continue;
		if (run->cfg.metric) {
			fprintf(stderr,
				"perfloop: regression: '%s' is %.1f%% worse than '%s' on %s (95%% CI "
				"%.3f-%.3f, p %.2g)\n",
				run->bench[c->bench].name, (slow - 1) * 100,
				run->bench[c->reference].name, run->cfg.metric->name, c->ci_lo,
				c->ci_hi, c->p);
			n++;
			continue;
		}
		if (c->dimension && strncmp(c->dimension, "sim_", 4) == 0)
			fprintf(stderr,
				"perfloop: regression: '%s' is %.1f%% slower than '%s' on %s "
				"(simulated under Valgrind: range %.3f-%.3f)\n",
				run->bench[c->bench].name, (c->ratio - 1) * 100,
				run->bench[c->reference].name, c->dimension, c->ci_lo, c->ci_hi);
		else
			fprintf(stderr,
				"perfloop: regression: '%s' is %.1f%% slower than '%s' (95%% CI "
				"%.3f-%.3f, p %.2g)\n",
				run->bench[c->bench].name, (c->ratio - 1) * 100,
				run->bench[c->reference].name, c->ci_lo, c->ci_hi, c->p);
		n++;
	}
	return n;
}
