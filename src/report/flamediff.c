/*
 * See flamediff.h. Both profiles' stacks merge into one tree whose nodes
 * are keyed by (parent, frame), the frames of both interned once in a
 * frame table of the tree's own (name, file, line), so a frame is the same
 * frame in both however each profile numbered it. Each node holds both
 * profiles' samples and own samples. Its width is in after's samples: its
 * after samples plus the widths of the paths under it that only before
 * has, each its before samples times after's total over before's; so a
 * path that vanished is still drawn (dashed) beside what replaced it, and
 * the graph is that much wider than after's total. Colour, as
 * flamegraph.pl's differential palette: the change of the frame's own
 * share (the samples whose stack ends in it), red for more, blue for less,
 * full colour at the largest change drawn, white for under 0.005 points.
 */
#include "flamediff.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fsio.h"
#include "grow.h"
#include "strbuf.h"

#define W 1200.0
#define FH 16
#define TOP 48
#define PAD 10.0
#define SAME 5e-5 /* a change of own share shown as +0.00 points: white */

struct node {
	uint32_t frame; /* in the tree's frame table; UINT32_MAX the root */
	long parent, child, next;
	uint64_t a, as, b, bs; /* after's samples and own samples; before's */
	double w;	       /* the width, in after's samples */
};

struct tree {
	struct pl_prof u; /* the frames of both profiles, interned once */
	struct node *v;
	size_t n, cap, maxdepth;
	uint32_t *slot; /* (parent, frame) -> node index + 1; 0 empty */
	size_t scap;
	double atotal, btotal;
};

static size_t slot_of(long parent, uint32_t frame, size_t cap)
{
	uint64_t h = ((uint64_t)parent << 32 ^ frame) * 0x9E3779B97F4A7C15ULL;
	return (size_t)(h >> 32) & (cap - 1);
}

static int rehash(struct tree *t)
{
	size_t cap = t->scap ? 2 * t->scap : 1024;
	uint32_t *s = calloc(cap, sizeof *s);
	if (!s)
		return -1;
	for (size_t i = 1; i < t->n; i++) { /* the root is no one's child */
		size_t j = slot_of(t->v[i].parent, t->v[i].frame, cap);
		while (s[j])
			j = (j + 1) & (cap - 1);
		s[j] = (uint32_t)i + 1;
	}
	free(t->slot);
	t->slot = s;
	t->scap = cap;
	return 0;
}

/* parent's child of that frame, made if it is new; -1 out of memory */
static long child_of(struct tree *t, long parent, uint32_t frame)
{
	size_t j = slot_of(parent, frame, t->scap);
	for (uint32_t k; (k = t->slot[j]); j = (j + 1) & (t->scap - 1))
		if (t->v[k - 1].parent == parent && t->v[k - 1].frame == frame)
			return (long)k - 1;
	if (t->n >= UINT32_MAX - 1 ||
	    pl_grow((void **)&t->v, &t->cap, t->n + 1, sizeof *t->v, 1024))
		return -1;
	long c = (long)t->n++;
	t->v[c] = (struct node){
	    .frame = frame, .parent = parent, .child = -1, .next = t->v[parent].child};
	t->v[parent].child = c;
	if ((t->n + 1) * 2 > t->scap)
		return rehash(t) < 0 ? -1 : c; /* the new node included */
	t->slot[j] = (uint32_t)c + 1;
	return c;
}

static void count(struct node *n, uint64_t c, int after, int own)
{
	if (after) {
		n->a += c;
		n->as += own ? c : 0;
	} else {
		n->b += c;
		n->bs += own ? c : 0;
	}
}

/* every frame of p's in the tree's table: map[p's id] = the table's */
static uint32_t *intern(struct pl_prof *u, const struct pl_prof *p)
{
	uint32_t *map = malloc((p->nframes + 1) * sizeof *map);
	for (size_t i = 0; map && i < p->nframes; i++) {
		const struct pl_prof_frame *f = &p->frames[i];
		long id = pl_prof_frame(u, f->name, f->file, f->line, f->func_line, f->synthetic);
		if (id < 0) {
			free(map);
			return NULL;
		}
		map[i] = (uint32_t)id;
	}
	return map;
}

static int add(struct tree *t, const struct pl_prof *p, int after)
{
	uint32_t *map = intern(&t->u, p);
	if (!map)
		return -1;
	for (size_t k = 0; k < p->nstacks; k++) {
		const struct pl_prof_stack *st = &p->stacks[k];
		long cur = 0;
		count(&t->v[0], st->count, after, st->depth == 0);
		for (size_t i = 0; i < st->depth; i++) {
			cur = child_of(t, cur, map[p->ids[st->off + i]]);
			if (cur < 0) {
				free(map);
				return -1;
			}
			count(&t->v[cur], st->count, after, i + 1 == st->depth);
		}
		if (st->depth > t->maxdepth)
			t->maxdepth = st->depth;
	}
	free(map);
	return 0;
}

static void tree_release(struct tree *t)
{
	pl_prof_release(&t->u);
	free(t->v);
	free(t->slot);
}

/* Widths: a child's index is above its parent's, so walking the nodes
 * from the last one finishes every child before its parent. */
static void widths(struct tree *t)
{
	double s = t->atotal / t->btotal;
	for (size_t i = 0; i < t->n; i++)
		t->v[i].w = 0; /* what vanished under it, while walking */
	for (size_t i = t->n; i-- > 0;) {
		struct node *n = &t->v[i];
		n->w = n->a ? (double)n->a + n->w : (double)n->b * s;
		if (i)
			t->v[n->parent].w += n->a ? n->w - (double)n->a : n->w;
	}
}

static int tree_build(struct tree *t, const struct pl_flamediff_in *in)
{
	memset(t, 0, sizeof *t);
	if (pl_grow((void **)&t->v, &t->cap, 1, sizeof *t->v, 1024) < 0)
		return PL_ENOMEM;
	t->v[0] = (struct node){.frame = UINT32_MAX, .parent = -1, .child = -1, .next = -1};
	t->n = 1;
	if (rehash(t) < 0 || add(t, in->after, 1) < 0 || add(t, in->before, 0) < 0)
		return PL_ENOMEM;
	t->atotal = (double)t->v[0].a;
	t->btotal = (double)t->v[0].b;
	if (!t->v[0].a || !t->v[0].b)
		return PL_EINPUT;
	widths(t);
	return PL_OK;
}

static double own_change(const struct tree *t, const struct node *n)
{
	return (double)n->as / t->atotal - (double)n->bs / t->btotal;
}

/* red for a larger own share after, blue for smaller, white the same; the
 * deeper, the nearer the largest change drawn */
static void diff_colour(double d, double maxd, char out[32])
{
	if (fabs(d) < SAME || maxd <= 0) {
		strcpy(out, "rgb(255,255,255)");
		return;
	}
	unsigned c = 215 - (unsigned)lround(175 * fmin(fabs(d) / maxd, 1));
	if (d > 0)
		snprintf(out, 32, "rgb(255,%u,%u)", c, c);
	else
		snprintf(out, 32, "rgb(%u,%u,255)", c, c);
}

static int cmp_child(const void *x, const void *y, void *arg)
{
	const struct tree *t = arg;
	const struct pl_prof_frame *fx = &t->u.frames[t->v[*(const long *)x].frame],
				   *fy = &t->u.frames[t->v[*(const long *)y].frame];
	int c = strcmp(fx->name, fy->name);
	if (!c)
		c = strcmp(fx->file, fy->file);
	if (!c)
		c = (fx->line > fy->line) - (fx->line < fy->line);
	return c ? c : fx->synthetic - fy->synthetic;
}

struct emitter {
	struct tree *t;
	struct pl_strbuf *b;
	double scale; /* pixels per sample of after */
	double base;  /* the bottom of the root's row */
	double minw;  /* narrower frames are left out (in after's samples) */
	double maxd;  /* the largest change of own share drawn: full colour */
	const char *unit;
};

/* the frame's numbers, after its label in <title> */
static void details(struct pl_strbuf *b, const struct emitter *e, const struct node *n)
{
	const struct tree *t = e->t;
	pl_strbuf_printf(b, " (after %llu %s, %.2f%%; before %llu, %.2f%%",
			 (unsigned long long)n->a, e->unit, 100 * (double)n->a / t->atotal,
			 (unsigned long long)n->b, 100 * (double)n->b / t->btotal);
	if (n->frame != UINT32_MAX) {
		pl_strbuf_printf(
		    b, "; own share %.2f%% after, %.2f%% before, %+.2f points since before",
		    100 * (double)n->as / t->atotal, 100 * (double)n->bs / t->btotal,
		    100 * own_change(t, n));
		if (!n->b)
			pl_strbuf_puts(b, "; only after");
		else if (!n->a)
			pl_strbuf_puts(b, "; only before");
	}
	pl_strbuf_puts(b, ")");
}

/* the label cut to the box as flamegraph.pl (and the script) does, for a
 * viewer without JavaScript */
static void cut_label(struct pl_strbuf *b, const char *s, double rw)
{
	double fitd = (rw - 6) / 7;
	size_t fit = fitd < 3 ? 0 : fitd > 1e6 ? 1000000 : (size_t)fitd;
	size_t len = strlen(s);
	if (fit < 3)
		return;
	if (len <= fit) {
		pl_strbuf_xml(b, s);
		return;
	}
	len = fit - 2;
	while (len > 0 && ((unsigned char)s[len] & 0xC0) == 0x80)
		len--; /* not inside a UTF-8 character */
	char *cut = strndup(s, len);
	if (!cut) {
		b->failed = 1;
		return;
	}
	pl_strbuf_xml(b, cut);
	pl_strbuf_puts(b, "..");
	free(cut);
}

/* node i at x (in after's samples) and depth d, then its children in the
 * order of their names */
static int emit(struct emitter *e, long i, double x, size_t d)
{
	struct tree *t = e->t;
	const struct node *n = &t->v[i];
	if (e->b->failed)
		return -1;
	if (n->w < e->minw)
		return 0;
	const struct pl_prof_frame *f = n->frame == UINT32_MAX ? NULL : &t->u.frames[n->frame];
	char *label = f ? pl_prof_label(&t->u, f) : strdup("all");
	if (!label)
		return -1;
	double rx = PAD + x * e->scale, rw = n->w * e->scale;
	double ry = e->base - (double)(d + 1) * FH;
	char col[32];
	diff_colour(own_change(t, n), e->maxd, col);
	pl_strbuf_puts(e->b, "<g class=\"f\" data-n=\"");
	pl_strbuf_xml(e->b, label);
	pl_strbuf_printf(e->b, "\" data-x=\"%.3f\" data-w=\"%.3f\" data-d=\"%zu\"><title>", x, n->w,
			 d);
	pl_strbuf_xml(e->b, label);
	details(e->b, e, n);
	pl_strbuf_printf(e->b,
			 "</title><rect x=\"%.2f\" y=\"%.1f\" width=\"%.2f\" height=\"%d\" "
			 "fill=\"%s\" rx=\"2\"%s/><text x=\"%.2f\" y=\"%.1f\">",
			 rx, ry, rw, FH - 1, col,
			 n->a ? " stroke=\"#ccc\" stroke-width=\"0.5\""
			      : " stroke=\"#335\" stroke-width=\"0.8\" stroke-dasharray=\"3,2\"",
			 rx + 3, ry + 11.5);
	cut_label(e->b, label, rw);
	pl_strbuf_puts(e->b, "</text></g>\n");
	free(label);
	pl_strbuf_spill(e->b, PL_STRBUF_CHUNK);

	size_t nc = 0;
	for (long c = n->child; c >= 0; c = t->v[c].next)
		nc++;
	if (!nc)
		return 0;
	long *kids = malloc(nc * sizeof *kids);
	if (!kids)
		return -1;
	nc = 0;
	for (long c = n->child; c >= 0; c = t->v[c].next)
		kids[nc++] = c;
	qsort_r(kids, nc, sizeof *kids, cmp_child, t);
	int rc = 0;
	for (size_t k = 0; k < nc && rc == 0; k++) {
		rc = emit(e, kids[k], x, d + 1);
		x += t->v[kids[k]].w;
	}
	free(kids);
	return rc;
}

/* the emitter of a built tree: scale, and the largest change drawn */
static struct emitter emitter_of(struct tree *t, struct pl_strbuf *b, double base, const char *unit)
{
	struct emitter e = {t, b, (W - 2 * PAD) / t->v[0].w, base, 0, 0, unit ? unit : "samples"};
	e.minw = t->v[0].w * 0.1 / (W - 2 * PAD); /* a tenth of a pixel, as flamegraph.pl */
	for (size_t i = 0; i < t->n; i++)
		if (t->v[i].w >= e.minw) /* a child is never wider than its parent */
			e.maxd = fmax(e.maxd, fabs(own_change(t, &t->v[i])));
	return e;
}

static void titles(struct pl_strbuf *b, const struct pl_flamediff_in *in, const struct tree *t,
		   const char *unit)
{
	pl_strbuf_puts(b, "<text x=\"600\" y=\"20\" text-anchor=\"middle\" "
			  "style=\"font-size:16px\">Differential flame graph: ");
	pl_strbuf_xml(b, in->before_name ? in->before_name : "before");
	pl_strbuf_puts(b, " \u2192 ");
	pl_strbuf_xml(b, in->after_name ? in->after_name : "after");
	pl_strbuf_printf(b,
			 "</text>\n<text x=\"600\" y=\"36\" text-anchor=\"middle\">widths: after's "
			 "%.0f %s (before's %.0f); colours: the change of each frame's own share"
			 "</text>\n",
			 t->atotal, unit ? unit : "samples", t->btotal);
}

/* the key, at the bottom left */
static void legend(struct pl_strbuf *b, const struct emitter *e, double y)
{
	pl_strbuf_printf(b, "<text id=\"legend\" x=\"10\" y=\"%.0f\">", y);
	if (e->maxd < SAME)
		pl_strbuf_puts(b, "no frame's own share moved");
	else
		pl_strbuf_printf(b,
				 "red: own share grew, blue: shrank, white: the same; full colour "
				 "%.2f points",
				 100 * e->maxd);
	pl_strbuf_puts(b, "; dashed: only before, at its share of before</text>\n");
}

int pl_flamediff_svg_to(const struct pl_flamediff_in *in, struct pl_strbuf *b)
{
	struct tree t;
	int rc = tree_build(&t, in);
	if (rc != PL_OK) {
		tree_release(&t);
		return rc;
	}
	double height = TOP + (double)(t.maxdepth + 1) * FH + 50;
	pl_strbuf_printf(b,
			 "<?xml version=\"1.0\" standalone=\"no\"?>\n"
			 "<svg version=\"1.1\" xmlns=\"http://www.w3.org/2000/svg\" width=\"%d\" "
			 "height=\"%.0f\" viewBox=\"0 0 %d %.0f\" onload=\"init()\">\n",
			 (int)W, height, (int)W, height);
	pl_strbuf_puts(b, "<style>text{font-family:monospace;font-size:12px;fill:#000}"
			  "g.f:hover rect{stroke:#000;stroke-width:0.5}g.f{cursor:pointer}"
			  ".ui{cursor:pointer;fill:#336}</style>\n");
	pl_strbuf_puts(b, pl_prof_svg_script);
	pl_strbuf_printf(b,
			 "<rect x=\"0\" y=\"0\" width=\"%d\" height=\"%.0f\" fill=\"#f8f8f0\"/>\n",
			 (int)W, height);
	titles(b, in, &t, in->after->unit);
	pl_strbuf_puts(b, "<text id=\"reset\" class=\"ui\" x=\"10\" y=\"20\">Reset "
			  "Zoom</text>\n<text id=\"search\" class=\"ui\" x=\"1100\" "
			  "y=\"20\">Search</text>\n");
	pl_strbuf_printf(b, "<text id=\"matched\" x=\"1100\" y=\"%.0f\"></text>\n", height - 10);
	struct emitter e = emitter_of(&t, b, height - 40, in->after->unit);
	rc = emit(&e, 0, 0, 0) < 0 ? PL_ENOMEM : PL_OK;
	legend(b, &e, height - 10);
	pl_strbuf_puts(b, "</svg>\n");
	tree_release(&t);
	if (rc == PL_OK && b->failed)
		rc = b->spill && b->err ? PL_ESYS : PL_ENOMEM;
	return rc;
}

static int svg_to_fd(int fd, void *ctx)
{
	struct pl_strbuf b = pl_strbuf_to_fd(fd);
	int rc = pl_flamediff_svg_to(ctx, &b);
	int wrc = pl_strbuf_finish_fd(&b);
	if (rc != PL_OK && wrc == 0) {
		errno = ENOMEM; /* the tree or a label, not the buffer */
		return -1;
	}
	return wrc;
}

int pl_flamediff_write_svg(const struct pl_flamediff_in *in, const char *path, struct pl_error *err)
{
	if (!in->before->samples || !in->after->samples)
		return pl_error_set(err, PL_EINPUT, "'%s': no samples",
				    !in->after->samples ? in->after_name : in->before_name);
	return pl_fsio_write_atomic_with(path, svg_to_fd, (void *)in, err);
}

/* ---- the functions whose own share moved ---- */

static int cmp_mover(const void *x, const void *y, void *arg)
{
	const struct pl_flamediff_mover *p = x, *q = y;
	const uint64_t *tot = arg; /* before's total, after's */
	/* |after/A - before/B| compared exactly: times A*B, in 128 bits */
	__int128 dp = (__int128)p->after * tot[0] - (__int128)p->before * tot[1];
	__int128 dq = (__int128)q->after * tot[0] - (__int128)q->before * tot[1];
	dp = dp < 0 ? -dp : dp;
	dq = dq < 0 ? -dq : dq;
	if (dp != dq)
		return dp < dq ? 1 : -1;
	return strcmp(p->label, q->label);
}

void pl_flamediff_movers_free(struct pl_flamediff_mover *m, size_t n)
{
	for (size_t i = 0; m && i < n; i++)
		free(m[i].label);
	free(m);
}

/* p's own samples added to own (indexed by the table's frames, map from
 * p's); p's total */
static uint64_t own_samples(const struct pl_prof *p, const uint32_t *map, uint64_t *own)
{
	uint64_t total = 0;
	for (size_t k = 0; k < p->nstacks; k++) {
		const struct pl_prof_stack *st = &p->stacks[k];
		total += st->count;
		if (st->depth)
			own[map[p->ids[st->off + st->depth - 1]]] += st->count;
	}
	return total;
}

int pl_flamediff_movers(const struct pl_flamediff_in *in, struct pl_flamediff_mover **out,
			size_t *n)
{
	*out = NULL;
	*n = 0;
	struct pl_prof u = {0};
	uint32_t *bmap = intern(&u, in->before), *amap = intern(&u, in->after);
	uint64_t *bown = calloc(u.nframes + 1, sizeof *bown),
		 *aown = calloc(u.nframes + 1, sizeof *aown);
	struct pl_flamediff_mover *m = NULL;
	int rc = PL_ENOMEM;
	if (!bmap || !amap || !bown || !aown)
		goto done;
	uint64_t tot[2] = {own_samples(in->before, bmap, bown), own_samples(in->after, amap, aown)};
	if (!tot[0] || !tot[1]) {
		rc = PL_EINPUT;
		goto done;
	}
	m = calloc(u.nframes + 1, sizeof *m);
	if (!m)
		goto done;
	size_t k = 0;
	for (size_t i = 0; i < u.nframes; i++) {
		if (!bown[i] && !aown[i])
			continue; /* a caller only: it has no share of its own to move */
		m[k] = (struct pl_flamediff_mover){pl_prof_label(&u, &u.frames[i]), bown[i],
						   aown[i], (double)bown[i] / (double)tot[0],
						   (double)aown[i] / (double)tot[1]};
		if (!m[k++].label) {
			pl_flamediff_movers_free(m, k);
			m = NULL;
			goto done;
		}
	}
	qsort_r(m, k, sizeof *m, cmp_mover, tot);
	*out = m;
	*n = k;
	m = NULL;
	rc = PL_OK;
done:
	free(m);
	free(bmap);
	free(amap);
	free(bown);
	free(aown);
	pl_prof_release(&u);
	return rc;
}

/* a label in a Markdown table cell: | would end the cell */
static void md_cell(struct pl_strbuf *b, const char *s)
{
	for (; *s; s++) {
		if (*s == '|' || *s == '\\' || *s == '`' || *s == '*' || *s == '_' || *s == '<')
			pl_strbuf_puts(b, "\\");
		pl_strbuf_append(b, s, 1);
	}
}

char *pl_flamediff_table(const struct pl_flamediff_in *in, const struct pl_flamediff_mover *m,
			 size_t n, size_t max, int markdown)
{
	struct pl_strbuf b = {0};
	const char *unit = in->after->unit ? in->after->unit : "samples";
	size_t shown = n < max ? n : max;
	pl_strbuf_printf(&b, "%sOwn share of the samples: %s (%llu %s) -> %s (%llu %s)%s\n",
			 markdown ? "**" : "", in->before_name,
			 (unsigned long long)in->before->samples, unit, in->after_name,
			 (unsigned long long)in->after->samples, unit, markdown ? "**\n" : "");
	if (markdown)
		pl_strbuf_puts(&b,
			       "| before | after | change | function |\n|---:|---:|---:|---|\n");
	else
		pl_strbuf_printf(&b, "%8s %8s %8s  %s\n", "before", "after", "change", "function");
	for (size_t i = 0; i < shown; i++) {
		double d = 100 * (m[i].after_share - m[i].before_share);
		char bs[32], as[32], ds[32];
		snprintf(bs, sizeof bs, "%.2f%%", 100 * m[i].before_share);
		snprintf(as, sizeof as, "%.2f%%", 100 * m[i].after_share);
		snprintf(ds, sizeof ds, "%+.2f", fabs(d) < 0.005 ? 0.0 : d); /* never -0.00 */
		if (markdown) {
			pl_strbuf_printf(&b, "| %s | %s | %s | ", bs, as, ds);
			md_cell(&b, m[i].label);
			pl_strbuf_puts(&b, " |\n");
		} else {
			pl_strbuf_printf(&b, "%8s %8s %8s  %s\n", bs, as, ds, m[i].label);
		}
	}
	pl_strbuf_printf(&b,
			 "%s(change: in percentage points; %zu of %zu functions with samples of "
			 "their own, the largest change first)\n",
			 markdown ? "\n" : "", shown, n);
	return pl_strbuf_take(&b);
}

/* ---- in an HTML page ---- */

char *pl_flamediff_html(const struct pl_flamediff_in *in, size_t max)
{
	struct tree t;
	struct pl_flamediff_mover *m = NULL;
	size_t nm = 0;
	if (tree_build(&t, in) != PL_OK || pl_flamediff_movers(in, &m, &nm) != PL_OK) {
		tree_release(&t);
		return NULL;
	}
	double height = TOP + (double)(t.maxdepth + 1) * FH + 30;
	struct pl_strbuf b = {0};
	pl_strbuf_puts(&b, "<div class=\"flamebox\"><div class=\"flamebar\"><button "
			   "class=\"reset\" type=\"button\">Reset zoom</button> <input "
			   "type=\"search\" placeholder=\"Search (regular expression)\"> <span "
			   "class=\"matched\"></span><span class=\"info\"></span></div>\n");
	pl_strbuf_printf(
	    &b,
	    "<svg class=\"flame diff\" xmlns=\"http://www.w3.org/2000/svg\" viewBox=\"0 0 "
	    "%d %.0f\" role=\"img\">\n",
	    (int)W, height);
	titles(&b, in, &t, in->after->unit);
	struct emitter e = emitter_of(&t, &b, height - 30, in->after->unit);
	int rc = emit(&e, 0, 0, 0);
	legend(&b, &e, height - 8);
	pl_strbuf_puts(&b, "</svg>\n</div>\n");
	tree_release(&t);
	pl_strbuf_puts(&b, "<table class=\"top movers\"><tr><th>Own before</th><th>Own "
			   "after</th><th>Change (points)</th><th>Function</th></tr>\n");
	for (size_t i = 0; i < nm && i < max; i++) {
		double d = 100 * (m[i].after_share - m[i].before_share);
		pl_strbuf_printf(
		    &b,
		    "<tr><td class=\"num\">%.2f%%</td><td class=\"num\">%.2f%%</td><td "
		    "class=\"num\">%+.2f</td><td>",
		    100 * m[i].before_share, 100 * m[i].after_share, fabs(d) < 0.005 ? 0.0 : d);
		pl_strbuf_xml(&b, m[i].label);
		pl_strbuf_puts(&b, "</td></tr>\n");
	}
	pl_strbuf_puts(&b, "</table>\n");
	pl_flamediff_movers_free(m, nm);
	char *out = pl_strbuf_take(&b);
	if (rc < 0) {
		free(out);
		return NULL;
	}
	return out;
}
