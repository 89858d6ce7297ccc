/*
 * perfloop bench's command line: the usage text (docs/bench.md's synopsis
 * is the same, t002 checks), the long options with hyperfine's spellings,
 * the number parsers the option switch in bench.c uses, and the quoting of
 * a command given after '--' back into one command string.
 */
#include <ctype.h>
#include <errno.h>
#include <getopt.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "bench_int.h"
#include "cmd.h"

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
    "      --metric REGEX|json:PATH|steps\n"
    "                          the number the program reports decides, not its\n"
    "                          whole-process time: each run's output is read for\n"
    "                          REGEX's first group (the median of every match,\n"
    "                          e.g. 'step_time_ms=([0-9.]+)'), or the number at\n"
    "                          PATH of its JSON output (json:benchmarks.0.real_time);\n"
    "                          steps: a PyTorch script's time between optimizer\n"
    "                          steps, timed in it (median after warm-up, ms);\n"
    "                          steps:cpu: its CPU time per step (steady on a busy\n"
    "                          machine, for a loop on the CPU)\n"
    "      --metric-name NAME  the number's dimension (default metric; step_ms)\n"
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
    "Exit status: 0 ok, 1 a regression (--fail-on-regression), 2 bad usage or a\n"
    "command that cannot start, 3 a command failed, crashed or timed out, 130\n"
    "interrupted (the summary of finished runs is still written, marked\n"
    "\"interrupted\").\n"
    "\n"
    "Examples:\n"
    "  perfloop bench -- ./sort input.txt\n"
    "  perfloop bench -n old -n new './old 20000' './new 20000'\n"
    "  perfloop bench -P n=1000..100000*10 './sort {n}' --export-csv sweep.csv\n"
    "  perfloop bench --precision 1 --counters task-clock,page-faults -- python3 x.py\n"
    "  perfloop bench --baseline before.json -o after.json -- ./app\n";

const struct option bench_longopts[] = {
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

int bench_is_int(const char *s)
{
	char *end;
	errno = 0;
	(void)strtol(s, &end, 10);
	return *s && !*end && !errno;
}

int bench_parse_int(const char *opt, const char *arg, long min, int *out)
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

int bench_parse_pos(const char *opt, const char *arg, double *out)
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
void bench_append_quoted(char **s, size_t *len, const char *w)
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
