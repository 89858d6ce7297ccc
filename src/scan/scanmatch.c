/*
 * scan's own query matcher (the why is in scanmatch.h). Each pattern is
 * read into a small tree of steps (struct qn) from the query's source
 * text, at the byte offset tree-sitter gives for it, so pattern k here is
 * pattern k there. One walk of the syntax tree dispatches on each node's
 * symbol to the patterns rooted there; a pattern is matched by
 * backtracking over the node's children (kept in one array per step, the
 * rest of the work as a chain of continuations on the C stack), and
 * every way it matches is recorded. At the end the matches are sorted
 * into the order tree-sitter's cursor would return them and handed out.
 */
#include "scanmatch.h"

#include "grow.h"

#include <ctype.h>
#include <stdlib.h>
#include <string.h>

enum { QK_SYM, QK_ANY_NAMED, QK_ANY, QK_ALT };

#define QN_MAX_CAPS 3
#define QN_MAX_KIDS 32

struct qn {
	uint8_t kind;
	uint8_t anchor; /* '.' before it: no named sibling between it and the last */
	uint8_t last;	/* '.' after it: no named sibling after it */
	uint8_t ncap;
	uint8_t caps_below; /* it or a step under it captures */
	TSSymbol sym;
	TSFieldId field;
	uint16_t cap[QN_MAX_CAPS];
	uint32_t kids, nkids; /* in kidx[]: children, or the alternatives of QK_ALT */
};

struct pl_qm {
	struct qn *qn;
	size_t nqn, qn_cap;
	uint32_t *kidx;
	size_t nkidx, kidx_cap;
	uint32_t *root;	   /* per pattern, its qn */
	uint32_t npat;
	uint32_t nsym;	   /* symbols of the language */
	uint32_t *by_sym;  /* CSR: patterns rooted at symbol s are */
	uint32_t *sym_pat; /* sym_pat[by_sym[s] .. by_sym[s + 1]) */
	uint32_t *wild;	   /* patterns rooted at (_) or _ */
	uint32_t nwild;
	/* the predicates that name words (#eq? @c "w", #match? @c "^(w|v)$"),
	 * checked as the capture is made: most calls a rule's pattern fits
	 * call another function, and a match the predicate rejects need not
	 * be made at all. Pattern k's are lit[lit_at[k] .. lit_at[k + 1]). */
	struct lit {
		uint16_t cap;
		uint16_t nword;
		uint32_t word; /* words[word .. word + nword) */
	} *lit;
	uint32_t *lit_at;
	size_t nlit, lit_cap;
	struct word {
		const char *s;
		uint32_t len;
	} *words;
	size_t nwords, words_cap;
};

/* ---- reading the patterns ---- */

struct qp {
	const char *s, *end;
	const TSLanguage *lang;
	const TSQuery *q;
	struct pl_qm *m;
	int bad;
};

static void skip_ws(struct qp *p)
{
	while (p->s < p->end) {
		if (isspace((unsigned char)*p->s)) {
			p->s++;
		} else if (*p->s == ';') {
			while (p->s < p->end && *p->s != '\n')
				p->s++;
		} else {
			break;
		}
	}
}

static int ident_char(char c)
{
	return isalnum((unsigned char)c) || c == '_' || c == '-' || c == '.';
}

static size_t ident(struct qp *p)
{
	const char *a = p->s;
	while (p->s < p->end && ident_char(*p->s))
		p->s++;
	return (size_t)(p->s - a);
}

/* Past a balanced (...) at p->s, strings honoured: a predicate. */
static void skip_sexp(struct qp *p)
{
	int depth = 0;
	while (p->s < p->end) {
		char c = *p->s++;
		if (c == '"') {
			while (p->s < p->end && *p->s != '"')
				p->s += *p->s == '\\' && p->s + 1 < p->end ? 2 : 1;
			p->s++;
		} else if (c == ';') {
			while (p->s < p->end && *p->s != '\n')
				p->s++;
		} else if (c == '(') {
			depth++;
		} else if (c == ')' && --depth == 0) {
			return;
		}
	}
	p->bad = 1;
}

static int new_qn(struct qp *p, uint8_t kind)
{
	struct pl_qm *m = p->m;
	if (pl_grow((void **)&m->qn, &m->qn_cap, m->nqn + 1, sizeof *m->qn, 64) < 0) {
		p->bad = 1;
		return -1;
	}
	memset(&m->qn[m->nqn], 0, sizeof m->qn[0]);
	m->qn[m->nqn].kind = kind;
	return (int)m->nqn++;
}

static void set_kids(struct qp *p, int at, const uint32_t *k, uint32_t n)
{
	struct pl_qm *m = p->m;
	if (pl_grow((void **)&m->kidx, &m->kidx_cap, m->nkidx + n, sizeof *m->kidx, 64) < 0) {
		p->bad = 1;
		return;
	}
	if (n)
		memcpy(m->kidx + m->nkidx, k, n * sizeof *k);
	m->qn[at].kids = (uint32_t)m->nkidx;
	m->qn[at].nkids = n;
	m->nkidx += n;
}

/* Captures (@name) and quantifiers after an item. */
static void postfix(struct qp *p, int at)
{
	for (;;) {
		skip_ws(p);
		if (p->s >= p->end)
			return;
		if (*p->s == '?' || *p->s == '*' || *p->s == '+') {
			p->bad = 1; /* quantifiers: tree-sitter's cursor */
			return;
		}
		if (*p->s != '@')
			return;
		p->s++;
		const char *a = p->s;
		while (p->s < p->end && ident_char(*p->s))
			p->s++;
		uint32_t len = (uint32_t)(p->s - a), n = ts_query_capture_count(p->q), id = n;
		for (uint32_t i = 0; i < n && id == n; i++) {
			uint32_t l;
			const char *name = ts_query_capture_name_for_id(p->q, i, &l);
			if (l == len && !memcmp(name, a, len))
				id = i;
		}
		struct qn *q = &p->m->qn[at];
		if (id == n || q->ncap == QN_MAX_CAPS) {
			p->bad = 1;
			return;
		}
		q->cap[q->ncap++] = (uint16_t)id;
	}
}

static int item(struct qp *p);

/* The children of a node step, after its type: fields, anchors, items
 * and predicates, up to the closing parenthesis. */
static void node_kids(struct qp *p, int at)
{
	uint32_t k[QN_MAX_KIDS], n = 0;
	int anchor = 0;
	for (;;) {
		skip_ws(p);
		if (p->s >= p->end || p->bad) {
			p->bad = 1;
			return;
		}
		char c = *p->s;
		if (c == ')') {
			p->s++;
			if (anchor && n)
				p->m->qn[k[n - 1]].last = 1;
			else if (anchor)
				p->bad = 1;
			break;
		}
		if (c == '.') {
			p->s++;
			anchor = 1;
			continue;
		}
		if (c == '(' && p->s + 1 < p->end && p->s[1] == '#') {
			skip_sexp(p); /* a predicate: the caller's */
			continue;
		}
		if (c == '!') {
			p->bad = 1; /* negated fields */
			return;
		}
		TSFieldId field = 0;
		if (isalpha((unsigned char)c) || c == '_') {
			const char *a = p->s;
			size_t len = ident(p);
			skip_ws(p);
			if (p->s < p->end && *p->s == ':') {
				p->s++;
				field = ts_language_field_id_for_name(p->lang, a, (uint32_t)len);
				if (!field) {
					p->bad = 1;
					return;
				}
			} else {
				p->s = a; /* `_`, an item */
			}
		}
		int kid = item(p);
		if (kid < 0 || n == QN_MAX_KIDS) {
			p->bad = 1;
			return;
		}
		p->m->qn[kid].field = field;
		p->m->qn[kid].anchor = (uint8_t)anchor;
		anchor = 0;
		k[n++] = (uint32_t)kid;
	}
	set_kids(p, at, k, n);
}

/* One item: (type ...), (_ ...), _, "text", [alternatives], or a
 * grouping ((item) predicates...), with its captures. Its index, or -1. */
static int item(struct qp *p)
{
	skip_ws(p);
	if (p->s >= p->end || p->bad) {
		p->bad = 1;
		return -1;
	}
	int at = -1;
	char c = *p->s;
	if (c == '(') {
		p->s++;
		skip_ws(p);
		if (p->s >= p->end) {
			p->bad = 1;
			return -1;
		}
		c = *p->s;
		if (c == '(' || c == '[' || c == '"') { /* a grouping: one item, predicates */
			for (;;) {
				skip_ws(p);
				if (p->s >= p->end || p->bad) {
					p->bad = 1;
					return -1;
				}
				if (*p->s == ')') {
					p->s++;
					break;
				}
				if (*p->s == '(' && p->s + 1 < p->end && p->s[1] == '#') {
					skip_sexp(p);
					continue;
				}
				if (at >= 0) { /* a sequence of siblings */
					p->bad = 1;
					return -1;
				}
				at = item(p);
				if (at < 0)
					return -1;
			}
			if (at < 0) {
				p->bad = 1;
				return -1;
			}
		} else if (c == '_' && (p->s + 1 >= p->end || !ident_char(p->s[1]))) {
			p->s++;
			at = new_qn(p, QK_ANY_NAMED);
			if (at >= 0)
				node_kids(p, at);
		} else {
			const char *a = p->s;
			size_t len = ident(p);
			if (!len || (p->s < p->end && *p->s == '/') ||
			    (len == 5 && !memcmp(a, "ERROR", 5))) {
				p->bad = 1; /* supertype/subtype, or an error node */
				return -1;
			}
			TSSymbol sym = ts_language_symbol_for_name(p->lang, a, (uint32_t)len, true);
			if (!sym || ts_language_symbol_type(p->lang, sym) != TSSymbolTypeRegular) {
				p->bad = 1; /* a supertype: matched through its subtypes */
				return -1;
			}
			at = new_qn(p, QK_SYM);
			if (at >= 0) {
				p->m->qn[at].sym = sym;
				node_kids(p, at);
			}
		}
	} else if (c == '[') {
		p->s++;
		uint32_t k[QN_MAX_KIDS], n = 0;
		for (;;) {
			skip_ws(p);
			if (p->s >= p->end || p->bad) {
				p->bad = 1;
				return -1;
			}
			if (*p->s == ']') {
				p->s++;
				break;
			}
			int alt = item(p);
			if (alt < 0 || n == QN_MAX_KIDS) {
				p->bad = 1;
				return -1;
			}
			k[n++] = (uint32_t)alt;
		}
		at = new_qn(p, QK_ALT);
		if (at >= 0)
			set_kids(p, at, k, n);
	} else if (c == '"') {
		char buf[64];
		size_t n = 0;
		p->s++;
		while (p->s < p->end && *p->s != '"') {
			char ch = *p->s++;
			if (ch == '\\' && p->s < p->end) {
				ch = *p->s++;
				ch = ch == 'n' ? '\n' : ch == 't' ? '\t' : ch == 'r' ? '\r' : ch;
			}
			if (n + 1 >= sizeof buf) {
				p->bad = 1;
				return -1;
			}
			buf[n++] = ch;
		}
		p->s++;
		TSSymbol sym = ts_language_symbol_for_name(p->lang, buf, (uint32_t)n, false);
		if (!sym) {
			p->bad = 1;
			return -1;
		}
		at = new_qn(p, QK_SYM);
		if (at >= 0)
			p->m->qn[at].sym = sym;
	} else if (c == '_') {
		p->s++;
		at = new_qn(p, QK_ANY);
	} else {
		p->bad = 1;
		return -1;
	}
	if (at >= 0)
		postfix(p, at);
	return p->bad ? -1 : at;
}

/* The root symbols of pattern qn i (alternatives each); 1 where a
 * wildcard can start it (it is tried at every node then). */
static int roots(const struct pl_qm *m, uint32_t i, uint32_t *count, uint32_t pat, int fill)
{
	const struct qn *q = &m->qn[i];
	if (q->kind == QK_ANY || q->kind == QK_ANY_NAMED)
		return 1;
	if (q->kind == QK_SYM) {
		if (fill)
			m->sym_pat[count[q->sym]++] = pat;
		else
			count[q->sym]++;
		return 0;
	}
	int wild = 0;
	for (uint32_t k = 0; k < q->nkids; k++)
		wild |= roots(m, m->kidx[q->kids + k], count, pat, fill);
	return wild;
}

static int mark_caps(struct pl_qm *m, uint32_t i)
{
	struct qn *q = &m->qn[i];
	int below = q->ncap > 0;
	for (uint32_t k = 0; k < q->nkids; k++)
		below |= mark_caps(m, m->kidx[q->kids + k]);
	q->caps_below = (uint8_t)below;
	return below;
}

static int wild_root(const struct pl_qm *m, uint32_t i)
{
	const struct qn *q = &m->qn[i];
	if (q->kind == QK_ANY || q->kind == QK_ANY_NAMED)
		return 1;
	for (uint32_t k = 0; q->kind == QK_ALT && k < q->nkids; k++)
		if (wild_root(m, m->kidx[q->kids + k]))
			return 1;
	return 0;
}

/* The words a #match? regex admits where it is only words: ^w$ or
 * ^(w|v|...)$ with w of letters, digits and _. 0, or -1 for any other. */
static int regex_words(struct pl_qm *m, const char *re, uint32_t len, uint32_t *nword)
{
	if (len < 3 || re[0] != '^' || re[len - 1] != '$')
		return -1;
	const char *a = re + 1, *e = re + len - 1;
	if (*a == '(') {
		if (e[-1] != ')')
			return -1;
		a++;
		e--;
	}
	*nword = 0;
	while (a <= e) {
		const char *w = a;
		while (a < e && (isalnum((unsigned char)*a) || *a == '_'))
			a++;
		if (a == w || (a < e && *a != '|'))
			return -1;
		if (pl_grow((void **)&m->words, &m->words_cap, m->nwords + 1, sizeof *m->words, 32) < 0)
			return -1;
		m->words[m->nwords++] = (struct word){w, (uint32_t)(a - w)};
		(*nword)++;
		a++;
	}
	return 0;
}

/* The word predicates of every pattern of q, into m->lit. 0, or -1. */
static int read_lits(struct pl_qm *m, const TSQuery *q)
{
	m->lit_at = calloc(m->npat + 1, sizeof *m->lit_at);
	if (!m->lit_at)
		return -1;
	for (uint32_t k = 0; k < m->npat; k++) {
		m->lit_at[k] = (uint32_t)m->nlit;
		uint32_t n;
		const TSQueryPredicateStep *st = ts_query_predicates_for_pattern(q, k, &n);
		for (uint32_t i = 0; i < n;) {
			uint32_t j = i;
			while (j < n && st[j].type != TSQueryPredicateStepTypeDone)
				j++;
			/* name, @capture, "text" */
			if (j - i == 3 && st[i].type == TSQueryPredicateStepTypeString &&
			    st[i + 1].type == TSQueryPredicateStepTypeCapture &&
			    st[i + 2].type == TSQueryPredicateStepTypeString) {
				uint32_t nl, tl;
				const char *name = ts_query_string_value_for_id(q, st[i].value_id, &nl);
				const char *text = ts_query_string_value_for_id(q, st[i + 2].value_id, &tl);
				size_t w0 = m->nwords;
				uint32_t nword = 0;
				int ok = -1;
				if (nl == 3 && !memcmp(name, "eq?", 3)) {
					if (pl_grow((void **)&m->words, &m->words_cap, m->nwords + 1,
						    sizeof *m->words, 32) < 0)
						return -1;
					m->words[m->nwords++] = (struct word){text, tl};
					nword = 1;
					ok = 0;
				} else if (nl == 6 && !memcmp(name, "match?", 6)) {
					ok = regex_words(m, text, tl, &nword);
				}
				if (ok == 0) {
					if (pl_grow((void **)&m->lit, &m->lit_cap, m->nlit + 1, sizeof *m->lit,
						    16) < 0)
						return -1;
					m->lit[m->nlit++] = (struct lit){(uint16_t)st[i + 1].value_id,
									 (uint16_t)nword, (uint32_t)w0};
				} else {
					m->nwords = w0;
				}
			}
			i = j + 1;
		}
	}
	m->lit_at[m->npat] = (uint32_t)m->nlit;
	return 0;
}

void pl_qm_free(struct pl_qm *m)
{
	if (!m)
		return;
	free(m->qn);
	free(m->kidx);
	free(m->root);
	free(m->by_sym);
	free(m->sym_pat);
	free(m->wild);
	free(m->lit);
	free(m->lit_at);
	free(m->words);
	free(m);
}

struct pl_qm *pl_qm_new(const TSLanguage *lang, const TSQuery *q, const char *text, uint32_t len)
{
	struct pl_qm *m = calloc(1, sizeof *m);
	uint32_t npat = ts_query_pattern_count(q);
	if (!m || !(m->root = calloc(npat ? npat : 1, sizeof *m->root)))
		goto fail;
	m->npat = npat;
	struct qp p = {.end = text + len, .lang = lang, .q = q, .m = m};
	for (uint32_t k = 0; k < npat; k++) {
		uint32_t at = ts_query_start_byte_for_pattern(q, k);
		if (at >= len)
			goto fail;
		p.s = text + at;
		int r = item(&p);
		if (r < 0 || p.bad)
			goto fail;
		m->root[k] = (uint32_t)r;
		mark_caps(m, (uint32_t)r);
		skip_ws(&p); /* and nothing unread before the next */
		if (k + 1 < npat && p.s != text + ts_query_start_byte_for_pattern(q, k + 1))
			goto fail;
	}
	/* every pattern read, and nothing but predicates and comments after
	 * the last: otherwise the query has a form not read here */
	skip_ws(&p);
	if (p.s != p.end)
		goto fail;
	m->nsym = ts_language_symbol_count(lang) + 1;
	m->by_sym = calloc(m->nsym + 1, sizeof *m->by_sym);
	m->wild = calloc(npat ? npat : 1, sizeof *m->wild);
	if (!m->by_sym || !m->wild)
		goto fail;
	uint32_t *count = calloc(m->nsym + 1, sizeof *count);
	if (!count)
		goto fail;
	for (uint32_t k = 0; k < npat; k++) {
		if (wild_root(m, m->root[k]))
			m->wild[m->nwild++] = k;
		else
			roots(m, m->root[k], count, k, 0);
	}
	uint32_t total = 0;
	for (uint32_t s = 0; s < m->nsym; s++) {
		m->by_sym[s] = total;
		total += count[s];
		count[s] = m->by_sym[s];
	}
	m->by_sym[m->nsym] = total;
	m->sym_pat = calloc(total ? total : 1, sizeof *m->sym_pat);
	if (!m->sym_pat) {
		free(count);
		goto fail;
	}
	for (uint32_t k = 0; k < npat; k++)
		if (!wild_root(m, m->root[k]))
			roots(m, m->root[k], count, k, 1);
	free(count);
	if (read_lits(m, q) < 0)
		goto fail;
	return m;
fail:
	pl_qm_free(m);
	return NULL;
}

/* ---- matching ---- */

struct child {
	TSNode node;
	TSFieldId field;
	TSSymbol sym;
	uint8_t named;
};

struct found {
	uint32_t pattern;
	uint32_t end_start, end_depth; /* the node where it completes */
	uint32_t root_depth;
	uint32_t seq;
	uint32_t cap, ncap; /* in ctx.caps */
};

struct ctx {
	const struct pl_qm *m;
	const char *text; /* the source */
	TSTreeCursor tc;
	struct child *ch; /* children of the nodes looked at under this root */
	size_t nch, ch_cap;
	struct memo { /* ... whose children are ch[frame .. frame + n) */
		const void *id;
		uint32_t start; /* with id: a subtree shared by two places is two nodes */
		size_t frame;
		uint32_t n;
	} *memo;
	size_t nmemo, memo_cap;
	TSQueryCapture *cur; /* the captures so far, a stack */
	size_t ncur, cur_cap;
	TSQueryCapture *caps; /* of every match found */
	size_t ncaps, caps_cap;
	struct found *found;
	size_t nfound, found_cap;
	size_t group; /* the first match of the current pattern and root */
	uint32_t pattern, root_depth;
	TSNode last;
	uint32_t last_depth;
	int oom;
};

struct kont {
	const struct qn *q; /* the step whose children are being matched */
	size_t frame;	    /* its children: ch[frame .. frame + n) */
	uint32_t n, qi, pos, depth;
	int32_t prev;
	const struct kont *up;
	int *reached; /* set when the match gets this far */
};

static int match_node(struct ctx *c, uint32_t qi, TSNode n, TSSymbol sym, uint8_t named,
		      uint32_t depth, const struct kont *k);
static int match_kids(struct ctx *c, const struct kont *k);

static int contains(const TSQueryCapture *a, size_t na, const TSQueryCapture *b, size_t nb)
{ /* every capture of b is one of a */
	for (size_t j = 0; j < nb; j++) {
		size_t i = 0;
		while (i < na && !(a[i].index == b[j].index && ts_node_eq(a[i].node, b[j].node)))
			i++;
		if (i == na)
			return 0;
	}
	return 1;
}

/* A whole match: kept unless one of the same pattern and root already
 * holds its captures (tree-sitter keeps the longest). */
static int report(struct ctx *c)
{
	for (size_t i = c->group; i < c->nfound; i++) {
		struct found *f = &c->found[i];
		if (f->ncap >= c->ncur && contains(c->caps + f->cap, f->ncap, c->cur, c->ncur))
			return 0;
	}
	if (pl_grow((void **)&c->found, &c->found_cap, c->nfound + 1, sizeof *c->found, 64) < 0 ||
	    pl_grow((void **)&c->caps, &c->caps_cap, c->ncaps + c->ncur, sizeof *c->caps, 256) < 0) {
		c->oom = 1;
		return -1;
	}
	/* and one this match holds gives way to it */
	for (size_t i = c->group; i < c->nfound; i++) {
		struct found *f = &c->found[i];
		if (contains(c->cur, c->ncur, c->caps + f->cap, f->ncap))
			f->pattern = UINT32_MAX;
	}
	if (c->ncur)
		memcpy(c->caps + c->ncaps, c->cur, c->ncur * sizeof *c->cur);
	c->found[c->nfound++] = (struct found){c->pattern,
					       ts_node_start_byte(c->last),
					       c->last_depth,
					       c->root_depth,
					       (uint32_t)c->nfound,
					       (uint32_t)c->ncaps,
					       (uint32_t)c->ncur};
	c->ncaps += c->ncur;
	return 0;
}

static int resume(struct ctx *c, const struct kont *k)
{
	if (k && k->reached)
		*k->reached = 1;
	return k ? match_kids(c, k) : report(c);
}

static int named_after(const struct ctx *c, size_t frame, uint32_t n, uint32_t j)
{
	for (uint32_t i = j + 1; i < n; i++)
		if (c->ch[frame + i].named)
			return 1;
	return 0;
}

/* The children patterns k->q's from k->qi on, against the children from
 * k->pos on, in order; then the rest (k->up). */
static int match_kids(struct ctx *c, const struct kont *k)
{
	const struct pl_qm *m = c->m;
	if (k->qi == k->q->nkids)
		return resume(c, k->up);
	uint32_t kq = m->kidx[k->q->kids + k->qi];
	const struct qn *want = &m->qn[kq];
	int named_between = 0;
	for (uint32_t j = k->pos; j < k->n; j++) {
		const struct child ch = c->ch[k->frame + j];
		if (want->anchor && named_between)
			break;
		if (ch.named)
			named_between = 1;
		if (want->field && ch.field != want->field)
			continue;
		if (want->last && named_after(c, k->frame, k->n, j))
			continue;
		int reached = 0;
		struct kont next = {k->q,	  k->frame, k->n, k->qi + 1, j + 1,
				    k->depth, (int32_t)j, k->up, &reached};
		int rc = match_node(c, kq, ch.node, ch.sym, ch.named, k->depth + 1, &next);
		if (rc)
			return rc;
		/* a step that captures nothing, matched at the first child it
		 * can be: a later one gives the same captures with less room
		 * for the steps after it (unless the next must follow it at
		 * once), so `(args (_) (_) (x) @x)` is not tried n^2 ways */
		if (reached && !want->caps_below &&
		    !(k->qi + 1 < k->q->nkids && m->qn[m->kidx[k->q->kids + k->qi + 1]].anchor))
			break;
	}
	return 0;
}

/* Step q's captures of n: 0, 1 where a word predicate rejects n, or -1
 * out of memory. */
static int push_caps(struct ctx *c, const struct qn *q, TSNode n)
{
	const struct pl_qm *m = c->m;
	for (uint32_t l = m->lit_at[c->pattern]; l < m->lit_at[c->pattern + 1]; l++) {
		const struct lit *lt = &m->lit[l];
		uint8_t i = 0;
		while (i < q->ncap && q->cap[i] != lt->cap)
			i++;
		if (i == q->ncap)
			continue;
		uint32_t a = ts_node_start_byte(n), len = ts_node_end_byte(n) - a, w = 0;
		while (w < lt->nword && !(m->words[lt->word + w].len == len &&
					  !memcmp(m->words[lt->word + w].s, c->text + a, len)))
			w++;
		if (w == lt->nword)
			return 1;
	}
	if (pl_grow((void **)&c->cur, &c->cur_cap, c->ncur + q->ncap, sizeof *c->cur, 16) < 0) {
		c->oom = 1;
		return -1;
	}
	for (uint8_t i = 0; i < q->ncap; i++)
		c->cur[c->ncur++] = (TSQueryCapture){n, q->cap[i]};
	return 0;
}

/* n's children, read once for all the patterns tried at one root (a
 * call node is the root of a dozen rules' patterns); NULL out of memory. */
static const struct memo *children(struct ctx *c, TSNode n)
{
	for (size_t i = 0; i < c->nmemo; i++)
		if (c->memo[i].id == n.id && c->memo[i].start == ts_node_start_byte(n))
			return &c->memo[i];
	if (pl_grow((void **)&c->memo, &c->memo_cap, c->nmemo + 1, sizeof *c->memo, 16) < 0) {
		c->oom = 1;
		return NULL;
	}
	struct memo *e = &c->memo[c->nmemo];
	*e = (struct memo){n.id, ts_node_start_byte(n), c->nch, 0};
	ts_tree_cursor_reset(&c->tc, n);
	if (ts_tree_cursor_goto_first_child(&c->tc)) {
		do {
			if (pl_grow((void **)&c->ch, &c->ch_cap, c->nch + 1, sizeof *c->ch, 64) < 0) {
				c->oom = 1;
				return NULL;
			}
			TSNode kid = ts_tree_cursor_current_node(&c->tc);
			c->ch[c->nch++] = (struct child){kid, ts_tree_cursor_current_field_id(&c->tc),
							 ts_node_symbol(kid),
							 (uint8_t)ts_node_is_named(kid)};
			e->n++;
		} while (ts_tree_cursor_goto_next_sibling(&c->tc));
	}
	c->nmemo++;
	return e;
}

/* Step qi at node n (its symbol and whether it is named), then the rest
 * (k): 0 to go on, nonzero to stop. */
static int match_node(struct ctx *c, uint32_t qi, TSNode n, TSSymbol sym, uint8_t named,
		      uint32_t depth, const struct kont *k)
{
	const struct pl_qm *m = c->m;
	const struct qn *q = &m->qn[qi];
	size_t ncur = c->ncur;
	int rc = 0;
	if (q->kind == QK_ALT) {
		if (q->ncap && (rc = push_caps(c, q, n)) != 0)
			return rc < 0 ? -1 : 0;
		for (uint32_t a = 0; a < q->nkids && !rc; a++)
			rc = match_node(c, m->kidx[q->kids + a], n, sym, named, depth, k);
		c->ncur = ncur;
		return rc;
	}
	if (q->kind == QK_SYM ? sym != q->sym
			      : sym == (TSSymbol)-1 || (q->kind == QK_ANY_NAMED && !named))
		return 0;
	if (q->ncap && (rc = push_caps(c, q, n)) != 0)
		return rc < 0 ? -1 : 0;
	c->last = n;
	c->last_depth = depth;
	if (!q->nkids) {
		rc = resume(c, k);
	} else {
		const struct memo *kids = children(c, n);
		if (!kids) {
			c->ncur = ncur;
			return -1;
		}
		struct kont here = {q, kids->frame, kids->n, 0, 0, depth, -1, k, NULL};
		rc = match_kids(c, &here);
	}
	c->ncur = ncur;
	return rc;
}

static void try_pattern(struct ctx *c, uint32_t pat, TSNode n, TSSymbol sym, uint8_t named,
			uint32_t depth)
{
	c->group = c->nfound;
	c->pattern = pat;
	c->root_depth = depth;
	c->ncur = 0;
	match_node(c, c->m->root[pat], n, sym, named, depth, NULL);
}

static int cmp_found(const void *a, const void *b)
{
	const struct found *x = a, *y = b;
	if (x->end_start != y->end_start)
		return x->end_start < y->end_start ? -1 : 1;
	if (x->end_depth != y->end_depth)
		return x->end_depth < y->end_depth ? -1 : 1;
	if (x->root_depth != y->root_depth)
		return x->root_depth < y->root_depth ? -1 : 1;
	if (x->pattern != y->pattern)
		return x->pattern < y->pattern ? -1 : 1;
	return x->seq < y->seq ? -1 : x->seq > y->seq;
}

int pl_qm_exec(const struct pl_qm *m, TSNode root, const char *text, const unsigned char *skip,
	       pl_qm_fn fn, void *arg)
{
	struct ctx c = {.m = m, .text = text, .tc = ts_tree_cursor_new(root)};
	TSTreeCursor w = ts_tree_cursor_new(root);
	uint32_t depth = 0;
	for (;;) { /* preorder, every node once */
		TSNode n = ts_tree_cursor_current_node(&w);
		TSSymbol sym = ts_node_symbol(n);
		c.nch = c.nmemo = 0; /* a new root: children read afresh */
		if (sym < m->nsym)
			for (uint32_t i = m->by_sym[sym]; i < m->by_sym[sym + 1] && !c.oom; i++)
				if ((i == m->by_sym[sym] || m->sym_pat[i] != m->sym_pat[i - 1]) &&
				    !(skip && skip[m->sym_pat[i]]))
					try_pattern(&c, m->sym_pat[i], n, sym, 1, depth);
		for (uint32_t i = 0; i < m->nwild && !c.oom; i++)
			if (!(skip && skip[m->wild[i]]))
				try_pattern(&c, m->wild[i], n, sym, (uint8_t)ts_node_is_named(n),
					    depth);
		if (c.oom)
			break;
		if (ts_tree_cursor_goto_first_child(&w)) {
			depth++;
			continue;
		}
		while (!ts_tree_cursor_goto_next_sibling(&w)) {
			if (!ts_tree_cursor_goto_parent(&w))
				goto walked;
			depth--;
		}
	}
walked:
	ts_tree_cursor_delete(&w);
	ts_tree_cursor_delete(&c.tc);
	int rc = c.oom ? -1 : 0;
	if (!rc && c.nfound > 1)
		qsort(c.found, c.nfound, sizeof *c.found, cmp_found);
	for (size_t i = 0; i < c.nfound && !rc; i++) {
		const struct found *f = &c.found[i];
		if (f->pattern == UINT32_MAX)
			continue;
		TSQueryMatch match = {.id = (uint32_t)i,
				      .pattern_index = (uint16_t)f->pattern,
				      .capture_count = (uint16_t)f->ncap,
				      .captures = c.caps + f->cap};
		rc = fn(arg, &match);
	}
	free(c.ch);
	free(c.memo);
	free(c.cur);
	free(c.caps);
	free(c.found);
	return rc;
}
