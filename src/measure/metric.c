/*
 * Reading the program's own number from its output (see metric.h). A
 * regular expression is POSIX extended (regcomp: the C library's, no
 * dependency); its first group is the number where it has one, else the
 * whole match. JSON is jansson's, addressed by a path of keys and array
 * indices.
 */
#include "metric.h"

#include <ctype.h>
#include <jansson.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "regexcap.h"
#include "stats.h"

int pl_metric_name_taken(const char *name)
{
	static const char *taken[] = {
	    "timing",	     "cpu",	     "memory",	      "allocated_bytes", "allocations",
	    "minor_faults",  "major_faults", "ipc",	      "l1_miss_rate",	 "branch_miss_rate",
	    "cache_miss_rate", "task_clock", "page_faults",   "context_switches", "cpu_migrations",
	    "instructions",  "cycles",	     "branches",      "branch_misses",	 "cache_references",
	    "cache_misses",  "L1_dcache_loads", "L1_dcache_load_misses", "syscalls", "auto"};
	for (size_t i = 0; i < sizeof(taken) / sizeof(taken[0]); i++)
		if (!strcmp(name, taken[i]))
			return 1;
	return strncmp(name, "sim_", 4) == 0;
}

int pl_metric_init(struct pl_metric *m, const char *spec, const char *name, int higher,
		   struct pl_error *err)
{
	memset(m, 0, sizeof(*m));
	int steps = !strcmp(spec, "steps") ? 1 : !strcmp(spec, "steps:cpu") ? 2 : 0;
	if (!name)
		name = steps == 2 ? "step_cpu_ms" : steps ? "step_ms" : "metric";
	size_t nl = strlen(name);
	int ok = nl > 0 && nl < sizeof(m->name) && islower((unsigned char)name[0]);
	for (size_t i = 0; ok && i < nl; i++)
		ok = islower((unsigned char)name[i]) || isdigit((unsigned char)name[i]) ||
		     name[i] == '_';
	if (!ok)
		return pl_error_set(err, PL_EINPUT,
				    "option '--metric-name': expected a name of lowercase letters, "
				    "digits and '_' (starting with a letter, at most 47), got '%s'",
				    name);
	if (pl_metric_name_taken(name))
		return pl_error_set(err, PL_EINPUT,
				    "option '--metric-name': '%s' is a dimension perfloop measures "
				    "itself; name the program's number otherwise",
				    name);
	if (!spec[0] || strlen(spec) >= sizeof(m->expr))
		return pl_error_set(err, PL_EINPUT,
				    "option '--metric': expected a regular expression or json:PATH "
				    "(at most 511 characters)");
	snprintf(m->name, sizeof(m->name), "%s", name);
	snprintf(m->expr, sizeof(m->expr), "%s", spec);
	m->higher = higher;
	if (steps) {
		m->steps = steps;
		if (higher)
			return pl_error_set(err, PL_EINPUT,
					    "option '--higher-is-better': a step time (--metric "
					    "steps) is better lower");
		return PL_OK;
	}
	if (!strncmp(spec, "json:", 5)) {
		m->json = 1;
		if (!spec[5])
			return pl_error_set(err, PL_EINPUT,
					    "option '--metric': json: needs a path (json:benchmarks.0."
					    "real_time)");
		return PL_OK;
	}
	int rc = pl_regcomp(&m->re, spec, REG_EXTENDED | REG_NEWLINE);
	if (rc == REG_ESPACE)
		return pl_error_set(err, PL_EINPUT,
				    "option '--metric': '%s': too complex (its repetitions expand "
				    "past %d parts; a pattern that reads a number needs few)",
				    spec, PL_REGEX_MAX_SIZE);
	if (rc != 0) {
		char buf[200];
		regerror(rc, &m->re, buf, sizeof(buf));
		return pl_error_set(err, PL_EINPUT, "option '--metric': '%s': %s", spec, buf);
	}
	m->compiled = 1;
	return PL_OK;
}

void pl_metric_release(struct pl_metric *m)
{
	if (m->compiled)
		regfree(&m->re);
	m->compiled = 0;
}

/* The number at the start of s..e (a float, with an optional sign,
 * exponent, thousands separators not allowed). */
static int number_in(const char *s, const char *e, double *out)
{
	char buf[128];
	while (s < e && isspace((unsigned char)*s))
		s++;
	size_t n = (size_t)(e - s);
	if (n == 0 || n >= sizeof(buf))
		return 0;
	memcpy(buf, s, n);
	buf[n] = '\0';
	char *end;
	double v = strtod(buf, &end);
	if (end == buf || !isfinite(v))
		return 0;
	*out = v;
	return 1;
}

static json_t *walk(json_t *doc, const char *path)
{
	json_t *cur = doc;
	const char *p = path;
	while (cur && *p) {
		char key[256];
		size_t k = 0;
		if (*p == '[') {
			char *end;
			long idx = strtol(p + 1, &end, 10);
			if (*end != ']' || idx < 0)
				return NULL;
			cur = json_array_get(cur, (size_t)idx);
			p = end + 1;
			if (*p == '.')
				p++;
			continue;
		}
		while (*p && *p != '.' && *p != '[' && k + 1 < sizeof(key))
			key[k++] = *p++;
		key[k] = '\0';
		if (*p == '.')
			p++;
		if (json_is_array(cur)) {
			char *end;
			long idx = strtol(key, &end, 10);
			cur = (*end || idx < 0) ? NULL : json_array_get(cur, (size_t)idx);
		} else {
			cur = json_object_get(cur, key);
		}
	}
	return cur;
}

static int from_json(const struct pl_metric *m, const char *text, size_t len, double *value,
		     char *why, size_t wlen)
{
	json_error_t je;
	json_t *doc = json_loadb(text, len, JSON_DECODE_ANY, &je);
	if (!doc) {
		/* output around it: the last line that is a document */
		const char *end = text + len;
		while (!doc && end > text) {
			const char *e = end;
			while (e > text && (e[-1] == '\n' || e[-1] == '\r'))
				e--;
			const char *b = e;
			while (b > text && b[-1] != '\n')
				b--;
			if (e > b)
				doc = json_loadb(b, (size_t)(e - b), 0, &je);
			end = b;
		}
	}
	if (!doc) {
		snprintf(why, wlen, "its output is not JSON (nor is any line of it)");
		return 0;
	}
	json_t *v = walk(doc, m->expr + 5);
	int ok = json_is_number(v) && isfinite(json_number_value(v));
	if (ok)
		*value = json_number_value(v);
	else
		snprintf(why, wlen, "its JSON has no number at '%s'", m->expr + 5);
	json_decref(doc);
	return ok;
}

int pl_metric_extract(const struct pl_metric *m, const char *text, size_t len, double *value,
		      size_t *count, char *why, size_t wlen)
{
	*count = 0;
	if (m->json) {
		int ok = from_json(m, text, len, value, why, wlen);
		*count = (size_t)ok;
		return ok;
	}
	size_t cap = 64, n = 0;
	double *x = malloc(cap * sizeof(*x));
	if (!x) {
		snprintf(why, wlen, "out of memory");
		return 0;
	}
	/* regexec needs a NUL-terminated string: the output may hold NULs, so
	 * each NUL-free stretch is searched on its own */
	char *copy = malloc(len + 1);
	if (!copy) {
		free(x);
		snprintf(why, wlen, "out of memory");
		return 0;
	}
	memcpy(copy, text, len);
	copy[len] = '\0';
	size_t bad = 0;
	for (size_t off = 0; off < len;) {
		const char *s = copy + off;
		size_t sl = strlen(s);
		regmatch_t g[2];
		const char *p = s;
		while (*p && regexec(&m->re, p, 2, g, p == s ? 0 : REG_NOTBOL) == 0) {
			int grp = g[1].rm_so >= 0 ? 1 : 0;
			double v;
			if (number_in(p + g[grp].rm_so, p + g[grp].rm_eo, &v)) {
				if (n == cap) {
					double *nx = realloc(x, 2 * cap * sizeof(*x));
					if (!nx)
						break;
					x = nx;
					cap *= 2;
				}
				x[n++] = v;
			} else {
				bad++;
			}
			p += g[0].rm_eo > 0 ? g[0].rm_eo : 1;
		}
		off += sl + 1;
	}
	free(copy);
	*count = n;
	if (n == 0) {
		if (bad)
			snprintf(why, wlen, "'%s' matched %zu time%s in its output, but not a number",
				 m->expr, bad, bad == 1 ? "" : "s");
		else
			snprintf(why, wlen, "'%s' matched nothing in its output (%zu bytes)", m->expr,
				 len);
		free(x);
		return 0;
	}
	*value = pl_stats_median_inplace(x, n);
	free(x);
	return 1;
}
