/*
 * See scan.h. Rules are parsed and their queries compiled once; each file
 * is parsed once and every rule of its language runs over the same tree.
 * Files are spread over threads; a query is shared (read-only), a parser
 * and a query cursor belong to one thread.
 */
#include "scan.h"
#include "grow.h"

#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <regex.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <tree_sitter/api.h>
#include <unistd.h>

#include "strbuf.h"
#include "suppress.h"
#include "scan_int.h"
#include "scanmatch.h"
#include "hash.h"

const TSLanguage *tree_sitter_python(void);
const TSLanguage *tree_sitter_c(void);

struct pl_rule_file {
	const char *path, *text;
};
extern const struct pl_rule_file pl_rule_files[];

/* ---- rules ---- */

enum pred_kind { P_EQ, P_NOT_EQ, P_MATCH, P_NOT_MATCH };

struct pred {
	enum pred_kind kind;
	uint32_t cap;  /* first capture */
	int other_cap; /* second operand is a capture */
	uint32_t cap2;
	char *str;  /* string operand */
	regex_t re; /* for match */
	int has_re;
};

struct pattern_preds {
	struct pred *v;
	size_t n;
};

enum cond_kind {
	C_IN_LOOP,
	C_IN_ASYNC_DEF,
	C_IN_TRAINING_LOOP,
	C_NOT_IN_NO_GRAD,
	C_NOT_PERIODIC,
	C_IN_METHOD,
	C_ENCLOSING_LOOP_ITERATES,
	C_FUNCTION_LACKS,
	C_FUNCTION_HAS,
	C_FILE_HAS,
	C_FILE_LACKS,
	C_LOOP_LACKS,
	C_LOOP_HAS,
	C_NODE_HAS,
	C_NODE_LACKS,
	C_LOOP_HEADER_HAS,
	C_LOOP_HEADER_LACKS,
	C_UNCONDITIONAL,
	C_LOOP_NOT_SMALL,
	C_CALL_ARGS_LACK,
	C_UNUSED,
	C_NOT_MEMORY_DATASET,
	C_NOT_READ_ONCE,
};

struct cond {
	enum cond_kind kind;
	char *cap;     /* capture name for C_ENCLOSING_LOOP_ITERATES */
	char *re_text; /* regex source, with {@name} placeholders */
	regex_t re;    /* compiled once when re_text has no placeholder */
	int has_re;
};

struct pl_rule {
	char *id, *title, *severity_s, *status_s, *rationale, *fix, *bad, *good, *path, *when;
	char *quiet; /* what the rule deliberately does not flag, in words */
	char *metric;
	char *advisory; /* why it is off by default (low precision on real code); NULL: on */
	int level;
	double confidence;
	enum pl_severity severity;
	enum pl_fstatus status;
	enum pl_lang lang;
	TSQuery *query; /* the rule alone, then the language's combined query */
	int own_query;
	char *qtext;
	uint32_t pat_off; /* its first pattern in the combined query */
	uint32_t finding_cap;
	struct pattern_preds *preds; /* per pattern */
	uint32_t npatterns;
	struct cond *conds;
	size_t nconds;
	/* `; lower: CONDS` and `; lower-why: TEXT`: where every one holds, the
	 * finding is rated one level lower, and says why */
	char *lower, *lower_why;
	struct cond *lconds;
	size_t nlconds;
	int group_loop; /* `; group: loop`: one finding per enclosing loop */
};

static void free_preds(struct pl_rule *r);
static int rule_selected(const struct pl_rule *r, const struct pl_scan_opts *o);
static int combine(struct pl_rules *rs, const struct pl_scan_opts *o, unsigned langs,
		   struct pl_error *err);

static char *dupn(const char *s, size_t n)
{
	char *d = malloc(n + 1);
	if (d) {
		memcpy(d, s, n);
		d[n] = '\0';
	}
	return d;
}

static char *trim_dup(const char *s, size_t n)
{
	while (n && isspace((unsigned char)*s)) {
		s++;
		n--;
	}
	while (n && isspace((unsigned char)s[n - 1]))
		n--;
	return dupn(s, n);
}

static void free_conds(struct cond *v, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		free(v[i].cap);
		free(v[i].re_text);
		if (v[i].has_re)
			regfree(&v[i].re);
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

static const TSLanguage *language(enum pl_lang l)
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
	    {"not-memory-dataset", C_NOT_MEMORY_DATASET, 0},
	    {"not-read-once", C_NOT_READ_ONCE, 0},
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
			c->cap = dupn(p + 1, m);
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
			c->re_text = dupn(p + 1, (size_t)(end - p - 1));
			p = end + 1;
		} else if (c->kind == C_IN_TRAINING_LOOP) {
			c->re_text = strdup("\\.backward\\(");
		} else if (c->kind == C_NOT_IN_NO_GRAD) {
			c->re_text = strdup("no_grad|inference_mode|set_grad_enabled\\(False\\)");
		} else if (c->kind == C_NOT_PERIODIC) {
			/* `step % 100 == 0`, `log_every`, `print_freq`, `log_interval`,
			 * `eval_period`: a branch that runs every N steps */
			c->re_text = strdup("%|every|freq|interval|period");
		}
		if (c->re_text && !strstr(c->re_text, "{@")) {
			if (regcomp(&c->re, c->re_text, REG_EXTENDED | REG_NOSUB) != 0)
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
			else
				return pl_error_set(err, PL_EINPUT,
						    "%s: query: unknown predicate #%s", r->path,
						    name);
			if (n != 3 || s[1].type != TSQueryPredicateStepTypeCapture)
				return pl_error_set(err, PL_EINPUT,
						    "%s: query: #%s takes a @capture and a value",
						    r->path, name);
			pr.cap = s[1].value_id;
			if (s[2].type == TSQueryPredicateStepTypeCapture) {
				pr.other_cap = 1;
				pr.cap2 = s[2].value_id;
			} else {
				uint32_t sl;
				const char *v =
				    ts_query_string_value_for_id(r->query, s[2].value_id, &sl);
				pr.str = dupn(v, sl);
				if (!pr.str)
					return pl_error_set(err, PL_ENOMEM, "out of memory");
			}
			if ((pr.kind == P_MATCH || pr.kind == P_NOT_MATCH)) {
				if (pr.other_cap ||
				    regcomp(&pr.re, pr.str, REG_EXTENDED | REG_NOSUB) != 0) {
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
			char *val = colon ? trim_dup(colon + 1, kn - keylen - 1) : NULL;
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
	TSQuery *q =
	    ts_query_new(language(r->lang), r->qtext, (uint32_t)strlen(r->qtext), &off, &qe);
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
			if ((int)rs->v[i]->lang == lang && rule_selected(rs->v[i], o)) {
				start[i] = (uint32_t)b.len;
				pl_strbuf_puts(&b, rs->v[i]->qtext);
				pl_strbuf_puts(&b, "\n");
			}
		size_t scope_at = b.len;
		if (!scope_at) {
			free(pl_strbuf_take(&b));
			continue;
		}
		/* last, the scopes conditions ask about (add_scope) */
		pl_strbuf_puts(&b, lang == PL_LANG_PYTHON
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
		TSQuery *q =
		    ts_query_new(language((enum pl_lang)lang), text, (uint32_t)textlen, &off, &qe);
		if (q && !(o && o->matcher == PL_MATCH_CURSOR))
			rs->matcher[lang] =
			    pl_qm_new(language((enum pl_lang)lang), q, text, (uint32_t)textlen);
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
				if ((int)rs->v[i]->lang == lang && rule_selected(rs->v[i], o) &&
				    start[i] <= at)
					owner = rs->v[i]; /* the last segment starting before */
			rs->owner[lang][k] = owner;
			if (owner && owner->npatterns++ == 0)
				owner->pat_off = k;
		}
		for (size_t i = 0; i < rs->n; i++) {
			struct pl_rule *r = rs->v[i];
			if ((int)r->lang != lang || !rule_selected(r, o))
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

/* ---- matching ---- */

struct src {
	const char *text;
	size_t len;
	enum pl_lang lang;
	uint32_t *line_start; /* offset of each line's first byte */
	struct pl_supps supps; /* suppression comments */
	uint32_t *group;      /* per finding: its loop's start byte + 1 (group: loop), 0 */
	size_t group_cap;
	size_t nlines;
	struct scope *scopes; /* loops, functions, classes, with, decorators */
	size_t nscopes, scopes_cap;
	TSNode root;
	char *code;	  /* the text with comments blanked (built on first use) */
	int code_state;	  /* 0 not built (built on first use), 1 built, -1 failed */
};

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
		return ts_node_is_null(r) ? ts_node_child_by_field_name(loop, "initializer", 11) : r;
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

static const char *ntext(struct src *s, TSNode n, size_t *len)
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
		const TSLanguage *lang = language((enum pl_lang)l);
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
static int add_scope(struct src *s, TSNode n)
{
	TSSymbol sym = ts_node_symbol(n);
	int kind = sym < PL_MAX_SYMBOLS ? scope_kinds(s->lang)[sym] : scope_kind(s, ts_node_type(n));
	if (!kind)
		return 0;
	if (pl_grow((void **)&s->scopes, &s->scopes_cap, s->nscopes + 1, sizeof *s->scopes, 256) < 0)
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
static TSNode enclosing_loop(struct src *s, TSNode n)
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

static TSNode enclosing_function(struct src *s, TSNode n)
{
	for (int i = scope_of(s, n); i >= 0; i = s->scopes[i].parent)
		if (s->scopes[i].kind == SK_FUNC)
			return s->scopes[i].node;
	return (TSNode){0};
}

/* A function's name: Python's `name` field; C's innermost declarator. */
static char *function_name(struct src *s, TSNode fn)
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
	const char *t = ntext(s, name, &len);
	return dupn(t, len);
}

/* Does text[0..len) match re? In place (REG_STARTEND): a file-wide
 * condition must not copy the file for every candidate match. */
static int re_hit(const regex_t *re, const char *text, size_t len)
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
				const char *t = ts_node_is_null(n) ? "" : ntext(s, n, &len);
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
	if (src && regcomp(&re, src, REG_EXTENDED | REG_NOSUB) == 0) {
		hit = re_hit(&re, text, len);
		regfree(&re);
	}
	free(src);
	return hit;
}

static int text_eq(struct src *s, TSNode a, TSNode b)
{
	size_t la, lb;
	const char *ta = ntext(s, a, &la), *tb = ntext(s, b, &lb);
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

static int node_is(TSNode n, const char *type)
{
	return !ts_node_is_null(n) && !strcmp(ts_node_type(n), type);
}

/* Calls fn(node, arg) on every named node under root (root included) in
 * document order until it returns nonzero; that value, or 0. */
static int walk_named(TSNode root, int (*fn)(TSNode, void *), void *arg)
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
static TSNode name_scope(struct src *s, TSNode n)
{
	TSNode fn = enclosing_function(s, n);
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
	const char *t = node_is(left, "identifier") ? ntext(a->s, left, &len) : NULL;
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
	const char *t = ntext(s, n, &len);
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
		const char *o = ts_node_is_null(op) ? "" : ntext(s, op, &ol);
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
		const char *f = ntext(s, fn, &fl);
		uint32_t k = ts_node_named_child_count(args);
		if (fl == 5 && !memcmp(f, "range", 5)) /* range(stop), range(start, stop...) */
			return k >= 1 &&
			       known_small_at(s, ts_node_named_child(args, k == 1 ? 0 : 1), depth + 1);
		if ((fl == 3 && !memcmp(f, "len", 3)) || (fl == 9 && !memcmp(f, "enumerate", 9)) ||
		    (fl == 8 && !memcmp(f, "reversed", 8)) || (fl == 6 && !memcmp(f, "sorted", 6)) ||
		    (fl == 4 && !memcmp(f, "list", 4)) || (fl == 5 && !memcmp(f, "tuple", 5)))
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
		TSNode a = ts_node_child_by_field_name(n, !strcmp(ty, "attribute") ? "attribute" : "field",
						       !strcmp(ty, "attribute") ? 9 : 5);
		if (ts_node_is_null(a))
			return 0;
		t = ntext(s, a, &len);
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
	for (TSNode p = enclosing_loop(s, n); !ts_node_is_null(p); p = enclosing_loop(s, p)) {
		any = 1;
		if (s->lang == PL_LANG_C) {
			TSNode body = ts_node_child_by_field_name(p, "body", 4);
			uint32_t a = ts_node_start_byte(p),
				 b = ts_node_is_null(body) ? ts_node_end_byte(p) : ts_node_start_byte(body);
			if (state > 0 && b <= s->len && a <= b && re_hit(&args_re, s->text + a, b - a))
				continue; /* argument parsing */
			TSNode cond = ts_node_child_by_field_name(p, "condition", 9);
			if (node_is(cond, "parenthesized_expression"))
				cond = ts_node_named_child(cond, 0);
			if (!node_is(cond, "binary_expression"))
				return 0;
			/* i < BOUND, i <= BOUND; BOUND > i, BOUND >= i */
			TSNode op = ts_node_child_by_field_name(cond, "operator", 8);
			size_t ol;
			const char *o = ts_node_is_null(op) ? "" : ntext(s, op, &ol);
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
	const char *t = node_is(n, "identifier") ? ntext(f->s, n, &len) : NULL;
	return t && len == f->len && !memcmp(t, f->name, len);
}

struct class_find {
	struct src *s;
	const char *name;
	size_t len;
	TSNode found;
};

static int class_visit(TSNode n, void *arg)
{
	struct class_find *f = arg;
	if (!node_is(n, "class_definition"))
		return 0;
	size_t len;
	const char *t = ntext(f->s, ts_node_child_by_field_name(n, "name", 4), &len);
	if (len != f->len || memcmp(t, f->name, len))
		return 0;
	f->found = n;
	return 1;
}

/* the value of the last `name = value` (class_find: found) */
static int last_assign_visit(TSNode n, void *arg)
{
	struct class_find *f = arg;
	size_t len;
	const char *t = node_is(n, "assignment")
			    ? ntext(f->s, ts_node_child_by_field_name(n, "left", 4), &len)
			    : NULL;
	if (t && len == f->len && !memcmp(t, f->name, len))
		f->found = ts_node_child_by_field_name(n, "right", 5);
	return 0;
}

/* self.x[i], or a tuple of such: what an in-memory dataset returns */
static int indexes_self(struct src *s, TSNode e)
{
	if (node_is(e, "tuple") || node_is(e, "expression_list")) {
		uint32_t k = ts_node_named_child_count(e);
		for (uint32_t i = 0; i < k; i++)
			if (!indexes_self(s, ts_node_named_child(e, i)))
				return 0;
		return k > 0;
	}
	if (!node_is(e, "subscript"))
		return 0;
	TSNode v = ts_node_child_by_field_name(e, "value", 5);
	size_t len;
	const char *t = node_is(v, "attribute") ? ntext(s, v, &len) : NULL;
	return t && len > 5 && !memcmp(t, "self.", 5);
}

/* The DataLoader call's dataset (first positional argument or dataset=)
 * is an object of a class defined in this file whose __getitem__ only
 * indexes its own arrays (`return self.x[i], self.y[i]`): the data is in
 * memory, and worker processes would only add copying. */
static int memory_dataset(struct src *s, TSNode call)
{
	TSNode args = ts_node_child_by_field_name(call, "arguments", 9), ds = {0};
	uint32_t k = ts_node_is_null(args) ? 0 : ts_node_named_child_count(args);
	for (uint32_t i = 0; i < k && ts_node_is_null(ds); i++) {
		TSNode a = ts_node_named_child(args, i);
		if (node_is(a, "keyword_argument")) {
			size_t len;
			const char *t = ntext(s, ts_node_child_by_field_name(a, "name", 4), &len);
			if (len == 7 && !memcmp(t, "dataset", 7))
				ds = ts_node_child_by_field_name(a, "value", 5);
		} else if (i == 0) {
			ds = a;
		}
	}
	if (node_is(ds, "identifier")) { /* ds = Cls(...) in the function */
		struct class_find af = {.s = s};
		af.name = ntext(s, ds, &af.len);
		walk_named(name_scope(s, call), last_assign_visit, &af);
		ds = af.found;
	}
	if (!node_is(ds, "call"))
		return 0;
	TSNode fn = ts_node_child_by_field_name(ds, "function", 8);
	if (!node_is(fn, "identifier"))
		return 0;
	struct class_find cf = {.s = s};
	cf.name = ntext(s, fn, &cf.len);
	walk_named(s->root, class_visit, &cf);
	if (ts_node_is_null(cf.found))
		return 0;
	TSNode body = ts_node_child_by_field_name(cf.found, "body", 4);
	uint32_t nb = ts_node_is_null(body) ? 0 : ts_node_named_child_count(body);
	for (uint32_t i = 0; i < nb; i++) {
		TSNode d = ts_node_named_child(body, i);
		if (node_is(d, "decorated_definition"))
			d = ts_node_child_by_field_name(d, "definition", 10);
		if (!node_is(d, "function_definition"))
			continue;
		size_t len;
		const char *t = ntext(s, ts_node_child_by_field_name(d, "name", 4), &len);
		if (len != 11 || memcmp(t, "__getitem__", 11))
			continue;
		TSNode fb = ts_node_child_by_field_name(d, "body", 4);
		uint32_t ns = ts_node_is_null(fb) ? 0 : ts_node_named_child_count(fb);
		TSNode last = ns ? ts_node_named_child(fb, ns - 1) : (TSNode){0};
		/* a docstring, then one return */
		if (ns > 2 || (ns == 2 && !node_is(ts_node_named_child(ts_node_named_child(fb, 0), 0), "string")))
			return 0;
		return node_is(last, "return_statement") &&
		       indexes_self(s, ts_node_named_child(last, 0));
	}
	return 0;
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
	const char *t = node_is(n, "identifier") ? ntext(f->s, n, &len) : NULL;
	if (!t || len != f->len || memcmp(t, f->name, len))
		return 0;
	uint32_t a = ts_node_start_byte(n);
	if (a >= ts_node_start_byte(f->def) && a < ts_node_end_byte(f->def))
		return 0; /* the binding itself */
	f->uses++;
	/* next(iter(NAME)): the text around it, without a parent walk */
	static const char pre[] = "next(iter(";
	size_t pl = sizeof pre - 1;
	f->once += a >= pl && !memcmp(f->s->text + a - pl, pre, pl) &&
		   a + len + 2 <= f->s->len && !memcmp(f->s->text + a + len, "))", 2);
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
	f.name = ntext(s, left, &f.len);
	walk_named(name_scope(s, call), once_visit, &f);
	return f.uses > 0 && f.once == f.uses;
}

struct kw_find {
	struct src *s;
	const char *name;
	size_t len;
	struct pl_strbuf *out;
	int found;
};

/* NAME = {...} / dict(...), NAME.update(...), NAME["key"] = ...: what
 * they say, appended to out */
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
		    (node_is(right, "dictionary") ||
		     (node_is(right, "call") &&
		      (t = ntext(k->s, ts_node_child_by_field_name(right, "function", 8), &len)) &&
		      len == 4 && !memcmp(t, "dict", 4)))) {
			target = left;
			what = right;
		} else if (node_is(left, "subscript")) {
			target = ts_node_child_by_field_name(left, "value", 5);
			what = n;
		}
	} else if (node_is(n, "call")) {
		TSNode fn = ts_node_child_by_field_name(n, "function", 8);
		if (node_is(fn, "attribute") &&
		    (t = ntext(k->s, ts_node_child_by_field_name(fn, "attribute", 9), &len)) &&
		    len == 6 && !memcmp(t, "update", 6)) {
			target = ts_node_child_by_field_name(fn, "object", 6);
			what = ts_node_child_by_field_name(n, "arguments", 9);
		}
	}
	if (!node_is(target, "identifier") || ts_node_is_null(what))
		return 0;
	t = ntext(k->s, target, &len);
	if (len != k->len || memcmp(t, k->name, len))
		return 0;
	k->found = 1;
	t = ntext(k->s, what, &len);
	pl_strbuf_append(k->out, t, len);
	pl_strbuf_puts(k->out, "\n");
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
	const char *t = ntext(s, args, &len);
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
		struct kw_find f = {s, NULL, 0, &b, 0};
		if (node_is(name, "identifier")) {
			f.name = ntext(s, name, &f.len);
			walk_named(name_scope(s, call), kw_visit, &f);
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
 * place to read a metric) when its header says epoch or a nested loop
 * with backward() iterates the data (loader, batch, data); otherwise the
 * nested loop is a step's micro-batches (gradient accumulation) and p is
 * the step. */
static int step_loop(struct src *s, TSNode p)
{
	size_t len;
	const char *t = ntext(s, p, &len);
	int data_inside = 0;
	for (const char *q = t; (q = memmem(q, len - (size_t)(q - t), "backward(", 9)); q += 9) {
		if (q == t || q[-1] != '.')
			continue;
		uint32_t at = (uint32_t)(q - s->text);
		TSNode n = ts_node_descendant_for_byte_range(p, at, at + 1);
		TSNode inner = {0};
		for (TSNode u = ts_node_parent(n); !ts_node_is_null(u) && !ts_node_eq(u, p);
		     u = ts_node_parent(u))
			if (is_loop(s, ts_node_type(u)))
				inner = u; /* the outermost loop between it and p */
		if (ts_node_is_null(inner))
			return 1;
		TSNode body = ts_node_child_by_field_name(inner, "body", 4);
		uint32_t a = ts_node_start_byte(inner),
			 b = ts_node_is_null(body) ? ts_node_end_byte(inner) : ts_node_start_byte(body);
		for (uint32_t k = a; k + 4 <= b && !data_inside; k++)
			data_inside = !strncasecmp(s->text + k, "load", 4) ||
				      !strncasecmp(s->text + k, "batch", 5) ||
				      !strncasecmp(s->text + k, "data", 4);
	}
	TSNode body = ts_node_child_by_field_name(p, "body", 4);
	uint32_t a = ts_node_start_byte(p),
		 b = ts_node_is_null(body) ? ts_node_end_byte(p) : ts_node_start_byte(body);
	int epoch = 0;
	for (uint32_t k = a; k + 5 <= b && !epoch; k++)
		epoch = !strncasecmp(s->text + k, "epoch", 5);
	return !epoch && !data_inside;
}

static int cond_holds(struct src *s, const struct pl_rule *r, const struct cond *c,
		      const TSQueryMatch *m, TSNode node)
{
	size_t len;
	const char *t;
	switch (c->kind) {
	case C_IN_LOOP:
		return !ts_node_is_null(enclosing_loop(s, node));
	case C_IN_TRAINING_LOOP:
		/* the first loop around it that calls backward() decides */
		for (TSNode p = enclosing_loop(s, node); !ts_node_is_null(p);
		     p = enclosing_loop(s, p)) {
			t = ntext(s, p, &len);
			if (cond_match(s, r, c, m, t, len))
				return step_loop(s, p);
		}
		return 0;
	case C_NOT_PERIODIC: {
		/* inside the body of an `if`/`elif` (not its else) whose condition
		 * reads as every N steps, up to the innermost loop */
		TSNode loop = enclosing_loop(s, node);
		for (TSNode ch = node, p = ts_node_parent(node); !ts_node_is_null(p);
		     ch = p, p = ts_node_parent(p)) {
			if (!ts_node_is_null(loop) && ts_node_eq(p, loop))
				break;
			const char *ty = ts_node_type(p);
			if (strcmp(ty, "if_statement") && strcmp(ty, "elif_clause"))
				continue;
			TSNode body = ts_node_child_by_field_name(p, "consequence", 11);
			TSNode cond = ts_node_child_by_field_name(p, "condition", 9);
			if (ts_node_is_null(body) || ts_node_is_null(cond) || !ts_node_eq(ch, body))
				continue;
			t = ntext(s, cond, &len);
			if (cond_match(s, r, c, m, t, len))
				return 0;
		}
		return 1;
	}
	case C_UNCONDITIONAL: {
		/* runs on every iteration: no if, else, switch or ?: between it
		 * and its innermost loop (a flush under --unbuffered, a lock in
		 * a rare branch are the program's choice, not a per-item cost) */
		TSNode loop = enclosing_loop(s, node);
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
	case C_NOT_MEMORY_DATASET:
		return !memory_dataset(s, node);
	case C_NOT_READ_ONCE:
		return !read_once(s, node);
	case C_UNUSED: {
		/* the name @cap binds is not read in the finding's body (a
		 * loop's, with its else) */
		TSNode cap = capture_named(r->query, m, c->cap);
		if (ts_node_is_null(cap))
			return 0;
		struct name_find f = {s, NULL, 0};
		f.name = ntext(s, cap, &f.len);
		const char *fields[] = {"body", "alternative"};
		for (int i = 0; i < 2; i++) {
			TSNode b = ts_node_child_by_field_name(node, fields[i],
							       (uint32_t)strlen(fields[i]));
			if (!ts_node_is_null(b) && walk_named(b, name_visit, &f))
				return 0;
		}
		return 1;
	}
	case C_CALL_ARGS_LACK: {
		char *args = call_args_text(s, node);
		int hit = !args || cond_match(s, r, c, m, args, strlen(args));
		free(args);
		return !hit;
	}
	case C_IN_ASYNC_DEF: {
		TSNode fn = enclosing_function(s, node);
		if (ts_node_is_null(fn))
			return 0;
		t = ntext(s, fn, &len);
		return len >= 6 && !strncmp(t, "async", 5) && isspace((unsigned char)t[5]);
	}
	case C_NOT_IN_NO_GRAD:
		for (int i = scope_of(s, node); i >= 0; i = s->scopes[i].parent) {
			const struct scope *sc = &s->scopes[i];
			TSNode head = (TSNode){0};
			if (sc->kind == SK_WITH)
				head = ts_node_named_child(sc->node, 0);
			else if (sc->kind == SK_DECOR)
				head = sc->node;
			if (ts_node_is_null(head))
				continue;
			t = ntext(s, head, &len);
			if (sc->kind == SK_DECOR) {
				/* only the decorators, not the body */
				const char *def = strstr(t, "def ");
				if (def && def < t + len)
					len = (size_t)(def - t);
			}
			if (cond_match(s, r, c, m, t, len))
				return 0;
		}
		return 1;
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
		for (TSNode p = enclosing_loop(s, node); !ts_node_is_null(p);
		     p = enclosing_loop(s, p)) {
			TSNode it = loop_iterable(p);
			if (!ts_node_is_null(it) && !ts_node_eq(it, cap) && text_eq(s, it, cap))
				return 1;
			/* C: `for (j = 0; j < i; j++)` inside `for (i = 0; i < n; i++)`
			 * walks the same range up to the outer position */
			TSNode cond = ts_node_child_by_field_name(p, "condition", 9);
			if (!ts_node_is_null(cond) &&
			    !strcmp(ts_node_type(cond), "binary_expression")) {
				TSNode var = ts_node_child_by_field_name(cond, "left", 4);
				if (!ts_node_is_null(var) && text_eq(s, var, cap))
					return 1;
			}
		}
		return 0;
	}
	case C_LOOP_HEADER_HAS:
	case C_LOOP_HEADER_LACKS: {
		int has = c->kind == C_LOOP_HEADER_HAS;
		TSNode loop = enclosing_loop(s, node);
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
		t = ntext(s, node, &len);
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
		TSNode scope = loop ? enclosing_loop(s, node)
			       : fn ? enclosing_function(s, node)
				    : (TSNode){0};
		if (loop && ts_node_is_null(scope))
			return c->kind == C_LOOP_LACKS; /* no loop: nothing in it */
		if (ts_node_is_null(scope)) {		/* the file, or code outside functions */
			t = code_text(s);
			len = s->len;
		} else {
			t = code_text(s) + (ntext(s, scope, &len) - s->text);
		}
		int hit = cond_match(s, r, c, m, t, len);
		int want =
		    c->kind == C_FUNCTION_HAS || c->kind == C_FILE_HAS || c->kind == C_LOOP_HAS;
		return want ? hit : !hit;
	}
	}
	return 0;
}

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
		const char *ta = ntext(s, a, &la);
		int ok;
		if (p->kind == P_EQ || p->kind == P_NOT_EQ) {
			ok = p->other_cap ? text_eq(s, a, b)
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
				char *buf = dupn(ta, la);
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

static int rule_selected(const struct pl_rule *r, const struct pl_scan_opts *o)
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

/* Test code (a test, tests or testing directory; test_*.py, *_test.*,
 * conftest.py) runs in CI, not in production: its findings are rated one
 * level lower. */
static int is_test_path(const char *path)
{
	for (const char *p = path; *p;) {
		size_t n = strcspn(p, "/");
		int last = p[n] == '\0';
		if (!last && ((n == 4 && !strncmp(p, "test", 4)) || (n == 5 && !strncmp(p, "tests", 5)) ||
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
		       enum pl_severity sev, const char *note)
{
	TSPoint pt = ts_node_start_point(node);
	/* one finding per rule and line: `x.mean() / x.std()` is one problem;
	 * a rule's matches come in document order, so a repeat is recent */
	for (size_t i = f->findings.n, k = 0; i-- > 0 && k < 16; k++)
		if (!strcmp(f->findings.v[i].leaf, r->id) &&
		    f->findings.v[i].line == (long)pt.row + 1)
			return 0;
	/* group: loop: several syncs in one step are one cost to remove; the
	 * first stands for all, and says where the others are */
	uint32_t key = 0;
	if (r->group_loop) {
		TSNode loop = enclosing_loop(s, node);
		key = ts_node_is_null(loop) ? 0 : ts_node_start_byte(loop) + 1;
		for (size_t i = f->findings.n; key && i-- > 0;) {
			struct pl_finding *g = &f->findings.v[i];
			if (i >= s->group_cap || s->group[i] != key || strcmp(g->leaf, r->id))
				continue;
			json_int_t n = json_integer_value(json_object_get(g->evidence_numbers, "occurrences"));
			/* "x.item() (also in this loop: line 15, 18)" */
			size_t tl = strlen(g->evidence_text);
			char *t = NULL;
			if (n > 1 && tl > 0 && g->evidence_text[tl - 1] == ')') {
				if (asprintf(&t, "%.*s, %ld)", (int)(tl - 1), g->evidence_text,
					     (long)pt.row + 1) < 0)
					return -1;
			} else if (asprintf(&t, "%s (also in this loop: line %ld)", g->evidence_text,
					    (long)pt.row + 1) < 0) {
				return -1;
			}
			free(g->evidence_text);
			g->evidence_text = t;
			if (!g->evidence_numbers)
				g->evidence_numbers = json_object();
			json_object_set_new(g->evidence_numbers, "occurrences",
					    json_integer(n > 1 ? n + 1 : 2));
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
	x->evidence_text = l ? trim_dup(l, len > 200 ? 200 : len) : strdup("");
	x->leaf = strdup(r->id);
	x->signal = strdup(r->title);
	x->path = strdup(f->path);
	x->function = function_name(s, enclosing_function(s, node));
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
	x->line = (long)pt.row + 1;
	x->column = (long)pt.column + 1;
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
		if (x->all && !x->used_all)
			pl_strbuf_printf(&b, "%s:%u: unused '%s' (no finding on this line or the "
					     "next)\n",
					 f->path, x->row + 1, form);
		for (unsigned j = 0; j < x->nids; j++) {
			const struct pl_rule *r = pl_rules_find(rules, x->ids[j]);
			if (!r) {
				if (!x->noqa)
					pl_strbuf_printf(&b, "%s:%u: unknown rule '%s' in '%s[...]' "
							     "(perfloop scan --list-rules)\n",
							 f->path, x->row + 1, x->ids[j], form);
			} else if (!x->used[j] && rule_selected(r, o)) {
				pl_strbuf_printf(&b, "%s:%u: unused suppression of %s (no %s finding "
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
		return m.capture_count && add_scope(s, m.captures[0].node) < 0 ? -1 : 0;
	const struct pl_rule *r = j->rules->owner[s->lang][m.pattern_index];
	if (!rule_selected(r, o))
		return 0;
	TSNode node = (TSNode){0};
	for (uint16_t i = 0; i < m.capture_count; i++)
		if (m.captures[i].index == r->finding_cap)
			node = m.captures[i].node;
	if (ts_node_is_null(node) || !preds_hold(s, r, &m))
		return 0;
	size_t c = 0;
	while (c < r->nconds && cond_holds(s, r, &r->conds[c], &m, node))
		c++;
	if (c < r->nconds)
		return 0;
	if (pl_supp_match(&s->supps, ts_node_start_point(node).row, r->id))
		return 0;
	/* severity from evidence: the rule's, one level lower where its
	 * lower: conditions hold or in test code */
	enum pl_severity sev = r->severity;
	const char *note = NULL;
	if (r->nlconds) {
		c = 0;
		while (c < r->nlconds && cond_holds(s, r, &r->lconds[c], &m, node))
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
	return add_finding(j->f, s, r, node, sev, note) < 0 ? -1 : 0;
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
	if (!ts_parser_set_language(parser, language(f->lang))) {
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
		rc = pl_qm_exec(rules->matcher[f->lang], root, f->text, judge_match, &j) ? -1 : 0;
	} else if (rules->combined[f->lang]) {
		ts_query_cursor_exec(qc, rules->combined[f->lang], root);
		TSQueryMatch m;
		while (rc == 0 && ts_query_cursor_next_match(qc, &m))
			rc = judge_match(&j, &m);
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
	pl_findings_release(&f->findings);
	memset(f, 0, sizeof *f);
}
