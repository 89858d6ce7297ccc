/*
 * Reading perfloop's YAML files (yamlread.h) with libyaml's document
 * loader: the tree with each node's line, and checks that say the first
 * thing wrong as FILE:LINE: KEY.PATH: what.
 */
#include "yamlread.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "fsio.h"
#include "words.h"

/* libyaml's error: a reader error (bad UTF-8, a control character) has
 * an offset, not a line: the line is counted up to it */
static int syntax_error(const char *path, yaml_parser_t *parser, struct pl_error *err)
{
	size_t line = parser->problem_mark.line + 1;
	if (parser->error == YAML_READER_ERROR) {
		line = 1;
		FILE *f = fopen(path, "rb");
		for (size_t i = 0; f && i < parser->problem_offset; i++) {
			int ch = fgetc(f);
			if (ch == EOF)
				break;
			line += ch == '\n';
		}
		if (f)
			fclose(f);
	}
	return pl_error_set(err, PL_EINPUT, "%s:%zu: not YAML: %s%s%s", path, line,
			    parser->problem ? parser->problem : "a syntax error",
			    parser->context ? " " : "", parser->context ? parser->context : "");
}

/* perfloop's own files nest a handful of levels and weigh kilobytes;
 * libyaml's loader takes minutes over 200,000 levels (and SIGTERM waits),
 * so both are bounded before it runs */
#define PL_YAML_MAX_DEPTH 64
#define PL_YAML_MAX_BYTES (4L << 20)

/* A first pass over the events, stopping at the first level too deep. */
static int check_depth(const char *path, FILE *f, struct pl_error *err)
{
	yaml_parser_t parser;
	if (!yaml_parser_initialize(&parser))
		return pl_error_set(err, PL_ENOMEM, "out of memory");
	yaml_parser_set_input_file(&parser, f);
	int rc = PL_OK, depth = 0;
	for (;;) {
		yaml_event_t ev;
		if (!yaml_parser_parse(&parser, &ev)) {
			rc = syntax_error(path, &parser, err);
			break;
		}
		yaml_event_type_t t = ev.type;
		size_t line = ev.start_mark.line + 1;
		yaml_event_delete(&ev);
		if (t == YAML_SEQUENCE_START_EVENT || t == YAML_MAPPING_START_EVENT)
			depth++;
		else if (t == YAML_SEQUENCE_END_EVENT || t == YAML_MAPPING_END_EVENT)
			depth--;
		if (depth > PL_YAML_MAX_DEPTH) {
			rc = pl_error_set(err, PL_EINPUT,
					  "%s:%zu: nested deeper than %d levels (perfloop's files "
					  "need a few)",
					  path, line, PL_YAML_MAX_DEPTH);
			break;
		}
		if (t == YAML_STREAM_END_EVENT)
			break;
	}
	yaml_parser_delete(&parser);
	return rc;
}

int pl_yaml_load(const char *path, struct pl_yaml *y, struct pl_error *err)
{
	memset(y, 0, sizeof *y);
	y->path = path;
	y->err = err;
	/* a regular file (a FIFO named perfloop.yaml hung the bench) */
	struct pl_error why;
	int fd = pl_fsio_open_regular(path, 0, &why);
	FILE *f = fd >= 0 ? fdopen(fd, "rb") : NULL;
	if (!f) {
		if (fd >= 0)
			close(fd);
		return pl_error_set(err, PL_EINPUT, "%s", why.msg);
	}
	if (fseek(f, 0, SEEK_END) == 0 && ftell(f) > PL_YAML_MAX_BYTES) {
		fclose(f);
		return pl_error_set(err, PL_EINPUT, "%s: over %ld MiB (perfloop's files weigh "
				    "kilobytes)", path, PL_YAML_MAX_BYTES >> 20);
	}
	rewind(f);
	int rc = check_depth(path, f, err);
	if (rc != PL_OK) {
		fclose(f);
		return rc;
	}
	rewind(f);
	yaml_parser_t parser;
	if (!yaml_parser_initialize(&parser)) {
		fclose(f);
		return pl_error_set(err, PL_ENOMEM, "out of memory");
	}
	yaml_parser_set_input_file(&parser, f);
	if (!yaml_parser_load(&parser, &y->doc)) {
		rc = syntax_error(path, &parser, err);
	} else {
		y->loaded = 1;
		/* one document: a second one (after ---) would be ignored */
		yaml_document_t next;
		if (!yaml_parser_load(&parser, &next)) {
			rc = syntax_error(path, &parser, err);
		} else {
			yaml_node_t *root = yaml_document_get_root_node(&next);
			if (root)
				rc = pl_error_set(err, PL_EINPUT,
						  "%s:%zu: a second YAML document: the file holds one",
						  path, root->start_mark.line + 1);
			yaml_document_delete(&next);
		}
	}
	yaml_parser_delete(&parser);
	fclose(f);
	return rc;
}

void pl_yaml_release(struct pl_yaml *y)
{
	if (y->loaded)
		yaml_document_delete(&y->doc);
	y->loaded = 0;
}

int pl_yaml_read(const char *path, pl_yaml_root_fn read, void *arg, struct pl_error *err)
{
	struct pl_yaml y;
	int rc = pl_yaml_load(path, &y, err);
	if (rc == PL_OK)
		rc = read(&y, pl_yaml_root(&y), arg);
	pl_yaml_release(&y);
	return rc;
}

yaml_node_t *pl_yaml_root(struct pl_yaml *y)
{
	return yaml_document_get_root_node(&y->doc);
}

yaml_node_t *pl_yaml_node(struct pl_yaml *y, int id)
{
	return yaml_document_get_node(&y->doc, id);
}

int pl_yaml_line(const yaml_node_t *n)
{
	return n ? (int)n->start_mark.line + 1 : 0;
}

int pl_yaml_bad(struct pl_yaml *c, const yaml_node_t *n, const char *where, const char *fmt,
		const char *arg)
{
	char what[1400];
	snprintf(what, sizeof what, fmt, arg);
	return pl_error_set(c->err, PL_EINPUT, "%s:%d: %s: %s", c->path, pl_yaml_line(n), where,
			    what);
}

const char *pl_yaml_scalar(const yaml_node_t *n)
{
	return n && n->type == YAML_SCALAR_NODE ? (const char *)n->data.scalar.value : NULL;
}

/* A mapping's keys checked against known (NULL-terminated) and for
 * repeats; 0, or PL_EINPUT. */
int pl_yaml_keys(struct pl_yaml *c, yaml_node_t *map, const char *where, const char *const *known)
{
	for (yaml_node_pair_t *p = map->data.mapping.pairs.start; p < map->data.mapping.pairs.top;
	     p++) {
		yaml_node_t *k = yaml_document_get_node(&c->doc, p->key);
		const char *key = pl_yaml_scalar(k);
		if (!key)
			return pl_yaml_bad(c, k, where, "a key must be a plain word%s", "");
		int found = !known;
		for (size_t i = 0; known && known[i] && !found; i++)
			found = !strcmp(known[i], key);
		if (!found) {
			char list[256] = "";
			for (size_t i = 0; known[i]; i++) {
				strncat(list, i ? ", " : "", sizeof list - strlen(list) - 1);
				strncat(list, known[i], sizeof list - strlen(list) - 1);
			}
			const char *near = NULL;
			for (size_t i = 0; known[i]; i++)
				if (pl_edit_distance(key, known[i]) <= 2)
					near = known[i];
			char msg[400];
			if (near)
				snprintf(msg, sizeof msg, "unknown key '%s' (did you mean '%s'?)",
					 key, near);
			else
				snprintf(msg, sizeof msg, "unknown key '%s' (known: %s)", key,
					 list);
			return pl_yaml_bad(c, k, where, "%s", msg);
		}
		for (yaml_node_pair_t *q = map->data.mapping.pairs.start; q < p; q++)
			if (!strcmp(pl_yaml_scalar(yaml_document_get_node(&c->doc, q->key)), key))
				return pl_yaml_bad(c, k, where, "the key '%s' is given twice", key);
	}
	return PL_OK;
}

int pl_yaml_string(struct pl_yaml *c, yaml_node_t *v, const char *where, char **out)
{
	const char *s = pl_yaml_scalar(v);
	if (!s || !*s || pl_yaml_is_null(v))
		return pl_yaml_bad(c, v, where, "expected a string%s", "");
	free(*out);
	*out = strdup(s);
	return *out ? PL_OK : pl_error_set(c->err, PL_ENOMEM, "out of memory");
}

int pl_yaml_int(struct pl_yaml *c, yaml_node_t *v, const char *where, long lo, long hi, int *out)
{
	const char *s = pl_yaml_scalar(v);
	char *end;
	errno = 0;
	long x = s ? strtol(s, &end, 10) : 0;
	if (!s || !*s || *end || errno || x < lo || x > hi) {
		char msg[160];
		snprintf(msg, sizeof msg, "expected an integer from %ld to %ld, got '%s'", lo, hi,
			 s ? s : "(not a scalar)");
		return pl_yaml_bad(c, v, where, "%s", msg);
	}
	*out = (int)x;
	return PL_OK;
}

int pl_yaml_share(struct pl_yaml *c, yaml_node_t *v, const char *where, double *out)
{
	const char *s = pl_yaml_scalar(v);
	if (!s || pl_parse_share(s, 0, out) < 0)
		return pl_yaml_bad(c, v, where,
				   "expected a fraction or a percentage (0.05 or 5%%), got '%s'",
				   s ? s : "(not a scalar)");
	return PL_OK;
}

int pl_yaml_bool(struct pl_yaml *c, yaml_node_t *v, const char *where, int *out)
{
	const char *s = pl_yaml_scalar(v);
	if (s && (!strcmp(s, "true") || !strcmp(s, "false"))) {
		*out = !strcmp(s, "true");
		return PL_OK;
	}
	return pl_yaml_bad(c, v, where, "expected true or false, got '%s'",
			   s ? s : "(not a scalar)");
}

int pl_yaml_number(struct pl_yaml *c, yaml_node_t *v, const char *where, double lo, double *out)
{
	const char *s = pl_yaml_scalar(v);
	char *end;
	double x = s && *s ? strtod(s, &end) : 0;
	if (!s || !*s || *end || !(x >= lo) || x > 1e30) {
		char msg[160];
		snprintf(msg, sizeof msg, "expected a number >= %g, got '%s'", lo,
			 s ? s : "(not a scalar)");
		return pl_yaml_bad(c, v, where, "%s", msg);
	}
	*out = x;
	return PL_OK;
}

int pl_yaml_is_null(const yaml_node_t *v)
{
	const char *s = pl_yaml_scalar(v);
	return s && v->data.scalar.style == YAML_PLAIN_SCALAR_STYLE &&
	       (!*s || !strcmp(s, "~") || !strcmp(s, "null"));
}

int pl_yaml_each(struct pl_yaml *c, yaml_node_t *map, const char *where, const char *what,
		 const char *const *known, pl_yaml_entry_fn fn, void *arg)
{
	if (!map || map->type != YAML_MAPPING_NODE)
		return pl_yaml_bad(c, map, where, "expected a mapping of %s", what);
	int rc = pl_yaml_keys(c, map, where, known);
	for (yaml_node_pair_t *p = map->data.mapping.pairs.start;
	     rc == PL_OK && p < map->data.mapping.pairs.top; p++) {
		const char *key = pl_yaml_scalar(pl_yaml_node(c, p->key));
		char at[700];
		key = key ? key : "?"; /* (pl_yaml_keys: never) */
		snprintf(at, sizeof at, "%.340s.%.300s", where, key);
		rc = fn(c, key, pl_yaml_node(c, p->value), at, arg);
	}
	return rc;
}
