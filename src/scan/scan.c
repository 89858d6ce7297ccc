/*
 * The scan of one file (pl_scan_with, run by scanrun.c on each thread):
 * the file is parsed once and the combined query of its language
 * (scanrules.c) runs over the tree once; each match is judged by its
 * pattern's predicates, its rule's conditions (scancond.c), the file's
 * suppression comments and severity, and kept as a finding. A query is
 * shared (read-only); a parser and a query cursor belong to one thread.
 * This file never depends on the result cache: scanrun.c joins the two.
 */
#include "scan_int.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <tree_sitter/api.h>

#include "grow.h"
#include "scanmatch.h"
#include "strbuf.h"
#include "suppress.h"

static int preds_hold(struct src *s, const struct pl_rule *r, const TSQueryMatch *m)
{
	const struct pattern_preds *pp = &r->preds[m->pattern_index - r->pat_off];
	for (size_t i = 0; i < pp->n; i++) {
		const struct pred *p = &pp->v[i];
		TSNode a = {0}, b = {0};
		int have_a = 0, have_b = 0;
		for (uint16_t k = 0; k < m->capture_count; k++) {
			if (m->captures[k].index == p->cap && !have_a) {
				a = m->captures[k].node;
				have_a = 1;
			}
			if (p->other_cap && m->captures[k].index == p->cap2 && !have_b) {
				b = m->captures[k].node;
				have_b = 1;
			}
		}
		if (!have_a || (p->other_cap && !have_b))
			return 0;
		size_t la;
		const char *ta = pl_scan_ntext(s, a, &la);
		int ok;
		if (p->kind == P_TORCH) {
			ok = pl_scan_is_torch(s, a);
		} else if (p->kind == P_EQ || p->kind == P_NOT_EQ) {
			ok = p->other_cap ? pl_scan_text_eq(s, a, b)
					  : (strlen(p->str) == la && !memcmp(p->str, ta, la));
			if (p->kind == P_NOT_EQ)
				ok = !ok;
		} else {
			/* a capture is short: matched from a copy on the stack (in
			 * place, REG_STARTEND, ASan's regexec interceptor measures
			 * the whole rest of the file per call: minutes on 10 MB) */
			char small[512];
			if (la < sizeof small) {
				memcpy(small, ta, la);
				small[la] = '\0';
				ok = regexec(&p->re, small, 0, NULL, 0) == 0;
			} else {
				char *buf = pl_scan_dupn(ta, la);
				ok = buf && regexec(&p->re, buf, 0, NULL, 0) == 0;
				free(buf);
			}
			if (p->kind == P_NOT_MATCH)
				ok = !ok;
		}
		if (!ok)
			return 0;
	}
	return 1;
}

/* The text of line row (0-based), without its newline. */
static const char *line_at(struct src *s, uint32_t row, size_t *len)
{
	if (row >= s->nlines)
		return NULL;
	const char *p = s->text + s->line_start[row];
	const char *end = row + 1 < s->nlines ? s->text + s->line_start[row + 1] : s->text + s->len;
	*len = (size_t)(end - p);
	if (*len && p[*len - 1] == '\n')
		(*len)--;
	return p;
}

/* Test code (a test, tests or testing directory; test_*.py, *_test.*,
 * conftest.py) runs in CI, not in production: its findings are rated one
 * level lower. */
static int is_test_path(const char *path)
{
	for (const char *p = path; *p;) {
		size_t n = strcspn(p, "/");
		int last = p[n] == '\0';
		if (!last &&
		    ((n == 4 && !strncmp(p, "test", 4)) || (n == 5 && !strncmp(p, "tests", 5)) ||
		     (n == 7 && !strncmp(p, "testing", 7))))
			return 1;
		if (last) {
			const char *dot = memchr(p, '.', n);
			size_t stem = dot ? (size_t)(dot - p) : n;
			return !strncmp(p, "test_", 5) || !strcmp(p, "conftest.py") ||
			       (stem > 5 && !strncmp(p + stem - 5, "_test", 5));
		}
		p += n + 1;
	}
	return 0;
}

static int add_finding(struct pl_scan_file *f, struct src *s, const struct pl_rule *r, TSNode node,
		       enum pl_severity sev, const char *note, const char *pending)
{
	TSPoint pt = ts_node_start_point(node);
	/* one finding per rule and line: `x.mean() / x.std()` is one problem;
	 * a rule's matches come in document order, so a repeat is recent */
	for (size_t i = f->findings.n, k = 0; i-- > 0 && k < 16; k++)
		if (!strcmp(f->findings.v[i].leaf, r->id) &&
		    f->findings.v[i].line == (long)pt.row + 1)
			return 0;
	/* group: loop: several syncs in one step are one cost to remove; the
	 * first stands for all, and says where the others are. Outside any
	 * loop, the function is the step (train_step(batch)) */
	uint32_t key = 0;
	const char *in = "loop";
	if (r->group_loop) {
		TSNode loop = pl_scan_enclosing_loop(s, node);
		if (ts_node_is_null(loop)) {
			loop = pl_scan_enclosing_function(s, node);
			in = "function";
		}
		key = ts_node_is_null(loop) ? 0 : ts_node_start_byte(loop) + 1;
		for (size_t i = f->findings.n; key && i-- > 0;) {
			struct pl_finding *g = &f->findings.v[i];
			if (i >= s->group_cap || s->group[i] != key || strcmp(g->leaf, r->id))
				continue;
			json_int_t n =
			    json_integer_value(json_object_get(g->evidence_numbers, "occurrences"));
			/* "x.item() (also in this loop: line 15, 18)" */
			size_t tl = strlen(g->evidence_text);
			char *t = NULL;
			if (n > 1 && tl > 0 && g->evidence_text[tl - 1] == ')') {
				if (asprintf(&t, "%.*s, %ld)", (int)(tl - 1), g->evidence_text,
					     (long)pt.row + 1) < 0)
					return -1;
			} else if (asprintf(&t, "%s (also in this %s: line %ld)", g->evidence_text,
					    in, (long)pt.row + 1) < 0) {
				return -1;
			}
			free(g->evidence_text);
			g->evidence_text = t;
			if (!g->evidence_numbers)
				g->evidence_numbers = json_object();
			json_object_set_new(g->evidence_numbers, "occurrences",
					    json_integer(n > 1 ? n + 1 : 2));
			if (!g->also_lines)
				g->also_lines = json_array();
			json_array_append_new(g->also_lines, json_integer((json_int_t)pt.row + 1));
			return 0;
		}
	}
	/* doubling: growing by one is the quadratic copy rule C003 describes */
	if (pl_grow((void **)&f->findings.v, &f->findings_cap, f->findings.n + 1,
		    sizeof *f->findings.v, 16) < 0)
		return -1;
	struct pl_finding *x = &f->findings.v[f->findings.n];
	memset(x, 0, sizeof *x);
	size_t len;
	const char *l = line_at(s, pt.row, &len);
	x->evidence_text = l ? pl_scan_trim_dup(l, len > 200 ? 200 : len) : strdup("");
	x->leaf = strdup(r->id);
	x->signal = strdup(r->title);
	x->path = strdup(f->path);
	x->function = pl_scan_function_name(s, pl_scan_enclosing_function(s, node));
	x->suggested_action = strdup(r->fix);
	x->metric_name = strdup(r->metric);
	x->id = malloc(16);
	if (!x->evidence_text || !x->leaf || !x->signal || !x->path || !x->suggested_action ||
	    !x->metric_name || !x->id)
		return -1;
	/* the id: rule, file, function and the code itself (not the line) */
	char sig[512];
	snprintf(sig, sizeof sig, "%s|%s", r->title, x->evidence_text);
	pl_finding_id(x->leaf, x->path, x->function ? x->function : "", sig, x->id);
	x->severity = sev;
	if (note && !(x->severity_note = strdup(note)))
		return -1;
	x->status = r->status;
	if (pending && !(x->needs_caller = strdup(pending)))
		return -1;
	x->line = (long)pt.row + 1;
	x->column = (long)pt.column + 1;
	x->end_line = (long)ts_node_end_point(node).row + 1; /* a loop: its body too */
	if (x->end_line <= x->line)
		x->end_line = 0;
	x->confidence = r->confidence;
	x->level = r->level;
	if (pl_grow((void **)&s->group, &s->group_cap, f->findings.n + 1, sizeof *s->group, 16) < 0)
		return -1;
	s->group[f->findings.n] = key;
	f->findings.n++;
	return 0;
}

static int cmp_finding(const void *a, const void *b)
{
	const struct pl_finding *x = a, *y = b;
	if (x->line != y->line)
		return x->line < y->line ? -1 : 1;
	if (x->column != y->column)
		return x->column < y->column ? -1 : 1;
	return strcmp(x->leaf, y->leaf);
}

static size_t count_errors(TSNode n)
{
	if (!ts_node_has_error(n))
		return 0;
	size_t c = ts_node_is_missing(n) || !strcmp(ts_node_type(n), "ERROR");
	TSTreeCursor cur = ts_tree_cursor_new(n);
	/* iterative walk: deep trees must not exhaust the C stack */
	if (ts_tree_cursor_goto_first_child(&cur)) {
		for (;;) {
			TSNode k = ts_tree_cursor_current_node(&cur);
			int descend = 0;
			if (ts_node_has_error(k)) {
				c += ts_node_is_missing(k) || !strcmp(ts_node_type(k), "ERROR");
				descend = ts_tree_cursor_goto_first_child(&cur);
			}
			if (descend)
				continue;
			while (!ts_tree_cursor_goto_next_sibling(&cur)) {
				if (!ts_tree_cursor_goto_parent(&cur)) {
					ts_tree_cursor_delete(&cur);
					return c;
				}
				if (ts_node_eq(ts_tree_cursor_current_node(&cur), n)) {
					ts_tree_cursor_delete(&cur);
					return c;
				}
			}
		}
	}
	ts_tree_cursor_delete(&cur);
	return c;
}

/* A suppression that names no rule perfloop has, or suppressed nothing
 * this scan could have found (its rule selected), is a warning: a typo or
 * a fix that made it stale would otherwise hide findings silently. Ruff's
 * noqa may name other tools' codes: only perfloop's ids are judged. */
static int supp_warnings(const struct pl_rules *rules, const struct pl_scan_opts *o,
			 struct pl_scan_file *f, const struct pl_supps *ss)
{
	struct pl_strbuf b = {0};
	for (size_t i = 0; i < ss->n; i++) {
		const struct pl_supp *x = &ss->v[i];
		const char *form = x->noqa ? "noqa" : "perfloop: ignore";
		if (x->bare) { /* others' tools use it: unused says nothing */
			if (x->used_all)
				pl_strbuf_printf(&b,
						 "%s:%u: a bare '# noqa' suppressed %s (as ruff reads "
						 "it: every rule on the line; '# noqa: %s' names it)\n",
						 f->path, x->row + 1, x->hit, x->hit);
			continue;
		}
		if (x->all && !x->used_all)
			pl_strbuf_printf(&b,
					 "%s:%u: unused '%s' (no finding on this line or the "
					 "next)\n",
					 f->path, x->row + 1, form);
		for (unsigned j = 0; j < x->nids; j++) {
			const struct pl_rule *r = pl_rules_find(rules, x->ids[j]);
			if (!r) {
				if (!x->noqa)
					pl_strbuf_printf(&b,
							 "%s:%u: unknown rule '%s' in '%s[...]' "
							 "(perfloop scan --list-rules)\n",
							 f->path, x->row + 1, x->ids[j], form);
			} else if (!x->used[j] && pl_scan_rule_selected(r, o)) {
				pl_strbuf_printf(&b,
						 "%s:%u: unused suppression of %s (no %s finding "
						 "on this line%s)\n",
						 f->path, x->row + 1, r->id, r->id,
						 x->noqa ? "" : " or the next");
			}
		}
	}
	if (b.failed) {
		free(b.s);
		return -1;
	}
	f->warnings = b.s;
	return 0;
}

struct judge {
	struct src *s;
	const struct pl_rules *rules;
	const struct pl_scan_opts *o;
	struct pl_scan_file *f;
	int test_code;
};

/* One match of the combined query: a scope for the conditions, or a
 * rule's pattern judged by its predicates and conditions, suppressions
 * and severity, and kept as a finding. 0, or -1 out of memory. */
static int judge_match(void *arg, const TSQueryMatch *mp)
{
	struct judge *j = arg;
	struct src *s = j->s;
	const struct pl_scan_opts *o = j->o;
	const TSQueryMatch m = *mp;
	if (m.pattern_index >= j->rules->npatterns[s->lang])
		return m.capture_count && pl_scan_add_scope(s, m.captures[0].node) < 0 ? -1 : 0;
	const struct pl_rule *r = j->rules->owner[s->lang][m.pattern_index];
	if (!pl_scan_rule_selected(r, o))
		return 0;
	TSNode node = (TSNode){0};
	for (uint16_t i = 0; i < m.capture_count; i++)
		if (m.captures[i].index == r->finding_cap)
			node = m.captures[i].node;
	if (ts_node_is_null(node) || !preds_hold(s, r, &m))
		return 0;
	size_t c = 0;
	s->pending = s->pending_class = NULL;
	s->pending_len = s->pending_class_len = 0;
	s->pending_device = 0;
	while (c < r->nconds && pl_scan_cond_holds(s, r, &r->conds[c], &m, node))
		c++;
	if (c < r->nconds)
		return 0;
	/* pending: "name" of a function, "name Class" of a method; "!" first
	 * where the caller's file must name a device (scanrun.c) */
	char pending[256] = "";
	if (s->pending && s->pending_len < 120 && s->pending_class_len < 120)
		snprintf(pending, sizeof pending, "%s%.*s%s%.*s", s->pending_device ? "!" : "",
			 (int)s->pending_len, s->pending,
			 s->pending_class ? " " : "", s->pending_class ? (int)s->pending_class_len : 0,
			 s->pending_class ? s->pending_class : "");
	else if (s->pending)
		return 0;
	if (pl_supp_match(&s->supps, ts_node_start_point(node).row, r->id))
		return 0;
	/* severity from evidence: the rule's, one level lower where its
	 * lower: conditions hold or in test code */
	enum pl_severity sev = r->severity;
	const char *note = NULL;
	if (r->nlconds) {
		c = 0;
		while (c < r->nlconds && pl_scan_cond_holds(s, r, &r->lconds[c], &m, node))
			c++;
		if (c == r->nlconds)
			note = r->lower_why;
	}
	if (!note && j->test_code)
		note = "in test code";
	char why[256];
	if (note && sev < PL_SEV_LOW) {
		sev++;
		snprintf(why, sizeof why, "rated %s, not %s: %s", pl_severity_name(sev),
			 pl_severity_name(r->severity), note);
		note = why;
	} else {
		note = NULL;
	}
	if (o && (int)sev > o->min_severity)
		return 0;
	return add_finding(j->f, s, r, node, sev, note, pending[0] ? pending : NULL) < 0 ? -1 : 0;
}

int pl_scan_with(TSParser *parser, TSQueryCursor *qc, const struct pl_rules *rules,
		 const struct pl_scan_opts *o, struct pl_scan_file *f)
{
	struct src s = {.text = f->text, .len = f->len, .lang = f->lang};
	for (size_t i = 0; i < f->len; i++)
		f->lines += f->text[i] == '\n';
	if (f->len && f->text[f->len - 1] != '\n')
		f->lines++;
	s.line_start = malloc((f->lines + 1) * sizeof *s.line_start);
	if (!s.line_start)
		return -1;
	s.line_start[s.nlines++] = 0;
	for (size_t i = 0; i + 1 < f->len; i++)
		if (f->text[i] == '\n')
			s.line_start[s.nlines++] = (uint32_t)(i + 1);
	if (!ts_parser_set_language(parser, pl_scan_language(f->lang))) {
		free(s.line_start);
		return -1;
	}
	TSTree *tree = ts_parser_parse_string(parser, NULL, f->text, (uint32_t)f->len);
	if (!tree) {
		free(s.line_start);
		return -1;
	}
	if (pl_supp_parse(f->text, f->len, s.line_start, s.nlines, &s.supps) < 0) {
		ts_tree_delete(tree);
		free(s.line_start);
		return -1;
	}
	TSNode root = ts_tree_root_node(tree);
	f->error_nodes = count_errors(root);
	s.root = root;
	int rc = 0;
	struct judge j = {&s, rules, o, f, is_test_path(f->path)};
	if (rules->matcher[f->lang]) {
		/* the patterns of a rule not selected, or of one whose `needs:`
		 * text this file lacks (PY017 is tried on every call, in files
		 * that call some .eval()), are not tried at all */
		/* (the scope pattern after the rules' is never skipped) */
		uint32_t np = rules->npatterns[f->lang];
		unsigned char *skip = calloc(ts_query_pattern_count(rules->combined[f->lang]) + 1, 1);
		if (!skip) {
			rc = -1;
		} else {
			/* one look per text needed (PY016, PY021, PY027 and PY038
			 * all need "torch"), one per rule where more differ */
			const char *looked[4] = {0};
			int found[4] = {0}, nlooked = 0;
			for (uint32_t k = 0; k < np; k++) {
				const struct pl_rule *r = rules->owner[f->lang][k];
				int has = 1;
				if (r->needs) {
					int i = 0;
					while (i < nlooked && strcmp(looked[i], r->needs))
						i++;
					if (i == nlooked) {
						has = memmem(f->text, f->len, r->needs,
							     strlen(r->needs)) != NULL;
						if (nlooked < 4) {
							looked[nlooked] = r->needs;
							found[nlooked++] = has;
						}
					} else {
						has = found[i];
					}
				}
				skip[k] = !pl_scan_rule_selected(r, o) || !has;
			}
			rc = pl_qm_exec(rules->matcher[f->lang], root, f->text, skip, judge_match,
					&j)
				 ? -1
				 : 0;
			free(skip);
		}
	} else if (rules->combined[f->lang]) {
		ts_query_cursor_exec(qc, rules->combined[f->lang], root);
		TSQueryMatch m;
		while (rc == 0 && ts_query_cursor_next_match(qc, &m))
			rc = judge_match(&j, &m);
	}
	/* the functions this file calls on every training step, for the
	 * pending findings of other files: with the step loop and periodic
	 * branch of the rule that asks (PY010's in-training-step) */
	for (uint32_t k = 0; rc == 0 && f->lang == PL_LANG_PYTHON && k < rules->n; k++) {
		const struct pl_rule *r = rules->v[k];
		if (r->lang != f->lang || !pl_scan_rule_selected(r, o))
			continue;
		size_t c = 0;
		while (c < r->nconds && r->conds[c].kind != C_IN_TRAINING_STEP)
			c++;
		if (c == r->nconds || !r->conds[c].has_re || !r->conds[c].has_re2)
			continue;
		int failed;
		f->step_calls = pl_scan_step_calls(&s, &r->conds[c].re, &r->conds[c].re2, &failed);
		f->step_device = f->step_calls && pl_scan_uses_device(&s);
		if (failed)
			rc = -1;
		break;
	}
	ts_tree_delete(tree);
	if (rc == 0 && supp_warnings(rules, o, f, &s.supps) < 0)
		rc = -1;
	pl_supp_release(&s.supps);
	free(s.line_start);
	free(s.scopes);
	free(s.code);
	free(s.group);
	if (f->findings.n > 1)
		qsort(f->findings.v, f->findings.n, sizeof *f->findings.v, cmp_finding);
	return rc;
}

int pl_scan_lang(const char *path)
{
	const char *dot = strrchr(path, '.');
	if (!dot || strchr(dot, '/'))
		return -1;
	if (!strcmp(dot, ".py") || !strcmp(dot, ".pyi"))
		return PL_LANG_PYTHON;
	if (!strcmp(dot, ".c") || !strcmp(dot, ".h"))
		return PL_LANG_C;
	return -1;
}

void pl_scan_file_release(struct pl_scan_file *f)
{
	free(f->path);
	free(f->text);
	free(f->warnings);
	free(f->step_calls);
	pl_findings_release(&f->findings);
	memset(f, 0, sizeof *f);
}
