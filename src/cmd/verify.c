/*
 * perfloop verify: compare a before and an after summary under the
 * acceptance rules (decide/verdict.c), optionally run the suite, write the
 * verdict and append it to the ledger.
 */
#include <errno.h>
#include <getopt.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cmd.h"
#include "fsio.h"
#include "ledger.h"
#include "render.h"
#include "gitops.h"
#include "spawn.h"
#include "summary.h"
#include "verdict.h"
#include "words.h"

const char cmd_verify_usage[] =
    "usage: perfloop verify --before B.json --after A.json [--target DIMENSION]\n"
    "                       [--suite 'CMD' | --suite-exit-code N] [--min-gain 0.05]\n"
    "                       [--bench NAME] [--ledger FILE] [--out verdict.json]\n"
    "\n"
    "Decide whether a change is a quantified win. Accept only when all hold:\n"
    "  target_improved     the target dimension's p50 improved by >= --min-gain\n"
    "  timing_not_noisy    neither run's timing is N/A (CV above 0.05); for a\n"
    "                      simulated target, target_not_noisy: its own CV\n"
    "  enough_samples      both runs have at least 3 samples\n"
    "  fingerprint_match   CPU model, kernel, governor, SMT and Python version equal\n"
    "  same_spec           a perfloop.yaml benchmark measured with the same settings\n"
    "  suite_green         the functional suite exited 0\n"
    "  no_tier_regression  no other scored dimension got worse by a tier or more\n"
    "The verdict is accept, reject (a rule other than the gain failed, or the\n"
    "target got worse by at least --min-gain), or no_feasible_win (valid\n"
    "evidence, nothing regressed, but the gain is below --min-gain).\n"
    "\n"
    "Options:\n"
    "      --before FILE       the summary before the change (perfloop.bench/1)\n"
    "  -a, --after FILE        the summary after the change\n"
    "      --bench NAME        which benchmark of the summaries (default: the first)\n"
    "  -t, --target DIM        the dimension to improve (default: the target\n"
    "                          perfloop.yaml gives the benchmark, else auto:\n"
    "                          timing where both runs' wall time is within the\n"
    "                          noise gate, else sim_cycles or sim_instructions\n"
    "                          where both runs have it (bench --sim))\n"
    "      --suite 'CMD'       run the functional suite (split into words, no\n"
    "                          shell: use \"sh -c '...'\" for shell syntax); its\n"
    "                          output goes to stderr\n"
    "      --suite-exit-code N take the suite's exit status as given\n"
    "      --suite-timeout S   kill the suite after S seconds: a failed suite\n"
    "                          (default 2400, the loop's)\n"
    "      --min-gain X        minimum improvement: 0.05 or 5% (default)\n"
    "      --ledger FILE       append the verdict as one JSON line (atomically);\n"
    "                          conventionally docs/perf/baseline_ledger.jsonl\n"
    "  -o, --out FILE          write the verdict (perfloop.verdict/1)\n"
    "      --json              print the verdict on stdout (the rules go to stderr)\n"
    "      --quiet             print nothing but errors\n"
    "  -h, --help              this text\n"
    "\n"
    "Exit status: 0 accept, 1 reject or no feasible win, 2 bad input (nothing\n"
    "is written then).\n"
    "\n"
    "Examples:\n"
    "  perfloop verify --before before.json --after after.json --suite 'make test'\n"
    "  perfloop verify --before before.json --after after.json --suite-exit-code 0 \\\n"
    "      --target memory --ledger docs/perf/baseline_ledger.jsonl -o verdict.json\n";

enum {
	OPT_BENCH = 256,
	OPT_SUITE,
	OPT_SUITE_EXIT,
	OPT_SUITE_TIMEOUT,
	OPT_MIN_GAIN,
	OPT_LEDGER,
	OPT_JSON,
	OPT_QUIET
};

static const struct option longopts[] = {
    {"before", required_argument, NULL, 'b'},
    {"after", required_argument, NULL, 'a'},
    {"bench", required_argument, NULL, OPT_BENCH},
    {"target", required_argument, NULL, 't'},
    {"suite", required_argument, NULL, OPT_SUITE},
    {"suite-exit-code", required_argument, NULL, OPT_SUITE_EXIT},
    {"suite-timeout", required_argument, NULL, OPT_SUITE_TIMEOUT},
    {"min-gain", required_argument, NULL, OPT_MIN_GAIN},
    {"ledger", required_argument, NULL, OPT_LEDGER},
    {"out", required_argument, NULL, 'o'},
    {"json", no_argument, NULL, OPT_JSON},
    {"quiet", no_argument, NULL, OPT_QUIET},
    {"help", no_argument, NULL, 'h'},
    {NULL, 0, NULL, 0},
};

static int run_suite(const char *cmd, double timeout_s, const struct pl_ctx *ctx,
		     int *exit_code)
{
	struct pl_error err;
	int rc = pl_spawn_suite(cmd, timeout_s, ctx->interrupted, exit_code, &err);
	if (rc == PL_ENOEXEC || rc == PL_EINPUT)
		return pl_die(PL_EXIT_USAGE, "option '--suite': %s", err.msg);
	if (rc == PL_EINTR)
		return pl_die(PL_EXIT_INTERRUPTED, "interrupted while the suite ran");
	if (rc != PL_OK)
		return pl_die(PL_EXIT_INTERNAL, "%s", err.msg);
	return PL_EXIT_OK;
}

int cmd_verify(int argc, char **argv, const struct pl_ctx *ctx)
{
	struct pl_verify_input in = {.min_gain = 0.05};
	const char *suite = NULL, *ledger = NULL, *out = NULL, *suite_exit = NULL;
	/* a suite that hangs must not hang the verdict: the loop's limit */
	double suite_timeout = PL_SUITE_TIMEOUT_DEFAULT;
	int json_out = 0, quiet = 0, rc = PL_EXIT_USAGE, c;
	struct pl_error err = {{0}};
	struct pl_verdict v = {0};
	json_t *doc = NULL;
	optind = 1;
	opterr = 0;
	while ((c = getopt_long(argc, argv, ":b:a:t:o:h", longopts, NULL)) != -1) {
		switch (c) {
		case 'b':
			in.before_path = optarg;
			break;
		case 'a':
			in.after_path = optarg;
			break;
		case OPT_BENCH:
			in.bench = optarg;
			break;
		case 't':
			in.target = optarg;
			break;
		case OPT_SUITE:
			suite = optarg;
			break;
		case OPT_SUITE_EXIT:
			suite_exit = optarg;
			break;
		case OPT_SUITE_TIMEOUT: {
			char *end;
			errno = 0;
			suite_timeout = strtod(optarg, &end);
			if (errno || *end || end == optarg || !(suite_timeout > 0) ||
			    suite_timeout > 1e7) {
				pl_die(PL_EXIT_USAGE,
				       "option '--suite-timeout': expected seconds > 0, got '%s'",
				       optarg);
				goto done;
			}
			break;
		}
		case OPT_MIN_GAIN: {
			if (pl_parse_share(optarg, 0, &in.min_gain) < 0 || in.min_gain >= 1) {
				pl_die(PL_EXIT_USAGE,
				       "option '--min-gain': expected a fraction (0.05) or a "
				       "percentage (5%%) below 100%%, got '%s'",
				       optarg);
				goto done;
			}
			break;
		}
		case OPT_LEDGER:
			ledger = optarg;
			break;
		case 'o':
			out = optarg;
			break;
		case OPT_JSON:
			json_out = 1;
			break;
		case OPT_QUIET:
			quiet = 1;
			break;
		case 'h':
			fputs(cmd_verify_usage, stdout);
			rc = PL_EXIT_OK;
			goto done;
		case ':':
		default:
			pl_bad_option(c, argv, "verify");
			goto done;
		}
	}
	if (optind < argc) {
		pl_die(PL_EXIT_USAGE, "unexpected argument '%s'", argv[optind]);
		goto done;
	}
	if (!in.before_path || !in.after_path) {
		pl_die(PL_EXIT_USAGE, "give both --before and --after summaries");
		goto done;
	}
	if (suite && suite_exit) {
		pl_die(PL_EXIT_USAGE, "give --suite or --suite-exit-code, not both");
		goto done;
	}
	if (suite_exit) {
		char *end;
		errno = 0;
		long x = strtol(suite_exit, &end, 10);
		if (errno || *end || end == suite_exit || x < 0 || x > 255) {
			pl_die(
			    PL_EXIT_USAGE,
			    "option '--suite-exit-code': expected an exit status 0..255, got '%s'",
			    suite_exit);
			goto done;
		}
		in.suite_given = 1;
		in.suite_exit = (int)x;
		in.suite_what = "exit code given";
	}
	if (pl_summary_load(in.before_path, &in.before, &err) != PL_OK ||
	    pl_summary_load(in.after_path, &in.after, &err) != PL_OK) {
		pl_die(PL_EXIT_USAGE, "%s", err.msg);
		goto done;
	}
	/* the target perfloop.yaml names for the benchmark, unless --target */
	if (!in.target)
		in.target = json_string_value(json_object_get(
		    json_object_get(json_object_get(in.before, "spec"), "settings"), "target"));
	/* Check that the summaries can be compared before spending the suite's
	 * time; the real evaluation follows with its result. */
	if (pl_verify(&in, &v, &err) != PL_OK) {
		pl_die(PL_EXIT_USAGE, "%s", err.msg);
		goto done;
	}
	pl_verdict_release(&v);
	if (suite) {
		int code = -1;
		int src = run_suite(suite, suite_timeout, ctx, &code);
		if (src != PL_EXIT_OK) {
			rc = src;
			goto done;
		}
		in.suite_given = 1;
		in.suite_exit = code;
		in.suite_what = suite;
	}
	if (pl_verify(&in, &v, &err) != PL_OK) {
		pl_die(PL_EXIT_USAGE, "%s", err.msg);
		goto done;
	}
	doc = pl_verdict_to_json(&v, &in);
	if (!doc) {
		rc = pl_die(PL_EXIT_INTERNAL, "cannot build the verdict");
		goto done;
	}
	/* -o appears only when the ledger line (if asked for) was written: a
	 * failure leaves neither */
	struct pl_fsio_staged staged = {0};
	if (out) {
		char *text = pl_json_text(doc);
		int src = text ? pl_fsio_stage(out, text, strlen(text), &staged, &err) : PL_ENOMEM;
		free(text);
		if (src != PL_OK) {
			pl_die(PL_EXIT_USAGE, "%s", err.msg);
			goto done;
		}
	}
	if (ledger) {
		char commit[64];
		pl_git_head_of(".", commit, sizeof(commit));
		json_t *line = pl_verdict_ledger_entry(&v, commit);
		int lrc = line ? pl_ledger_append(ledger, line, &err) : PL_ENOMEM;
		json_decref(line);
		if (lrc != PL_OK) {
			pl_fsio_discard(&staged);
			pl_die(PL_EXIT_USAGE, "%s", err.msg);
			goto done;
		}
	}
	if (out && pl_fsio_commit(&staged, &err) != PL_OK) {
		pl_die(PL_EXIT_USAGE, "%s", err.msg);
		goto done;
	}
	if (!quiet) {
		FILE *h = json_out ? stderr : stdout;
		struct pl_style st;
		pl_style_detect(&st, h);
		char fb[48], fa[48];
		pl_fmt_dim(fb, sizeof fb, v.target, v.before_p50);
		pl_fmt_dim(fa, sizeof fa, v.target, v.after_p50);
		fprintf(h, "%s%s%s: %s p50 %s -> %s (%+.1f%%)\n", pl_c(&st, PL_BOLD), v.bench,
			pl_c(&st, PL_RESET), v.target, fb, fa, v.gain * 100);
		fprintf(h, "  %s%s%s\n", pl_c(&st, PL_DIM), v.target_why,
			pl_c(&st, PL_RESET));
		for (int i = 0; i < v.nrules; i++)
			fprintf(h, "  %s%-4s%s %-19s %s\n",
				pl_c(&st, v.rule[i].passed ? PL_GREEN : PL_RED),
				v.rule[i].passed ? "ok" : "FAIL", pl_c(&st, PL_RESET),
				v.rule[i].name, v.rule[i].detail);
		const char *col = v.kind == PL_ACCEPT	? PL_GREEN
				  : v.kind == PL_REJECT ? PL_RED
							: PL_YELLOW;
		fprintf(h, "verdict: %s%s%s\n", pl_c(&st, col), pl_verdict_name(v.kind),
			pl_c(&st, PL_RESET));
	}
	if (json_out) {
		char *text = pl_json_text(doc);
		if (text)
			fputs(text, stdout);
		free(text);
	}
	rc = v.kind == PL_ACCEPT ? PL_EXIT_OK : PL_EXIT_NEGATIVE;
done:
	json_decref(doc);
	pl_verdict_release(&v);
	json_decref(in.before);
	json_decref(in.after);
	return rc;
}
