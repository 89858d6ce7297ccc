/*
 * Per-step timing logs (see steps.h).
 */
#include "steps.h"

#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "grow.h"
#include "stats.h"

#define DATA_BOUND 0.3
static const char *const total_names[] = {"step_time", "batch_time", "iter_time", NULL};

struct rows {
	double *data, *val; /* val: the total, or the compute time */
	size_t n, cap;
};

static int push(struct rows *r, double d, double v)
{
	size_t c1 = r->cap, c2 = r->cap;
	if (pl_grow((void **)&r->data, &c1, r->n + 1, sizeof(*r->data), 256) < 0 ||
	    pl_grow((void **)&r->val, &c2, r->n + 1, sizeof(*r->val), 256) < 0)
		return -1;
	r->cap = c1 < c2 ? c1 : c2;
	r->data[r->n] = d;
	r->val[r->n++] = v;
	return 0;
}

static int number(const char *path, long line, const char *field, const char *text, double *out,
		  struct pl_error *err)
{
	char *end;
	errno = 0;
	double v = strtod(text, &end);
	int none = end == text;
	while (*end == ' ' || *end == '\t' || *end == '\r' || *end == '"')
		end++;
	if (none || *end || errno || !isfinite(v) || v < 0)
		return pl_error_set(err, PL_EINPUT,
				    "%s:%ld: field '%s': expected seconds >= 0, got '%s'", path,
				    line, field, text);
	*out = v;
	return PL_OK;
}

/* Split a CSV line in place (no quoted commas: timing logs have none). */
static size_t split_csv(char *line, char **cells, size_t max)
{
	size_t n = 0;
	char *p = line;
	while (n < max) {
		while (*p == ' ' || *p == '\t')
			p++;
		cells[n++] = p;
		char *c = strchr(p, ',');
		if (!c)
			break;
		*c = '\0';
		p = c + 1;
	}
	for (size_t i = 0; i < n; i++) {
		char *s = cells[i];
		size_t l = strlen(s);
		while (l && (s[l - 1] == '\n' || s[l - 1] == '\r' || s[l - 1] == ' '))
			s[--l] = '\0';
		if (l >= 2 && s[0] == '"' && s[l - 1] == '"') {
			s[l - 1] = '\0';
			cells[i] = s + 1;
		}
	}
	return n;
}

/* The total field: given, or the first of the usual names the log has. */
static const char *pick_total(const struct pl_steps_opts *o, int (*has)(void *, const char *),
			      void *arg)
{
	if (o->total_field)
		return o->total_field;
	for (int i = 0; total_names[i]; i++)
		if (has(arg, total_names[i]))
			return total_names[i];
	return total_names[0];
}

static int json_has(void *arg, const char *name)
{
	return json_object_get((json_t *)arg, name) != NULL;
}

struct header {
	char **cells;
	size_t n;
};

static int csv_has(void *arg, const char *name)
{
	struct header *h = arg;
	for (size_t i = 0; i < h->n; i++)
		if (strcmp(h->cells[i], name) == 0)
			return 1;
	return 0;
}

static long column(const struct header *h, const char *name)
{
	for (size_t i = 0; i < h->n; i++)
		if (strcmp(h->cells[i], name) == 0)
			return (long)i;
	return -1;
}

static void dist(const double *x, size_t n, struct pl_steps_dist *d)
{
	memset(d, 0, sizeof(*d));
	if (!n)
		return;
	struct pl_describe s;
	if (pl_stats_describe(x, n, &s) != PL_OK)
		return;
	d->sum = s.mean * (double)n;
	d->p50 = s.p50;
	d->p90 = s.p90;
	d->max = s.max;
}

int pl_steps_read(const char *path, const struct pl_steps_opts *o, struct pl_steps *out,
		  struct pl_error *err)
{
	memset(out, 0, sizeof(*out));
	FILE *f = fopen(path, "r");
	if (!f)
		return pl_error_set(err, PL_EINPUT, "cannot read '%s': %s", path, strerror(errno));
	const char *dname = o->data_field ? o->data_field : "data_time";
	const char *tname = NULL, *cname = o->compute_field;
	struct rows r = {0};
	char *line = NULL;
	size_t cap = 0;
	long lineno = 0;
	int rc = PL_OK, kind = 0; /* 1 JSON lines, 2 CSV */
	char *hdr = NULL;
	char *cells[256];
	struct header h = {NULL, 0};
	long dcol = -1, vcol = -1;
	while (rc == PL_OK && getline(&line, &cap, f) > 0) {
		lineno++;
		char *p = line;
		while (isspace((unsigned char)*p))
			p++;
		if (!*p)
			continue;
		if (!kind)
			kind = *p == '{' ? 1 : 2;
		double d = 0, v = 0;
		if (kind == 1) {
			json_error_t je;
			json_t *row = json_loads(p, 0, &je);
			if (!json_is_object(row)) {
				json_decref(row);
				rc = pl_error_set(err, PL_EINPUT, "%s:%ld: not a JSON object (%s)",
						  path, lineno, je.text[0] ? je.text : "an array or a value");
				break;
			}
			if (!tname && !cname)
				tname = pick_total(o, json_has, row);
			const char *want[2] = {dname, cname ? cname : tname};
			double *dst[2] = {&d, &v};
			for (int i = 0; i < 2 && rc == PL_OK; i++) {
				json_t *x = json_object_get(row, want[i]);
				if (!x)
					rc = pl_error_set(err, PL_EINPUT,
							  "%s:%ld: field '%s': missing (--data, "
							  "--total or --compute name the fields)",
							  path, lineno, want[i]);
				else if (!json_is_number(x) || json_number_value(x) < 0 ||
					 !isfinite(json_number_value(x)))
					rc = pl_error_set(err, PL_EINPUT,
							  "%s:%ld: field '%s': expected seconds >= 0",
							  path, lineno, want[i]);
				else
					*dst[i] = json_number_value(x);
			}
			json_decref(row);
		} else if (!hdr) {
			hdr = strdup(p);
			if (!hdr) {
				rc = PL_ENOMEM;
				break;
			}
			h.cells = cells;
			h.n = split_csv(hdr, cells, 256);
			if (!cname)
				tname = pick_total(o, csv_has, &h);
			dcol = column(&h, dname);
			vcol = column(&h, cname ? cname : tname);
			if (dcol < 0 || vcol < 0)
				rc = pl_error_set(err, PL_EINPUT,
						  "%s:%ld: field '%s': no such column in the header "
						  "(--data, --total or --compute name the fields)",
						  path, lineno, dcol < 0 ? dname : cname ? cname : tname);
			continue;
		} else {
			char *row[256];
			size_t n = split_csv(p, row, 256);
			if ((size_t)dcol >= n || (size_t)vcol >= n) {
				rc = pl_error_set(err, PL_EINPUT, "%s:%ld: %zu columns, the header has %zu",
						  path, lineno, n, h.n);
				break;
			}
			rc = number(path, lineno, dname, row[dcol], &d, err);
			if (rc == PL_OK)
				rc = number(path, lineno, cname ? cname : tname, row[vcol], &v, err);
		}
		if (rc == PL_OK && !cname && d > v * 1.0001 + 1e-9)
			rc = pl_error_set(err, PL_EINPUT,
					  "%s:%ld: field '%s': %g s of data wait in a %g s step; if "
					  "'%s' is the step without the wait, say --compute %s",
					  path, lineno, dname, d, v, tname, tname);
		if (rc == PL_OK && push(&r, d, v) < 0)
			rc = PL_ENOMEM;
	}
	free(line);
	fclose(f);
	if (rc == PL_OK && r.n == 0)
		rc = pl_error_set(err, PL_EINPUT, "%s: no steps in it", path);
	if (rc != PL_OK) {
		free(hdr);
		free(r.data);
		free(r.val);
		return rc;
	}
	snprintf(out->data_field, sizeof(out->data_field), "%s", dname);
	if (cname)
		snprintf(out->compute_field, sizeof(out->compute_field), "%s", cname);
	else
		snprintf(out->total_field, sizeof(out->total_field), "%s", tname);
	free(hdr);
	out->format_csv = kind == 2;
	double *total = malloc(r.n * sizeof(*total));
	if (!total) {
		free(r.data);
		free(r.val);
		return PL_ENOMEM;
	}
	for (size_t i = 0; i < r.n; i++)
		total[i] = cname ? r.data[i] + r.val[i] : r.val[i];
	rc = pl_steps_compute(out, r.data, total, r.n, o->warmup);
	free(total);
	free(r.data);
	free(r.val);
	return rc;
}

int pl_steps_compute(struct pl_steps *out, const double *data, const double *total, size_t n,
		     long warmup)
{
	if (n == 0)
		return PL_EINPUT;
	out->n = n;
	size_t w = warmup >= 0 ? (size_t)warmup : n >= 20 ? 3 : n >= 6 ? 1 : 0;
	if (w >= n)
		w = n - 1;
	out->warmup = w;
	double *comp = malloc(n * sizeof(*comp));
	if (!comp)
		return PL_ENOMEM;
	for (size_t i = 0; i < n; i++)
		comp[i] = total[i] - data[i];
	size_t m = n - w;
	dist(data + w, m, &out->data);
	dist(comp + w, m, &out->compute);
	dist(total + w, m, &out->total);
	out->data_share = out->total.sum > 0 ? out->data.sum / out->total.sum : 0;
	dist(data, w, &out->w_data);
	dist(total, w, &out->w_total);
	out->w_data_share = out->w_total.sum > 0 ? out->w_data.sum / out->w_total.sum : 0;
	free(comp);
	return PL_OK;
}

static json_t *dist_json(const struct pl_steps_dist *d)
{
	return json_pack("{s:f, s:f, s:f, s:f}", "sum_s", d->sum, "p50_s", d->p50, "p90_s", d->p90,
			 "max_s", d->max);
}

json_t *pl_steps_to_json(const struct pl_steps *s, const char *path)
{
	return json_pack(
	    "{s:s, s:s, s:s, s:{s:s, s:s*, s:s*}, s:I, s:I, s:{s:f, s:o, s:o, s:o}, "
	    "s:{s:f, s:o, s:o}, s:b}",
	    "schema", "perfloop.steps/1", "file", path, "format", s->format_csv ? "csv" : "jsonl",
	    "fields", "data", s->data_field, "total", s->total_field[0] ? s->total_field : NULL,
	    "compute", s->compute_field[0] ? s->compute_field : NULL, "steps", (json_int_t)s->n,
	    "warmup_steps", (json_int_t)s->warmup, "steady", "data_share", s->data_share, "data",
	    dist_json(&s->data), "compute", dist_json(&s->compute), "step", dist_json(&s->total),
	    "warmup", "data_share", s->w_data_share, "data", dist_json(&s->w_data), "step",
	    dist_json(&s->w_total), "data_bound", s->data_share > DATA_BOUND);
}

void pl_steps_set_loader(struct pl_steps *s, int workers, double load_s, int ncpu)
{
	s->loader_known = 1;
	s->workers = workers;
	s->worker_load_s = load_s;
	s->ncpu = ncpu;
}

int pl_steps_workers_needed(double load_s, double compute_s)
{
	if (!(load_s > 0) || !(compute_s > 0))
		return 1;
	double k = ceil(load_s / compute_s - 1e-9);
	return k < 1 ? 1 : k > 256 ? 256 : (int)k;
}

static const char generic_advice[] =
    "feed the step faster: DataLoader(num_workers > 0) so batches load beside the step, "
    "pin_memory=True for GPU copies, persistent_workers=True to keep workers between "
    "epochs, prefetch_factor to keep more batches ready; move decoding or augmentation "
    "out of __getitem__ where it is repeated work";

/* The advice from what was measured of the loader: how long a batch takes
 * to load (the main process's wait with no workers; the workers' time in
 * the fetcher per batch with them) against the step's compute. */
static void loader_advice(const struct pl_steps *s, char *out, size_t len, double *load_ms,
			  int *needed)
{
	double c = s->compute.p50;
	double load = s->workers == 0  ? s->data.p50
		      : s->workers < 0 ? 0
		      : (s->n ? s->worker_load_s / (double)s->n : 0);
	*load_ms = load * 1e3;
	*needed = pl_steps_workers_needed(load, c);
	int k = *needed, cpus = s->ncpu > 0 ? s->ncpu : 1;
	char cpu_note[300] = "";
	if (k + 1 > cpus)
		snprintf(cpu_note, sizeof cpu_note,
			 "; this machine has %d CPUs for the step and %d workers: they fit where "
			 "loading mostly waits (I/O); where it computes, make a batch cheaper to "
			 "load (decode once, cache decoded items, move augmentation to the GPU)",
			 cpus, k);
	if (s->workers < 0)
		snprintf(out, len,
			 "the DataLoader already uses worker processes (num_workers > 0) and the "
			 "step still waits for them; profile with --subprocesses to measure how "
			 "long a worker takes to load a batch and how many would keep up; "
			 "persistent_workers=True, a larger prefetch_factor, cheaper loading "
			 "(decode once, cache decoded items)");
	else if (s->workers == 0)
		snprintf(out, len,
			 "the main process loads each batch itself (%.1f ms a batch) while the "
			 "step computes for %.1f ms: DataLoader(num_workers=%d) loads batches "
			 "beside the step as fast as it uses them (%d x %.1f ms >= %.1f ms)%s; "
			 "pin_memory=True for GPU copies, persistent_workers=True between epochs",
			 load * 1e3, c * 1e3, k, k, c * 1e3, load * 1e3, cpu_note);
	else if (k > s->workers)
		snprintf(out, len,
			 "%d worker%s take%s %.1f ms to load a batch and the step uses one every "
			 "%.1f ms of compute: num_workers=%d keeps up (num_workers > 0 is already "
			 "set; more of them is the fix)%s",
			 s->workers, s->workers == 1 ? "" : "s", s->workers == 1 ? "s" : "",
			 load * 1e3, c * 1e3, k, cpu_note);
	else
		snprintf(out, len,
			 "%d workers load a batch in %.1f ms each, enough for a %.1f ms step, "
			 "and still the step waits: %s; persistent_workers=True (workers started "
			 "each epoch), a larger prefetch_factor, and collate or pin_memory work in "
			 "the main process are what remains",
			 s->workers, load * 1e3, c * 1e3,
			 s->workers + 1 > cpus ? "the workers and the step share too few CPUs"
					       : "the batches arrive unevenly");
}

void pl_steps_advice(const struct pl_steps *s, char *out, size_t len)
{
	double load_ms;
	int needed;
	if (s->loader_known)
		loader_advice(s, out, len, &load_ms, &needed);
	else
		snprintf(out, len, "%s", generic_advice);
}

int pl_steps_findings(const struct pl_steps *s, const char *path, struct pl_findings *out)
{
	if (!(s->data_share > DATA_BOUND))
		return 0;
	char sig[96], ev[512];
	snprintf(sig, sizeof sig, "the training step waits for data %.0f%% of its time",
		 100 * s->data_share);
	snprintf(ev, sizeof ev,
		 "%s: %zu steps after %zu of warm-up; '%s' sums to %.3f s of %.3f s; per step p50 "
		 "%.4f s of data wait in a %.4f s step",
		 path, s->n - s->warmup, s->warmup, s->data_field, s->data.sum, s->total.sum,
		 s->data.p50, s->total.p50);
	char advice[700];
	double load_ms = 0;
	int needed = 0;
	if (s->loader_known)
		loader_advice(s, advice, sizeof advice, &load_ms, &needed);
	else
		snprintf(advice, sizeof advice, "%s", generic_advice);
	struct pl_finding *x = pl_findings_add_measured(
	    out, "ml.data-loading-bound", path, "data-loading-bound", sig, ev,
	    advice, "data_loading_share", "fraction",
	    s->data_share);
	if (!x)
		return -1; /* released by the caller */
	x->severity = s->data_share >= 0.5 ? PL_SEV_HIGH : PL_SEV_MEDIUM;
	x->ratio = s->data_share < 0.99 ? 1.0 / (1.0 - s->data_share) : 100.0;
	x->has_ratio = 1;
	x->evidence_numbers =
	    json_pack("{s:f, s:I, s:f, s:f, s:f}", "data_share", s->data_share, "steps",
		      (json_int_t)(s->n - s->warmup), "data_s", s->data.sum, "step_s", s->total.sum,
		      "ratio", x->ratio);
	if (s->loader_known && x->evidence_numbers) {
		json_object_set_new(x->evidence_numbers, "workers", json_integer(s->workers));
		json_object_set_new(x->evidence_numbers, "load_ms_per_batch", json_real(load_ms));
		json_object_set_new(x->evidence_numbers, "compute_ms_per_step",
				    json_real(s->compute.p50 * 1e3));
		json_object_set_new(x->evidence_numbers, "workers_needed", json_integer(needed));
	}
	x->confidence = (double)(s->n - s->warmup) / ((double)(s->n - s->warmup) + 10.0);
	x->level = 3;
	return 1;
}
