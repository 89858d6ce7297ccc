/*
 * Profiles other tools wrote (see profread.h).
 */
#include "profread.h"

#include <ctype.h>
#include <errno.h>
#include <jansson.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "fsio.h"
#include "pstats.h"

#define MAX_DEPTH 4096

/* a count from a weight, capped as the folded reader caps the sum */
static int add_stack(struct pl_prof *p, const uint32_t *ids, size_t depth, double weight)
{
	if (!depth || !(weight >= 0.5))
		return 0;
	uint64_t c = (uint64_t)llround(weight);
	if (c > PL_PROF_MAX_COUNT - p->samples)
		return 1; /* more than 10^15 in all: the rest is left out */
	return pl_prof_add(p, ids, depth, c) < 0 ? -1 : 0;
}

/* ---- speedscope ---- */

static double unit_to_us(const char *unit)
{
	if (!unit)
		return 1;
	if (!strcmp(unit, "seconds"))
		return 1e6;
	if (!strcmp(unit, "milliseconds"))
		return 1e3;
	if (!strcmp(unit, "microseconds"))
		return 1;
	if (!strcmp(unit, "nanoseconds"))
		return 1e-3;
	return 1; /* none, bytes: counts as they are */
}

static int read_speedscope(json_t *doc, const char *path, struct pl_prof *p, struct pl_error *err)
{
	json_t *frames = json_object_get(json_object_get(doc, "shared"), "frames");
	json_t *profiles = json_object_get(doc, "profiles");
	if (!json_is_array(frames) || !json_is_array(profiles))
		return pl_error_set(err, PL_EINPUT, "%s: shared.frames, profiles: expected arrays",
				    path);
	size_t nf = json_array_size(frames);
	uint32_t *map = malloc((nf + 1) * sizeof *map);
	uint32_t *ids = malloc(MAX_DEPTH * sizeof *ids);
	int rc = map && ids ? PL_OK : PL_ENOMEM;
	for (size_t i = 0; rc == PL_OK && i < nf; i++) {
		json_t *f = json_array_get(frames, i);
		const char *name = json_string_value(json_object_get(f, "name"));
		const char *file = json_string_value(json_object_get(f, "file"));
		int line = (int)json_integer_value(json_object_get(f, "line"));
		if (!name) {
			rc = pl_error_set(err, PL_EINPUT, "%s: shared.frames[%zu].name: expected a string",
					  path, i);
			break;
		}
		long id = pl_prof_frame(p, name, file ? file : "", line > 0 ? line : 0,
					line > 0 ? line : 0, 0);
		if (id < 0)
			rc = PL_ENOMEM;
		else
			map[i] = (uint32_t)id;
	}
	size_t k;
	json_t *pr;
	json_array_foreach(profiles, k, pr)
	{
		if (rc != PL_OK)
			break;
		const char *type = json_string_value(json_object_get(pr, "type"));
		double scale = unit_to_us(json_string_value(json_object_get(pr, "unit")));
		if (type && !strcmp(type, "sampled")) {
			json_t *samples = json_object_get(pr, "samples");
			json_t *weights = json_object_get(pr, "weights");
			size_t i;
			json_t *s;
			json_array_foreach(samples, i, s)
			{
				size_t depth = 0, j;
				json_t *x;
				json_array_foreach(s, j, x)
				{
					json_int_t fi = json_integer_value(x);
					if (fi < 0 || (size_t)fi >= nf) {
						rc = pl_error_set(err, PL_EINPUT,
								  "%s: profiles[%zu].samples[%zu][%zu]: no "
								  "such frame",
								  path, k, i, j);
						break;
					}
					if (depth < MAX_DEPTH)
						ids[depth++] = map[fi];
				}
				json_t *w = json_array_get(weights, i);
				double weight = w ? json_number_value(w) * scale : 1;
				if (rc == PL_OK && add_stack(p, ids, depth, weight) < 0)
					rc = PL_ENOMEM;
				if (rc != PL_OK)
					break;
			}
		} else if (type && !strcmp(type, "evented")) {
			/* the time between two events belongs to the stack open then */
			size_t depth = 0, i;
			double last = 0;
			json_t *e;
			json_array_foreach(json_object_get(pr, "events"), i, e)
			{
				const char *t = json_string_value(json_object_get(e, "type"));
				double at = json_number_value(json_object_get(e, "at"));
				json_int_t fi = json_integer_value(json_object_get(e, "frame"));
				if (!t || fi < 0 || (size_t)fi >= nf) {
					rc = pl_error_set(err, PL_EINPUT,
							  "%s: profiles[%zu].events[%zu]: type or frame",
							  path, k, i);
					break;
				}
				if (i && add_stack(p, ids, depth, (at - last) * scale) < 0) {
					rc = PL_ENOMEM;
					break;
				}
				last = at;
				if (*t == 'O' && depth < MAX_DEPTH)
					ids[depth++] = map[fi];
				else if (*t == 'C' && depth)
					depth--;
			}
		} else {
			rc = pl_error_set(err, PL_EINPUT,
					  "%s: profiles[%zu].type: expected sampled or evented", path, k);
		}
	}
	free(map);
	free(ids);
	return rc;
}

/* ---- Chrome trace ---- */

struct span {
	double start, end, child;
	const char *name;
	json_int_t pid, tid;
	size_t parent; /* SIZE_MAX: a root */
};

static int cmp_span(const void *a, const void *b)
{
	const struct span *x = a, *y = b;
	if (x->pid != y->pid)
		return x->pid < y->pid ? -1 : 1;
	if (x->tid != y->tid)
		return x->tid < y->tid ? -1 : 1;
	if (x->start != y->start)
		return x->start < y->start ? -1 : 1;
	return x->end > y->end ? -1 : x->end < y->end; /* the outer one first */
}

static int read_chrome(json_t *events, const char *path, struct pl_prof *p, struct pl_error *err)
{
	size_t n = json_array_size(events), ns = 0;
	struct span *s = calloc(n + 1, sizeof *s);
	size_t *open = calloc(n + 1, sizeof *open); /* B events waiting for their E */
	size_t nopen = 0;
	if (!s || !open) {
		free(s);
		free(open);
		return PL_ENOMEM;
	}
	size_t i;
	json_t *e;
	json_array_foreach(events, i, e)
	{
		const char *ph = json_string_value(json_object_get(e, "ph"));
		const char *name = json_string_value(json_object_get(e, "name"));
		if (!ph || (!name && *ph != 'E'))
			continue; /* metadata, counters; an end needs no name */
		double ts = json_number_value(json_object_get(e, "ts"));
		json_int_t pid = json_integer_value(json_object_get(e, "pid"));
		json_int_t tid = json_integer_value(json_object_get(e, "tid"));
		if (*ph == 'X') {
			double dur = json_number_value(json_object_get(e, "dur"));
			if (dur > 0)
				s[ns++] = (struct span){ts, ts + dur, 0, name, pid, tid, SIZE_MAX};
		} else if (*ph == 'B') {
			s[ns] = (struct span){ts, NAN, 0, name, pid, tid, SIZE_MAX};
			open[nopen++] = ns++;
		} else if (*ph == 'E') {
			for (size_t k = nopen; k-- > 0;)
				if (s[open[k]].pid == pid && s[open[k]].tid == tid) {
					s[open[k]].end = ts;
					memmove(open + k, open + k + 1, (nopen - k - 1) * sizeof *open);
					nopen--;
					break;
				}
		}
	}
	free(open);
	size_t keep = 0;
	for (size_t k = 0; k < ns; k++)
		if (s[k].end > s[k].start)
			s[keep++] = s[k];
	ns = keep;
	if (!ns) {
		free(s);
		return pl_error_set(err, PL_EINPUT,
				    "%s: traceEvents: no complete (X) or begin/end (B/E) event with a "
				    "duration",
				    path);
	}
	qsort(s, ns, sizeof *s, cmp_span);
	/* nest: each span's parent is the innermost open span of its thread
	 * that contains it */
	size_t *stack = malloc((ns + 1) * sizeof *stack);
	uint32_t *ids = malloc(MAX_DEPTH * sizeof *ids);
	int rc = stack && ids ? PL_OK : PL_ENOMEM;
	size_t depth = 0;
	for (size_t k = 0; rc == PL_OK && k < ns; k++) {
		while (depth && (s[stack[depth - 1]].pid != s[k].pid ||
				 s[stack[depth - 1]].tid != s[k].tid ||
				 s[stack[depth - 1]].end <= s[k].start))
			depth--;
		if (depth) {
			s[k].parent = stack[depth - 1];
			double end = s[k].end < s[s[k].parent].end ? s[k].end : s[s[k].parent].end;
			s[s[k].parent].child += end - s[k].start;
		}
		stack[depth++] = k;
	}
	for (size_t k = 0; rc == PL_OK && k < ns; k++) {
		size_t d = 0;
		for (size_t x = k; x != SIZE_MAX && d < MAX_DEPTH; x = s[x].parent)
			d++;
		size_t at = d;
		for (size_t x = k; x != SIZE_MAX && at > 0; x = s[x].parent) {
			long id = pl_prof_frame(p, s[x].name, "", 0, 0, 0);
			if (id < 0) {
				rc = PL_ENOMEM;
				break;
			}
			ids[--at] = (uint32_t)id;
		}
		double self = s[k].end - s[k].start - s[k].child;
		if (rc == PL_OK && add_stack(p, ids, d, self) < 0)
			rc = PL_ENOMEM;
	}
	free(stack);
	free(ids);
	free(s);
	return rc;
}

/* ---- Austin ---- */

/* "file:function:line" as 'function (file:line)' */
static long austin_frame(struct pl_prof *p, char *fr)
{
	char *c2 = strrchr(fr, ':');
	if (c2 && c2 > fr && isdigit((unsigned char)c2[1])) {
		*c2 = '\0';
		char *c1 = strrchr(fr, ':');
		if (c1 && c1 > fr) {
			*c1 = '\0';
			int line = atoi(c2 + 1);
			return pl_prof_frame(p, c1 + 1, fr, line, line, 0);
		}
		*c2 = ':';
	}
	return pl_prof_frame(p, fr, "", 0, 0, 0);
}

static int read_austin(char *text, const char *path, struct pl_prof *p, struct pl_error *err)
{
	uint32_t *ids = malloc(MAX_DEPTH * sizeof *ids);
	int rc = ids ? PL_OK : PL_ENOMEM;
	size_t lineno = 0;
	for (char *save = NULL, *line = strtok_r(text, "\n", &save); rc == PL_OK && line;
	     line = strtok_r(NULL, "\n", &save)) {
		lineno++;
		size_t l = strlen(line);
		while (l && (line[l - 1] == '\r' || line[l - 1] == ' '))
			line[--l] = '\0';
		if (!l || line[0] == '#')
			continue;
		char *sp = strrchr(line, ' ');
		char *end = NULL;
		double metric = sp ? strtod(sp + 1, &end) : 0;
		if (!sp || end == sp + 1 || (*end && *end != ',')) {
			rc = pl_error_set(err, PL_EINPUT, "%s:%zu: expected 'P<pid>;T<tid>;... METRIC'",
					  path, lineno);
			break;
		}
		*sp = '\0';
		size_t depth = 0;
		char *fs = NULL;
		for (char *fr = strtok_r(line, ";", &fs); fr && depth < MAX_DEPTH;
		     fr = strtok_r(NULL, ";", &fs)) {
			if ((fr[0] == 'P' || fr[0] == 'T') && isdigit((unsigned char)fr[1]) &&
			    !strchr(fr, '.'))
				continue; /* the process and thread, not frames */
			long id = austin_frame(p, fr);
			if (id < 0) {
				rc = PL_ENOMEM;
				break;
			}
			ids[depth++] = (uint32_t)id;
		}
		if (rc == PL_OK && add_stack(p, ids, depth, metric) < 0)
			rc = PL_ENOMEM;
	}
	free(ids);
	return rc;
}

/* ---- perf script ---- */

static int perf_flush(struct pl_prof *p, uint32_t *leaf_first, size_t n)
{
	for (size_t a = 0, b = n ? n - 1 : 0; a < b; a++, b--) {
		uint32_t x = leaf_first[a];
		leaf_first[a] = leaf_first[b];
		leaf_first[b] = x;
	}
	return add_stack(p, leaf_first, n, 1);
}

static int read_perf_script(char *text, struct pl_prof *p)
{
	uint32_t *ids = malloc(MAX_DEPTH * sizeof *ids);
	if (!ids)
		return PL_ENOMEM;
	size_t n = 0;
	int rc = PL_OK, in_sample = 0;
	for (char *line = text; rc == PL_OK && line && *line;) {
		char *nl = strchr(line, '\n');
		if (nl)
			*nl = '\0';
		if (!*line || !isspace((unsigned char)*line)) {
			/* a blank line or the next sample's header ends a sample */
			if (in_sample && n && perf_flush(p, ids, n) < 0)
				rc = PL_ENOMEM;
			n = 0;
			in_sample = *line != '\0' && *line != '#';
		} else if (in_sample && n < MAX_DEPTH) {
			char *s = line;
			while (isspace((unsigned char)*s))
				s++;
			while (*s && !isspace((unsigned char)*s)) /* the address */
				s++;
			while (isspace((unsigned char)*s))
				s++;
			char *dso = strrchr(s, '(');
			char *sym_end = dso ? dso : s + strlen(s);
			while (sym_end > s && isspace((unsigned char)sym_end[-1]))
				sym_end--;
			char sym[512], lib[512] = "";
			snprintf(sym, sizeof sym, "%.*s", (int)(sym_end - s), s);
			char *plus = strstr(sym, "+0x");
			if (plus)
				*plus = '\0';
			if (dso) {
				char *close = strchr(dso, ')');
				snprintf(lib, sizeof lib, "%.*s",
					 (int)(close ? close - dso - 1 : (long)strlen(dso + 1)), dso + 1);
			}
			long id = pl_prof_frame(p, sym[0] ? sym : "[unknown]", lib, 0, 0, 0);
			if (id < 0)
				rc = PL_ENOMEM;
			else
				ids[n++] = (uint32_t)id;
		}
		line = nl ? nl + 1 : NULL;
	}
	if (rc == PL_OK && in_sample && n && perf_flush(p, ids, n) < 0)
		rc = PL_ENOMEM;
	free(ids);
	return rc;
}

/* ---- telling them apart ---- */

/* the first line that says something (not blank, not a comment) */
static const char *first_line(const char *t, size_t *len)
{
	while (*t) {
		const char *e = strchr(t, '\n');
		size_t l = e ? (size_t)(e - t) : strlen(t);
		size_t k = 0;
		while (k < l && isspace((unsigned char)t[k]))
			k++;
		if (k < l && t[k] != '#') {
			*len = l;
			return t;
		}
		if (!e)
			break;
		t = e + 1;
	}
	return NULL;
}

const char *pl_prof_format(const char *text)
{
	/* marshal's bytes, before any text test (a dict begins with '{') */
	if (pl_pstats_sniff((const unsigned char *)text, text[0] ? (text[1] ? 2 : 1) : 0))
		return "pstats";
	const char *t = text;
	while (isspace((unsigned char)*t))
		t++;
	/* JSON: an object, or an array of objects (a trace's bare events); a
	 * folded line may begin with '[' too: "[unknown];main 3" */
	const char *in = *t == '[' ? t + 1 + strspn(t + 1, " \t\r\n") : t;
	if (*t == '{' || (*t == '[' && (*in == '{' || *in == ']'))) {
		/* told apart when parsed: a speedscope $schema, or trace events */
		return strstr(t, "speedscope") && strstr(t, "\"$schema\"") ? "speedscope"
										: "chrome-trace";
	}
	size_t l = 0;
	const char *fl = first_line(text, &l);
	if (fl && fl[0] == 'P' && isdigit((unsigned char)fl[1]) && memchr(fl, ';', l))
		return "austin";
	/* perf script: a header, then frames indented by whitespace, each
	 * "ADDR symbol (dso)" */
	const char *second = fl ? strchr(fl, '\n') : NULL;
	if (fl && !isspace((unsigned char)fl[0]) && second && isspace((unsigned char)second[1]) &&
	    isxdigit((unsigned char)second[1 + strspn(second + 1, " \t")]))
		return "perf-script";
	return "folded";
}

int pl_prof_read_any(const char *path, struct pl_prof *p, const char **format,
		     struct pl_error *err)
{
	size_t len = 0;
	int missing = 0;
	struct pl_error why;
	int fd = pl_fsio_open_regular(path, 0, &why);
	if (fd < 0)
		return pl_error_set(err, PL_EINPUT, "%s: cannot read: %s", path,
				    errno == ENOENT ? strerror(errno) : "not a regular file");
	close(fd);
	char *text = pl_fsio_read(path, &len, &missing);
	if (!text)
		return pl_error_set(err, PL_EINPUT, "%s: cannot read: %s", path, strerror(errno));
	*format = pl_prof_format(text);
	int rc;
	if (!strcmp(*format, "pstats")) {
		rc = pl_pstats_read((const unsigned char *)text, len, path, p, err);
	} else if (!strcmp(*format, "speedscope") || !strcmp(*format, "chrome-trace")) {
		json_error_t je;
		json_t *doc = json_loadb(text, len, 0, &je);
		if (!doc) {
			free(text);
			return pl_error_set(err, PL_EINPUT, "%s:%d: not JSON: %s", path, je.line, je.text);
		}
		const char *schema = json_string_value(json_object_get(doc, "$schema"));
		json_t *events = json_is_array(doc) ? doc : json_object_get(doc, "traceEvents");
		if (schema && strstr(schema, "speedscope")) {
			*format = "speedscope";
			rc = read_speedscope(doc, path, p, err);
		} else if (json_is_array(events)) {
			*format = "chrome-trace";
			rc = read_chrome(events, path, p, err);
		} else {
			rc = pl_error_set(err, PL_EINPUT,
					  "%s: a JSON document, but neither a speedscope file ($schema) "
					  "nor a Chrome trace (traceEvents)",
					  path);
		}
		json_decref(doc);
	} else if (!strcmp(*format, "austin")) {
		rc = read_austin(text, path, p, err);
	} else if (!strcmp(*format, "perf-script")) {
		rc = read_perf_script(text, p);
	} else {
		rc = pl_prof_read_folded(path, p, err);
	}
	free(text);
	return rc;
}
