/*
 * The cost-model intake (intake.h): its template and its reader.
 */
#include "intake.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "render.h"
#include "strbuf.h"
#include "summary.h"
#include "yamlread.h"

static const char *const count_keys[PL_IN_NCOUNTS] = {"bytes_moved",	    "allocations",
						      "launches",	    "synchronizations",
						      "boundary_crossings", "storage_network_ops"};
static const char *const count_help[PL_IN_NCOUNTS] = {
    "read and written, all levels",
    "heap allocations",
    "kernel launches, processes or threads started",
    "device syncs, locks, barriers, collectives",
    "Python <-> C, host <-> device, user <-> kernel",
    "file, database and network operations"};
static const char *const measure_keys[PL_IM_N] = {"wall_s", "cpu_s", "max_rss_bytes",
						  "instructions"};
static const char *const frequencies[] = {"setup",    "per batch",   "per request", "per token",
					  "per rank", "per element", "per step",    "per epoch",
					  "per call", NULL};

/* A string as a YAML double-quoted scalar. */
static void yaml_quoted(struct pl_strbuf *b, const char *s)
{
	pl_strbuf_puts(b, "\"");
	for (; s && *s; s++) {
		if (*s == '"' || *s == '\\')
			pl_strbuf_printf(b, "\\%c", *s);
		else if ((unsigned char)*s < 0x20)
			pl_strbuf_puts(b, " ");
		else
			pl_strbuf_append(b, s, 1);
	}
	pl_strbuf_puts(b, "\"");
}

static void measured_of(json_t *b, double *m)
{
	for (int i = 0; i < PL_IM_N; i++)
		m[i] = NAN;
	if (!b)
		return;
	json_t *t = json_object_get(json_object_get(b, "dimensions"), "timing");
	json_t *st = json_object_get(b, "stats");
	json_t *insn = json_object_get(json_object_get(b, "counters"), "instructions");
	if (json_is_number(json_object_get(t, "value")))
		m[PL_IM_WALL] = json_number_value(json_object_get(t, "value"));
	if (json_is_number(json_object_get(json_object_get(st, "cpu_s"), "p50")))
		m[PL_IM_CPU] =
		    json_number_value(json_object_get(json_object_get(st, "cpu_s"), "p50"));
	if (json_is_number(json_object_get(json_object_get(st, "max_rss_bytes"), "p50")))
		m[PL_IM_RSS] =
		    json_number_value(json_object_get(json_object_get(st, "max_rss_bytes"), "p50"));
	if (json_is_object(insn) && json_is_number(json_object_get(insn, "value")))
		m[PL_IM_INSN] = json_number_value(json_object_get(insn, "value"));
}

char *pl_intake_template(const char *name, json_t *summary, const char *summary_path,
			 const char *bench)
{
	json_t *b = summary ? pl_summary_bench(summary, bench, NULL) : NULL;
	const char *bname = b ? json_string_value(json_object_get(b, "name")) : bench;
	double m[PL_IM_N];
	measured_of(b, m);
	struct pl_strbuf s = {0};
	pl_strbuf_puts(&s, "# The cost model of ");
	pl_strbuf_puts(&s, name);
	pl_strbuf_puts(&s,
		       " (perfloop intake; docs/intake.md). Fill in what is empty\n"
		       "# before optimizing; 'perfloop intake --check' says what is missing.\n"
		       "# Everything but `measured` is an estimate: a rough order of magnitude\n"
		       "# is the point, so that a measurement can be checked against it.\n");
	pl_strbuf_printf(&s, "schema: %s\nname: ", PL_INTAKE_SCHEMA);
	yaml_quoted(&s, name);
	pl_strbuf_puts(&s, "\nbenchmark: ");
	yaml_quoted(&s, bname ? bname : "");
	pl_strbuf_puts(&s,
		       "  # the benchmark this models\n"
		       "kpi:\n"
		       "  metric: \"\"    # the primary KPI: step time, tokens/s, p99 latency, "
		       "wall time per run\n"
		       "  workload: \"\"  # its shape: batch 32 x 2048 tokens; 1M rows; a 20 MB "
		       "JSON file\n"
		       "frequency: \"\"   # how often the code runs: ");
	for (size_t i = 0; frequencies[i]; i++)
		pl_strbuf_printf(&s, "%s%s", i ? ", " : "", frequencies[i]);
	pl_strbuf_puts(&s, "\ncounts:  # rough counts per unit of frequency; ~ where not known\n");
	for (int i = 0; i < PL_IN_NCOUNTS; i++)
		pl_strbuf_printf(&s, "  %s: ~  # %s\n", count_keys[i], count_help[i]);
	pl_strbuf_puts(&s,
		       "dominant_cost: \"\"  # expected: compute, memory bandwidth, latency, "
		       "allocation, I/O, synchronization, launches, ...\n"
		       "largest_plausible_improvement: \"\"  # e.g. \"4x: a pairwise loop where a "
		       "sort would do\"\n");
	pl_strbuf_puts(&s, "measured:  # from a perfloop bench summary: not estimates\n  from: ");
	if (b && summary_path)
		yaml_quoted(&s, summary_path);
	else
		pl_strbuf_puts(&s, "~");
	pl_strbuf_puts(&s, "\n");
	for (int i = 0; i < PL_IM_N; i++) {
		if (isnan(m[i]))
			pl_strbuf_printf(&s, "  %s: ~\n", measure_keys[i]);
		else if (i == PL_IM_RSS || i == PL_IM_INSN) /* counts: whole */
			pl_strbuf_printf(&s, "  %s: %.0f\n", measure_keys[i], m[i]);
		else
			pl_strbuf_printf(&s, "  %s: %.6g\n", measure_keys[i], m[i]);
	}
	return pl_strbuf_take(&s);
}

/* key is empty (or absent: line is where it would go) */
static void empty(struct pl_intake *in, const char *key, int line)
{
	size_t n = strlen(in->missing);
	if (!n)
		in->missing_line = line;
	snprintf(in->missing + n, sizeof in->missing - n, "%s%s", n ? ", " : "", key);
}

/* a string the user fills in: empty or null leaves *out NULL, listed */
static int text(struct pl_yaml *y, yaml_node_t *v, const char *key, char **out,
		struct pl_intake *in)
{
	if (!pl_yaml_is_null(v) && !(pl_yaml_scalar(v) && !*pl_yaml_scalar(v)))
		return pl_yaml_string(y, v, key, out);
	empty(in, key, pl_yaml_line(v));
	return PL_OK;
}

static int read_kpi(struct pl_yaml *y, yaml_node_t *map, struct pl_intake *in)
{
	static const char *const known[] = {"metric", "workload", NULL};
	if (map->type != YAML_MAPPING_NODE)
		return pl_yaml_bad(y, map, "kpi", "expected a mapping (metric:, workload:)%s", "");
	int rc = pl_yaml_keys(y, map, "kpi", known);
	int got[2] = {0, 0};
	for (yaml_node_pair_t *p = map->data.mapping.pairs.start;
	     !rc && p < map->data.mapping.pairs.top; p++) {
		const char *k = pl_yaml_scalar(pl_yaml_node(y, p->key));
		yaml_node_t *v = pl_yaml_node(y, p->value);
		int w = k && !strcmp(k, "workload");
		got[w] = 1;
		rc =
		    text(y, v, w ? "kpi.workload" : "kpi.metric", w ? &in->workload : &in->kpi, in);
	}
	for (int w = 0; !rc && w < 2; w++)
		if (!got[w])
			empty(in, w ? "kpi.workload" : "kpi.metric", pl_yaml_line(map));
	return rc;
}

static int read_counts(struct pl_yaml *y, yaml_node_t *map, struct pl_intake *in)
{
	if (map->type != YAML_MAPPING_NODE)
		return pl_yaml_bad(y, map, "counts", "expected a mapping (bytes_moved: 1e9, ...)%s",
				   "");
	const char *known[PL_IN_NCOUNTS + 1];
	for (int i = 0; i < PL_IN_NCOUNTS; i++)
		known[i] = count_keys[i];
	known[PL_IN_NCOUNTS] = NULL;
	int rc = pl_yaml_keys(y, map, "counts", known);
	for (yaml_node_pair_t *p = map->data.mapping.pairs.start;
	     !rc && p < map->data.mapping.pairs.top; p++) {
		const char *k = pl_yaml_scalar(pl_yaml_node(y, p->key));
		yaml_node_t *v = pl_yaml_node(y, p->value);
		for (int i = 0; i < PL_IN_NCOUNTS && k; i++) {
			if (strcmp(k, count_keys[i]) != 0)
				continue;
			char at[64];
			snprintf(at, sizeof at, "counts.%s", count_keys[i]);
			if (!pl_yaml_is_null(v))
				rc = pl_yaml_number(y, v, at, 0, &in->counts[i]);
		}
	}
	return rc;
}

static int read_measured(struct pl_yaml *y, yaml_node_t *map, struct pl_intake *in)
{
	static const char *const known[] = {"from",	     "wall_s",	     "cpu_s",
					    "max_rss_bytes", "instructions", NULL};
	if (map->type != YAML_MAPPING_NODE)
		return pl_yaml_bad(y, map, "measured", "expected a mapping (from:, wall_s:, ...)%s",
				   "");
	int rc = pl_yaml_keys(y, map, "measured", known);
	for (yaml_node_pair_t *p = map->data.mapping.pairs.start;
	     !rc && p < map->data.mapping.pairs.top; p++) {
		const char *k = pl_yaml_scalar(pl_yaml_node(y, p->key));
		yaml_node_t *v = pl_yaml_node(y, p->value);
		if (!k || pl_yaml_is_null(v))
			continue;
		if (!strcmp(k, "from")) {
			rc = pl_yaml_string(y, v, "measured.from", &in->measured_from);
			continue;
		}
		for (int i = 0; i < PL_IM_N; i++)
			if (!strcmp(k, measure_keys[i])) {
				char at[64];
				snprintf(at, sizeof at, "measured.%s", measure_keys[i]);
				rc = pl_yaml_number(y, v, at, 0, &in->measured[i]);
			}
	}
	return rc;
}

static int read_root(struct pl_yaml *y, yaml_node_t *root, void *arg)
{
	struct pl_intake *in = arg;
	static const char *const known[] = {
	    "schema",	 "name",   "benchmark",	    "kpi",
	    "frequency", "counts", "dominant_cost", "largest_plausible_improvement",
	    "measured",	 NULL};
	if (!root || root->type != YAML_MAPPING_NODE)
		return pl_yaml_bad(y, root, "the file",
				   "expected a mapping (schema: perfloop.intake/1, name:, ...)%s",
				   "");
	int rc = pl_yaml_keys(y, root, "the file", known);
	int seen_schema = 0, seen[4] = {0};
	for (yaml_node_pair_t *p = root->data.mapping.pairs.start;
	     !rc && p < root->data.mapping.pairs.top; p++) {
		const char *k = pl_yaml_scalar(pl_yaml_node(y, p->key));
		yaml_node_t *v = pl_yaml_node(y, p->value);
		k = k ? k : "?";
		if (!strcmp(k, "schema")) {
			seen_schema = 1;
			if (!pl_yaml_scalar(v) || strcmp(pl_yaml_scalar(v), PL_INTAKE_SCHEMA) != 0)
				rc = pl_yaml_bad(
				    y, v, "schema", "expected " PL_INTAKE_SCHEMA ", got '%s'",
				    pl_yaml_scalar(v) ? pl_yaml_scalar(v) : "(not a scalar)");
		} else if (!strcmp(k, "name")) {
			rc = pl_yaml_string(y, v, "name", &in->name);
		} else if (!strcmp(k, "benchmark")) {
			if (!pl_yaml_scalar(v))
				rc = pl_yaml_bad(y, v, "benchmark",
						 "expected a benchmark's name (or \"\")%s", "");
			else if (*pl_yaml_scalar(v) && !pl_yaml_is_null(v))
				rc = pl_yaml_string(y, v, "benchmark", &in->benchmark);
		} else if (!strcmp(k, "kpi")) {
			seen[0] = 1;
			rc = read_kpi(y, v, in);
		} else if (!strcmp(k, "frequency")) {
			seen[1] = 1;
			rc = text(y, v, "frequency", &in->frequency, in);
			int ok = !in->frequency;
			for (size_t i = 0; frequencies[i] && !ok; i++)
				ok = !strcmp(in->frequency, frequencies[i]);
			if (!rc && !ok)
				rc = pl_yaml_bad(
				    y, v, "frequency",
				    "expected setup, per batch, per request, per token, "
				    "per rank, per element, per step, per epoch or per "
				    "call, got '%s'",
				    in->frequency);
		} else if (!strcmp(k, "counts")) {
			rc = read_counts(y, v, in);
		} else if (!strcmp(k, "dominant_cost")) {
			seen[2] = 1;
			rc = text(y, v, "dominant_cost", &in->dominant_cost, in);
		} else if (!strcmp(k, "largest_plausible_improvement")) {
			seen[3] = 1;
			rc = text(y, v, "largest_plausible_improvement", &in->improvement, in);
		} else {
			rc = read_measured(y, v, in);
		}
	}
	if (!rc && !seen_schema)
		rc = pl_yaml_bad(y, root, "schema", "missing: schema: " PL_INTAKE_SCHEMA "%s", "");
	if (!rc && !in->name)
		rc = pl_yaml_bad(y, root, "name", "missing: the intake's name%s", "");
	/* the fields an intake is for: absent counts as empty */
	static const char *const absent[] = {"kpi.metric", "frequency", "dominant_cost",
					     "largest_plausible_improvement"};
	for (int i = 0; !rc && i < 4; i++)
		if (!seen[i]) {
			empty(in, absent[i], pl_yaml_line(root));
			if (i == 0)
				empty(in, "kpi.workload", pl_yaml_line(root));
		}
	return rc;
}

int pl_intake_load(const char *path, struct pl_intake *out, struct pl_error *err)
{
	memset(out, 0, sizeof *out);
	for (int i = 0; i < PL_IN_NCOUNTS; i++)
		out->counts[i] = NAN;
	for (int i = 0; i < PL_IM_N; i++)
		out->measured[i] = NAN;
	int rc = pl_yaml_read(path, read_root, out, err);
	if (rc)
		pl_intake_release(out);
	return rc;
}

void pl_intake_release(struct pl_intake *in)
{
	free(in->name);
	free(in->benchmark);
	free(in->kpi);
	free(in->workload);
	free(in->frequency);
	free(in->dominant_cost);
	free(in->improvement);
	free(in->measured_from);
	memset(in, 0, sizeof *in);
}

/* a rough count as a person writes it: 1200, 4e9 */
static void fmt_count(char *out, size_t len, double x)
{
	if (x < 1e6) {
		snprintf(out, len, "%.0f", x);
		return;
	}
	int e = (int)floor(log10(x));
	double m = x / pow(10, e);
	if (fabs(m - round(m)) < 0.05)
		snprintf(out, len, "%.0fe%d", round(m), e);
	else
		snprintf(out, len, "%.1fe%d", m, e);
}

void pl_intake_describe(const struct pl_intake *in, char *buf, size_t len)
{
	size_t o = 0;
#define ADD(...)                                                                                   \
	do {                                                                                       \
		if (o < len)                                                                       \
			o += (size_t)snprintf(buf + o, len - o, __VA_ARGS__);                      \
	} while (0)
	ADD("intake '%s': KPI %s", in->name, in->kpi ? in->kpi : "(empty)");
	if (in->workload)
		ADD(" on %s", in->workload);
	if (in->frequency)
		ADD(", %s", in->frequency);
	int any = 0;
	for (int i = 0; i < PL_IN_NCOUNTS; i++)
		if (!isnan(in->counts[i])) {
			char n[32];
			fmt_count(n, sizeof n, in->counts[i]);
			ADD("%s~%s %s", any ? ", " : "; ", n, count_keys[i]);
			any = 1;
		}
	ADD("; expected dominant cost: %s; largest plausible improvement: %s",
	    in->dominant_cost ? in->dominant_cost : "(empty)",
	    in->improvement ? in->improvement : "(empty)");
	char v[48];
	any = 0;
	for (int i = 0; i < PL_IM_N; i++) {
		if (isnan(in->measured[i]))
			continue;
		if (i == PL_IM_WALL || i == PL_IM_CPU)
			pl_fmt_time(v, sizeof v, in->measured[i]);
		else if (i == PL_IM_RSS)
			pl_fmt_bytes(v, sizeof v, in->measured[i]);
		else
			snprintf(v, sizeof v, "%.4g", in->measured[i]);
		ADD("%s%s %s", any ? ", " : " (measured: ", measure_keys[i], v);
		any = 1;
	}
	ADD("%s", any ? "; the rest estimates)" : " (all estimates)");
	if (in->missing[0])
		ADD("; still empty: %s", in->missing);
#undef ADD
}
