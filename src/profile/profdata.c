/*
 * See profdata.h. Two open-addressing tables (frames by name/file/line,
 * stacks by their ids) keep adding a sample to a few hash probes.
 */
#include "profdata.h"
#include "grow.h"

#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <jansson.h>
#include <stdlib.h>
#include <string.h>

#include "findings.h"
#include "fsio.h"
#include "hash.h"
#include "strbuf.h"

static uint64_t frame_hash(const char *name, const char *file, int line, int synthetic)
{
	uint64_t h = pl_fnv1a(PL_FNV_INIT, name);
	h = pl_fnv1a(h ^ 0xff, file);
	return (h ^ (uint64_t)(unsigned)line) * 0x100000001b3ULL + (uint64_t)synthetic;
}

static int grow_table(uint32_t **tab, size_t *cap, size_t n, uint64_t (*hash)(const void *, size_t),
		      const void *ctx)
{
	if ((n + 1) * 2 <= *cap)
		return 0;
	size_t ncap = *cap ? *cap * 2 : 1024;
	uint32_t *t = calloc(ncap, sizeof *t);
	if (!t)
		return -1;
	for (size_t i = 0; i < *cap; i++) {
		uint32_t v = (*tab)[i];
		if (!v)
			continue;
		size_t j = hash(ctx, v - 1) & (ncap - 1);
		while (t[j])
			j = (j + 1) & (ncap - 1);
		t[j] = v;
	}
	free(*tab);
	*tab = t;
	*cap = ncap;
	return 0;
}

static uint64_t frame_hash_at(const void *ctx, size_t i)
{
	const struct pl_prof_frame *f = &((const struct pl_prof *)ctx)->frames[i];
	return frame_hash(f->name, f->file, f->line, f->synthetic);
}

static uint64_t stack_hash_at(const void *ctx, size_t i)
{
	return ((const struct pl_prof *)ctx)->stacks[i].hash;
}

long pl_prof_frame(struct pl_prof *p, const char *name, const char *file, int line, int func_line,
		   int synthetic)
{
	if (grow_table(&p->frame_tab, &p->cap_frame_tab, p->nframes, frame_hash_at, p) < 0)
		goto oom;
	uint64_t h = frame_hash(name, file, line, synthetic);
	size_t j = h & (p->cap_frame_tab - 1);
	while (p->frame_tab[j]) {
		struct pl_prof_frame *f = &p->frames[p->frame_tab[j] - 1];
		if (f->line == line && f->synthetic == synthetic && strcmp(f->name, name) == 0 &&
		    strcmp(f->file, file) == 0)
			return (long)p->frame_tab[j] - 1;
		j = (j + 1) & (p->cap_frame_tab - 1);
	}
	if (pl_grow((void **)&p->frames, &p->capframes, p->nframes + 1, sizeof *p->frames, 256) < 0)
		goto oom;
	struct pl_prof_frame *f = &p->frames[p->nframes];
	f->name = strdup(name);
	f->file = strdup(file);
	f->line = line;
	f->func_line = func_line;
	f->synthetic = synthetic;
	if (!f->name || !f->file) {
		free(f->name);
		free(f->file);
		goto oom;
	}
	p->frame_tab[j] = (uint32_t)++p->nframes;
	return (long)p->nframes - 1;
oom:
	p->oom = 1;
	return -1;
}

static uint64_t ids_hash(const uint32_t *ids, size_t depth)
{
	uint64_t h = PL_FNV_INIT;
	for (size_t i = 0; i < depth; i++)
		h = (h ^ ids[i]) * 0x100000001b3ULL;
	return h ^ depth;
}

int pl_prof_add(struct pl_prof *p, const uint32_t *ids, size_t depth, uint64_t count)
{
	if (grow_table(&p->stack_tab, &p->cap_stack_tab, p->nstacks, stack_hash_at, p) < 0)
		goto oom;
	uint64_t h = ids_hash(ids, depth);
	size_t j = h & (p->cap_stack_tab - 1);
	while (p->stack_tab[j]) {
		struct pl_prof_stack *s = &p->stacks[p->stack_tab[j] - 1];
		if (s->hash == h && s->depth == depth &&
		    memcmp(p->ids + s->off, ids, depth * sizeof *ids) == 0) {
			s->count += count;
			p->samples += count;
			return 0;
		}
		j = (j + 1) & (p->cap_stack_tab - 1);
	}
	if (pl_grow((void **)&p->stacks, &p->capstacks, p->nstacks + 1, sizeof *p->stacks, 256) <
		0 ||
	    pl_grow((void **)&p->ids, &p->capids, p->nids + depth, sizeof *p->ids, 4096) < 0)
		goto oom;
	memcpy(p->ids + p->nids, ids, depth * sizeof *ids);
	p->stacks[p->nstacks] = (struct pl_prof_stack){p->nids, depth, count, h};
	p->nids += depth;
	p->stack_tab[j] = (uint32_t)++p->nstacks;
	p->samples += count;
	return 0;
oom:
	p->oom = 1;
	return -1;
}

void pl_prof_release(struct pl_prof *p)
{
	for (size_t i = 0; i < p->nframes; i++) {
		free(p->frames[i].name);
		free(p->frames[i].file);
	}
	free(p->frames);
	free(p->frame_tab);
	free(p->stacks);
	free(p->stack_tab);
	free(p->ids);
	memset(p, 0, sizeof *p);
}

int pl_prof_totals(const struct pl_prof *p, uint64_t **self, uint64_t **total)
{
	return pl_prof_totals_by(p, NULL, p->nframes, self, total);
}

int pl_prof_totals_by(const struct pl_prof *p, const uint32_t *group, size_t ngroups,
		      uint64_t **self, uint64_t **total)
{
	size_t n = ngroups ? ngroups : 1;
	uint64_t *s = calloc(n, sizeof *s), *t = calloc(n, sizeof *t);
	size_t *stamp = calloc(n, sizeof *stamp);
	if (!s || !t || !stamp) {
		free(s);
		free(t);
		free(stamp);
		return -1;
	}
	for (size_t k = 0; k < p->nstacks; k++) {
		const struct pl_prof_stack *st = &p->stacks[k];
		const uint32_t *ids = p->ids + st->off;
		if (st->depth) {
			uint32_t g = ids[st->depth - 1];
			s[group ? group[g] : g] += st->count;
		}
		for (size_t i = 0; i < st->depth; i++) {
			uint32_t g = group ? group[ids[i]] : ids[i];
			if (stamp[g] == k + 1)
				continue; /* recursion: once per stack */
			stamp[g] = k + 1;
			t[g] += st->count;
		}
	}
	free(stamp);
	*self = s;
	*total = t;
	return 0;
}

const char *pl_prof_relative(const char *path, const char *cwd)
{
	size_t n = cwd ? strlen(cwd) : 0;
	if (n > 1 && strncmp(path, cwd, n) == 0 && path[n] == '/')
		return path + n + 1;
	return path;
}

const char *pl_prof_shown_file(const struct pl_prof *p, const char *file)
{
	if (!p || p->full_paths || !file)
		return file;
	const char *rel = pl_prof_relative(file, p->root);
	if (rel != file)
		return rel;
	const char *best = NULL;
	for (const char *k = file; (k = strstr(k, "-packages/")); k++)
		if (k - file >= 4 && (!strncmp(k - 4, "site", 4) || !strncmp(k - 4, "dist", 4)))
			best = k + 10; /* the last one: a venv inside another */
	if (best && *best)
		return best;
	/* the standard library: .../lib/python3.11/os.py */
	for (const char *k = file; (k = strstr(k, "/lib/python")); k++) {
		const char *v = k + 11;
		while (*v && (isdigit((unsigned char)*v) || *v == '.'))
			v++;
		if (v > k + 11 && *v == '/' && v[1])
			best = v + 1;
	}
	return best ? best : file;
}

char *pl_prof_label(const struct pl_prof *p, const struct pl_prof_frame *f)
{
	struct pl_strbuf b = {0};
	if (f->synthetic || !f->file[0]) /* no place: a trace's event, a made-up frame */
		pl_strbuf_puts(&b, f->name);
	else
		pl_strbuf_printf(&b, "%s (%s:%d)", f->name, pl_prof_shown_file(p, f->file), f->line);
	return pl_strbuf_take(&b);
}

/* A label safe inside a folded line: ';' separates frames, newlines end
 * lines. */
static void folded_label(struct pl_strbuf *b, const struct pl_prof *p,
			 const struct pl_prof_frame *f)
{
	char *l = pl_prof_label(p, f);
	if (!l) {
		b->failed = 1;
		return;
	}
	for (char *c = l; *c; c++)
		if (*c == ';' || *c == '\n' || *c == '\r')
			*c = *c == ';' ? ',' : ' ';
	pl_strbuf_puts(b, l);
	free(l);
}

/* The lines are sorted as whole strings would be, without making them:
 * a cursor reads a stack's line byte by byte from its frames' labels. */
struct folded_order {
	const struct pl_prof *p;
	char **lab; /* each frame's folded label */
};

struct folded_cursor {
	const struct pl_prof_stack *st;
	const char *s;
	size_t i;
	int in_tail;
	char tail[32]; /* " COUNT\n", read after the frames */
};

/* The line's next byte, -1 at its end. */
static int cursor_next(const struct folded_order *o, struct folded_cursor *c)
{
	for (;;) {
		if (c->s && *c->s)
			return (unsigned char)*c->s++;
		if (c->in_tail)
			return -1;
		if (c->i >= c->st->depth) {
			snprintf(c->tail, sizeof c->tail, " %llu\n", (unsigned long long)c->st->count);
			c->s = c->tail;
			c->in_tail = 1;
			continue;
		}
		int sep = c->s != NULL;
		c->s = o->lab[o->p->ids[c->st->off + c->i++]];
		if (sep)
			return ';';
	}
}

static int cmp_folded(const void *a, const void *b, void *arg)
{
	const struct folded_order *o = arg;
	struct folded_cursor x = {.st = &o->p->stacks[*(const size_t *)a]};
	struct folded_cursor y = {.st = &o->p->stacks[*(const size_t *)b]};
	/* the same frames make the same text: skip them whole (a million
	 * stacks sharing 20-frame prefixes took minutes byte by byte) */
	size_t i = 0;
	while (i < x.st->depth && i < y.st->depth &&
	       o->p->ids[x.st->off + i] == o->p->ids[y.st->off + i])
		i++;
	if (i) { /* both go on after the same ';' */
		x.i = y.i = i;
		x.s = y.s = "";
	}
	for (;;) {
		int cx = cursor_next(o, &x), cy = cursor_next(o, &y);
		if (cx != cy)
			return cx - cy;
		if (cx < 0)
			return 0;
	}
}

static int folded_write(const struct pl_prof *p, struct pl_strbuf *s)
{
	struct folded_order o = {p, calloc(p->nframes ? p->nframes : 1, sizeof(char *))};
	size_t *ord = malloc((p->nstacks ? p->nstacks : 1) * sizeof *ord);
	int rc = o.lab && ord ? 0 : -1;
	for (size_t i = 0; i < p->nframes && rc == 0; i++) {
		struct pl_strbuf b = {0};
		folded_label(&b, p, &p->frames[i]);
		if (!(o.lab[i] = pl_strbuf_take(&b)))
			rc = -1;
	}
	if (rc == 0) {
		for (size_t k = 0; k < p->nstacks; k++)
			ord[k] = k;
		qsort_r(ord, p->nstacks, sizeof *ord, cmp_folded, &o);
		for (size_t k = 0; k < p->nstacks && !s->failed; k++) {
			const struct pl_prof_stack *st = &p->stacks[ord[k]];
			for (size_t i = 0; i < st->depth; i++) {
				if (i)
					pl_strbuf_append(s, ";", 1);
				pl_strbuf_puts(s, o.lab[p->ids[st->off + i]]);
			}
			pl_strbuf_printf(s, " %llu\n", (unsigned long long)st->count);
			pl_strbuf_spill(s, PL_STRBUF_CHUNK);
		}
	}
	for (size_t i = 0; o.lab && i < p->nframes; i++)
		free(o.lab[i]);
	free(o.lab);
	free(ord);
	if (rc < 0)
		errno = ENOMEM;
	return rc;
}

int pl_prof_folded_fd(const struct pl_prof *p, int fd)
{
	struct pl_strbuf b = pl_strbuf_to_fd(fd);
	int rc = folded_write(p, &b);
	int wrc = pl_strbuf_finish_fd(&b);
	if (rc < 0)
		errno = ENOMEM;
	return rc < 0 ? rc : wrc;
}

char *pl_prof_folded(const struct pl_prof *p)
{
	struct pl_strbuf out = {0};
	int rc = folded_write(p, &out);
	pl_strbuf_puts(&out, "");
	char *text = pl_strbuf_take(&out);
	if (rc < 0) {
		free(text);
		return NULL;
	}
	return text;
}

/* speedscope's "sampled" file, compact: the frames, then each distinct
 * stack once with its count as weight */
static int speedscope_write(const struct pl_prof *p, const char *name, const char *exporter,
			    struct pl_strbuf *b)
{
	pl_strbuf_puts(b, "{\"$schema\":\"https://www.speedscope.app/file-format-schema.json\","
			  "\"shared\":{\"frames\":[");
	for (size_t i = 0; i < p->nframes; i++) {
		const struct pl_prof_frame *f = &p->frames[i];
		pl_strbuf_puts(b, i ? ",\n{\"name\":" : "\n{\"name\":");
		pl_strbuf_json(b, f->name);
		if (!f->synthetic && f->file[0]) { /* as pl_prof_label: no place, no file */
			pl_strbuf_puts(b, ",\"file\":");
			pl_strbuf_json(b, pl_prof_shown_file(p, f->file));
			pl_strbuf_printf(b, ",\"line\":%d", f->line);
		}
		pl_strbuf_puts(b, "}");
		pl_strbuf_spill(b, PL_STRBUF_CHUNK);
	}
	pl_strbuf_puts(b, "]},\"profiles\":[{\"type\":\"sampled\",\"name\":");
	pl_strbuf_json(b, name);
	pl_strbuf_printf(b, ",\"unit\":\"none\",\"startValue\":0,\"endValue\":%llu,\"samples\":[",
			 (unsigned long long)p->samples);
	for (size_t k = 0; k < p->nstacks; k++) {
		const struct pl_prof_stack *st = &p->stacks[k];
		pl_strbuf_puts(b, k ? ",\n[" : "\n[");
		for (size_t i = 0; i < st->depth; i++)
			pl_strbuf_printf(b, i ? ",%u" : "%u", p->ids[st->off + i]);
		pl_strbuf_puts(b, "]");
		pl_strbuf_spill(b, PL_STRBUF_CHUNK);
	}
	pl_strbuf_puts(b, "],\n\"weights\":[");
	for (size_t k = 0; k < p->nstacks; k++) {
		pl_strbuf_printf(b, k ? ",%llu" : "%llu", (unsigned long long)p->stacks[k].count);
		if (k % 4096 == 4095)
			pl_strbuf_spill(b, PL_STRBUF_CHUNK);
	}
	pl_strbuf_puts(b, "]}],\"name\":");
	pl_strbuf_json(b, name);
	pl_strbuf_puts(b, ",\"activeProfileIndex\":0,\"exporter\":");
	pl_strbuf_json(b, exporter);
	pl_strbuf_puts(b, "}\n");
	return b->failed ? -1 : 0;
}

char *pl_prof_speedscope(const struct pl_prof *p, const char *name, const char *exporter)
{
	struct pl_strbuf b = {0};
	speedscope_write(p, name, exporter, &b);
	return pl_strbuf_take(&b);
}

struct out_ctx {
	const struct pl_prof *p;
	const struct pl_prof_out *o;
};

static int out_to(int fd, void *ctx)
{
	const struct out_ctx *c = ctx;
	if (c->o->kind == PL_OUT_FOLDED)
		return pl_prof_folded_fd(c->p, fd);
	struct pl_strbuf b = pl_strbuf_to_fd(fd);
	int rc = c->o->kind == PL_OUT_SVG
		     ? pl_prof_svg_to(c->p, c->o->title, c->o->subtitle, c->o->min_px, &b)
		     : speedscope_write(c->p, c->o->title, c->o->subtitle, &b);
	int wrc = pl_strbuf_finish_fd(&b);
	if (rc < 0 && wrc == 0) {
		errno = ENOMEM; /* the SVG's tree or a label, not the buffer */
		return -1;
	}
	return wrc;
}

int pl_prof_write(const struct pl_prof *p, const struct pl_prof_out *o, const char *path,
		  struct pl_error *err)
{
	struct out_ctx c = {p, o};
	return pl_fsio_write_atomic_with(path, out_to, &c, err);
}

int pl_prof_write_folded(const struct pl_prof *p, const char *path, struct pl_error *err)
{
	return pl_prof_write(p, &(struct pl_prof_out){.kind = PL_OUT_FOLDED}, path, err);
}

struct rank {
	uint32_t g;
	uint64_t self;
};

static int cmp_rank(const void *a, const void *b)
{
	const struct rank *x = a, *y = b;
	return x->self < y->self ? 1 : x->self > y->self ? -1 : (x->g > y->g) - (x->g < y->g);
}


int pl_prof_findings(const struct pl_prof *p, double min_share, size_t max, double rate,
		     const char *cwd, struct pl_findings *out)
{
	/* group frames into functions: a scratch profile interns them */
	struct pl_prof fn = {0};
	uint32_t *group = calloc(p->nframes ? p->nframes : 1, sizeof *group);
	uint64_t *self = NULL, *total = NULL;
	struct rank *r = NULL;
	int rc = -1;
	if (!group)
		goto done;
	for (size_t i = 0; i < p->nframes; i++) {
		const struct pl_prof_frame *f = &p->frames[i];
		long g =
		    pl_prof_frame(&fn, f->name, f->file, f->func_line, f->func_line, f->synthetic);
		if (g < 0)
			goto done;
		group[i] = (uint32_t)g;
	}
	if (pl_prof_totals_by(p, group, fn.nframes, &self, &total) < 0)
		goto done;
	r = calloc(fn.nframes ? fn.nframes : 1, sizeof *r);
	if (!r)
		goto done;
	size_t nr = 0;
	for (size_t g = 0; g < fn.nframes; g++)
		if (!fn.frames[g].synthetic && p->samples &&
		    (double)self[g] / (double)p->samples >= min_share)
			r[nr++] = (struct rank){(uint32_t)g, self[g]};
	qsort(r, nr, sizeof *r, cmp_rank);
	if (nr > max)
		nr = max;
	out->v = calloc(nr ? nr : 1, sizeof *out->v);
	if (!out->v)
		goto done;
	for (size_t k = 0; k < nr; k++) {
		const struct pl_prof_frame *f = &fn.frames[r[k].g];
		struct pl_finding *x = &out->v[out->n++];
		double share = (double)self[r[k].g] / (double)p->samples;
		double tshare = (double)total[r[k].g] / (double)p->samples;
		const char *path = pl_prof_relative(f->file, cwd);
		struct pl_strbuf b = {0};
		pl_strbuf_printf(&b, "'%s' runs in %.1f%% of samples as the innermost frame",
				 f->name, 100 * share);
		x->signal = pl_strbuf_take(&b);
		pl_strbuf_printf(&b, "self %.1f%%, total %.1f%% of %llu samples at %.0f Hz",
				 100 * share, 100 * tshare, (unsigned long long)p->samples, rate);
		x->evidence_text = pl_strbuf_take(&b);
		pl_strbuf_printf(&b,
				 "start with '%s' (%s:%d): it holds %.1f%% of the time; "
				 "profile --lines shows which line",
				 f->name, path, f->func_line, 100 * share);
		x->suggested_action = pl_strbuf_take(&b);
		x->leaf = strdup("profile.hot-function");
		x->path = strdup(path);
		x->function = strdup(f->name);
		x->metric_name = strdup("cpu_share");
		x->metric_unit = strdup("fraction");
		if (!x->signal || !x->evidence_text || !x->suggested_action || !x->leaf ||
		    !x->path || !x->function || !x->metric_name || !x->metric_unit)
			goto done;
		x->id = malloc(16);
		if (!x->id)
			goto done;
		pl_finding_id(x->leaf, x->path, x->function, "hot-function", x->id);
		x->severity = share >= 0.5   ? PL_SEV_HIGH
			      : share >= 0.2 ? PL_SEV_MEDIUM
					     : PL_SEV_LOW;
		x->status = PL_FST_MEASURED;
		x->line = f->func_line;
		x->metric_value = share;
		x->has_metric_value = 1;
		x->evidence_numbers = json_pack(
		    "{s:f, s:f, s:I, s:f}", "self_share", share, "total_share", tshare, "samples",
		    (json_int_t)self[r[k].g], "ratio", share < 0.99 ? 1.0 / (1.0 - share) : 100.0);
		x->ratio = share < 0.99 ? 1.0 / (1.0 - share) : 100.0;
		x->has_ratio = 1;
		double n = (double)self[r[k].g];
		x->confidence = n / (n + 30.0);
		x->level = 1;
	}
	rc = 0;
done:
	free(group);
	free(self);
	free(total);
	free(r);
	pl_prof_release(&fn);
	return rc;
}

/* One folded frame back into name, file and line: "name (file:line)" as
 * perfloop and py-spy write it; anything else (perf's "name", a thread
 * frame) is a frame of its own name alone. */
static long folded_frame(struct pl_prof *p, char *s)
{
	size_t n = strlen(s);
	char *open = n > 4 && s[n - 1] == ')' ? strrchr(s, '(') : NULL;
	char *colon = open ? strrchr(open, ':') : NULL;
	if (open && open > s && open[-1] == ' ' && colon && colon[1] >= '0' && colon[1] <= '9') {
		char *end;
		long line = strtol(colon + 1, &end, 10);
		if (end == s + n - 1 && line >= 0 && line < INT32_MAX) {
			open[-1] = '\0';
			*colon = '\0';
			return pl_prof_frame(p, s, open + 1, (int)line, (int)line, 0);
		}
	}
	return pl_prof_frame(p, s, "", 0, 0, 1);
}

int pl_prof_merge(struct pl_prof *dst, const struct pl_prof *src, const char *root)
{
	uint32_t *map = malloc((src->nframes + 1) * sizeof *map);
	size_t maxdepth = 0;
	for (size_t k = 0; k < src->nstacks; k++)
		if (src->stacks[k].depth > maxdepth)
			maxdepth = src->stacks[k].depth;
	uint32_t *ids = malloc((maxdepth + 1) * sizeof *ids);
	int rc = map && ids ? 0 : -1;
	for (size_t i = 0; rc == 0 && i < src->nframes; i++) {
		const struct pl_prof_frame *f = &src->frames[i];
		long id = pl_prof_frame(dst, f->name, f->file, f->line, f->func_line, f->synthetic);
		if (id < 0)
			rc = -1;
		else
			map[i] = (uint32_t)id;
	}
	size_t lead = 0;
	if (rc == 0 && root) {
		long id = pl_prof_frame(dst, root, "", 0, 0, 1);
		if (id < 0)
			rc = -1;
		else
			ids[lead++] = (uint32_t)id;
	}
	for (size_t k = 0; rc == 0 && k < src->nstacks; k++) {
		const struct pl_prof_stack *st = &src->stacks[k];
		for (size_t i = 0; i < st->depth; i++)
			ids[lead + i] = map[src->ids[st->off + i]];
		rc = pl_prof_add(dst, ids, lead + st->depth, st->count);
	}
	free(map);
	free(ids);
	if (rc < 0)
		dst->oom = 1;
	return rc;
}

int pl_prof_read_folded(const char *path, struct pl_prof *p, struct pl_error *err)
{
	FILE *f = fopen(path, "re");
	if (!f)
		return pl_error_set(err, PL_EINPUT, "%s: cannot read: %s", path, strerror(errno));
	char *line = NULL;
	size_t cap = 0, lineno = 0, maxdepth = 4096;
	uint32_t *ids = malloc(maxdepth * sizeof *ids);
	int rc = ids ? PL_OK : PL_ENOMEM;
	ssize_t len;
	while (rc == PL_OK && (len = getline(&line, &cap, f)) >= 0) {
		lineno++;
		while (len > 0 && (line[len - 1] == '\n' || line[len - 1] == '\r'))
			line[--len] = '\0';
		if (len == 0)
			continue;
		char *sp = strrchr(line, ' ');
		char *end = NULL;
		unsigned long long count = sp ? strtoull(sp + 1, &end, 10) : 0;
		if (!sp || sp == line || !end || *end || end == sp + 1 || sp[1] == '-') {
			rc = pl_error_set(err, PL_EINPUT,
					  "%s:%zu: count: expected 'frame;frame;... COUNT' (collapsed "
					  "stacks)",
					  path, lineno);
			break;
		}
		if (count > PL_PROF_MAX_COUNT || p->samples > PL_PROF_MAX_COUNT - count) {
			/* the totals are sums of counts: past this they would wrap */
			rc = pl_error_set(err, PL_EINPUT,
					  "%s:%zu: count: %llu makes more than 10^15 samples in all", path,
					  lineno, count);
			break;
		}
		*sp = '\0';
		size_t depth = 0;
		char *save = NULL;
		for (char *fr = strtok_r(line, ";", &save); fr && depth < maxdepth;
		     fr = strtok_r(NULL, ";", &save)) {
			long id = folded_frame(p, fr);
			if (id < 0) {
				rc = PL_ENOMEM;
				break;
			}
			ids[depth++] = (uint32_t)id;
		}
		if (rc == PL_OK && depth && count && pl_prof_add(p, ids, depth, count) < 0)
			rc = PL_ENOMEM;
	}
	free(line);
	free(ids);
	fclose(f);
	return rc;
}
