/* Unit tests for src/scan/scanmatch.c: on each query and source below the
 * matcher must return exactly the matches tree-sitter's query cursor
 * returns (pattern, captures and their nodes), in the same order; and a
 * query using what the matcher does not read gets no matcher. */
#include <regex.h>
#include <string.h>

#include "testutil.h"

#include "scanmatch.h"

const TSLanguage *tree_sitter_python(void);
const TSLanguage *tree_sitter_c(void);

/* Each match as one line: pattern, then capture=start-end per capture in
 * capture order, sorted by capture id (the order within one match is not
 * part of either's contract). */
struct lines {
	char buf[65536];
	size_t len;
	int n;
};

static void add_match(struct lines *l, const TSQueryMatch *m)
{
	uint32_t idx[32];
	uint16_t n = m->capture_count < 32 ? m->capture_count : 32;
	for (uint16_t i = 0; i < n; i++)
		idx[i] = i;
	for (uint16_t i = 1; i < n; i++) /* by capture id, then node */
		for (uint16_t j = i; j > 0; j--) {
			const TSQueryCapture *a = &m->captures[idx[j - 1]], *b = &m->captures[idx[j]];
			if (a->index < b->index ||
			    (a->index == b->index && ts_node_start_byte(a->node) <= ts_node_start_byte(b->node)))
				break;
			uint32_t t = idx[j];
			idx[j] = idx[j - 1];
			idx[j - 1] = t;
		}
	l->len += (size_t)snprintf(l->buf + l->len, sizeof l->buf - l->len, "p%u", m->pattern_index);
	for (uint16_t i = 0; i < n; i++) {
		const TSQueryCapture *c = &m->captures[idx[i]];
		l->len += (size_t)snprintf(l->buf + l->len, sizeof l->buf - l->len, " c%u=%u-%u",
					   c->index, ts_node_start_byte(c->node),
					   ts_node_end_byte(c->node));
	}
	l->len += (size_t)snprintf(l->buf + l->len, sizeof l->buf - l->len, "\n");
	l->n++;
}

static const TSQuery *cur_q;
static const char *cur_src;

/* The #eq? and #match? predicates of a capture and a string, as scan
 * evaluates them: the cursor leaves them all to its caller, the matcher
 * checks some early; what both must agree on is what passes. */
static int preds_hold(const TSQuery *q, const char *src, const TSQueryMatch *m)
{
	uint32_t n;
	const TSQueryPredicateStep *st = ts_query_predicates_for_pattern(q, m->pattern_index, &n);
	for (uint32_t i = 0; i + 3 < n + 1; i++) {
		if (!(i == 0 || st[i - 1].type == TSQueryPredicateStepTypeDone) || i + 3 > n ||
		    st[i + 1].type != TSQueryPredicateStepTypeCapture ||
		    st[i + 2].type != TSQueryPredicateStepTypeString)
			continue;
		uint32_t l, tl;
		const char *name = ts_query_string_value_for_id(q, st[i].value_id, &l);
		const char *want = ts_query_string_value_for_id(q, st[i + 2].value_id, &tl);
		for (uint16_t c = 0; c < m->capture_count; c++) {
			if (m->captures[c].index != st[i + 1].value_id)
				continue;
			uint32_t a = ts_node_start_byte(m->captures[c].node);
			char text[256];
			snprintf(text, sizeof text, "%.*s",
				 (int)(ts_node_end_byte(m->captures[c].node) - a), src + a);
			if (!strcmp(name, "eq?") && strcmp(text, want) != 0)
				return 0;
			if (!strcmp(name, "match?")) {
				regex_t re;
				assert_int_equal(regcomp(&re, want, REG_EXTENDED | REG_NOSUB), 0);
				int rc = regexec(&re, text, 0, NULL, 0);
				regfree(&re);
				if (rc != 0)
					return 0;
			}
		}
	}
	return 1;
}

static int collect(void *arg, const TSQueryMatch *m)
{
	if (preds_hold(cur_q, cur_src, m))
		add_match(arg, m);
	return 0;
}

/* Both matchers over src; asserts they agree and returns the count. */
static int agree(const TSLanguage *lang, const char *query, const char *src)
{
	uint32_t off;
	TSQueryError qe;
	TSQuery *q = ts_query_new(lang, query, (uint32_t)strlen(query), &off, &qe);
	assert_non_null(q);
	struct pl_qm *qm = pl_qm_new(lang, q, query, (uint32_t)strlen(query));
	assert_non_null(qm);
	TSParser *p = ts_parser_new();
	ts_parser_set_language(p, lang);
	TSTree *t = ts_parser_parse_string(p, NULL, src, (uint32_t)strlen(src));
	static struct lines own, ref;
	cur_q = q;
	cur_src = src;
	memset(&own, 0, sizeof own);
	memset(&ref, 0, sizeof ref);
	assert_int_equal(pl_qm_exec(qm, ts_tree_root_node(t), src, NULL, collect, &own), 0);
	TSQueryCursor *qc = ts_query_cursor_new();
	ts_query_cursor_exec(qc, q, ts_tree_root_node(t));
	TSQueryMatch m;
	while (ts_query_cursor_next_match(qc, &m))
		collect(&ref, &m);
	/* tree-sitter leaves its word predicates to the caller; the matcher
	 * checks them early: compare what passes them */
	if (strcmp(own.buf, ref.buf) != 0)
		print_message("query:\n%s\nsource:\n%s\nown:\n%stree-sitter:\n%s", query, src,
			      own.buf, ref.buf);
	assert_string_equal(own.buf, ref.buf);
	ts_query_cursor_delete(qc);
	ts_tree_delete(t);
	ts_parser_delete(p);
	pl_qm_free(qm);
	ts_query_delete(q);
	return own.n;
}

static const char *py_src =
    "import torch\n"
    "def train(model, loader, opt):\n"
    "    for i, (x, y) in enumerate(loader):\n"
    "        loss = model(x).sum()\n"
    "        loss.backward()\n"
    "        print(x, loss, y)\n"
    "        total += loss.item()\n"
    "        s += 'a' + str(i)\n"
    "        for a in items:\n"
    "            for b in items:\n"
    "                out.append(a)  # comment\n"
    "        f(1, 2, g(3), h(k=4))\n"
    "        xs.pop(0)\n"
    "        ys.insert(0, 1)\n"
    "        torch.cuda.synchronize()\n"
    "        d = {k: v for k, v in kv.items()}\n"
    "    return [a for a in b if a]\n"
    "@functools.lru_cache(maxsize=None)\n"
    "def g(self): pass\n"
    "x = (1 +\n";

static void test_python_shapes(void **state)
{
	(void)state;
	const TSLanguage *py = tree_sitter_python();
	/* a node, a field, a wildcard */
	assert_int_equal(agree(py, "(for_statement right: (_) @iter) @finding", py_src), 3);
	/* several ways to match one root: one match per identifier argument */
	assert_true(agree(py, "(call arguments: (argument_list (identifier) @a)) @c", py_src) > 3);
	/* anchors: first, last, only, and immediately following */
	agree(py, "(argument_list . (_) @first) @l", py_src);
	agree(py, "(argument_list (_) @last .) @l", py_src);
	agree(py, "(argument_list . (_) @only .) @l", py_src);
	agree(py, "(argument_list (identifier) @a . (identifier) @b)", py_src);
	agree(py, "(block . (expression_statement) @s .) @b", py_src);
	/* alternatives, with captures on the alternative and inside */
	agree(py, "(call function: [(identifier) @f (attribute attribute: (identifier) @f)]) @c",
	      py_src);
	agree(py, "[(for_statement) (while_statement) (function_definition) (lambda)] @scope",
	      py_src);
	agree(py, "(for_statement left: [(pattern_list) (tuple_pattern)] @l) @f", py_src);
	/* anonymous nodes and _ */
	agree(py, "(augmented_assignment operator: \"+=\" right: (_) @r) @a", py_src);
	agree(py, "(binary_operator _ @x \"+\" (_) @y)", py_src);
	/* nested fields and grouping with predicates */
	agree(py,
	      "((call function: (attribute object: (identifier) @o attribute: (identifier) @m) "
	      "arguments: (argument_list . (integer) @i)) @finding "
	      "(#match? @m \"^(pop|insert)$\") (#eq? @i \"0\"))",
	      py_src);
	agree(py,
	      "((call function: (attribute attribute: (identifier) @m) arguments: (argument_list)) "
	      "@finding (#match? @m \"^(item|cpu|numpy|tolist)$\"))",
	      py_src);
	/* predicates the matcher does not read stay the caller's */
	agree(py, "((call function: (identifier) @f) @c (#match? @f \"^pr.nt\"))", py_src);
	/* a decorator's keyword argument, the comment in a block */
	agree(py,
	      "((decorator (call function: [(identifier) @f (attribute attribute: (identifier) @f)] "
	      "arguments: (argument_list (keyword_argument name: (identifier) @k value: (none))))) "
	      "@finding (#eq? @f \"lru_cache\") (#eq? @k \"maxsize\"))",
	      py_src);
	agree(py, "(block (comment) @c)", py_src);
	/* every pattern of a combined query at once, in one order */
	agree(py,
	      "(for_statement right: (_) @iter) @finding\n"
	      "((call function: (identifier) @p arguments: (argument_list (identifier) @t)) @finding "
	      "(#eq? @p \"print\"))\n"
	      "(call) @any\n"
	      "[(for_statement) (function_definition)] @pl.scope\n",
	      py_src);
}

static void test_c_shapes(void **state)
{
	(void)state;
	const TSLanguage *c = tree_sitter_c();
	const char *src = "int main(int argc, char **argv) {\n"
			  "  for (int i = 0; i < strlen(s); i++) { strcat(a, b); fflush(f); }\n"
			  "  while (i < strlen(s)) p = realloc(p, n + 1);\n"
			  "  double z = pow(x, 2);\n"
			  "  fread(buf, 1, 1, f);\n"
			  "  return m[i][j];\n"
			  "}\n";
	agree(c,
	      "(for_statement condition: (binary_expression right: (call_expression function: "
	      "(identifier) @f) @finding) (#eq? @f \"strlen\"))",
	      src);
	agree(c,
	      "((call_expression function: (identifier) @f arguments: (argument_list (_) "
	      "(number_literal) @e .)) @finding (#match? @f \"^(pow|powf|powl)$\"))",
	      src);
	agree(c,
	      "((call_expression function: (identifier) @f arguments: (argument_list (_) "
	      "(number_literal) @a (number_literal) @b (_))) @finding)",
	      src);
	agree(c,
	      "((subscript_expression argument: (subscript_expression argument: (identifier) "
	      "index: (identifier) @first) index: (identifier) @second) @finding)",
	      src);
}

/* Steps that capture nothing are not tried every way: a call of 400
 * arguments against four such steps is one pass, not 400^4/24 tries
 * (this test would not finish), with tree-sitter's matches. */
static void test_wide(void **state)
{
	(void)state;
	static char src[16384];
	size_t n = (size_t)snprintf(src, sizeof src, "void f(void) { g(");
	for (int i = 0; i < 400; i++)
		n += (size_t)snprintf(src + n, sizeof src - n, "a%d, %s", i, i % 100 ? "" : "7, ");
	snprintf(src + n, sizeof src - n, "z); }\n");
	assert_int_equal(agree(tree_sitter_c(),
			       "(argument_list (_) (_) (_) (_) (number_literal) @n . (identifier) @i)",
			       src),
			 3); /* after the first: 100 and 200 and 300 */
}

/* What the matcher does not read: no matcher (the caller uses the cursor). */
static void test_declines(void **state)
{
	(void)state;
	const TSLanguage *py = tree_sitter_python();
	const char *qs[] = {
	    "(call (identifier)* @many)",	    /* quantifier */
	    "(call (identifier)? @maybe)",	    /* quantifier */
	    "(function_definition !return_type)", /* negated field */
	    "(expression) @e",			    /* a supertype */
	    "((comment) (function_definition))",   /* a sequence of siblings */
	};
	for (size_t i = 0; i < sizeof qs / sizeof *qs; i++) {
		uint32_t off;
		TSQueryError qe;
		TSQuery *q = ts_query_new(py, qs[i], (uint32_t)strlen(qs[i]), &off, &qe);
		assert_non_null(q);
		struct pl_qm *qm = pl_qm_new(py, q, qs[i], (uint32_t)strlen(qs[i]));
		if (qm)
			print_message("read, but should not be: %s\n", qs[i]);
		assert_null(qm);
		ts_query_delete(q);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_python_shapes),
	    cmocka_unit_test(test_c_shapes),
	    cmocka_unit_test(test_wide),
	    cmocka_unit_test(test_declines),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
