/*
 * Compiling a regular expression someone else wrote (a --metric, a spec's
 * metric:, a rule file's condition) without letting it take the machine:
 * the C library's regcomp builds `x+` as `x x*` and `x{n}` as n copies of
 * x, so stacked or nested repetitions (`t++++…`, `((a{99}){99}){99}`)
 * multiply into millions of nodes and gigabytes before it returns.
 * pl_regcomp estimates that size first and refuses past a bound no
 * pattern written to read a number or a name comes near.
 */
#ifndef PL_REGEXCAP_H
#define PL_REGEXCAP_H

#include <regex.h>
#include <stddef.h>

/* Roughly how many nodes regcomp would build for the POSIX extended
 * expression re (repetitions expanded), saturating at cap. */
size_t pl_regex_size(const char *re, size_t cap);

/* The most pl_regcomp accepts. */
#define PL_REGEX_MAX_SIZE 20000

/* regcomp(re, src, cflags), except that an expression larger than
 * PL_REGEX_MAX_SIZE is refused with REG_ESPACE (regerror: "Memory
 * exhausted"; callers name the bound themselves) without compiling. */
int pl_regcomp(regex_t *re, const char *src, int cflags);

#endif
