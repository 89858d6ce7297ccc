/*
 * Terminal presentation shared by every command: colour (off unless the
 * stream is a terminal and NO_COLOR is unset), human units, progress bars.
 * Functions write to the FILE* they are given; which stream, and whether at
 * all, is the command's decision.
 */
#ifndef PL_RENDER_H
#define PL_RENDER_H

#include <stdio.h>

struct pl_style {
	int colour;
};

/* Colour on when `f` is a terminal and NO_COLOR is unset or empty, or
 * FORCE_COLOR is set (not "0"); `--color always|never` (pl_style_force)
 * overrides both. */
void pl_style_detect(struct pl_style *st, FILE *f);

/* --color: 1 always, 0 never, -1 auto (the default). */
void pl_style_force(int mode);
const char *pl_c(const struct pl_style *st, const char *code); /* "" when off */
#define PL_BOLD "\033[1m"
#define PL_DIM "\033[2m"
#define PL_RED "\033[31m"
#define PL_GREEN "\033[32m"
#define PL_YELLOW "\033[33m"
#define PL_CYAN "\033[36m"
#define PL_RESET "\033[0m"

/* "123.4 ms", "1.234 s", "56.7 µs", in a field of `width` (0: none). */
char *pl_fmt_time(char *buf, size_t len, double seconds);
/* Time in the given unit scale (picked from a reference value). */
void pl_time_unit(double ref_seconds, double *scale, const char **unit);
char *pl_fmt_bytes(char *buf, size_t len, double bytes);
/* A duration with its unit, as bench prints it: "82.6 ms", "1.24 s". */
char *pl_fmt_seconds(char *buf, size_t len, double seconds);
/* A dimension's value as bench prints it: timing, cpu and task_clock as
 * durations, memory and allocated_bytes in bytes, the simulated counts
 * with their names, any other dimension as the number it is (%.6g). */
char *pl_fmt_dim(char *buf, size_t len, const char *dimension, double value);
char *pl_fmt_count(char *buf, size_t len, double v);

/* One progress line, redrawn in place with \r. */
void pl_progress_draw(FILE *f, const struct pl_style *st, const char *label, size_t done,
		      size_t total, double eta_s, const char *extra);
void pl_progress_clear(FILE *f);

#endif
