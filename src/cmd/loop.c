/*
 * perfloop baseline, try and status: the one-change loop (loop/loop.c).
 */
#include <getopt.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <errno.h>
#include <unistd.h>

#include "cmd.h"
#include "benchrun.h"
#include "loop.h"
#include "monotime.h"
#include "simcount.h"
#include "spec.h"
#include "summary.h"
#include "render.h"

const char cmd_baseline_usage[] =
    "usage: perfloop baseline --bench 'CMD' [--bench 'CMD'...] [--suite 'CMD']\n"
    "                         [-n NAME...] [--runs N] [--max-iterations N]\n"
    "                         [--min-gain X] [--ledger FILE] [--timeout S]\n"
    "                         [--batch K] [--sim MODE]\n"
    "                         [--metric REGEX|json:PATH|steps] [--metric-name NAME]\n"
    "                         [--higher-is-better] [-C DIR]\n"
    "\n"
    "Start a loop: run the suite (it must pass), benchmark each command (at\n"
    "least 3 runs), count its instructions under Valgrind where that is\n"
    "affordable, store the summary as the baseline and take a checkpoint.\n"
    "Each benchmark needs a dimension that can decide: the wall time where its\n"
    "CV is at most 5%, else the simulated instructions (deterministic; their\n"
    "own CV at most 5%); with neither the machine is too noisy to compare.\n"
    "'perfloop try' reuses exactly these commands and settings.\n"
    "With a perfloop.yaml (here or at the git root), no --bench measures its\n"
    "benchmarks (one command per size), and its suite, ledger, min_gain and\n"
    "max_iterations apply where no option says (docs/perfloop-yaml.md).\n"
    "\n"
    "Options:\n"
    "  -b, --bench 'CMD'       a benchmark command, split into words, or a\n"
    "                          perfloop.yaml benchmark's name (repeatable)\n"
    "  -n, --name NAME         name of the next benchmark\n"
    "      --suite 'CMD'       the functional suite, run before every measurement\n"
    "  -r, --runs N            exactly N runs per command (>= 3; executions, as\n"
    "                          bench's -r, unless --batch; default: bench's\n"
    "                          time-budget policy)\n"
    "      --max-iterations N  turns before the loop stops (default 3)\n"
    "      --min-gain X        the minimum accepted gain: 0.05 or 5% (default)\n"
    "      --ledger FILE       inside the repository (committed with each accepted\n"
    "                          change); default docs/perf/baseline_ledger.jsonl\n"
    "      --batch K|auto      a sample is the mean of K runs (default auto:\n"
    "                          calibrated by the baseline); kept for every turn\n"
    "      --timeout S         kill a benchmark run after S seconds, the suite\n"
    "                          after 4*S (default 600; kept for every turn)\n"
    "      --sim MODE          the deterministic measure (bench --sim): auto\n"
    "                          (default: simulated where one run under Valgrind\n"
    "                          takes at most 2 minutes), off, instructions or\n"
    "                          cycles (always); every turn does as the baseline\n"
    "      --metric REGEX|json:PATH|steps\n"
    "                          the number the program reports decides, not its\n"
    "                          whole-process time (bench --metric; steps: a\n"
    "                          PyTorch loop's step time, steps:cpu its CPU time\n"
    "                          per step); kept for every turn\n"
    "      --metric-name NAME  the number's dimension (default metric)\n"
    "      --higher-is-better  a larger number is better (samples/s)\n"
    "  -C DIR                  the repository (default: the current directory)\n"
    "  -h, --help              this text\n"
    "\n"
    "A baseline refused (too noisy, a failure) leaves the previous loop as it\n"
    "was.\n"
    "\n"
    "Exit status: 0 ok, 1 too noisy to compare, 2 bad usage, not a repository\n"
    "or another perfloop working in it, 3 the suite or a command failed or\n"
    "timed out.\n"
    "\n"
    "Examples:\n"
    "  perfloop baseline --bench './app input.bin' --suite 'make test'\n"
    "  perfloop baseline -b 'python3 train.py --steps 20' -n train --runs 5\n";

const char cmd_try_usage[] =
    "usage: perfloop try [-m MESSAGE] [--continue] [--finish] [-C DIR]\n"
    "\n"
    "One turn of the loop, after you changed one thing: run the suite, run the\n"
    "baseline's benchmarks with the same settings, and verify against the\n"
    "baseline. Accept: commit exactly the touched files and the ledger line,\n"
    "with the message and the measured gain, and make this run the baseline.\n"
    "Reject: revert the touched files (your other edits stay), keep the run\n"
    "under .perfloop/ and append the ledger line.\n"
    "Files ignored by git, at the checkpoint or now, are never committed. The\n"
    "commit is made in a private index, so a failing hook or a full disk\n"
    "changes nothing; a turn killed after that point is completed (or, before\n"
    "its commit, dropped) by the next 'perfloop try' or 'perfloop baseline',\n"
    "and 'perfloop status' says which. Each run and the suite have the time\n"
    "limits set by 'perfloop baseline --timeout'.\n"
    "After max-iterations turns, or when the last accepted gain was under\n"
    "min-gain, the loop is done and says why; --continue goes on.\n"
    "\n"
    "Options:\n"
    "  -m, --message MESSAGE  the commit message's subject on accept\n"
    "      --continue         go on after the loop said it is done\n"
    "      --finish           only complete (or drop) an interrupted turn\n"
    "  -C DIR                 the repository (default: the current directory)\n"
    "  -h, --help             this text\n"
    "\n"
    "Exit status: 0 accepted, 1 rejected, no feasible win, or the loop is done,\n"
    "2 no baseline, bad usage or another perfloop working in the repository,\n"
    "3 the accepted change could not be committed (nothing changed), 4 git\n"
    "or the system failed.\n"
    "\n"
    "Examples:\n"
    "  perfloop try -m 'dedup: use a set instead of a list'\n"
    "  perfloop try --continue\n";

const char cmd_status_usage[] =
    "usage: perfloop status [-C DIR] [--json]\n"
    "\n"
    "The loop's state: the baseline's benchmarks, the iterations done, each\n"
    "turn's verdict and gain, and a turn that was interrupted (and whether\n"
    "the next 'perfloop try' will complete or drop it).\n"
    "\n"
    "Options:\n"
    "  -C DIR      the repository (default: the current directory)\n"
    "      --json  print .perfloop/loop.json\n"
    "  -h, --help  this text\n"
    "\n"
    "Exit status: 0 ok, 2 no loop.\n"
    "\n"
    "Examples:\n"
    "  perfloop status\n";

/* Each benchmark of the loop's current baseline (.perfloop/baseline.json:
 * the first, or the last accepted turn's): its median, interval and
 * noise, as bench prints them. */
static void print_baseline_medians(const struct pl_git *g)
{
	char path[4200];
	snprintf(path, sizeof path, "%s/.perfloop/baseline.json", g->top);
	json_t *doc;
	struct pl_error err;
	if (pl_summary_load(path, &doc, &err) != PL_OK)
		return;
	size_t i;
	json_t *b;
	json_array_foreach(json_object_get(doc, "benchmarks"), i, b)
	{
		json_t *w = json_object_get(json_object_get(b, "stats"), "wall_s");
		json_t *ci = json_object_get(w, "ci95_median");
		double p50 = json_number_value(json_object_get(w, "p50"));
		double scale;
		const char *unit;
		pl_time_unit(p50, &scale, &unit);
		printf("  %s: median %.4g %s", json_string_value(json_object_get(b, "name")),
		       p50 * scale, unit);
		if (json_array_size(ci) == 2)
			printf(" (95%% CI %.4g-%.4g %s)", json_number_value(json_array_get(ci, 0)) * scale,
			       json_number_value(json_array_get(ci, 1)) * scale, unit);
		printf(", CV %.1f%%, %lld samples\n",
		       json_number_value(json_object_get(w, "cv")) * 100,
		       (long long)json_integer_value(json_object_get(w, "n")));
		json_t *sim = json_object_get(b, "sim");
		json_t *ir = json_object_get(sim, "instructions");
		if (json_is_object(ir))
		{
			printf("    simulated: %.6g instructions (CV %.3f%% over %lld runs)",
			       json_number_value(json_object_get(ir, "p50")),
			       json_number_value(json_object_get(ir, "cv")) * 100,
			       (long long)json_integer_value(json_object_get(ir, "n")));
			json_t *cy = json_object_get(sim, "est_cycles");
			if (json_is_object(cy))
				printf(", est. cycles %.6g",
				       json_number_value(json_object_get(cy, "p50")));
			printf("\n");
		}
		else if (json_is_string(json_object_get(sim, "why")))
			printf("    simulated: %s\n", json_string_value(json_object_get(sim, "why")));
		json_t *dec = json_object_get(b, "decides");
		if (json_is_object(dec))
			printf("    decides: %s (%s)\n",
			       json_string_value(json_object_get(dec, "dimension")),
			       json_string_value(json_object_get(dec, "why")));
	}
	json_decref(doc);
}

/* Progress of baseline and try on a terminal's stderr: the phase, then the
 * running benchmark's runs with an ETA, one line redrawn in place. */
struct loop_progress {
	struct pl_style st;
	double last;
	int drawn;
};

static void loop_phase(void *arg, const char *what)
{
	struct loop_progress *lp = arg;
	if (lp->drawn)
		pl_progress_clear(stderr);
	fprintf(stderr, "perfloop: %s ...", what);
	fflush(stderr);
	lp->drawn = 1;
}

static void loop_runs(void *arg, const struct pl_bench *b, size_t index, int event)
{
	(void)index;
	struct loop_progress *lp = arg;
	double t = pl_now_s();
	if (event != PL_PROGRESS_END && t - lp->last < 0.1)
		return;
	lp->last = t;
	size_t total = b->target ? b->target : b->n;
	double eta = -1;
	char extra[64] = "warming up", tb[32];
	if (event != PL_PROGRESS_WARMUP && b->n > 0) {
		double med = pl_bench_current_median(b);
		snprintf(extra, sizeof(extra), "median %s", pl_fmt_time(tb, sizeof(tb), med));
		eta = total > b->n ? (double)(total - b->n) * med : 0;
	}
	if (lp->drawn)
		pl_progress_clear(stderr);
	pl_progress_draw(stderr, &lp->st, b->name, b->n, total ? total : 1, eta, extra);
	fflush(stderr);
	lp->drawn = 1;
}

static void loop_progress_start(struct loop_progress *lp)
{
	memset(lp, 0, sizeof(*lp));
	if (!isatty(STDERR_FILENO))
		return;
	pl_style_detect(&lp->st, stderr);
	struct pl_loop_progress p = {.runs = loop_runs, .phase = loop_phase, .arg = lp};
	pl_loop_set_progress(&p);
}

static void loop_progress_end(struct loop_progress *lp)
{
	if (lp->drawn)
		pl_progress_clear(stderr);
	lp->drawn = 0;
	pl_loop_set_progress(NULL);
}

static int open_repo(const char *dir, struct pl_git *g)
{
	struct pl_error err;
	if (pl_git_open(g, dir, &err) != PL_OK)
		return pl_die(PL_EXIT_USAGE, "%s", err.msg);
	return PL_EXIT_OK;
}

/* The loop's commands from perfloop.yaml: every benchmark when no --bench
 * was given, else each --bench that is one word naming a benchmark
 * replaced by its commands (the others kept as they are). bench and names
 * (room for all) are rewritten; the strings live in cmds and names_out. */
static int spec_commands(const struct pl_spec *sp, struct pl_loop_settings *s, const char **bench,
			 const char **names, struct pl_argv *cmds, struct pl_argv *names_out,
			 struct pl_error *err)
{
	const char *given[256], *given_names[256];
	size_t ng = s->nbench < 256 ? s->nbench : 256;
	memcpy(given, bench, ng * sizeof *given);
	for (size_t i = 0; i < ng; i++)
		given_names[i] = i < s->nnames ? names[i] : NULL;
	/* what comes from where: (spec benchmark or NULL, the given command) */
	const struct pl_spec_bench *from[256];
	size_t n = 0;
	if (ng == 0) {
		for (size_t i = 0; i < sp->nbench && n < 256; i++) {
			from[n] = &sp->bench[i];
			given[n++] = NULL;
		}
	} else {
		for (size_t i = 0; i < ng; i++)
			from[n++] = strpbrk(given[i], " \t/'\"{") ? NULL : pl_spec_get(sp, given[i]);
	}
	int rc = PL_OK;
	/* expand first (the argv vectors may move while they grow) */
	for (size_t i = 0; i < n && rc == PL_OK; i++) {
		if (from[i])
			rc = pl_spec_commands(from[i], cmds, names_out, err);
		else if (pl_argv_push(cmds, given[i], strlen(given[i])) ||
			 pl_argv_push(names_out, given_names[i] ? given_names[i] : "",
				      given_names[i] ? strlen(given_names[i]) : 0))
			rc = pl_error_set(err, PL_ENOMEM, "out of memory");
	}
	if (rc != PL_OK)
		return rc;
	if (cmds->n > 255)
		return pl_error_set(err, PL_EINPUT, "%s: more than 255 commands to measure",
				    sp->path);
	/* one run measures them all: the most warm-up and runs any asks for */
	int metric_given = s->metric != NULL; /* --metric wins over the file's */
	for (size_t i = 0; i < n; i++)
		if (from[i]) {
			if (from[i]->warmup > s->warmup)
				s->warmup = from[i]->warmup;
			if (from[i]->min_runs > s->min_runs)
				s->min_runs = from[i]->min_runs;
			/* ... and one number the program reports, read from all */
			if (metric_given) {
				/* the option's number, whatever the file says */
			} else if (from[i]->metric && !s->metric) {
				s->metric = from[i]->metric;
				s->metric_name = from[i]->metric_name;
				s->metric_higher = from[i]->higher_is_better;
			} else if (from[i]->metric && strcmp(from[i]->metric, s->metric) != 0) {
				return pl_error_set(err, PL_EINPUT,
						    "%s: benchmarks.%s.metric: one loop reads one "
						    "number; '%s' differs from '%s'",
						    sp->path, from[i]->name, from[i]->metric,
						    s->metric);
			}
		}
	for (size_t i = 0; i < cmds->n; i++) {
		bench[i] = cmds->v[i];
		names[i] = names_out->v[i][0] ? names_out->v[i] : NULL;
	}
	/* names: every command named when any is (the loop pairs them in order) */
	s->nbench = cmds->n;
	s->nnames = 0;
	for (size_t i = 0; i < cmds->n; i++)
		if (names[i])
			s->nnames = i + 1;
	for (size_t i = 0; i < s->nnames; i++)
		if (!names[i])
			names[i] = bench[i];
	return PL_OK;
}

int cmd_baseline(int argc, char **argv, const struct pl_ctx *ctx)
{
	static const struct option longopts[] = {
	    {"bench", required_argument, NULL, 'b'},
	    {"name", required_argument, NULL, 'n'},
	    {"suite", required_argument, NULL, 's'},
	    {"runs", required_argument, NULL, 'r'},
	    {"max-iterations", required_argument, NULL, 'I'},
	    {"min-gain", required_argument, NULL, 'g'},
	    {"ledger", required_argument, NULL, 'l'},
	    {"timeout", required_argument, NULL, 't'},
	    {"batch", required_argument, NULL, 'k'},
	    {"sim", required_argument, NULL, 'S'},
	    {"metric", required_argument, NULL, 1001},
	    {"metric-name", required_argument, NULL, 1002},
	    {"higher-is-better", no_argument, NULL, 1003},
	    {"help", no_argument, NULL, 'h'},
	    {NULL, 0, NULL, 0},
	};
	/* room for perfloop.yaml's commands too (spec_commands: up to 255) */
	const char **bench = calloc((size_t)argc + 257, sizeof(char *));
	const char **names = calloc((size_t)argc + 257, sizeof(char *));
	struct pl_loop_settings s = {.bench = bench,
				     .names = names,
				     .max_iterations = 3,
				     .min_gain = 0.05,
				     .warmup = -1};
	const char *dir = ".";
	if (!bench || !names) {
		free(bench);
		free(names);
		return pl_die(PL_EXIT_INTERNAL, "out of memory");
	}
	struct pl_spec spec = {0};
	struct pl_argv scmds = {0}, snames = {0};
	int have_spec = 0, gain_given = 0, iter_given = 0;
	int c, rc = PL_EXIT_USAGE;
	optind = 1;
	opterr = 0;
	while ((c = getopt_long(argc, argv, ":b:n:r:C:h", longopts, NULL)) != -1) {
		char *end;
		switch (c) {
		case 'b':
			bench[s.nbench++] = optarg;
			break;
		case 'n':
			names[s.nnames++] = optarg;
			break;
		case 's':
			s.suite = optarg;
			break;
		case 'r':
			s.runs = (int)strtol(optarg, &end, 10);
			if (*end || s.runs < 3) {
				pl_die(PL_EXIT_USAGE,
				       "option '--runs': expected an integer >= 3, got '%s'",
				       optarg);
				goto done;
			}
			break;
		case 'I':
			iter_given = 1;
			s.max_iterations = (int)strtol(optarg, &end, 10);
			if (*end || s.max_iterations < 1) {
				pl_die(
				    PL_EXIT_USAGE,
				    "option '--max-iterations': expected an integer >= 1, got '%s'",
				    optarg);
				goto done;
			}
			break;
		case 'g':
			gain_given = 1;
			if (pl_parse_share(optarg, 0, &s.min_gain) < 0 || s.min_gain >= 1) {
				pl_die(PL_EXIT_USAGE,
				       "option '--min-gain': expected a fraction (0.05) or a "
				       "percentage (5%%) below 100%%, got '%s'",
				       optarg);
				goto done;
			}
			break;
		case 'l':
			s.ledger = optarg;
			break;
		case 'k':
			s.batch_auto = !strcmp(optarg, "auto");
			if ((s.batch = pl_bench_parse_batch(optarg)) < 0) {
				pl_die(PL_EXIT_USAGE,
				       "option '--batch': expected auto or an integer 1..1000000, "
				       "got '%s'",
				       optarg);
				goto done;
			}
			break;
		case 1001:
			s.metric = optarg;
			break;
		case 1002:
			s.metric_name = optarg;
			break;
		case 1003:
			s.metric_higher = 1;
			break;
		case 'S':
			if ((s.sim = pl_sim_parse_mode(optarg)) < 0) {
				pl_die(PL_EXIT_USAGE,
				       "option '--sim': expected auto, off, instructions or cycles, got "
				       "'%s'",
				       optarg);
				goto done;
			}
			break;
		case 't':
			s.timeout_s = strtod(optarg, &end);
			if (*end || !(s.timeout_s > 0 && s.timeout_s < 1e7)) {
				pl_die(PL_EXIT_USAGE,
				       "option '--timeout': expected seconds > 0, got '%s'", optarg);
				goto done;
			}
			break;
		case 'C':
			dir = optarg;
			break;
		case 'h':
			fputs(cmd_baseline_usage, stdout);
			rc = PL_EXIT_OK;
			goto done;
		case ':':
		default:
			pl_bad_option(c, argv, "baseline");
			goto done;
		}
	}
	if (optind < argc) {
		pl_die(PL_EXIT_USAGE, "unexpected argument '%s' (benchmarks go after --bench)",
		       argv[optind]);
		goto done;
	}
	if (chdir(dir) != 0) {
		rc = pl_die(PL_EXIT_USAGE, "cannot enter '%s': %s", dir, strerror(errno));
		goto done;
	}
	/* perfloop.yaml: its benchmarks (all, or those --bench names), suite,
	 * ledger and policy where the options do not say */
	char spath[4200];
	if (pl_spec_find(spath, sizeof spath) == 0) {
		struct pl_error serr = {{0}};
		if (pl_spec_load(spath, &spec, &serr) != PL_OK) {
			rc = pl_die(PL_EXIT_USAGE, "%s", serr.msg);
			goto done;
		}
		have_spec = 1;
		if (spec_commands(&spec, &s, bench, names, &scmds, &snames, &serr) != PL_OK) {
			rc = pl_die(PL_EXIT_USAGE, "%s", serr.msg);
			goto done;
		}
		if (!s.suite)
			s.suite = spec.suite;
		if (!s.ledger)
			s.ledger = spec.ledger;
		if (!gain_given && !isnan(spec.min_gain))
			s.min_gain = spec.min_gain;
		if (!iter_given && spec.max_iterations > 0)
			s.max_iterations = spec.max_iterations;
	}
	if (s.nbench == 0) {
		pl_die(PL_EXIT_USAGE, "no benchmark: give --bench 'CMD' (or name them in "
				      "perfloop.yaml)");
		goto done;
	}
	if ((s.metric_name || s.metric_higher) && !s.metric) {
		pl_die(PL_EXIT_USAGE, "option '--%s' needs --metric",
		       s.metric_name ? "metric-name" : "higher-is-better");
		goto done;
	}
	struct pl_git g;
	if ((rc = open_repo(".", &g)) != PL_EXIT_OK)
		goto done;
	struct pl_error err;
	if (pl_loop_lock(&g, &err) != PL_OK) {
		rc = pl_die(PL_EXIT_USAGE, "%s", err.msg);
		goto done;
	}
	json_t *state;
	struct loop_progress lp;
	loop_progress_start(&lp);
	int lrc = pl_loop_baseline(&g, &s, ctx->interrupted, &state, &err);
	loop_progress_end(&lp);
	if (lrc == PL_ENOTSUP) {
		rc = pl_die(PL_EXIT_NEGATIVE, "%s", err.msg);
		goto done;
	}
	if (lrc != PL_OK) {
		rc = pl_die(pl_exit_code(lrc), "%s", err.msg);
		goto done;
	}
	printf("baseline of %zu benchmark%s stored in .perfloop/baseline.json, checkpoint taken:\n",
	       s.nbench, s.nbench == 1 ? "" : "s");
	print_baseline_medians(&g);
	printf("change one thing, then run 'perfloop try -m MESSAGE'\n");
	json_decref(state);
	rc = PL_EXIT_OK;
done:
	free(bench);
	free(names);
	pl_argv_release(&scmds);
	pl_argv_release(&snames);
	if (have_spec)
		pl_spec_release(&spec);
	return rc;
}

int cmd_try(int argc, char **argv, const struct pl_ctx *ctx)
{
	static const struct option longopts[] = {
	    {"message", required_argument, NULL, 'm'},
	    {"continue", no_argument, NULL, 'c'},
	    {"finish", no_argument, NULL, 'f'},
	    {"help", no_argument, NULL, 'h'},
	    {NULL, 0, NULL, 0},
	};
	const char *message = NULL, *dir = ".";
	int cont = 0, finish = 0, c;
	optind = 1;
	opterr = 0;
	while ((c = getopt_long(argc, argv, ":m:C:h", longopts, NULL)) != -1) {
		switch (c) {
		case 'm':
			message = optarg;
			break;
		case 'c':
			cont = 1;
			break;
		case 'f':
			finish = 1;
			break;
		case 'C':
			dir = optarg;
			break;
		case 'h':
			fputs(cmd_try_usage, stdout);
			return PL_EXIT_OK;
		case ':':
		default:
			return pl_bad_option(c, argv, "try");
		}
	}
	if (optind < argc)
		return pl_die(PL_EXIT_USAGE, "unexpected argument '%s'", argv[optind]);
	struct pl_git g;
	int rc = open_repo(dir, &g);
	if (rc != PL_EXIT_OK)
		return rc;
	struct pl_error err;
	if (pl_loop_lock(&g, &err) != PL_OK)
		return pl_die(PL_EXIT_USAGE, "%s", err.msg);
	if (finish) {
		char note[1200];
		int frc = pl_loop_recover(&g, note, sizeof(note), &err);
		if (frc != PL_OK)
			return pl_die(pl_exit_code(frc), "%s", err.msg);
		printf("%s\n", note[0] ? note : "no interrupted turn");
		return PL_EXIT_OK;
	}
	struct pl_try_outcome o;
	struct loop_progress lp;
	loop_progress_start(&lp);
	int lrc = pl_loop_try(&g, message, cont, ctx->interrupted, &o, &err);
	loop_progress_end(&lp);
	if (o.recovered[0])
		fprintf(stderr, "perfloop: %s\n", o.recovered);
	if (lrc == PL_ENOTSUP) {
		pl_try_outcome_release(&o);
		printf("%s\n", err.msg);
		return PL_EXIT_NEGATIVE;
	}
	if (lrc != PL_OK) {
		pl_try_outcome_release(&o);
		return pl_die(pl_exit_code(lrc), "%s", err.msg);
	}
	const struct pl_verdict *v = &o.verdict;
	if (o.failure[0])
		printf("the change broke a benchmark: %s\n", o.failure);
	if (v->target_why[0])
		printf("  %s\n", v->target_why);
	for (int i = 0; i < v->nrules; i++)
		printf("  %-4s %-19s %s\n", v->rule[i].passed ? "ok" : "FAIL", v->rule[i].name,
		       v->rule[i].detail);
	printf("verdict: %s (on %s)\n", pl_verdict_name(o.kind), v->target);
	if (o.unkept[0])
		printf("neither committed nor reverted (untracked and larger than %.0f MiB: the "
		       "checkpoint kept no copy): %s\n",
		       (double)pl_git_max_stored() / 1048576.0, o.unkept);
	if (o.kind == PL_ACCEPT) {
		printf("committed %.12s: %s of '%s' %+.1f%%; this run is the new baseline\n",
		       o.commit, v->target, v->bench, o.gain * 100);
		if (o.excluded[0])
			printf("not committed (ignored by git now or at the checkpoint): %s\n",
			       o.excluded);
		if (o.unmade[0])
			printf("not committed (made or changed while measuring, not by the "
			       "change): %s\n",
			       o.unmade);
		if (o.warning[0])
			fprintf(stderr, "perfloop: warning: %s\n", o.warning);
	} else {
		printf("reverted %zu file%s", o.reverted.nrestored,
		       o.reverted.nrestored == 1 ? "" : "s");
		for (size_t i = 0; i < o.reverted.nrestored; i++) {
			char *q = pl_git_quote(o.reverted.restored[i]); /* never raw bytes */
			printf("%s%s", i ? ", " : ": ", q ? q : "?");
			free(q);
		}
		printf("\n");
		if (o.reverted.ncreated) {
			printf("created by the change (left in place; remove them if unwanted):\n");
			for (size_t i = 0; i < o.reverted.ncreated; i++) {
				char *q = pl_git_quote(o.reverted.created[i]);
				printf("  %s\n", q ? q : "?");
				free(q);
			}
		}
		if (o.evidence[0])
			printf("evidence kept in %s and the ledger\n", o.evidence);
		if (o.patch[0])
			printf("the change is kept: 'git apply %s' (from the top of the work "
			       "tree) applies it again\n",
			       o.patch);
	}
	if (o.done)
		printf("the loop is done: %s; 'perfloop try --continue' goes on\n", o.why_done);
	int code = o.kind == PL_ACCEPT ? PL_EXIT_OK : PL_EXIT_NEGATIVE;
	pl_try_outcome_release(&o);
	return code;
}

int cmd_status(int argc, char **argv, const struct pl_ctx *ctx)
{
	(void)ctx;
	static const struct option longopts[] = {
	    {"json", no_argument, NULL, 'j'},
	    {"help", no_argument, NULL, 'h'},
	    {NULL, 0, NULL, 0},
	};
	const char *dir = ".";
	int json = 0, c;
	optind = 1;
	opterr = 0;
	while ((c = getopt_long(argc, argv, ":C:h", longopts, NULL)) != -1) {
		switch (c) {
		case 'C':
			dir = optarg;
			break;
		case 'j':
			json = 1;
			break;
		case 'h':
			fputs(cmd_status_usage, stdout);
			return PL_EXIT_OK;
		case ':':
		default:
			return pl_bad_option(c, argv, "status");
		}
	}
	struct pl_git g;
	int rc = open_repo(dir, &g);
	if (rc != PL_EXIT_OK)
		return rc;
	struct pl_error err;
	json_t *state;
	if (pl_loop_state(&g, &state, &err) != PL_OK)
		return pl_die(PL_EXIT_USAGE, "%s", err.msg);
	char pending[400];
	int has_pending = pl_loop_pending(&g, pending, sizeof(pending));
	if (has_pending)
		json_object_set_new(state, "interrupted_turn", json_string(pending));
	if (json) {
		char *text = json_dumps(state, JSON_INDENT(1));
		if (text)
			puts(text);
		free(text);
		json_decref(state);
		return PL_EXIT_OK;
	}
	size_t i;
	json_t *x;
	printf("baseline:");
	json_array_foreach(json_object_get(state, "benchmarks"), i, x)
	{
		printf("%s %s (`%s`)", i ? "," : "", json_string_value(json_object_get(x, "name")),
		       json_string_value(json_object_get(x, "command")));
	}
	printf("\n");
	print_baseline_medians(&g);
	printf("suite: %s\n", json_is_string(json_object_get(state, "suite"))
				    ? json_string_value(json_object_get(state, "suite"))
				    : "(none)");
	printf("iterations: %lld of %lld\n",
	       (long long)json_integer_value(json_object_get(state, "iteration")),
	       (long long)json_integer_value(json_object_get(state, "max_iterations")));
	if (has_pending)
		printf("interrupted: %s\n", pending);
	json_array_foreach(json_object_get(state, "turns"), i, x)
	{
		json_t *commit = json_object_get(x, "commit"), *on = json_object_get(x, "measured_on");
		printf("  %lld: %s %+.1f%%%s%.12s",
		       (long long)json_integer_value(json_object_get(x, "iteration")),
		       json_string_value(json_object_get(x, "verdict")),
		       json_number_value(json_object_get(x, "gain")) * 100,
		       commit ? " commit " : "", commit ? json_string_value(commit) : "");
		/* the ledger's "commit" is the one it was measured on */
		if (json_is_string(on))
			printf("%smeasured on %.12s (the ledger's commit)", commit ? ", " : " ",
			       json_string_value(on));
		json_t *target = json_object_get(x, "target");
		if (json_is_string(target))
			printf(", on %s", json_string_value(target));
		printf("\n");
		json_t *patch = json_object_get(x, "patch");
		if (json_is_string(patch))
			printf("     its change: 'git apply %s'\n", json_string_value(patch));
	}
	json_decref(state);
	return PL_EXIT_OK;
}
