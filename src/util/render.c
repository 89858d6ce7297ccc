/*
 * Terminal rendering helpers (see render.h). Units follow hyperfine's
 * choices (s, ms, µs) so output reads the same to its users.
 */
#include "render.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static int forced = -1;

void pl_style_force(int mode)
{
	forced = mode;
}

void pl_style_detect(struct pl_style *st, FILE *f)
{
	if (forced >= 0) {
		st->colour = forced;
		return;
	}
	const char *nc = getenv("NO_COLOR"), *fc = getenv("FORCE_COLOR");
	if (fc && *fc && strcmp(fc, "0") != 0) {
		st->colour = 1;
		return;
	}
	st->colour = isatty(fileno(f)) && !(nc && *nc);
}

const char *pl_c(const struct pl_style *st, const char *code)
{
	return st->colour ? code : "";
}

void pl_time_unit(double ref, double *scale, const char **unit)
{
	if (ref >= 1.0) {
		*scale = 1.0;
		*unit = "s";
	} else if (ref >= 1e-3) {
		*scale = 1e3;
		*unit = "ms";
	} else {
		*scale = 1e6;
		*unit = "µs";
	}
}

char *pl_fmt_time(char *buf, size_t len, double seconds)
{
	double scale;
	const char *unit;
	if (seconds == 0) {
		snprintf(buf, len, "0 ms");
		return buf;
	}
	if (!isfinite(seconds)) {
		snprintf(buf, len, "n/a");
		return buf;
	}
	pl_time_unit(fabs(seconds), &scale, &unit);
	snprintf(buf, len, "%.1f %s", seconds * scale, unit);
	if (scale == 1.0)
		snprintf(buf, len, "%.3f %s", seconds, unit);
	return buf;
}

char *pl_fmt_seconds(char *buf, size_t len, double seconds)
{
	double scale;
	const char *unit;
	pl_time_unit(seconds, &scale, &unit);
	snprintf(buf, len, "%.4g %s", seconds * scale, unit);
	return buf;
}

char *pl_fmt_dim(char *buf, size_t len, const char *dimension, double value)
{
	if (dimension && !strcmp(dimension, "timing"))
		return pl_fmt_seconds(buf, len, value);
	if (dimension && !strncmp(dimension, "sim_", 4)) { /* counts: 25.02M instructions */
		char c[32];
		pl_fmt_count(c, sizeof c, value);
		snprintf(buf, len, "%s %s", c,
			 !strcmp(dimension, "sim_cycles") ? "est. cycles" : "instructions");
		return buf;
	}
	/* the other dimensions of perfloop.bench/1 in their units: CPU time
	 * in seconds, task_clock in nanoseconds, memory in bytes (the HTML
	 * page showed "task_clock 3.85862e+07") */
	if (dimension && !strcmp(dimension, "cpu"))
		return pl_fmt_seconds(buf, len, value);
	if (dimension && !strcmp(dimension, "task_clock"))
		return pl_fmt_seconds(buf, len, value / 1e9);
	if (dimension && (!strcmp(dimension, "memory") || !strcmp(dimension, "allocated_bytes")))
		return pl_fmt_bytes(buf, len, value);
	snprintf(buf, len, "%.6g", value);
	return buf;
}

char *pl_fmt_bytes(char *buf, size_t len, double b)
{
	if (b >= 1024.0 * 1024 * 1024)
		snprintf(buf, len, "%.2f GiB", b / (1024.0 * 1024 * 1024));
	else if (b >= 1024.0 * 1024)
		snprintf(buf, len, "%.1f MiB", b / (1024.0 * 1024));
	else if (b >= 1024.0)
		snprintf(buf, len, "%.1f KiB", b / 1024.0);
	else
		snprintf(buf, len, "%.0f B", b);
	return buf;
}

char *pl_fmt_count(char *buf, size_t len, double v)
{
	if (fabs(v) >= 1e9)
		snprintf(buf, len, "%.2fG", v / 1e9);
	else if (fabs(v) >= 1e6)
		snprintf(buf, len, "%.2fM", v / 1e6);
	else if (fabs(v) >= 1e4)
		snprintf(buf, len, "%.1fk", v / 1e3);
	else if (v == floor(v))
		snprintf(buf, len, "%.0f", v);
	else
		snprintf(buf, len, "%.1f", v);
	return buf;
}

void pl_progress_draw(FILE *f, const struct pl_style *st, const char *label, size_t done,
		      size_t total, double eta_s, const char *extra)
{
	const int width = 30;
	int filled = total ? (int)((double)width * (double)done / (double)total) : 0;
	if (filled > width)
		filled = width;
	char bar[3 * 30 + 1];
	size_t k = 0;
	for (int i = 0; i < width; i++) {
		const char *g = i < filled ? "█" : "░";
		size_t gl = strlen(g);
		memcpy(bar + k, g, gl);
		k += gl;
	}
	bar[k] = '\0';
	char eta[32] = "";
	if (eta_s >= 0 && isfinite(eta_s))
		snprintf(eta, sizeof(eta), " ETA %02d:%02d", (int)(eta_s / 60),
			 (int)fmod(eta_s, 60));
	fprintf(f, "\r\033[K%s%-20.20s%s %s%s%s %zu/%zu%s %s", pl_c(st, PL_BOLD), label,
		pl_c(st, PL_RESET), pl_c(st, PL_CYAN), bar, pl_c(st, PL_RESET), done, total, eta,
		extra ? extra : "");
	fflush(f);
}

void pl_progress_clear(FILE *f)
{
	fprintf(f, "\r\033[K");
	fflush(f);
}
