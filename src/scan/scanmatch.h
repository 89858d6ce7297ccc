/*
 * scan's own query matcher. tree-sitter 0.20's query cursor computes a
 * status for every node it passes (field, later siblings, supertypes:
 * 2.4 times the cost of a plain walk, 0.29x of parsing) whether or not
 * a pattern can start there; on 712,000 lines that was most of what scan
 * spent above the parser's floor. This matcher walks the tree once and
 * tries a pattern only at the nodes whose symbol its root names.
 *
 * It reads the patterns of a query already compiled by tree-sitter (so
 * errors and capture ids are tree-sitter's) and knows the subset of the
 * query language perfloop's rules use: node types, `field:`, `(_)` and
 * `_`, "anonymous" nodes, [alternatives], the anchor `.`, captures, and
 * predicates (the caller evaluates them; those that name words, #eq? with
 * a string and #match? of ^(word|word)$, are also checked here, early). A query using more
 * (quantifiers, negated fields, supertypes, sibling sequences) gets no
 * matcher, and the caller uses tree-sitter's cursor.
 *
 * The matches are those tree-sitter's cursor returns, in its order: each
 * at the node where it completes, in preorder; a match whose captures
 * another of the same pattern and root contains is left out, as
 * tree-sitter's longest-match rule does. tests/unit/test_scanmatch.c and
 * t704 compare the two on real code.
 */
#ifndef PL_SCANMATCH_H
#define PL_SCANMATCH_H

#include <stdint.h>
#include <tree_sitter/api.h>

struct pl_qm;

/* The matcher for q, compiled from its source text (the text given to
 * ts_query_new); NULL where q uses what the matcher does not know, or
 * out of memory. */
struct pl_qm *pl_qm_new(const TSLanguage *lang, const TSQuery *q, const char *text,
			uint32_t len);
void pl_qm_free(struct pl_qm *qm);

/* Called for each match in order; a nonzero return stops the run. */
typedef int (*pl_qm_fn)(void *arg, const TSQueryMatch *m);

/* Every match under root, of the source text it was parsed from, of the
 * patterns k with no skip[k] (skip NULL: every pattern): 0, fn's nonzero
 * return, or -1 out of memory. */
int pl_qm_exec(const struct pl_qm *qm, TSNode root, const char *text, const unsigned char *skip,
	       pl_qm_fn fn, void *arg);

#endif
