/*
 * perfloop.findings/1: reading with full validation, writing, stable ids.
 * The reader checks every field of every finding, in document order, and
 * stops at the first bad one with its JSON path ("findings[3].severity:
 * expected one of critical|high|medium|low"), because findings files are
 * written by other tools and by hand.
 */
#include "findings.h"

#include "fsio.h"
#include "hash.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static const char *sev_names[] = {"critical", "high", "medium", "low"};
static const char *st_names[] = {"statically_confirmed", "requires_profiling", "measured"};

const char *pl_severity_name(enum pl_severity s)
{
	return sev_names[s];
}

const char *pl_fstatus_name(enum pl_fstatus s)
{
	return st_names[s];
}

void pl_finding_id(const char *leaf, const char *path, const char *function, const char *signal,
		   char out[16])
{
	uint64_t h = PL_FNV_INIT;
	const char *parts[] = {leaf, path, function, signal};
	for (int i = 0; i < 4; i++)
		h = pl_fnv1a(h, parts[i]) * 31 + 1; /* field separator */
	snprintf(out, 16, "PF-%012llx", (unsigned long long)(h & 0xffffffffffffULL));
}

struct ctx {
	const char *file;
	char where[96];
	struct pl_error *err;
};

static int bad(struct ctx *c, const char *field, const char *what)
{
	return pl_error_set(c->err, PL_EINPUT, "%s: %s%s%s: %s", c->file, c->where,
			    field && *field ? "." : "", field ? field : "", what);
}

static int get_string(struct ctx *c, json_t *o, const char *key, int required, char **out)
{
	json_t *v = json_object_get(o, key);
	*out = NULL;
	if (!v || json_is_null(v)) {
		if (required)
			return bad(c, key, "missing (expected a string)");
		return PL_OK;
	}
	if (!json_is_string(v) || (required && json_string_length(v) == 0))
		return bad(c, key, "expected a non-empty string");
	*out = strdup(json_string_value(v));
	return *out ? PL_OK : PL_ENOMEM;
}

static int get_enum(struct ctx *c, json_t *o, const char *key, const char **names, int n, int *out)
{
	json_t *v = json_object_get(o, key);
	char what[128];
	size_t len = 0;
	len += (size_t)snprintf(what + len, sizeof(what) - len, "expected one of ");
	for (int i = 0; i < n; i++)
		len += (size_t)snprintf(what + len, sizeof(what) - len, "%s%s", i ? "|" : "",
					names[i]);
	if (!json_is_string(v))
		return bad(c, key, what);
	for (int i = 0; i < n; i++)
		if (strcmp(json_string_value(v), names[i]) == 0) {
			*out = i;
			return PL_OK;
		}
	return bad(c, key, what);
}

static int finite_number(json_t *v)
{
	return json_is_number(v) && isfinite(json_number_value(v));
}

static int parse_one(struct ctx *c, json_t *o, struct pl_finding *f)
{
	int rc;
	if (!json_is_object(o))
		return bad(c, NULL, "expected an object");
	if ((rc = get_string(c, o, "id", 1, &f->id)) ||
	    (rc = get_string(c, o, "leaf", 1, &f->leaf)) ||
	    (rc = get_string(c, o, "signal", 1, &f->signal)))
		return rc;
	int e = 0;
	if ((rc = get_enum(c, o, "severity", sev_names, 4, &e)))
		return rc;
	f->severity = (enum pl_severity)e;
	if ((rc = get_enum(c, o, "status", st_names, 3, &e)))
		return rc;
	f->status = (enum pl_fstatus)e;
	if ((rc = get_string(c, o, "path", 1, &f->path)))
		return rc;

	json_t *loc = json_object_get(o, "location");
	if (loc && !json_is_null(loc)) {
		if (!json_is_object(loc))
			return bad(c, "location", "expected an object");
		json_t *line = json_object_get(loc, "line"), *col = json_object_get(loc, "column");
		if (line && !(json_is_integer(line) && json_integer_value(line) >= 0))
			return bad(c, "location.line", "expected an integer >= 0");
		if (col && !(json_is_integer(col) && json_integer_value(col) >= 0))
			return bad(c, "location.column", "expected an integer >= 0");
		f->line = line ? (long)json_integer_value(line) : 0;
		f->column = col ? (long)json_integer_value(col) : 0;
		json_t *end = json_object_get(loc, "end_line");
		if (end && !(json_is_integer(end) && json_integer_value(end) >= f->line))
			return bad(c, "location.end_line", "expected an integer >= location.line");
		f->end_line = end ? (long)json_integer_value(end) : 0;
		json_t *also = json_object_get(loc, "also_lines"), *x;
		size_t k;
		if (also && !json_is_array(also))
			return bad(c, "location.also_lines", "expected an array of line numbers");
		json_array_foreach(also, k, x)
		{
			if (!json_is_integer(x) || json_integer_value(x) < 1)
				return bad(c, "location.also_lines", "expected line numbers >= 1");
		}
		if (json_array_size(also))
			f->also_lines = json_incref(also);
		json_t *fn = json_object_get(loc, "function");
		if (fn && !json_is_null(fn) && !json_is_string(fn))
			return bad(c, "location.function", "expected a string or null");
		if (json_is_string(fn) && !(f->function = strdup(json_string_value(fn))))
			return PL_ENOMEM;
	}

	json_t *m = json_object_get(o, "metric");
	if (!json_is_object(m))
		return bad(c, "metric", "expected an object with name, value, unit");
	json_t *mn = json_object_get(m, "name");
	if (!json_is_string(mn) || json_string_length(mn) == 0)
		return bad(c, "metric.name", "expected a non-empty string");
	f->metric_name = strdup(json_string_value(mn));
	json_t *mv = json_object_get(m, "value");
	if (mv && !json_is_null(mv)) {
		if (!finite_number(mv))
			return bad(c, "metric.value", "expected a finite number or null");
		f->metric_value = json_number_value(mv);
		f->has_metric_value = 1;
	}
	json_t *mu = json_object_get(m, "unit");
	if (mu && !json_is_null(mu) && !json_is_string(mu))
		return bad(c, "metric.unit", "expected a string or null");
	if (json_is_string(mu))
		f->metric_unit = strdup(json_string_value(mu));

	json_t *ev = json_object_get(o, "evidence");
	if (!json_is_object(ev))
		return bad(c, "evidence", "expected an object with text (and numbers)");
	json_t *et = json_object_get(ev, "text");
	if (!json_is_string(et))
		return bad(c, "evidence.text", "expected a string");
	f->evidence_text = strdup(json_string_value(et));
	json_t *sn = json_object_get(ev, "severity_note");
	if (sn && !json_is_null(sn) && !json_is_string(sn))
		return bad(c, "evidence.severity_note", "expected a string or null");
	if (json_is_string(sn))
		f->severity_note = strdup(json_string_value(sn));
	json_t *nums = json_object_get(ev, "numbers");
	if (nums && !json_is_null(nums)) {
		if (!json_is_object(nums))
			return bad(c, "evidence.numbers", "expected an object of numbers");
		const char *k;
		json_t *nv;
		json_object_foreach(nums, k, nv)
		{
			if (!finite_number(nv)) {
				char field[96];
				snprintf(field, sizeof(field), "evidence.numbers.%s", k);
				return bad(c, field, "expected a finite number");
			}
		}
		f->evidence_numbers = json_incref(nums);
		json_t *r = json_object_get(nums, "ratio");
		if (r) {
			if (!(json_number_value(r) > 0))
				return bad(c, "evidence.numbers.ratio", "expected a number > 0");
			f->ratio = json_number_value(r);
			f->has_ratio = 1;
		}
	}

	json_t *conf = json_object_get(o, "confidence");
	if (!finite_number(conf) || json_number_value(conf) < 0 || json_number_value(conf) > 1)
		return bad(c, "confidence", "expected a number from 0 to 1");
	f->confidence = json_number_value(conf);
	json_t *lvl = json_object_get(o, "level");
	if (!json_is_integer(lvl) || json_integer_value(lvl) < 1 || json_integer_value(lvl) > 8)
		return bad(c, "level", "expected an integer from 1 to 8");
	f->level = (int)json_integer_value(lvl);
	if ((rc = get_string(c, o, "suggested_action", 1, &f->suggested_action)))
		return rc;
	json_t *adv = json_object_get(o, "advisory");
	if (adv && !json_is_boolean(adv))
		return bad(c, "advisory", "expected true or false");
	f->advisory = json_is_true(adv);
	return PL_OK;
}

static void finding_release(struct pl_finding *f)
{
	free(f->id);
	free(f->leaf);
	free(f->signal);
	free(f->path);
	free(f->function);
	free(f->suggested_action);
	free(f->metric_name);
	free(f->metric_unit);
	free(f->evidence_text);
	free(f->severity_note);
	free(f->source);
	free(f->needs_caller);
	free(f->unreferenced);
	json_decref(f->evidence_numbers);
	json_decref(f->also_lines);
	memset(f, 0, sizeof(*f));
}

int pl_finding_from_json(json_t *o, const char *file, struct pl_finding *f, struct pl_error *err)
{
	struct ctx c = {.file = file, .err = err};
	memset(f, 0, sizeof *f);
	int rc = parse_one(&c, o, f);
	if (rc != PL_OK)
		finding_release(f);
	return rc;
}

int pl_findings_load(const char *path, struct pl_findings *out, struct pl_error *err)
{
	json_t *doc;
	int lrc = pl_json_load(path, &doc, err);
	if (lrc != PL_OK)
		return lrc;
	struct ctx c = {.file = path, .err = err};
	int rc = PL_OK;
	json_t *schema = json_object_get(doc, "schema");
	if (!json_is_object(doc)) {
		rc = pl_error_set(err, PL_EINPUT, "%s: $: expected an object", path);
	} else if (!json_is_string(schema) ||
		   strcmp(json_string_value(schema), PL_FINDINGS_SCHEMA) != 0) {
		rc = pl_error_set(err, PL_EINPUT, "%s: schema: expected \"%s\", got %s%s%s", path,
				  PL_FINDINGS_SCHEMA, json_is_string(schema) ? "\"" : "",
				  json_is_string(schema) ? json_string_value(schema) : "nothing",
				  json_is_string(schema) ? "\"" : "");
	} else if (!json_is_string(json_object_get(doc, "tool"))) {
		rc = pl_error_set(err, PL_EINPUT, "%s: tool: expected a string", path);
	} else if (!json_is_array(json_object_get(doc, "findings"))) {
		rc = pl_error_set(err, PL_EINPUT, "%s: findings: expected an array", path);
	}
	json_t *arr = json_object_get(doc, "findings");
	size_t i;
	json_t *o;
	size_t start = out->n;
	if (rc == PL_OK)
		json_array_foreach(arr, i, o)
		{
			struct pl_finding *nv = realloc(out->v, (out->n + 1) * sizeof(*nv));
			if (!nv) {
				rc = PL_ENOMEM;
				break;
			}
			out->v = nv;
			struct pl_finding *f = &out->v[out->n];
			memset(f, 0, sizeof(*f));
			snprintf(c.where, sizeof(c.where), "findings[%zu]", i);
			rc = parse_one(&c, o, f);
			if (rc == PL_OK && !(f->source = strdup(path)))
				rc = PL_ENOMEM;
			if (rc != PL_OK) {
				finding_release(f);
				break;
			}
			out->n++;
		}
	if (rc != PL_OK) {
		while (out->n > start)
			finding_release(&out->v[--out->n]);
		if (out->n == 0) {
			free(out->v);
			out->v = NULL;
		}
	}
	json_decref(doc);
	return rc;
}

struct pl_finding *pl_findings_push(struct pl_findings *f)
{
	struct pl_finding *g = realloc(f->v, (f->n + 1) * sizeof(*g));
	if (!g)
		return NULL;
	f->v = g;
	memset(&g[f->n], 0, sizeof(*g));
	return &g[f->n++];
}

struct pl_finding *pl_findings_add_measured(struct pl_findings *f, const char *leaf,
					    const char *path, const char *key, const char *signal,
					    const char *evidence, const char *action,
					    const char *metric, const char *unit, double value)
{
	struct pl_finding *x = pl_findings_push(f);
	if (!x)
		return NULL;
	x->leaf = strdup(leaf);
	x->path = strdup(path);
	x->function = strdup("");
	x->signal = strdup(signal);
	x->evidence_text = strdup(evidence);
	x->suggested_action = strdup(action);
	x->metric_name = strdup(metric);
	x->metric_unit = strdup(unit);
	x->id = malloc(16);
	if (!x->leaf || !x->path || !x->function || !x->signal || !x->evidence_text ||
	    !x->suggested_action || !x->metric_name || !x->metric_unit || !x->id)
		return NULL;
	pl_finding_id(leaf, path, "", key, x->id);
	x->status = PL_FST_MEASURED;
	x->metric_value = value;
	x->has_metric_value = 1;
	return x;
}

void pl_findings_release(struct pl_findings *f)
{
	for (size_t i = 0; i < f->n; i++)
		finding_release(&f->v[i]);
	free(f->v);
	f->v = NULL;
	f->n = 0;
}

void pl_findings_remove(struct pl_findings *f, size_t i)
{
	if (i >= f->n)
		return;
	finding_release(&f->v[i]);
	memmove(&f->v[i], &f->v[i + 1], (f->n - i - 1) * sizeof *f->v);
	f->n--;
}

json_t *pl_finding_to_json(const struct pl_finding *f)
{
	json_t *loc = json_pack("{s:I, s:I, s:s?}", "line", (json_int_t)f->line, "column",
				(json_int_t)f->column, "function", f->function);
	if (loc && f->end_line > f->line)
		json_object_set_new(loc, "end_line", json_integer((json_int_t)f->end_line));
	if (loc && json_array_size(f->also_lines))
		json_object_set_new(loc, "also_lines", json_deep_copy(f->also_lines));
	json_t *metric = json_pack("{s:s, s:o, s:s?}", "name", f->metric_name, "value",
				   f->has_metric_value ? json_real(f->metric_value) : json_null(),
				   "unit", f->metric_unit);
	json_t *ev = json_pack("{s:s, s:O?, s:s?}", "text", f->evidence_text ? f->evidence_text : "",
			       "numbers", f->evidence_numbers, "severity_note", f->severity_note);
	json_t *o =
	    json_pack("{s:s, s:s, s:s, s:s, s:s, s:s, s:o, s:o, s:o, s:f, s:i, s:s}", "id", f->id,
		      "leaf", f->leaf, "signal", f->signal, "severity",
		      pl_severity_name(f->severity), "status", pl_fstatus_name(f->status), "path",
		      f->path, "location", loc, "metric", metric, "evidence", ev, "confidence",
		      f->confidence, "level", f->level, "suggested_action", f->suggested_action);
	if (o && f->advisory)
		json_object_set_new(o, "advisory", json_true());
	return o;
}

json_t *pl_findings_doc(const char *tool, const struct pl_findings *f)
{
	char created[32];
	time_t t = time(NULL);
	struct tm tm;
	gmtime_r(&t, &tm);
	strftime(created, sizeof(created), "%Y-%m-%dT%H:%M:%SZ", &tm);
	json_t *arr = json_array();
	for (size_t i = 0; i < f->n; i++)
		json_array_append_new(arr, pl_finding_to_json(&f->v[i]));
	return json_pack("{s:s, s:s, s:s, s:o}", "schema", PL_FINDINGS_SCHEMA, "tool", tool,
			 "created", created, "findings", arr);
}

double pl_finding_profile_share(const struct pl_finding *f)
{
	if (f->status != PL_FST_MEASURED || !f->metric_name ||
	    strcmp(f->metric_name, "profile_share") != 0 || !f->has_metric_value)
		return -1;
	return f->metric_value;
}
