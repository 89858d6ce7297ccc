/*
 * perfloop.bench/1 documents. Field names carry their unit (wall_s,
 * max_rss_bytes) so a reader never guesses; counters are either an object
 * with a value or the string "unsupported", never a zero standing in for
 * "could not measure". The reader validates everything it will use and names
 * the first bad field as a JSON path, because summaries are hand-edited,
 * truncated by full disks and produced by older versions.
 */
#include "summary.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fsio.h"
#include "metric.h"
#include "ranks.h"
#include "tiers.h"

static json_t *stats_json(const struct pl_metric_stats *m, const unsigned char *outliers,
			  const struct pl_bench *b)
{
	if (!m->present)
		return json_null();
	json_t *o = json_pack("{s:I, s:f, s:f, s:f, s:f, s:f, s:f, s:f, s:f, s:f}", "n",
			      (json_int_t)m->d.n, "min", m->d.min, "p50", m->d.p50, "mean",
			      m->d.mean, "stdev", m->d.stdev, "cv", m->d.cv, "mad", m->d.mad, "p90",
			      m->d.p90, "p99", m->d.p99, "max", m->d.max);
	if (outliers) {
		/* the bootstrap interval is computed for wall time only */
		json_object_set_new(o, "ci95_median", json_pack("[f,f]", m->ci_lo, m->ci_hi));
		json_t *list = json_array();
		for (size_t i = 0; i < b->n; i++)
			if (outliers[i])
				json_array_append_new(list, json_integer((json_int_t)i));
		json_object_set_new(o, "outliers", list);
	} else {
		json_object_set_new(o, "outlier_count", json_integer((json_int_t)m->d.n_outliers));
	}
	return o;
}

static void dim_set(struct pl_dimension *d, const char *name, const char *unit, double value,
		    double cv, double timing_cv)
{
	memset(d, 0, sizeof(*d));
	snprintf(d->name, sizeof(d->name), "%s", name);
	for (char *c = d->name; *c; c++)
		if (*c == '-')
			*c = '_';
	d->unit = unit;
	d->value = value;
	d->cv = cv;
	d->scored = 1;
	d->tier = pl_tier_absolute(d->name, value);
	d->tier_absolute = d->tier != 0;
	if (!d->tier)
		d->tier = 3;
	/* Scheduler- and allocator-dependent event counts describe the run but
	 * are no measure of the program's quality: an 8x faster version that
	 * takes 20 more page faults (a sort's buffer) is not a regression. */
	static const char *diagnostic[] = {"page_faults", "context_switches", "cpu_migrations"};
	for (size_t i = 0; i < sizeof(diagnostic) / sizeof(diagnostic[0]); i++)
		if (strcmp(d->name, diagnostic[i]) == 0) {
			d->scored = 0;
			snprintf(d->reason, sizeof(d->reason),
				 "diagnostic counter: shown, not compared by verify");
			return;
		}
	if (timing_cv > PL_NOISE_CV_MAX) {
		d->scored = 0;
		snprintf(d->reason, sizeof(d->reason), "timing CV %.1f%% > %.0f%%", timing_cv * 100,
			 PL_NOISE_CV_MAX * 100);
	} else if (cv > PL_NOISE_CV_MAX) {
		d->scored = 0;
		snprintf(d->reason, sizeof(d->reason), "CV %.1f%% > %.0f%%", cv * 100,
			 PL_NOISE_CV_MAX * 100);
	}
}

static int counter_pos(const struct pl_bench_run *run, int id)
{
	for (size_t i = 0; i < run->cfg.counters.n; i++)
		if (run->cfg.counters.id[i] == id && run->cfg.counters.supported[i])
			return (int)i;
	return -1;
}

/* Per-run ratio num/den of two counters, described. */
static int rate(const struct pl_bench_run *run, const struct pl_bench *b, int num_id, int den_id,
		struct pl_describe *d)
{
	int pn = counter_pos(run, num_id), pd = counter_pos(run, den_id);
	if (pn < 0 || pd < 0 || b->n == 0)
		return 0;
	double *x = malloc(b->n * sizeof(*x));
	if (!x)
		return 0;
	size_t k = 0;
	for (size_t i = 0; i < b->n; i++) {
		const struct pl_sample *s = &b->samples[i];
		if (s->counted && s->counter_ok[pn] && s->counter_ok[pd] && s->counter[pd] > 0)
			x[k++] = s->counter[pn] / s->counter[pd];
	}
	int ok = k > 0 && pl_stats_describe(x, k, d) == PL_OK;
	free(x);
	return ok;
}

size_t pl_summary_dimensions(const struct pl_bench_run *run, const struct pl_bench *b,
			     struct pl_dimension *out, size_t max)
{
	size_t k = 0;
	if (!b->wall.present || max < 3)
		return 0;
	double tcv = b->wall.d.cv;
	dim_set(&out[k++], "timing", "s", b->wall.d.p50, tcv, 0);
	dim_set(&out[k++], "cpu", "s", b->cpu.d.p50, b->cpu.d.cv, tcv);
	dim_set(&out[k++], "memory", "bytes", b->rss.d.p50, b->rss.d.cv, tcv);
	if (out[k - 1].scored && b->rss_floor_kb > 0 &&
	    b->rss.d.p50 <= (double)b->rss_floor_kb * 1024.0 * 1.10) {
		out[k - 1].scored = 0;
		snprintf(out[k - 1].reason, sizeof(out[k - 1].reason),
			 "peak RSS is within 10%% of perfloop's own (%ld KiB), which the kernel "
			 "counts as a floor: not comparable",
			 b->rss_floor_kb);
	}
	/* --alloc: bytes and calls allocated per run */
	if (run->cfg.alloc_dir && b->alloc_bytes.present && k + 2 <= max) {
		dim_set(&out[k++], "allocated_bytes", "bytes", b->alloc_bytes.d.p50,
			b->alloc_bytes.d.cv, tcv);
		dim_set(&out[k++], "allocations", "count", b->alloc_calls.d.p50, b->alloc_calls.d.cv,
			tcv);
	}
	/* --memory: page faults per run (getrusage: no counter needed) */
	if (run->cfg.memory && k + 2 <= max) {
		dim_set(&out[k++], "minor_faults", "count", b->minflt.d.p50, b->minflt.d.cv, tcv);
		dim_set(&out[k++], "major_faults", "count", b->majflt.d.p50, b->majflt.d.cv, tcv);
	}
	for (size_t c = 0; c < run->cfg.counters.n && k < max; c++) {
		if (!run->cfg.counters.supported[c] || !b->counter[c].present)
			continue;
		const struct pl_counter_def *def = pl_counter_def(run->cfg.counters.id[c]);
		dim_set(&out[k++], def->name, def->unit, b->counter[c].d.p50, b->counter[c].d.cv,
			tcv);
	}
	/* --metric: the program's own number, gated by its own spread only
	 * (the process's start-up, which moves the wall time, is not in it) */
	if (run->cfg.metric && b->reported.present && k < max)
		dim_set(&out[k++], run->cfg.metric->name, "", b->reported.d.p50, b->reported.d.cv,
			0);
	/* the deterministic measure (simcount.c): gated by its own spread only,
	 * since a busy machine does not move it */
	if (b->sim_ir_st.present && k < max)
		dim_set(&out[k++], "sim_instructions", "count", b->sim_ir_st.d.p50,
			b->sim_ir_st.d.cv, 0);
	if (b->sim_cyc_st.present && k < max)
		dim_set(&out[k++], "sim_cycles", "count", b->sim_cyc_st.d.p50, b->sim_cyc_st.d.cv,
			0);
	static const struct {
		const char *name;
		int num, den;
	} rates[] = {
	    {"ipc", PL_CTR_INSTRUCTIONS, PL_CTR_CYCLES},
	    {"l1_miss_rate", PL_CTR_L1D_LOAD_MISSES, PL_CTR_L1D_LOADS},
	    {"branch_miss_rate", PL_CTR_BRANCH_MISSES, PL_CTR_BRANCHES},
	    {"cache_miss_rate", PL_CTR_CACHE_MISSES, PL_CTR_CACHE_REFERENCES},
	};
	for (size_t r = 0; r < sizeof(rates) / sizeof(rates[0]) && k < max; r++) {
		struct pl_describe d;
		if (rate(run, b, rates[r].num, rates[r].den, &d))
			dim_set(&out[k++], rates[r].name, "ratio", d.p50, d.cv, tcv);
	}
	return k;
}

static json_t *samples_json(const struct pl_bench_run *run, const struct pl_bench *b)
{
	json_t *arr = json_array();
	for (size_t i = 0; i < b->n; i++) {
		const struct pl_sample *s = &b->samples[i];
		json_t *o = json_pack(
		    "{s:f, s:f, s:f, s:I, s:i, s:b, s:b, s:b}", "wall_s", s->wall_s, "user_s",
		    s->user_s, "sys_s", s->sys_s, "max_rss_bytes", (json_int_t)s->max_rss_kb * 1024,
		    "exit_code", s->exit_code, "timed_out", s->timed_out, "counted", s->counted,
		    "outlier", b->outlier ? b->outlier[i] : 0);
		json_object_set_new(o, "contended", json_boolean(s->contended));
		if (run->cfg.metric)
			json_object_set_new(o, "metric",
					    isnan(s->metric) ? json_null() : json_real(s->metric));
		if (run->cfg.metric && run->cfg.metric->steps)
			json_object_set_new(o, "metric_cpu", isnan(s->metric_cpu)
								 ? json_null()
								 : json_real(s->metric_cpu));
		json_object_set_new(o, "minor_faults", json_integer(s->minflt));
		json_object_set_new(o, "major_faults", json_integer(s->majflt));
		if (run->cfg.alloc_dir) {
			json_object_set_new(o, "allocated_bytes",
					    s->alloc_bytes >= 0 ? json_real(s->alloc_bytes) : json_null());
			json_object_set_new(o, "allocations",
					    s->alloc_calls >= 0 ? json_real(s->alloc_calls) : json_null());
		}
		if (s->probe.lat_s > 0)
			json_object_set_new(o, "slowdown",
					    json_real(pl_speedprobe_slowdown(&run->sp, s->probe)));
		json_object_set_new(o, "signal", s->signal ? json_integer(s->signal) : json_null());
		if (run->cfg.counters.n) {
			json_t *c = json_object();
			for (size_t k = 0; k < run->cfg.counters.n; k++) {
				if (!run->cfg.counters.supported[k])
					continue;
				const char *name = pl_counter_def(run->cfg.counters.id[k])->name;
				json_object_set_new(c, name,
						    s->counter_ok[k] ? json_real(s->counter[k])
								     : json_null());
			}
			json_object_set_new(o, "counters", c);
		}
		json_array_append_new(arr, o);
	}
	return arr;
}

/* The simulated executions: how, each one's counts, and what was pinned
 * (see simcount.c); null where none ran, with why in "why" otherwise. */
static json_t *sim_json(const struct pl_bench_run *run, const struct pl_bench *b)
{
	if (!b->sim_n)
		return b->sim_why[0] ? json_pack("{s:s}", "why", b->sim_why) : json_null();
	json_t *runs = json_array();
	for (size_t i = 0; i < b->sim_n; i++)
		json_array_append_new(
		    runs, json_pack("{s:f, s:o, s:f}", "instructions", b->sim_ir[i], "est_cycles",
				    b->sim_cache ? json_real(b->sim_cyc[i]) : json_null(), "wall_s",
				    b->sim_wall[i]));
	json_t *o = json_pack(
	    "{s:s, s:s, s:o, s:o, s:[s,s], s:o, s:o}", "tool", run->sim_tool, "why", b->sim_why,
	    "cache",
	    b->sim_cache ? json_string("I1 32 KiB 8-way, D1 32 KiB 8-way, LL 8 MiB 16-way, 64 B "
				       "lines; est_cycles = L1 hits + 5 x LL hits + 35 x memory")
			 : json_null(),
	    "runs", runs, "pinned", "address-space randomisation off",
	    getenv("PYTHONHASHSEED") ? "PYTHONHASHSEED as given" : "PYTHONHASHSEED=0",
	    "instructions", stats_json(&b->sim_ir_st, NULL, b), "est_cycles",
	    stats_json(&b->sim_cyc_st, NULL, b));
	/* the program simulated past its wrappers (os/execchain.h) */
	if (o && b->sim_as[0]) {
		json_object_set_new(o, "simulated_as", json_string(b->sim_as));
		json_object_set_new(o, "wrappers_skipped", json_integer(b->sim_skipped));
	}
	return o;
}

const char *pl_summary_decides(json_t *bench, char *why, size_t len)
{
	json_t *dims = json_object_get(bench, "dimensions");
	json_t *t = json_object_get(dims, "timing");
	const char *mname = json_string_value(json_object_get(json_object_get(bench, "metric"), "name"));
	json_t *md = mname ? json_object_get(dims, mname) : NULL;
	if (md) {
		double mcv = json_number_value(json_object_get(md, "cv"));
		if (json_is_true(json_object_get(md, "scored"))) {
			snprintf(why, len,
				 "the program's own number (--metric): its CV is %.1f%%, within the "
				 "%.0f%% gate",
				 mcv * 100, PL_NOISE_CV_MAX * 100);
			return mname;
		}
		snprintf(why, len,
			 "the program's own number (--metric) varies too much to decide: its CV "
			 "is %.1f%%, over the %.0f%% gate",
			 mcv * 100, PL_NOISE_CV_MAX * 100);
		return mname;
	}
	double tcv = json_number_value(json_object_get(t, "cv"));
	if (json_is_true(json_object_get(t, "scored"))) {
		snprintf(why, len, "the wall time's CV is %.1f%%, within the %.0f%% gate", tcv * 100,
			 PL_NOISE_CV_MAX * 100);
		return "timing";
	}
	static const char *sims[] = {"sim_cycles", "sim_instructions"};
	for (size_t i = 0; i < 2; i++) {
		json_t *d = json_object_get(dims, sims[i]);
		if (!json_is_true(json_object_get(d, "scored")))
			continue;
		snprintf(why, len,
			 "the wall time's CV is %.1f%% here, over the %.0f%% gate: decided on "
			 "simulated %s, which do not see waiting (sleep, I/O, locks), parallelism "
			 "or this CPU's own caches and clock; confirm on a quiet machine with "
			 "'perfloop verify --target timing'",
			 tcv * 100, PL_NOISE_CV_MAX * 100,
			 i == 0 ? "cycles (instructions and cache misses)" : "instructions");
		return sims[i];
	}
	snprintf(why, len, "the wall time's CV is %.1f%%, over the %.0f%% gate, and nothing "
		 "deterministic was measured: nothing can decide",
		 tcv * 100, PL_NOISE_CV_MAX * 100);
	return "timing";
}

static json_t *bench_json(const struct pl_bench_run *run, const struct pl_bench *b)
{
	json_t *argv = json_array();
	for (size_t i = 0; i < b->argv.n; i++)
		json_array_append_new(argv, json_string(b->argv.v[i]));
	json_t *params = json_object();
	for (size_t i = 0; i < b->nparams; i++)
		json_object_set_new(params, b->param_names[i], json_string(b->param_values[i]));
	json_t *o = json_pack("{s:s, s:s, s:o, s:o, s:s}", "name", b->name, "command", b->command,
			      "argv", argv, "parameters", params, "status",
			      b->state == PL_BENCH_FAILED ? "failed" : "ok");
	json_object_set_new(o, "failure",
			    b->state == PL_BENCH_FAILED ? json_string(b->failure) : json_null());
	json_object_set_new(o, "samples", samples_json(run, b));
	json_t *stats = json_object();
	json_object_set_new(stats, "wall_s", stats_json(&b->wall, b->outlier, b));
	json_object_set_new(stats, "user_s", stats_json(&b->user, NULL, b));
	json_object_set_new(stats, "sys_s", stats_json(&b->sys, NULL, b));
	json_object_set_new(stats, "cpu_s", stats_json(&b->cpu, NULL, b));
	json_object_set_new(stats, "max_rss_bytes", stats_json(&b->rss, NULL, b));
	json_object_set_new(stats, "minor_faults", stats_json(&b->minflt, NULL, b));
	json_object_set_new(stats, "major_faults", stats_json(&b->majflt, NULL, b));
	if (run->cfg.alloc_dir) {
		json_object_set_new(stats, "allocated_bytes", stats_json(&b->alloc_bytes, NULL, b));
		json_object_set_new(stats, "allocations", stats_json(&b->alloc_calls, NULL, b));
	}
	if (b->wall_exec.present)
		json_object_set_new(stats, "wall_per_run_s", stats_json(&b->wall_exec, NULL, b));
	if (run->cfg.metric)
		json_object_set_new(stats, "metric", stats_json(&b->reported, NULL, b));
	json_object_set_new(o, "batch", json_integer((json_int_t)(b->batch ? b->batch : 1)));
	json_object_set_new(o, "run_cv",
			    b->exec_cv == b->exec_cv ? json_real(b->exec_cv) : json_null());
	json_object_set_new(o, "contention",
			    json_pack("{s:I, s:I}", "runs", (json_int_t)b->contended,
				      "counted_anyway", (json_int_t)b->contended_kept));
	json_object_set_new(o, "batch_reason", json_string(b->batch_why[0] ? b->batch_why : "--batch 1"));
	json_object_set_new(o, "stats", stats);

	json_t *counters = json_object();
	for (size_t k = 0; k < run->cfg.counters.n; k++) {
		const struct pl_counter_def *def = pl_counter_def(run->cfg.counters.id[k]);
		if (!run->cfg.counters.supported[k]) {
			json_object_set_new(counters, def->name, json_string("unsupported"));
			continue;
		}
		const struct pl_metric_stats *m = &b->counter[k];
		json_object_set_new(counters, def->name,
				    m->present
					? json_pack("{s:f, s:s, s:o}", "value", m->d.p50, "unit",
						    def->unit, "stats", stats_json(m, NULL, b))
					: json_null());
	}
	json_object_set_new(o, "counters", counters);

	struct pl_dimension dims[PL_CTR_COUNT + 16];
	size_t nd = pl_summary_dimensions(run, b, dims, sizeof(dims) / sizeof(dims[0]));
	json_t *dj = json_object();
	for (size_t i = 0; i < nd; i++) {
		json_t *d = json_pack("{s:f, s:s, s:f, s:b, s:i, s:s}", "value", dims[i].value,
				      "unit", dims[i].unit, "cv", dims[i].cv, "scored",
				      dims[i].scored, "tier", dims[i].tier, "tier_basis",
				      dims[i].tier_absolute ? "absolute" : "relative");
		if (!dims[i].scored)
			json_object_set_new(d, "reason", json_string(dims[i].reason));
		if (!strncmp(dims[i].name, "sim_", 4))
			json_object_set_new(d, "source",
					    json_string("simulated: Valgrind's cachegrind, not a "
							"hardware counter"));
		if (run->cfg.metric && !strcmp(dims[i].name, run->cfg.metric->name)) {
			json_object_set_new(d, "source", json_string("reported by the program"));
			json_object_set_new(d, "higher_is_better",
					    json_boolean(run->cfg.metric->higher));
		}
		if (!dims[i].scored && i == 0) {
			char cause[600];
			pl_bench_noise_cause(&run->cfg, b, cause, sizeof(cause));
			json_object_set_new(d, "cause", json_string(cause));
		}
		json_object_set_new(dj, dims[i].name, d);
	}
	json_object_set_new(o, "dimensions", dj);
	json_object_set_new(o, "sim", sim_json(run, b));
	json_object_set_new(o, "metric",
			    run->cfg.metric
				? json_pack("{s:s, s:s, s:b}", "name", run->cfg.metric->name, "expr",
					    run->cfg.metric->expr, "higher_is_better",
					    run->cfg.metric->higher)
				: json_null());
	char why[400];
	const char *dec = pl_summary_decides(o, why, sizeof why);
	json_object_set_new(o, "decides", json_pack("{s:s, s:s}", "dimension", dec, "why", why));
	return o;
}

json_t *pl_summary_build(const struct pl_bench_run *run, json_t *baseline_cmp)
{
	const struct pl_bench_config *cfg = &run->cfg;
	json_t *counters = json_array();
	json_t *unsupported = json_object();
	for (size_t k = 0; k < cfg->counters.n; k++) {
		const char *name = pl_counter_def(cfg->counters.id[k])->name;
		json_array_append_new(counters, json_string(name));
		if (!cfg->counters.supported[k])
			json_object_set_new(unsupported, name,
					    json_string(pl_counter_hint(cfg->counters.err[k])));
	}
	json_t *settings = json_pack(
	    "{s:i, s:o, s:i, s:o, s:f, s:o, s:s, s:b, s:o, s:o, s:s, s:b, s:o, s:I, s:I}", "warmup",
	    cfg->warmup, "runs", cfg->runs ? json_integer(cfg->runs) : json_null(), "min_runs",
	    cfg->min_runs, "max_runs", cfg->max_runs ? json_integer(cfg->max_runs) : json_null(),
	    "time_budget_s", cfg->time_budget_s, "precision_pct",
	    cfg->precision_pct > 0 ? json_real(cfg->precision_pct) : json_null(), "order",
	    cfg->order == PL_ORDER_SEQUENTIAL ? "sequential" : "interleaved", "shell", cfg->shell,
	    "timeout_s", cfg->timeout_s > 0 ? json_real(cfg->timeout_s) : json_null(), "input",
	    cfg->input ? json_string(cfg->input) : json_null(), "output",
	    cfg->output ? cfg->output : "null", "ignore_failure", cfg->ignore_failure, "counters",
	    counters, "resamples", (json_int_t)cfg->resamples, "seed", (json_int_t)cfg->seed);
	json_object_set_new(settings, "batch",
			    cfg->batch > 0 ? json_integer(cfg->batch) : json_string("auto"));

	json_object_set_new(settings, "max_time_s", json_real(cfg->max_time_s));
	json_object_set_new(settings, "pin",
			    cfg->pin >= 0		  ? json_integer(cfg->pin)
			    : cfg->pin == PL_PIN_NONE ? json_string("none")
						  : json_string("auto"));
	json_object_set_new(settings, "wait_quiet_s", json_real(cfg->wait_quiet_s));
	json_object_set_new(settings, "memory", json_boolean(cfg->memory));
	json_object_set_new(settings, "alloc", json_boolean(cfg->alloc_dir != NULL));
	json_object_set_new(settings, "contention",
			    json_string(cfg->contention_keep ? "keep" : "leave-out"));

	json_t *benches = json_array();
	for (size_t i = 0; i < run->nbench; i++)
		json_array_append_new(benches, bench_json(run, &run->bench[i]));

	json_t *cmps = json_array();
	for (size_t i = 0; i < run->ncmp; i++) {
		const struct pl_comparison *c = &run->cmp[i];
		json_array_append_new(
		    cmps, json_pack("{s:s, s:s, s:f, s:[f,f], s:o, s:s, s:s}", "name",
				    run->bench[c->bench].name, "reference",
				    run->bench[c->reference].name, "ratio", c->ratio, "ci95",
				    c->ci_lo, c->ci_hi, "p_value",
				    isfinite(c->p) ? json_real(c->p) : json_null(), "verdict",
				    pl_change_name(c->change), "dimension",
				    c->dimension ? c->dimension : "timing"));
	}
	json_t *doc =
	    json_pack("{s:s, s:{s:s, s:s}, s:s, s:b, s:o, s:o, s:o, s:o, s:o, s:o}", "schema",
		      PL_SUMMARY_SCHEMA, "tool", "name", "perfloop", "version", PERFLOOP_VERSION,
		      "created", run->started, "interrupted", run->interrupted, "fingerprint",
		      pl_fingerprint_to_json(&run->fp), "settings", settings,
		      "unsupported_counters", unsupported, "benchmarks", benches, "reference",
		      run->nbench > 1 ? json_string(run->bench[run->reference].name) : json_null(),
		      "comparisons", cmps);
	/* what the machine was found doing: observations, not settings (the
	 * history's settings hash must not change with them) */
	json_t *fp = json_object_get(doc, "fingerprint");
	json_object_set_new(fp, "pinned_by",
			    run->pinned_by[0] ? json_string(run->pinned_by) : json_null());
	json_object_set_new(fp, "unpinned_why",
			    run->unpinned_why[0] ? json_string(run->unpinned_why) : json_null());
	json_object_set_new(doc, "close_call_extensions", json_integer(run->extended));
	/* which rank of a launched job this was (mpirun, srun, torchrun) */
	struct pl_rank rank;
	pl_rank_detect(&rank);
	json_object_set_new(doc, "launch", pl_rank_json(&rank));
	json_object_set_new(fp, "quiet", pl_quiet_to_json(&run->quiet));
	json_object_set_new(
	    fp, "speed_probe",
	    run->probe_fast.lat_s > 0
		? json_pack("{s:f, s:f, s:I, s:f, s:f, s:f, s:I}", "chain_fast_s",
			    run->probe_fast.lat_s, "ports_fast_s", run->probe_fast.thr_s, "n",
			    (json_int_t)run->sp.n, "slowest", run->probe_slowest, "contended_above",
			    PL_PROBE_CONTENDED, "waited_s", run->sp.waited_s, "waits",
			    (json_int_t)run->sp.waits)
		: json_null());
	json_object_set_new(doc, "baseline",
			    baseline_cmp ? json_incref(baseline_cmp) : json_null());
	return doc;
}

int pl_summary_write(const char *path, json_t *doc, struct pl_error *err)
{
	return pl_fsio_write_json(path, doc, err);
}

static int bad(struct pl_error *err, const char *path, const char *where, const char *what)
{
	return pl_error_set(err, PL_EINPUT, "%s: %s: %s", path, where, what);
}

size_t pl_summary_batch(json_t *bench)
{
	json_int_t k = json_integer_value(json_object_get(bench, "batch"));
	return k > 1 ? (size_t)k : 1;
}

/* A benchmark's samples: the mean of each batch of its counted runs' wall
 * time, or where cpu is set their CPU time (user + sys), into x (room for
 * every run); returns how many. */
static size_t batch_means(json_t *b, double *x, int cpu)
{
	size_t batch = pl_summary_batch(b), in = 0, n = 0;
	double sum = 0;
	size_t j;
	json_t *s;
	json_array_foreach(json_object_get(b, "samples"), j, s)
	{
		json_t *c = json_object_get(s, "counted");
		if (c && !json_is_true(c))
			continue;
		sum += cpu ? json_number_value(json_object_get(s, "user_s")) +
				 json_number_value(json_object_get(s, "sys_s"))
			   : json_number_value(json_object_get(s, "wall_s"));
		if (++in == batch) {
			x[n++] = sum / (double)batch;
			in = 0;
			sum = 0;
		}
	}
	return n;
}

/* Equal as far as a summary can tell: perfloop writes 12 significant
 * digits, and the samples a figure is recomputed from were rounded too.
 * A CV's rounding is absolute (nearly equal samples: a tiny stdev). A
 * figure the samples do not define (NaN) is not checked. */
static int same_figure(double stored, double computed, double abs_tol)
{
	return computed != computed ||
	       fabs(stored - computed) <= 1e-9 * fmax(fabs(stored), fabs(computed)) + abs_tol;
}

/* A summary's wall-time statistics (stats.wall_s: n, p50, cv) and its
 * timing dimension (value, cv) are figures of its samples. verify counts
 * and tests the samples but takes the gain and the noise from these
 * figures, and report shows them: a file whose figures are not its
 * samples' (edited by hand, or pieced together from two runs) would give a
 * verdict that no measurement made. It is refused, naming the field. Other
 * dimensions (memory, counters) are taken as they are stored. */
static int agrees(const char *path, size_t i, json_t *b, struct pl_error *err)
{
	json_t *w = json_object_get(json_object_get(b, "stats"), "wall_s");
	json_t *t = json_object_get(json_object_get(b, "dimensions"), "timing");
	if (!json_is_object(w) && !json_is_object(t))
		return PL_OK;
	double *x = malloc((json_array_size(json_object_get(b, "samples")) + 1) * sizeof(*x));
	if (!x)
		return pl_error_set(err, PL_ENOMEM, "out of memory");
	size_t n = batch_means(b, x, 0);
	struct pl_describe d;
	int have = n > 0 && pl_stats_describe(x, n, &d) == PL_OK;
	free(x);
	struct {
		json_t *obj;
		const char *field, *what;
		double want, tol;
		int check;
	} f[] = {
	    {w, "stats.wall_s.n", "the number of its samples", (double)n, 0, 1},
	    {w, "stats.wall_s.p50", "the median of its samples", have ? d.p50 : NAN, 0, have},
	    {w, "stats.wall_s.cv", "the CV of its samples", have ? d.cv : NAN, 1e-6,
	     have && n >= 2},
	    {t, "dimensions.timing.value", "the median of its samples", have ? d.p50 : NAN, 0,
	     have},
	    {t, "dimensions.timing.cv", "the CV of its samples", have ? d.cv : NAN, 1e-6,
	     have && n >= 2},
	};
	for (size_t k = 0; k < sizeof(f) / sizeof(f[0]); k++) {
		if (!json_is_object(f[k].obj))
			continue;
		const char *key = strrchr(f[k].field, '.') + 1;
		json_t *v = json_object_get(f[k].obj, key);
		if (!v)
			continue; /* a figure the writer left out is not a wrong one */
		char where[160], what[200];
		snprintf(where, sizeof(where), "benchmarks[%zu].%s", i, f[k].field);
		if (!json_is_number(v)) {
			snprintf(what, sizeof(what), "expected a number");
			return bad(err, path, where, what);
		}
		if (!f[k].check)
			continue;
		if (!same_figure(json_number_value(v), f[k].want, f[k].tol)) {
			snprintf(what, sizeof(what),
				 "%.9g is not %s (%.9g): the file was edited or pieced together",
				 json_number_value(v), f[k].what, f[k].want);
			return bad(err, path, where, what);
		}
	}
	return PL_OK;
}

/* The simulated runs (sim.runs[]): counts that are numbers, and the
 * simulated dimensions' values their medians, as agrees() holds the
 * timing to its samples. */
static int sim_agrees(const char *path, size_t i, json_t *b, struct pl_error *err)
{
	json_t *sim = json_object_get(b, "sim");
	char where[160], what[200];
	if (!sim || json_is_null(sim))
		return PL_OK;
	if (!json_is_object(sim)) {
		snprintf(where, sizeof where, "benchmarks[%zu].sim", i);
		return bad(err, path, where, "expected an object or null");
	}
	json_t *runs = json_object_get(sim, "runs");
	if (!runs)
		return PL_OK; /* not simulated: only why */
	if (!json_is_array(runs) || json_array_size(runs) > PL_SIM_MAX_RUNS) {
		snprintf(where, sizeof where, "benchmarks[%zu].sim.runs", i);
		return bad(err, path, where, "expected an array of at most 20 runs");
	}
	static const char *keys[] = {"instructions", "est_cycles"};
	static const char *dims[] = {"sim_instructions", "sim_cycles"};
	for (size_t k = 0; k < 2; k++) {
		double x[PL_SIM_MAX_RUNS];
		size_t n = 0, j;
		json_t *r;
		json_array_foreach(runs, j, r)
		{
			json_t *v = json_object_get(r, keys[k]);
			if (k == 1 && json_is_null(v))
				continue;
			if (!json_is_number(v) || !isfinite(json_number_value(v)) ||
			    json_number_value(v) < 0) {
				snprintf(where, sizeof where, "benchmarks[%zu].sim.runs[%zu].%s", i,
					 j, keys[k]);
				return bad(err, path, where, "expected a non-negative number");
			}
			x[n++] = json_number_value(v);
		}
		json_t *d = json_object_get(json_object_get(b, "dimensions"), dims[k]);
		json_t *v = json_object_get(d, "value");
		if (!n || !v)
			continue;
		double med = pl_stats_median_inplace(x, n);
		if (!json_is_number(v) || !same_figure(json_number_value(v), med, 0)) {
			snprintf(where, sizeof where, "benchmarks[%zu].dimensions.%s.value", i,
				 dims[k]);
			snprintf(what, sizeof what,
				 "%.12g is not the median of sim.runs[].%s (%.12g): the file was "
				 "edited or pieced together",
				 json_number_value(v), keys[k], med);
			return bad(err, path, where, what);
		}
	}
	return PL_OK;
}

/* The numbers at `key` of a benchmark's array `arr` of objects (samples,
 * sim.runs), those whose "counted" is not false: malloc'd in *x;
 * PL_EINPUT where there are none. */
static int numbers_of(json_t *arr, const char *key, double **x, size_t *n)
{
	*x = NULL;
	*n = 0;
	if (!json_array_size(arr))
		return PL_EINPUT;
	*x = malloc(json_array_size(arr) * sizeof(**x));
	if (!*x)
		return PL_ENOMEM;
	size_t j;
	json_t *s;
	json_array_foreach(arr, j, s)
	{
		json_t *c = json_object_get(s, "counted"), *v = json_object_get(s, key);
		if ((!c || json_is_true(c)) && json_is_number(v) && isfinite(json_number_value(v)))
			(*x)[(*n)++] = json_number_value(v);
	}
	if (!*n) {
		free(*x);
		*x = NULL;
		return PL_EINPUT;
	}
	return PL_OK;
}

int pl_summary_metric_samples(json_t *doc, const char *name, double **x, size_t *n)
{
	json_t *b = pl_summary_bench(doc, name, NULL);
	return numbers_of(json_object_get(b, "samples"), "metric", x, n);
}

int pl_summary_sim_samples(json_t *doc, const char *name, const char *dim, double **x,
			   size_t *n)
{
	json_t *b = pl_summary_bench(doc, name, NULL);
	return numbers_of(json_object_get(json_object_get(b, "sim"), "runs"),
			  !strcmp(dim, "sim_cycles") ? "est_cycles" : "instructions", x, n);
}

int pl_summary_load(const char *path, json_t **out, struct pl_error *err)
{
	*out = NULL;
	json_t *doc;
	int lrc = pl_json_load(path, &doc, err);
	if (lrc != PL_OK)
		return lrc;
	int rc = PL_OK;
	char where[128];
	if (!json_is_object(doc)) {
		rc = bad(err, path, "$", "expected an object");
		goto out;
	}
	json_t *schema = json_object_get(doc, "schema");
	if (!json_is_string(schema)) {
		rc = bad(err, path, "schema", "missing (expected \"" PL_SUMMARY_SCHEMA "\")");
		goto out;
	}
	if (strcmp(json_string_value(schema), PL_SUMMARY_SCHEMA) != 0) {
		snprintf(where, sizeof(where), "expected \"%s\", got \"%s\"", PL_SUMMARY_SCHEMA,
			 json_string_value(schema));
		rc = bad(err, path, "schema", where);
		goto out;
	}
	json_t *benches = json_object_get(doc, "benchmarks");
	if (!json_is_array(benches)) {
		rc = bad(err, path, "benchmarks", "expected an array");
		goto out;
	}
	size_t i;
	json_t *b;
	json_array_foreach(benches, i, b)
	{
		snprintf(where, sizeof(where), "benchmarks[%zu]", i);
		if (!json_is_object(b)) {
			rc = bad(err, path, where, "expected an object");
			goto out;
		}
		if (!json_is_string(json_object_get(b, "name"))) {
			snprintf(where, sizeof(where), "benchmarks[%zu].name", i);
			rc = bad(err, path, where, "expected a string");
			goto out;
		}
		json_t *samples = json_object_get(b, "samples");
		if (!json_is_array(samples)) {
			snprintf(where, sizeof(where), "benchmarks[%zu].samples", i);
			rc = bad(err, path, where, "expected an array");
			goto out;
		}
		size_t j;
		json_t *s;
		json_array_foreach(samples, j, s)
		{
			json_t *w = json_object_get(s, "wall_s");
			if (!json_is_number(w) || !isfinite(json_number_value(w)) ||
			    json_number_value(w) < 0) {
				snprintf(where, sizeof(where),
					 "benchmarks[%zu].samples[%zu].wall_s", i, j);
				rc = bad(err, path, where, "expected a non-negative number");
				goto out;
			}
			json_t *c = json_object_get(s, "counted");
			if (c && !json_is_boolean(c)) {
				snprintf(where, sizeof(where),
					 "benchmarks[%zu].samples[%zu].counted", i, j);
				rc = bad(err, path, where, "expected true or false");
				goto out;
			}
		}
	}
	json_array_foreach(benches, i, b)
	{
		if ((rc = agrees(path, i, b, err)) != PL_OK ||
		    (rc = sim_agrees(path, i, b, err)) != PL_OK)
			goto out;
	}
out:
	if (rc != PL_OK)
		json_decref(doc);
	else
		*out = doc;
	return rc;
}

json_t *pl_summary_bench(json_t *doc, const char *name, size_t *index)
{
	size_t i;
	json_t *b;
	json_array_foreach(json_object_get(doc, "benchmarks"), i, b)
	{
		if (!name || !strcmp(json_string_value(json_object_get(b, "name")) ?: "", name)) {
			if (index)
				*index = i;
			return b;
		}
	}
	return NULL;
}

static int samples_of(json_t *doc, const char *name, int cpu, double **x, size_t *n)
{
	*x = NULL;
	*n = 0;
	json_t *b = pl_summary_bench(doc, name, NULL);
	if (!b)
		return PL_EINPUT;
	*x = malloc((json_array_size(json_object_get(b, "samples")) + 1) * sizeof(**x));
	if (!*x)
		return PL_ENOMEM;
	*n = batch_means(b, *x, cpu);
	return PL_OK;
}

int pl_summary_wall_samples(json_t *doc, const char *name, double **x, size_t *n)
{
	return samples_of(doc, name, 0, x, n);
}

int pl_summary_cpu_samples(json_t *doc, const char *name, double **x, size_t *n)
{
	return samples_of(doc, name, 1, x, n);
}

/* The larger change between two summaries' speed probes, over the loops
 * both recorded (older summaries have one loop, "p25_s";
 * loops of other lengths are never compared). */
int pl_summary_speed_change(json_t *pb, json_t *pa, double *b, double *a, double *d)
{
	static const char *keys[] = {"chain_fast_s", "ports_fast_s", "p25_s"};
	int any = 0;
	for (size_t i = 0; i < sizeof(keys) / sizeof(keys[0]); i++) {
		double x = json_number_value(json_object_get(pb, keys[i]));
		double y = json_number_value(json_object_get(pa, keys[i]));
		if (!(x > 0 && y > 0))
			continue;
		double c = y / x - 1;
		if (!any || fabs(c) > fabs(*d)) {
			*b = x;
			*a = y;
			*d = c;
		}
		any = 1;
	}
	return any;
}

const char *pl_summary_doubt(double cv_before, double cv_after, json_t *probe_before,
			     json_t *probe_after, const char *before, const char *after, char *buf,
			     size_t len, double *speed)
{
	size_t n = 0;
	*speed = 0;
	buf[0] = 0;
	/* a long name truncates the text, never writes past it */
#define DOUBT(...)                                                                                 \
	(n += (size_t)snprintf(buf + (n < len ? n : len - 1), n < len ? len - n : 1, __VA_ARGS__))
	if (cv_after > PL_NOISE_CV_MAX)
		DOUBT("%s's timing is N/A (CV %.1f%% > %.0f%%)", after, cv_after * 100,
		      PL_NOISE_CV_MAX * 100);
	if (cv_before > PL_NOISE_CV_MAX)
		DOUBT("%s%s's timing is N/A (CV %.1f%% > %.0f%%)", n ? "; " : "", before,
		      cv_before * 100, PL_NOISE_CV_MAX * 100);
	double sb = 0, sa = 0, d = 0;
	if (probe_before && probe_after &&
	    pl_summary_speed_change(probe_before, probe_after, &sb, &sa, &d) &&
	    d > PL_SPEED_CHANGE_MAX) {
		*speed = d;
		DOUBT("%sthe machine ran slower in %s: its speed probe took %.3f ms in %s, %.3f ms "
		      "in %s (%+.1f%%)",
		      n ? "; " : "", after, sb * 1e3, before, sa * 1e3, after, d * 100);
	}
#undef DOUBT
	return n ? buf : NULL;
}

int pl_summary_cpu_stands(const struct pl_comparison *cpu, double added, double speed,
			  double threshold, const char *before, char *why, size_t len)
{
	double need = PL_DOUBT_CPU_MIN * (1 + speed);
	if (!cpu)
		snprintf(why, len, "its CPU time was not measured");
	else if (!(cpu->ci_lo > need))
		snprintf(why, len,
			 "its CPU time changed %+.1f%% (95%% CI %.2fx-%.2fx), not wholly past the "
			 "%.1fx that would tell",
			 (cpu->ratio - 1) * 100, cpu->ci_lo, cpu->ci_hi, need);
	else if (!(added > threshold))
		snprintf(why, len,
			 "the CPU time it added is %.1f%% of %s's fastest run, within the %g%% "
			 "threshold",
			 added * 100, before, threshold * 100);
	else
		return 1;
	return 0;
}
