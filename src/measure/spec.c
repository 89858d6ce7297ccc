/*
 * perfloop.yaml (spec.h): libyaml's document loader gives the tree with
 * each node's line; this walks it against the keys perfloop knows and
 * says the first thing wrong as FILE:LINE: KEY.PATH: what.
 */
#include "spec.h"
#include "metric.h"

#include <ctype.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "complexity.h"
#include "gitrun.h"
#include "hash.h"
#include "params.h"
#include "yamlread.h"

static int push_kv(struct pl_spec_kv **kv, size_t *n, const char *k, const char *v)
{
	struct pl_spec_kv *g = realloc(*kv, (*n + 1) * sizeof **kv);
	if (!g)
		return PL_ENOMEM;
	*kv = g;
	g[*n].key = strdup(k);
	g[*n].value = strdup(v);
	if (!g[*n].key || !g[*n].value) {
		free(g[*n].key);
		free(g[*n].value);
		return PL_ENOMEM;
	}
	(*n)++;
	return PL_OK;
}

static int valid_word(const char *s)
{
	if (!*s)
		return 0;
	for (; *s; s++)
		if (!isalnum((unsigned char)*s) && *s != '_' && *s != '-' && *s != '.')
			return 0;
	return 1;
}

/* params: {NAME: [V1, V2, ...]} or {NAME: "LO..HI*FACTOR"}: in -P's syntax */
static int one_param(struct pl_yaml *c, const char *name, yaml_node_t *v, const char *at, void *arg)
{
	struct pl_spec_bench *b = arg;
	if (!valid_word(name))
		return pl_yaml_bad(c, v, at, "a parameter name is letters, digits, _ - or .%s", "");
	if (b->nparams == 16)
		return pl_yaml_bad(c, v, at, "more than 16 parameters%s", "");
	char vals[4096] = "";
	if (v->type == YAML_SEQUENCE_NODE) {
		for (yaml_node_item_t *it = v->data.sequence.items.start;
		     it < v->data.sequence.items.top; it++) {
			yaml_node_t *e = pl_yaml_node(c, *it);
			const char *s = pl_yaml_scalar(e);
			if (!s || !*s || strchr(s, ',') || strstr(s, ".."))
				return pl_yaml_bad(c, e, at,
						   "each value of a list must be a string without a "
						   "comma or '..' (write a range as one string: "
						   "1000..64000*2)%s",
						   "");
			if (strlen(vals) + strlen(s) + 2 >= sizeof vals)
				return pl_yaml_bad(c, e, at, "too many values%s", "");
			if (*vals)
				strcat(vals, ",");
			strcat(vals, s);
		}
		if (!*vals)
			return pl_yaml_bad(c, v, at, "no values%s", "");
	} else if (pl_yaml_scalar(v) && *pl_yaml_scalar(v)) {
		snprintf(vals, sizeof vals, "%s", pl_yaml_scalar(v));
	} else {
		return pl_yaml_bad(c, v, at,
				   "expected a list of values or a range (1000..64000*2)%s", "");
	}
	/* checked as -P would check it */
	char spec[4200];
	snprintf(spec, sizeof spec, "%s=%s", name, vals);
	struct pl_param prm;
	struct pl_error e2 = {{0}};
	if (pl_param_parse(spec, &prm, &e2) != PL_OK) {
		const char *m = e2.msg;
		if (!strncmp(m, "option '-P': ", 13))
			m += 13;
		return pl_yaml_bad(c, v, at, "%s", m);
	}
	size_t n = prm.values.n, had = b->combos ? b->combos : 1;
	pl_param_release(&prm);
	if (n && had > PL_PARAMS_MAX_BENCHES / n) {
		char why[200];
		snprintf(why, sizeof why,
			 "with the parameters before it, over %d combinations of values (sweep "
			 "fewer values, or split the benchmark)",
			 PL_PARAMS_MAX_BENCHES);
		return pl_yaml_bad(c, v, at, "%s", why);
	}
	b->combos = had * n;
	if (push_kv(&b->params, &b->nparams, name, vals))
		return pl_error_set(c->err, PL_ENOMEM, "out of memory");
	return PL_OK;
}

/* env: {VAR: value} */
static int one_env(struct pl_yaml *c, const char *name, yaml_node_t *v, const char *at, void *arg)
{
	struct pl_spec_bench *b = arg;
	int ok = *name && !isdigit((unsigned char)*name);
	for (const char *q = name; *q && ok; q++)
		ok = isalnum((unsigned char)*q) || *q == '_';
	if (!ok)
		return pl_yaml_bad(c, v, at, "not a variable name%s", "");
	if (!pl_yaml_scalar(v))
		return pl_yaml_bad(c, v, at, "expected a string value%s", "");
	if (push_kv(&b->env, &b->nenv, name, pl_yaml_scalar(v)))
		return pl_error_set(c->err, PL_ENOMEM, "out of memory");
	return PL_OK;
}

static uint64_t hash_str(uint64_t h, const char *s)
{
	h = pl_fnv1a(h, s ? s : "\x01");
	return pl_fnv1a_bytes(h, "", 1);
}

/* The hash of what a measurement of b depends on. */
static int kv_cmp(const void *a, const void *b)
{
	return strcmp(((const struct pl_spec_kv *)a)->key, ((const struct pl_spec_kv *)b)->key);
}

static void bench_hash(struct pl_spec_bench *b)
{
	uint64_t h = PL_FNV_INIT;
	char num[32];
	h = hash_str(h, b->cmd);
	h = hash_str(h, b->shell ? "shell" : "");
	/* parameters in their order (it orders the runs and names them); the
	 * environment's in any order; each section led by its count */
	snprintf(num, sizeof num, "%zu params", b->nparams);
	h = hash_str(h, num);
	for (size_t i = 0; i < b->nparams; i++)
		h = hash_str(hash_str(h, b->params[i].key), b->params[i].value);
	if (b->nenv > 1)
		qsort(b->env, b->nenv, sizeof *b->env, kv_cmp);
	snprintf(num, sizeof num, "%zu env", b->nenv);
	h = hash_str(h, num);
	for (size_t i = 0; i < b->nenv; i++)
		h = hash_str(hash_str(h, b->env[i].key), b->env[i].value);
	snprintf(num, sizeof num, "%d/%d", b->warmup, b->min_runs);
	h = hash_str(h, num);
	h = hash_str(h, b->expect);
	h = hash_str(h, b->target);
	if (b->metric) { /* (older files' hashes stay as they were without it) */
		h = hash_str(hash_str(h, b->metric), b->metric_name);
		h = hash_str(h, b->higher_is_better ? "higher" : "lower");
	}
	snprintf(b->hash, sizeof b->hash, "%016llx", (unsigned long long)h);
}

static int read_bench(struct pl_yaml *c, const char *name, yaml_node_t *map,
		      struct pl_spec_bench *b)
{
	static const char *const known[] = {"cmd",	    "shell",	   "params",
					    "env",	    "warmup",	   "min_runs",
					    "expect",	    "target",	   "metric",
					    "metric_name", "higher_is_better", NULL};
	char where[300];
	snprintf(where, sizeof where, "benchmarks.%.280s", name);
	b->warmup = b->min_runs = -1;
	b->line = pl_yaml_line(map);
	if (!(b->name = strdup(name)))
		return pl_error_set(c->err, PL_ENOMEM, "out of memory");
	if (!valid_word(name))
		return pl_yaml_bad(
		    c, map, where,
		    "a benchmark's name is letters, digits, _ - or . (it is given to "
		    "perfloop bench as one word)%s",
		    "");
	if (map->type != YAML_MAPPING_NODE)
		return pl_yaml_bad(c, map, where, "expected a mapping (cmd: ..., params: ...)%s",
				   "");
	yaml_node_t *cmd_node = map;
	int rc = pl_yaml_keys(c, map, where, known);
	if (rc)
		return rc;
	for (yaml_node_pair_t *p = map->data.mapping.pairs.start;
	     !rc && p < map->data.mapping.pairs.top; p++) {
		const char *key = pl_yaml_scalar(yaml_document_get_node(&c->doc, p->key));
		yaml_node_t *v = yaml_document_get_node(&c->doc, p->value);
		char at[700];
		key = key ? key : "?"; /* (check_keys: never) */
		snprintf(at, sizeof at, "%.340s.%.300s", where, key);
		if (!strcmp(key, "cmd")) {
			rc = pl_yaml_string(c, v, at, &b->cmd);
			cmd_node = v;
		} else if (!strcmp(key, "shell"))
			rc = pl_yaml_bool(c, v, at, &b->shell);
		else if (!strcmp(key, "params"))
			rc =
			    pl_yaml_each(c, v, at, "a parameter to its values", NULL, one_param, b);
		else if (!strcmp(key, "env"))
			rc = pl_yaml_each(c, v, at, "a variable to its value", NULL, one_env, b);
		else if (!strcmp(key, "warmup"))
			rc = pl_yaml_int(c, v, at, 0, 1000000, &b->warmup);
		else if (!strcmp(key, "min_runs"))
			rc = pl_yaml_int(c, v, at, 2, 1000000, &b->min_runs);
		else if (!strcmp(key, "expect")) {
			enum pl_cx_class cls;
			rc = pl_yaml_string(c, v, at, &b->expect);
			if (!rc && pl_cx_parse(b->expect, &cls) < 0)
				rc = pl_yaml_bad(
				    c, v, at, "expected 1, log n, n, n log n, n^2 or n^3, got '%s'",
				    b->expect);
		} else if (!strcmp(key, "metric")) {
			rc = pl_yaml_string(c, v, at, &b->metric);
			struct pl_metric m;
			struct pl_error me;
			if (!rc && pl_metric_init(&m, b->metric, NULL, 0, &me) != PL_OK)
				rc = pl_yaml_bad(c, v, at, "%s", me.msg);
			else if (!rc)
				pl_metric_release(&m);
		} else if (!strcmp(key, "metric_name")) {
			rc = pl_yaml_string(c, v, at, &b->metric_name);
			struct pl_metric m;
			struct pl_error me;
			if (!rc && pl_metric_init(&m, "x", b->metric_name, 0, &me) != PL_OK)
				rc = pl_yaml_bad(c, v, at, "%s", me.msg);
			else if (!rc)
				pl_metric_release(&m);
		} else if (!strcmp(key, "higher_is_better")) {
			rc = pl_yaml_bool(c, v, at, &b->higher_is_better);
		} else if (!strcmp(key, "target")) {
			rc = pl_yaml_string(c, v, at, &b->target);
			for (const char *q = b->target; !rc && *q; q++)
				if (!islower((unsigned char)*q) && !isdigit((unsigned char)*q) &&
				    *q != '_')
					rc = pl_yaml_bad(
					    c, v, at,
					    "expected a dimension's name (timing, memory, ...), "
					    "got '%s'",
					    b->target);
		}
	}
	if (!rc && !b->cmd)
		rc = pl_yaml_bad(c, map, where, "no 'cmd': the command to measure%s", "");
	if (!rc && !b->metric && (b->metric_name || b->higher_is_better))
		rc = pl_yaml_bad(c, map, where,
				 "metric_name and higher_is_better describe a 'metric', which is "
				 "missing%s",
				 "");
	if (!rc && !b->shell) { /* split as bench splits it: refused now, not mid-run */
		struct pl_argv w = {0};
		struct pl_error e2 = {{0}};
		if (pl_words_split(b->cmd, &w, &e2) != PL_OK) {
			char at[340];
			snprintf(at, sizeof at, "%.300s.cmd", where);
			rc = pl_yaml_bad(c, cmd_node, at, "%s; in perfloop.yaml: shell: true", e2.msg);
		}
		pl_argv_release(&w);
	}
	if (!rc && b->expect && b->nparams != 1)
		rc = pl_yaml_bad(c, map, where,
				 "'expect' needs a size sweep: one parameter in 'params'%s", "");
	if (!rc)
		bench_hash(b);
	return rc;
}

static int read_policy(struct pl_yaml *c, yaml_node_t *map, struct pl_spec *s)
{
	static const char *const known[] = {"min_gain", "max_cv", "max_iterations", NULL};
	if (map->type != YAML_MAPPING_NODE)
		return pl_yaml_bad(c, map, "policy", "expected a mapping (min_gain: 0.05, ...)%s",
				   "");
	int rc = pl_yaml_keys(c, map, "policy", known);
	for (yaml_node_pair_t *p = map->data.mapping.pairs.start;
	     !rc && p < map->data.mapping.pairs.top; p++) {
		const char *key = pl_yaml_scalar(yaml_document_get_node(&c->doc, p->key));
		yaml_node_t *v = yaml_document_get_node(&c->doc, p->value);
		char at[300];
		key = key ? key : "?"; /* (check_keys: never) */
		snprintf(at, sizeof at, "policy.%s", key);
		if (!strcmp(key, "min_gain"))
			rc = pl_yaml_share(c, v, at, &s->min_gain);
		else if (!strcmp(key, "max_cv"))
			rc = pl_yaml_share(c, v, at, &s->max_cv);
		else
			rc = pl_yaml_int(c, v, at, 1, 1000, &s->max_iterations);
	}
	return rc;
}

static int read_root(struct pl_yaml *c, yaml_node_t *root, void *arg)
{
	struct pl_spec *s = arg;
	static const char *const known[] = {"suite", "ledger", "benchmarks", "policy", NULL};
	if (!root)
		return pl_error_set(c->err, PL_EINPUT, "%s: empty: expected benchmarks: ...",
				    c->path);
	if (root->type != YAML_MAPPING_NODE)
		return pl_yaml_bad(c, root, "the file",
				   "expected a mapping (suite:, benchmarks:, ...)%s", "");
	int rc = pl_yaml_keys(c, root, "the file", known);
	for (yaml_node_pair_t *p = root->data.mapping.pairs.start;
	     !rc && p < root->data.mapping.pairs.top; p++) {
		const char *key = pl_yaml_scalar(yaml_document_get_node(&c->doc, p->key));
		yaml_node_t *v = yaml_document_get_node(&c->doc, p->value);
		key = key ? key : "?"; /* (check_keys: never) */
		if (!strcmp(key, "suite"))
			rc = pl_yaml_string(c, v, "suite", &s->suite);
		else if (!strcmp(key, "ledger"))
			rc = pl_yaml_string(c, v, "ledger", &s->ledger);
		else if (!strcmp(key, "policy"))
			rc = read_policy(c, v, s);
		else if (v->type != YAML_MAPPING_NODE)
			rc = pl_yaml_bad(c, v, "benchmarks",
					 "expected a mapping of a name to a benchmark%s", "");
		else if (!(rc = pl_yaml_keys(c, v, "benchmarks", NULL))) {
			size_t n =
			    (size_t)(v->data.mapping.pairs.top - v->data.mapping.pairs.start);
			s->bench = calloc(n ? n : 1, sizeof *s->bench);
			if (!s->bench)
				return pl_error_set(c->err, PL_ENOMEM, "out of memory");
			for (yaml_node_pair_t *q = v->data.mapping.pairs.start;
			     !rc && q < v->data.mapping.pairs.top; q++) {
				const char *name =
				    pl_yaml_scalar(yaml_document_get_node(&c->doc, q->key));
				rc = read_bench(c, name ? name : "?",
						yaml_document_get_node(&c->doc, q->value),
						&s->bench[s->nbench++]);
			}
		}
	}
	return rc;
}

int pl_spec_load(const char *path, struct pl_spec *out, struct pl_error *err)
{
	memset(out, 0, sizeof *out);
	out->min_gain = out->max_cv = NAN;
	out->max_iterations = -1;
	if (!(out->path = strdup(path)))
		return pl_error_set(err, PL_ENOMEM, "out of memory");
	int rc = pl_yaml_read(path, read_root, out, err);
	if (rc)
		pl_spec_release(out);
	return rc;
}

static void free_kv(struct pl_spec_kv *kv, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		free(kv[i].key);
		free(kv[i].value);
	}
	free(kv);
}

void pl_spec_release(struct pl_spec *s)
{
	for (size_t i = 0; i < s->nbench; i++) {
		struct pl_spec_bench *b = &s->bench[i];
		free(b->name);
		free(b->cmd);
		free(b->expect);
		free(b->target);
		free(b->metric);
		free(b->metric_name);
		free_kv(b->params, b->nparams);
		free_kv(b->env, b->nenv);
	}
	free(s->bench);
	free(s->path);
	free(s->suite);
	free(s->ledger);
	memset(s, 0, sizeof *s);
}

int pl_spec_find(char *path, size_t len)
{
	if (access(PL_SPEC_FILE, F_OK) == 0) {
		snprintf(path, len, "%s", PL_SPEC_FILE);
		return 0;
	}
	char top[4096];
	if (pl_git_toplevel(".", top, sizeof top) != 0)
		return -1;
	if ((size_t)snprintf(path, len, "%s/%s", top, PL_SPEC_FILE) >= len)
		return -1;
	return access(path, F_OK) == 0 ? 0 : -1;
}

const struct pl_spec_bench *pl_spec_get(const struct pl_spec *s, const char *name)
{
	for (size_t i = 0; i < s->nbench; i++)
		if (!strcmp(s->bench[i].name, name))
			return &s->bench[i];
	return NULL;
}

static int push(struct pl_argv *a, const char *s)
{
	return pl_argv_push(a, s, strlen(s));
}

int pl_spec_bench_args(const struct pl_spec_bench *b, struct pl_argv *out)
{
	char num[32];
	int rc = 0;
	if (b->warmup >= 0) {
		snprintf(num, sizeof num, "%d", b->warmup);
		rc |= push(out, "--warmup") | push(out, num);
	}
	if (b->min_runs >= 0) {
		snprintf(num, sizeof num, "%d", b->min_runs);
		rc |= push(out, "--min-runs") | push(out, num);
	}
	for (size_t i = 0; i < b->nparams; i++) {
		size_t n = strlen(b->params[i].key) + strlen(b->params[i].value) + 2;
		char *p = malloc(n);
		if (!p)
			return PL_ENOMEM;
		snprintf(p, n, "%s=%s", b->params[i].key, b->params[i].value);
		rc |= push(out, "-P") | push(out, p);
		free(p);
	}
	if (b->expect)
		rc |= push(out, "--expect") | push(out, b->expect);
	if (b->metric)
		rc |= push(out, "--metric") | push(out, b->metric);
	if (b->metric_name)
		rc |= push(out, "--metric-name") | push(out, b->metric_name);
	if (b->higher_is_better)
		rc |= push(out, "--higher-is-better");
	if (b->shell)
		rc |= push(out, "--shell");
	return rc ? PL_ENOMEM : PL_OK;
}

/* s quoted for bench's word splitter: '...', a quote as '\'' */
static void quote(char *out, size_t len, const char *s)
{
	size_t o = 0;
	if (o + 1 < len)
		out[o++] = '\'';
	for (; *s && o + 5 < len; s++) {
		if (*s == '\'') {
			memcpy(out + o, "'\\''", 4);
			o += 4;
		} else {
			out[o++] = *s;
		}
	}
	if (o + 1 < len)
		out[o++] = '\'';
	out[o] = '\0';
}

int pl_spec_commands(const struct pl_spec_bench *b, struct pl_argv *cmds, struct pl_argv *names,
		     struct pl_error *err)
{
	struct pl_param prm[16] = {{0}};
	size_t np = 0;
	int rc = PL_OK;
	if (b->nparams > 16)
		return pl_error_set(err, PL_EINPUT, "benchmark '%s': more than 16 parameters",
				    b->name);
	for (; np < b->nparams; np++) {
		char spec[4200];
		snprintf(spec, sizeof spec, "%s=%s", b->params[np].key, b->params[np].value);
		if ((rc = pl_param_parse(spec, &prm[np], err)) != PL_OK)
			goto out;
	}
	size_t combos = pl_params_combinations(prm, np);
	if (combos > PL_PARAMS_MAX_BENCHES) {
		char many[32];
		snprintf(many, sizeof many, combos == SIZE_MAX ? "more than 2^64" : "%zu", combos);
		rc = pl_error_set(err, PL_EINPUT,
				  "benchmark '%s': params: %s combinations of values, at most %d "
				  "(sweep fewer values, or split the benchmark)",
				  b->name, many, PL_PARAMS_MAX_BENCHES);
		goto out;
	}
	for (size_t i = 0; i < combos && rc == PL_OK; i++) {
		size_t idx[16];
		pl_params_combination(prm, np, i, idx);
		char *cmd = strdup(b->cmd);
		char name[1024];
		size_t nl = (size_t)snprintf(name, sizeof name, "%s", b->name);
		for (size_t k = 0; k < np && cmd; k++) {
			char *next = pl_words_substitute(cmd, prm[k].name, prm[k].values.v[idx[k]]);
			free(cmd);
			cmd = next;
			if (nl < sizeof name)
				nl += (size_t)snprintf(name + nl, sizeof name - nl, " %s=%s",
						       prm[k].name, prm[k].values.v[idx[k]]);
		}
		if (!cmd) {
			rc = pl_error_set(err, PL_ENOMEM, "out of memory");
			break;
		}
		/* env 'K=V' ... [sh -c] 'CMD' */
		size_t cap = 64 + 4 * strlen(cmd);
		for (size_t e = 0; e < b->nenv; e++)
			cap += 8 + 4 * (strlen(b->env[e].key) + strlen(b->env[e].value));
		char *line = malloc(cap), *q = malloc(cap);
		if (!line || !q) {
			free(line);
			free(q);
			free(cmd);
			rc = pl_error_set(err, PL_ENOMEM, "out of memory");
			break;
		}
		size_t o = 0;
		line[0] = '\0';
		if (b->nenv)
			o += (size_t)snprintf(line + o, cap - o, "env ");
		for (size_t e = 0; e < b->nenv && rc == PL_OK; e++) {
			size_t kl = strlen(b->env[e].key) + strlen(b->env[e].value) + 2;
			char *kv = malloc(kl);
			if (!kv) {
				rc = pl_error_set(err, PL_ENOMEM, "out of memory");
				break;
			}
			snprintf(kv, kl, "%s=%s", b->env[e].key, b->env[e].value);
			quote(q, cap, kv);
			free(kv);
			o += (size_t)snprintf(line + o, cap - o, "%s ", q);
		}
		if (rc != PL_OK) {
			free(line);
			free(q);
			free(cmd);
			break;
		}
		if (b->shell) {
			quote(q, cap, cmd);
			snprintf(line + o, cap - o, "sh -c %s", q);
		} else {
			snprintf(line + o, cap - o, "%s", cmd);
		}
		if (pl_argv_push(cmds, line, strlen(line)) ||
		    pl_argv_push(names, name, strlen(name)))
			rc = pl_error_set(err, PL_ENOMEM, "out of memory");
		free(line);
		free(q);
		free(cmd);
	}
out:
	for (size_t k = 0; k < np; k++)
		pl_param_release(&prm[k]);
	return rc;
}

json_t *pl_spec_bench_json(const struct pl_spec *s, const struct pl_spec_bench *b)
{
	json_t *params = json_object(), *env = json_object();
	for (size_t i = 0; i < b->nparams; i++)
		json_object_set_new(params, b->params[i].key, json_string(b->params[i].value));
	for (size_t i = 0; i < b->nenv; i++)
		json_object_set_new(env, b->env[i].key, json_string(b->env[i].value));
	json_t *settings = json_pack(
	    "{s:s, s:b, s:o, s:o, s:o, s:o, s:o, s:o}", "cmd", b->cmd, "shell", b->shell, "params",
	    params, "env", env, "warmup", b->warmup >= 0 ? json_integer(b->warmup) : json_null(),
	    "min_runs", b->min_runs >= 0 ? json_integer(b->min_runs) : json_null(), "expect",
	    b->expect ? json_string(b->expect) : json_null(), "target",
	    b->target ? json_string(b->target) : json_null());
	if (b->metric)
		json_object_set_new(settings, "metric",
				    json_pack("{s:s, s:o, s:b}", "expr", b->metric, "name",
					      b->metric_name ? json_string(b->metric_name)
							     : json_null(),
					      "higher_is_better", b->higher_is_better));
	return json_pack("{s:s, s:s, s:s, s:o}", "file", s->path, "benchmark", b->name, "hash",
			 b->hash, "settings", settings);
}

void pl_spec_diff(json_t *a, json_t *b, char *out, size_t len)
{
	json_t *sa = json_object_get(a, "settings"), *sb = json_object_get(b, "settings");
	const char *key;
	json_t *v;
	out[0] = '\0';
	json_object_foreach(sa, key, v)
	{
		if (json_equal(v, json_object_get(sb, key)))
			continue;
		size_t n = strlen(out);
		snprintf(out + n, len - n, "%s%s", n ? ", " : "", key);
	}
	json_object_foreach(sb, key, v)
	{
		if (json_object_get(sa, key))
			continue;
		size_t n = strlen(out);
		snprintf(out + n, len - n, "%s%s", n ? ", " : "", key);
	}
	if (!out[0] &&
	    !json_equal(json_object_get(a, "benchmark"), json_object_get(b, "benchmark")))
		snprintf(out, len, "benchmark");
}
