/*
 * perfloop bench: option parsing, parameter expansion, progress, output.
 * Measuring lives in measure/benchrun.c, the document in measure/summary.c, the
 * table and exports in measure/benchview.c.
 */
#include <ctype.h>
#include <errno.h>
#include <getopt.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "benchrun.h"
#include "benchview.h"
#include "cmd.h"
#include "allocprof.h"
#include "ranks.h"
#include "fsio.h"
#include "gpu.h"
#include "gitops.h"
#include "history.h"
#include "ledger.h"
#include "monotime.h"
#include "params.h"
#include "render.h"
#include "complexity.h"
#include "spec.h"
#include "sweep.h"
#include "metric.h"
#include "simcount.h"
#include "summary.h"

const char cmd_bench_usage[] =
    "usage: perfloop bench [OPTIONS] -- CMD [ARG...]\n"
    "   or: perfloop bench [OPTIONS] 'CMD A' 'CMD B' ...\n"
    "   or: perfloop bench [OPTIONS] NAME | --all\n"
    "\n"
    "Time commands with real statistics, OS and hardware counters, a noise gate\n"
    "and an environment fingerprint. Command strings are split into words as a\n"
    "shell would, but no shell runs unless --shell is given. NAME, one word that\n"
    "names a benchmark of perfloop.yaml (here or at the git root), runs it with\n"
    "the command, parameters, environment, warm-up and runs the file gives it\n"
    "(options given here win); --all runs each in turn (docs/perfloop-yaml.md).\n"
    "\n"
    "Runs:\n"
    "  -w, --warmup N          warm-up runs per command, not measured (default 1)\n"
    "  -r, --runs N            exactly N measured runs per command (executions,\n"
    "                          as in hyperfine: no batches unless --batch K)\n"
    "      --min-runs N        at least N runs (default 10)\n"
    "      --max-runs N        at most N runs\n"
    "      --time-budget S     aim for S seconds per command: runs =\n"
    "                          max(min-runs, S / first run) (default 3)\n"
    "      --precision PCT     run until the 95% CI of the median is within\n"
    "                          +-PCT% of it (bounded by min/max runs; max 1000)\n"
    "      --order ORDER       interleaved (default with several commands: one\n"
    "                          run of each in turn, rotated each round) or\n"
    "                          sequential\n"
    "      --batch K|auto      a sample is the mean of K runs in a row; auto (the\n"
    "                          default): K calibrated so that a sample's CV is\n"
    "                          about 2.5%; 1: every run is a sample. Run counts\n"
    "                          count samples (--runs N alone: --batch 1)\n"
    "      --max-time S        at most S seconds per command for a calibrated\n"
    "                          batch (default 60, or --time-budget when given)\n"
    "      --timeout S         kill a run's process group after S seconds (exit 3)\n"
    "      --pin CPU|auto|none run the commands on one CPU: auto (the default\n"
    "                          where several are allowed) picks the highest-numbered\n"
    "                          allowed CPU, the same one every time\n"
    "      --wait-quiet S      first wait up to S seconds for that CPU to be idle\n"
    "                          (default 5, or 1 where simulated counts can\n"
    "                          decide: --sim; 0: do not wait)\n"
    "      --gpu               sample the GPUs (NVML, loaded at run time) while the\n"
    "                          commands run: utilization, memory, SM clock, power\n"
    "      --gpu-hz HZ         GPU readings per second (default 10)\n"
    "      --contention leave-out|keep\n"
    "                          runs measured while the host slowed the CPU (a\n"
    "                          speed probe around each run says): left out and\n"
    "                          measured again (default), or counted\n"
    "  -i, --ignore-failure    keep measuring commands that exit non-zero or crash\n"
    "\n"
    "Commands and hooks:\n"
    "      --shell             run each command through 'sh -c'\n"
    "  -P, --param NAME=VALUES substitute {NAME}; VALUES is V1,V2,... or\n"
    "                          LO..HI[:STEP] or LO..HI*FACTOR; several -P give\n"
    "                          every combination. One numeric -P is a size sweep:\n"
    "                          how the cost grows is fitted (O(1) .. O(n^3) and\n"
    "                          the exponent) and shown\n"
    "      --expect CLASS      the class a sweep should show (1, log n, n,\n"
    "                          n log n, n^2, n^3): an exponent above it by more\n"
    "                          than 0.5 is a high finding (without it: >= 1.8)\n"
    "      --findings FILE     write the sweep's findings (perfloop.findings/1)\n"
    "                          for select\n"
    "      --all               run every benchmark of perfloop.yaml in turn\n"
    "      --plot FILE.svg     draw the sweep: wall time against the size on\n"
    "                          log-log axes, the medians and the fitted class\n"
    "  -n, --name NAME         name of the next command (once per command)\n"
    "      --setup CMD         run once before each command's runs\n"
    "      --prepare CMD       run before each run\n"
    "      --conclude CMD      run after each run\n"
    "      --cleanup CMD       run once after each command's runs\n"
    "      --input FILE        feed FILE on standard input (default /dev/null)\n"
    "      --output WHERE      null (default), inherit, or a FILE for the\n"
    "                          commands' stdout and stderr\n"
    "\n"
    "Measurement and comparison:\n"
    "      --counters LIST     auto (default), none, or a comma-separated list of\n"
    "                          task-clock, page-faults, context-switches,\n"
    "                          cpu-migrations, instructions, cycles, branches,\n"
    "                          branch-misses, cache-references, cache-misses,\n"
    "                          L1-dcache-loads, L1-dcache-load-misses, syscalls\n"
    "      --memory            minor and major page faults per run (getrusage)\n"
    "                          shown and scored as dimensions beside peak RSS\n"
    "      --alloc             bytes and calls allocated per run (malloc & co.,\n"
    "                          counted by a preloaded library), scored too\n"
    "      --syscalls          system calls per run (a tracepoint counted in the\n"
    "                          kernel: root or perf_event_paranoid <= -1), scored\n"
    "      --sim MODE          the deterministic measure: count each command's\n"
    "                          instructions under Valgrind (cachegrind, children\n"
    "                          followed, ASLR off, PYTHONHASHSEED=0):\n"
    "                          auto (default: where the wall time's CV is over\n"
    "                          5%, and then decides the comparisons), off,\n"
    "                          instructions (always), cycles (always, with the\n"
    "                          cache simulated: estimated cycles decide)\n"
    "      --sim-runs N        simulated runs per command (default 3, 3 to 20)\n"
    "      --metric REGEX|json:PATH\n"
    "                          the number the program reports decides, not its\n"
    "                          whole-process time: each run's output is read for\n"
    "                          REGEX's first group (the median of every match,\n"
    "                          e.g. 'step_time_ms=([0-9.]+)'), or the number at\n"
    "                          PATH of its JSON output (json:benchmarks.0.real_time)\n"
    "      --metric-name NAME  the number's dimension (default metric)\n"
    "      --higher-is-better  a larger number is better (samples/s)\n"
    "      --reference NAME    compare the others with this command (default: the\n"
    "                          first)\n"
    "      --baseline FILE     also compare with a saved summary, by name\n"
    "      --fail-on-regression\n"
    "                          exit 1 when a command is slower than in --baseline\n"
    "                          (or than the reference): a \"slower\" verdict, one\n"
    "                          line each; for CI\n"
    "      --regression-threshold PCT\n"
    "                          ... and only when slower by more than PCT%\n"
    "\n"
    "Output:\n"
    "  -o, --out FILE          write the summary (perfloop.bench/1 JSON)\n"
    "      --json              print the summary on stdout (the table goes to\n"
    "                          stderr)\n"
    "      --export-markdown FILE\n"
    "      --export-csv FILE\n"
    "      --export-hyperfine FILE  hyperfine's JSON layout\n"
    "      --sort ORDER        the table's and the Markdown/CSV exports' order:\n"
    "                          command (default; auto: the same), median-time or\n"
    "                          mean-time (fastest first; hyperfine's --sort)\n"
    "      --quiet             no progress and no table\n"
    "      --no-history        do not record the run in .perfloop/history.db (by\n"
    "                          default, runs inside a git repository are recorded)\n"
    "  -h, --help              this text\n"
    "\n"
    "hyperfine's spellings work too: -m/-M (--min-runs/--max-runs), -s/-p/-c\n"
    "(--setup/--prepare/--cleanup), -N (no shell: the default), --command-name,\n"
    "--show-output (--output inherit), --export-json (--export-hyperfine),\n"
    "--style none|basic|nocolor|color|full, -P NAME LO HI and -L NAME V1,V2\n"
    "(--parameter-scan, --parameter-list).\n"
    "\n"
    "Exit status: 0 ok, 2 bad usage or a command that cannot start, 3 a command\n"
    "failed, crashed or timed out, 130 interrupted (the summary of finished runs\n"
    "is still written, marked \"interrupted\").\n"
    "\n"
    "Examples:\n"
    "  perfloop bench -- ./sort input.txt\n"
    "  perfloop bench -n old -n new './old 20000' './new 20000'\n"
    "  perfloop bench -P n=1000..100000*10 './sort {n}' --export-csv sweep.csv\n"
    "  perfloop bench --precision 1 --counters task-clock,page-faults -- python3 x.py\n"
    "  perfloop bench --baseline before.json -o after.json -- ./app\n";

enum {
	OPT_MIN_RUNS = 256,
	OPT_MAX_RUNS,
	OPT_TIME_BUDGET,
	OPT_PRECISION,
	OPT_SETUP,
	OPT_PREPARE,
	OPT_CONCLUDE,
	OPT_CLEANUP,
	OPT_ORDER,
	OPT_TIMEOUT,
	OPT_BATCH,
	OPT_MAX_TIME,
	OPT_INPUT,
	OPT_OUTPUT,
	OPT_REFERENCE,
	OPT_COUNTERS,
	OPT_BASELINE,
	OPT_MD,
	OPT_CSV,
	OPT_HYPERFINE,
	OPT_QUIET,
	OPT_JSON,
	OPT_SHELL,
	OPT_NO_HISTORY,
	OPT_PIN,
	OPT_WAIT_QUIET,
	OPT_CONTENTION,
	OPT_MEMORY,
	OPT_ALLOC,
	OPT_SYSCALLS,
	OPT_GPU,
	OPT_GPU_HZ,
	OPT_FAIL_REGRESSION,
	OPT_REGRESSION_THRESHOLD,
	OPT_SHOW_OUTPUT,
	OPT_STYLE,
	OPT_SORT,
	OPT_EXPECT,
	OPT_FINDINGS,
	OPT_PLOT,
	OPT_ALL,
	OPT_NO_SHELL,
	OPT_SIM,
	OPT_SIM_RUNS,
	OPT_METRIC,
	OPT_METRIC_NAME,
	OPT_HIGHER,
};

static const struct option longopts[] = {
    {"warmup", required_argument, NULL, 'w'},
    {"runs", required_argument, NULL, 'r'},
    {"min-runs", required_argument, NULL, OPT_MIN_RUNS},
    {"max-runs", required_argument, NULL, OPT_MAX_RUNS},
    {"time-budget", required_argument, NULL, OPT_TIME_BUDGET},
    {"precision", required_argument, NULL, OPT_PRECISION},
    {"setup", required_argument, NULL, OPT_SETUP},
    {"prepare", required_argument, NULL, OPT_PREPARE},
    {"conclude", required_argument, NULL, OPT_CONCLUDE},
    {"cleanup", required_argument, NULL, OPT_CLEANUP},
    {"param", required_argument, NULL, 'P'},
    {"order", required_argument, NULL, OPT_ORDER},
    {"timeout", required_argument, NULL, OPT_TIMEOUT},
    {"batch", required_argument, NULL, OPT_BATCH},
    {"max-time", required_argument, NULL, OPT_MAX_TIME},
    {"pin", required_argument, NULL, OPT_PIN},
    {"wait-quiet", required_argument, NULL, OPT_WAIT_QUIET},
    {"contention", required_argument, NULL, OPT_CONTENTION},
    {"memory", no_argument, NULL, OPT_MEMORY},
    {"alloc", no_argument, NULL, OPT_ALLOC},
    {"syscalls", no_argument, NULL, OPT_SYSCALLS},
    {"sim", required_argument, NULL, OPT_SIM},
    {"sim-runs", required_argument, NULL, OPT_SIM_RUNS},
    {"metric", required_argument, NULL, OPT_METRIC},
    {"metric-name", required_argument, NULL, OPT_METRIC_NAME},
    {"higher-is-better", no_argument, NULL, OPT_HIGHER},
    {"gpu", no_argument, NULL, OPT_GPU},
    {"gpu-hz", required_argument, NULL, OPT_GPU_HZ},
    {"input", required_argument, NULL, OPT_INPUT},
    {"output", required_argument, NULL, OPT_OUTPUT},
    {"name", required_argument, NULL, 'n'},
    {"reference", required_argument, NULL, OPT_REFERENCE},
    {"ignore-failure", no_argument, NULL, 'i'},
    {"counters", required_argument, NULL, OPT_COUNTERS},
    {"baseline", required_argument, NULL, OPT_BASELINE},
    {"out", required_argument, NULL, 'o'},
    {"export-markdown", required_argument, NULL, OPT_MD},
    {"export-csv", required_argument, NULL, OPT_CSV},
    {"export-hyperfine", required_argument, NULL, OPT_HYPERFINE},
    {"quiet", no_argument, NULL, OPT_QUIET},
    {"json", no_argument, NULL, OPT_JSON},
    {"shell", no_argument, NULL, OPT_SHELL},
    {"no-history", no_argument, NULL, OPT_NO_HISTORY},
    {"fail-on-regression", no_argument, NULL, OPT_FAIL_REGRESSION},
    {"regression-threshold", required_argument, NULL, OPT_REGRESSION_THRESHOLD},
    /* hyperfine's spellings, for its users' fingers and scripts */
    {"export-json", required_argument, NULL, OPT_HYPERFINE},
    {"command-name", required_argument, NULL, 'n'},
    {"show-output", no_argument, NULL, OPT_SHOW_OUTPUT},
    {"style", required_argument, NULL, OPT_STYLE},
    {"sort", required_argument, NULL, OPT_SORT},
    {"expect", required_argument, NULL, OPT_EXPECT},
    {"findings", required_argument, NULL, OPT_FINDINGS},
    {"plot", required_argument, NULL, OPT_PLOT},
    {"all", no_argument, NULL, OPT_ALL},
    {"parameter-list", required_argument, NULL, 'L'},
    {"parameter-scan", required_argument, NULL, 'P'},
    {"help", no_argument, NULL, 'h'},
    {NULL, 0, NULL, 0},
};

static int is_int(const char *s)
{
	char *end;
	errno = 0;
	(void)strtol(s, &end, 10);
	return *s && !*end && !errno;
}

static int parse_int(const char *opt, const char *arg, long min, int *out)
{
	char *end;
	errno = 0;
	long v = strtol(arg, &end, 10);
	if (errno || *end || end == arg || v < min || v > 100000000) {
		pl_die(PL_EXIT_USAGE, "option '%s': expected an integer >= %ld, got '%s'", opt, min,
		       arg);
		return -1;
	}
	*out = (int)v;
	return 0;
}

static int parse_pos(const char *opt, const char *arg, double *out)
{
	char *end;
	errno = 0;
	double v = strtod(arg, &end);
	if (errno || *end || end == arg || !isfinite(v) || v <= 0) {
		pl_die(PL_EXIT_USAGE, "option '%s': expected a number > 0, got '%s'", opt, arg);
		return -1;
	}
	*out = v;
	return 0;
}

/* Quote an argv word so that pl_words_split gives it back unchanged. */
static void append_quoted(char **s, size_t *len, const char *w)
{
	int plain = *w != '\0';
	for (const char *p = w; *p; p++)
		if (!(isalnum((unsigned char)*p) || strchr("_-./=:,+@%{}", *p)))
			plain = 0;
	size_t need = *len + strlen(w) * 4 + 4;
	*s = realloc(*s, need);
	char *o = *s + *len;
	if (*len)
		*o++ = ' ';
	if (plain) {
		o = stpcpy(o, w);
	} else {
		*o++ = '\'';
		for (const char *p = w; *p; p++) {
			if (*p == '\'')
				o = stpcpy(o, "'\\''");
			else
				*o++ = *p;
		}
		*o++ = '\'';
		*o = '\0';
	}
	*len = (size_t)(o - *s);
}

/* Progress on stderr: one line per command (up to PROGRESS_LINES; beyond
 * that only the running one), redrawn in place, at most every 50 ms. */
#define PROGRESS_LINES 12

struct progress_state {
	struct pl_style st;
	const struct pl_bench_run *run;
	double last_draw;
	size_t drawn; /* lines on screen */
};

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

static void on_progress(void *arg, const struct pl_bench *b, size_t index,
			enum pl_progress_event ev)
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

static void progress_clear(struct progress_state *ps)
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
static int counters_said(const struct pl_counter_set *cs)
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
static int check_writable(const char *opt, const char *path)
{
	struct pl_error err = {{0}};
	if (!path || pl_fsio_check_writable(path, &err) == PL_OK)
		return 0;
	pl_die(PL_EXIT_USAGE, "option '%s': %s", opt, err.msg);
	return -1;
}

static int write_text(const char *path, char *text, struct pl_error *err)
{
	if (!text)
		return PL_ENOMEM;
	int rc = pl_fsio_write_atomic(path, text, strlen(text), err);
	free(text);
	return rc;
}

/* Inside a git repository, every run goes into .perfloop/history.db. A
 * history that cannot be written costs a warning, never the benchmark. */
static void record_history(json_t *doc)
{
	struct pl_error err;
	if (pl_history_record_here(".", doc, NULL, &err) != PL_OK)
		fprintf(stderr, "perfloop: warning: history not recorded: %s\n", err.msg);
}

/* Why a comparison with a saved baseline may be in doubt
 * (pl_summary_doubt), with this run's timing and speed probe. */
static const char *baseline_doubt(const struct pl_bench_run *run, const struct pl_bench *b,
				  json_t *base, json_t *bb, const char *file, char *buf, size_t len,
				  double *speed)
{
	double bcv = json_number_value(
	    json_object_get(json_object_get(json_object_get(bb, "dimensions"), "timing"), "cv"));
	json_t *now = run->probe_fast.lat_s > 0
			  ? json_pack("{s:f, s:f}", "chain_fast_s", run->probe_fast.lat_s,
				      "ports_fast_s", run->probe_fast.thr_s)
			  : NULL;
	const char *why = pl_summary_doubt(
	    bcv, b->wall.d.cv, json_object_get(json_object_get(base, "fingerprint"), "speed_probe"),
	    now, file, "this run", buf, len, speed);
	json_decref(now);
	return why;
}

/* The CPU time (user + sys) of b's samples against the baseline's, by the
 * same comparison as the wall time's: {ratio, ci95, added}, added being
 * the CPU time gained (medians) as a share of the baseline's fastest run,
 * which contention stretched least. JSON null where either side lacks it. */
static json_t *compare_cpu(const struct pl_bench_run *run, const struct pl_bench *b, json_t *base,
			   json_t *bb)
{
	double fast = json_number_value(
	    json_object_get(json_object_get(json_object_get(bb, "stats"), "wall_s"), "min"));
	double *ref = NULL, *cand = malloc((b->n + 1) * sizeof(*cand));
	size_t nr = 0, nc = cand ? pl_bench_values(b, -4, b->batch, cand) : 0;
	struct pl_comparison c;
	json_t *out = NULL;
	if (cand && fast > 0 && pl_summary_cpu_samples(base, b->name, &ref, &nr) == PL_OK &&
	    nr > 0 && nc > 0 &&
	    pl_bench_compare(cand, nc, ref, nr, run->cfg.resamples, run->cfg.seed, &c) == PL_OK) {
		double mb = pl_stats_median_inplace(ref, nr),
		       ma = pl_stats_median_inplace(cand, nc);
		if (mb > 0 && isfinite(c.ratio) && isfinite(c.ci_lo) && isfinite(c.ci_hi))
			out = json_pack("{s:f, s:[f,f], s:f}", "ratio", c.ratio, "ci95", c.ci_lo,
					c.ci_hi, "added", (ma - mb) / fast);
	}
	free(cand);
	free(ref);
	return out ? out : json_null();
}

/* b's simulated counts against the baseline's same-named benchmark's, on
 * the estimated cycles where both simulated the cache, else on the
 * instructions. PL_EINPUT where the baseline has none. */
static int compare_sim(const struct pl_bench *b, json_t *base, struct pl_comparison *c,
		       const char **dim)
{
	double *ref = NULL;
	size_t nr = 0;
	/* the same program on both sides, past its wrappers (os/execchain.h) */
	json_t *bj = pl_summary_bench(base, b->name, NULL);
	const char *as = json_string_value(
	    json_object_get(json_object_get(bj, "sim"), "simulated_as"));
	if ((as == NULL) != (b->sim_as[0] == '\0') || (as && strcmp(as, b->sim_as)))
		return PL_EINPUT;
	const char *d = b->sim_cache ? "sim_cycles" : "sim_instructions";
	if (pl_summary_sim_samples(base, b->name, d, &ref, &nr) != PL_OK) {
		d = "sim_instructions";
		if (pl_summary_sim_samples(base, b->name, d, &ref, &nr) != PL_OK)
			return PL_EINPUT;
	}
	struct pl_comparison s = *c;
	pl_sim_compare(!strcmp(d, "sim_cycles") ? b->sim_cyc : b->sim_ir, b->sim_n, ref, nr, &s);
	free(ref);
	if (!isfinite(s.ratio) || !isfinite(s.ci_lo) || !isfinite(s.ci_hi))
		return PL_EINPUT;
	*c = s;
	*dim = d;
	return PL_OK;
}

/* Compare each benchmark with the same-named one in a saved summary: the
 * wall time's verdict, why it may be in doubt (above), and how the CPU time
 * changed (contention stretches a run's wall time much more than the CPU
 * time it uses, so a doubtful slowdown can stand on it: see regressions()). */
/* With --metric, b's number against the baseline's (each run's value, in
 * its direction; in doubt where either side's is over the noise gate). */
static json_t *compare_metric(const struct pl_bench_run *run, const struct pl_bench *b,
			      json_t *base, const char *file)
{
	const struct pl_metric *m = run->cfg.metric;
	double *ref = NULL, *cand = malloc((b->n + 1) * sizeof(*cand));
	size_t nr = 0, nc = cand ? pl_bench_values(b, -10, 1, cand) : 0;
	struct pl_comparison c;
	json_t *out = NULL;
	if (cand && nc && pl_summary_metric_samples(base, b->name, &ref, &nr) == PL_OK &&
	    pl_bench_compare(cand, nc, ref, nr, run->cfg.resamples, run->cfg.seed, &c) == PL_OK &&
	    isfinite(c.ratio) && isfinite(c.ci_lo) && isfinite(c.ci_hi)) {
		if (m->higher && c.change != PL_CHANGE_NONE)
			c.change = c.change == PL_CHANGE_FASTER ? PL_CHANGE_SLOWER : PL_CHANGE_FASTER;
		struct pl_describe d;
		char doubt[300] = "";
		double bcv = pl_stats_describe(ref, nr, &d) == PL_OK ? d.cv : 0;
		if (bcv > PL_NOISE_CV_MAX || b->reported.d.cv > PL_NOISE_CV_MAX)
			snprintf(doubt, sizeof doubt,
				 "%s's %s varies by %.1f%% (CV), this run's by %.1f%%, over the %.0f%% "
				 "gate",
				 file, m->name, bcv * 100, b->reported.d.cv * 100,
				 PL_NOISE_CV_MAX * 100);
		out = json_pack("{s:s, s:s, s:f, s:[f,f], s:o, s:s, s:o, s:n, s:n}", "name", b->name,
				"dimension", m->name, "ratio", c.ratio, "ci95", c.ci_lo, c.ci_hi,
				"p_value", isfinite(c.p) ? json_real(c.p) : json_null(), "verdict",
				pl_change_name(c.change), "doubt",
				doubt[0] ? json_string(doubt) : json_null(), "cpu", "speed_change");
	}
	free(cand);
	free(ref);
	return out;
}

static json_t *compare_baseline(const struct pl_bench_run *run, json_t *base, const char *file)
{
	json_t *cmps = json_array();
	for (size_t i = 0; i < run->nbench; i++) {
		const struct pl_bench *b = &run->bench[i];
		if (run->cfg.metric) {
			json_t *mc = compare_metric(run, b, base, file);
			if (mc)
				json_array_append_new(cmps, mc);
			continue;
		}
		json_t *bb = pl_summary_bench(base, b->name, NULL);
		double *ref = NULL;
		size_t nr = 0;
		if (!bb || pl_summary_wall_samples(base, b->name, &ref, &nr) != PL_OK || nr == 0 ||
		    !b->wall.present) {
			free(ref);
			continue;
		}
		double *cand = malloc((b->n + 1) * sizeof(*cand));
		size_t nc = cand ? pl_bench_values(b, -1, b->batch, cand) : 0;
		struct pl_comparison c;
		if (cand && pl_bench_compare(cand, nc, ref, nr, run->cfg.resamples, run->cfg.seed,
					     &c) == PL_OK) {
			char why[600];
			double speed;
			const char *doubt =
			    baseline_doubt(run, b, base, bb, file, why, sizeof why, &speed);
			/* where either side's wall time cannot decide and both were
			 * simulated, the simulated counts do, and nothing is in doubt:
			 * a busy machine does not move them */
			const char *dim = "timing";
			if (doubt && b->sim_n && compare_sim(b, base, &c, &dim) == PL_OK)
				doubt = NULL;
			json_array_append_new(
			    cmps,
			    json_pack("{s:s, s:s, s:f, s:[f,f], s:o, s:s, s:s?, s:o, s:o}", "name",
				      b->name, "dimension", dim, "ratio", c.ratio, "ci95", c.ci_lo,
				      c.ci_hi, "p_value", isfinite(c.p) ? json_real(c.p) : json_null(),
				      "verdict", pl_change_name(c.change), "doubt", doubt, "cpu",
				      compare_cpu(run, b, base, bb), "speed_change",
				      speed > 0 ? json_real(speed) : json_null()));
		}
		free(cand);
		free(ref);
	}
	return json_pack("{s:s, s:o}", "file", file, "comparisons", cmps);
}

/* --fail-on-regression: each comparison that says "slower" by more than
 * pct percent (the ratio's median) gets one line; returns how many. With
 * --baseline, against it; otherwise each command against the reference.
 * A baseline comparison in doubt is a regression where, whatever the wall
 * time's verdict, the CPU time's 95% interval lies past PL_DOUBT_CPU_MIN
 * times, scaled by the speed probe's slowdown, and the CPU time added
 * alone is a slowdown past the threshold; else a slowdown gets a warning
 * line and is not counted. */
static int regressions(const struct pl_bench_run *run, json_t *base_cmp, const char *base_path,
		       double pct)
{
	int n = 0;
	double limit = 1 + pct / 100;
	if (base_cmp) {
		size_t i;
		json_t *c;
		json_array_foreach(json_object_get(base_cmp, "comparisons"), i, c)
		{
			const char *name = json_string_value(json_object_get(c, "name"));
			double ratio = json_number_value(json_object_get(c, "ratio"));
			if (run->cfg.metric) {
				/* the program's number: its own direction, and no CPU
				 * time to stand on where it is in doubt */
				double slow = run->cfg.metric->higher && ratio > 0 ? 1 / ratio : ratio;
				const char *dv = json_string_value(json_object_get(c, "doubt"));
				if (strcmp(json_string_value(json_object_get(c, "verdict")), "slower") ||
				    slow <= limit)
					continue;
				if (dv) {
					fprintf(stderr,
						"perfloop: warning: '%s' looks %.1f%% worse than in %s on "
						"%s, but %s: not called a regression\n",
						name, (slow - 1) * 100, base_path, run->cfg.metric->name,
						dv);
					continue;
				}
				fprintf(stderr,
					"perfloop: regression: '%s' is %.1f%% worse than in %s on %s "
					"(p %.2g)\n",
					name, (slow - 1) * 100, base_path, run->cfg.metric->name,
					json_number_value(json_object_get(c, "p_value")));
				n++;
				continue;
			}
			json_t *ci = json_object_get(c, "ci95");
			int slower =
			    !strcmp(json_string_value(json_object_get(c, "verdict")), "slower");
			const char *doubt = json_string_value(json_object_get(c, "doubt"));
			json_t *cpu = json_object_get(c, "cpu");
			struct pl_comparison cc = {
			    .ratio = json_number_value(json_object_get(cpu, "ratio")),
			    .ci_lo =
				json_number_value(json_array_get(json_object_get(cpu, "ci95"), 0)),
			    .ci_hi =
				json_number_value(json_array_get(json_object_get(cpu, "ci95"), 1))};
			char why[300];
			int cpu_stands = pl_summary_cpu_stands(
			    json_is_object(cpu) ? &cc : NULL,
			    json_number_value(json_object_get(cpu, "added")),
			    json_number_value(json_object_get(c, "speed_change")), pct / 100,
			    base_path, why, sizeof why);
			/* in doubt the wall time's verdict is no evidence either way: a
			 * stalled run in the baseline can hide a real slowdown from it */
			if (ratio <= limit || (!slower && !(doubt && cpu_stands)))
				continue;
			if (doubt && !cpu_stands) {
				fprintf(stderr,
					"perfloop: warning: '%s' looks %.1f%% slower than in %s, "
					"but %s, and %s: not called a regression; measure both "
					"again on a quieter machine\n",
					name, (ratio - 1) * 100, base_path, doubt, why);
				continue;
			}
			const char *dim = json_string_value(json_object_get(c, "dimension"));
			if (dim && strncmp(dim, "sim_", 4) == 0)
				fprintf(stderr,
					"perfloop: regression: '%s' is %.1f%% slower than in %s on "
					"%s (simulated under Valgrind: range %.3f-%.3f",
					name, (ratio - 1) * 100, base_path, dim,
					json_number_value(json_array_get(ci, 0)),
					json_number_value(json_array_get(ci, 1)));
			else
				fprintf(stderr,
					"perfloop: regression: '%s' is %.1f%% slower than in %s "
					"(95%% CI %.3f-%.3f, p %.2g",
					name, (ratio - 1) * 100, base_path,
					json_number_value(json_array_get(ci, 0)),
					json_number_value(json_array_get(ci, 1)),
					json_number_value(json_object_get(c, "p_value")));
			if (doubt)
				fprintf(stderr,
					"; %s, but its CPU time grew %.1fx (95%% CI %.2fx-%.2fx)",
					doubt, cc.ratio, cc.ci_lo, cc.ci_hi);
			fprintf(stderr, ")\n");
			n++;
		}
		return n;
	}
	for (size_t i = 0; i < run->ncmp; i++) {
		const struct pl_comparison *c = &run->cmp[i];
		/* a number where higher is better (samples/s): its fall is the
		 * slowdown, 1 / ratio */
		double slow = run->cfg.metric && run->cfg.metric->higher && c->ratio > 0
				  ? 1 / c->ratio
				  : c->ratio;
		if (c->change != PL_CHANGE_SLOWER || slow <= limit)
			continue;
		if (run->cfg.metric) {
			fprintf(stderr,
				"perfloop: regression: '%s' is %.1f%% worse than '%s' on %s (95%% CI "
				"%.3f-%.3f, p %.2g)\n",
				run->bench[c->bench].name, (slow - 1) * 100,
				run->bench[c->reference].name, run->cfg.metric->name, c->ci_lo,
				c->ci_hi, c->p);
			n++;
			continue;
		}
		if (c->dimension && strncmp(c->dimension, "sim_", 4) == 0)
			fprintf(stderr,
				"perfloop: regression: '%s' is %.1f%% slower than '%s' on %s "
				"(simulated under Valgrind: range %.3f-%.3f)\n",
				run->bench[c->bench].name, (c->ratio - 1) * 100,
				run->bench[c->reference].name, c->dimension, c->ci_lo, c->ci_hi);
		else
			fprintf(stderr,
				"perfloop: regression: '%s' is %.1f%% slower than '%s' (95%% CI "
				"%.3f-%.3f, p %.2g)\n",
				run->bench[c->bench].name, (c->ratio - 1) * 100,
				run->bench[c->reference].name, c->ci_lo, c->ci_hi, c->p);
		n++;
	}
	return n;
}

/* The spec and benchmark a run of perfloop.yaml measures (set while the
 * command runs again with the benchmark's options). */
static const struct pl_spec *spec_running;
static const struct pl_spec_bench *spec_bench;

#define SPEC_NONE (-1)

/* Run one benchmark of the spec: cmd_bench again with argv's options
 * (argv[1..nopts), which come after the spec's and so win), the spec's
 * options and its command, in its environment. */
static int spec_run(const struct pl_spec *sp, const struct pl_spec_bench *b, int argc,
		    char **argv, int nopts, int named, const struct pl_ctx *ctx)
{
	(void)argc;
	struct pl_argv a = {0};
	int rc = pl_argv_push(&a, argv[0], strlen(argv[0]));
	rc |= pl_spec_bench_args(b, &a);
	for (int i = 1; i < nopts; i++) /* not --all (nor its prefixes, which getopt takes) */
		if (!(strlen(argv[i]) >= 3 && !strncmp(argv[i], "--all", strlen(argv[i]))))
			rc |= pl_argv_push(&a, argv[i], strlen(argv[i]));
	if (!named) { /* its name, with each size: "parse n={n}" */
		char name[1024];
		size_t len = (size_t)snprintf(name, sizeof name, "%s", b->name);
		for (size_t i = 0; i < b->nparams && len < sizeof name; i++)
			len += (size_t)snprintf(name + len, sizeof name - len, " %s={%s}",
						b->params[i].key, b->params[i].key);
		rc |= pl_argv_push(&a, "-n", 2) | pl_argv_push(&a, name, strlen(name));
	}
	rc |= pl_argv_push(&a, b->cmd, strlen(b->cmd));
	if (rc) {
		pl_argv_release(&a);
		return pl_die(PL_EXIT_INTERNAL, "out of memory");
	}
	/* its environment, put back afterwards */
	char **old = calloc(b->nenv + 1, sizeof *old);
	if (!old) {
		pl_argv_release(&a);
		return pl_die(PL_EXIT_INTERNAL, "out of memory");
	}
	for (size_t i = 0; i < b->nenv; i++) {
		const char *v = getenv(b->env[i].key);
		old[i] = v ? strdup(v) : NULL;
		if ((v && !old[i]) || setenv(b->env[i].key, b->env[i].value, 1) != 0) {
			for (size_t j = 0; j <= i; j++)
				free(old[j]);
			free(old);
			pl_argv_release(&a);
			return pl_die(PL_EXIT_INTERNAL, "cannot set %s: out of memory",
				      b->env[i].key);
		}
	}
	spec_running = sp;
	spec_bench = b;
	rc = cmd_bench((int)a.n, a.v, ctx);
	spec_running = NULL;
	spec_bench = NULL;
	for (size_t i = 0; i < b->nenv; i++) {
		if (old[i])
			setenv(b->env[i].key, old[i], 1);
		else
			unsetenv(b->env[i].key);
		free(old[i]);
	}
	free(old);
	pl_argv_release(&a);
	return rc;
}

/* bench NAME (one positional word that names a benchmark of
 * perfloop.yaml) or bench --all: the exit status, or SPEC_NONE where the
 * command line is an ordinary one. */
static int spec_dispatch(int argc, char **argv, int optind_, int all, int named, int params,
			 int outputs, const struct pl_ctx *ctx)
{
	char path[4200];
	/* a command with arguments or a path is no name: the spec is not read */
	if (!all && strpbrk(argv[optind_], " \t/'\"{"))
		return SPEC_NONE;
	if (pl_spec_find(path, sizeof path) != 0) {
		if (all)
			return pl_die(PL_EXIT_USAGE,
				      "option '--all': no perfloop.yaml here or at the root of "
				      "the git work tree (docs/perfloop-yaml.md)");
		return SPEC_NONE;
	}
	struct pl_spec sp;
	struct pl_error err = {{0}};
	if (pl_spec_load(path, &sp, &err) != PL_OK)
		return pl_die(PL_EXIT_USAGE, "%s", err.msg);
	int rc = SPEC_NONE;
	const struct pl_spec_bench *b = all ? NULL : pl_spec_get(&sp, argv[optind_]);
	if (!all && !b)
		goto done; /* a command, not a name */
	if (params) {
		rc = pl_die(PL_EXIT_USAGE,
			    "option '--param': %s sets the parameters of its benchmarks (edit it "
			    "to change them)",
			    path);
		goto done;
	}
	if (all && (argc - optind_ > 0 || outputs || named)) {
		rc = pl_die(PL_EXIT_USAGE,
			    "option '--all': runs every benchmark of %s, each recorded in the "
			    "history: give no command, --name, --json or output file with it "
			    "(run one benchmark by its name to write one)",
			    path);
		goto done;
	}
	if (b) {
		rc = spec_run(&sp, b, argc, argv, optind_, named, ctx);
		goto done;
	}
	rc = PL_EXIT_OK;
	for (size_t i = 0; i < sp.nbench; i++) {
		fprintf(stderr, "%s== %s (%s)\n", i ? "\n" : "", sp.bench[i].name, path);
		fflush(stderr);
		int r = spec_run(&sp, &sp.bench[i], argc, argv, optind_, 0, ctx);
		if (r != PL_EXIT_OK && (rc == PL_EXIT_OK || r == PL_EXIT_INTERRUPTED))
			rc = r;
		if (r == PL_EXIT_INTERRUPTED)
			break;
	}
done:
	pl_spec_release(&sp);
	return rc;
}

int cmd_bench(int argc, char **argv, const struct pl_ctx *ctx)
{
	struct pl_bench_run run;
	memset(&run, 0, sizeof(run));
	pl_bench_config_defaults(&run.cfg);
	struct pl_bench_config *cfg = &run.cfg;
	const char *names[256];
	size_t nnames = 0;
	struct pl_param params[16];
	size_t nparams = 0;
	const char *counters = "auto", *reference = NULL, *baseline_path = NULL, *out = NULL;
	const char *md = NULL, *csv = NULL, *hf = NULL, *findings_out = NULL, *plot = NULL;
	int expect = -1;
	json_t *fits = NULL;
	int quiet = 0, json_out = 0, no_history = 0, rc = PL_EXIT_USAGE, gpu_on = 0;
	int fail_regression = 0, all = 0;
	double regression_pct = 0;
	double gpu_hz = 10;
	struct pl_gpu gpu = {0};
	struct pl_error err = {{0}};
	json_t *baseline = NULL, *baseline_cmp = NULL;
	int batch_given = 0, budget_given = 0, max_time_given = 0, alloc_on = 0, syscalls_on = 0;
	int wait_given = 0, metric_higher = 0;
	const char *metric_spec = NULL, *metric_name = NULL;
	struct pl_metric metric = {0};
	char alloc_dir[64] = "";
	char *joined = NULL;

	/* Everything after "--" is one command's argv. */
	int dashdash = -1;
	for (int i = 1; i < argc; i++)
		if (strcmp(argv[i], "--") == 0) {
			dashdash = i;
			break;
		}
	int optargc = dashdash >= 0 ? dashdash : argc;
	optind = 1;
	opterr = 0;
	int c;
	while ((c = getopt_long(optargc, argv, ":w:r:P:L:n:io:m:M:p:c:s:Nh", longopts, NULL)) != -1) {
		switch (c) {
		case 'w':
			if (parse_int("--warmup", optarg, 0, &cfg->warmup))
				goto out;
			break;
		case 'r':
			if (parse_int("--runs", optarg, 1, &cfg->runs))
				goto out;
			break;
		case 'm': /* hyperfine's short spellings */
		case OPT_MIN_RUNS:
			if (parse_int("--min-runs", optarg, 1, &cfg->min_runs))
				goto out;
			break;
		case 'M':
		case OPT_MAX_RUNS:
			if (parse_int("--max-runs", optarg, 1, &cfg->max_runs))
				goto out;
			break;
		case OPT_TIME_BUDGET:
			if (parse_pos("--time-budget", optarg, &cfg->time_budget_s))
				goto out;
			budget_given = 1;
			break;
		case OPT_PRECISION:
		{
			double f;
			if (pl_parse_share(optarg, 1, &f) < 0 || f <= 0 || f >= 1) {
				pl_die(PL_EXIT_USAGE,
				       "option '--precision': expected a percentage above 0 "
				       "and below 100 (2 or 2%%), got '%s'",
				       optarg);
				goto out;
			}
			cfg->precision_pct = f * 100.0;
		}
			break;
		case 's':
		case OPT_SETUP:
			cfg->setup = optarg;
			break;
		case 'p':
		case OPT_PREPARE:
			cfg->prepare = optarg;
			break;
		case OPT_CONCLUDE:
			cfg->conclude = optarg;
			break;
		case 'c':
		case OPT_CLEANUP:
			cfg->cleanup = optarg;
			break;
		case 'L':
		case 'P': {
			if (nparams >= sizeof(params) / sizeof(params[0])) {
				pl_die(PL_EXIT_USAGE, "option '-P': at most 16 parameters");
				goto out;
			}
			/* hyperfine's forms: -P NAME LO HI and -L NAME V1,V2 */
			char spec[512];
			const char *arg = optarg;
			if (c == 'P' && !strchr(optarg, '=') && optind + 1 < optargc &&
			    is_int(argv[optind]) && is_int(argv[optind + 1])) {
				snprintf(spec, sizeof spec, "%s=%s..%s", optarg, argv[optind],
					 argv[optind + 1]);
				optind += 2;
				arg = spec;
			} else if (c == 'L' || !strchr(optarg, '=')) {
				if (optind >= optargc) {
					pl_die(PL_EXIT_USAGE,
					       "option '-%c': '%s' has no values (NAME=VALUES, or "
					       "hyperfine's -P NAME LO HI and -L NAME V1,V2)",
					       c, optarg);
					goto out;
				}
				snprintf(spec, sizeof spec, "%s=%s", optarg, argv[optind++]);
				arg = spec;
			}
			if (pl_param_parse(arg, &params[nparams], &err) != PL_OK) {
				pl_die(PL_EXIT_USAGE, "%s", err.msg);
				goto out;
			}
			for (size_t k = 0; k < nparams; k++)
				if (strcmp(params[k].name, params[nparams].name) == 0) {
					pl_die(PL_EXIT_USAGE,
					       "option '-P': parameter '%s' given twice",
					       params[k].name);
					nparams++;
					goto out;
				}
			nparams++;
			break;
		}
		case OPT_ORDER:
			if (strcmp(optarg, "interleaved") == 0)
				cfg->order = PL_ORDER_INTERLEAVED;
			else if (strcmp(optarg, "sequential") == 0)
				cfg->order = PL_ORDER_SEQUENTIAL;
			else {
				pl_die(PL_EXIT_USAGE,
				       "option '--order': expected interleaved or "
				       "sequential, got '%s'",
				       optarg);
				goto out;
			}
			break;
		case OPT_TIMEOUT:
			if (parse_pos("--timeout", optarg, &cfg->timeout_s))
				goto out;
			break;
		case OPT_BATCH:
			if ((cfg->batch = pl_bench_parse_batch(optarg)) < 0) {
				pl_die(PL_EXIT_USAGE,
				       "option '--batch': expected auto or an integer 1..1000000, "
				       "got '%s'",
				       optarg);
				goto out;
			}
			batch_given = 1;
			break;
		case OPT_MAX_TIME:
			if (parse_pos("--max-time", optarg, &cfg->max_time_s))
				goto out;
			max_time_given = 1;
			break;
		case OPT_PIN:
			if ((cfg->pin = pl_machine_parse_pin(optarg)) < PL_PIN_NONE) {
				pl_die(PL_EXIT_USAGE,
				       "option '--pin': expected auto, none or a CPU number, got "
				       "'%s'",
				       optarg);
				goto out;
			}
			break;
		case OPT_GPU:
			gpu_on = 1;
			break;
		case OPT_GPU_HZ: {
			char *end;
			errno = 0;
			gpu_hz = strtod(optarg, &end);
			if (errno || *end || end == optarg || !(gpu_hz >= 0.1 && gpu_hz <= 1000)) {
				pl_die(PL_EXIT_USAGE,
				       "option '--gpu-hz': expected readings per second from 0.1 to "
				       "1000, got '%s'",
				       optarg);
				goto out;
			}
			gpu_on = 1;
			break;
		}
		case OPT_MEMORY:
			cfg->memory = 1;
			break;
		case OPT_ALLOC:
			alloc_on = 1;
			break;
		case OPT_SYSCALLS:
			syscalls_on = 1;
			break;
		case OPT_SIM:
			if ((cfg->sim = pl_sim_parse_mode(optarg)) < 0) {
				pl_die(PL_EXIT_USAGE,
				       "option '--sim': expected auto, off, instructions or cycles, got "
				       "'%s'",
				       optarg);
				goto out;
			}
			break;
		case OPT_METRIC:
			metric_spec = optarg;
			break;
		case OPT_METRIC_NAME:
			metric_name = optarg;
			break;
		case OPT_HIGHER:
			metric_higher = 1;
			break;
		case OPT_SIM_RUNS:
			if (parse_int("--sim-runs", optarg, 3, &cfg->sim_runs) != 0)
				goto out;
			if (cfg->sim_runs > PL_SIM_MAX_RUNS) {
				pl_die(PL_EXIT_USAGE, "option '--sim-runs': at most %d, got '%s'",
				       PL_SIM_MAX_RUNS, optarg);
				goto out;
			}
			break;
		case OPT_CONTENTION:
			if (strcmp(optarg, "leave-out") == 0 || strcmp(optarg, "keep") == 0) {
				cfg->contention_keep = strcmp(optarg, "keep") == 0;
				break;
			}
			pl_die(PL_EXIT_USAGE,
			       "option '--contention': expected leave-out or keep, got '%s'", optarg);
			goto out;
		case OPT_WAIT_QUIET: {
			wait_given = 1;
			char *end;
			errno = 0;
			cfg->wait_quiet_s = strtod(optarg, &end);
			if (errno || *end || end == optarg || !(cfg->wait_quiet_s >= 0) ||
			    cfg->wait_quiet_s > 3600) {
				pl_die(PL_EXIT_USAGE,
				       "option '--wait-quiet': expected seconds from 0 to 3600, got "
				       "'%s'",
				       optarg);
				goto out;
			}
			break;
		}
		case OPT_INPUT:
			cfg->input = optarg;
			break;
		case OPT_OUTPUT:
			cfg->output = optarg;
			break;
		case 'n':
			if (nnames >= sizeof(names) / sizeof(names[0])) {
				pl_die(PL_EXIT_USAGE, "option '--name': too many names");
				goto out;
			}
			names[nnames++] = optarg;
			break;
		case OPT_REFERENCE:
			reference = optarg;
			break;
		case 'i':
			cfg->ignore_failure = 1;
			break;
		case OPT_COUNTERS:
			counters = optarg;
			break;
		case OPT_BASELINE:
			baseline_path = optarg;
			break;
		case 'o':
			out = optarg;
			break;
		case OPT_MD:
			md = optarg;
			break;
		case OPT_CSV:
			csv = optarg;
			break;
		case OPT_HYPERFINE:
			hf = optarg;
			break;
		case OPT_QUIET:
			quiet = 1;
			break;
		case 'N': /* hyperfine's --shell=none: perfloop's default */
			break;
		case OPT_SHOW_OUTPUT:
			cfg->output = "inherit";
			break;
		case OPT_EXPECT: {
			enum pl_cx_class cls;
			if (pl_cx_parse(optarg, &cls) < 0) {
				pl_die(PL_EXIT_USAGE,
				       "option '--expect': expected 1, log n, n, n log n, n^2 or n^3, "
				       "got '%s'",
				       optarg);
				goto out;
			}
			expect = (int)cls;
			break;
		}
		case OPT_FINDINGS:
			findings_out = optarg;
			break;
		case OPT_PLOT:
			plot = optarg;
			break;
		case OPT_ALL:
			all = 1;
			break;
		case OPT_SORT:
			if (!strcmp(optarg, "command") || !strcmp(optarg, "auto")) {
				run.sort = 0;
			} else if (!strcmp(optarg, "median-time")) {
				run.sort = 1;
			} else if (!strcmp(optarg, "mean-time")) {
				run.sort = 2;
			} else {
				pl_die(PL_EXIT_USAGE,
				       "option '--sort': expected command, auto, median-time or "
				       "mean-time, got '%s'",
				       optarg);
				goto out;
			}
			break;
		case OPT_STYLE: /* hyperfine's: none, basic, nocolor, color, full */
			if (!strcmp(optarg, "none")) {
				quiet = 1;
			} else if (!strcmp(optarg, "basic") || !strcmp(optarg, "nocolor")) {
				pl_style_force(0);
			} else if (!strcmp(optarg, "color") || !strcmp(optarg, "full")) {
				pl_style_force(1);
			} else {
				pl_die(PL_EXIT_USAGE,
				       "option '--style': expected none, basic, nocolor, color or "
				       "full, got '%s'",
				       optarg);
				goto out;
			}
			break;
		case OPT_FAIL_REGRESSION:
			fail_regression = 1;
			break;
		case OPT_REGRESSION_THRESHOLD:
			if (parse_pos("--regression-threshold", optarg, &regression_pct) < 0)
				goto out;
			fail_regression = 1;
			break;
		case OPT_JSON:
			json_out = 1;
			break;
		case OPT_SHELL:
			cfg->shell = 1;
			break;
		case OPT_NO_HISTORY:
			no_history = 1;
			break;
		case 'h':
			fputs(cmd_bench_usage, stdout);
			rc = PL_EXIT_OK;
			goto out;
		case ':':
		default:
			pl_bad_option(c, argv, "bench");
			goto out;
		}
	}
	/* the time the user gave is the time a calibrated batch may take: a
	 * noisy 4 ms command asked for 0.3 s must not run 778-run batches
	 * for a minute */
	if ((metric_name || metric_higher) && !metric_spec) {
		pl_die(PL_EXIT_USAGE, "option '--%s' needs --metric",
		       metric_name ? "metric-name" : "higher-is-better");
		goto out;
	}
	if (metric_spec) {
		if (pl_metric_init(&metric, metric_spec, metric_name, metric_higher, &err) != PL_OK) {
			pl_die(PL_EXIT_USAGE, "%s", err.msg);
			goto out;
		}
		if (cfg->output && strcmp(cfg->output, "null") != 0) {
			pl_die(PL_EXIT_USAGE,
			       "option '--metric': the commands' output is read for the number; "
			       "it cannot also go to --output %s",
			       cfg->output);
			goto out;
		}
		cfg->metric = &metric;
		/* the number decides, not the process: no simulated counts */
		if (cfg->sim == PL_SIM_AUTO)
			cfg->sim = PL_SIM_OFF;
	}
	/* Where simulated counts can decide instead, a noisy wall time is not
	 * fought with minutes of batches: its calibrated batch keeps to the time
	 * budget (a 45 ms command on this VM took 114 s by the old 60 s cap, and
	 * still could not decide), and the counts decide in seconds. */
	if (!max_time_given && cfg->sim != PL_SIM_OFF && pl_sim_available(NULL, 0) &&
	    cfg->time_budget_s < cfg->max_time_s)
		cfg->max_time_s = cfg->time_budget_s;
	/* ... nor with a fixed wait for a quiet CPU: 1 s, not 5 (and so at most
	 * 2 s, not 10, for a contended one), unless asked */
	if (!wait_given && !getenv("PERFLOOP_WAIT_QUIET") && cfg->sim != PL_SIM_OFF &&
	    pl_sim_available(NULL, 0) && cfg->wait_quiet_s > PL_SIM_WAIT_QUIET_S)
		cfg->wait_quiet_s = PL_SIM_WAIT_QUIET_S;
	if (budget_given && !max_time_given && cfg->time_budget_s < cfg->max_time_s)
		cfg->max_time_s = cfg->time_budget_s;
	/* --alloc: every command started with the counting library preloaded
	 * (it samples nothing: its rate is out of reach), its totals read after
	 * each run */
	if (alloc_on) {
		snprintf(alloc_dir, sizeof alloc_dir, "/tmp/perfloop-alloc.XXXXXX");
		if (!mkdtemp(alloc_dir)) {
			alloc_dir[0] = '\0';
			pl_die(PL_EXIT_INTERNAL, "--alloc: cannot make a temporary directory: %s",
			       strerror(errno));
			goto out;
		}
		if (pl_alloc_env(alloc_dir, 1000000000000000ULL, &err) != PL_OK) {
			pl_die(PL_EXIT_INTERNAL, "--alloc: %s", err.msg);
			goto out;
		}
		cfg->alloc_dir = alloc_dir;
	}
	if (cfg->max_runs && cfg->min_runs > cfg->max_runs && !cfg->runs) {
		pl_die(PL_EXIT_USAGE, "option '--min-runs': %d is more than --max-runs %d",
		       cfg->min_runs, cfg->max_runs);
		goto out;
	}

	/* a benchmark of perfloop.yaml by its name, or --all of them: run
	 * again with the options the spec gives it */
	if (!spec_running && dashdash < 0 && (all || optargc - optind == 1)) {
		int src = spec_dispatch(argc, argv, optind, all, nnames > 0, nparams > 0,
					out || md || csv || hf || findings_out || plot || json_out, ctx);
		if (src != SPEC_NONE) {
			rc = src;
			goto out;
		}
	}
	if (all) {
		pl_die(PL_EXIT_USAGE, "option '--all': give no command with it (it runs every "
				      "benchmark of perfloop.yaml)");
		goto out;
	}

	/* the command strings */
	const char **cmds;
	size_t ncmds;
	if (dashdash >= 0) {
		if (optind < optargc) {
			pl_die(PL_EXIT_USAGE, "give commands either as strings or after '--', not "
					      "both");
			goto out;
		}
		if (dashdash + 1 >= argc) {
			pl_die(PL_EXIT_USAGE, "no command after '--'");
			goto out;
		}
		size_t len = 0;
		for (int i = dashdash + 1; i < argc; i++) {
			if (cfg->shell) {
				size_t need = len + strlen(argv[i]) + 2;
				joined = realloc(joined, need);
				snprintf(joined + len, need - len, "%s%s", len ? " " : "", argv[i]);
				len = strlen(joined);
			} else {
				append_quoted(&joined, &len, argv[i]);
			}
		}
		cmds = (const char **)&joined;
		ncmds = 1;
	} else {
		cmds = (const char **)argv + optind;
		ncmds = (size_t)(optargc - optind);
	}
	if (ncmds == 0) {
		pl_die(PL_EXIT_USAGE, "no command to benchmark (see 'perfloop bench --help')");
		goto out;
	}
	if (nnames > ncmds) {
		pl_die(PL_EXIT_USAGE, "option '--name': %zu names for %zu commands", nnames, ncmds);
		goto out;
	}
	if (pl_counters_parse(&cfg->counters, counters, &err) != PL_OK) {
		pl_die(PL_EXIT_USAGE, "%s", err.msg);
		goto out;
	}
	if (syscalls_on)
		pl_counters_add(&cfg->counters, PL_CTR_SYSCALLS);
	/* under a launcher, one output per rank: %r %l %h %p in the names */
	struct pl_rank rank;
	pl_rank_detect(&rank);
	static char xnames[6][4096];
	const char **named[6] = {&out, &md, &csv, &hf, &findings_out, &plot};
	static const char *const optnames[6] = {"--out", "--export-markdown", "--export-csv",
						 "--export-hyperfine", "--findings", "--plot"};
	for (int i = 0; i < 6; i++) {
		if (!*named[i])
			continue;
		if (pl_rank_shared_name(*named[i], &rank)) {
			pl_die(PL_EXIT_USAGE,
			       "option '%s': '%s' is one file for every rank (rank %ld under %s): "
			       "put %%r in the name (as bench.%%r.json), or the ranks overwrite "
			       "each other's",
			       optnames[i], *named[i], rank.rank, rank.launcher);
			goto out;
		}
		if (pl_rank_expand(optnames[i], *named[i], &rank, xnames[i], sizeof xnames[i],
				   &err) != PL_OK) {
			pl_die(PL_EXIT_USAGE, "%s", err.msg);
			goto out;
		}
		*named[i] = xnames[i];
	}
	if (check_writable("--out", out) || check_writable("--export-markdown", md) ||
	    check_writable("--export-csv", csv) || check_writable("--export-hyperfine", hf) ||
	    check_writable("--findings", findings_out) || check_writable("--plot", plot))
		goto out;
	if (plot) { /* a sweep to draw: one parameter, every value a size */
		double x;
		int sizes = nparams == 1;
		for (size_t k = 0; sizes && k < params[0].values.n; k++)
			sizes = pl_sweep_size(params[0].values.v[k], &x) == 0;
		if (!sizes || params[0].values.n < 2) {
			pl_die(PL_EXIT_USAGE,
			       "option '--plot': draws a size sweep: one -P whose values are "
			       "numbers > 0 (as -P n=1000..64000*2)");
			goto out;
		}
	}
	if (baseline_path && pl_summary_load(baseline_path, &baseline, &err) != PL_OK) {
		pl_die(PL_EXIT_USAGE, "option '--baseline': %s", err.msg);
		goto out;
	}
	/* a baseline that was simulated is compared with simulated counts
	 * where the wall time cannot decide: simulate as it did */
	if (baseline && cfg->sim == PL_SIM_AUTO) {
		size_t bi;
		json_t *bj;
		json_array_foreach(json_object_get(baseline, "benchmarks"), bi, bj)
		{
			json_t *r0 = json_array_get(
			    json_object_get(json_object_get(bj, "sim"), "runs"), 0);
			/* as auto does, but also where this run's wall time
			 * passes: the baseline's may not (a note, not an error,
			 * where Valgrind cannot run it) */
			if (r0) {
				cfg->sim = PL_SIM_EVIDENCE;
				cfg->sim_cache |= json_is_number(json_object_get(r0, "est_cycles"));
			}
		}
	}
	/* measured as the baseline was: its batch, unless --batch says */
	if (baseline && !batch_given) {
		size_t k = pl_summary_batch(json_array_get(json_object_get(baseline, "benchmarks"), 0));
		cfg->batch = (int)k;
	} else if (cfg->runs > 0 && !batch_given) {
		/* -r N is N executions, as in hyperfine: `--runs 300` of /bin/true
		 * made 17,700 in 73 s when it counted calibrated batches */
		cfg->batch = 1;
	}

	/* every command x every parameter combination */
	const char *pnames[16];
	for (size_t k = 0; k < nparams; k++)
		pnames[k] = params[k].name;
	size_t combos = pl_params_combinations(params, nparams);
	if (combos > PL_PARAMS_MAX_BENCHES / (ncmds ? ncmds : 1)) {
		char many[32];
		snprintf(many, sizeof many, combos == SIZE_MAX ? "more than 2^64" : "%zu", combos);
		rc = pl_die(PL_EXIT_USAGE,
			    "option '-P': %zu command%s x %s combinations of values: at most %d "
			    "benchmarks in one bench (sweep fewer values, or split the sweep)",
			    ncmds, ncmds == 1 ? "" : "s", many, PL_PARAMS_MAX_BENCHES);
		goto out;
	}
	for (size_t ci = 0; ci < ncmds; ci++) {
		for (size_t comb = 0; comb < combos; comb++) {
			size_t idx[16];
			pl_params_combination(params, nparams, comb, idx);
			char *cmd = strdup(cmds[ci]);
			char *name = strdup(ci < nnames ? names[ci] : cmds[ci]);
			char **values = calloc(nparams ? nparams : 1, sizeof(char *));
			for (size_t k = 0; k < nparams && cmd && name; k++) {
				const char *v = params[k].values.v[idx[k]];
				char *c2 = pl_words_substitute(cmd, params[k].name, v);
				char *n2 = pl_words_substitute(name, params[k].name, v);
				free(cmd);
				free(name);
				cmd = c2;
				name = n2;
				values[k] = strdup(v);
			}
			int arc = cmd && name && values
				      ? pl_bench_add(&run, name, cmd, nparams, pnames, values, &err)
				      : PL_ENOMEM;
			free(cmd);
			free(name);
			if (arc != PL_OK) {
				if (values)
					for (size_t k = 0; k < nparams; k++)
						free(values[k]);
				free(values);
				rc = pl_die(pl_exit_code(arc), "%s",
					    arc == PL_ENOMEM ? "out of memory" : err.msg);
				goto out;
			}
		}
	}
	if (reference) {
		size_t k;
		for (k = 0; k < run.nbench; k++)
			if (strcmp(run.bench[k].name, reference) == 0 ||
			    strcmp(run.bench[k].command, reference) == 0)
				break;
		if (k == run.nbench) {
			pl_die(PL_EXIT_USAGE, "option '--reference': no command named '%s'",
			       reference);
			goto out;
		}
		run.reference = k;
	}

	pl_counters_probe(&cfg->counters, pl_perf_open);
	run.quiet_counters =
	    !strcmp(counters, "auto") && !syscalls_on && counters_said(&cfg->counters);
	struct progress_state ps = {.run = &run};
	pl_style_detect(&ps.st, stderr);
	run.interrupt_flag = ctx->interrupted;
	if (!quiet && isatty(STDERR_FILENO)) {
		run.progress = on_progress;
		run.progress_arg = &ps;
	}

	if (gpu_on && pl_gpu_start(&gpu, gpu_hz) == PL_ENOMEM) {
		rc = pl_die(PL_EXIT_INTERNAL, "out of memory");
		goto out;
	}
	int erc = pl_bench_execute(&run, &err);
	pl_gpu_stop(&gpu);
	progress_clear(&ps);
	if (erc != PL_OK && erc != PL_EINTR) {
		rc = pl_die(pl_exit_code(erc), "%s", err.msg);
		goto out;
	}
	if (pl_bench_finish(&run) != PL_OK) {
		rc = pl_die(PL_EXIT_INTERNAL, "out of memory");
		goto out;
	}
	if (erc == PL_OK) {
		if (!quiet && cfg->sim != PL_SIM_OFF && isatty(STDERR_FILENO))
			fprintf(stderr, "perfloop: counting instructions under Valgrind ...\r");
		int src = pl_sim_measure(&run, &err);
		if (!quiet && cfg->sim != PL_SIM_OFF && isatty(STDERR_FILENO))
			fprintf(stderr, "\033[K");
		if (src == PL_EINTR) {
			run.interrupted = 1;
		} else if (src != PL_OK) {
			rc = pl_die(src == PL_EFAILED ? PL_EXIT_FAILED : pl_exit_code(src), "%s",
				    err.msg);
			goto out;
		}
	}
	if (baseline)
		baseline_cmp = compare_baseline(&run, baseline, baseline_path);
	/* one numeric parameter: a size sweep, and how the cost grows */
	fits = nparams == 1 ? pl_sweep_fits(&run, cmds, ncmds, combos, expect) : json_array();
	if (!fits) {
		rc = pl_die(PL_EXIT_INTERNAL, "out of memory");
		goto out;
	}

	FILE *human = json_out ? stderr : stdout;
	if (!quiet) {
		struct pl_style st;
		pl_style_detect(&st, human);
		pl_benchview_machine(human, &st, &run);
		pl_benchview_table(human, &st, &run);
		pl_benchview_comparisons(human, &st, &run);
		if (baseline_cmp)
			pl_benchview_baseline(human, &st, baseline_cmp);
		pl_sweep_print(human, &st, fits);
		if (gpu_on)
			pl_gpu_print(human, &gpu);
	}
	for (size_t i = 0; i < run.nbench; i++)
		if (run.bench[i].state == PL_BENCH_FAILED)
			fprintf(stderr, "perfloop: error: '%s' %s\n", run.bench[i].name,
				run.bench[i].failure);

	json_t *doc = pl_summary_build(&run, baseline_cmp);
	if (!doc) {
		rc = pl_die(PL_EXIT_INTERNAL, "cannot build the summary");
		goto out;
	}
	if (gpu_on)
		json_object_set_new(doc, "gpu", pl_gpu_to_json(&gpu));
	if (spec_running)
		json_object_set_new(doc, "spec", pl_spec_bench_json(spec_running, spec_bench));
	if (json_array_size(fits))
		json_object_set(doc, "complexity", fits);
	int wrc = PL_OK;
	if (findings_out) {
		struct pl_findings fs = {0};
		json_t *fdoc = pl_sweep_findings(fits, &fs) == 0 ? pl_findings_doc("bench", &fs) : NULL;
		wrc = fdoc ? pl_fsio_write_json(findings_out, fdoc, &err) : PL_ENOMEM;
		json_decref(fdoc);
		pl_findings_release(&fs);
	}
	if (wrc == PL_OK && plot) {
		char *svg = pl_sweep_svg(fits);
		if (svg)
			wrc = write_text(plot, svg, &err);
		else
			fprintf(stderr, "perfloop: warning: --plot: no size had a wall time to draw "
					"(every run failed?): %s not written\n",
				plot);
	}
	if (wrc == PL_OK && out)
		wrc = pl_summary_write(out, doc, &err);
	if (wrc == PL_OK && md)
		wrc = write_text(md, pl_benchview_markdown(&run), &err);
	if (wrc == PL_OK && csv)
		wrc = write_text(csv, pl_benchview_csv(&run), &err);
	if (wrc == PL_OK && hf)
		wrc = write_text(hf, pl_benchview_hyperfine(&run), &err);
	if (json_out) {
		char *text = pl_json_text(doc);
		if (text)
			fputs(text, stdout);
		free(text);
	}
	if (!no_history && !run.interrupted)
		record_history(doc);
	json_decref(doc);
	if (wrc != PL_OK) {
		rc = pl_die(PL_EXIT_USAGE, "%s", err.msg);
		goto out;
	}
	if (run.interrupted) {
		fprintf(stderr, "perfloop: interrupted: the summary holds the finished runs\n");
		rc = PL_EXIT_INTERRUPTED;
	} else {
		rc = run.failed ? PL_EXIT_FAILED : PL_EXIT_OK;
	}
	if (rc == PL_EXIT_OK && fail_regression &&
	    regressions(&run, baseline_cmp, baseline_path, regression_pct) > 0)
		rc = PL_EXIT_NEGATIVE;
out:
	if (alloc_dir[0])
		pl_alloc_dir_remove(alloc_dir);
	json_decref(baseline);
	json_decref(baseline_cmp);
	json_decref(fits);
	free(joined);
	for (size_t k = 0; k < nparams; k++)
		pl_param_release(&params[k]);
	pl_bench_run_release(&run);
	pl_gpu_release(&gpu);
	pl_metric_release(&metric);
	return rc;
}
