/*
 * The flame graph SVG, written by perfloop (profdata.h). Stacks merge into
 * a tree, root at the bottom; each frame is one <g class="f"> holding a
 * <title> (label, samples, share), a <rect> whose width is proportional to
 * its samples and a <text>. data-x/data-w/data-d carry the frame's first
 * sample, its samples and its depth so the embedded script can zoom (click),
 * search (Ctrl-F or the Search button; matched share shown) and reset
 * (Escape). Colours are a hash of the function name, so a function keeps
 * its colour across graphs.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "grow.h"
#include "hash.h"
#include "profdata.h"
#include "strbuf.h"

struct node {
	uint32_t frame;
	uint64_t count;
	long child, next; /* indices, -1 none */
};

struct tree {
	struct node *v;
	size_t n, cap;
	size_t maxdepth;
};

static long new_node(struct tree *t, uint32_t frame)
{
	if (pl_grow((void **)&t->v, &t->cap, t->n + 1, sizeof *t->v, 1024) < 0)
		return -1;
	t->v[t->n] = (struct node){frame, 0, -1, -1};
	return (long)t->n++;
}

/* (parent, frame) -> child, while the tree is built: a node's children
 * are a list (emit sorts them), and walking the list for every frame of
 * every stack was quadratic where a node has thousands of children (a
 * merged profile of a million stacks spent a quarter of its time there). */
struct edges {
	uint32_t *slot; /* node index + 1; 0 empty */
	size_t cap;
};

static size_t edge_hash(long parent, uint32_t frame, size_t cap)
{
	uint64_t h = ((uint64_t)parent << 32 ^ frame) * 0x9E3779B97F4A7C15ULL;
	return (size_t)(h >> 32) & (cap - 1); /* the high half mixes both */
}

static int edges_put(struct edges *e, const struct tree *t, long node, long parent);

static int edges_grow(struct edges *e, const struct tree *t, const long *parent_of)
{
	size_t cap = e->cap ? 2 * e->cap : 4096;
	uint32_t *old = e->slot;
	size_t oldcap = e->cap;
	e->slot = calloc(cap, sizeof *e->slot);
	if (!e->slot) {
		e->slot = old;
		return -1;
	}
	e->cap = cap;
	for (size_t j = 0; j < oldcap; j++)
		if (old[j])
			edges_put(e, t, (long)old[j] - 1, parent_of[old[j] - 1]);
	free(old);
	return 0;
}

static int edges_put(struct edges *e, const struct tree *t, long node, long parent)
{
	size_t j = edge_hash(parent, t->v[node].frame, e->cap);
	while (e->slot[j])
		j = (j + 1) & (e->cap - 1);
	e->slot[j] = (uint32_t)node + 1;
	return 0;
}

static long edges_get(const struct edges *e, const struct tree *t, const long *parent_of,
		      long parent, uint32_t frame)
{
	size_t j = edge_hash(parent, frame, e->cap);
	while (e->slot[j]) {
		long c = (long)e->slot[j] - 1;
		if (t->v[c].frame == frame && parent_of[c] == parent)
			return c;
		j = (j + 1) & (e->cap - 1);
	}
	return -1;
}

static int build(struct tree *t, const struct pl_prof *p)
{
	if (new_node(t, UINT32_MAX) < 0)
		return -1;
	struct edges e = {0};
	long *parent_of = NULL;
	size_t pcap = 0;
	if (pl_grow((void **)&parent_of, &pcap, 1, sizeof *parent_of, 4096) < 0)
		return -1;
	parent_of[0] = -1;
	int rc = edges_grow(&e, t, parent_of);
	for (size_t k = 0; rc == 0 && k < p->nstacks; k++) {
		const struct pl_prof_stack *st = &p->stacks[k];
		long cur = 0;
		t->v[0].count += st->count;
		for (size_t i = 0; i < st->depth; i++) {
			uint32_t f = p->ids[st->off + i];
			long c = edges_get(&e, t, parent_of, cur, f);
			if (c < 0) {
				if ((t->n + 1) * 2 > e.cap && edges_grow(&e, t, parent_of) < 0) {
					rc = -1;
					break;
				}
				c = new_node(t, f);
				if (c < 0 || pl_grow((void **)&parent_of, &pcap, (size_t)c + 1,
						     sizeof *parent_of, 4096) < 0) {
					rc = -1;
					break;
				}
				parent_of[c] = cur;
				edges_put(&e, t, c, cur);
				t->v[c].next = t->v[cur].child;
				t->v[cur].child = c;
			}
			t->v[c].count += st->count;
			cur = c;
		}
		if (st->depth > t->maxdepth)
			t->maxdepth = st->depth;
	}
	free(e.slot);
	free(parent_of);
	return rc;
}

struct sortctx {
	const struct pl_prof *p;
	const struct tree *t;
};
static const struct sortctx *g_sort; /* qsort has no context argument */

static int cmp_child(const void *a, const void *b)
{
	const struct node *x = &g_sort->t->v[*(const long *)a],
			  *y = &g_sort->t->v[*(const long *)b];
	const struct pl_prof_frame *fx = &g_sort->p->frames[x->frame],
				   *fy = &g_sort->p->frames[y->frame];
	int c = strcmp(fx->name, fy->name);
	if (!c)
		c = strcmp(fx->file, fy->file);
	return c ? c : fx->line - fy->line;
}

#define W 1200.0
#define FH 16
#define TOP 48
#define PAD 10.0

static void colour(const struct pl_prof_frame *f, char out[32])
{
	if (f == NULL || f->synthetic) {
		strcpy(out, "rgb(190,190,200)");
		return;
	}
	uint64_t h = pl_fnv1a(PL_FNV_INIT, f->name);
	unsigned r = 205 + (unsigned)(h % 50), g = (unsigned)((h >> 8) % 200) + 30,
		 bl = (unsigned)((h >> 16) % 55);
	snprintf(out, 32, "rgb(%u,%u,%u)", r, g, bl);
}

/* Emit node i at sample offset x, depth d, then its children in order. */
static int emit(struct pl_strbuf *b, const struct pl_prof *p, struct tree *t, long i, uint64_t x,
		size_t d, double height, uint64_t minw)
{
	const struct node *n = &t->v[i];
	if (b->failed)
		return -1;
	if (n->count < minw)
		return 0;
	const struct pl_prof_frame *f = n->frame == UINT32_MAX ? NULL : &p->frames[n->frame];
	double scale = (W - 2 * PAD) / (double)t->v[0].count;
	double rx = PAD + (double)x * scale, rw = (double)n->count * scale;
	double ry = height - (double)(d + 1) * FH - 30;
	char col[32];
	colour(f, col);
	char *label = f ? pl_prof_label(p, f) : NULL;
	const char *shown = f ? label : "all";
	if (f && !label)
		return -1;
	pl_strbuf_printf(b, "<g class=\"f\" data-x=\"%llu\" data-w=\"%llu\" data-d=\"%zu\"><title>",
			 (unsigned long long)x, (unsigned long long)n->count, d);
	pl_strbuf_xml(b, shown);
	pl_strbuf_printf(b, " (%llu %s, %.2f%%)</title>", (unsigned long long)n->count,
			 p->unit ? p->unit : "samples",
			 100.0 * (double)n->count / (double)t->v[0].count);
	pl_strbuf_printf(b,
			 "<rect x=\"%.2f\" y=\"%.1f\" width=\"%.2f\" height=\"%d\" fill=\"%s\" "
			 "rx=\"2\"/><text x=\"%.2f\" y=\"%.1f\">",
			 rx, ry, rw, FH - 1, col, rx + 3, ry + 11.5);
	/* the label cut to the box, as the script does (and flamegraph.pl):
	 * a viewer without JavaScript (rsvg-convert, an image preview) shows
	 * no overlapping text; the script takes the whole name from <title> */
	double fitd = (rw - 6) / 7; /* a box can be wider than a long (the fuzzer's counts) */
	long fit = fitd > 1e6 ? 1000000 : (long)fitd;
	size_t len = strlen(shown);
	if (fit < 3) {
		len = 0;
	} else if ((long)len > fit) {
		len = (size_t)(fit - 2);
		while (len > 0 && ((unsigned char)shown[len] & 0xC0) == 0x80)
			len--; /* not inside a UTF-8 character */
	}
	char *cut = strndup(shown, len);
	if (!cut) {
		free(label);
		return -1;
	}
	pl_strbuf_xml(b, cut);
	if (len < strlen(shown) && len > 0)
		pl_strbuf_puts(b, "..");
	free(cut);
	pl_strbuf_puts(b, "</text></g>\n");
	free(label);
	pl_strbuf_spill(b, PL_STRBUF_CHUNK);

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
	struct sortctx ctx = {p, t};
	g_sort = &ctx;
	qsort(kids, nc, sizeof *kids, cmp_child);
	int rc = 0;
	uint64_t cx = x;
	for (size_t k = 0; k < nc && rc == 0; k++) {
		rc = emit(b, p, t, kids[k], cx, d + 1, height, minw);
		cx += t->v[kids[k]].count;
	}
	free(kids);
	return rc;
}

const char pl_prof_svg_script[] =
    "<script type=\"text/ecmascript\"><![CDATA[\n"
    "var W=1200,PAD=10,frames=[],zoomed=null,matchEl,total=0;\n"
    "function init(){frames=Array.prototype.slice.call(document.querySelectorAll('g.f'));\n"
    " matchEl=document.getElementById('matched');total=+frames[0].getAttribute('data-w');\n"
    " frames.forEach(function(g){g.onclick=function(){zoom(g)};\n"
    "  g.label=g.getAttribute('data-n')||g.querySelector('title').textContent"
    ".replace(/ \\([0-9]+ [A-Za-z]+, [0-9.]+%\\)$/,'');\n"
    "  fit(g)});\n"
    " document.getElementById('search').onclick=search;\n"
    " document.getElementById('reset').onclick=function(){zoom(frames[0])};\n"
    " window.addEventListener('keydown',function(e){if(e.key==='Escape')zoom(frames[0]);\n"
    "  if((e.ctrlKey||e.metaKey)&&e.key==='f'){e.preventDefault();search()}})}\n"
    "function num(g,a){return +g.getAttribute('data-'+a)}\n"
    "function fit(g){var r=g.querySelector('rect'),t=g.querySelector('text');\n"
    " var w=+r.getAttribute('width'),n=Math.floor((w-6)/7);\n"
    " t.setAttribute('x',+r.getAttribute('x')+3);\n"
    " t.textContent=n<3?'':(g.label.length<=n?g.label:g.label.slice(0,n-2)+'..')}\n"
    "function zoom(z){var zx=num(z,'x'),zw=num(z,'w'),zd=num(z,'d'),s=(W-2*PAD)/zw;\n"
    " frames.forEach(function(g){var "
    "x=num(g,'x'),w=num(g,'w'),d=num(g,'d'),r=g.querySelector('rect');\n"
    "  var inside=d>=zd&&x>=zx&&x+w<=zx+zw,above=d<zd&&x<=zx&&x+w>=zx+zw;\n"
    "  g.style.display=inside||above?'':'none';g.style.opacity=above?0.5:1;\n"
    "  if(inside){r.setAttribute('x',PAD+(x-zx)*s);r.setAttribute('width',w*s)}\n"
    "  else if(above){r.setAttribute('x',PAD);r.setAttribute('width',W-2*PAD)}\n"
    "  fit(g)})}\n"
    "function search(){var q=prompt('Search (regular expression)','');if(q===null)return;\n"
    " var re;try{re=new RegExp(q)}catch(e){alert(e);return}var iv=[];\n"
    " frames.forEach(function(g){var r=g.querySelector('rect');\n"
    "  if(!r.orig)r.orig=r.getAttribute('fill');\n"
    "  if(q!==''&&re.test(g.label)&&g!==frames[0]){r.setAttribute('fill','rgb(230,0,230)');\n"
    "   iv.push([num(g,'x'),num(g,'x')+num(g,'w')])}else r.setAttribute('fill',r.orig)});\n"
    " iv.sort(function(a,b){return a[0]-b[0]});var m=0,end=-1;\n"
    " iv.forEach(function(v){if(v[0]>=end){m+=v[1]-v[0];end=v[1]}else "
    "if(v[1]>end){m+=v[1]-end;end=v[1]}});\n"
    " matchEl.textContent=q===''?'':'Matched: '+(100*m/total).toFixed(1)+'%'}\n"
    "]]></script>\n";

/* the graph's title and subtitle, centred at its top */
static void titles(struct pl_strbuf *b, const char *title, const char *subtitle)
{
	pl_strbuf_puts(b, "<text x=\"600\" y=\"20\" text-anchor=\"middle\" "
			  "style=\"font-size:16px\">");
	pl_strbuf_xml(b, title);
	pl_strbuf_puts(b, "</text>\n<text x=\"600\" y=\"36\" text-anchor=\"middle\">");
	pl_strbuf_xml(b, subtitle);
	pl_strbuf_puts(b, "</text>\n");
}

char *pl_prof_svg(const struct pl_prof *p, const char *title, const char *subtitle)
{
	return pl_prof_svg_min(p, title, subtitle, 0);
}

int pl_prof_svg_to(const struct pl_prof *p, const char *title, const char *subtitle,
		   double min_px, struct pl_strbuf *b)
{
	struct tree t = {0};
	if (build(&t, p) < 0) {
		free(t.v);
		return -1;
	}
	double height = TOP + (double)(t.maxdepth + 1) * FH + 40;
	pl_strbuf_printf(b,
			 "<?xml version=\"1.0\" standalone=\"no\"?>\n"
			 "<svg version=\"1.1\" xmlns=\"http://www.w3.org/2000/svg\" width=\"%d\" "
			 "height=\"%.0f\" viewBox=\"0 0 %d %.0f\" onload=\"init()\">\n",
			 (int)W, height, (int)W, height);
	pl_strbuf_puts(b, "<style>text{font-family:monospace;font-size:12px;fill:#000}"
			  "g.f:hover rect{stroke:#000;stroke-width:0.5}g.f{cursor:pointer}"
			  ".ui{cursor:pointer;fill:#336}</style>\n");
	pl_strbuf_puts(b, pl_prof_svg_script);
	pl_strbuf_printf(b, "<rect x=\"0\" y=\"0\" width=\"%d\" height=\"%.0f\" fill=\"#f8f8f0\"/>\n",
			 (int)W, height);
	titles(b, title, subtitle);
	pl_strbuf_puts(b, "<text id=\"reset\" class=\"ui\" x=\"10\" y=\"20\">Reset "
			  "Zoom</text>\n<text id=\"search\" class=\"ui\" x=\"1100\" "
			  "y=\"20\">Search</text>\n");
	pl_strbuf_printf(b, "<text id=\"matched\" x=\"1100\" y=\"%.0f\"></text>\n", height - 10);
	uint64_t minw = (uint64_t)((double)t.v[0].count * min_px / (W - 2 * PAD));
	int rc = t.v[0].count ? emit(b, p, &t, 0, 0, 0, height, minw) : 0;
	pl_strbuf_puts(b, "</svg>\n");
	free(t.v);
	return rc < 0 || b->failed ? -1 : 0;
}

char *pl_prof_svg_min(const struct pl_prof *p, const char *title, const char *subtitle,
		      double min_px)
{
	struct pl_strbuf b = {0};
	int rc = pl_prof_svg_to(p, title, subtitle, min_px, &b);
	char *out = pl_strbuf_take(&b);
	if (rc < 0) {
		free(out);
		return NULL;
	}
	return out;
}

/* ---- in an HTML page ---- */

const char pl_html_flame_css[] =
    ".flamebox{margin:8px 0}.flamebar{font:13px sans-serif;margin:4px 0}"
    ".flamebar input{width:22em}.flamebar .info{margin-left:1em;color:#333}"
    "svg.flame{width:100%;height:auto;background:#f8f8f0;display:block}"
    "svg.flame text{font-family:monospace;font-size:12px;fill:#000}"
    "svg.flame g.f{cursor:pointer}svg.flame g.f:hover rect{stroke:#000;stroke-width:0.5}\n";

/* every svg.flame on the page: zoom (click), reset (button, Escape),
 * search (the box: a regular expression; matches turn magenta and their
 * share is shown), the hovered frame's name and share in the bar */
const char pl_html_flame_js[] =
    "(function(){var W=1200,PAD=10;\n"
    "function num(g,a){return +g.getAttribute('data-'+a)}\n"
    "function setup(box){var svg=box.querySelector('svg.flame');if(!svg)return;\n"
    " var fr=Array.prototype.slice.call(svg.querySelectorAll('g.f'));if(!fr.length)return;\n"
    " var total=num(fr[0],'w'),info=box.querySelector('.info'),mt=box.querySelector('.matched'),"
    "q=box.querySelector('input');\n"
    " fr.forEach(function(g){g.label=g.getAttribute('data-n')});\n"
    " svg.addEventListener('click',function(e){var g=e.target.closest('g.f');if(g)zoom(g)});\n"
    " svg.addEventListener('mouseover',function(e){var g=e.target.closest('g.f');if(g)"
    "info.textContent=svg.classList.contains('diff')?g.querySelector('title').textContent:"
    "g.label+' \\u2014 '+num(g,'w')+' ('+(100*num(g,'w')/total).toFixed(2)+'%)'});\n"
    " function fit(g){var r=g.querySelector('rect'),t=g.querySelector('text');\n"
    "  var w=+r.getAttribute('width'),n=Math.floor((w-6)/7);\n"
    "  t.setAttribute('x',+r.getAttribute('x')+3);\n"
    "  t.textContent=n<3?'':(g.label.length<=n?g.label:g.label.slice(0,n-2)+'..')}\n"
    " function zoom(z){var zx=num(z,'x'),zw=num(z,'w'),zd=num(z,'d'),s=(W-2*PAD)/zw;\n"
    "  fr.forEach(function(g){var x=num(g,'x'),w=num(g,'w'),d=num(g,'d'),"
    "r=g.querySelector('rect');\n"
    "   var inside=d>=zd&&x>=zx&&x+w<=zx+zw,above=d<zd&&x<=zx&&x+w>=zx+zw;\n"
    "   g.style.display=inside||above?'':'none';g.style.opacity=above?0.5:1;\n"
    "   if(inside){r.setAttribute('x',PAD+(x-zx)*s);r.setAttribute('width',w*s)}\n"
    "   else if(above){r.setAttribute('x',PAD);r.setAttribute('width',W-2*PAD)}\n"
    "   fit(g)});svg.setAttribute('data-zoom',z.label)}\n"
    " function search(){var v=q.value,re;try{re=new RegExp(v)}catch(e){mt.textContent="
    "'bad expression';return}\n"
    "  var iv=[];fr.forEach(function(g){var r=g.querySelector('rect');\n"
    "   if(!r.orig)r.orig=r.getAttribute('fill');\n"
    "   if(v!==''&&g!==fr[0]&&re.test(g.label)){r.setAttribute('fill','rgb(230,0,230)');"
    "g.classList.add('match');\n"
    "    iv.push([num(g,'x'),num(g,'x')+num(g,'w')])}else{r.setAttribute('fill',r.orig);"
    "g.classList.remove('match')}});\n"
    "  iv.sort(function(a,b){return a[0]-b[0]});var m=0,end=-1;\n"
    "  iv.forEach(function(v){if(v[0]>=end){m+=v[1]-v[0];end=v[1]}else if(v[1]>end){"
    "m+=v[1]-end;end=v[1]}});\n"
    "  mt.textContent=v===''?'':'matched: '+(100*m/total).toFixed(1)+'%'}\n"
    " q.addEventListener('input',search);\n"
    " box.querySelector('.reset').addEventListener('click',function(){zoom(fr[0])});\n"
    " box.addEventListener('keydown',function(e){if(e.key==='Escape')zoom(fr[0])});\n"
    "}\n"
    "Array.prototype.slice.call(document.querySelectorAll('.flamebox')).forEach(setup);\n"
    "window.addEventListener('keydown',function(e){if(e.key==='Escape')"
    "Array.prototype.slice.call(document.querySelectorAll('.flamebox .reset'))"
    ".forEach(function(b){b.click()})});\n"
    "})();\n";

/* the frame's full label for the script (data-n) */
static int label_attrs(struct pl_strbuf *b, const char *svg)
{
	/* add data-n="label" (from <title>, less its count) to every g.f */
	const char *p = svg;
	for (const char *g; (g = strstr(p, "<g class=\"f\" "));) {
		const char *t = strstr(g, "<title>");
		const char *te = t ? strstr(t, "</title>") : NULL;
		if (!te)
			break;
		/* the title is "label (N unit, S%)": cut at the last " (" */
		const char *cut = te;
		while (cut > t + 7 && !(cut[0] == ' ' && cut[1] == '('))
			cut--;
		if (cut == t + 7)
			cut = te;
		pl_strbuf_append(b, p, (size_t)(g - p));
		pl_strbuf_puts(b, "<g class=\"f\" data-n=\"");
		pl_strbuf_append(b, t + 7, (size_t)(cut - (t + 7))); /* escaped already */
		pl_strbuf_puts(b, "\" ");
		p = g + strlen("<g class=\"f\" ");
	}
	pl_strbuf_puts(b, p);
	return b->failed ? -1 : 0;
}

char *pl_prof_svg_html(const struct pl_prof *p, const char *title, const char *subtitle)
{
	struct tree t = {0};
	if (build(&t, p) < 0) {
		free(t.v);
		return NULL;
	}
	double height = TOP + (double)(t.maxdepth + 1) * FH + 10;
	struct pl_strbuf b = {0};
	pl_strbuf_printf(&b,
			 "<svg class=\"flame\" xmlns=\"http://www.w3.org/2000/svg\" viewBox=\"0 0 "
			 "%d %.0f\" role=\"img\">\n",
			 (int)W, height);
	titles(&b, title, subtitle);
	/* a frame under 0.1 px at full width is not drawn */
	uint64_t minw = (uint64_t)((double)t.v[0].count * 0.1 / (W - 2 * PAD));
	int rc = t.v[0].count ? emit(&b, p, &t, 0, 0, 0, height - 10, minw) : 0;
	pl_strbuf_puts(&b, "</svg>\n");
	free(t.v);
	char *raw = pl_strbuf_take(&b);
	if (rc < 0 || !raw) {
		free(raw);
		return NULL;
	}
	struct pl_strbuf o = {0};
	pl_strbuf_puts(&o, "<div class=\"flamebox\"><div class=\"flamebar\"><button "
			   "class=\"reset\" type=\"button\">Reset zoom</button> <input "
			   "type=\"search\" placeholder=\"Search (regular expression)\"> <span "
			   "class=\"matched\"></span><span class=\"info\"></span></div>\n");
	rc = label_attrs(&o, raw);
	pl_strbuf_puts(&o, "</div>\n");
	free(raw);
	char *out = pl_strbuf_take(&o);
	if (rc < 0) {
		free(out);
		return NULL;
	}
	return out;
}

char *pl_prof_html_page(const struct pl_prof *p, const char *title, const char *subtitle)
{
	char *svg = pl_prof_svg_html(p, title, subtitle);
	if (!svg)
		return NULL;
	struct pl_strbuf b = {0};
	pl_strbuf_puts(&b, "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">"
			   "<meta http-equiv=\"Content-Security-Policy\" content=\"default-src "
			   "'none'; style-src 'unsafe-inline'; script-src 'unsafe-inline'\">"
			   "<title>");
	pl_strbuf_xml(&b, title);
	pl_strbuf_printf(&b, "</title><style>body{font:14px sans-serif;margin:16px}%s</style>"
			     "</head>\n<body>\n",
			 pl_html_flame_css);
	pl_strbuf_puts(&b, svg);
	pl_strbuf_printf(&b, "<script>\n%s</script>\n</body></html>\n", pl_html_flame_js);
	free(svg);
	return pl_strbuf_take(&b);
}
