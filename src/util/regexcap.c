/*
 * The size regcomp would give an expression (see regex.h). A walk over
 * the POSIX extended syntax, one frame per open group: an atom counts 1,
 * a bracket expression 1, a group its contents plus 1, `*` and `?` add 1
 * to what they repeat, `+` doubles it (glibc builds x+ as x x*), and
 * {m,n} makes max(m,n)+1 copies. Alternatives add. Everything saturates
 * at the cap, so the walk is linear and never overflows.
 */
#include "regexcap.h"

#include <ctype.h>
#include <stdlib.h>

#define DEPTH 64

static size_t sat_add(size_t a, size_t b, size_t cap)
{
	return a >= cap || b >= cap || a + b >= cap ? cap : a + b;
}

static size_t sat_mul(size_t a, size_t b, size_t cap)
{
	if (a == 0 || b == 0)
		return 0;
	return a >= cap / b + 1 ? cap : (a * b >= cap ? cap : a * b);
}

/* The end of the bracket expression starting at p ('['): the character
 * after its ']', or the end of the string where it never closes. */
static const char *bracket_end(const char *p)
{
	p++;
	if (*p == '^')
		p++;
	if (*p == ']')
		p++;
	while (*p && *p != ']') {
		if (p[0] == '[' && (p[1] == ':' || p[1] == '=' || p[1] == '.')) {
			char kind = p[1];
			const char *q = p + 2;
			while (*q && !(q[0] == kind && q[1] == ']'))
				q++;
			p = *q ? q + 2 : q;
			continue;
		}
		p++;
	}
	return *p ? p + 1 : p;
}

/* A bound {m}, {m,} or {m,n} at p: its copy count and the character
 * after it, or NULL where p does not start one (then '{' is literal). */
static const char *bound_at(const char *p, size_t *copies)
{
	const char *q = p + 1;
	if (!isdigit((unsigned char)*q))
		return NULL;
	unsigned long m = strtoul(q, (char **)&q, 10), n = m;
	if (*q == ',') {
		q++;
		n = isdigit((unsigned char)*q) ? strtoul(q, (char **)&q, 10) : m + 1;
	}
	if (*q != '}')
		return NULL;
	unsigned long most = m > n ? m : n;
	/* (strtoul saturates; regcomp refuses past RE_DUP_MAX anyway) */
	*copies = most > 1000000UL ? 1000001 : (size_t)most + 1;
	return q + 1;
}

size_t pl_regex_size(const char *re, size_t cap)
{
	/* per open group: the alternatives closed so far, the current
	 * branch, and the last atom's size (what a repetition repeats) */
	size_t alts[DEPTH], cur[DEPTH], last[DEPTH];
	int d = 0;
	alts[0] = cur[0] = last[0] = 0;
	for (const char *p = re; *p;) {
		size_t atom = 0, copies;
		const char *next;
		switch (*p) {
		case '\\':
			atom = 1;
			p += p[1] ? 2 : 1;
			break;
		case '[':
			atom = 1;
			p = bracket_end(p);
			break;
		case '(':
			if (d + 1 >= DEPTH)
				return cap;
			d++;
			alts[d] = cur[d] = last[d] = 0;
			p++;
			continue;
		case ')':
			if (d == 0) {
				atom = 1;
				p++;
				break;
			}
			atom = sat_add(sat_add(alts[d], cur[d], cap), 1, cap);
			d--;
			p++;
			break;
		case '|':
			alts[d] = sat_add(alts[d], cur[d], cap);
			cur[d] = last[d] = 0;
			p++;
			continue;
		case '*':
		case '?':
		case '+': {
			size_t grown = *p == '+' ? sat_mul(last[d], 2, cap) + 1
						 : sat_add(last[d], 1, cap);
			cur[d] = sat_add(cur[d] - last[d], grown, cap);
			last[d] = grown;
			p++;
			continue;
		}
		case '{':
			if ((next = bound_at(p, &copies)) != NULL) {
				size_t grown = sat_add(sat_mul(last[d], copies, cap), 1, cap);
				cur[d] = sat_add(cur[d] - last[d], grown, cap);
				last[d] = grown;
				p = next;
				continue;
			}
			atom = 1;
			p++;
			break;
		default:
			atom = 1;
			p++;
			break;
		}
		cur[d] = sat_add(cur[d], atom, cap);
		last[d] = atom;
		if (cur[d] >= cap)
			return cap;
	}
	size_t total = 0;
	for (; d >= 0; d--)
		total = sat_add(total, sat_add(alts[d], cur[d], cap), cap);
	return total;
}

int pl_regcomp(regex_t *re, const char *src, int cflags)
{
	if (pl_regex_size(src, PL_REGEX_MAX_SIZE + 1) > PL_REGEX_MAX_SIZE)
		return REG_ESPACE;
	return regcomp(re, src, cflags);
}
