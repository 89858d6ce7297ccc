/*
 * Rules as data (see scan.h): each embedded rule file (rules/LANG/NAME.scm,
 * compiled in as pl_rule_files) is parsed once into a struct pl_rule:
 * its `; key: value` header, its `when:`/`lower:` conditions and the
 * predicates of its patterns. Compiling joins the rules a scan runs into
 * one query per language (one pass over each tree), with the scopes the
 * conditions ask about as its last pattern, and points each rule at its
 * patterns there. The per-file scan (scan.c, scancond.c) reads the rules
 * through scan_int.h.
 */
#include "scan_int.h"

#include <ctype.h>
#include <regex.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <tree_sitter/api.h>

#include "hash.h"
#include "regexcap.h"
#include "scanmatch.h"
#include "strbuf.h"

const TSLanguage *tree_sitter_python(void);
const TSLanguage *tree_sitter_c(void);

struct pl_rule_file {
	const char *path, *text;
};
extern const struct pl_rule_file pl_rule_files[];

static void free_preds(struct pl_rule *r);
static int combine(struct pl_rules *rs, const struct pl_scan_opts *o, unsigned langs,
		   struct pl_error *err);

char *pl_scan_dupn(const char *s, size_t n)
{
	char *d = malloc(n + 1);
	if (d) {
		memcpy(d, s, n);
		d[n] = '\0';
	}
	return d;
}

char *pl_scan_trim_dup(const char *s, size_t n)
{
	while (n && isspace((unsigned char)*s)) {
		s++;
		n--;
	}
	while (n && isspace((unsigned char)s[n - 1]))
		n--;
	return pl_scan_dupn(s, n);
}

static void free_conds(struct cond *v, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		free(v[i].cap);
		free(v[i].re_text);
		if (v[i].has_re)
			regfree(&v[i].re);
		if (v[i].has_re2)
			regfree(&v[i].re2);
	}
	free(v);
}

static void free_rule(struct pl_rule *r)
{
	if (!r)
		return;
	free(r->id);
	free(r->title);
	free(r->severity_s);
	free(r->status_s);
	free(r->rationale);
	free(r->fix);
	free(r->bad);
	free(r->good);
	free(r->path);
	free(r->when);
	free(r->quiet);
	free(r->needs);
	free(r->advisory);
	free(r->metric);
	free_preds(r);
	free_conds(r->conds, r->nconds);
	free_conds(r->lconds, r->nlconds);
	free(r->lower);
	free(r->lower_why);
	if (r->query && r->own_query)
		ts_query_delete(r->query);
	free(r->qtext);
	free(r);
}

const TSLanguage *pl_scan_language(enum pl_lang l)
{
	return l == PL_LANG_PYTHON ? tree_sitter_python() : tree_sitter_c();
}

static int parse_severity(const char *s, enum pl_severity *out)
{
	static const char *names[] = {"critical", "high", "medium", "low"};
	for (int i = 0; i < 4; i++)
		if (strcmp(s, names[i]) == 0) {
			*out = (enum pl_severity)i;
			return 0;
		}
	return -1;
}

/* `step % 100 == 0`, `log_every`, `print_freq`, `log_interval`,
 * `eval_period`: the condition of a branch that runs every N steps; a
 * plain equality (`i == 0`, `step == warmup`): one that runs once */
/* with torch.no_grad(): / @torch.inference_mode() / set_grad_enabled(False) */
#define NO_GRAD_RE "no_grad|inference_mode|set_grad_enabled\\(False\\)"

#define PERIODIC_RE                                                                          \
	"%|every|freq|interval|period|"                                                      \
	"^[[:space:]]*[[:alnum:]_.]+[[:space:]]*==[[:space:]]*[[:alnum:]_.]+[[:space:]]*$"

/* The conditions of a `when:` (or `lower:`) line, appended to *v. */
static int parse_conds(struct pl_rule *r, const char *when, struct cond **v, size_t *nv,
		       struct pl_error *err)
{
	static const struct {
		const char *name;
		enum cond_kind kind;
		int arg; /* 0 none, 1 capture, 2 regex */
	} table[] = {
	    {"in-loop", C_IN_LOOP, 0},
	    {"in-async-def", C_IN_ASYNC_DEF, 0},
	    {"in-training-loop", C_IN_TRAINING_LOOP, 0},
	    {"not-in-no-grad", C_NOT_IN_NO_GRAD, 0},
	    {"not-periodic", C_NOT_PERIODIC, 0},
	    {"in-method", C_IN_METHOD, 0},
	    {"enclosing-loop-iterates", C_ENCLOSING_LOOP_ITERATES, 1},
	    {"function-lacks", C_FUNCTION_LACKS, 2},
	    {"function-has", C_FUNCTION_HAS, 2},
	    {"file-has", C_FILE_HAS, 2},
	    {"file-lacks", C_FILE_LACKS, 2},
	    {"loop-lacks", C_LOOP_LACKS, 2},
	    {"loop-has", C_LOOP_HAS, 2},
	    {"node-has", C_NODE_HAS, 2},
	    {"node-lacks", C_NODE_LACKS, 2},
	    {"loop-header-has", C_LOOP_HEADER_HAS, 2},
	    {"loop-header-lacks", C_LOOP_HEADER_LACKS, 2},
	    {"unconditional", C_UNCONDITIONAL, 0},
	    {"loop-not-small", C_LOOP_NOT_SMALL, 0},
	    {"call-args-lack", C_CALL_ARGS_LACK, 2},
	    {"unused", C_UNUSED, 1},
	    {"costly-dataset", C_COSTLY_DATASET, 0},
	    {"large-batches", C_LARGE_BATCHES, 0},
	    {"non-blocking-copies", C_NON_BLOCKING, 0},
	    {"blocking-copies", C_BLOCKING, 0},
	    {"not-rebound", C_NOT_REBOUND, 1},
	    {"not-read-once", C_NOT_READ_ONCE, 0},
	    {"only-grown", C_ONLY_GROWN, 1},
	    {"uses-device", C_USES_DEVICE, 0},
	    {"uses-cuda", C_USES_CUDA, 0},
	    {"in-training-step", C_IN_TRAINING_STEP, 0},
	    {"per-step", C_PER_STEP, 0},
	    {"cpu-factory", C_CPU_FACTORY, 1},
	    {"not-host-made", C_NOT_HOST_MADE, 1},
	    {"in-def", C_IN_DEF, 2},
	    {"eval-loader", C_EVAL_LOADER, 0},
	    {"not-eval-loader-beside-pinned", C_NOT_EVAL_LOADER, 0},
	    {"no-pairwise-compare", C_NO_PAIRWISE, 0},
	    {"not-mutated", C_NOT_MUTATED, 1},
	    {"not-in-except", C_NOT_IN_EXCEPT, 0},
	    {"in-eval-loop", C_IN_EVAL_LOOP, 0},
	    {"evaluated", C_EVALUATED, 1},
	    {"file-trains", C_FILE_TRAINS, 0},
	    {"not-env-input", C_NOT_ENV_INPUT, 0},
	    {"not-demo-main", C_NOT_DEMO_MAIN, 0},
	    {"blend-update", C_BLEND_UPDATE, 0},
	    {"accumulated", C_ACCUMULATED, 0},
	    {"grad-free-forward", C_GRAD_FREE_FORWARD, 0},
	    {"no-blocking-copy", C_NO_BLOCKING_COPY, 0},
	    {"not-waiting", C_NOT_WAITING, 0},
	    {"pairwise-compare", C_PAIRWISE, 0},
	    {"not-recovery", C_NOT_RECOVERY, 0},
	    {"under-if", C_UNDER_IF, 2},
	};
	const char *p = when;
	while (*p) {
		while (*p == ' ' || *p == ',')
			p++;
		if (!*p)
			break;
		size_t n = strcspn(p, " ,");
		size_t k = 0;
		for (; k < sizeof table / sizeof table[0]; k++)
			if (strlen(table[k].name) == n && strncmp(table[k].name, p, n) == 0)
				break;
		if (k == sizeof table / sizeof table[0])
			return pl_error_set(err, PL_EINPUT, "%s: when: unknown condition '%.*s'",
					    r->path, (int)n, p);
		struct cond *c = realloc(*v, (*nv + 1) * sizeof *c);
		if (!c)
			return pl_error_set(err, PL_ENOMEM, "out of memory");
		*v = c;
		c = &c[(*nv)++];
		memset(c, 0, sizeof *c);
		c->kind = table[k].kind;
		p += n;
		while (*p == ' ')
			p++;
		if (table[k].arg == 1) {
			if (*p != '@')
				return pl_error_set(err, PL_EINPUT, "%s: when: %s needs a @capture",
						    r->path, table[k].name);
			size_t m = strcspn(p + 1, " ,");
			c->cap = pl_scan_dupn(p + 1, m);
			p += m + 1;
		} else if (table[k].arg == 2) {
			if (*p != '/')
				return pl_error_set(err, PL_EINPUT,
						    "%s: when: %s needs a /regular expression/",
						    r->path, table[k].name);
			const char *end = strchr(p + 1, '/');
			while (end && end[-1] == '\\')
				end = strchr(end + 1, '/');
			if (!end)
				return pl_error_set(err, PL_EINPUT, "%s: when: unterminated /.../",
						    r->path);
			c->re_text = pl_scan_dupn(p + 1, (size_t)(end - p - 1));
			p = end + 1;
		} else if (c->kind == C_IN_TRAINING_LOOP || c->kind == C_IN_TRAINING_STEP ||
			   c->kind == C_PER_STEP) {
			c->re_text = strdup("(^|[^[:alnum:]])backward\\(");
			if (c->kind != C_IN_TRAINING_LOOP &&
			    regcomp(&c->re2, PERIODIC_RE, REG_EXTENDED | REG_NOSUB) == 0)
				c->has_re2 = 1;
		} else if (c->kind == C_ACCUMULATED) {
			if (regcomp(&c->re2, PERIODIC_RE, REG_EXTENDED | REG_NOSUB) == 0)
				c->has_re2 = 1;
		} else if (c->kind == C_NOT_IN_NO_GRAD) {
			c->re_text = strdup(NO_GRAD_RE);
		} else if (c->kind == C_IN_EVAL_LOOP) {
			c->re_text = strdup("(^|[^[:alnum:]])backward\\(");
			if (regcomp(&c->re2, NO_GRAD_RE, REG_EXTENDED | REG_NOSUB) == 0)
				c->has_re2 = 1;
		} else if (c->kind == C_NOT_PERIODIC) {
			/* `step % 100 == 0`, `log_every`, `print_freq`, `log_interval`,
			 * `eval_period`: a branch that runs every N steps */
			c->re_text = strdup(PERIODIC_RE);
		}
		if (c->re_text && !strstr(c->re_text, "{@")) {
			if (pl_regcomp(&c->re, c->re_text, REG_EXTENDED | REG_NOSUB) != 0)
				return pl_error_set(err, PL_EINPUT,
						    "%s: when: bad regular expression /%s/",
						    r->path, c->re_text);
			c->has_re = 1;
		}
	}
	return 0;
}

static void free_preds(struct pl_rule *r)
{
	for (uint32_t p = 0; r->preds && p < r->npatterns; p++) {
		for (size_t i = 0; i < r->preds[p].n; i++) {
			free(r->preds[p].v[i].str);
			if (r->preds[p].v[i].has_re)
				regfree(&r->preds[p].v[i].re);
		}
		free(r->preds[p].v);
	}
	free(r->preds);
	r->preds = NULL;
}

/* The predicates of patterns [off, off + npatterns) of r->query. */
static int compile_preds(struct pl_rule *r, uint32_t off, struct pl_error *err)
{
	r->preds = calloc(r->npatterns ? r->npatterns : 1, sizeof *r->preds);
	if (!r->preds)
		return pl_error_set(err, PL_ENOMEM, "out of memory");
	for (uint32_t p = 0; p < r->npatterns; p++) {
		uint32_t len;
		const TSQueryPredicateStep *st =
		    ts_query_predicates_for_pattern(r->query, off + p, &len);
		uint32_t i = 0;
		while (i < len) {
			uint32_t start = i;
			while (i < len && st[i].type != TSQueryPredicateStepTypeDone)
				i++;
			uint32_t n = i - start;
			i++; /* the Done */
			if (n == 0)
				continue;
			const TSQueryPredicateStep *s = st + start;
			uint32_t nl;
			const char *name =
			    ts_query_string_value_for_id(r->query, s[0].value_id, &nl);
			struct pred pr = {0};
			if (strcmp(name, "eq?") == 0)
				pr.kind = P_EQ;
			else if (strcmp(name, "not-eq?") == 0)
				pr.kind = P_NOT_EQ;
			else if (strcmp(name, "match?") == 0)
				pr.kind = P_MATCH;
			else if (strcmp(name, "not-match?") == 0)
				pr.kind = P_NOT_MATCH;
			else if (strcmp(name, "torch?") == 0)
				pr.kind = P_TORCH;
			else
				return pl_error_set(err, PL_EINPUT,
						    "%s: query: unknown predicate #%s", r->path,
						    name);
			if (s[1].type != TSQueryPredicateStepTypeCapture ||
			    n != (pr.kind == P_TORCH ? 2u : 3u))
				return pl_error_set(err, PL_EINPUT,
						    pr.kind == P_TORCH
							? "%s: query: #%s takes one @capture"
							: "%s: query: #%s takes a @capture and a value",
						    r->path, name);
			pr.cap = s[1].value_id;
			if (pr.kind == P_TORCH) {
				/* (one operand: the capture) */
			} else if (s[2].type == TSQueryPredicateStepTypeCapture) {
				pr.other_cap = 1;
				pr.cap2 = s[2].value_id;
			} else {
				uint32_t sl;
				const char *v =
				    ts_query_string_value_for_id(r->query, s[2].value_id, &sl);
				pr.str = pl_scan_dupn(v, sl);
				if (!pr.str)
					return pl_error_set(err, PL_ENOMEM, "out of memory");
			}
			if ((pr.kind == P_MATCH || pr.kind == P_NOT_MATCH)) {
				if (pr.other_cap ||
				    pl_regcomp(&pr.re, pr.str, REG_EXTENDED | REG_NOSUB) != 0) {
					free(pr.str);
					return pl_error_set(
					    err, PL_EINPUT,
					    "%s: query: bad regular expression in #%s", r->path,
					    name);
				}
				pr.has_re = 1;
			}
			struct pattern_preds *pp = &r->preds[p];
			struct pred *v = realloc(pp->v, (pp->n + 1) * sizeof *v);
			if (!v) {
				free(pr.str);
				if (pr.has_re)
					regfree(&pr.re);
				return pl_error_set(err, PL_ENOMEM, "out of memory");
			}
			pp->v = v;
			pp->v[pp->n++] = pr;
		}
	}
	return 0;
}

/* Parse one rule file's text. */
static int parse_rule(const char *path, const char *text, struct pl_rule **out,
		      struct pl_error *err)
{
	struct pl_rule *r = calloc(1, sizeof *r);
	struct pl_strbuf bad = {0}, good = {0}, query = {0};
	struct pl_strbuf *block = NULL;
	int rc = 0;
	if (!r)
		return pl_error_set(err, PL_ENOMEM, "out of memory");
	r->path = strdup(path);
	r->confidence = 0.8;
	r->lang = strncmp(path, "rules/python/", 13) == 0 ? PL_LANG_PYTHON : PL_LANG_C;
	const char *p = text;
	int lineno = 0;
	while (*p) {
		const char *eol = strchr(p, '\n');
		size_t n = eol ? (size_t)(eol - p) : strlen(p);
		lineno++;
		if (n >= 2 && p[0] == ';' && p[1] == '|') {
			if (!block) {
				rc = pl_error_set(
				    err, PL_EINPUT,
				    "%s:%d: example code outside a bad: or good: block", path,
				    lineno);
				goto done;
			}
			const char *code = p + 2;
			size_t cn = n - 2;
			if (cn && *code == ' ') {
				code++;
				cn--;
			}
			pl_strbuf_append(block, code, cn);
			pl_strbuf_puts(block, "\n");
		} else if (n >= 1 && p[0] == ';') {
			const char *kv = p + 1;
			size_t kn = n - 1;
			while (kn && *kv == ' ') {
				kv++;
				kn--;
			}
			const char *colon = memchr(kv, ':', kn);
			size_t keylen = colon ? (size_t)(colon - kv) : 0;
			char *val = colon ? pl_scan_trim_dup(colon + 1, kn - keylen - 1) : NULL;
			char **slot = NULL;
			block = NULL;
#define KEY(k) (keylen == strlen(k) && strncmp(kv, k, keylen) == 0)
			if (!colon)
				slot = NULL;
			else if (KEY("id"))
				slot = &r->id;
			else if (KEY("title"))
				slot = &r->title;
			else if (KEY("severity"))
				slot = &r->severity_s;
			else if (KEY("status"))
				slot = &r->status_s;
			else if (KEY("rationale"))
				slot = &r->rationale;
			else if (KEY("fix"))
				slot = &r->fix;
			else if (KEY("when"))
				slot = &r->when;
			else if (KEY("advisory"))
				slot = &r->advisory;
			else if (KEY("quiet"))
				slot = &r->quiet;
			else if (KEY("needs"))
				slot = &r->needs;
			else if (KEY("lower"))
				slot = &r->lower;
			else if (KEY("lower-why"))
				slot = &r->lower_why;
			else if (KEY("metric"))
				slot = &r->metric;
			else if (KEY("level")) {
				char *e;
				long v = strtol(val, &e, 10);
				if (*e || v < 1 || v > 8) {
					free(val);
					rc = pl_error_set(err, PL_EINPUT,
							  "%s:%d: level: expected 1..8", path,
							  lineno);
					goto done;
				}
				r->level = (int)v;
			} else if (KEY("confidence")) {
				r->confidence = atof(val);
			} else if (KEY("group")) {
				if (strcmp(val, "loop") != 0) {
					free(val);
					rc = pl_error_set(err, PL_EINPUT,
							  "%s:%d: group: expected loop", path,
							  lineno);
					goto done;
				}
				r->group_loop = 1;
			} else if (KEY("bad")) {
				block = &bad;
			} else if (KEY("good")) {
				block = &good;
			}
#undef KEY
			if (slot) {
				free(*slot);
				*slot = val;
				val = NULL;
			}
			free(val);
		} else {
			block = NULL;
			pl_strbuf_append(&query, p, n);
			pl_strbuf_puts(&query, "\n");
		}
		p = eol ? eol + 1 : p + n;
	}
	r->bad = pl_strbuf_take(&bad);
	r->good = pl_strbuf_take(&good);
	char *q = pl_strbuf_take(&query);
	const char *missing = !r->id	       ? "id"
			      : !r->title      ? "title"
			      : !r->severity_s ? "severity"
			      : !r->status_s   ? "status"
			      : !r->rationale  ? "rationale"
			      : !r->fix	       ? "fix"
			      : !r->quiet      ? "quiet"
			      : !r->level      ? "level"
			      : !r->bad	       ? "bad"
			      : !r->good       ? "good"
			      : !q	       ? "query"
					       : NULL;
	if (missing) {
		free(q);
		rc = pl_error_set(err, PL_EINPUT, "%s: %s: missing", path, missing);
		goto done;
	}
	if (parse_severity(r->severity_s, &r->severity) < 0) {
		free(q);
		rc = pl_error_set(err, PL_EINPUT, "%s: severity: expected critical|high|medium|low",
				  path);
		goto done;
	}
	if (strcmp(r->status_s, "statically_confirmed") == 0)
		r->status = PL_FST_STATIC;
	else if (strcmp(r->status_s, "requires_profiling") == 0)
		r->status = PL_FST_PROFILING;
	else {
		free(q);
		rc = pl_error_set(err, PL_EINPUT,
				  "%s: status: expected statically_confirmed|requires_profiling",
				  path);
		goto done;
	}
	r->qtext = q;
	if (!strstr(q, "@finding")) {
		rc = pl_error_set(err, PL_EINPUT, "%s: query: no @finding capture", path);
		goto done;
	}
	if (r->when && (rc = parse_conds(r, r->when, &r->conds, &r->nconds, err)) < 0)
		goto done;
	if (!r->lower != !r->lower_why) {
		rc = pl_error_set(err, PL_EINPUT, "%s: lower: and lower-why: go together", path);
		goto done;
	}
	if (r->lower && (rc = parse_conds(r, r->lower, &r->lconds, &r->nlconds, err)) < 0)
		goto done;
	if (!r->metric)
		r->metric = strdup("anti_pattern");
done:
	if (rc < 0) {
		free(pl_strbuf_take(&bad));
		free(pl_strbuf_take(&good));
		free(pl_strbuf_take(&query));
		free_rule(r);
		return rc;
	}
	*out = r;
	return 0;
}

int pl_rules_load(struct pl_rules *rs, struct pl_error *err)
{
	memset(rs, 0, sizeof *rs);
	size_t n = 0;
	while (pl_rule_files[n].path)
		n++;
	rs->v = calloc(n ? n : 1, sizeof *rs->v);
	if (!rs->v)
		return pl_error_set(err, PL_ENOMEM, "out of memory");
	for (size_t i = 0; i < n; i++) {
		int rc =
		    parse_rule(pl_rule_files[i].path, pl_rule_files[i].text, &rs->v[rs->n], err);
		if (rc < 0) {
			pl_rules_release(rs);
			return rc;
		}
		for (size_t k = 0; k < rs->n; k++)
			if (strcmp(rs->v[k]->id, rs->v[rs->n]->id) == 0) {
				rc = pl_error_set(err, PL_EINPUT, "%s: id: %s is also %s",
						  pl_rule_files[i].path, rs->v[k]->id,
						  rs->v[k]->path);
				rs->n++;
				pl_rules_release(rs);
				return rc;
			}
		rs->n++;
	}
	uint64_t h = PL_FNV_INIT;
	for (size_t i = 0; i < n; i++)
		h = pl_fnv1a(pl_fnv1a(h, pl_rule_files[i].path), pl_rule_files[i].text) * 31 + 1;
	rs->source_hash = h;
	return 0;
}

int pl_rules_compile(struct pl_rules *rs, const struct pl_scan_opts *o, unsigned langs,
		     struct pl_error *err)
{
	return combine(rs, o, langs, err);
}

static uint32_t finding_id(TSQuery *q)
{
	uint32_t ncap = ts_query_capture_count(q);
	for (uint32_t i = 0; i < ncap; i++) {
		uint32_t l;
		const char *name = ts_query_capture_name_for_id(q, i, &l);
		if (l == 7 && strncmp(name, "finding", 7) == 0)
			return i;
	}
	return UINT32_MAX;
}

/* A rule's query alone, to name the file and line of an error. */
static int check_one(struct pl_rule *r, struct pl_error *err)
{
	uint32_t off;
	TSQueryError qe;
	TSQuery *q = ts_query_new(pl_scan_language(r->lang), r->qtext, (uint32_t)strlen(r->qtext),
				  &off, &qe);
	if (q) {
		ts_query_delete(q);
		return 0;
	}
	int line = 1;
	for (uint32_t i = 0; i < off && r->qtext[i]; i++)
		line += r->qtext[i] == '\n';
	return pl_error_set(err, PL_EINPUT, "%s: query: error %d at query line %d", r->path,
			    (int)qe, line);
}

/* One query per language from every rule's patterns (one pass over a tree,
 * and one compilation: compiling is the slow part of starting), and each
 * rule pointed at its patterns there by their byte offsets. */
/* One query per language in langs (a bit per enum pl_lang) of the rules
 * o runs: a rule not run costs its compile (ms per pattern) and a share of
 * every query pass, so it is not in the query at all. */
static int combine(struct pl_rules *rs, const struct pl_scan_opts *o, unsigned langs,
		   struct pl_error *err)
{
	uint32_t *start = calloc(rs->n ? rs->n : 1, sizeof *start);
	if (!start)
		return pl_error_set(err, PL_ENOMEM, "out of memory");
	for (int lang = 0; lang < PL_LANG_COUNT; lang++) {
		if (!(langs & (1u << lang)) || rs->combined[lang])
			continue;
		struct pl_strbuf b = {0};
		for (size_t i = 0; i < rs->n; i++)
			if ((int)rs->v[i]->lang == lang && pl_scan_rule_selected(rs->v[i], o)) {
				start[i] = (uint32_t)b.len;
				pl_strbuf_puts(&b, rs->v[i]->qtext);
				pl_strbuf_puts(&b, "\n");
			}
		size_t scope_at = b.len;
		if (!scope_at) {
			free(pl_strbuf_take(&b));
			continue;
		}
		/* last, the scopes conditions ask about (pl_scan_add_scope) */
		pl_strbuf_puts(&b,
			       lang == PL_LANG_PYTHON
				   ? "[(for_statement) (while_statement) (list_comprehension) "
				     "(set_comprehension) (dictionary_comprehension) "
				     "(generator_expression) (function_definition) (lambda) "
				     "(class_definition) (with_statement) (decorated_definition)] "
				     "@pl.scope\n"
				   : "[(for_statement) (while_statement) (do_statement) "
				     "(function_definition)] @pl.scope\n");
		size_t textlen = b.len;
		char *text = pl_strbuf_take(&b);
		if (!text) {
			free(start);
			return pl_error_set(err, PL_ENOMEM, "out of memory");
		}
		uint32_t off;
		TSQueryError qe;
		TSQuery *q = ts_query_new(pl_scan_language((enum pl_lang)lang), text,
					  (uint32_t)textlen, &off, &qe);
		if (q && !(o && o->matcher == PL_MATCH_CURSOR))
			rs->matcher[lang] = pl_qm_new(pl_scan_language((enum pl_lang)lang), q, text,
						      (uint32_t)textlen);
		free(text);
		if (q && !rs->matcher[lang] && o && o->matcher == PL_MATCH_OWN) {
			ts_query_delete(q);
			free(start);
			return pl_error_set(err, PL_ENOTSUP,
					    "rules: scan's matcher does not read the %s query",
					    lang == PL_LANG_PYTHON ? "Python" : "C");
		}
		if (!q) {
			for (size_t i = 0; i < rs->n; i++)
				if ((int)rs->v[i]->lang == lang && check_one(rs->v[i], err) < 0) {
					free(start);
					return PL_EINPUT;
				}
			free(start);
			return pl_error_set(err, PL_EINPUT, "rules: the combined query failed (%d)",
					    (int)qe);
		}
		rs->combined[lang] = q;
		uint32_t n = ts_query_pattern_count(q), fid = finding_id(q);
		rs->owner[lang] = calloc(n ? n : 1, sizeof *rs->owner[lang]);
		if (!rs->owner[lang]) {
			free(start);
			return pl_error_set(err, PL_ENOMEM, "out of memory");
		}
		rs->npatterns[lang] = 0; /* the rules' patterns; the scope pattern after */
		for (uint32_t k = 0; k < n; k++) {
			uint32_t at = ts_query_start_byte_for_pattern(q, k);
			if (at >= scope_at)
				break;
			rs->npatterns[lang] = k + 1;
			struct pl_rule *owner = NULL;
			for (size_t i = 0; i < rs->n; i++)
				if ((int)rs->v[i]->lang == lang &&
				    pl_scan_rule_selected(rs->v[i], o) && start[i] <= at)
					owner = rs->v[i]; /* the last segment starting before */
			rs->owner[lang][k] = owner;
			if (owner && owner->npatterns++ == 0)
				owner->pat_off = k;
		}
		for (size_t i = 0; i < rs->n; i++) {
			struct pl_rule *r = rs->v[i];
			if ((int)r->lang != lang || !pl_scan_rule_selected(r, o))
				continue;
			r->query = q;
			r->own_query = 0;
			r->finding_cap = fid;
			int rc = r->npatterns ? compile_preds(r, r->pat_off, err)
					      : pl_error_set(err, PL_EINPUT,
							     "%s: query: no pattern", r->path);
			if (rc < 0) {
				free(start);
				return rc;
			}
		}
	}
	free(start);
	return 0;
}

void pl_rules_release(struct pl_rules *rs)
{
	for (int lang = 0; lang < PL_LANG_COUNT; lang++) {
		if (rs->combined[lang])
			ts_query_delete(rs->combined[lang]);
		pl_qm_free(rs->matcher[lang]);
		free(rs->owner[lang]);
	}
	for (size_t i = 0; i < rs->n; i++)
		free_rule(rs->v[i]);
	free(rs->v);
	memset(rs, 0, sizeof *rs);
}

const struct pl_rule *pl_rules_find(const struct pl_rules *rs, const char *id)
{
	for (size_t i = 0; i < rs->n; i++)
		if (strcasecmp(rs->v[i]->id, id) == 0)
			return rs->v[i];
	return NULL;
}

void pl_rule_info(const struct pl_rule *r, struct pl_rule_info *o)
{
	o->id = r->id;
	o->title = r->title;
	o->severity = r->severity_s;
	o->status = r->status_s;
	o->rationale = r->rationale;
	o->fix = r->fix;
	o->bad = r->bad;
	o->good = r->good;
	o->lang = r->lang == PL_LANG_PYTHON ? "python" : "c";
	o->path = r->path;
	o->when = r->when ? r->when : "";
	o->quiet = r->quiet;
	o->lower_why = r->lower_why;
	o->advisory = r->advisory;
	o->level = r->level;
}

int pl_scan_rule_selected(const struct pl_rule *r, const struct pl_scan_opts *o)
{
	if (o && r->advisory && !o->advisory) {
		/* off unless asked for: --advisory, or its own id in --select */
		int named = 0;
		for (size_t i = 0; i < o->nselect && !named; i++)
			named = !strcasecmp(r->id, o->select[i]);
		if (!named)
			return 0;
	}
	if (o) {
		int sel = o->nselect == 0;
		for (size_t i = 0; i < o->nselect && !sel; i++)
			sel = !strncasecmp(r->id, o->select[i], strlen(o->select[i]));
		if (!sel)
			return 0;
		for (size_t i = 0; i < o->nignore; i++)
			if (!strncasecmp(r->id, o->ignore[i], strlen(o->ignore[i])))
				return 0;
		if ((int)r->severity > o->min_severity)
			return 0;
	}
	return 1;
}
