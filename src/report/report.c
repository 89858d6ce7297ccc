/*
 * Report rendering (see report.h). One writer for both formats: headings,
 * bullets and field labels go through small helpers that know whether they
 * write text or Markdown, so the two outputs never drift apart. Findings
 * use SPEC.md §3's template; advisories go to one trailing list; a
 * Confidence block whose value follows from the kind of evidence closes the
 * report. `--style review` adds, per verdict, Path, Baseline, Cost model,
 * Evidence, Change, Result and Boundary, and says "unmeasured" wherever
 * there is no measurement instead of inventing one.
 */
#include "report.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "render.h"
#include "select.h"
#include "strbuf.h"
#include "summary.h"
#include "verdict.h"

void pl_report_input_init(struct pl_report_input *in)
{
	memset(in, 0, sizeof(*in));
	in->summaries = json_array();
	in->verdicts = json_array();
	in->ledger = json_array();
	in->series = json_array();
	in->merges = json_array();
	in->refused = json_array();
}

void pl_report_input_release(struct pl_report_input *in)
{
	pl_findings_release(&in->findings);
	for (size_t i = 0; i < in->nintakes; i++)
		pl_intake_release(&in->intakes[i]);
	free(in->intakes);
	json_decref(in->summaries);
	json_decref(in->verdicts);
	json_decref(in->ledger);
	json_decref(in->series);
	json_decref(in->merges);
	json_decref(in->refused);
	memset(in, 0, sizeof(*in));
}

static int add_ledger(struct pl_report_input *in, const char *path, struct pl_error *err)
{
	FILE *f = fopen(path, "re");
	if (!f)
		return pl_error_set(err, PL_EINPUT, "%s: cannot read", path);
	char *line = NULL;
	size_t cap = 0;
	ssize_t n;
	int lineno = 0, rc = PL_OK;
	while ((n = getline(&line, &cap, f)) > 0) {
		lineno++;
		if (n == 1 && line[0] == '\n')
			continue;
		json_error_t jerr;
		json_t *o = json_loads(line, 0, &jerr);
		if (!o || !json_is_object(o) || !json_is_string(json_object_get(o, "verdict")) ||
		    !json_is_number(json_object_get(o, "gain"))) {
			rc = pl_error_set(err, PL_EINPUT,
					  "%s:%d: not a perfloop.ledger/1 line (needs verdict and "
					  "gain)%s%s",
					  path, lineno, o ? "" : ": ", o ? "" : jerr.text);
			json_decref(o);
			break;
		}
		json_array_append_new(in->ledger, o);
	}
	free(line);
	fclose(f);
	return rc;
}

int pl_report_add_file(struct pl_report_input *in, const char *path, struct pl_error *err)
{
	size_t plen = strlen(path);
	if ((plen > 5 && !strcmp(path + plen - 5, ".yaml")) ||
	    (plen > 4 && !strcmp(path + plen - 4, ".yml"))) {
		struct pl_intake *g = realloc(in->intakes, (in->nintakes + 1) * sizeof *g);
		if (!g)
			return pl_error_set(err, PL_ENOMEM, "out of memory");
		in->intakes = g;
		int rc = pl_intake_load(path, &g[in->nintakes], err);
		if (rc == PL_OK)
			in->nintakes++;
		return rc;
	}
	json_error_t jerr;
	json_t *doc = json_load_file(path, JSON_REJECT_DUPLICATES, &jerr);
	if (!doc) {
		/* JSON lines: a ledger. A one-line ledger parses as a document. */
		if (strstr(jerr.text, "end of file expected"))
			return add_ledger(in, path, err);
		if (jerr.line <= 0)
			return pl_error_set(err, PL_EINPUT, "%s: %s", path, jerr.text);
		return pl_error_set(err, PL_EINPUT, "%s:%d:%d: %s", path, jerr.line, jerr.column,
				    jerr.text);
	}
	const char *schema = json_string_value(json_object_get(doc, "schema"));
	int rc = PL_OK;
	if (schema && strcmp(schema, PL_FINDINGS_SCHEMA) == 0) {
		rc = pl_findings_load(path, &in->findings, err);
	} else if (schema && strcmp(schema, PL_SUMMARY_SCHEMA) == 0) {
		json_t *checked;
		rc = pl_summary_load(path, &checked, err);
		if (rc == PL_OK)
			json_array_append_new(
			    in->summaries, json_pack("{s:s, s:o}", "file", path, "doc", checked));
	} else if (schema && strcmp(schema, PL_VERDICT_SCHEMA) == 0) {
		if (!json_is_string(json_object_get(doc, "verdict")) ||
		    !json_is_array(json_object_get(doc, "rules")))
			rc = pl_error_set(err, PL_EINPUT, "%s: verdict, rules: missing", path);
		else
			json_array_append_new(in->verdicts,
					      json_pack("{s:s, s:O}", "file", path, "doc", doc));
	} else if (schema && (strcmp(schema, "perfloop.memory/1") == 0 ||
			      strcmp(schema, "perfloop.gpu/1") == 0 ||
			      strcmp(schema, "perfloop.steps/1") == 0)) {
		json_array_append_new(in->series, json_pack("{s:s, s:O}", "file", path, "doc", doc));
	} else if (schema && strcmp(schema, "perfloop.merge/1") == 0) {
		json_array_append_new(in->merges, json_pack("{s:s, s:O}", "file", path, "doc", doc));
	} else if (schema && strcmp(schema, "perfloop.ledger/1") == 0) {
		json_decref(doc);
		return add_ledger(in, path, err);
	} else {
		rc = pl_error_set(err, PL_EINPUT,
				  "%s: schema: expected perfloop.findings/1, perfloop.bench/1, "
				  "perfloop.verdict/1, a perfloop.ledger/1 file, or (for --format "
				  "html) perfloop.memory/1, perfloop.gpu/1, perfloop.steps/1 or "
				  "perfloop.merge/1, got %s",
				  path, schema ? schema : "none");
	}
	json_decref(doc);
	return rc;
}

/* ---- format helpers ---- */

struct out {
	struct pl_strbuf b;
	enum pl_report_format fmt;
};

static void heading(struct out *o, int level, const char *title)
{
	if (o->fmt == PL_REPORT_MD) {
		pl_strbuf_printf(&o->b, "%s %s\n\n", level == 1 ? "#" : "##", title);
		return;
	}
	pl_strbuf_printf(&o->b, "%s\n", title);
	for (size_t i = 0; i < strlen(title); i++)
		pl_strbuf_puts(&o->b, level == 1 ? "=" : "-");
	pl_strbuf_puts(&o->b, "\n\n");
}

/* "[Label] value" lines, indented under an item in text, a list in md */
static void field(struct out *o, const char *label, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
static void field(struct out *o, const char *label, const char *fmt, ...)
{
	char val[1024];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(val, sizeof(val), fmt, ap);
	va_end(ap);
	if (o->fmt == PL_REPORT_MD)
		pl_strbuf_printf(&o->b, "- **[%s]** %s\n", label, val);
	else
		pl_strbuf_printf(&o->b, "   [%s] %s\n", label, val);
}

static const char *level_name(int level)
{
	static const char *names[] = {"",	"algorithm",   "data structure", "I/O",
				      "memory", "concurrency", "vectorization",	 "compute",
				      "caching"};
	return level >= 1 && level <= 8 ? names[level] : "?";
}

static const struct pl_finding **ranked(const struct pl_findings *f, size_t *n, int advisory)
{
	const struct pl_finding **v = calloc(f->n ? f->n : 1, sizeof(*v));
	*n = 0;
	if (!v)
		return NULL;
	for (size_t i = 0; i < f->n; i++)
		if (f->v[i].advisory == advisory)
			v[(*n)++] = &f->v[i];
	/* as select weighs them: a measured bottleneck of a training step
	 * first, framework machinery last (context); then by impact: measured
	 * ratio, severity, level, id (stable output) */
	for (size_t i = 1; i < *n; i++)
		for (size_t j = i; j > 0; j--) {
			const struct pl_finding *a = v[j - 1], *b = v[j];
			double ra = a->has_ratio ? a->ratio : 0, rb = b->has_ratio ? b->ratio : 0;
			int ka = pl_finding_step_bottleneck(a) ? 0 : pl_finding_machinery(a, NULL) ? 2 : 1;
			int kb = pl_finding_step_bottleneck(b) ? 0 : pl_finding_machinery(b, NULL) ? 2 : 1;
			int swap =
			    kb < ka ||
			    (kb == ka && rb > ra) ||
			    (kb == ka && rb == ra && (b->severity < a->severity ||
					  (b->severity == a->severity &&
					   (b->level < a->level ||
					    (b->level == a->level && strcmp(b->id, a->id) < 0)))));
			if (!swap)
				break;
			v[j - 1] = b;
			v[j] = a;
		}
	return v;
}

/* A verdict whose target is this finding's metric measured its "after". */
static json_t *verdict_for_metric(const struct pl_report_input *in, const char *metric)
{
	size_t i;
	json_t *v;
	json_array_foreach(in->verdicts, i, v)
	{
		const char *t =
		    json_string_value(json_object_get(json_object_get(v, "doc"), "target"));
		if (t && strcmp(t, metric) == 0)
			return json_object_get(v, "doc");
	}
	return NULL;
}

static void finding_block(struct out *o, const struct pl_report_input *in,
			  const struct pl_finding *f, size_t rank)
{
	char where[512];
	if (f->line)
		snprintf(where, sizeof(where), "%s:%ld%s%s%s", f->path, f->line,
			 f->function ? " (" : "", f->function ? f->function : "",
			 f->function ? ")" : "");
	else
		snprintf(where, sizeof(where), "%s", f->path);
	if (o->fmt == PL_REPORT_MD)
		pl_strbuf_printf(&o->b, "### %zu. %s — `%s`\n\n", rank, f->signal, where);
	else
		pl_strbuf_printf(&o->b, "%zu. %s — %s\n", rank, f->signal, where);
	field(o, "Bottleneck", "%s (%s, level %d %s; %s)", f->signal, f->leaf, f->level,
	      level_name(f->level), f->id);
	field(o, "Severity", "%s", pl_severity_name(f->severity));
	const char *what = NULL;
	if (pl_finding_machinery(f, &what))
		field(o, "Context", "%s: not a candidate; the time is the work it runs "
				   "(look below it in the flame graph)",
		      what);
	else if (pl_finding_step_bottleneck(f))
		field(o, "Context", "a measured bottleneck of the step: hot functions inside "
				   "the step rank after it");
	field(o, "Status", "%s", pl_fstatus_name(f->status));
	if (f->has_metric_value)
		field(o, "Before", "%s %g%s%s", f->metric_name, f->metric_value,
		      f->metric_unit ? " " : "", f->metric_unit ? f->metric_unit : "");
	else
		field(o, "Before", "%s unmeasured", f->metric_name);
	field(o, "Fix", "%s", f->suggested_action);
	json_t *v = verdict_for_metric(in, f->metric_name);
	if (v)
		field(o, "After", "%s %g%s%s (verdict %s, gain %+.1f%%)", f->metric_name,
		      json_number_value(json_object_get(json_object_get(v, "after"), "p50")),
		      f->metric_unit ? " " : "", f->metric_unit ? f->metric_unit : "",
		      json_string_value(json_object_get(v, "verdict")),
		      json_number_value(json_object_get(v, "gain")) * 100);
	else
		field(o, "After", "unmeasured");
	if (f->has_ratio)
		/* a profile share s bounds the whole program's speed-up at 1/(1-s) if
		 * the cost went away (Amdahl): a ceiling, not a measured gain */
		field(o, "Impact", "up to %.2f× (Amdahl bound from its measured share)", f->ratio);
	else
		field(o, "Impact", "unmeasured");
	if (f->status != PL_FST_MEASURED)
		field(o, "Measured", "none — static analysis; measure before merging");
	if (f->evidence_text && *f->evidence_text)
		field(o, "Evidence", "%s", f->evidence_text);
	pl_strbuf_puts(&o->b, "\n");
}

/* verdict files by their "created" time, oldest first (ISO 8601 sorts as
 * text), the order given where equal or missing */
struct in_order {
	json_t *v;
	size_t i;
};

static int by_created(const void *a, const void *b)
{
	const struct in_order *x = a, *y = b;
	const char *cx = json_string_value(json_object_get(json_object_get(x->v, "doc"), "created")),
		   *cy = json_string_value(json_object_get(json_object_get(y->v, "doc"), "created"));
	int c = cx && cy ? strcmp(cx, cy) : 0;
	return c ? c : x->i < y->i ? -1 : x->i > y->i;
}

double pl_report_confidence(const struct pl_findings *f, int nverdicts, int nsummaries,
			    const char **reason)
{
	size_t n = 0, stat = 0, meas = 0, prof = 0;
	double conf = 0;
	for (size_t i = 0; i < f->n; i++) {
		if (f->v[i].advisory)
			continue;
		n++;
		conf += f->v[i].confidence;
		stat += f->v[i].status == PL_FST_STATIC;
		meas += f->v[i].status == PL_FST_MEASURED;
		prof += f->v[i].status == PL_FST_PROFILING;
	}
	if (n == 0) {
		if (nverdicts > 0) {
			*reason = "measured verdicts, no findings";
			return 0.90;
		}
		/* measurements, but nothing concluded from them: say that, not
		 * "no measurements" beside the benchmarks just listed */
		*reason = nsummaries > 0 ? "measurements only, no finding and no verdict to "
					   "judge (perfloop verify BEFORE AFTER compares two)"
					 : "no findings and no measurements";
		return 0;
	}
	if (prof > 0) {
		*reason = "some findings need profiling to confirm they exist";
		return 0.70 + 0.15 * (1.0 - (double)prof / (double)n);
	}
	if (meas > 0) {
		*reason = stat > 0 ? "a mix of statically confirmed and measured findings"
				   : "measured findings (runtime evidence only)";
		return 0.85 + 0.09 * (double)meas / (double)n;
	}
	*reason = "every finding is statically confirmed";
	return 0.95 + 0.03 * conf / (double)n;
}

/* The summary a verdict names, read once; a file that cannot be read or is
 * refused is remembered with the reason (under "refused", so that the
 * Benchmarks section, which lists "doc"s, passes over it). */
static json_t *summary_doc(const struct pl_report_input *in, const char *file, const char **refused)
{
	size_t i;
	json_t *s;
	*refused = NULL;
	json_array_foreach(in->refused, i, s)
	{
		if (strcmp(json_string_value(json_object_get(s, "file")), file) == 0) {
			*refused = json_string_value(json_object_get(s, "reason"));
			return NULL;
		}
	}
	json_array_foreach(in->summaries, i, s)
	{
		if (strcmp(json_string_value(json_object_get(s, "file")), file) == 0)
			return json_object_get(s, "doc");
	}
	json_t *loaded;
	struct pl_error err = {{0}};
	if (pl_summary_load(file, &loaded, &err) != PL_OK) {
		json_t *r = json_pack("{s:s, s:s}", "file", file, "reason", err.msg);
		*refused = json_string_value(json_object_get(r, "reason"));
		json_array_append_new(in->refused, r);
		return NULL;
	}
	json_array_append_new(in->summaries, json_pack("{s:s, s:o}", "file", file, "doc", loaded));
	return loaded;
}

static void describe_run(char *buf, size_t len, json_t *summary, const char *refused,
			 const char *file, const char *bench, const char *target)
{
	json_t *b = summary ? pl_summary_bench(summary, bench, NULL) : NULL;
	if (!b) {
		if (summary)
			snprintf(buf, len, "unmeasured (%s has no benchmark `%s`)", file,
				 bench ? bench : "?");
		else if (refused) /* the reason names the file */
			snprintf(buf, len, "unmeasured (%s)", refused);
		else
			snprintf(buf, len, "unmeasured (the verdict names no summary)");
		return;
	}
	json_t *w = json_object_get(json_object_get(b, "stats"), "wall_s");
	json_t *d = json_object_get(json_object_get(b, "dimensions"), target);
	char value[64];
	pl_fmt_dim(value, sizeof value, target, json_number_value(json_object_get(d, "value")));
	if (strcmp(target, "timing") != 0) /* the unit the summary names */
		snprintf(value + strlen(value), sizeof value - strlen(value), " %s",
			 json_string_value(json_object_get(d, "unit")) ?: "");
	snprintf(buf, len, "%s: `%s`, %s p50 %s, n=%lld, CV %.1f%%", file,
		 json_string_value(json_object_get(b, "command")), target, value,
		 (long long)json_integer_value(json_object_get(w, "n")),
		 json_number_value(json_object_get(w, "cv")) * 100);
}

static void review_block(struct out *o, const struct pl_report_input *in, json_t *v)
{
	const char *bench = json_string_value(json_object_get(v, "benchmark"));
	const char *target = json_string_value(json_object_get(v, "target"));
	const char *bfile =
	    json_string_value(json_object_get(json_object_get(v, "before"), "file"));
	const char *afile = json_string_value(json_object_get(json_object_get(v, "after"), "file"));
	char title[300], buf[1024];
	snprintf(title, sizeof(title), "Review: %s (%s)", bench, target);
	if (o->fmt == PL_REPORT_MD)
		pl_strbuf_printf(&o->b, "### %s\n\n", title);
	else
		pl_strbuf_printf(&o->b, "%s\n", title);
	/* the finding this change addressed, if one shares the target metric */
	const struct pl_finding *f = NULL;
	for (size_t i = 0; i < in->findings.n; i++)
		if (strcmp(in->findings.v[i].metric_name, target) == 0)
			f = &in->findings.v[i];
	const char *brefused = NULL, *arefused = NULL;
	json_t *before = bfile ? summary_doc(in, bfile, &brefused) : NULL;
	json_t *after = afile ? summary_doc(in, afile, &arefused) : NULL;
	json_t *bb = before ? pl_summary_bench(before, bench, NULL) : NULL;
	if (f)
		field(o, "Path", "%s%s%ld (%s)", f->path, f->line ? ":" : "", f->line, f->id);
	else if (bb)
		field(o, "Path", "`%s` (no finding names this metric)",
		      json_string_value(json_object_get(bb, "command")));
	else
		field(o, "Path", "unmeasured");
	describe_run(buf, sizeof(buf), before, brefused, bfile, bench, target);
	field(o, "Baseline", "%s", buf);
	/* the intake written for this benchmark (or the one with none named) */
	const struct pl_intake *ik = NULL;
	for (size_t i = 0; i < in->nintakes; i++) {
		const struct pl_intake *c = &in->intakes[i];
		if (bench && c->benchmark && !strcmp(c->benchmark, bench)) {
			ik = c;
			break;
		}
		if (!ik && (!c->benchmark || in->nintakes == 1))
			ik = c;
	}
	if (ik) {
		char model[1600];
		pl_intake_describe(ik, model, sizeof model);
		field(o, "Cost model", "%s", model);
	} else if (f && f->has_metric_value)
		field(o, "Cost model", "%s = %g%s%s (%s)", f->metric_name, f->metric_value,
		      f->metric_unit ? " " : "", f->metric_unit ? f->metric_unit : "",
		      pl_fstatus_name(f->status));
	else
		field(o, "Cost model", "unmeasured");
	size_t i;
	json_t *r;
	struct pl_strbuf ev = {0};
	json_array_foreach(json_object_get(v, "rules"), i, r)
	{
		pl_strbuf_printf(&ev, "%s%s %s", i ? "; " : "",
				 json_string_value(json_object_get(r, "name")),
				 json_is_true(json_object_get(r, "passed")) ? "ok" : "FAILED");
	}
	char *evs = pl_strbuf_take(&ev);
	field(o, "Evidence", "%s", evs ? evs : "");
	free(evs);
	if (f)
		field(o, "Change", "%s", f->suggested_action);
	else
		field(o, "Change", "unmeasured (no finding describes the change)");
	describe_run(buf, sizeof(buf), after, arefused, afile, bench, target);
	json_t *failed = json_object_get(v, "failed_rules");
	struct pl_strbuf fl = {0};
	json_array_foreach(failed, i, r)
	{
		pl_strbuf_printf(&fl, "%s%s", i ? ", " : "", json_string_value(r));
	}
	char *fls = pl_strbuf_take(&fl);
	field(o, "Result", "%s; gain %+.1f%% → %s%s%s%s", buf,
	      json_number_value(json_object_get(v, "gain")) * 100,
	      json_string_value(json_object_get(v, "verdict")), fls && *fls ? " (failed: " : "",
	      fls ? fls : "", fls && *fls ? ")" : "");
	free(fls);
	json_t *fp = before ? json_object_get(before, "fingerprint") : NULL;
	if (fp)
		field(o, "Boundary",
		      "holds for this benchmark's input on %s, %lld cores, kernel %s; "
		      "other inputs and machines unmeasured",
		      json_string_value(json_object_get(fp, "cpu_model")),
		      (long long)json_integer_value(json_object_get(fp, "logical_cores")),
		      json_string_value(json_object_get(fp, "kernel")));
	else
		field(o, "Boundary", "unmeasured");
	pl_strbuf_puts(&o->b, "\n");
}

char *pl_report_render(const struct pl_report_input *in, enum pl_report_format fmt,
		       enum pl_report_style style)
{
	struct out o = {.fmt = fmt};
	heading(&o, 1, style == PL_REPORT_REVIEW ? "perfloop review" : "perfloop report");

	size_t nf, na;
	const struct pl_finding **defects = ranked(&in->findings, &nf, 0);
	const struct pl_finding **adv = ranked(&in->findings, &na, 1);
	if (nf > 0) {
		char h[64];
		snprintf(h, sizeof(h), "Findings (%zu, ranked by impact)", nf);
		heading(&o, 2, h);
		for (size_t i = 0; i < nf; i++)
			finding_block(&o, in, defects[i], i + 1);
	}

	size_t nv = json_array_size(in->verdicts);
	if (nv > 0) {
		heading(&o, 2, style == PL_REPORT_REVIEW ? "Changes reviewed" : "Verdicts");
		/* in the order they were made (the loop's files came in the
		 * directory's order: rejected-2, 3, 1) */
		struct in_order *order = malloc(nv * sizeof *order);
		if (!order) {
			free(defects);
			free(adv);
			free(o.b.s);
			return NULL;
		}
		for (size_t k = 0; k < nv; k++)
			order[k] = (struct in_order){json_array_get(in->verdicts, k), k};
		qsort(order, nv, sizeof *order, by_created);
		for (size_t i = 0; i < nv; i++) {
			json_t *d = json_object_get(order[i].v, "doc");
			if (style == PL_REPORT_REVIEW) {
				review_block(&o, in, d);
				continue;
			}
			const char *target = json_string_value(json_object_get(d, "target"));
			char before[48], after[48];
			pl_fmt_dim(before, sizeof before, target,
				  json_number_value(json_object_get(json_object_get(d, "before"), "p50")));
			pl_fmt_dim(after, sizeof after, target,
				  json_number_value(json_object_get(json_object_get(d, "after"), "p50")));
			/* a verdict other than accept says which rules it failed */
			char why[300] = "";
			json_t *failed = json_object_get(d, "failed_rules"), *fr;
			size_t k, len = 0;
			json_array_foreach(failed, k, fr)
			{
				if (json_is_string(fr) && len < sizeof why)
					len += (size_t)snprintf(why + len, sizeof why - len, "%s%s",
								len ? ", " : " (failed: ",
								json_string_value(fr));
			}
			if (len && len < sizeof why)
				snprintf(why + len, sizeof why - len, ")");
			pl_strbuf_printf(&o.b, "%s %s: %s %s -> %s (%+.1f%%): %s%s\n",
					 fmt == PL_REPORT_MD ? "-" : "*",
					 json_string_value(json_object_get(d, "benchmark")), target,
					 before, after,
					 json_number_value(json_object_get(d, "gain")) * 100,
					 json_string_value(json_object_get(d, "verdict")), why);
		}
		free(order);
		if (style != PL_REPORT_REVIEW)
			pl_strbuf_puts(&o.b, "\n");
	}

	/* summaries not already shown through a verdict */
	size_t ns = json_array_size(in->summaries);
	if (ns > 0 && style != PL_REPORT_REVIEW) {
		heading(&o, 2, "Benchmarks");
		size_t i, k;
		json_t *s, *b;
		json_array_foreach(in->summaries, i, s)
		{
			json_array_foreach(json_object_get(json_object_get(s, "doc"), "benchmarks"),
					   k, b)
			{
				json_t *t =
				    json_object_get(json_object_get(b, "dimensions"), "timing");
				json_t *w = json_object_get(json_object_get(b, "stats"), "wall_s");
				if (!t) {
					pl_strbuf_printf(
					    &o.b, "%s %s (%s): no completed runs\n",
					    fmt == PL_REPORT_MD ? "-" : "*",
					    json_string_value(json_object_get(b, "name")),
					    json_string_value(json_object_get(s, "file")));
					continue;
				}
				char p50[48];
				pl_fmt_dim(p50, sizeof p50, "timing",
					  json_number_value(json_object_get(t, "value")));
				pl_strbuf_printf(
				    &o.b, "%s %s (%s): timing p50 %s, n=%lld, CV %.1f%%%s\n",
				    fmt == PL_REPORT_MD ? "-" : "*",
				    json_string_value(json_object_get(b, "name")),
				    json_string_value(json_object_get(s, "file")), p50,
				    (long long)json_integer_value(json_object_get(w, "n")),
				    json_number_value(json_object_get(w, "cv")) * 100,
				    json_is_true(json_object_get(t, "scored"))
					? ""
					: " (N/A: too noisy to compare)");
				/* where another dimension decides (simulated counts, the
				 * program's own number), say which and its figure */
				const char *dec = json_string_value(json_object_get(
				    json_object_get(b, "decides"), "dimension"));
				json_t *dd = dec ? json_object_get(json_object_get(b, "dimensions"), dec)
						 : NULL;
				if (dec && strcmp(dec, "timing") != 0 && dd) {
					char v[48];
					pl_fmt_dim(v, sizeof v, dec,
						  json_number_value(json_object_get(dd, "value")));
					pl_strbuf_printf(
					    &o.b, "  decided on %s: p50 %s, CV %.3f%%%s\n", dec, v,
					    json_number_value(json_object_get(dd, "cv")) * 100,
					    json_is_true(json_object_get(dd, "scored"))
						? ""
						: " (N/A: too noisy to compare)");
				}
			}
		}
		pl_strbuf_puts(&o.b, "\n");
	}

	size_t nl = json_array_size(in->ledger);
	if (nl > 0) {
		heading(&o, 2, "Ledger");
		size_t acc = 0, rej = 0, nfw = 0, i;
		json_t *l;
		json_array_foreach(in->ledger, i, l)
		{
			const char *v = json_string_value(json_object_get(l, "verdict"));
			acc += strcmp(v, "accept") == 0;
			rej += strcmp(v, "reject") == 0;
			nfw += strcmp(v, "no_feasible_win") == 0;
		}
		pl_strbuf_printf(&o.b,
				 "%zu verdict%s: %zu accepted, %zu rejected, %zu no feasible win\n",
				 nl, nl == 1 ? "" : "s", acc, rej, nfw);
		json_array_foreach(in->ledger, i, l)
		{
			const char *commit = json_string_value(json_object_get(l, "commit"));
			pl_strbuf_printf(&o.b, "%s %.12s %s %s %+.1f%% %s\n",
					 fmt == PL_REPORT_MD ? "-" : "*",
					 commit ? commit : "(no commit)",
					 json_string_value(json_object_get(l, "benchmark")),
					 json_string_value(json_object_get(l, "target")),
					 json_number_value(json_object_get(l, "gain")) * 100,
					 json_string_value(json_object_get(l, "verdict")));
		}
		pl_strbuf_puts(&o.b, "\n");
	}

	if (na > 0) {
		heading(&o, 2, "Additional options (not defects)");
		for (size_t i = 0; i < na; i++)
			pl_strbuf_printf(&o.b, "%s %s: %s (%s)\n", fmt == PL_REPORT_MD ? "-" : "*",
					 adv[i]->signal, adv[i]->suggested_action, adv[i]->path);
		pl_strbuf_puts(&o.b, "\n");
	}

	const char *reason;
	/* a ledger line is a verdict the loop made */
	double conf = pl_report_confidence(&in->findings, (int)(nv + json_array_size(in->ledger)),
					   (int)json_array_size(in->summaries), &reason);
	heading(&o, 2, "Confidence");
	if (conf > 0)
		pl_strbuf_printf(&o.b, "%.2f — %s.\n", conf, reason);
	else
		pl_strbuf_printf(&o.b, "n/a — %s.\n", reason);
	free(defects);
	free(adv);
	return pl_strbuf_take(&o.b);
}

const struct pl_finding **pl_report_ranked(const struct pl_findings *f, size_t *n, int advisory)
{
	return ranked(f, n, advisory);
}

char *pl_report_finding_text(const struct pl_report_input *in, const struct pl_finding *f,
			     size_t rank)
{
	struct out o = {.fmt = PL_REPORT_TEXT};
	finding_block(&o, in, f, rank);
	return pl_strbuf_take(&o.b);
}
