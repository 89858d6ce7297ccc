/*
 * Static findings weighed by a profile (see scanweigh.h).
 *
 * One pass over the folded file. Each distinct file name in it is looked
 * up once (a hash table of names) and matched to the scanned files by
 * real path, or by path suffix where the profile's names are relative to
 * another directory; a frame of a scanned file is then checked against
 * that file's findings only. A finding counts a stack once (the index of
 * the last stack that counted it), so recursion does not count twice.
 */
#include "scanweigh.h"

#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "fsio.h"
#include "profread.h"
#include "hash.h"

/* a finding being weighed */
struct weighed {
	struct pl_finding *f;
	size_t file; /* index into files[] */
	double line_hits, func_hits;
	long last_line_stack, last_func_stack;
	long def_line; /* the first line its function's frames showed */
	int many_lines; /* ... and another one: the profile has lines */
	int hot_only;	/* an advisory rule's: kept only where measured hot */
	int dropped;	/* ... and it was not: no longer counted, removed */
};

/* a distinct file name of the profile, and the scanned file it is (-1) */
struct name {
	char *s;
	long file;
};

struct weigh {
	struct pl_scan_file *files;
	size_t nfiles;
	char **real; /* per scanned file: its real path, or its path */
	struct weighed *w;
	size_t nw;
	size_t *by_file_off, *by_file_n; /* w[] sorted by file */
	struct name *names;
	size_t cap; /* power of two */
	size_t used;
};

/* "dir/a.py" is "/x/dir/a.py": the shorter is the longer's suffix after a
 * '/' (one of them relative to another directory) */
static int suffix_match(const char *a, const char *b)
{
	size_t la = strlen(a), lb = strlen(b);
	if (la > lb) {
		const char *t = a;
		a = b;
		b = t;
		size_t tl = la;
		la = lb;
		lb = tl;
	}
	if (la == 0 || strcmp(b + lb - la, a) != 0)
		return 0;
	return la == lb || b[lb - la - 1] == '/';
}

static long match_file(const struct weigh *W, const char *name)
{
	char buf[PATH_MAX];
	const char *real = realpath(name, buf) ? buf : name;
	for (size_t i = 0; i < W->nfiles; i++)
		if (!strcmp(W->real[i], real))
			return (long)i;
	/* relative to another directory (a profile taken elsewhere, or a
	 * relative scan path): the longest suffix match, if only one */
	const char *rel = name;
	while (rel[0] == '.' && rel[1] == '/')
		rel += 2;
	long hit = -1;
	for (size_t i = 0; i < W->nfiles; i++)
		if (suffix_match(W->real[i], rel) || suffix_match(W->files[i].path, rel)) {
			if (hit >= 0)
				return -1; /* ambiguous */
			hit = (long)i;
		}
	return hit;
}

/* The scanned file a profile's file name is (-1 none); -2 out of memory. */
static long lookup(struct weigh *W, const char *s, size_t len)
{
	if ((W->used + 1) * 2 > W->cap) {
		size_t cap = W->cap ? W->cap * 2 : 256;
		struct name *t = calloc(cap, sizeof *t);
		if (!t)
			return -2;
		for (size_t i = 0; i < W->cap; i++)
			if (W->names[i].s) {
				size_t k = pl_fnv1a(PL_FNV_INIT, W->names[i].s) & (cap - 1);
				while (t[k].s)
					k = (k + 1) & (cap - 1);
				t[k] = W->names[i];
			}
		free(W->names);
		W->names = t;
		W->cap = cap;
	}
	size_t k = pl_fnv1a_bytes(PL_FNV_INIT, s, len) & (W->cap - 1);
	while (W->names[k].s) {
		if (strlen(W->names[k].s) == len && !memcmp(W->names[k].s, s, len))
			return W->names[k].file;
		k = (k + 1) & (W->cap - 1);
	}
	char *copy = strndup(s, len);
	if (!copy)
		return -2;
	W->names[k].s = copy;
	W->names[k].file = match_file(W, copy);
	W->used++;
	return W->names[k].file;
}

/* a frame's function is the finding's: "train" is "train", and a method's
 * qualified name "Trainer.train" ends with ".train" */
static int same_function(const char *frame, size_t len, const char *fn)
{
	size_t n = strlen(fn);
	if (!n || len < n || memcmp(frame + len - n, fn, n) != 0)
		return 0;
	return len == n || frame[len - n - 1] == '.';
}

/* One frame, "name (file:line)": its parts, 0 where it has none. */
static int split_frame(const char *s, size_t len, size_t *name_len, const char **file,
		       size_t *file_len, long *line)
{
	if (len < 5 || s[len - 1] != ')')
		return 0;
	const char *open = NULL;
	for (size_t i = len - 1; i-- > 1;)
		if (s[i] == '(' && s[i - 1] == ' ') {
			open = s + i;
			break;
		}
	if (!open)
		return 0;
	const char *in = open + 1, *end = s + len - 1, *colon = NULL;
	for (const char *p = end; p-- > in;)
		if (*p == ':') {
			colon = p;
			break;
		}
	if (!colon)
		return 0;
	char *e;
	long l = strtol(colon + 1, &e, 10);
	if (e != end)
		return 0;
	*name_len = (size_t)(open - 1 - s);
	*file = in;
	*file_len = (size_t)(colon - in);
	*line = l;
	return 1;
}

static int cmp_weighed(const void *a, const void *b)
{
	const struct weighed *x = a, *y = b;
	return x->file < y->file ? -1 : x->file > y->file;
}

static void release(struct weigh *W)
{
	for (size_t i = 0; i < W->cap; i++)
		free(W->names[i].s);
	free(W->names);
	for (size_t i = 0; W->real && i < W->nfiles; i++)
		free(W->real[i]);
	free(W->real);
	free(W->w);
	free(W->by_file_off);
	free(W->by_file_n);
}

static enum pl_severity from_share(double s)
{
	return s >= PL_WEIGH_CRITICAL ? PL_SEV_CRITICAL
	       : s >= PL_WEIGH_HIGH   ? PL_SEV_HIGH
	       : s >= PL_WEIGH_MEDIUM ? PL_SEV_MEDIUM
				      : PL_SEV_LOW;
}

/* Whether id is the finding of a rule rules holds as advisory (none
 * where rules is NULL). */
static int advisory_rule(const struct pl_rules *rules, const char *id)
{
	if (!rules || !id)
		return 0;
	const struct pl_rule *r = pl_rules_find(rules, id);
	struct pl_rule_info ri;
	if (!r)
		return 0;
	pl_rule_info(r, &ri);
	return ri.advisory != NULL;
}

/* Weigh the findings with what was counted (see scanweigh.h). */
static int apply(struct weigh *W, const char *path, int lines, struct pl_weigh_summary *sum)
{
	for (size_t i = 0; lines < 0 && i < W->nw; i++)
		sum->has_lines |= W->w[i].many_lines;
	if (lines >= 0)
		sum->has_lines = lines;
	for (size_t i = 0; i < W->nw; i++) {
		struct weighed *x = &W->w[i];
		struct pl_finding *f = x->f;
		if (x->dropped)
			continue;
		double total = sum->samples > 0 ? sum->samples : 1;
		double ls = x->line_hits / total, fs = x->func_hits / total;
		char note[300];
		if (x->line_hits <= 0 && x->func_hits <= 0) {
			snprintf(note, sizeof note, "not seen in the profile (%.200s)", path);
			free(f->severity_note);
			f->severity_note = strdup(note);
			sum->unseen++;
			continue;
		}
		double share = sum->has_lines ? ls : fs;
		f->severity = from_share(share);
		f->status = PL_FST_MEASURED;
		free(f->metric_name);
		free(f->metric_unit);
		f->metric_name = strdup("profile_share");
		f->metric_unit = strdup("fraction");
		f->metric_value = share;
		f->has_metric_value = 1;
		if (!f->evidence_numbers)
			f->evidence_numbers = json_object();
		json_object_set_new(f->evidence_numbers, "line_share",
				    sum->has_lines ? json_real(ls) : json_null());
		json_object_set_new(f->evidence_numbers, "function_share", json_real(fs));
		json_object_set_new(f->evidence_numbers, "profile_samples", json_real(sum->samples));
		char where[64];
		if (!sum->has_lines)
			snprintf(where, sizeof where, "this function");
		else if (f->end_line > f->line)
			snprintf(where, sizeof where, "its lines (%ld-%ld)", f->line, f->end_line);
		else
			snprintf(where, sizeof where, "this line");
		snprintf(note, sizeof note,
			 "from the profile: %.1f%% of its samples run %s (%.1f%% its function)",
			 100 * share, where, 100 * fs);
		free(f->severity_note);
		f->severity_note = strdup(note);
		if (!f->metric_name || !f->metric_unit || !f->severity_note || !f->evidence_numbers)
			return PL_ENOMEM;
		sum->measured++;
	}
	return PL_OK;
}

/* A profile in another format as collapsed stacks, read back from a
 * temporary file the folded writer wrote; NULL with err set. */
static char *other_format(const char *path, size_t *len, struct pl_error *err)
{
	struct pl_prof prof = {0};
	const char *format, *tmpdir = getenv("TMPDIR");
	int rc = pl_prof_read_any(path, &prof, &format, err);
	char *text = NULL, tmp[256];
	snprintf(tmp, sizeof tmp, "%s/perfloop-profile.XXXXXX",
		 tmpdir && *tmpdir && strlen(tmpdir) < 200 ? tmpdir : "/tmp");
	int fd = rc == PL_OK ? mkstemp(tmp) : -1;
	if (rc == PL_OK && fd < 0)
		pl_error_set(err, PL_ESYS, "option '--profile': %s: %s", tmp, strerror(errno));
	if (fd >= 0) {
		close(fd);
		int missing;
		if (pl_prof_write(&prof, &(struct pl_prof_out){.kind = PL_OUT_FOLDED}, tmp, err) >= 0)
			text = pl_fsio_read(tmp, len, &missing);
		unlink(tmp);
	}
	pl_prof_release(&prof);
	return text;
}

/* One pass over the folded stacks text[0..len): each finding's line and
 * function hits (a dropped finding's not), the samples, and how many of
 * them run some finding's line and function. */
static int count_pass(struct weigh *W, char *text, size_t len, const char *path,
		      struct pl_weigh_summary *sum, double *explained_line,
		      double *explained_func, struct pl_error *err)
{
	long stack = 0, lineno = 0;
	int rc = PL_OK;
	for (char *p = text; rc == PL_OK && p < text + len; stack++) {
		char *eol = memchr(p, '\n', (size_t)(text + len - p));
		if (!eol)
			eol = text + len;
		lineno++;
		char *line = p;
		p = eol + 1;
		size_t l = (size_t)(eol - line);
		while (l && (line[l - 1] == '\r' || line[l - 1] == ' '))
			l--;
		if (!l)
			continue;
		char *sp = NULL;
		for (size_t i = l; i-- > 0;)
			if (line[i] == ' ') {
				sp = line + i;
				break;
			}
		char *e = NULL;
		double count = sp ? strtod(sp + 1, &e) : 0;
		if (!sp || e != line + l || !(count >= 0)) {
			rc = pl_error_set(err, PL_EINPUT,
					  "%s:%ld: not folded stacks ('frame;frame;... COUNT'): "
					  "no count at the end of the line",
					  path, lineno);
			break;
		}
		sum->samples += count;
		int by_line = 0, by_func = 0; /* the stack runs a finding's line, function */
		for (char *fr = line; fr < sp;) {
			char *semi = memchr(fr, ';', (size_t)(sp - fr));
			char *fe = semi ? semi : sp;
			size_t nl, fl;
			const char *file;
			long ln;
			if (split_frame(fr, (size_t)(fe - fr), &nl, &file, &fl, &ln)) {
				long fi = lookup(W, file, fl);
				if (fi == -2) {
					rc = PL_ENOMEM;
					break;
				}
				for (size_t k = 0; fi >= 0 && k < W->by_file_n[fi]; k++) {
					struct weighed *x = &W->w[W->by_file_off[fi] + k];
					if (x->dropped)
						continue;
					const char *fn = x->f->function ? x->f->function : "";
					int in_func = same_function(fr, nl, fn);
					if (in_func) {
						by_func = 1;
						if (!x->def_line)
							x->def_line = ln;
						else if (ln != x->def_line)
							x->many_lines = 1;
						if (x->last_func_stack != stack) {
							x->func_hits += count;
							x->last_func_stack = stack;
						}
					}
					long last = x->f->end_line > x->f->line ? x->f->end_line
										 : x->f->line;
					if (ln >= x->f->line && ln <= last) {
						by_line = 1;
						if (x->last_line_stack != stack) {
							x->line_hits += count;
							x->last_line_stack = stack;
						}
					}
				}
			}
			fr = fe + 1;
		}
		*explained_line += by_line ? count : 0;
		*explained_func += by_func ? count : 0;
	}
	return rc;
}

int pl_scan_weigh(struct pl_scan_file *files, size_t n, const char *path, int lines,
		  struct pl_weigh_summary *sum, struct pl_error *err)
{
	return pl_scan_weigh_hot(files, n, path, lines, NULL, sum, err);
}

int pl_scan_weigh_hot(struct pl_scan_file *files, size_t n, const char *path, int lines,
		      const struct pl_rules *hot_only, struct pl_weigh_summary *sum,
		      struct pl_error *err)
{
	memset(sum, 0, sizeof *sum);
	size_t len = 0;
	int missing = 0;
	char *text = pl_fsio_read(path, &len, &missing);
	if (!text)
		return pl_error_set(err, PL_EINPUT, "option '--profile': cannot read '%s': %s",
				    path, missing ? "no such file" : strerror(errno));
	/* another tool's profile (py-spy's or Austin's, perf script's, a
	 * speedscope file): read as perfloop's, then weighed as its folded
	 * stacks */
	if (strcmp(pl_prof_format(text), "folded") != 0) {
		free(text);
		text = other_format(path, &len, err);
		if (!text)
			return PL_EINPUT;
	}
	struct weigh W = {.files = files, .nfiles = n};
	size_t nf = 0;
	for (size_t i = 0; i < n; i++)
		nf += files[i].findings.n;
	W.real = calloc(n ? n : 1, sizeof *W.real);
	W.w = calloc(nf ? nf : 1, sizeof *W.w);
	W.by_file_off = calloc(n ? n : 1, sizeof *W.by_file_off);
	W.by_file_n = calloc(n ? n : 1, sizeof *W.by_file_n);
	int rc = W.real && W.w && W.by_file_off && W.by_file_n ? PL_OK : PL_ENOMEM;
	for (size_t i = 0; rc == PL_OK && i < n; i++) {
		char buf[PATH_MAX];
		W.real[i] = strdup(realpath(files[i].path, buf) ? buf : files[i].path);
		if (!W.real[i])
			rc = PL_ENOMEM;
		for (size_t j = 0; j < files[i].findings.n; j++)
			W.w[W.nw++] = (struct weighed){.f = &files[i].findings.v[j],
							.file = i,
							.hot_only = advisory_rule(
							    hot_only, files[i].findings.v[j].leaf),
							.last_line_stack = -1,
							.last_func_stack = -1};
	}
	qsort(W.w, W.nw, sizeof *W.w, cmp_weighed);
	for (size_t i = W.nw; i-- > 0;) {
		W.by_file_off[W.w[i].file] = i;
		W.by_file_n[W.w[i].file]++;
	}
	double explained_line = 0, explained_func = 0;
	if (rc == PL_OK)
		rc = count_pass(&W, text, len, path, sum, &explained_line, &explained_func, err);
	/* an advisory rule's finding stays only where the profile puts at
	 * least PL_WEIGH_MEDIUM of its samples on its lines (or function);
	 * the others are counted again without those it drops */
	size_t ndropped = 0;
	for (size_t i = 0; rc == PL_OK && i < W.nw; i++) {
		struct weighed *x = &W.w[i];
		if (!x->hot_only)
			continue;
		double total = sum->samples > 0 ? sum->samples : 1;
		int lines_known = lines >= 0 ? lines : 0;
		for (size_t k = 0; lines < 0 && k < W.nw; k++)
			lines_known |= W.w[k].many_lines;
		double share = (lines_known ? x->line_hits : x->func_hits) / total;
		if (share < PL_WEIGH_MEDIUM) {
			x->dropped = 1;
			ndropped++;
		}
	}
	if (rc == PL_OK && ndropped) {
		for (size_t i = 0; i < W.nw; i++) {
			struct weighed *x = &W.w[i];
			x->line_hits = x->func_hits = 0;
			x->last_line_stack = x->last_func_stack = -1;
		}
		sum->samples = 0;
		explained_line = explained_func = 0;
		rc = count_pass(&W, text, len, path, sum, &explained_line, &explained_func, err);
	}
	free(text);
	if (rc == PL_OK)
		rc = apply(&W, path, lines, sum);
	sum->explained = sum->has_lines ? explained_line : explained_func;
	sum->cold_advisory = rc == PL_OK ? ndropped : 0;
	/* the dropped findings go, each file's from its last backwards (the
	 * pointers into its array stay good until then) */
	if (rc == PL_OK && ndropped) {
		for (size_t fi = 0; fi < n; fi++) {
			struct pl_findings *fs = &files[fi].findings;
			for (size_t j = fs->n; j-- > 0;)
				for (size_t k = 0; k < W.by_file_n[fi]; k++) {
					struct weighed *x = &W.w[W.by_file_off[fi] + k];
					if (x->dropped && x->f == &fs->v[j]) {
						pl_findings_remove(fs, j);
						break;
					}
				}
		}
	}
	release(&W);
	return rc;
}
