/*
 * Suppression comments (see suppress.h). Found by a pass over the text for
 * ':' (both forms have one), checked backwards for the tag: cheap beside
 * the parse, and independent of the language's comment syntax.
 */
#include "suppress.h"

#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

static int ends_with_ci(const char *text, size_t at, const char *word)
{
	size_t n = strlen(word);
	return at >= n && strncasecmp(text + at - n, word, n) == 0 &&
	       (at == n || !isalnum((unsigned char)text[at - n - 1]));
}

/* Ids from p up to end: letters and digits, separated by commas and
 * blanks, stopping at anything else. */
static const char *read_ids(const char *p, const char *end, struct pl_supp *s)
{
	while (p < end) {
		while (p < end && (*p == ' ' || *p == '\t' || *p == ','))
			p++;
		size_t n = 0;
		while (p + n < end && isalnum((unsigned char)p[n]))
			n++;
		if (n == 0)
			break;
		if (s->nids < PL_SUPP_IDS && n < sizeof s->ids[0]) {
			for (size_t i = 0; i < n; i++)
				s->ids[s->nids][i] = (char)toupper((unsigned char)p[i]);
			s->ids[s->nids][n] = '\0';
			s->nids++;
		}
		p += n;
	}
	return p;
}

static int push(struct pl_supps *out, const struct pl_supp *s)
{
	if (out->n == out->cap) {
		size_t cap = out->cap ? 2 * out->cap : 8;
		struct pl_supp *v = realloc(out->v, cap * sizeof *v);
		if (!v)
			return -1;
		out->v = v;
		out->cap = cap;
	}
	out->v[out->n++] = *s;
	return 0;
}

int pl_supp_parse(const char *text, size_t len, const uint32_t *line_start, size_t nlines,
		  struct pl_supps *out)
{
	memset(out, 0, sizeof *out);
	size_t row = 0;
	for (const char *c = text; (c = memchr(c, ':', len - (size_t)(c - text))); c++) {
		size_t at = (size_t)(c - text);
		int perfloop = ends_with_ci(text, at, "perfloop"), noqa = ends_with_ci(text, at, "noqa");
		if (!perfloop && !noqa)
			continue;
		while (row + 1 < nlines && line_start[row + 1] <= at)
			row++;
		const char *eol = memchr(c, '\n', len - at);
		if (!eol)
			eol = text + len;
		struct pl_supp s = {.row = (uint32_t)row, .noqa = (unsigned char)noqa};
		const char *p = c + 1;
		while (p < eol && (*p == ' ' || *p == '\t'))
			p++;
		if (perfloop) {
			if ((size_t)(eol - p) < 6 || strncasecmp(p, "ignore", 6) != 0)
				continue;
			p += 6;
			if (p < eol && *p == '[') {
				read_ids(p + 1, eol, &s);
				if (s.nids == 0)
					s.all = 1;
			} else if (p == eol || !isalnum((unsigned char)*p)) {
				s.all = 1;
			} else {
				continue;
			}
		} else {
			read_ids(p, eol, &s);
			if (s.nids == 0) /* a bare noqa is for other tools */
				continue;
		}
		if (push(out, &s) < 0) {
			pl_supp_release(out);
			return -1;
		}
	}
	/* a bare `# noqa` (no colon): ruff's "every rule on this line" */
	row = 0;
	for (const char *c = text; (c = memchr(c, '#', len - (size_t)(c - text))); c++) {
		const char *p = c + 1, *end = text + len;
		while (p < end && (*p == ' ' || *p == '\t'))
			p++;
		if (end - p < 4 || strncasecmp(p, "noqa", 4) != 0)
			continue;
		p += 4;
		if (p < end && (*p == ':' || isalnum((unsigned char)*p) || *p == '_'))
			continue; /* `noqa: X` above, or another word */
		size_t at = (size_t)(c - text);
		while (row + 1 < nlines && line_start[row + 1] <= at)
			row++;
		struct pl_supp s = {.row = (uint32_t)row, .noqa = 1, .all = 1, .bare = 1};
		if (push(out, &s) < 0) {
			pl_supp_release(out);
			return -1;
		}
	}
	return 0;
}

int pl_supp_match(struct pl_supps *s, uint32_t row, const char *id)
{
	int hit = 0;
	for (size_t i = 0; i < s->n; i++) {
		struct pl_supp *x = &s->v[i];
		if (!(x->row == row || (!x->noqa && x->row + 1 == row)))
			continue;
		if (x->all) {
			if (x->bare && !x->used_all)
				snprintf(x->hit, sizeof x->hit, "%s", id);
			x->used_all = 1;
			hit = 1;
		}
		for (unsigned j = 0; j < x->nids; j++)
			if (strcasecmp(x->ids[j], id) == 0) {
				x->used[j] = 1;
				hit = 1;
			}
	}
	return hit;
}

void pl_supp_release(struct pl_supps *s)
{
	free(s->v);
	memset(s, 0, sizeof *s);
}
