/*
 * perfloop bench: the command from its argv to its exit status: the
 * options read into the engine's configuration, every command and
 * parameter combination added, the run, and what it shows and writes; a
 * name of perfloop.yaml (or --all) runs the command again with the spec's
 * options. Measuring lives in measure/benchrun.c, the document in
 * measure/summary.c, the table and exports in measure/benchview.c. The
 * usage text and option table are benchopts.c, progress and output files
 * benchout.c, --baseline and --fail-on-regression benchcmp.c; bench_int.h
 * is what they share.
 */
#include <errno.h>
#include <getopt.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "bench_int.h"
#include "benchrun.h"
#include "benchview.h"
#include "cmd.h"
#include "allocprof.h"
#include "ranks.h"
#include "fsio.h"
#include "gpu.h"
#include "params.h"
#include "render.h"
#include "complexity.h"
#include "spec.h"
#include "sweep.h"
#include "metric.h"
#include "simcount.h"
#include "summary.h"

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
	while ((c = getopt_long(optargc, argv, ":w:r:P:L:n:io:m:M:p:c:s:Nh", bench_longopts,
				NULL)) != -1) {
		switch (c) {
		case 'w':
			if (bench_parse_int("--warmup", optarg, 0, &cfg->warmup))
				goto out;
			break;
		case 'r':
			if (bench_parse_int("--runs", optarg, 1, &cfg->runs))
				goto out;
			break;
		case 'm': /* hyperfine's short spellings */
		case OPT_MIN_RUNS:
			if (bench_parse_int("--min-runs", optarg, 1, &cfg->min_runs))
				goto out;
			break;
		case 'M':
		case OPT_MAX_RUNS:
			if (bench_parse_int("--max-runs", optarg, 1, &cfg->max_runs))
				goto out;
			break;
		case OPT_TIME_BUDGET:
			if (bench_parse_pos("--time-budget", optarg, &cfg->time_budget_s))
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
			    bench_is_int(argv[optind]) && bench_is_int(argv[optind + 1])) {
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
			if (bench_parse_pos("--timeout", optarg, &cfg->timeout_s))
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
			if (bench_parse_pos("--max-time", optarg, &cfg->max_time_s))
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
			if (bench_parse_int("--sim-runs", optarg, 3, &cfg->sim_runs) != 0)
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
			if (bench_parse_pos("--regression-threshold", optarg, &regression_pct) < 0)
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
		if (!metric.steps && cfg->output && strcmp(cfg->output, "null") != 0) {
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
				bench_append_quoted(&joined, &len, argv[i]);
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
	if (bench_check_writable("--out", out) || bench_check_writable("--export-markdown", md) ||
	    bench_check_writable("--export-csv", csv) ||
	    bench_check_writable("--export-hyperfine", hf) ||
	    bench_check_writable("--findings", findings_out) ||
	    bench_check_writable("--plot", plot))
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
	    !strcmp(counters, "auto") && !syscalls_on && bench_counters_said(&cfg->counters);
	struct progress_state ps = {.run = &run};
	pl_style_detect(&ps.st, stderr);
	run.interrupt_flag = ctx->interrupted;
	if (!quiet && isatty(STDERR_FILENO)) {
		run.progress = bench_on_progress;
		run.progress_arg = &ps;
	}

	if (gpu_on && pl_gpu_start(&gpu, gpu_hz) == PL_ENOMEM) {
		rc = pl_die(PL_EXIT_INTERNAL, "out of memory");
		goto out;
	}
	int erc = pl_bench_execute(&run, &err);
	pl_gpu_stop(&gpu);
	bench_progress_clear(&ps);
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
		baseline_cmp = bench_compare_baseline(&run, baseline, baseline_path);
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
			wrc = bench_write_text(plot, svg, &err);
		else
			fprintf(stderr, "perfloop: warning: --plot: no size had a wall time to draw "
					"(every run failed?): %s not written\n",
				plot);
	}
	if (wrc == PL_OK && out)
		wrc = pl_summary_write(out, doc, &err);
	if (wrc == PL_OK && md)
		wrc = bench_write_text(md, pl_benchview_markdown(&run), &err);
	if (wrc == PL_OK && csv)
		wrc = bench_write_text(csv, pl_benchview_csv(&run), &err);
	if (wrc == PL_OK && hf)
		wrc = bench_write_text(hf, pl_benchview_hyperfine(&run), &err);
	if (json_out) {
		char *text = pl_json_text(doc);
		if (text)
			fputs(text, stdout);
		free(text);
	}
	if (!no_history && !run.interrupted)
		bench_record_history(doc);
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
	    bench_regressions(&run, baseline_cmp, baseline_path, regression_pct) > 0)
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
