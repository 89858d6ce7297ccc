/*
 * SQLite history (see history.h). Design:
 * - application_id marks the file as ours; user_version is the schema
 *   version, and migrations[] brings an older file up to date in one
 *   transaction. A file with another application_id, or that SQLite says is
 *   not a database, is refused and left as it is.
 * - WAL mode and a busy timeout let two perfloop processes record at once;
 *   each recording is one IMMEDIATE transaction.
 * - The regression rule is bench's: the Mann-Whitney test and the bootstrap
 *   interval of the ratio of medians, slower only when significant and the
 *   whole interval is beyond +1%; and, as bench --baseline judges, two
 *   recordings in doubt (a timing over the noise gate, a slower speed
 *   probe: summary.h) differ only where the CPU time says so.
 */
#include "history.h"

#include <math.h>
#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "benchrun.h"
#include "gitops.h"
#include "hash.h"
#include "ledger.h"
#include "render.h"
#include "spawn.h"
#include "stats.h"
#include "summary.h"

#define PL_HISTORY_APP_ID 0x70666c70 /* "pflp" */

struct pl_history {
	sqlite3 *db;
	char path[4096];
	int read_err; /* the first failed step of a reading, 0 if none */
};

/* The next row: 1; 0 at the end or on an error, which is kept in
 * h->read_err: a damaged page must not read as a short (or empty) history */
static int row(struct pl_history *h, sqlite3_stmt *st)
{
	int rc = sqlite3_step(st);
	if (rc == SQLITE_ROW)
		return 1;
	if (rc != SQLITE_DONE && !h->read_err)
		h->read_err = rc;
	return 0;
}

static int read_failed(struct pl_history *h, struct pl_error *err, const char *what)
{
	return pl_error_set(err, PL_EINPUT,
			    "%s: %s: %s (the database is damaged: 'sqlite3 %s \"PRAGMA "
			    "integrity_check\"' says where; bench records anew into a new file)",
			    h->path, what, sqlite3_errstr(h->read_err), h->path);
}

static const char *migrations[] = {
    /* version 1 */
    "CREATE TABLE runs (id INTEGER PRIMARY KEY, created TEXT NOT NULL, commit_id TEXT,"
    " tool_version TEXT, fingerprint TEXT NOT NULL);"
    "CREATE TABLE benchmarks (id INTEGER PRIMARY KEY, run_id INTEGER NOT NULL REFERENCES runs(id),"
    " name TEXT NOT NULL, command TEXT NOT NULL, spec_hash TEXT NOT NULL, p50 REAL, n INTEGER,"
    " cv REAL);"
    "CREATE TABLE samples (bench_id INTEGER NOT NULL REFERENCES benchmarks(id), idx INTEGER NOT "
    "NULL,"
    " wall_s REAL NOT NULL, user_s REAL, sys_s REAL, max_rss_bytes INTEGER, exit_code INTEGER,"
    " counted INTEGER NOT NULL);"
    "CREATE INDEX benchmarks_by_name ON benchmarks(name, run_id);",
    /* version 2: the tree's state, so that a dirty tree or a rejected turn
     * is not blamed on its commit */
    "ALTER TABLE runs ADD COLUMN tree TEXT;",
    /* version 3: runs per sample, so that the history compares what bench
     * compared (batch means), not the runs as if each were independent */
    "ALTER TABLE benchmarks ADD COLUMN batch INTEGER;",
};

static int fail(struct pl_history *h, struct pl_error *err, const char *what)
{
	return pl_error_set(err, PL_EINPUT, "%s: %s: %s", h->path, what, sqlite3_errmsg(h->db));
}

static int exec(struct pl_history *h, const char *sql, struct pl_error *err)
{
	if (sqlite3_exec(h->db, sql, NULL, NULL, NULL) != SQLITE_OK)
		return fail(h, err, sql);
	return PL_OK;
}

static int pragma_int(struct pl_history *h, const char *sql, int *value)
{
	sqlite3_stmt *st;
	if (sqlite3_prepare_v2(h->db, sql, -1, &st, NULL) != SQLITE_OK)
		return -1;
	int rc = sqlite3_step(st);
	*value = rc == SQLITE_ROW ? sqlite3_column_int(st, 0) : 0;
	sqlite3_finalize(st);
	return rc == SQLITE_ROW ? 0 : -1;
}

int pl_history_open(const char *path, struct pl_history **out, struct pl_error *err)
{
	*out = NULL;
	struct pl_history *h = calloc(1, sizeof(*h));
	if (!h)
		return PL_ENOMEM;
	snprintf(h->path, sizeof(h->path), "%s", path);
	if (sqlite3_open_v2(path, &h->db, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE, NULL) !=
	    SQLITE_OK) {
		int rc = pl_error_set(err, PL_EINPUT, "%s: cannot open: %s", path,
				      h->db ? sqlite3_errmsg(h->db) : "out of memory");
		pl_history_close(h);
		return rc;
	}
	sqlite3_busy_timeout(h->db, 10000);
	int app = 0, version = 0, tables = 0;
	if (pragma_int(h, "PRAGMA application_id", &app) != 0 ||
	    pragma_int(h, "SELECT count(*) FROM sqlite_master", &tables) != 0) {
		int rc = pl_error_set(err, PL_EINPUT,
				      "%s: not a perfloop history database (%s); move it away, "
				      "perfloop will not overwrite it",
				      path, sqlite3_errmsg(h->db));
		pl_history_close(h);
		return rc;
	}
	if (app != PL_HISTORY_APP_ID && tables > 0) {
		int rc = pl_error_set(err, PL_EINPUT,
				      "%s: a SQLite database of another application; move it away, "
				      "perfloop will not overwrite it",
				      path);
		pl_history_close(h);
		return rc;
	}
	int rc = exec(h, "PRAGMA journal_mode=WAL", err);
	if (rc == PL_OK)
		rc = exec(h, "BEGIN IMMEDIATE", err);
	if (rc == PL_OK && pragma_int(h, "PRAGMA user_version", &version) != 0)
		rc = fail(h, err, "user_version");
	int latest = (int)(sizeof(migrations) / sizeof(migrations[0]));
	if (rc == PL_OK && version > latest)
		rc = pl_error_set(err, PL_EINPUT,
				  "%s: written by a newer perfloop (schema %d; this one knows %d)",
				  path, version, latest);
	for (int v = version; rc == PL_OK && v < latest; v++)
		rc = exec(h, migrations[v], err);
	if (rc == PL_OK && version < latest) {
		char sql[96];
		snprintf(sql, sizeof(sql), "PRAGMA application_id=%d; PRAGMA user_version=%d",
			 PL_HISTORY_APP_ID, latest);
		rc = exec(h, sql, err);
	}
	if (rc == PL_OK)
		rc = exec(h, "COMMIT", err);
	if (rc != PL_OK) {
		pl_history_close(h);
		return rc;
	}
	*out = h;
	return PL_OK;
}

void pl_history_close(struct pl_history *h)
{
	if (!h)
		return;
	sqlite3_close(h->db);
	free(h);
}

static char *spec_hash(json_t *summary, json_t *bench, char *out)
{
	json_t *settings = json_object_get(summary, "settings");
	char *s = json_dumps(settings, JSON_COMPACT | JSON_SORT_KEYS);
	uint64_t h = pl_fnv1a(PL_FNV_INIT, json_string_value(json_object_get(bench, "command")));
	h = pl_fnv1a(h * 31 + 1, s ? s : "");
	free(s);
	snprintf(out, 17, "%016llx", (unsigned long long)h);
	return out;
}

int pl_history_record(struct pl_history *h, json_t *summary, const char *commit,
		      const char *tree, struct pl_error *err)
{
	int rc = exec(h, "BEGIN IMMEDIATE", err);
	if (rc != PL_OK)
		return rc;
	sqlite3_stmt *run = NULL, *bench = NULL, *sample = NULL;
	char *fp = json_dumps(json_object_get(summary, "fingerprint"), JSON_COMPACT);
	if (sqlite3_prepare_v2(h->db,
			       "INSERT INTO runs (created, commit_id, tool_version, fingerprint, "
			       "tree) VALUES (?, ?, ?, ?, ?)",
			       -1, &run, NULL) != SQLITE_OK ||
	    sqlite3_prepare_v2(
		h->db,
		"INSERT INTO benchmarks (run_id, name, command, spec_hash, p50, n, cv, batch) "
		"VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
		-1, &bench, NULL) != SQLITE_OK ||
	    sqlite3_prepare_v2(h->db,
			       "INSERT INTO samples (bench_id, idx, wall_s, user_s, sys_s, "
			       "max_rss_bytes, exit_code, counted) VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
			       -1, &sample, NULL) != SQLITE_OK) {
		rc = fail(h, err, "prepare");
		goto out;
	}
	sqlite3_bind_text(run, 1, json_string_value(json_object_get(summary, "created")), -1,
			  SQLITE_TRANSIENT);
	if (commit && *commit)
		sqlite3_bind_text(run, 2, commit, -1, SQLITE_TRANSIENT);
	sqlite3_bind_text(run, 3, PERFLOOP_VERSION, -1, SQLITE_STATIC);
	sqlite3_bind_text(run, 4, fp ? fp : "{}", -1, SQLITE_TRANSIENT);
	if (tree)
		sqlite3_bind_text(run, 5, tree, -1, SQLITE_TRANSIENT);
	if (sqlite3_step(run) != SQLITE_DONE) {
		rc = fail(h, err, "insert run");
		goto out;
	}
	sqlite3_int64 run_id = sqlite3_last_insert_rowid(h->db);
	size_t i;
	json_t *b;
	json_array_foreach(json_object_get(summary, "benchmarks"), i, b)
	{
		json_t *w = json_object_get(json_object_get(b, "stats"), "wall_s");
		char hash[17];
		sqlite3_reset(bench);
		sqlite3_bind_int64(bench, 1, run_id);
		sqlite3_bind_text(bench, 2, json_string_value(json_object_get(b, "name")), -1,
				  SQLITE_TRANSIENT);
		sqlite3_bind_text(bench, 3, json_string_value(json_object_get(b, "command")), -1,
				  SQLITE_TRANSIENT);
		sqlite3_bind_text(bench, 4, spec_hash(summary, b, hash), -1, SQLITE_TRANSIENT);
		if (json_is_object(w)) {
			sqlite3_bind_double(bench, 5, json_number_value(json_object_get(w, "p50")));
			sqlite3_bind_int64(bench, 6, json_integer_value(json_object_get(w, "n")));
			sqlite3_bind_double(bench, 7, json_number_value(json_object_get(w, "cv")));
		} else {
			sqlite3_bind_null(bench, 5);
			sqlite3_bind_int(bench, 6, 0);
			sqlite3_bind_null(bench, 7);
		}
		sqlite3_bind_int64(bench, 8, (sqlite3_int64)pl_summary_batch(b));
		if (sqlite3_step(bench) != SQLITE_DONE) {
			rc = fail(h, err, "insert benchmark");
			goto out;
		}
		sqlite3_int64 bench_id = sqlite3_last_insert_rowid(h->db);
		size_t k;
		json_t *s;
		json_array_foreach(json_object_get(b, "samples"), k, s)
		{
			sqlite3_reset(sample);
			sqlite3_bind_int64(sample, 1, bench_id);
			sqlite3_bind_int64(sample, 2, (sqlite3_int64)k);
			sqlite3_bind_double(sample, 3,
					    json_number_value(json_object_get(s, "wall_s")));
			sqlite3_bind_double(sample, 4,
					    json_number_value(json_object_get(s, "user_s")));
			sqlite3_bind_double(sample, 5,
					    json_number_value(json_object_get(s, "sys_s")));
			sqlite3_bind_int64(sample, 6,
					   json_integer_value(json_object_get(s, "max_rss_bytes")));
			sqlite3_bind_int(sample, 7,
					 (int)json_integer_value(json_object_get(s, "exit_code")));
			sqlite3_bind_int(sample, 8, json_is_true(json_object_get(s, "counted")));
			if (sqlite3_step(sample) != SQLITE_DONE) {
				rc = fail(h, err, "insert sample");
				goto out;
			}
		}
	}
	rc = exec(h, "COMMIT", err);
out:
	if (rc != PL_OK)
		sqlite3_exec(h->db, "ROLLBACK", NULL, NULL, NULL);
	sqlite3_finalize(run);
	sqlite3_finalize(bench);
	sqlite3_finalize(sample);
	free(fp);
	return rc;
}

int pl_history_list(struct pl_history *h, struct pl_strbuf *out, struct pl_error *err)
{
	h->read_err = 0;
	sqlite3_stmt *st;
	if (sqlite3_prepare_v2(
		h->db,
		"SELECT b.name, count(*), max(r.created), "
		"(SELECT p50 FROM benchmarks b2 WHERE b2.name = b.name ORDER BY b2.id DESC LIMIT "
		"1) "
		"FROM benchmarks b JOIN runs r ON r.id = b.run_id GROUP BY b.name ORDER BY b.name",
		-1, &st, NULL) != SQLITE_OK)
		return fail(h, err, "list");
	pl_strbuf_printf(out, "%-40s %5s  %-20s  %s\n", "benchmark", "runs", "last run",
			 "last p50");
	while (row(h, st)) {
		char t[32]; /* bench's unit: "82.6 ms", not 0.0826414 */
		pl_strbuf_printf(out, "%-40s %5d  %-20s  %s\n", sqlite3_column_text(st, 0),
				 sqlite3_column_int(st, 1), sqlite3_column_text(st, 2),
				 pl_fmt_time(t, sizeof t, sqlite3_column_double(st, 3)));
	}
	sqlite3_finalize(st);
	return h->read_err ? read_failed(h, err, "list") : PL_OK;
}

int pl_history_show(struct pl_history *h, const char *name, struct pl_strbuf *out,
		    struct pl_error *err)
{
	h->read_err = 0;
	sqlite3_stmt *st;
	if (sqlite3_prepare_v2(
		h->db,
		"SELECT r.created, coalesce(substr(r.commit_id, 1, 12), '-'), b.p50, b.n, b.cv, "
		"coalesce(r.tree, '?') "
		"FROM benchmarks b JOIN runs r ON r.id = b.run_id WHERE b.name = ? "
		"ORDER BY b.id",
		-1, &st, NULL) != SQLITE_OK)
		return fail(h, err, "show");
	sqlite3_bind_text(st, 1, name, -1, SQLITE_TRANSIENT);
	double v[4096];
	int n = 0;
	pl_strbuf_printf(out, "%-20s  %-12s  %-18s  %12s  %5s  %6s\n", "time", "commit", "tree",
			 "median", "n", "CV");
	while (row(h, st)) {
		double p50 = sqlite3_column_double(st, 2), scale;
		const char *unit;
		pl_time_unit(p50, &scale, &unit);
		if (n < 4096)
			v[n++] = p50;
		pl_strbuf_printf(out, "%-20s  %-12s  %-18s  %9.4g %-2s  %5d  %5.1f%%\n",
				 sqlite3_column_text(st, 0), sqlite3_column_text(st, 1),
				 sqlite3_column_text(st, 5), p50 * scale, unit,
				 sqlite3_column_int(st, 3), sqlite3_column_double(st, 4) * 100);
	}
	sqlite3_finalize(st);
	if (h->read_err)
		return read_failed(h, err, "show");
	if (n == 0)
		return pl_error_set(err, PL_EINPUT, "%s: no benchmark named '%s'", h->path, name);
	/* sparkline of the medians, oldest first */
	static const char *ticks[] = {"▁", "▂", "▃", "▄", "▅", "▆", "▇", "█"};
	double lo = v[0], hi = v[0];
	for (int i = 1; i < n; i++) {
		lo = v[i] < lo ? v[i] : lo;
		hi = v[i] > hi ? v[i] : hi;
	}
	pl_strbuf_printf(out, "\n%s  ", name);
	for (int i = 0; i < n; i++) {
		int t = hi > lo ? (int)((v[i] - lo) / (hi - lo) * 7.0 + 0.5) : 3;
		pl_strbuf_puts(out, ticks[t]);
	}
	char a[32], b[32];
	pl_strbuf_printf(out, "  %s .. %s\n", pl_fmt_time(a, sizeof a, lo), pl_fmt_time(b, sizeof b, hi));
	return PL_OK;
}

/* One recording of a benchmark, as a comparison needs it: its samples'
 * wall and CPU times (user + sys), each the mean of a batch of counted
 * runs as bench compared them (summary.c's batch_means), the timing's CV
 * and the fingerprint's speed probe. */
struct recording {
	double *wall, *cpu;
	size_t n;
	double cv;
	json_t *fingerprint;
};

static void recording_free(struct recording *r)
{
	free(r->wall);
	free(r->cpu);
	json_decref(r->fingerprint);
}

static int load_recording(struct pl_history *h, sqlite3_int64 bench_id, struct recording *r)
{
	memset(r, 0, sizeof(*r));
	sqlite3_stmt *st;
	if (sqlite3_prepare_v2(
		h->db,
		"SELECT b.cv, r.fingerprint, b.batch FROM benchmarks b JOIN runs r ON "
		"r.id = b.run_id WHERE b.id = ?",
		-1, &st, NULL) != SQLITE_OK)
		return -1;
	sqlite3_bind_int64(st, 1, bench_id);
	sqlite3_int64 batch = 1; /* recorded before schema 3: each run a sample */
	if (row(h, st)) {
		r->cv = sqlite3_column_double(st, 0);
		const char *fp = (const char *)sqlite3_column_text(st, 1);
		r->fingerprint = fp ? json_loads(fp, 0, NULL) : NULL;
		batch = sqlite3_column_int64(st, 2);
	}
	sqlite3_finalize(st);
	if (batch < 1 || batch > 1000000)
		batch = 1;
	if (sqlite3_prepare_v2(
		h->db,
		"SELECT wall_s, coalesce(user_s, 0) + coalesce(sys_s, 0) FROM samples "
		"WHERE bench_id = ? AND counted = 1 ORDER BY idx",
		-1, &st, NULL) != SQLITE_OK)
		return -1;
	sqlite3_bind_int64(st, 1, bench_id);
	size_t cap = 0, in = 0;
	double wall = 0, cpu = 0;
	int rc = 0;
	while (rc == 0 && row(h, st)) {
		wall += sqlite3_column_double(st, 0);
		cpu += sqlite3_column_double(st, 1);
		if (++in < (size_t)batch)
			continue;
		if (r->n == cap) {
			cap = cap ? cap * 2 : 64;
			double *w = realloc(r->wall, cap * sizeof(*w));
			if (w)
				r->wall = w;
			double *c = realloc(r->cpu, cap * sizeof(*c));
			if (c)
				r->cpu = c;
			if (!w || !c) {
				rc = -1;
				break;
			}
		}
		r->wall[r->n] = wall / (double)batch;
		r->cpu[r->n++] = cpu / (double)batch;
		in = 0;
		wall = cpu = 0;
	}
	sqlite3_finalize(st);
	return rc;
}

/* The history's threshold: a slowdown's whole interval past +1% (the
 * comparison's own rule), and in doubt the CPU time added past 1%. */
#define PL_HISTORY_THRESHOLD 0.01

enum judgement { NOT_SLOWER, SLOWER, IN_DOUBT };

/* Is recording id (at commit `to`) slower than recording prev (at `from`),
 * 3 runs each at least? The wall times' comparison in *c; as bench
 * --baseline judges, a comparison in doubt (pl_summary_doubt) is SLOWER
 * only on its CPU time (pl_summary_cpu_stands), and a slowdown it does
 * not carry is IN_DOUBT. `why` says why in doubt (or is ""). */
static enum judgement judge(struct pl_history *h, sqlite3_int64 prev, sqlite3_int64 id,
			    const char *from, const char *to, struct pl_comparison *c, char *why,
			    size_t len)
{
	struct recording a = {0}, b = {0}; /* freed whichever loads */
	enum judgement j = NOT_SLOWER;
	why[0] = 0;
	if (load_recording(h, prev, &a) != 0 || load_recording(h, id, &b) != 0 || a.n < 3 ||
	    b.n < 3 || pl_bench_compare(b.wall, b.n, a.wall, a.n, 2000, 1, c) != PL_OK ||
	    !(c->ratio > 1 + PL_HISTORY_THRESHOLD))
		goto out;
	char doubt[600], whynot[300];
	double speed;
	const char *d = pl_summary_doubt(a.cv, b.cv, json_object_get(a.fingerprint, "speed_probe"),
					 json_object_get(b.fingerprint, "speed_probe"), from, to,
					 doubt, sizeof doubt, &speed);
	if (!d) {
		j = c->change == PL_CHANGE_SLOWER ? SLOWER : NOT_SLOWER;
		goto out;
	}
	struct pl_comparison cc;
	double fast = a.wall[0];
	for (size_t i = 1; i < a.n; i++)
		fast = fmin(fast, a.wall[i]);
	int have = pl_bench_compare(b.cpu, b.n, a.cpu, a.n, 2000, 1, &cc) == PL_OK &&
		   isfinite(cc.ratio) && isfinite(cc.ci_lo) && isfinite(cc.ci_hi) && fast > 0;
	double added =
	    have
		? (pl_stats_median_inplace(b.cpu, b.n) - pl_stats_median_inplace(a.cpu, a.n)) / fast
		: 0;
	if (pl_summary_cpu_stands(have ? &cc : NULL, added, speed, PL_HISTORY_THRESHOLD, from,
				  whynot, sizeof whynot)) {
		j = SLOWER;
		snprintf(why, len, "%s, but its CPU time grew %.1fx (95%% CI %.2fx-%.2fx)", d,
			 cc.ratio, cc.ci_lo, cc.ci_hi);
	} else if (c->change == PL_CHANGE_SLOWER) {
		j = IN_DOUBT;
		snprintf(why, len, "%s, and %s", d, whynot);
	}
out:
	recording_free(&a);
	recording_free(&b);
	return j;
}

int pl_history_regressions(struct pl_history *h, struct pl_strbuf *out, struct pl_error *err)
{
	h->read_err = 0;
	/* consecutive recordings of the same benchmark spec */
	sqlite3_stmt *st;
	if (sqlite3_prepare_v2(
		h->db,
		"SELECT b.id, b.name, b.spec_hash, coalesce(substr(r.commit_id, 1, 12), '-') "
		"FROM benchmarks b JOIN runs r ON r.id = b.run_id "
		/* a commit's own state only: not uncommitted edits, not a turn the
		 * loop rejected or has not judged (those are not what HEAD is) */
		"WHERE r.tree IS NULL OR r.tree = 'clean' OR r.tree LIKE 'turn:%:accept' "
		"ORDER BY b.name, b.spec_hash, b.id",
		-1, &st, NULL) != SQLITE_OK)
		return fail(h, err, "regressions");
	int found = 0, doubtful = 0;
	struct pl_strbuf held = {0}; /* the slowdowns in doubt, listed after */
	sqlite3_int64 prev_id = -1;
	char prev_name[512] = "", prev_hash[32] = "", prev_commit[16] = "";
	while (row(h, st)) {
		sqlite3_int64 id = sqlite3_column_int64(st, 0);
		const char *name = (const char *)sqlite3_column_text(st, 1);
		const char *hash = (const char *)sqlite3_column_text(st, 2);
		const char *commit = (const char *)sqlite3_column_text(st, 3);
		if (prev_id >= 0 && strcmp(name, prev_name) == 0 && strcmp(hash, prev_hash) == 0) {
			struct pl_comparison c;
			char why[1000];
			enum judgement j =
			    judge(h, prev_id, id, prev_commit, commit, &c, why, sizeof why);
			if (j == SLOWER && !found++)
				pl_strbuf_printf(out, "%-30s  %-12s  %-12s  %s\n", "benchmark",
						 "from", "to", "ratio [95% CI], p");
			if (j != NOT_SLOWER) {
				doubtful += j == IN_DOUBT;
				pl_strbuf_printf(
				    j == SLOWER ? out : &held,
				    "%-30s  %-12s  %-12s  %.3f [%.3f, %.3f], p=%.2g%s%s\n", name,
				    prev_commit, commit, c.ratio, c.ci_lo, c.ci_hi, c.p,
				    *why ? "; " : "", why);
			}
		}
		prev_id = id;
		snprintf(prev_name, sizeof(prev_name), "%s", name);
		snprintf(prev_hash, sizeof(prev_hash), "%s", hash);
		snprintf(prev_commit, sizeof(prev_commit), "%s", commit);
	}
	sqlite3_finalize(st);
	if (h->read_err) {
		free(pl_strbuf_take(&held));
		return read_failed(h, err, "regressions");
	}
	if (!found)
		pl_strbuf_puts(out, "no regressions between consecutive recordings\n");
	char *list = pl_strbuf_take(&held);
	if (doubtful)
		pl_strbuf_printf(out,
				 "\nslower but in doubt, not called regressions (measure both "
				 "commits again on a quieter machine):\n%s",
				 list ? list : "(out of memory)\n");
	free(list);
	return found;
}

json_t *pl_history_series(struct pl_history *h, struct pl_error *err)
{
	h->read_err = 0;
	sqlite3_stmt *st;
	if (sqlite3_prepare_v2(
		h->db,
		"SELECT b.id, b.name, b.spec_hash, coalesce(substr(r.commit_id, 1, 12), '-'), "
		"r.created, b.p50, b.n, b.cv "
		"FROM benchmarks b JOIN runs r ON r.id = b.run_id "
		"WHERE r.tree IS NULL OR r.tree = 'clean' OR r.tree LIKE 'turn:%:accept' "
		"ORDER BY b.name, b.id",
		-1, &st, NULL) != SQLITE_OK) {
		fail(h, err, "series");
		return NULL;
	}
	json_t *out = json_array(), *cur = NULL;
	sqlite3_int64 prev_id = -1;
	char prev_hash[32] = "", prev_commit[16] = "";
	while (row(h, st)) {
		sqlite3_int64 id = sqlite3_column_int64(st, 0);
		const char *name = (const char *)sqlite3_column_text(st, 1);
		const char *hash = (const char *)sqlite3_column_text(st, 2);
		if (!cur || strcmp(name, json_string_value(json_object_get(cur, "name")))) {
			cur = json_pack("{s:s, s:[]}", "name", name, "points");
			json_array_append_new(out, cur);
			prev_id = -1;
		}
		json_t *pt = json_pack("{s:s, s:s, s:f, s:i, s:f, s:b}", "commit",
				       (const char *)sqlite3_column_text(st, 3), "created",
				       (const char *)sqlite3_column_text(st, 4), "p50",
				       sqlite3_column_double(st, 5), "n", sqlite3_column_int(st, 6), "cv",
				       sqlite3_column_double(st, 7), "regression", 0);
		/* slower than the previous recording of the same spec */
		if (prev_id >= 0 && strcmp(hash, prev_hash) == 0) {
			struct pl_comparison c;
			char why[1000];
			enum judgement j =
			    judge(h, prev_id, id, prev_commit,
				  (const char *)sqlite3_column_text(st, 3), &c, why, sizeof why);
			if (j == SLOWER)
				json_object_set_new(pt, "regression", json_true());
			if (j != NOT_SLOWER)
				json_object_set_new(pt, "ratio", json_real(c.ratio));
			if (*why)
				json_object_set_new(pt, "doubt", json_string(why));
		}
		json_array_append_new(json_object_get(cur, "points"), pt);
		prev_id = id;
		snprintf(prev_hash, sizeof prev_hash, "%s", hash);
		snprintf(prev_commit, sizeof prev_commit, "%s",
			 (const char *)sqlite3_column_text(st, 3));
	}
	sqlite3_finalize(st);
	if (h->read_err) {
		json_decref(out);
		read_failed(h, err, "series");
		return NULL;
	}
	return out;
}

int pl_history_export_csv(struct pl_history *h, struct pl_strbuf *out, struct pl_error *err)
{
	h->read_err = 0;
	sqlite3_stmt *st;
	if (sqlite3_prepare_v2(
		h->db,
		"SELECT r.created, coalesce(r.commit_id, ''), b.name, b.spec_hash, s.idx, "
		"s.wall_s, s.user_s, s.sys_s, s.max_rss_bytes, s.exit_code, s.counted "
		"FROM samples s JOIN benchmarks b ON b.id = s.bench_id JOIN runs r ON r.id = "
		"b.run_id "
		"ORDER BY b.id, s.idx",
		-1, &st, NULL) != SQLITE_OK)
		return fail(h, err, "export");
	pl_strbuf_puts(out, "created,commit,benchmark,spec_hash,sample,wall_s,user_s,sys_s,"
			    "max_rss_bytes,exit_code,counted\n");
	while (row(h, st)) {
		const char *name = (const char *)sqlite3_column_text(st, 2);
		pl_strbuf_printf(out, "%s,%s,\"", sqlite3_column_text(st, 0),
				 sqlite3_column_text(st, 1));
		for (const char *p = name; *p; p++)
			pl_strbuf_puts(out, *p == '"' ? "\"\"" : (char[]){*p, 0});
		pl_strbuf_printf(out, "\",%s,%d,%.9g,%.9g,%.9g,%lld,%d,%d\n",
				 sqlite3_column_text(st, 3), sqlite3_column_int(st, 4),
				 sqlite3_column_double(st, 5), sqlite3_column_double(st, 6),
				 sqlite3_column_double(st, 7),
				 (long long)sqlite3_column_int64(st, 8), sqlite3_column_int(st, 9),
				 sqlite3_column_int(st, 10));
	}
	sqlite3_finalize(st);
	return h->read_err ? read_failed(h, err, "export") : PL_OK;
}

/* "clean", or "dirty:" and a digest of the uncommitted changes (tracked
 * files' diff against HEAD and the untracked files' names): runs of the
 * same edits share it. NULL when git cannot say. */
static char *tree_state(const char *top)
{
	char *diff = NULL, *untracked = NULL;
	size_t dl = 0, ul = 0;
	char *a[] = {"git", "-C", (char *)top, "diff", "HEAD", "--binary", NULL};
	char *b[] = {"git",	"-C",	   (char *)top, "ls-files", "--others",
		     "--exclude-standard", "-z", NULL};
	if (pl_spawn_output(a, 0, &diff, &dl) != 0 || pl_spawn_output(b, 0, &untracked, &ul) != 0) {
		free(diff);
		free(untracked);
		return NULL;
	}
	char *out = malloc(32);
	if (out && dl == 0 && ul == 0)
		snprintf(out, 32, "clean");
	else if (out) {
		uint64_t h = PL_FNV_INIT;
		for (size_t i = 0; i < dl; i++)
			h = (h ^ (unsigned char)diff[i]) * 0x100000001b3ULL;
		for (size_t i = 0; i < ul; i++)
			h = (h ^ (unsigned char)untracked[i]) * 0x100000001b3ULL;
		snprintf(out, 32, "dirty:%012llx", (unsigned long long)(h & 0xffffffffffffULL));
	}
	free(diff);
	free(untracked);
	return out;
}

static int open_here(const char *dir, struct pl_git *g, struct pl_history **h,
		     struct pl_error *err)
{
	*h = NULL;
	g->index[0] = '\0';
	if (pl_git_toplevel(dir, g->top, sizeof(g->top)) != 0)
		return PL_OK;
	char pdir[4300], db[4400];
	int rc = pl_perfloop_dir(g, pdir, sizeof(pdir), err);
	if (rc != PL_OK)
		return rc;
	snprintf(db, sizeof(db), "%s/history.db", pdir);
	return pl_history_open(db, h, err);
}

int pl_history_record_here(const char *dir, json_t *summary, const char *tree,
			   struct pl_error *err)
{
	struct pl_git g;
	struct pl_history *h;
	int rc = open_here(dir, &g, &h, err);
	if (rc != PL_OK || !h)
		return rc;
	char commit[64];
	pl_git_head_of(g.top, commit, sizeof(commit));
	char *state = tree ? NULL : tree_state(g.top);
	rc = pl_history_record(h, summary, commit, tree ? tree : state, err);
	free(state);
	pl_history_close(h);
	return rc;
}

int pl_history_retag_here(const char *dir, const char *from, const char *to,
			  struct pl_error *err)
{
	struct pl_git g;
	struct pl_history *h;
	int rc = open_here(dir, &g, &h, err);
	if (rc != PL_OK || !h)
		return rc;
	sqlite3_stmt *st;
	if (sqlite3_prepare_v2(h->db,
			       "UPDATE runs SET tree = ? WHERE id = "
			       "(SELECT max(id) FROM runs WHERE tree = ?)",
			       -1, &st, NULL) != SQLITE_OK) {
		rc = fail(h, err, "retag");
	} else {
		sqlite3_bind_text(st, 1, to, -1, SQLITE_TRANSIENT);
		sqlite3_bind_text(st, 2, from, -1, SQLITE_TRANSIENT);
		if (sqlite3_step(st) != SQLITE_DONE)
			rc = fail(h, err, "retag");
		sqlite3_finalize(st);
	}
	pl_history_close(h);
	return rc;
}
