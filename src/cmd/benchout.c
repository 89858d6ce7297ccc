/*
 * What perfloop bench shows and writes besides the table and exports
 * (measure/benchview.c): the progress lines on stderr, the
 * unsupported-counters notice said once per machine, output files checked
 * before the run and written after it, and the run's record in
 * .perfloop/history.db.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "bench_int.h"
#include "cmd.h"
#include "fsio.h"
#include "history.h"
#include "monotime.h"

/* Progress on stderr: one line per command (up to PROGRESS_LINES; beyond
 * that only the running one), redrawn in place, at most every 50 ms. */
#define PROGRESS_LINES 12

static void progress_line(struct progress_state *ps, const struct pl_bench *b, int warming)
{
	char extra[64] = "", tb[32];
	size_t total = b->target ? b->target : b->n;
	double eta = -1;
	if (warming) {
		snprintf(extra, sizeof(extra), "warming up");
	} else if (b->n > 0) {
		double med = pl_bench_current_median(b);
		snprintf(extra, sizeof(extra), "median %s", pl_fmt_time(tb, sizeof(tb), med));
		eta =
		    b->state == PL_BENCH_PENDING && total > b->n ? (double)(total - b->n) * med : 0;
	} else {
		snprintf(extra, sizeof(extra), "waiting");
	}
	if (b->state == PL_BENCH_FAILED)
		snprintf(extra, sizeof(extra), "failed");
	pl_progress_draw(stderr, &ps->st, b->name, b->n, total ? total : 1, eta, extra);
}

void bench_on_progress(void *arg, const struct pl_bench *b, size_t index, enum pl_progress_event ev)
{
	struct progress_state *ps = arg;
	double t = pl_now_s();
	if (ev != PL_PROGRESS_END && t - ps->last_draw < 0.05)
		return;
	ps->last_draw = t;
	const struct pl_bench_run *run = ps->run;
	if (run->nbench > PROGRESS_LINES) {
		progress_line(ps, b, ev == PL_PROGRESS_WARMUP);
		ps->drawn = 1;
		return;
	}
	/* back to the first line, then redraw every command */
	if (ps->drawn > 1)
		fprintf(stderr, "\033[%zuA", ps->drawn - 1);
	for (size_t i = 0; i < run->nbench; i++) {
		const struct pl_bench *bi = &run->bench[i];
		progress_line(ps, bi, i == index && ev == PL_PROGRESS_WARMUP);
		if (i + 1 < run->nbench)
			fputc('\n', stderr);
	}
	ps->drawn = run->nbench;
	fflush(stderr);
}

void bench_progress_clear(struct progress_state *ps)
{
	if (!ps->drawn)
		return;
	for (size_t i = 1; i < ps->drawn; i++)
		fprintf(stderr, "\r\033[K\033[1A");
	pl_progress_clear(stderr);
}

/* The unsupported-counters notice is said once per machine (and again
 * when the set changes, or when --counters names counters): a file under
 * $XDG_CACHE_HOME/perfloop (~/.cache) remembers which set was said. The
 * summary always lists them. Returns 1 to keep quiet. */
int bench_counters_said(const struct pl_counter_set *cs)
{
	char key[1024] = "";
	size_t len = 0;
	for (size_t k = 0; k < cs->n; k++)
		if (!cs->supported[k])
			len += (size_t)snprintf(key + len, len < sizeof key ? sizeof key - len : 0,
						"%s\n", pl_counter_def(cs->id[k])->name);
	if (!key[0])
		return 0;
	const char *xdg = getenv("XDG_CACHE_HOME"), *home = getenv("HOME");
	char dir[4096], path[4200];
	if (xdg && *xdg)
		snprintf(dir, sizeof dir, "%s/perfloop", xdg);
	else if (home && *home)
		snprintf(dir, sizeof dir, "%s/.cache/perfloop", home);
	else
		return 0;
	snprintf(path, sizeof path, "%s/counters-notice", dir);
	size_t n;
	int missing;
	char *old = pl_fsio_read(path, &n, &missing);
	int same = old && strcmp(old, key) == 0;
	free(old);
	if (same)
		return 1;
	char parent[4096];
	snprintf(parent, sizeof parent, "%s", dir);
	char *slash = strrchr(parent, '/');
	if (slash) {
		*slash = '\0';
		mkdir(parent, 0755);
	}
	mkdir(dir, 0755);
	struct pl_error err;
	(void)pl_fsio_write_atomic(path, key, strlen(key), &err); /* best effort */
	return 0;
}

/* An output that cannot be written is found before minutes of measuring,
 * not after. */
int bench_check_writable(const char *opt, const char *path)
{
	struct pl_error err = {{0}};
	if (!path || pl_fsio_check_writable(path, &err) == PL_OK)
		return 0;
	pl_die(PL_EXIT_USAGE, "option '%s': %s", opt, err.msg);
	return -1;
}

int bench_write_text(const char *path, char *text, struct pl_error *err)
{
	if (!text)
		return PL_ENOMEM;
	int rc = pl_fsio_write_atomic(path, text, strlen(text), err);
	free(text);
	return rc;
}

/* Inside a git repository, every run goes into .perfloop/history.db. A
 * history that cannot be written costs a warning, never the benchmark. */
void bench_record_history(json_t *doc)
{
	struct pl_error err;
	if (pl_history_record_here(".", doc, NULL, &err) != PL_OK)
		fprintf(stderr, "perfloop: warning: history not recorded: %s\n", err.msg);
}
