/*
 * Context conditions (a rule's `when:` and `lower:` lines, see scan.h):
 * what the code around a match says. The scopes they ask about (loops,
 * functions, classes, with, decorators) are found by the same query pass
 * that finds the matches, in preorder (pl_scan_add_scope), so each match's
 * enclosing scopes are known when it is judged; the rest reads the syntax
 * tree and the source text of the one file being scanned (struct src in
 * scan_int.h): sizes known to be small, a dataset held in memory, a loader
 * read once, the arguments of a call. Thread-safe: all state is in src.
 */
#include "scan_int.h"

#include <ctype.h>
#include <pthread.h>
#include <regex.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <tree_sitter/api.h>

#include "grow.h"
#include "regexcap.h"
#include "strbuf.h"

/* The nodes conditions ask about, found in one pass over the tree, each
 * with its nearest such ancestor: tree-sitter 0.20's ts_node_parent walks
 * down from the root, which is quadratic on big files. */
enum { SK_LOOP = 1, SK_FUNC = 2, SK_LAMBDA = 4, SK_CLASS = 8, SK_WITH = 16, SK_DECOR = 32 };
struct scope {
	uint32_t start, end;
	int parent; /* index, -1 none */
	int kind;
	TSNode node;
	/* a loop's part that runs once, before the first iteration: Python's
	 * iterable (`for x in rows():`, a comprehension's first), C's for
	 * initializer; what is there is not in the loop. Empty: none */
	uint32_t once_start, once_end;
};

/* The once-run part of a loop node (see struct scope), or a null node. */
static TSNode loop_once_part(TSNode loop)
{
	const char *t = ts_node_type(loop);
	if (!strcmp(t, "for_statement")) {
		TSNode r = ts_node_child_by_field_name(loop, "right", 5);
		return ts_node_is_null(r) ? ts_node_child_by_field_name(loop, "initializer", 11)
					  : r;
	}
	if (strstr(t, "comprehension") || !strcmp(t, "generator_expression"))
		for (uint32_t i = 0; i < ts_node_named_child_count(loop); i++) {
			TSNode c = ts_node_named_child(loop, i);
			if (!strcmp(ts_node_type(c), "for_in_clause"))
				return ts_node_child_by_field_name(c, "right", 5);
		}
	return (TSNode){0};
}

/* The text with every comment replaced by spaces, at the same offsets: what
 * file-has and its kin read, so that a word in a comment is not code. One
 * walk of the tree per file, on first use. */
static const char *code_text(struct src *s)
{
	if (s->code_state == 0) {
		s->code = malloc(s->len + 1);
		s->code_state = s->code ? 1 : -1;
		if (s->code) {
			memcpy(s->code, s->text, s->len);
			s->code[s->len] = '\0';
			TSTreeCursor cur = ts_tree_cursor_new(s->root);
			for (int down = 1;;) {
				TSNode n = ts_tree_cursor_current_node(&cur);
				if (down && !strcmp(ts_node_type(n), "comment")) {
					uint32_t a = ts_node_start_byte(n), b = ts_node_end_byte(n);
					if (b > s->len)
						b = (uint32_t)s->len;
					if (a < b)
						memset(s->code + a, ' ', b - a);
					down = 0;
				}
				if (down && ts_tree_cursor_goto_first_child(&cur))
					continue;
				if (ts_tree_cursor_goto_next_sibling(&cur)) {
					down = 1;
					continue;
				}
				if (!ts_tree_cursor_goto_parent(&cur))
					break;
				down = 0;
			}
			ts_tree_cursor_delete(&cur);
		}
	}
	return s->code_state > 0 ? s->code : s->text;
}

const char *pl_scan_ntext(struct src *s, TSNode n, size_t *len)
{
	uint32_t a = ts_node_start_byte(n), b = ts_node_end_byte(n);
	if (b > s->len)
		b = (uint32_t)s->len;
	if (a > b)
		a = b;
	*len = b - a;
	return s->text + a;
}

static int is_loop(struct src *s, const char *t)
{
	if (s->lang == PL_LANG_PYTHON)
		return !strcmp(t, "for_statement") || !strcmp(t, "while_statement") ||
		       !strcmp(t, "list_comprehension") || !strcmp(t, "set_comprehension") ||
		       !strcmp(t, "dictionary_comprehension") || !strcmp(t, "generator_expression");
	return !strcmp(t, "for_statement") || !strcmp(t, "while_statement") ||
	       !strcmp(t, "do_statement");
}

static int scope_kind(struct src *s, const char *t)
{
	if (is_loop(s, t))
		return SK_LOOP;
	if (!strcmp(t, "function_definition"))
		return SK_FUNC;
	if (!strcmp(t, "lambda"))
		return SK_LAMBDA;
	if (!strcmp(t, "class_definition"))
		return SK_CLASS;
	if (!strcmp(t, "with_statement"))
		return SK_WITH;
	if (!strcmp(t, "decorated_definition"))
		return SK_DECOR;
	return 0;
}

/* The scope kind of every node symbol of a language, computed once:
 * comparing a symbol number is what a walk over every node can afford,
 * comparing type strings is not. */
#define PL_MAX_SYMBOLS 512
static unsigned char kinds[PL_LANG_COUNT][PL_MAX_SYMBOLS];
static pthread_once_t kinds_once = PTHREAD_ONCE_INIT;

static void kinds_init(void)
{
	for (int l = 0; l < PL_LANG_COUNT; l++) {
		const TSLanguage *lang = pl_scan_language((enum pl_lang)l);
		struct src s = {.lang = (enum pl_lang)l};
		uint32_t n = ts_language_symbol_count(lang);
		for (uint32_t k = 0; k < n && k < PL_MAX_SYMBOLS; k++)
			if (ts_language_symbol_type(lang, (TSSymbol)k) == TSSymbolTypeRegular)
				kinds[l][k] = (unsigned char)scope_kind(
				    &s, ts_language_symbol_name(lang, (TSSymbol)k));
	}
}

static const unsigned char *scope_kinds(enum pl_lang l)
{
	pthread_once(&kinds_once, kinds_init);
	return kinds[l];
}

/* Scope node n, as the query pass finds it (a pattern of the combined
 * query matches every loop, function, class, with and decorated
 * definition: the context walk fused with the query's own, not a second
 * walk over every node). They arrive in preorder, each before any match
 * inside it completes, so a match's enclosing scopes are all known when
 * it is judged. 0, or -1 out of memory. */
int pl_scan_add_scope(struct src *s, TSNode n)
{
	TSSymbol sym = ts_node_symbol(n);
	int kind =
	    sym < PL_MAX_SYMBOLS ? scope_kinds(s->lang)[sym] : scope_kind(s, ts_node_type(n));
	if (!kind)
		return 0;
	if (pl_grow((void **)&s->scopes, &s->scopes_cap, s->nscopes + 1, sizeof *s->scopes, 256) <
	    0)
		return -1;
	uint32_t a = ts_node_start_byte(n), b = ts_node_end_byte(n);
	int parent = (int)s->nscopes - 1; /* the innermost earlier one holding it */
	while (parent >= 0 && !(s->scopes[parent].start <= a && b <= s->scopes[parent].end))
		parent = s->scopes[parent].parent;
	struct scope *c = &s->scopes[s->nscopes++];
	*c = (struct scope){a, b, parent, kind, n, 0, 0};
	if (kind == SK_LOOP) {
		TSNode once = loop_once_part(n);
		if (!ts_node_is_null(once)) {
			c->once_start = ts_node_start_byte(once);
			c->once_end = ts_node_end_byte(once);
		}
	}
	return 0;
}

/* The innermost scope strictly enclosing node n (not n itself), or -1. */
static int scope_of(struct src *s, TSNode n)
{
	uint32_t a = ts_node_start_byte(n), b = ts_node_end_byte(n);
	size_t lo = 0, hi = s->nscopes;
	while (lo < hi) { /* the last scope starting at or before a */
		size_t mid = (lo + hi) / 2;
		if (s->scopes[mid].start <= a)
			lo = mid + 1;
		else
			hi = mid;
	}
	for (int i = (int)lo - 1; i >= 0; i = s->scopes[i].parent) {
		const struct scope *c = &s->scopes[i];
		if (c->start <= a && b <= c->end && !ts_node_eq(c->node, n))
			return i;
	}
	return -1;
}

/* The innermost loop enclosing n within its function, or a null node. */
TSNode pl_scan_enclosing_loop(struct src *s, TSNode n)
{
	uint32_t a = ts_node_start_byte(n), b = ts_node_end_byte(n);
	for (int i = scope_of(s, n); i >= 0; i = s->scopes[i].parent) {
		const struct scope *c = &s->scopes[i];
		if (c->kind == SK_LOOP && c->once_start <= a && b <= c->once_end &&
		    c->once_start < c->once_end)
			continue; /* evaluated once, before the loop runs */
		if (c->kind == SK_LOOP)
			return c->node;
		if (s->scopes[i].kind & (SK_FUNC | SK_LAMBDA))
			break;
	}
	return (TSNode){0};
}

TSNode pl_scan_enclosing_function(struct src *s, TSNode n)
{
	for (int i = scope_of(s, n); i >= 0; i = s->scopes[i].parent)
		if (s->scopes[i].kind == SK_FUNC)
			return s->scopes[i].node;
	return (TSNode){0};
}

/* A function's name: Python's `name` field; C's innermost declarator. */
char *pl_scan_function_name(struct src *s, TSNode fn)
{
	if (ts_node_is_null(fn))
		return NULL;
	TSNode name = ts_node_child_by_field_name(fn, "name", 4);
	if (ts_node_is_null(name)) {
		TSNode d = ts_node_child_by_field_name(fn, "declarator", 10);
		for (int k = 0; k < 16 && !ts_node_is_null(d); k++) {
			if (!strcmp(ts_node_type(d), "identifier")) {
				name = d;
				break;
			}
			d = ts_node_child_by_field_name(d, "declarator", 10);
		}
	}
	if (ts_node_is_null(name))
		return NULL;
	size_t len;
	const char *t = pl_scan_ntext(s, name, &len);
	return pl_scan_dupn(t, len);
}

/* Does text[0..len) match re? In place (REG_STARTEND): a file-wide
 * condition must not copy the file for every candidate match. */
int pl_scan_re_hit(const regex_t *re, const char *text, size_t len)
{
	regmatch_t m = {.rm_so = 0, .rm_eo = (regoff_t)len};
	return regexec(re, text, 1, &m, REG_STARTEND) == 0;
}

/* The capture named name in a match, or a null node. */
static TSNode capture_named(const TSQuery *q, const TSQueryMatch *m, const char *name)
{
	for (uint16_t i = 0; i < m->capture_count; i++) {
		uint32_t l;
		const char *n = ts_query_capture_name_for_id(q, m->captures[i].index, &l);
		if (strlen(name) == l && !strncmp(n, name, l))
			return m->captures[i].node;
	}
	return (TSNode){0};
}

/* re_text with each {@name} replaced by that capture's text, escaped. */
static char *expand_re(struct src *s, const TSQuery *q, const TSQueryMatch *m, const char *re_text)
{
	struct pl_strbuf b = {0};
	for (const char *p = re_text; *p;) {
		if (p[0] == '{' && p[1] == '@') {
			const char *end = strchr(p, '}');
			if (end) {
				char name[64];
				snprintf(name, sizeof name, "%.*s", (int)(end - p - 2), p + 2);
				TSNode n = capture_named(q, m, name);
				size_t len = 0;
				const char *t = ts_node_is_null(n) ? "" : pl_scan_ntext(s, n, &len);
				for (size_t i = 0; i < len; i++) {
					if (strchr(".[]{}()\\*+?^$|", t[i]))
						pl_strbuf_puts(&b, "\\");
					pl_strbuf_append(&b, t + i, 1);
				}
				p = end + 1;
				continue;
			}
		}
		pl_strbuf_append(&b, p, 1);
		p++;
	}
	if (!b.s)
		pl_strbuf_puts(&b, "");
	return pl_strbuf_take(&b);
}

/* Condition c's regular expression against text: compiled at load time,
 * or here when it names captures of this match. */
static int cond_match(struct src *s, const struct pl_rule *r, const struct cond *c,
		      const TSQueryMatch *m, const char *text, size_t len)
{
	if (c->has_re)
		return re_hit(&c->re, text, len);
	char *src = expand_re(s, r->query, m, c->re_text);
	regex_t re;
	int hit = 0;
	if (src && pl_regcomp(&re, src, REG_EXTENDED | REG_NOSUB) == 0) {
		hit = re_hit(&re, text, len);
		regfree(&re);
	}
	free(src);
	return hit;
}

int pl_scan_text_eq(struct src *s, TSNode a, TSNode b)
{
	size_t la, lb;
	const char *ta = pl_scan_ntext(s, a, &la), *tb = pl_scan_ntext(s, b, &lb);
	return la == lb && !memcmp(ta, tb, la);
}

static TSNode loop_iterable(TSNode loop)
{
	TSNode r = ts_node_child_by_field_name(loop, "right", 5);
	if (!ts_node_is_null(r))
		return r;
	/* C: the bound of `for (...; i < BOUND; ...)` */
	TSNode cond = ts_node_child_by_field_name(loop, "condition", 9);
	if (!ts_node_is_null(cond) && !strcmp(ts_node_type(cond), "binary_expression"))
		return ts_node_child_by_field_name(cond, "right", 5);
	/* comprehensions: for_in_clause children */
	uint32_t n = ts_node_named_child_count(loop);
	for (uint32_t i = 0; i < n; i++) {
		TSNode c = ts_node_named_child(loop, i);
		if (!strcmp(ts_node_type(c), "for_in_clause"))
			return ts_node_child_by_field_name(c, "right", 5);
	}
	return (TSNode){0};
}

/* ---- what the code says about sizes and arguments ---- */

int pl_scan_node_is(TSNode n, const char *type)
{
	return !ts_node_is_null(n) && !strcmp(ts_node_type(n), type);
}

/* Calls fn(node, arg) on every named node under root (root included) in
 * document order until it returns nonzero; that value, or 0. */
/* An attribute chain's last name (a.b.c: c); any other node as it is. */
TSNode pl_scan_last_name(TSNode n)
{
	return node_is(n, "attribute") ? ts_node_child_by_field_name(n, "attribute", 9) : n;
}

int pl_scan_walk_named(TSNode root, int (*fn)(TSNode, void *), void *arg)
{
	TSTreeCursor cur = ts_tree_cursor_new(root);
	int rc = 0;
	for (;;) {
		TSNode n = ts_tree_cursor_current_node(&cur);
		if (ts_node_is_named(n) && (rc = fn(n, arg)) != 0)
			break;
		if (ts_tree_cursor_goto_first_child(&cur))
			continue;
		while (!ts_tree_cursor_goto_next_sibling(&cur))
			if (!ts_tree_cursor_goto_parent(&cur) ||
			    ts_node_eq(ts_tree_cursor_current_node(&cur), root))
				goto out;
	}
out:
	ts_tree_cursor_delete(&cur);
	return rc;
}

/* The scope a name's local definitions are looked for in: its function,
 * or the whole file. */
TSNode pl_scan_name_scope(struct src *s, TSNode n)
{
	TSNode fn = pl_scan_enclosing_function(s, n);
	return ts_node_is_null(fn) ? s->root : fn;
}

/* A count that is one of few by its name: splits, blocks, folds, layers,
 * heads, devices, workers, ranks, dimensions (`n_splits`, `num_layers`,
 * `self.world_size`, `x.ndim`, `x.shape`) */
static int small_count_name(const char *t, size_t len)
{
	static regex_t re;
	static int state; /* 0 not compiled, 1 compiled, -1 failed */
	static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;
	pthread_mutex_lock(&mu);
	if (state == 0)
		state = regcomp(&re,
				"^(n_?|num_?|nb_?)?(splits|blocks|chunks|folds|layers|heads|"
				"devices|gpus|workers|ranks|replicas|shards|stages|dims?|ndims?|"
				"axes|world_size|shape)$",
				REG_EXTENDED | REG_NOSUB | REG_ICASE) == 0
			    ? 1
			    : -1;
	pthread_mutex_unlock(&mu);
	return state > 0 && len < 64 && re_hit(&re, t, len);
}

struct assign_find {
	struct src *s;
	const char *name;
	size_t len;
	int depth, found, all_small;
};

static int known_small_at(struct src *s, TSNode n, int depth);

static int assign_visit(TSNode n, void *arg)
{
	struct assign_find *a = arg;
	if (!node_is(n, "assignment") && !node_is(n, "augmented_assignment"))
		return 0;
	TSNode left = ts_node_child_by_field_name(n, "left", 4);
	size_t len;
	const char *t = node_is(left, "identifier") ? pl_scan_ntext(a->s, left, &len) : NULL;
	if (!t || len != a->len || memcmp(t, a->name, len))
		return 0;
	a->found = 1;
	if (node_is(n, "augmented_assignment") ||
	    !known_small_at(a->s, ts_node_child_by_field_name(n, "right", 5), a->depth + 1)) {
		a->all_small = 0;
		return 1;
	}
	return 0;
}

/* Is n (a Python iterable or count, a C loop bound) known to hold fewer
 * than 100 items? An integer literal under 100, a literal list, `range`,
 * `len`, `enumerate` or `zip` of such, `[x] * 4`, argc, a count named as
 * one of few (small_count_name), or a name every assignment of which in
 * its function is one of these. Unknown: 0. */
static int known_small_at(struct src *s, TSNode n, int depth)
{
	if (ts_node_is_null(n) || depth > 4)
		return 0;
	const char *ty = ts_node_type(n);
	size_t len;
	const char *t = pl_scan_ntext(s, n, &len);
	if (!strcmp(ty, "integer") || !strcmp(ty, "number_literal")) {
		char buf[24];
		if (len >= sizeof buf)
			return 0;
		memcpy(buf, t, len);
		buf[len] = '\0';
		char *e;
		long v = strtol(buf, &e, 0);
		return e != buf && v >= 0 && v < 100;
	}
	if (!strcmp(ty, "parenthesized_expression"))
		return known_small_at(s, ts_node_named_child(n, 0), depth + 1);
	if (!strcmp(ty, "list") || !strcmp(ty, "tuple") || !strcmp(ty, "set")) {
		uint32_t k = ts_node_named_child_count(n);
		for (uint32_t i = 0; i < k; i++)
			if (strstr(ts_node_type(ts_node_named_child(n, i)), "splat"))
				return 0;
		return k < 100;
	}
	if (!strcmp(ty, "binary_operator")) { /* [0] * 4 */
		TSNode op = ts_node_child_by_field_name(n, "operator", 8);
		size_t ol;
		const char *o = ts_node_is_null(op) ? "" : pl_scan_ntext(s, op, &ol);
		return *o == '*' &&
		       known_small_at(s, ts_node_child_by_field_name(n, "left", 4), depth + 1) &&
		       known_small_at(s, ts_node_child_by_field_name(n, "right", 5), depth + 1);
	}
	if (!strcmp(ty, "call")) {
		TSNode fn = ts_node_child_by_field_name(n, "function", 8);
		TSNode args = ts_node_child_by_field_name(n, "arguments", 9);
		if (!node_is(fn, "identifier") || ts_node_is_null(args))
			return 0;
		size_t fl;
		const char *f = pl_scan_ntext(s, fn, &fl);
		uint32_t k = ts_node_named_child_count(args);
		if (fl == 5 && !memcmp(f, "range", 5)) /* range(stop), range(start, stop...) */
			return k >= 1 &&
			       known_small_at(s, ts_node_named_child(args, k == 1 ? 0 : 1),
					      depth + 1);
		if ((fl == 3 && !memcmp(f, "len", 3)) || (fl == 9 && !memcmp(f, "enumerate", 9)) ||
		    (fl == 8 && !memcmp(f, "reversed", 8)) ||
		    (fl == 6 && !memcmp(f, "sorted", 6)) || (fl == 4 && !memcmp(f, "list", 4)) ||
		    (fl == 5 && !memcmp(f, "tuple", 5)))
			return k >= 1 && known_small_at(s, ts_node_named_child(args, 0), depth + 1);
		if (fl == 3 && !memcmp(f, "zip", 3)) { /* as short as its shortest */
			for (uint32_t i = 0; i < k; i++)
				if (known_small_at(s, ts_node_named_child(args, i), depth + 1))
					return 1;
			return 0;
		}
		return 0;
	}
	if (!strcmp(ty, "attribute") || !strcmp(ty, "field_expression")) {
		TSNode a =
		    ts_node_child_by_field_name(n, !strcmp(ty, "attribute") ? "attribute" : "field",
						!strcmp(ty, "attribute") ? 9 : 5);
		if (ts_node_is_null(a))
			return 0;
		t = pl_scan_ntext(s, a, &len);
		return small_count_name(t, len);
	}
	if (!strcmp(ty, "identifier")) {
		if ((len == 4 && !memcmp(t, "argc", 4)) || small_count_name(t, len))
			return 1;
		if (s->lang != PL_LANG_PYTHON)
			return 0;
		struct assign_find a = {s, t, len, depth, 0, 1};
		walk_named(name_scope(s, n), assign_visit, &a);
		return a.found && a.all_small;
	}
	return 0;
}

/* Is every loop around n, within its function, known to run few times?
 * Python: what the loop iterates; C: the bound of `i < BOUND` (either
 * side), or a header that walks argc/optind (argument parsing). A `while`
 * with no such bound is not known. No loop: 0. */
static int loops_small(struct src *s, TSNode n)
{
	static regex_t args_re;
	static int state;
	static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;
	pthread_mutex_lock(&mu);
	if (state == 0)
		state = regcomp(&args_re, "(^|[^[:alnum:]_])(argc|optind|argv)([^[:alnum:]_]|$)",
				REG_EXTENDED | REG_NOSUB) == 0
			    ? 1
			    : -1;
	pthread_mutex_unlock(&mu);
	int any = 0;
	for (TSNode p = pl_scan_enclosing_loop(s, n); !ts_node_is_null(p);
	     p = pl_scan_enclosing_loop(s, p)) {
		any = 1;
		if (s->lang == PL_LANG_C) {
			TSNode body = ts_node_child_by_field_name(p, "body", 4);
			uint32_t a = ts_node_start_byte(p), b = ts_node_is_null(body)
								    ? ts_node_end_byte(p)
								    : ts_node_start_byte(body);
			if (state > 0 && b <= s->len && a <= b &&
			    re_hit(&args_re, s->text + a, b - a))
				continue; /* argument parsing */
			TSNode cond = ts_node_child_by_field_name(p, "condition", 9);
			if (node_is(cond, "parenthesized_expression"))
				cond = ts_node_named_child(cond, 0);
			if (!node_is(cond, "binary_expression"))
				return 0;
			/* i < BOUND, i <= BOUND; BOUND > i, BOUND >= i */
			TSNode op = ts_node_child_by_field_name(cond, "operator", 8);
			size_t ol;
			const char *o = ts_node_is_null(op) ? "" : pl_scan_ntext(s, op, &ol);
			TSNode bound = *o == '<'   ? ts_node_child_by_field_name(cond, "right", 5)
				       : *o == '>' ? ts_node_child_by_field_name(cond, "left", 4)
						   : (TSNode){0};
			if (!known_small_at(s, bound, 0))
				return 0;
		}
		TSNode it = loop_iterable(p);
		if (ts_node_is_null(it) || !known_small_at(s, it, 0))
			return 0;
	}
	return any;
}

struct name_find {
	struct src *s;
	const char *name;
	size_t len;
};

static int name_visit(TSNode n, void *arg)
{
	struct name_find *f = arg;
	size_t len;
	const char *t = node_is(n, "identifier") ? pl_scan_ntext(f->s, n, &len) : NULL;
	return t && len == f->len && !memcmp(t, f->name, len);
}

/* The name, read outside the byte range [a, b) (the finding's own node). */
struct name_elsewhere {
	struct src *s;
	const char *name;
	size_t len;
	uint32_t a, b;
};

static int elsewhere_visit(TSNode n, void *arg)
{
	struct name_elsewhere *f = arg;
	size_t len;
	const char *t = node_is(n, "identifier") ? pl_scan_ntext(f->s, n, &len) : NULL;
	uint32_t at = ts_node_start_byte(n);
	return t && len == f->len && !memcmp(t, f->name, len) && (at < f->a || at >= f->b);
}

/* The file names an accelerator, read from its nodes (a regular
 * expression over the text took "mps" in json.dumps for one). Bit 1, any
 * accelerator: an attribute or name cuda, mps, xla, xm, torch_xla, device
 * or to_device, a string "cuda", "cuda:N", "mps" or "xla", pin_memory=True;
 * bit 2, CUDA: the name cuda or a string "cuda[:N]"; bit 4: pin_memory=True
 * somewhere; bit 8: non_blocking=True somewhere (copies meant to overlap,
 * which they do only from pinned memory). */
struct device_find {
	struct src *s;
	int want, seen;
};

static int device_visit(TSNode n, void *arg)
{
	struct device_find *f = arg;
	size_t len;
	const char *t;
	if (node_is(n, "identifier")) {
		static const char *const names[] = {"cuda",	 "mps",	   "xla",      "xm",
						    "torch_xla", "device", "to_device"};
		t = pl_scan_ntext(f->s, n, &len);
		for (size_t i = 0; i < sizeof names / sizeof *names; i++)
			if (len == strlen(names[i]) && !memcmp(t, names[i], len))
				f->seen |= i == 0 ? 3 : 1;
	} else if (node_is(n, "string")) {
		t = pl_scan_ntext(f->s, n, &len);
		while (len && (*t == 'r' || *t == 'b' || *t == 'f' || *t == 'u' || *t == 'R'))
			t++, len--; /* a prefix */
		if (len >= 2 && (*t == '"' || *t == '\'') && t[len - 1] == *t) {
			t++;
			len -= 2;
			size_t k = len >= 4 && !memcmp(t, "cuda", 4)			     ? 4
				   : len >= 3 && (!memcmp(t, "mps", 3) || !memcmp(t, "xla", 3)) ? 3
												 : 0;
			if (k && k < len && t[k] == ':') /* cuda:0 */
				for (k++; k < len && t[k] >= '0' && t[k] <= '9';)
					k++;
			if (k && k == len)
				f->seen |= *t == 'c' ? 3 : 1;
		}
	} else if (node_is(n, "keyword_argument")) {
		t = pl_scan_ntext(f->s, ts_node_child_by_field_name(n, "name", 4), &len);
		if (len == 10 && !memcmp(t, "pin_memory", 10) &&
		    node_is(ts_node_child_by_field_name(n, "value", 5), "true"))
			f->seen |= 1 | 4;
		if (len == 12 && !memcmp(t, "non_blocking", 12) &&
		    node_is(ts_node_child_by_field_name(n, "value", 5), "true"))
			f->seen |= 8;
	}
	return (f->seen & f->want) == f->want;
}

/* The X of `import torch as X` in an import statement, NULL where it
 * holds none. */
static const char *torch_alias_in(struct src *s, TSNode imp, size_t *len)
{
	for (uint32_t i = 0; i < ts_node_named_child_count(imp); i++) {
		TSNode a = ts_node_named_child(imp, i);
		if (!node_is(a, "aliased_import"))
			continue;
		size_t nl;
		const char *nt = pl_scan_ntext(s, ts_node_child_by_field_name(a, "name", 4), &nl);
		TSNode al = ts_node_child_by_field_name(a, "alias", 5);
		if (nl == 5 && !memcmp(nt, "torch", 5) && !ts_node_is_null(al))
			return pl_scan_ntext(s, al, len);
	}
	return NULL;
}

int pl_scan_is_torch(struct src *s, TSNode n)
{
	size_t len;
	const char *t = pl_scan_ntext(s, n, &len);
	if (len == 5 && !memcmp(t, "torch", 5))
		return 1;
	if (!s->torch_known) {
		/* the file's top-level imports, and those one block down (under
		 * try:, if TYPE_CHECKING:, else:) */
		s->torch_known = 1;
		for (uint32_t i = 0; !s->torch_as && i < ts_node_named_child_count(s->root); i++) {
			TSNode c = ts_node_named_child(s->root, i);
			if (node_is(c, "import_statement")) {
				s->torch_as = torch_alias_in(s, c, &s->torch_as_len);
				continue;
			}
			if (!node_is(c, "try_statement") && !node_is(c, "if_statement"))
				continue;
			for (uint32_t j = 0; !s->torch_as && j < ts_node_named_child_count(c); j++) {
				TSNode b = ts_node_named_child(c, j);
				if (!node_is(b, "block"))
					continue;
				for (uint32_t k = 0; !s->torch_as && k < ts_node_named_child_count(b); k++)
					if (node_is(ts_node_named_child(b, k), "import_statement"))
						s->torch_as = torch_alias_in(
						    s, ts_node_named_child(b, k), &s->torch_as_len);
			}
		}
	}
	return s->torch_as && len == s->torch_as_len && !memcmp(t, s->torch_as, len);
}

static int uses_device(struct src *s, int want)
{
	if (!(s->device_known & want)) {
		struct device_find f = {s, want, 0};
		walk_named(s->root, device_visit, &f);
		s->device |= f.seen;
		s->device_known |= want;
	}
	return (s->device & want) != 0;
}

/* A name's words (split at '_', case ignored) include one of words
 * (NULL-terminated); eval_words: one that names an
 * evaluation split: test, val, valid, validation, eval, evaluation, dev. */
static int has_word(const char *t, size_t len, const char *const *words)
{
	size_t i = 0;
	while (i < len) {
		size_t j = i;
		while (j < len && t[j] != '_')
			j++;
		for (size_t k = 0; words[k]; k++)
			if (j - i == strlen(words[k]) && !strncasecmp(t + i, words[k], j - i))
				return 1;
		i = j + 1;
	}
	return 0;
}

static int eval_words(const char *t, size_t len)
{
	static const char *const words[] = {"test", "val",	  "valid", "validation",
					    "eval", "evaluation", "dev",   "testing", NULL};
	return has_word(t, len, words);
}

/* The call is bound to a name for an evaluation split: `val_loader =
 * DataLoader(...)`, `self.test_loader = ...`, `loaders["val"] = ...`
 * (an evaluation loader runs once an epoch, without backward: its
 * loading is not what the training step waits for). */
static int eval_loader(struct src *s, TSNode call)
{
	TSNode p = ts_node_parent(call);
	if (!node_is(p, "assignment"))
		return 0;
	TSNode left = ts_node_child_by_field_name(p, "left", 4);
	left = last_name(left);
	size_t len;
	if (node_is(left, "identifier")) {
		const char *t = pl_scan_ntext(s, left, &len);
		return eval_words(t, len);
	}
	if (node_is(left, "subscript")) {
		TSNode key = ts_node_child_by_field_name(left, "subscript", 9);
		if (!node_is(key, "string"))
			return 0;
		const char *t = pl_scan_ntext(s, key, &len);
		return len > 2 && eval_words(t + 1, len - 2);
	}
	return 0;
}

static TSNode loop_above(struct src *s, TSNode n);

/* The loop variables' names of a Python for loop (its `left`: a name or
 * a tuple of names), into names[] (at most max). */
static size_t loop_vars(struct src *s, TSNode loop, const char **names, size_t *lens, size_t max)
{
	TSNode left = ts_node_child_by_field_name(loop, "left", 4);
	size_t n = 0;
	if (node_is(left, "identifier")) {
		names[0] = pl_scan_ntext(s, left, &lens[0]);
		return 1;
	}
	uint32_t k = ts_node_is_null(left) ? 0 : ts_node_named_child_count(left);
	for (uint32_t i = 0; i < k && n < max; i++) {
		TSNode x = ts_node_named_child(left, i);
		if (node_is(x, "identifier"))
			names[n] = pl_scan_ntext(s, x, &lens[n]), n++;
	}
	return n;
}

struct pair_find {
	struct src *s;
	const char *a[4], *b[4];
	size_t la[4], lb[4], na, nb;
	int seen_a, seen_b;
};

static int pair_names_visit(TSNode n, void *arg)
{
	struct pair_find *f = arg;
	size_t len;
	const char *t = node_is(n, "identifier") ? pl_scan_ntext(f->s, n, &len) : NULL;
	for (size_t i = 0; t && i < f->na; i++)
		f->seen_a |= len == f->la[i] && !memcmp(t, f->a[i], len);
	for (size_t i = 0; t && i < f->nb; i++)
		f->seen_b |= len == f->lb[i] && !memcmp(t, f->b[i], len);
	return 0;
}

/* a comparison (==, !=, <, is, in...) naming a variable of each loop */
static int pair_compare_visit(TSNode n, void *arg)
{
	struct pair_find *f = arg;
	if (!node_is(n, "comparison_operator"))
		return 0;
	f->seen_a = f->seen_b = 0;
	walk_named(n, pair_names_visit, f);
	return f->seen_a && f->seen_b;
}

/* The inner loop (node) compares its elements with the outer loop's
 * (that iterates the same collection): the pairwise search that a set,
 * a dict or a sort replaces. Without it, the n^2 pairs may be what the
 * function computes (all pairs, a matrix, the published algorithm). */
static int pairwise_compare(struct src *s, TSNode node)
{
	TSNode outer = loop_above(s, node);
	if (ts_node_is_null(outer) || !node_is(node, "for_statement"))
		return 0;
	struct pair_find f = {.s = s};
	f.na = loop_vars(s, outer, f.a, f.la, 4);
	f.nb = loop_vars(s, node, f.b, f.lb, 4);
	TSNode body = ts_node_child_by_field_name(node, "body", 4);
	return f.na && f.nb && !ts_node_is_null(body) && walk_named(body, pair_compare_visit, &f);
}

/* The loop (node) changes, or may change, what it iterates (cap's name):
 * a method call on it other than a reader, `del NAME[...]`, an
 * assignment to NAME[...], NAME passed to a call, or a yield (the caller
 * runs between iterations). */
struct mut_find {
	struct src *s;
	const char *name;
	size_t len;
};

static int same_name(struct mut_find *f, TSNode n)
{
	size_t len;
	const char *t = node_is(n, "identifier") ? pl_scan_ntext(f->s, n, &len) : NULL;
	return t && len == f->len && !memcmp(t, f->name, len);
}

static int mut_visit(TSNode n, void *arg)
{
	struct mut_find *f = arg;
	if (node_is(n, "yield"))
		return 1;
	if (node_is(n, "call")) {
		TSNode fn = ts_node_child_by_field_name(n, "function", 8);
		if (node_is(fn, "attribute") &&
		    same_name(f, ts_node_child_by_field_name(fn, "object", 6))) {
			static const char *const readers[] = {
			    "get", "keys", "values", "items", "copy", "count", "index",
			    "has_node", "has_edge", "neighbors", "successors", "predecessors", "degree"};
			size_t len;
			const char *m =
			    pl_scan_ntext(f->s, ts_node_child_by_field_name(fn, "attribute", 9), &len);
			for (size_t i = 0; i < sizeof readers / sizeof *readers; i++)
				if (len == strlen(readers[i]) && !memcmp(m, readers[i], len))
					return 0;
			return 1;
		}
		TSNode args = ts_node_child_by_field_name(n, "arguments", 9);
		uint32_t k = ts_node_is_null(args) ? 0 : ts_node_named_child_count(args);
		for (uint32_t i = 0; i < k; i++)
			if (same_name(f, ts_node_named_child(args, i)))
				return 1;
		return 0;
	}
	if (node_is(n, "subscript") && same_name(f, ts_node_child_by_field_name(n, "value", 5))) {
		TSNode p = ts_node_parent(n);
		if (node_is(p, "delete_statement") || node_is(p, "expression_list"))
			return node_is(p, "delete_statement") ||
			       node_is(ts_node_parent(p), "delete_statement");
		if ((node_is(p, "assignment") || node_is(p, "augmented_assignment")) &&
		    ts_node_eq(ts_node_child_by_field_name(p, "left", 4), n))
			return 1;
	}
	return 0;
}

static int loop_mutates(struct src *s, TSNode loop, TSNode cap)
{
	struct mut_find f = {s, NULL, 0};
	f.name = pl_scan_ntext(s, cap, &f.len);
	TSNode body = ts_node_child_by_field_name(loop, "body", 4);
	return !ts_node_is_null(body) && walk_named(body, mut_visit, &f);
}

/* Does the loop bind the name anew on each pass: its loop variable, or
 * assigned in its body (`net = getattr(self, "net" + name)`)? */
static int rebind_visit(TSNode n, void *arg)
{
	struct name_find *f = arg;
	if (!node_is(n, "assignment") && !node_is(n, "for_statement"))
		return 0;
	TSNode left = ts_node_child_by_field_name(n, "left", 4);
	return !ts_node_is_null(left) && walk_named(left, name_visit, f);
}

static int loop_rebinds(struct src *s, TSNode loop, TSNode cap)
{
	struct name_find f = {s, NULL, 0};
	f.name = pl_scan_ntext(s, cap, &f.len);
	TSNode left = ts_node_child_by_field_name(loop, "left", 4);
	if (!ts_node_is_null(left) && walk_named(left, name_visit, &f))
		return 1;
	TSNode body = ts_node_child_by_field_name(loop, "body", 4);
	return !ts_node_is_null(body) && walk_named(body, rebind_visit, &f);
}

/* An f-string's interpolated names: is one of them bound anew by the
 * loop (f"depth_{i:03d}" in `for i in ...`: a new file each pass)? */
struct fstring_find {
	struct src *s;
	TSNode loop;
};

static int fstring_visit(TSNode n, void *arg)
{
	struct fstring_find *f = arg;
	return node_is(n, "identifier") && loop_rebinds(f->s, f->loop, n);
}

struct once_find {
	struct src *s;
	const char *name;
	size_t len;
	TSNode def; /* the assignment that binds it */
	int uses, once;
};

/* every use of the name: is it `next(iter(NAME))`? */
static int once_visit(TSNode n, void *arg)
{
	struct once_find *f = arg;
	size_t len;
	const char *t = node_is(n, "identifier") ? pl_scan_ntext(f->s, n, &len) : NULL;
	if (!t || len != f->len || memcmp(t, f->name, len))
		return 0;
	uint32_t a = ts_node_start_byte(n);
	if (a >= ts_node_start_byte(f->def) && a < ts_node_end_byte(f->def))
		return 0; /* the binding itself */
	f->uses++;
	/* next(iter(NAME)): the text around it, without a parent walk */
	static const char pre[] = "next(iter(";
	size_t pl = sizeof pre - 1;
	f->once += a >= pl && !memcmp(f->s->text + a - pl, pre, pl) && a + len + 2 <= f->s->len &&
		   !memcmp(f->s->text + a + len, "))", 2);
	return 0;
}

/* The DataLoader is read for one batch only: `next(iter(DataLoader(..)))`,
 * or bound to a name whose every use is `next(iter(name))`. */
static int read_once(struct src *s, TSNode call)
{
	uint32_t a = ts_node_start_byte(call);
	static const char pre[] = "next(iter(";
	size_t pl = sizeof pre - 1;
	if (a >= pl && !memcmp(s->text + a - pl, pre, pl))
		return 1;
	TSNode p = ts_node_parent(call);
	if (!node_is(p, "assignment"))
		return 0;
	TSNode left = ts_node_child_by_field_name(p, "left", 4);
	if (!node_is(left, "identifier"))
		return 0;
	struct once_find f = {.s = s, .def = p};
	f.name = pl_scan_ntext(s, left, &f.len);
	walk_named(name_scope(s, call), once_visit, &f);
	return f.uses > 0 && f.once == f.uses;
}

struct kw_find {
	struct src *s;
	const char *name;
	size_t len;
	struct pl_strbuf *out;
	int found;
	TSNode scope; /* where the names are looked for */
	int depth;    /* NAME.update(OTHER): OTHER's dict, a level down */
};

/* {...} or dict(...) */
static int dict_value(struct src *s, TSNode n)
{
	size_t len;
	const char *t;
	return node_is(n, "dictionary") ||
	       (node_is(n, "call") &&
		(t = pl_scan_ntext(s, ts_node_child_by_field_name(n, "function", 8), &len)) &&
		len == 4 && !memcmp(t, "dict", 4));
}

/* NAME = {...} / dict(...) (either branch of a conditional expression),
 * NAME.update(...), NAME["key"] = ...: what they say, appended to out */
static int kw_visit(TSNode n, void *arg)
{
	struct kw_find *k = arg;
	size_t len;
	const char *t;
	TSNode target = {0}, what = {0};
	if (node_is(n, "assignment")) {
		TSNode left = ts_node_child_by_field_name(n, "left", 4);
		TSNode right = ts_node_child_by_field_name(n, "right", 5);
		if (node_is(left, "identifier") &&
		    (dict_value(k->s, right) ||
		     /* {...} if args.cuda else {}: what either branch says */
		     (node_is(right, "conditional_expression") &&
		      dict_value(k->s, ts_node_named_child(right, 0)) &&
		      dict_value(k->s, ts_node_named_child(right, 2))))) {
			target = left;
			what = right;
		} else if (node_is(left, "subscript")) {
			target = ts_node_child_by_field_name(left, "value", 5);
			what = n;
		}
	} else if (node_is(n, "call")) {
		TSNode fn = ts_node_child_by_field_name(n, "function", 8);
		if (node_is(fn, "attribute") &&
		    (t = pl_scan_ntext(k->s, ts_node_child_by_field_name(fn, "attribute", 9),
				       &len)) &&
		    len == 6 && !memcmp(t, "update", 6)) {
			target = ts_node_child_by_field_name(fn, "object", 6);
			what = ts_node_child_by_field_name(n, "arguments", 9);
		}
	}
	if (!node_is(target, "identifier") || ts_node_is_null(what))
		return 0;
	t = pl_scan_ntext(k->s, target, &len);
	if (len != k->len || memcmp(t, k->name, len))
		return 0;
	k->found = 1;
	t = pl_scan_ntext(k->s, what, &len);
	pl_strbuf_append(k->out, t, len);
	pl_strbuf_puts(k->out, "\n");
	/* NAME.update(OTHER) with OTHER a dict the function builds: what
	 * OTHER says too (kwargs.update(cuda_kwargs)) */
	if (node_is(what, "argument_list") && ts_node_named_child_count(what) == 1 &&
	    node_is(ts_node_named_child(what, 0), "identifier") && k->depth < 2) {
		struct kw_find o = {k->s, NULL, 0, k->out, 0, k->scope, k->depth + 1};
		o.name = pl_scan_ntext(k->s, ts_node_named_child(what, 0), &o.len);
		if (o.len != k->len || memcmp(o.name, k->name, o.len))
			walk_named(k->scope, kw_visit, &o);
	}
	return 0;
}

/* The arguments of the call n as text, with each `**name` replaced by
 * what its function puts in that dict. NULL where an argument cannot be
 * read (`*args`, `**self.opts`, a dict built elsewhere): the caller then
 * does not judge what the call is missing. */
static char *call_args_text(struct src *s, TSNode call)
{
	TSNode args = ts_node_child_by_field_name(call, "arguments", 9);
	if (ts_node_is_null(args))
		return NULL;
	struct pl_strbuf b = {0};
	size_t len;
	const char *t = pl_scan_ntext(s, args, &len);
	pl_strbuf_append(&b, t, len);
	pl_strbuf_puts(&b, "\n");
	uint32_t k = ts_node_named_child_count(args);
	for (uint32_t i = 0; i < k; i++) {
		TSNode a = ts_node_named_child(args, i);
		if (node_is(a, "list_splat")) {
			free(b.s);
			return NULL;
		}
		if (!node_is(a, "dictionary_splat"))
			continue;
		TSNode name = ts_node_named_child(a, 0);
		struct kw_find f = {s, NULL, 0, &b, 0, name_scope(s, call), 0};
		if (node_is(name, "identifier")) {
			f.name = pl_scan_ntext(s, name, &f.len);
			walk_named(f.scope, kw_visit, &f);
		}
		if (!f.found) {
			free(b.s);
			return NULL;
		}
	}
	if (b.failed) {
		free(b.s);
		return NULL;
	}
	return pl_strbuf_take(&b);
}

/* Loop p calls backward(): does its body run once per training step? Yes
 * where a backward() in it is outside every loop nested in it. Where all
 * are in nested loops, p holds the step loop: it is an epoch loop (what
 * runs in it after the step loop ends runs once per epoch, the accepted
 * place to read a metric) when its header says epoch or a loop between
 * it and a backward() iterates the data (loader, batch, data) or epochs;
 * otherwise the
 * nested loop is a step's micro-batches (gradient accumulation) and p is
 * the step. */
/* Where a loop's header ends: its iterable's (condition's) end, so that a
 * comment between the colon and the body is not read as the header; the
 * body's start where it has neither. */
static uint32_t header_end(TSNode loop)
{
	TSNode end = ts_node_child_by_field_name(loop, "right", 5);
	if (ts_node_is_null(end))
		end = ts_node_child_by_field_name(loop, "condition", 9);
	if (!ts_node_is_null(end))
		return ts_node_end_byte(end);
	TSNode body = ts_node_child_by_field_name(loop, "body", 4);
	return ts_node_is_null(body) ? ts_node_end_byte(loop) : ts_node_start_byte(body);
}

static int step_loop(struct src *s, TSNode p)
{
	size_t len;
	const char *t = pl_scan_ntext(s, p, &len);
	int data_inside = 0;
	for (const char *q = t; (q = memmem(q, len - (size_t)(q - t), "backward(", 9)); q += 9) {
		if (q == t || q[-1] != '.')
			continue;
		uint32_t at = (uint32_t)(q - s->text);
		TSNode n = ts_node_descendant_for_byte_range(p, at, at + 1);
		int nested = 0;
		/* each loop between it and p: one over the data or over epochs
		 * (PPO's `for epoch in range(update_epochs):` around its
		 * minibatches) runs many steps in each pass of p */
		for (TSNode u = ts_node_parent(n); !ts_node_is_null(u) && !ts_node_eq(u, p);
		     u = ts_node_parent(u)) {
			if (!is_loop(s, ts_node_type(u)))
				continue;
			nested = 1;
			uint32_t a = ts_node_start_byte(u), b = header_end(u);
			for (uint32_t k = a; k + 4 <= b && !data_inside; k++)
				data_inside = !strncasecmp(s->text + k, "load", 4) ||
					      !strncasecmp(s->text + k, "batch", 5) ||
					      !strncasecmp(s->text + k, "data", 4) ||
					      !strncasecmp(s->text + k, "epoch", 5);
		}
		if (!nested)
			return 1;
	}
	uint32_t a = ts_node_start_byte(p), b = header_end(p);
	int epoch = 0;
	for (uint32_t k = a; k + 5 <= b && !epoch; k++)
		epoch = !strncasecmp(s->text + k, "epoch", 5);
	return !epoch && !data_inside;
}

/* The innermost loop around n in its function, from the tree itself: the
 * scopes are found as the walk goes, and a helper's callers may come
 * later in the file. */
static TSNode loop_above(struct src *s, TSNode n)
{
	for (TSNode p = ts_node_parent(n); !ts_node_is_null(p); p = ts_node_parent(p)) {
		const char *ty = ts_node_type(p);
		if (!strcmp(ty, "function_definition") || !strcmp(ty, "lambda") ||
		    !strcmp(ty, "class_definition"))
			break;
		if (is_loop(s, ty))
			return p;
	}
	return (TSNode){0};
}

/* Does t call a backward() as bwd reads one (x.backward(), a helper's
 * backward(loss, scaler), self.manual_backward(loss))? Every such text
 * holds "backward(": looked for first, the regular expression only then. */
static int bwd_hit(const regex_t *bwd, const char *t, size_t len)
{
	return memmem(t, len, "backward(", 9) && re_hit(bwd, t, len);
}

/* The first loop around node that calls backward() (bwd) is a step loop
 * (in-training-loop). */
static int training_loop_at(struct src *s, const regex_t *bwd, TSNode node)
{
	size_t len;
	for (TSNode p = loop_above(s, node); !ts_node_is_null(p); p = loop_above(s, p)) {
		const char *t = pl_scan_ntext(s, p, &len);
		if (bwd_hit(bwd, t, len))
			return step_loop(s, p);
	}
	return 0;
}

/* A name bound in scope to a condition that reads as every N steps
 * (`step_eval = step % hp.eval_interval == 0`, then `if step_eval:`). */
struct periodic_name {
	struct src *s;
	const regex_t *per;
	const char *name;
	size_t len;
};

static int periodic_name_visit(TSNode n, void *arg)
{
	struct periodic_name *f = arg;
	if (!node_is(n, "assignment"))
		return 0;
	TSNode left = ts_node_child_by_field_name(n, "left", 4);
	TSNode right = ts_node_child_by_field_name(n, "right", 5);
	size_t len, rlen;
	const char *t = node_is(left, "identifier") ? pl_scan_ntext(f->s, left, &len) : NULL;
	if (!t || len != f->len || memcmp(t, f->name, len) || ts_node_is_null(right))
		return 0;
	const char *r = pl_scan_ntext(f->s, right, &rlen);
	return re_hit(f->per, r, rlen);
}

/* A branch's condition reads as every N steps: by its text, or (one name
 * further) a name, or an `and`/`or` of names, one of which is bound in
 * the function to such a condition. */
static int periodic_cond(struct src *s, const regex_t *per, TSNode cond, int depth)
{
	size_t len;
	const char *t = pl_scan_ntext(s, cond, &len);
	if (re_hit(per, t, len))
		return 1;
	if (depth > 4)
		return 0;
	if (node_is(cond, "parenthesized_expression"))
		return periodic_cond(s, per, ts_node_named_child(cond, 0), depth + 1);
	if (node_is(cond, "boolean_operator"))
		return periodic_cond(s, per, ts_node_child_by_field_name(cond, "left", 4), depth + 1) ||
		       periodic_cond(s, per, ts_node_child_by_field_name(cond, "right", 5), depth + 1);
	if (!node_is(cond, "identifier"))
		return 0;
	/* a scope whose text has nothing a periodic condition is made of
	 * binds no name to one: one look per scope, not a walk per branch */
	TSNode scope = name_scope(s, cond);
	uint32_t at = ts_node_start_byte(scope) + 1;
	if (s->pscope != at) {
		static const char *const parts[] = {"%", "every", "freq", "interval", "period", "==",
						    NULL};
		size_t sl;
		const char *st = pl_scan_ntext(s, scope, &sl);
		s->pscope = at;
		s->pscope_has = 0;
		for (int i = 0; parts[i] && !s->pscope_has; i++)
			s->pscope_has = memmem(st, sl, parts[i], strlen(parts[i])) != NULL;
	}
	if (!s->pscope_has)
		return 0;
	struct periodic_name f = {s, per, t, len};
	return walk_named(scope, periodic_name_visit, &f);
}

/* node is in the body of an `if`/`elif` (not its else) whose condition
 * matches per (every N steps), below stop (a loop above it; null: up to
 * its innermost loop) */
static int periodic_below(struct src *s, const regex_t *per, TSNode node, TSNode stop)
{
	if (ts_node_is_null(stop))
		stop = loop_above(s, node);
	for (TSNode ch = node, p = ts_node_parent(node); !ts_node_is_null(p);
	     ch = p, p = ts_node_parent(p)) {
		if (!ts_node_is_null(stop) && ts_node_eq(p, stop))
			break;
		const char *ty = ts_node_type(p);
		if (strcmp(ty, "if_statement") && strcmp(ty, "elif_clause"))
			continue;
		TSNode body = ts_node_child_by_field_name(p, "consequence", 11);
		TSNode cond = ts_node_child_by_field_name(p, "condition", 9);
		if (ts_node_is_null(body) || ts_node_is_null(cond) || !ts_node_eq(ch, body))
			continue;
		if (periodic_cond(s, per, cond, 0))
			return 1;
	}
	return 0;
}

static int periodic_at(struct src *s, const regex_t *per, TSNode node)
{
	return periodic_below(s, per, node, (TSNode){0});
}

/* The step loop around node (the first loop that calls backward(), when
 * it steps), or null: a periodic branch anywhere below it makes node run
 * less than once per step, inner loops between them included (a
 * validation loop under `if step % val_every == 0:`). */
static TSNode step_loop_above(struct src *s, const regex_t *bwd, TSNode node)
{
	size_t len;
	for (TSNode p = loop_above(s, node); !ts_node_is_null(p); p = loop_above(s, p)) {
		const char *t = pl_scan_ntext(s, p, &len);
		if (bwd_hit(bwd, t, len))
			return step_loop(s, p) ? p : (TSNode){0};
	}
	return (TSNode){0};
}

static int periodic_in_step(struct src *s, const regex_t *per, const regex_t *bwd, TSNode node)
{
	return periodic_below(s, per, node, step_loop_above(s, bwd, node));
}

/* A call of the function named name (f(...), self.f(...), obj.f(...))
 * outside the function itself, run once per training step. */
struct step_call_find {
	struct src *s;
	const char *name;
	size_t len;
	TSNode self; /* the function: its own (recursive) calls do not count */
	const regex_t *bwd, *per;
	int step_fn; /* the function is a step itself (its backward() in no loop) */
};

static int step_call_visit(TSNode n, void *arg)
{
	struct step_call_find *f = arg;
	if (!node_is(n, "call"))
		return 0;
	TSNode fn = ts_node_child_by_field_name(n, "function", 8);
	fn = last_name(fn);
	size_t len;
	const char *t = node_is(fn, "identifier") ? pl_scan_ntext(f->s, fn, &len) : NULL;
	if (!t || len != f->len || memcmp(t, f->name, len))
		return 0;
	uint32_t at = ts_node_start_byte(n);
	if (at >= ts_node_start_byte(f->self) && at < ts_node_end_byte(f->self))
		return 0;
	/* a step function runs once per pass of any loop that calls it
	 * (`for epoch in ...: train(epoch)` where train() is the step) */
	if (f->step_fn && !ts_node_is_null(loop_above(f->s, n)))
		return !periodic_at(f->s, f->per, n);
	return training_loop_at(f->s, f->bwd, n) && !periodic_in_step(f->s, f->per, f->bwd, n);
}

/* The first positional argument of a call (null: none). */
static TSNode first_arg(TSNode call)
{
	TSNode args = ts_node_child_by_field_name(call, "arguments", 9);
	TSNode a = ts_node_is_null(args) || !ts_node_named_child_count(args)
		       ? (TSNode){0}
		       : ts_node_named_child(args, 0);
	return node_is(a, "keyword_argument") ? (TSNode){0} : a;
}

enum { TF_NONE, TF_FILL, TF_CTOR, TF_NUMPY };

/* What a call torch.F(...) (torch as the file imports it) makes in host
 * memory, without device=: TF_FILL, a factory that fills one
 * (torch.zeros(n), torch.rand(n), torch.arange(0, n); not a shape of 0,
 * torch.empty(0), which holds nothing); TF_CTOR, a constructor that
 * copies what it is given (torch.tensor, torch.LongTensor...); TF_NUMPY,
 * torch.from_numpy; TF_NONE for anything else. */
static int torch_factory(struct src *s, TSNode call)
{
	if (!node_is(call, "call"))
		return TF_NONE;
	TSNode fn = ts_node_child_by_field_name(call, "function", 8);
	TSNode mod = node_is(fn, "attribute") ? ts_node_child_by_field_name(fn, "object", 6)
					      : (TSNode){0};
	if (!node_is(mod, "identifier") || !pl_scan_is_torch(s, mod))
		return TF_NONE;
	static const char *const fills[] = {"zeros",   "ones",	   "full",   "empty",
					    "eye",     "arange",   "rand",   "randn",
					    "randint", "randperm", "normal", "linspace",
					    "tril",    "triu",	   NULL};
	static const char *const starts[] = {"arange", "linspace", "randint", "normal", NULL};
	static const char *const ctors[] = {"tensor",	   "Tensor",   "FloatTensor",
					    "LongTensor", "IntTensor", "as_tensor", NULL};
	size_t fl, tl, al;
	const char *ft = pl_scan_ntext(s, last_name(fn), &fl);
	const char *t = pl_scan_ntext(s, call, &tl);
	if (memmem(t, tl, "device", 6))
		return TF_NONE;
	if (pl_scan_in_list(ft, fl, fills)) {
		/* a shape of 0; not where the 0 is a start (torch.arange(0, n)) */
		TSNode a = first_arg(call);
		const char *at = node_is(a, "integer") ? pl_scan_ntext(s, a, &al) : NULL;
		return at && al == 1 && *at == '0' && !pl_scan_in_list(ft, fl, starts) ? TF_NONE
											 : TF_FILL;
	}
	if (pl_scan_in_list(ft, fl, ctors))
		return TF_CTOR;
	return fl == 10 && !memcmp(ft, "from_numpy", 10) ? TF_NUMPY : TF_NONE;
}

/* A call that makes a tensor in host memory (torch_factory): a filling
 * factory, or with ctors also a constructor or from_numpy. */
static int host_made_call(struct src *s, TSNode call, int ctors)
{
	int k = torch_factory(s, call);
	return k == TF_FILL || (ctors && k != TF_NONE);
}

/* A torch call that makes a tensor on the host for a copy to follow
 * (PY038): a filling factory (torch_factory); a constructor of a literal
 * or a range (torch.tensor([0.5]), torch.LongTensor(range(n))); from_numpy
 * of numpy noise or a numpy constant (np.random.normal(...), np.triu(...)).
 * A constructor or from_numpy of anything else copies data that has to
 * reach the device anyway (a batch). */
static int made_for_copy(struct src *s, TSNode call)
{
	static const char *const np_consts[] = {"triu",	     "tril",	   "ones", "zeros",
						"eye",	     "full",	   "arange", "ones_like",
						"zeros_like", "full_like", NULL};
	int k = torch_factory(s, call);
	if (k == TF_FILL)
		return 1;
	if (k == TF_NONE)
		return 0;
	size_t al, fl;
	TSNode a = first_arg(call);
	if (k == TF_CTOR) {
		if (node_is(a, "integer") || node_is(a, "float") || node_is(a, "list") ||
		    node_is(a, "tuple"))
			return 1;
		TSNode af = node_is(a, "call") ? ts_node_child_by_field_name(a, "function", 8)
					       : (TSNode){0};
		const char *rt = node_is(af, "identifier") ? pl_scan_ntext(s, af, &al) : NULL;
		return rt && al == 5 && !memcmp(rt, "range", 5);
	}
	/* from_numpy(np.F(...)) or from_numpy(np.random.F(...)) */
	if (!node_is(a, "call"))
		return 0;
	TSNode nf = ts_node_child_by_field_name(a, "function", 8);
	TSNode no = node_is(nf, "attribute") ? ts_node_child_by_field_name(nf, "object", 6)
					     : (TSNode){0};
	int rnd = 0;
	if (node_is(no, "attribute")) {
		const char *rt = pl_scan_ntext(s, last_name(no), &al);
		rnd = al == 6 && !memcmp(rt, "random", 6);
		no = ts_node_child_by_field_name(no, "object", 6);
		if (!rnd)
			return 0;
	}
	const char *nt = node_is(no, "identifier") ? pl_scan_ntext(s, no, &al) : NULL;
	if (!nt || !((al == 2 && !memcmp(nt, "np", 2)) || (al == 5 && !memcmp(nt, "numpy", 5))))
		return 0;
	const char *lt = pl_scan_ntext(s, last_name(nf), &fl);
	return rnd || pl_scan_in_list(lt, fl, np_consts);
}

/* e is a tensor made in host memory for a copy to follow: made_for_copy,
 * through parentheses, arithmetic, a torch function of one or a method
 * of one (torch.exp(torch.arange(n) * -c), (torch.ones(n) * i),
 * torch.arange(n).unsqueeze(0)), legacy Variable(...); a name last bound
 * to one before at in its function (y = torch.ones(n); y.cuda()); a
 * self.NAME its class binds to one (a table built in __init__, not
 * registered as a buffer, so it stays on the host when the module
 * moves). */
static int host_expr(struct src *s, TSNode at, TSNode e, int depth)
{
	size_t len;
	if (ts_node_is_null(e) || depth > 4)
		return 0;
	if (node_is(e, "parenthesized_expression"))
		return host_expr(s, at, ts_node_named_child(e, 0), depth + 1);
	if (node_is(e, "unary_operator"))
		return host_expr(s, at, ts_node_child_by_field_name(e, "argument", 8), depth + 1);
	if (node_is(e, "binary_operator"))
		return host_expr(s, at, ts_node_child_by_field_name(e, "left", 4), depth + 1) ||
		       host_expr(s, at, ts_node_child_by_field_name(e, "right", 5), depth + 1);
	if (node_is(e, "identifier")) {
		TSNode v = pl_scan_last_assigned(s, name_scope(s, at), e, ts_node_start_byte(at));
		return host_expr(s, v, v, depth + 1);
	}
	if (node_is(e, "attribute")) {
		TSNode o = ts_node_child_by_field_name(e, "object", 6);
		const char *ot = node_is(o, "identifier") ? pl_scan_ntext(s, o, &len) : NULL;
		if (!ot || len != 4 || memcmp(ot, "self", 4))
			return 0;
		TSNode cls = ts_node_parent(e);
		while (!ts_node_is_null(cls) && !node_is(cls, "class_definition"))
			cls = ts_node_parent(cls);
		if (ts_node_is_null(cls))
			return 0;
		TSNode v = pl_scan_last_assigned(s, cls, e, 0);
		return host_expr(s, v, v, depth + 1);
	}
	if (!node_is(e, "call"))
		return 0;
	if (made_for_copy(s, e))
		return 1;
	TSNode f = ts_node_child_by_field_name(e, "function", 8);
	const char *ft = node_is(f, "identifier") ? pl_scan_ntext(s, f, &len) : NULL;
	if (ft && len == 8 && !memcmp(ft, "Variable", 8))
		return host_expr(s, at, first_arg(e), depth + 1);
	if (!node_is(f, "attribute") || torch_factory(s, e) != TF_NONE)
		return 0;
	TSNode o = ts_node_child_by_field_name(f, "object", 6);
	/* torch.exp(x), torch.flip(x, ...): on the device of its argument */
	if (node_is(o, "identifier") && pl_scan_is_torch(s, o))
		return host_expr(s, at, first_arg(e), depth + 1);
	/* x.unsqueeze(0), x.float(): a method of a host tensor; not one that
	 * copies (to, cuda, type) */
	static const char *const copies[] = {"to", "cuda", "type", NULL};
	ft = pl_scan_ntext(s, ts_node_child_by_field_name(f, "attribute", 9), &len);
	return !pl_scan_in_list(ft, len, copies) && host_expr(s, at, o, depth + 1);
}

/* The object a device copy copies (obj of obj.to(device), obj.cuda(),
 * obj.type(torch.cuda.FloatTensor)) was made on the host (host_expr); or
 * the copy is indexed at once (torch.from_numpy(table).to(t.device)[t]):
 * a whole table copied to read a few entries. */
static int copied_from_host(struct src *s, TSNode node, TSNode obj)
{
	TSNode fn = ts_node_child_by_field_name(node, "function", 8);
	size_t len;
	const char *m = pl_scan_ntext(s, last_name(fn), &len);
	if (len == 4 && !memcmp(m, "type", 4)) {
		/* .type(torch.cuda.FloatTensor): a copy; .type(torch.float16)
		 * is a cast on the host */
		TSNode a = first_arg(node);
		const char *at = node_is(a, "attribute") ? pl_scan_ntext(s, a, &len) : NULL;
		if (!at || !memmem(at, len, "cuda", 4))
			return 0;
	}
	TSNode up = ts_node_parent(node);
	if (node_is(up, "subscript") &&
	    ts_node_eq(ts_node_child_by_field_name(up, "value", 5), node) &&
	    torch_factory(s, obj) != TF_NONE)
		return 1;
	return host_expr(s, node, obj, 0);
}

/* The name was last bound, before node and in its function, to a
 * tensor made on the host (host_made_call). */
static int cpu_factory_before(struct src *s, TSNode node, TSNode cap, int ctors)
{
	return host_made_call(
	    s, pl_scan_last_assigned(s, name_scope(s, node), cap, ts_node_start_byte(node)),
	    ctors);
}

static int loader_names(const char *t, size_t len, int splits);

/* a rebinding of the name (rebind_visit) that ends before byte at */
struct rebind_before {
	struct name_find *f;
	uint32_t at;
};

static int rebind_before_visit(TSNode n, void *arg)
{
	struct rebind_before *b = arg;
	return ts_node_end_byte(n) <= b->at && rebind_visit(n, b->f);
}

/* The name (recv, or what recv subscripts: sizes[0][0]) is an item of a
 * loader's batch as the loop yields it: bound by the header of a loop
 * around node that iterates a loader (for x, sizes in val_loader) and
 * never bound again in that loop. A DataLoader's batches are in host
 * memory until the code copies them. */
static int loader_item(struct src *s, TSNode node, TSNode recv)
{
	while (node_is(recv, "subscript"))
		recv = ts_node_child_by_field_name(recv, "value", 5);
	if (!node_is(recv, "identifier"))
		return 0;
	struct name_find f = {s, NULL, 0};
	f.name = pl_scan_ntext(s, recv, &f.len);
	for (TSNode p = loop_above(s, node); !ts_node_is_null(p); p = loop_above(s, p)) {
		TSNode left = ts_node_child_by_field_name(p, "left", 4);
		TSNode right = ts_node_child_by_field_name(p, "right", 5);
		TSNode body = ts_node_child_by_field_name(p, "body", 4);
		if (!node_is(p, "for_statement") || ts_node_is_null(left) ||
		    !walk_named(left, name_visit, &f))
			continue;
		size_t len;
		const char *t = pl_scan_ntext(s, right, &len);
		struct rebind_before rb = {&f, ts_node_start_byte(node)};
		return loader_names(t, len, 0) && !walk_named(body, rebind_before_visit, &rb);
	}
	return 0;
}

static int env_step_call(struct src *s, TSNode n);

struct env_out_find {
	struct name_find name;
	uint32_t at;
};

static int env_out_visit(TSNode n, void *arg)
{
	struct env_out_find *f = arg;
	if (ts_node_end_byte(n) > f->at || !node_is(n, "assignment") ||
	    !env_step_call(f->name.s, ts_node_child_by_field_name(n, "right", 5)))
		return 0;
	return walk_named(ts_node_child_by_field_name(n, "left", 4), name_visit, &f->name);
}

/* recv (through subscripts and methods: s[:, 3].reshape(...)) is a name
 * bound, in the loop around node, to what an environment's step returned
 * (obs, reward, done, info = envs.step(a)): numpy arrays in host memory */
static int env_output(struct src *s, TSNode node, TSNode recv)
{
	for (int depth = 0; depth < 8; depth++) {
		if (node_is(recv, "subscript")) {
			recv = ts_node_child_by_field_name(recv, "value", 5);
		} else if (node_is(recv, "call") &&
			   node_is(ts_node_child_by_field_name(recv, "function", 8), "attribute")) {
			recv = ts_node_child_by_field_name(
			    ts_node_child_by_field_name(recv, "function", 8), "object", 6);
		} else {
			break;
		}
	}
	TSNode loop = loop_above(s, node);
	if (!node_is(recv, "identifier") || ts_node_is_null(loop))
		return 0;
	struct env_out_find f = {{s, NULL, 0}, ts_node_start_byte(node)};
	f.name.name = pl_scan_ntext(s, recv, &f.name.len);
	return walk_named(loop, env_out_visit, &f);
}

/* The receiver of a host read was made on the host: a torch factory or
 * constructor call, through methods (torch.ones(n).cpu(),
 * torch.Tensor([a, b]).unsqueeze(0).cpu()), or a name bound to one
 * earlier in the function, a loader's batch not yet copied
 * (loader_item), or what an environment's step returned (env_output):
 * reading it copies nothing and waits for nothing. */
static int host_made(struct src *s, TSNode node, TSNode recv)
{
	for (int depth = 0; node_is(recv, "call") && depth < 8; depth++) {
		if (host_made_call(s, recv, 1))
			return 1;
		TSNode fn = ts_node_child_by_field_name(recv, "function", 8);
		if (!node_is(fn, "attribute"))
			return 0;
		recv = ts_node_child_by_field_name(fn, "object", 6);
	}
	return (node_is(recv, "identifier") && cpu_factory_before(s, node, recv, 1)) ||
	       loader_item(s, node, recv) || env_output(s, node, recv);
}

/* A call of fn's own (not in a function nested in it) outside any loop
 * of fn's, named name, with no arguments where bare (opt.step()). */
struct own_call {
	struct src *s;
	TSNode fn;
	const char *name;
	int bare;
};

static int own_call_visit(TSNode n, void *arg)
{
	struct own_call *f = arg;
	if (!node_is(n, "call") || !ts_node_is_null(loop_above(f->s, n)))
		return 0;
	TSNode fn = ts_node_child_by_field_name(n, "function", 8);
	size_t len, nl = strlen(f->name);
	const char *t = node_is(fn, "attribute") ? pl_scan_ntext(f->s, last_name(fn), &len) : NULL;
	if (!t || len != nl || memcmp(t, f->name, nl))
		return 0;
	if (f->bare) {
		/* an optimizer's, not a scheduler's (scheduler.step(),
		 * lr_sched.step()) */
		size_t ol;
		const char *o = pl_scan_ntext(f->s, ts_node_child_by_field_name(fn, "object", 6), &ol);
		if (ts_node_named_child_count(ts_node_child_by_field_name(n, "arguments", 9)) ||
		    memmem(o, ol, "sched", 5) || memmem(o, ol, "lr", 2))
			return 0;
	}
	for (TSNode p = ts_node_parent(n); !ts_node_is_null(p) && !ts_node_eq(p, f->fn);
	     p = ts_node_parent(p))
		if (node_is(p, "function_definition") || node_is(p, "lambda"))
			return 0;
	return 1;
}

static int own_call(struct src *s, TSNode fn, const char *name, int bare)
{
	struct own_call f = {s, fn, name, bare};
	TSNode body = ts_node_child_by_field_name(fn, "body", 4);
	return !ts_node_is_null(body) && walk_named(body, own_call_visit, &f);
}

/* node is under a `with` or a decorator whose text matches re (no_grad,
 * inference_mode: NO_GRAD_RE) */
static int no_grad_at(struct src *s, const regex_t *re, TSNode node)
{
	size_t len;
	for (int i = scope_of(s, node); i >= 0; i = s->scopes[i].parent) {
		const struct scope *sc = &s->scopes[i];
		TSNode head = (TSNode){0};
		if (sc->kind == SK_WITH)
			head = ts_node_named_child(sc->node, 0);
		else if (sc->kind == SK_DECOR)
			head = sc->node;
		if (ts_node_is_null(head))
			continue;
		const char *t = pl_scan_ntext(s, head, &len);
		if (sc->kind == SK_DECOR) {
			/* only the decorators, not the body */
			const char *def = memmem(t, len, "def ", 4);
			if (def)
				len = (size_t)(def - t);
		}
		if (re_hit(re, t, len))
			return 1;
	}
	return 0;
}

/* Does an identifier in t[0..len) read as a data loader (testloader,
 * val_loader, dataloader) or, with splits, an evaluation split (its
 * `_`-separated words: eval_words)? */
static int loader_names(const char *t, size_t len, int splits)
{
	for (size_t i = 0; i < len;) {
		if (!isalnum((unsigned char)t[i]) && t[i] != '_') {
			i++;
			continue;
		}
		size_t j = i;
		while (j < len && (isalnum((unsigned char)t[j]) || t[j] == '_'))
			j++;
		for (size_t k = i; k + 6 <= j; k++)
			if (!strncasecmp(t + k, "loader", 6))
				return 1;
		if (splits && eval_words(t + i, j - i))
			return 1;
		i = j;
	}
	return 0;
}

/* An evaluation's batch loop, once per batch: the innermost loop around
 * node iterates a loader or an evaluation split (its header: for x in
 * val_loader, for k in range(eval_iters)), no loop around it in the
 * function calls backward() (re), and the loop evaluates: it is under
 * no_grad (re2), or its function's name says so (evaluate, validate,
 * test, val_epoch), or the function puts a model in eval() mode. */
static int evaluated(struct src *s, TSNode node, TSNode cap);

static int eval_loop_at(struct src *s, const struct cond *c, TSNode node)
{
	size_t len;
	TSNode loop = loop_above(s, node);
	if (ts_node_is_null(loop) || !c->has_re || !c->has_re2)
		return 0;
	/* no backward() in the loop itself, nor in a loop around it that
	 * iterates data (a per-sample loop in a training step); an epoch
	 * loop around both the training and the validation loop is not one */
	for (TSNode p = loop; !ts_node_is_null(p); p = loop_above(s, p)) {
		const char *t = pl_scan_ntext(s, p, &len);
		if (bwd_hit(&c->re, t, len) &&
		    (ts_node_eq(p, loop) || loader_names(t, header_end(p) - ts_node_start_byte(p), 0)))
			return 0;
	}
	const char *h = pl_scan_ntext(s, loop, &len);
	if (!loader_names(h, header_end(loop) - ts_node_start_byte(loop), 1))
		return 0;
	if (no_grad_at(s, &c->re2, node))
		return 1;
	TSNode fn = pl_scan_enclosing_function(s, node);
	if (ts_node_is_null(fn))
		return 0;
	const char *name = pl_scan_ntext(s, ts_node_child_by_field_name(fn, "name", 4), &len);
	for (size_t i = 0; i < len;) {
		size_t j = i;
		while (j < len && name[j] != '_')
			j++;
		static const char *const pre[] = {"eval", "valid", "test", NULL};
		for (int k = 0; pre[k]; k++)
			if (j - i >= strlen(pre[k]) && !strncasecmp(name + i, pre[k], strlen(pre[k])))
				return 1;
		if (j - i == 3 && !strncasecmp(name + i, "val", 3))
			return 1;
		i = j + 1;
	}
	return evaluated(s, loop, (TSNode){0});
}

/* node is in the body of a top-level `if __name__ == "__main__":` */
static int main_block_at(struct src *s, TSNode node)
{
	TSNode top = node, p = ts_node_parent(node);
	for (; !ts_node_is_null(p) && !ts_node_eq(p, s->root); p = ts_node_parent(p))
		top = p;
	if (!node_is(top, "if_statement"))
		return 0;
	TSNode cond = ts_node_child_by_field_name(top, "condition", 9);
	size_t len;
	const char *t = node_is(cond, "comparison_operator") ? pl_scan_ntext(s, cond, &len) : NULL;
	return t && memmem(t, len, "__name__", 8) && memmem(t, len, "__main__", 8);
}

/* a call of a backward() (x.backward(), accelerator.backward(loss)), or
 * an identifier that names an optimizer (optim, optimizer, build_optimizer) */
static int trains_visit(TSNode n, void *arg)
{
	struct src *s = arg;
	size_t len;
	if (node_is(n, "identifier")) {
		const char *t = pl_scan_ntext(s, n, &len);
		for (size_t i = 0; i + 5 <= len; i++)
			if (!strncasecmp(t + i, "optim", 5))
				return 1;
		return 0;
	}
	if (!node_is(n, "call"))
		return 0;
	TSNode fn = ts_node_child_by_field_name(n, "function", 8);
	const char *t = node_is(fn, "attribute") ? pl_scan_ntext(s, last_name(fn), &len) : NULL;
	return t && len == 8 && !memcmp(t, "backward", 8);
}

/* An environment's step: env.step(...), envs.step(...),
 * self.train_env.step(...) (the object's text names an env). */
static int env_step_call(struct src *s, TSNode n)
{
	if (!node_is(n, "call"))
		return 0;
	TSNode fn = ts_node_child_by_field_name(n, "function", 8);
	size_t len, ol;
	const char *t = node_is(fn, "attribute") ? pl_scan_ntext(s, last_name(fn), &len) : NULL;
	if (!t || len != 4 || memcmp(t, "step", 4))
		return 0;
	const char *o = pl_scan_ntext(s, ts_node_child_by_field_name(fn, "object", 6), &ol);
	for (size_t i = 0; i + 3 <= ol; i++)
		if (!strncasecmp(o + i, "env", 3))
			return 1;
	return 0;
}

struct env_find {
	struct src *s;
	struct name_find name;
};

/* an environment step whose arguments name the name */
static int env_arg_visit(TSNode n, void *arg)
{
	struct env_find *f = arg;
	return env_step_call(f->s, n) &&
	       walk_named(ts_node_child_by_field_name(n, "arguments", 9), name_visit, &f->name);
}

/* an assignment in the loop whose value reads f's name and whose name a
 * step of the loop is given */
struct env_hop {
	struct env_find *f;
	TSNode loop;
};

static int env_hop_visit(TSNode n, void *arg)
{
	struct env_hop *h = arg;
	if (!node_is(n, "assignment"))
		return 0;
	TSNode left = ts_node_child_by_field_name(n, "left", 4);
	TSNode right = ts_node_child_by_field_name(n, "right", 5);
	if (!node_is(left, "identifier") || ts_node_is_null(right) ||
	    !walk_named(right, name_visit, &h->f->name))
		return 0;
	struct env_find g = {h->f->s, {h->f->s, NULL, 0}};
	g.name.name = pl_scan_ntext(h->f->s, left, &g.name.len);
	if (g.name.len == h->f->name.len && !memcmp(g.name.name, h->f->name.name, g.name.len))
		return 0;
	return walk_named(h->loop, env_arg_visit, &g);
}

/* A host read whose value an environment's step takes: the program needs
 * it on the host (a reinforcement learning loop hands the policy's action
 * to a CPU environment on every environment step): inside the step's
 * arguments (envs.step(action.cpu().numpy())), or bound to a name that a
 * step in the same loop is given (actions = q.argmax(1).cpu().numpy();
 * envs.step(actions)). */
static int env_input(struct src *s, TSNode node)
{
	TSNode p = ts_node_parent(node), assign = {0};
	for (; !ts_node_is_null(p); p = ts_node_parent(p)) {
		if (env_step_call(s, p))
			return 1;
		if (node_is(p, "assignment")) {
			assign = p;
			break;
		}
		if (node_is(p, "block") || node_is(p, "expression_statement"))
			break;
	}
	TSNode loop = loop_above(s, node);
	if (ts_node_is_null(assign) || ts_node_is_null(loop))
		return 0;
	TSNode left = ts_node_child_by_field_name(assign, "left", 4);
	if (!node_is(left, "identifier"))
		return 0;
	struct env_find f = {s, {s, NULL, 0}};
	f.name.name = pl_scan_ntext(s, left, &f.name.len);
	if (walk_named(loop, env_arg_visit, &f))
		return 1;
	/* one name further: clipped = np.clip(actions, low, high) (or
	 * clipped = actions, then rescaled) and envs.step(clipped) */
	struct env_hop h = {&f, loop};
	return walk_named(loop, env_hop_visit, &h);
}

struct env_loop_find {
	struct src *s;
	TSNode loop;
};

static int env_step_visit(TSNode n, void *arg)
{
	struct env_loop_find *f = arg;
	if (!env_step_call(f->s, n))
		return 0;
	TSNode l = loop_above(f->s, n);
	return !ts_node_is_null(l) && ts_node_eq(l, f->loop);
}

/* A reinforcement learning rollout's loop: it steps an environment
 * (envs.step(actions)) itself on every pass (not in a loop nested in
 * it), the hot loop of such a program whether or not it calls
 * backward(). */
static int env_loop(struct src *s, TSNode loop)
{
	TSNode body = ts_node_child_by_field_name(loop, "body", 4);
	struct env_loop_find f = {s, loop};
	return !ts_node_is_null(body) && memmem(s->text + ts_node_start_byte(body),
						ts_node_end_byte(body) - ts_node_start_byte(body),
						"step(", 5) &&
	       walk_named(body, env_step_visit, &f);
}

/* a call X.eval() with no arguments: kept in s->eval_* (the first 8 of
 * a function) */
static int eval_call_visit(TSNode n, void *arg)
{
	struct src *s = arg;
	if (!node_is(n, "call") || s->neval == 8)
		return 0;
	TSNode fn = ts_node_child_by_field_name(n, "function", 8);
	size_t len;
	const char *t = node_is(fn, "attribute") ? pl_scan_ntext(s, last_name(fn), &len) : NULL;
	if (t && len == 4 && !memcmp(t, "eval", 4) &&
	    !ts_node_named_child_count(ts_node_child_by_field_name(n, "arguments", 9))) {
		s->eval_at[s->neval] = ts_node_end_byte(n);
		s->eval_obj[s->neval++] = ts_node_child_by_field_name(fn, "object", 6);
	}
	return 0;
}

/* The function around node called cap.eval() (the same text: model,
 * self.net; a null cap: any X.eval()) before it. Tried on every call a
 * rule's pattern fits, so the file is looked at once (no ".eval()" in
 * it: never) and each function's eval() calls once, as the calls come in
 * document order. */
static int evaluated(struct src *s, TSNode node, TSNode cap)
{
	if (!s->evals)
		s->evals = memmem(s->text, s->len, ".eval()", 7) ? 2 : 1;
	if (s->evals == 1)
		return 0;
	TSNode fn = pl_scan_enclosing_function(s, node);
	if (ts_node_is_null(fn))
		return 0;
	if (s->eval_fn != ts_node_start_byte(fn) + 1) {
		s->eval_fn = ts_node_start_byte(fn) + 1;
		s->neval = 0;
		walk_named(fn, eval_call_visit, s);
	}
	for (int i = 0; i < s->neval; i++)
		if (s->eval_at[i] <= ts_node_start_byte(node) &&
		    (ts_node_is_null(cap) || pl_scan_text_eq(s, s->eval_obj[i], cap)))
			return 1;
	return 0;
}

/* The copy (node: x.to(D), x.cuda(D)) goes to D = P.device, P a
 * parameter of fn (not self), fn not a constructor: a function given
 * device tensors that copies to them on every call (a timestep
 * embedding's frequencies, a schedule's table, a sampling step's
 * timestep tensor). */
static int copy_to_arg_device(struct src *s, TSNode fn, TSNode node)
{
	size_t len;
	const char *t = pl_scan_ntext(s, ts_node_child_by_field_name(fn, "name", 4), &len);
	if (len == 8 && !memcmp(t, "__init__", 8))
		return 0;
	/* @torch.no_grad(): a sampling or debugging utility, called where
	 * the code shows no step (stargan-v2's image translations every 5000
	 * iterations: held-out 14) */
	TSNode up = ts_node_parent(fn);
	if (node_is(up, "decorated_definition")) {
		size_t dl;
		const char *dt = pl_scan_ntext(s, up, &dl);
		const char *def = memmem(dt, dl, "def ", 4);
		if (def && (memmem(dt, (size_t)(def - dt), "no_grad", 7) ||
			    memmem(dt, (size_t)(def - dt), "inference_mode", 14)))
			return 0;
	}
	TSNode d = (TSNode){0};
	TSNode args = ts_node_child_by_field_name(node, "arguments", 9);
	uint32_t n = ts_node_is_null(args) ? 0 : ts_node_named_child_count(args);
	for (uint32_t i = 0; i < n; i++) {
		TSNode a = ts_node_named_child(args, i);
		TSNode k = ts_node_child_by_field_name(a, "name", 4);
		t = node_is(a, "keyword_argument") ? pl_scan_ntext(s, k, &len) : NULL;
		if (t && len == 6 && !memcmp(t, "device", 6))
			d = ts_node_child_by_field_name(a, "value", 5);
	}
	/* x.to(t.device), x.cuda(t.device) */
	if (ts_node_is_null(d) && node_is(ts_node_child_by_field_name(node, "function", 8), "attribute")) {
		t = pl_scan_ntext(s, last_name(ts_node_child_by_field_name(node, "function", 8)), &len);
		if ((len == 2 && !memcmp(t, "to", 2)) || (len == 4 && !memcmp(t, "cuda", 4)))
			d = first_arg(node);
	}
	if (!node_is(d, "attribute"))
		return 0;
	t = pl_scan_ntext(s, ts_node_child_by_field_name(d, "attribute", 9), &len);
	TSNode o = ts_node_child_by_field_name(d, "object", 6);
	if (len != 6 || memcmp(t, "device", 6) || !node_is(o, "identifier"))
		return 0;
	const char *ot = pl_scan_ntext(s, o, &len);
	if (len == 4 && !memcmp(ot, "self", 4))
		return 0;
	TSNode ps = ts_node_child_by_field_name(fn, "parameters", 10);
	n = ts_node_is_null(ps) ? 0 : ts_node_named_child_count(ps);
	for (uint32_t i = 0; i < n; i++) {
		TSNode p = ts_node_named_child(ps, i);
		if (node_is(p, "default_parameter") || node_is(p, "typed_default_parameter"))
			p = ts_node_child_by_field_name(p, "name", 4);
		else if (node_is(p, "typed_parameter"))
			p = ts_node_named_child(p, 0);
		if (node_is(p, "identifier") && pl_scan_text_eq(s, p, o))
			return 1;
	}
	return 0;
}

/* Per-parameter blending (PY042): the loop variables of a for loop over
 * two models' tensors, and whether a statement of its body writes one
 * in place with a blend of them. */
struct blend_find {
	struct src *s;
	const char *var[4];
	size_t len[4];
	int nvar;
	unsigned seen; /* the loop variables a write names, one bit each */
};

static int var_visit(TSNode n, void *arg)
{
	struct blend_find *f = arg;
	size_t len;
	if (!node_is(n, "identifier"))
		return 0;
	const char *t = pl_scan_ntext(f->s, n, &len);
	for (int i = 0; i < f->nvar; i++)
		if (len == f->len[i] && !memcmp(t, f->var[i], len))
			f->seen |= 1u << i;
	return 0;
}

static int loop_var_visit(TSNode n, void *arg)
{
	struct blend_find *f = arg;
	if (node_is(n, "identifier") && f->nvar < 4) {
		f->var[f->nvar] = pl_scan_ntext(f->s, n, &f->len[f->nvar]);
		f->nvar++;
	}
	return 0;
}

/* v is a blend, not a plain copy: arithmetic, or a call other than a
 * view or a cast (p.detach(), p.data.clone(), p.float()) */
static int blend_value(struct src *s, TSNode v)
{
	static const char *const plain[] = {"detach", "clone", "to",	"cuda", "float",
					    "half",   "type",  "contiguous", NULL};
	size_t len;
	if (node_is(v, "binary_operator"))
		return 1;
	if (!node_is(v, "call"))
		return 0;
	TSNode fn = ts_node_child_by_field_name(v, "function", 8);
	const char *t = node_is(fn, "attribute") ? pl_scan_ntext(s, last_name(fn), &len) : NULL;
	return !t || !pl_scan_in_list(t, len, plain);
}

static int blend_visit(TSNode n, void *arg)
{
	struct blend_find *f = arg;
	size_t len;
	if (node_is(n, "function_definition") || node_is(n, "lambda"))
		return 0;
	if (node_is(n, "assignment")) {
		/* target.data = tau * p.data + (1 - tau) * target.data */
		TSNode l = ts_node_child_by_field_name(n, "left", 4);
		const char *t = node_is(l, "attribute") ? pl_scan_ntext(f->s, last_name(l), &len)
							: NULL;
		if (!t || len != 4 || memcmp(t, "data", 4) ||
		    !blend_value(f->s, ts_node_child_by_field_name(n, "right", 5)))
			return 0;
		f->seen = 0;
		walk_named(n, var_visit, f);
		return __builtin_popcount(f->seen) >= 2;
	}
	if (!node_is(n, "call"))
		return 0;
	static const char *const inplace[] = {"copy_", "mul_", "add_", "sub_",
					      "lerp_", "addcmul_", NULL};
	TSNode fn = ts_node_child_by_field_name(n, "function", 8);
	const char *t = node_is(fn, "attribute") ? pl_scan_ntext(f->s, last_name(fn), &len) : NULL;
	if (!t || !pl_scan_in_list(t, len, inplace))
		return 0;
	/* copy_ and add_/sub_ of a blend (add_(p, alpha=1 - d), after a
	 * mul_(d)); not a plain copy or a sum (grad.add_(p.grad)) */
	if ((len == 5 && !memcmp(t, "copy_", 5)) || (len == 4 && (!memcmp(t, "add_", 4) ||
								 !memcmp(t, "sub_", 4)))) {
		TSNode o = ts_node_child_by_field_name(fn, "object", 6);
		const char *ot = node_is(o, "call") ? pl_scan_ntext(f->s, last_name(
							 ts_node_child_by_field_name(o, "function", 8)), &len)
						    : NULL;
		size_t al;
		const char *at = pl_scan_ntext(f->s, ts_node_child_by_field_name(n, "arguments", 9), &al);
		if (!blend_value(f->s, first_arg(n)) && !(ot && len == 4 && !memcmp(ot, "mul_", 4)) &&
		    !(t[0] != 'c' && memmem(at, al, "alpha", 5)))
			return 0;
	}
	f->seen = 0;
	walk_named(n, var_visit, f);
	return __builtin_popcount(f->seen) >= 2;
}

/* loop (a for statement) writes one model's tensors in place with a
 * blend of its two loop variables (EMA, Polyak averaging), one tensor at
 * a time */
static int blend_update(struct src *s, TSNode loop)
{
	struct blend_find f = {.s = s};
	TSNode left = ts_node_child_by_field_name(loop, "left", 4);
	TSNode body = ts_node_child_by_field_name(loop, "body", 4);
	if (ts_node_is_null(left) || ts_node_is_null(body))
		return 0;
	walk_named(left, loop_var_visit, &f);
	/* two: a zip of three or more lists is an optimizer's step */
	if (f.nvar != 2)
		return 0;
	/* a reinforcement-learning target network's soft update
	 * (zip(target.parameters(), net.parameters())): a few tensors of a
	 * small network, labelled negligible 25 times of 25 on held-out
	 * 11-13; not an EMA's (update_ema(target_params, ...)) */
	static const char *const ema[] = {"ema", "average", "averaged", "swa", NULL};
	size_t hl, nl;
	const char *h = pl_scan_ntext(s, ts_node_child_by_field_name(loop, "right", 5), &hl);
	if (memmem(h, hl, "target", 6) || memmem(h, hl, "Target", 6)) {
		TSNode fn = pl_scan_enclosing_function(s, loop);
		const char *n = ts_node_is_null(fn) ? NULL
						    : pl_scan_ntext(s, ts_node_child_by_field_name(fn, "name", 4), &nl);
		if (!n || !has_word(n, nl, ema))
			return 0;
	}
	return walk_named(body, blend_visit, &f);
}

/* A name reduced to its letters, lower case, without `_`, trailing
 * digits and (where drop is in it) the word drop: "critic_target2",
 * drop "target" -> "critic". Into out (size n); 0 where it does not fit
 * or lacks drop. */
static int name_core(const char *t, size_t len, const char *drop, char *out, size_t n)
{
	size_t dl = drop ? strlen(drop) : 0, k = 0;
	int dropped = !drop;
	for (size_t i = 0; i < len; i++) {
		if (!dropped && i + dl <= len && !strncasecmp(t + i, drop, dl)) {
			i += dl - 1;
			dropped = 1;
			continue;
		}
		if (t[i] == '_')
			continue;
		if (k + 1 >= n)
			return 0;
		out[k++] = (char)tolower((unsigned char)t[i]);
	}
	while (k && isdigit((unsigned char)out[k - 1]))
		k--;
	out[k] = 0;
	return dropped && k;
}

/* the name of a network: actor, critic, q, qnet, policy, model... */
static int net_core(const char *core)
{
	static const char *const nets[] = {
	    "actor",   "critic", "q",	    "qf",      "qnet",	   "qnetwork", "value",
	    "v",       "vf",	 "net",	    "network", "model",	   "policy",   "pi",
	    "dqn",     "mu",	 "qvalue",  "actornet", "criticnet", "policynet", "valuenet",
	    "actorlocal", "criticlocal", "qnetworklocal", "qlocal", NULL};
	return pl_scan_in_list(core, strlen(core), nets);
}

/* What kind of forward the call is (PY044): 1, a target network's
 * (self.critic_target(s), q_target(s), target_net(s)); 2, a network's
 * called as self.X(...) or a parameter's (actor(s)); 0, neither. */
static int forward_kind(struct src *s, TSNode call)
{
	char core[48];
	size_t len;
	static const char *const not_run[] = {
	    "parameters", "named_parameters", "state_dict", "load_state_dict", "train",
	    "eval",	  "to",		      "cuda",	    "cpu",		"zero_grad",
	    "apply",	  "modules",	      "children",   "named_modules",	"buffers",
	    "reset_noise", "share_memory",    "requires_grad_", "half",		"float",
	    "double",	  "register_buffer", "add_module", "named_children",	"named_buffers",
	    NULL};
	TSNode fn = ts_node_child_by_field_name(call, "function", 8);
	TSNode name = fn;
	/* self.target_network.feature(x), self.policy.sample(s): a method of
	 * the network that runs it */
	if (node_is(fn, "attribute") &&
	    node_is(ts_node_child_by_field_name(fn, "object", 6), "attribute")) {
		const char *mt = pl_scan_ntext(s, last_name(fn), &len);
		if (pl_scan_in_list(mt, len, not_run) || (len && mt[0] == '_'))
			return 0;
		fn = ts_node_child_by_field_name(fn, "object", 6);
	}
	if (node_is(fn, "attribute")) {
		TSNode o = ts_node_child_by_field_name(fn, "object", 6);
		const char *ot = node_is(o, "identifier") ? pl_scan_ntext(s, o, &len) : NULL;
		if (!ot || len != 4 || memcmp(ot, "self", 4))
			return 0;
		name = ts_node_child_by_field_name(fn, "attribute", 9);
	} else if (!node_is(fn, "identifier")) {
		return 0;
	}
	const char *t = pl_scan_ntext(s, name, &len);
	if (name_core(t, len, "target", core, sizeof core))
		return net_core(core) ? 1 : 0;
	return name_core(t, len, NULL, core, sizeof core) && net_core(core) ? 2 : 0;
}

struct fwd_find {
	struct src *s;
	int kind;
	TSNode first;
};

static int fwd_visit(TSNode n, void *arg)
{
	struct fwd_find *f = arg;
	if (node_is(n, "call") && forward_kind(f->s, n) == f->kind) {
		f->first = n;
		return 1;
	}
	return 0;
}

/* The call runs a network whose output needs no gradient, with autograd
 * recording (the rule adds not-in-no-grad): a target network's forward
 * in a function that runs a backward pass (the TD target: it is only
 * detached, or wrongly backpropagated through), or a network's forward in
 * an action-selection function that returns a host value and runs no
 * backward (select_action(): .cpu().numpy() of the actor's output). One
 * finding per function: its first such call. */
static int grad_free_forward(struct src *s, TSNode call)
{
	static const char *const acts[] = {"act",	    "selectaction", "getaction",
					   "chooseaction",  "sampleaction", "takeaction",
					   "pickaction",    "selectactions", "getactions",
					   "computeaction", "evalstep",	    "evalaction", NULL};
	char core[48];
	size_t len, fl;
	int kind = forward_kind(s, call);
	TSNode fn = pl_scan_enclosing_function(s, call);
	if (!kind || ts_node_is_null(fn))
		return 0;
	const char *ft = pl_scan_ntext(s, fn, &fl);
	int bwd = memmem(ft, fl, ".backward(", 10) != NULL;
	if (kind == 1) {
		/* a target network frozen by the code records nothing */
		if (!bwd || memmem(s->text, s->len, "requires_grad = False", 21) ||
		    memmem(s->text, s->len, "requires_grad=False", 19) ||
		    memmem(s->text, s->len, "requires_grad_(False)", 21))
			return 0;
	} else {
		const char *nt = pl_scan_ntext(s, ts_node_child_by_field_name(fn, "name", 4), &len);
		if (bwd || !name_core(nt, len, NULL, core, sizeof core) ||
		    !pl_scan_in_list(core, strlen(core), acts))
			return 0;
		if (!memmem(ft, fl, ".cpu()", 6) && !memmem(ft, fl, ".numpy()", 8) &&
		    !memmem(ft, fl, ".item()", 7) && !memmem(ft, fl, ".tolist()", 9))
			return 0;
	}
	struct fwd_find f = {.s = s, .kind = kind};
	walk_named(ts_node_child_by_field_name(fn, "body", 4), fwd_visit, &f);
	return !ts_node_is_null(f.first) && ts_node_eq(f.first, call);
}

/* a copy to the device (x.cuda(), x.to(device), x.to("cuda:0")) made
 * without non_blocking=True: the host waits for the GPU's queue there */
static int blocking_copy_visit(TSNode n, void *arg)
{
	struct src *s = arg;
	size_t len, al;
	if (!node_is(n, "call"))
		return 0;
	TSNode fn = ts_node_child_by_field_name(n, "function", 8);
	const char *t = node_is(fn, "attribute") ? pl_scan_ntext(s, last_name(fn), &len) : NULL;
	if (!t || !((len == 2 && !memcmp(t, "to", 2)) || (len == 4 && !memcmp(t, "cuda", 4))))
		return 0;
	const char *a = pl_scan_ntext(s, ts_node_child_by_field_name(n, "arguments", 9), &al);
	if (memmem(a, al, "non_blocking", 12))
		return 0;
	return len == 4 || memmem(a, al, "device", 6) || memmem(a, al, "cuda", 4);
}

/* The loop around node (or, outside loops, its function) waits for the
 * GPU on purpose on every pass: a statement of its own body, not under
 * a branch, calls X.synchronize() (a timing) or is an `if` testing
 * isfinite/isnan (a divergence guard, which needs the value). */
static int waiting_loop(struct src *s, TSNode node)
{
	size_t len;
	TSNode scope = pl_scan_enclosing_loop(s, node);
	if (ts_node_is_null(scope))
		scope = pl_scan_enclosing_function(s, node);
	TSNode body = ts_node_is_null(scope) ? scope : ts_node_child_by_field_name(scope, "body", 4);
	uint32_t n = ts_node_is_null(body) ? 0 : ts_node_named_child_count(body);
	for (uint32_t i = 0; i < n; i++) {
		TSNode st = ts_node_named_child(body, i);
		if (node_is(st, "if_statement")) {
			const char *t = pl_scan_ntext(s, ts_node_child_by_field_name(st, "condition", 9), &len);
			if (memmem(t, len, "isfinite", 8) || memmem(t, len, "isnan", 5))
				return 1;
		} else if (node_is(st, "expression_statement")) {
			TSNode c = ts_node_named_child(st, 0);
			TSNode f = node_is(c, "call") ? ts_node_child_by_field_name(c, "function", 8) : c;
			const char *t = node_is(f, "attribute") ? pl_scan_ntext(s, last_name(f), &len) : NULL;
			if (t && len == 11 && !memcmp(t, "synchronize", 11))
				return 1;
		}
	}
	return 0;
}

/* Runs once per training step: in a step loop and not in a periodic
 * branch; or, outside any loop of its own function, in a function that a
 * step loop of the same file calls on every step (a helper that logs
 * loss.item() costs the sync the loop body would). One call deep. */
static int importable_fn(struct src *s, TSNode fn, const char *name, size_t len);
static TSNode fn_class(TSNode fn);

static int training_step_at(struct src *s, const struct cond *c, TSNode node, int may_pend)
{
	if (!c->has_re || !c->has_re2)
		return 0;
	TSNode loop = loop_above(s, node);
	if (!ts_node_is_null(loop))
		return (training_loop_at(s, &c->re, node) || env_loop(s, loop)) &&
		       !periodic_in_step(s, &c->re2, &c->re, node);
	TSNode fn = pl_scan_enclosing_function(s, node);
	if (ts_node_is_null(fn) || periodic_at(s, &c->re2, node))
		return 0;
	struct step_call_find f = {s, NULL, 0, fn, &c->re, &c->re2, 0};
	f.name = pl_scan_ntext(s, ts_node_child_by_field_name(fn, "name", 4), &f.len);
	/* Lightning calls a module's training_step() once per step (and
	 * calls backward() itself) */
	if (f.len == 13 && !memcmp(f.name, "training_step", 13))
		return 1;
	if (!f.len)
		return 0;
	/* a file without a backward() has no step loop to call it: no walk */
	if (memmem(s->text, s->len, "backward(", 9)) {
		/* a backward() of its own outside its loops: the function is one
		 * training step (train_step(batch), a full-batch epoch); one that
		 * also steps an optimizer is one wherever it is called from (an
		 * engine's forward_backward(), called from a base class in
		 * another file) */
		f.step_fn = own_call(s, fn, "backward", 0);
		if (f.step_fn && !(f.len == 4 && !memcmp(f.name, "main", 4)) &&
		    own_call(s, fn, "step", 1))
			return 1;
		if (walk_named(s->root, step_call_visit, &f))
			return 1;
	}
	/* no caller in this file: a step loop of another file may call it (a
	 * loss or metric helper, a model's parse_batch()); decided when every
	 * file is scanned (scanrun.c), the finding kept pending till then */
	/* (a file that never names torch holds no tensor helper: the
	 * standard library's .tolist() and .item() are not held) */
	if (may_pend && !f.step_fn && memmem(s->text, s->len, "torch", 5) &&
	    importable_fn(s, fn, f.name, f.len)) {
		s->pending = f.name;
		s->pending_len = f.len;
		TSNode cls = fn_class(fn);
		if (!ts_node_is_null(cls))
			cls = ts_node_child_by_field_name(cls, "name", 4);
		s->pending_class =
		    ts_node_is_null(cls) ? NULL : pl_scan_ntext(s, cls, &s->pending_class_len);
		return 1;
	}
	return 0;
}

/* The class a method is defined in (null: a function of the module or
 * a nested one) */
static TSNode fn_class(TSNode fn)
{
	TSNode p = ts_node_parent(fn);
	if (node_is(p, "decorated_definition"))
		p = ts_node_parent(p);
	p = node_is(p, "block") ? ts_node_parent(p) : (TSNode){0};
	return node_is(p, "class_definition") ? p : (TSNode){0};
}

/* A function another file can call by its name: defined at the top of the
 * file or in a top-level class, not a nested one; not forward() or a
 * dunder (called by the framework, not by name), not main() */
static int importable_fn(struct src *s, TSNode fn, const char *name, size_t len)
{
	static const char *const not_named[] = {"forward", "main", "step", "train", "backward",
						 "update", "run", "item", "__call__", NULL};
	(void)s;
	if (len < 3 || (name[0] == '_' && name[1] == '_') || pl_scan_in_list(name, len, not_named))
		return 0;
	TSNode p = ts_node_parent(fn);
	if (node_is(p, "decorated_definition"))
		p = ts_node_parent(p);
	if (node_is(p, "module"))
		return 1;
	p = fn_class(fn);
	if (ts_node_is_null(p))
		return 0;
	p = ts_node_parent(p);
	if (node_is(p, "decorated_definition"))
		p = ts_node_parent(p);
	return node_is(p, "module");
}

/* The functions this file calls once per training step, for the pending
 * findings of the other files (scanrun.c). */
struct step_calls {
	struct src *s;
	const regex_t *bwd, *per;
	struct pl_strbuf b;
};

static int step_calls_visit(TSNode n, void *arg)
{
	struct step_calls *k = arg;
	if (!node_is(n, "call"))
		return 0;
	TSNode fn = last_name(ts_node_child_by_field_name(n, "function", 8));
	size_t len;
	const char *t = node_is(fn, "identifier") ? pl_scan_ntext(k->s, fn, &len) : NULL;
	if (!t || len < 3 || len > 200 || (t[0] == '_' && t[1] == '_'))
		return 0;
	/* each name once: "name line\n" */
	for (const char *p = k->b.s; p && *p; p = strchr(p, '\n') + 1)
		if (!strncmp(p, t, len) && p[len] == ' ')
			return 0;
	if (!training_loop_at(k->s, k->bwd, n) || periodic_in_step(k->s, k->per, k->bwd, n))
		return 0;
	pl_strbuf_printf(&k->b, "%.*s %u\n", (int)len, t, ts_node_start_point(n).row + 1);
	return 0;
}

int pl_scan_uses_device(struct src *s) { return uses_device(s, 1); }

char *pl_scan_step_calls(struct src *s, const regex_t *bwd, const regex_t *per, int *failed)
{
	struct step_calls k = {s, bwd, per, {0}};
	*failed = 0;
	if (!memmem(s->text, s->len, "backward(", 9))
		return NULL;
	/* only the calls under a loop whose text holds "backward(" can be in
	 * a step loop: the rest of the tree is walked without a look (a file
	 * that merely defines a backward(), turtle.py, costs one walk) */
	TSTreeCursor cur = ts_tree_cursor_new(s->root);
	uint32_t depth = 0, in_bwd = 0; /* the depth that entered such a loop, 0: none */
	for (;;) {
		TSNode n = ts_tree_cursor_current_node(&cur);
		size_t len;
		if (!in_bwd && is_loop(s, ts_node_type(n))) {
			const char *t = pl_scan_ntext(s, n, &len);
			if (memmem(t, len, "backward(", 9))
				in_bwd = depth + 1;
		}
		if (in_bwd && ts_node_is_named(n))
			step_calls_visit(n, &k);
		if (ts_tree_cursor_goto_first_child(&cur)) {
			depth++;
			continue;
		}
		for (;;) {
			if (ts_tree_cursor_goto_next_sibling(&cur)) {
				if (in_bwd == depth + 1)
					in_bwd = 0; /* left the loop for its sibling */
				break;
			}
			if (!ts_tree_cursor_goto_parent(&cur))
				goto out;
			depth--;
			if (in_bwd == depth + 1)
				in_bwd = 0;
		}
	}
out:
	ts_tree_cursor_delete(&cur);
	*failed = k.b.failed;
	return pl_strbuf_take(&k.b);
}

int pl_scan_cond_holds(struct src *s, const struct pl_rule *r, const struct cond *c,
		       const TSQueryMatch *m, TSNode node)
{
	size_t len;
	const char *t;
	switch (c->kind) {
	case C_IN_LOOP:
		return !ts_node_is_null(pl_scan_enclosing_loop(s, node));
	case C_IN_TRAINING_LOOP:
		/* the first loop around it that calls backward() decides */
		return c->has_re && training_loop_at(s, &c->re, node);
	case C_NOT_PERIODIC:
		/* inside the body of an `if`/`elif` (not its else) whose condition
		 * reads as every N steps, up to the innermost loop */
		return !c->has_re || !periodic_at(s, &c->re, node);
	case C_UNDER_IF:
		/* inside the body of an `if`/`elif` whose condition matches, up to
		 * the innermost loop (or the file) */
		return c->has_re && periodic_at(s, &c->re, node);
	case C_UNCONDITIONAL: {
		/* runs on every iteration: no if, else, switch or ?: between it
		 * and its innermost loop (a flush under --unbuffered, a lock in
		 * a rare branch are the program's choice, not a per-item cost) */
		TSNode loop = pl_scan_enclosing_loop(s, node);
		for (TSNode p = ts_node_parent(node); !ts_node_is_null(p); p = ts_node_parent(p)) {
			if (!ts_node_is_null(loop) && ts_node_eq(p, loop))
				break;
			const char *ty = ts_node_type(p);
			if (!strcmp(ty, "if_statement") || !strcmp(ty, "switch_statement") ||
			    !strcmp(ty, "conditional_expression") || !strcmp(ty, "case_statement"))
				return 0;
		}
		return 1;
	}
	case C_LOOP_NOT_SMALL:
		return !loops_small(s, node);
	case C_COSTLY_DATASET:
		return (pl_scan_dataset_evidence(s, node) & PL_DS_COSTLY) != 0;
	case C_LARGE_BATCHES:
		return (pl_scan_dataset_evidence(s, node) & PL_DS_BIG) != 0;
	case C_NON_BLOCKING:
		return uses_device(s, 8);
	case C_BLOCKING:
		return !uses_device(s, 8);
	case C_NOT_REBOUND: {
		/* the name @cap is the same object on every pass of its innermost
		 * loop: not a loop variable, not assigned in the loop (a loop
		 * over networks moves each one once) */
		TSNode cap = capture_named(r->query, m, c->cap);
		TSNode loop = pl_scan_enclosing_loop(s, node);
		if (ts_node_is_null(cap) || ts_node_is_null(loop))
			return !ts_node_is_null(cap);
		/* a string: none of its interpolated names is rebound */
		if (node_is(cap, "string")) {
			struct fstring_find ff = {s, loop};
			return !walk_named(cap, fstring_visit, &ff);
		}
		return !loop_rebinds(s, loop, cap);
	}
	case C_NOT_IN_EXCEPT:
		/* not in an except clause of its function: a retry's back-off
		 * there runs only when the read failed */
		for (TSNode p = ts_node_parent(node); !ts_node_is_null(p); p = ts_node_parent(p)) {
			if (node_is(p, "except_clause"))
				return 0;
			if (node_is(p, "function_definition"))
				break;
		}
		return 1;
	case C_NOT_READ_ONCE:
		return !read_once(s, node);
	case C_UNUSED: {
		/* the name @cap binds is not read in the finding's body (a
		 * loop's, with its else) */
		TSNode cap = capture_named(r->query, m, c->cap);
		if (ts_node_is_null(cap))
			return 0;
		struct name_find f = {s, NULL, 0};
		f.name = pl_scan_ntext(s, cap, &f.len);
		const char *fields[] = {"body", "alternative"};
		for (int i = 0; i < 2; i++) {
			TSNode b = ts_node_child_by_field_name(node, fields[i],
							       (uint32_t)strlen(fields[i]));
			if (!ts_node_is_null(b) && walk_named(b, name_visit, &f))
				return 0;
		}
		return 1;
	}
	case C_IN_TRAINING_STEP:
		return training_step_at(s, c, node, 1);
	case C_IN_EVAL_LOOP:
		return eval_loop_at(s, c, node);
	case C_CPU_FACTORY: {
		/* the finding copies @cap to the device, and @cap was made on
		 * the host (copied_from_host) */
		TSNode cap = capture_named(r->query, m, c->cap);
		return !ts_node_is_null(cap) && copied_from_host(s, node, cap);
	}
	case C_NOT_HOST_MADE: {
		/* the receiver @cap of a host read was not made on the host (a
		 * pattern of the rule without @cap: not this condition's) */
		TSNode cap = capture_named(r->query, m, c->cap);
		return ts_node_is_null(cap) || !host_made(s, node, cap);
	}
	case C_PER_STEP: {
		/* once per training step: in the step (in-training-step), or in
		 * a module's forward(), which every step calls */
		if (training_step_at(s, c, node, 0))
			return 1;
		TSNode fn = pl_scan_enclosing_function(s, node);
		if (ts_node_is_null(fn))
			return 0;
		t = pl_scan_ntext(s, ts_node_child_by_field_name(fn, "name", 4), &len);
		if (copy_to_arg_device(s, fn, node))
			return 1;
		if (len != 7 || memcmp(t, "forward", 7))
			return 0;
		for (TSNode p = ts_node_parent(fn); !ts_node_is_null(p); p = ts_node_parent(p))
			if (node_is(p, "class_definition"))
				return 1;
		return 0;
	}
	case C_IN_DEF: {
		/* the name (node) of the function it is in, nested ones included */
		for (int i = scope_of(s, node); i >= 0; i = s->scopes[i].parent) {
			if (s->scopes[i].kind != SK_FUNC)
				continue;
			t = pl_scan_ntext(
			    s, ts_node_child_by_field_name(s->scopes[i].node, "name", 4), &len);
			if (len && cond_match(s, r, c, m, t, len))
				return 1;
		}
		return 0;
	}
	case C_NO_PAIRWISE:
		return !pairwise_compare(s, node);
	case C_PAIRWISE:
		return pairwise_compare(s, node);
	case C_NOT_RECOVERY:
		/* not in an `if` testing for NaN or infinity up to the function:
		 * a recovery branch that runs when something went wrong */
		for (TSNode ch = node, p = ts_node_parent(node); !ts_node_is_null(p);
		     ch = p, p = ts_node_parent(p)) {
			if (node_is(p, "function_definition"))
				break;
			if (!node_is(p, "if_statement") && !node_is(p, "elif_clause"))
				continue;
			TSNode cond = ts_node_child_by_field_name(p, "condition", 9);
			if (ts_node_eq(cond, ch))
				continue;
			t = pl_scan_ntext(s, cond, &len);
			if (memmem(t, len, "isnan", 5) || memmem(t, len, "isinf", 5))
				return 0;
		}
		return 1;
	case C_NOT_DEMO_MAIN:
		/* not in the `if __name__ == "__main__":` block of a file that
		 * does not train (a dataset module's demo of a few batches):
		 * where the file trains, its main block may be the training */
		if (!main_block_at(s, node))
			return 1;
		/* fall through */
	case C_FILE_TRAINS:
		/* the file runs a backward pass (x.backward(),
		 * accelerator.backward(loss)) or names an optimizer (import
		 * torch.optim as optim, build_optimizer(...)): a training
		 * script, whose step may be in another file */
		if (!s->trains)
			s->trains = 1 + walk_named(s->root, trains_visit, s);
		return s->trains == 2;
	case C_NOT_ENV_INPUT:
		return !env_input(s, node);
	case C_BLEND_UPDATE:
		return blend_update(s, node);
	case C_GRAD_FREE_FORWARD:
		return grad_free_forward(s, node);
	case C_NOT_WAITING:
		return !waiting_loop(s, node);
	case C_NO_BLOCKING_COPY: {
		/* the loop around node copies nothing to the device with a
		 * blocking copy */
		TSNode loop = pl_scan_enclosing_loop(s, node);
		TSNode body = ts_node_is_null(loop) ? loop : ts_node_child_by_field_name(loop, "body", 4);
		return ts_node_is_null(body) || !walk_named(body, blocking_copy_visit, s);
	}
	case C_ACCUMULATED:
		/* the value is summed into a name (total += n.item() ** 2) or
		 * appended to a list, in its statement */
		for (TSNode ch = node, p = ts_node_parent(node); !ts_node_is_null(p);
		     ch = p, p = ts_node_parent(p)) {
			if (node_is(p, "augmented_assignment")) {
				if (!ts_node_eq(ts_node_child_by_field_name(p, "right", 5), ch))
					return 0;
				break;
			}
			if (node_is(p, "argument_list")) {
				TSNode f = ts_node_child_by_field_name(ts_node_parent(p), "function", 8);
				t = node_is(f, "attribute") ? pl_scan_ntext(s, last_name(f), &len) : NULL;
				if (t && len == 6 && !memcmp(t, "append", 6))
					break;
			}
			if (node_is(p, "block") || node_is(p, "expression_statement") ||
			    ts_node_is_null(ts_node_parent(p)))
				return 0;
		}
		/* and the loop it is in runs every time: not in a periodic
		 * branch (the loop over the parameters is inside it) */
		{
			TSNode lp = loop_above(s, node);
			return !c->has_re2 || ts_node_is_null(lp) || !periodic_at(s, &c->re2, lp);
		}
	case C_EVALUATED: {
		TSNode cap = capture_named(r->query, m, c->cap);
		return !ts_node_is_null(cap) && evaluated(s, node, cap);
	}
	case C_NOT_MUTATED: {
		TSNode cap = capture_named(r->query, m, c->cap);
		return !ts_node_is_null(cap) && !loop_mutates(s, node, cap);
	}
	case C_EVAL_LOADER:
		return eval_loader(s, node);
	case C_NOT_EVAL_LOADER:
		/* an evaluation loader in a file that pins elsewhere: the author
		 * pins where the step waits for the copies */
		return !eval_loader(s, node) || !uses_device(s, 4);
	case C_USES_DEVICE:
		/* a pending helper's file need not name the device its caller
		 * does (a metrics module): the caller's file is asked (scanrun.c) */
		if (uses_device(s, 1))
			return 1;
		if (s->pending)
			s->pending_device = 1;
		return s->pending != NULL;
	case C_USES_CUDA:
		return uses_device(s, 2);
	case C_ONLY_GROWN: {
		/* a pure accumulator: the name @cap binds is named nowhere in
		 * its innermost loop (header and body) but in the finding itself
		 * (x = torch.cat([x, y]) collecting outputs; not a sequence the
		 * loop feeds back to a model, ids = cat([ids, next]), whose
		 * whole length each step needs) */
		TSNode cap = capture_named(r->query, m, c->cap);
		TSNode loop = pl_scan_enclosing_loop(s, node);
		if (ts_node_is_null(cap) || ts_node_is_null(loop))
			return 0;
		struct name_elsewhere f = {s, NULL, 0, ts_node_start_byte(node),
					   ts_node_end_byte(node)};
		f.name = pl_scan_ntext(s, cap, &f.len);
		return !walk_named(loop, elsewhere_visit, &f);
	}
	case C_CALL_ARGS_LACK: {
		char *args = call_args_text(s, node);
		int hit = !args || cond_match(s, r, c, m, args, strlen(args));
		free(args);
		return !hit;
	}
	case C_IN_ASYNC_DEF: {
		TSNode fn = pl_scan_enclosing_function(s, node);
		if (ts_node_is_null(fn))
			return 0;
		t = pl_scan_ntext(s, fn, &len);
		return len >= 6 && !strncmp(t, "async", 5) && isspace((unsigned char)t[5]);
	}
	case C_NOT_IN_NO_GRAD:
		return !c->has_re || !no_grad_at(s, &c->re, node);
	case C_IN_METHOD: {
		/* the definition the finding is on or in, then what holds it */
		int i = scope_of(s, node);
		const char *ty = ts_node_type(node);
		if (strcmp(ty, "decorated_definition") && strcmp(ty, "function_definition")) {
			while (i >= 0 && !(s->scopes[i].kind & (SK_DECOR | SK_FUNC)))
				i = s->scopes[i].parent;
			if (i < 0)
				return 0;
			i = s->scopes[i].parent;
		}
		for (; i >= 0; i = s->scopes[i].parent) {
			if (s->scopes[i].kind == SK_CLASS)
				return 1;
			if (s->scopes[i].kind == SK_FUNC)
				return 0;
		}
		return 0;
	}
	case C_ENCLOSING_LOOP_ITERATES: {
		TSNode cap = capture_named(r->query, m, c->cap);
		if (ts_node_is_null(cap))
			return 0;
		for (TSNode p = pl_scan_enclosing_loop(s, node); !ts_node_is_null(p);
		     p = pl_scan_enclosing_loop(s, p)) {
			/* in a Python loop's else clause it runs once, after the
			 * loop: not nested in it */
			TSNode alt = ts_node_child_by_field_name(p, "alternative", 11);
			if (!ts_node_is_null(alt) && ts_node_start_byte(node) >= ts_node_start_byte(alt) &&
			    ts_node_end_byte(node) <= ts_node_end_byte(alt))
				continue;
			TSNode it = loop_iterable(p);
			if (!ts_node_is_null(it) && !ts_node_eq(it, cap) &&
			    pl_scan_text_eq(s, it, cap))
				return 1;
			/* C: `for (j = 0; j < i; j++)` inside `for (i = 0; i < n; i++)`
			 * walks the same range up to the outer position */
			TSNode cond = ts_node_child_by_field_name(p, "condition", 9);
			if (!ts_node_is_null(cond) &&
			    !strcmp(ts_node_type(cond), "binary_expression")) {
				TSNode var = ts_node_child_by_field_name(cond, "left", 4);
				if (!ts_node_is_null(var) && pl_scan_text_eq(s, var, cap))
					return 1;
			}
		}
		return 0;
	}
	case C_LOOP_HEADER_HAS:
	case C_LOOP_HEADER_LACKS: {
		int has = c->kind == C_LOOP_HEADER_HAS;
		TSNode loop = pl_scan_enclosing_loop(s, node);
		if (ts_node_is_null(loop))
			return !has;
		TSNode body = ts_node_child_by_field_name(loop, "body", 4);
		uint32_t a = ts_node_start_byte(loop), b = ts_node_is_null(body)
							       ? ts_node_end_byte(loop)
							       : ts_node_start_byte(body);
		int hit = b <= s->len && a <= b && cond_match(s, r, c, m, s->text + a, b - a);
		return has ? hit : !hit;
	}
	case C_NODE_HAS:
	case C_NODE_LACKS: {
		t = pl_scan_ntext(s, node, &len);
		int hit = cond_match(s, r, c, m, t, len);
		return c->kind == C_NODE_HAS ? hit : !hit;
	}
	case C_FUNCTION_LACKS:
	case C_FUNCTION_HAS:
	case C_FILE_HAS:
	case C_FILE_LACKS:
	case C_LOOP_LACKS:
	case C_LOOP_HAS: {
		int loop = c->kind == C_LOOP_LACKS || c->kind == C_LOOP_HAS;
		int fn = c->kind == C_FUNCTION_LACKS || c->kind == C_FUNCTION_HAS;
		TSNode scope = loop ? pl_scan_enclosing_loop(s, node)
			       : fn ? pl_scan_enclosing_function(s, node)
				    : (TSNode){0};
		if (loop && ts_node_is_null(scope))
			return c->kind == C_LOOP_LACKS; /* no loop: nothing in it */
		if (ts_node_is_null(scope)) {		/* the file, or code outside functions */
			t = code_text(s);
			len = s->len;
		} else {
			t = code_text(s) + (pl_scan_ntext(s, scope, &len) - s->text);
		}
		int hit = cond_match(s, r, c, m, t, len);
		int want =
		    c->kind == C_FUNCTION_HAS || c->kind == C_FILE_HAS || c->kind == C_LOOP_HAS;
		return want ? hit : !hit;
	}
	}
	return 0;
}
