/*
 * Suppression comments in scanned source: perfloop's own
 * `perfloop: ignore[PY003, C001]` (or bare `perfloop: ignore`, every rule)
 * on a finding's line or the line above, and ruff's `noqa: PY003` on the
 * finding's line; a bare `# noqa` suppresses every rule on its line, as
 * ruff reads it (scan says so where it hid one of ours). Case-insensitive. Each remembers whether it suppressed
 * anything, so that scan can warn about unknown and unused ones.
 */
#ifndef PL_SUPPRESS_H
#define PL_SUPPRESS_H

#include <stddef.h>
#include <stdint.h>

#define PL_SUPP_IDS 8

struct pl_supp {
	uint32_t row;	   /* 0-based line of the comment */
	unsigned char noqa; /* ruff's form: this line only, others' codes allowed */
	unsigned char all;  /* bare `perfloop: ignore`, or a bare `# noqa` */
	unsigned char bare; /* a bare `# noqa` (others' tools use it too) */
	char hit[16];	    /* the first rule a bare `# noqa` suppressed */
	unsigned char nids;
	unsigned char used_all;
	char ids[PL_SUPP_IDS][16]; /* upper-cased */
	unsigned char used[PL_SUPP_IDS];
};

struct pl_supps {
	struct pl_supp *v;
	size_t n, cap;
};

/* Find every suppression comment in text (line_start: each line's first
 * byte). 0, or -1 out of memory. */
int pl_supp_parse(const char *text, size_t len, const uint32_t *line_start, size_t nlines,
		  struct pl_supps *out);

/* Whether rule id is suppressed at row; marks what matched as used. */
int pl_supp_match(struct pl_supps *s, uint32_t row, const char *id);

void pl_supp_release(struct pl_supps *s);

#endif
