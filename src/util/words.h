/*
 * Splitting a command string into argv the way a POSIX shell would split
 * words, without running a shell: blanks separate words, '...' is literal,
 * "..." allows \" \\ \$ \` escapes, a backslash outside quotes escapes the
 * next character. No expansion of variables, globs or ~ happens: a user who
 * wants those asks for `--shell`.
 */
#ifndef PL_WORDS_H
#define PL_WORDS_H

#include <stddef.h>

#include "error.h"

struct pl_argv {
	char **v; /* NULL-terminated */
	size_t n;
};

int pl_words_split(const char *s, struct pl_argv *out, struct pl_error *err);
void pl_argv_release(struct pl_argv *a);
/* Append a copy of buf[0..len) (keeping the vector NULL-terminated). */
int pl_argv_push(struct pl_argv *a, const char *buf, size_t len);
/* Levenshtein distance between a and b (for "did you mean"); stops
 * counting at 99. */
int pl_edit_distance(const char *a, const char *b);

/* A share as users write one: a fraction ("0.05") or a percentage ("5%"),
 * and with bare_percent a bare number is a percentage ("5"): the options
 * that took percents keep doing so, those that took fractions too, and
 * "5%" means the same everywhere. The fraction in *out; 0, or -1 where s
 * is neither or not in [0, 1]. */
int pl_parse_share(const char *s, int bare_percent, double *out);

/* Replace every "{name}" in s with value; returns a malloc'd string. */
char *pl_words_substitute(const char *s, const char *name, const char *value);

#endif
