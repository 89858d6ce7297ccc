/*
 * perfloop steps: the data vs compute split of a training loop from the
 * per-step timings it already logs (profile/steps.c).
 */
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cmd.h"
#include "findings.h"
#include "fsio.h"
#include "steps.h"

const char cmd_steps_usage[] =
    "usage: perfloop steps [OPTIONS] FILE\n"
    "\n"
    "Is the training step waiting for data or computing? Reads the per-step\n"
    "timings a training loop logs, as JSON lines ({\"data_time\": 0.01,\n"
    "\"step_time\": 0.12} per line) or CSV with a header row, and reports the\n"
    "share of the time spent waiting for data, per-step distributions, and the\n"
    "warm-up steps apart. A data share above 0.3 is the finding\n"
    "ml.data-loading-bound (level 3, I/O).\n"
    "\n"
    "Options:\n"
    "      --data NAME      the data-wait field (default data_time)\n"
    "      --total NAME     the whole step, data wait included (default: the first\n"
    "                       of step_time, batch_time, iter_time the log has)\n"
    "      --compute NAME   or: the step without the data wait (total = data +\n"
    "                       compute)\n"
    "      --warmup N       first steps reported apart (default 3, 1 under 20\n"
    "                       steps, 0 under 6)\n"
    "      --format FMT     text (default) or json (perfloop.steps/1)\n"
    "  -o, --out FILE       write the report there instead of stdout\n"
    "      --findings FILE  write the finding (perfloop.findings/1) for select\n"
    "  -h, --help           this text\n"
    "\n"
    "Exit status: 0 ok, 2 bad usage or a bad log (file, line and field named).\n"
    "\n"
    "Examples:\n"
    "  perfloop steps train_log.jsonl\n"
    "  perfloop steps --total batch_time metrics.csv --findings steps.findings.json\n"
    "  perfloop steps --compute fwd_bwd_time --data wait_time --format json log.jsonl\n";

enum { OPT_DATA = 256, OPT_TOTAL, OPT_COMPUTE, OPT_WARMUP, OPT_FORMAT, OPT_FINDINGS };

static void text(FILE *f, const struct pl_steps *s, const char *path)
{
	fprintf(f, "perfloop steps: %s (%zu steps, %s; %zu of warm-up apart)\n", path, s->n,
		s->format_csv ? "CSV" : "JSON lines", s->warmup);
	fprintf(f, "  data wait: %.1f%% of the step time (%.3f s of %.3f s)\n\n",
		100 * s->data_share, s->data.sum, s->total.sum);
	fprintf(f, "  %-12s %10s %10s %10s %10s\n", "per step", "p50", "p90", "max", "total");
	const struct {
		const char *name;
		const struct pl_steps_dist *d;
	} rows[] = {{"data wait", &s->data}, {"compute", &s->compute}, {"step", &s->total}};
	for (size_t i = 0; i < 3; i++)
		fprintf(f, "  %-12s %9.4fs %9.4fs %9.4fs %9.3fs\n", rows[i].name, rows[i].d->p50,
			rows[i].d->p90, rows[i].d->max, rows[i].d->sum);
	if (s->warmup)
		fprintf(f, "\n  warm-up: %zu step%s, %.3f s, data wait %.1f%%, slowest %.4f s\n",
			s->warmup, s->warmup == 1 ? "" : "s", s->w_total.sum, 100 * s->w_data_share,
			s->w_total.max);
	if (s->data_share > 0.3)
		fprintf(f,
			"\n  finding ml.data-loading-bound: the step waits for data %.0f%% of the "
			"time (above 30%%):\n  num_workers > 0, pin_memory=True, "
			"persistent_workers=True, prefetch_factor; faster steps will not help "
			"before this\n",
			100 * s->data_share);
}

int cmd_steps(int argc, char **argv, const struct pl_ctx *ctx)
{
	(void)ctx;
	static const struct option longopts[] = {
	    {"data", required_argument, NULL, OPT_DATA},
	    {"total", required_argument, NULL, OPT_TOTAL},
	    {"compute", required_argument, NULL, OPT_COMPUTE},
	    {"warmup", required_argument, NULL, OPT_WARMUP},
	    {"format", required_argument, NULL, OPT_FORMAT},
	    {"out", required_argument, NULL, 'o'},
	    {"findings", required_argument, NULL, OPT_FINDINGS},
	    {"help", no_argument, NULL, 'h'},
	    {NULL, 0, NULL, 0},
	};
	struct pl_steps_opts o = {.warmup = -1};
	const char *out = NULL, *findings = NULL;
	int json = 0, c;
	optind = 1;
	opterr = 0;
	while ((c = getopt_long(argc, argv, ":o:h", longopts, NULL)) != -1) {
		switch (c) {
		case OPT_DATA:
			o.data_field = optarg;
			break;
		case OPT_TOTAL:
			o.total_field = optarg;
			break;
		case OPT_COMPUTE:
			o.compute_field = optarg;
			break;
		case OPT_WARMUP: {
			char *end;
			o.warmup = strtol(optarg, &end, 10);
			if (*end || end == optarg || o.warmup < 0 || o.warmup > 1000000)
				return pl_die(PL_EXIT_USAGE,
					      "option '--warmup': expected a count of steps, got '%s'",
					      optarg);
			break;
		}
		case OPT_FORMAT:
			if (pl_format_text_json(optarg, &json))
				return PL_EXIT_USAGE;
			break;
		case 'o':
			out = optarg;
			break;
		case OPT_FINDINGS:
			findings = optarg;
			break;
		case 'h':
			fputs(cmd_steps_usage, stdout);
			return PL_EXIT_OK;
		default:
			return pl_bad_option(c, argv, "steps");
		}
	}
	if (o.total_field && o.compute_field)
		return pl_die(PL_EXIT_USAGE, "give --total or --compute, not both");
	if (optind + 1 != argc)
		return pl_die(PL_EXIT_USAGE,
			      "expected one log file (see 'perfloop steps --help')");
	const char *path = argv[optind];
	struct pl_steps s;
	struct pl_error err = {0};
	int rc = pl_steps_read(path, &o, &s, &err);
	if (rc != PL_OK)
		return pl_die(pl_exit_code(rc), "%s", rc == PL_ENOMEM ? "out of memory" : err.msg);

	char *report = NULL;
	if (json) {
		json_t *doc = pl_steps_to_json(&s, path);
		report = doc ? pl_json_text(doc) : NULL;
		json_decref(doc);
	} else {
		size_t len = 0;
		FILE *m = open_memstream(&report, &len);
		if (m) {
			text(m, &s, path);
			fclose(m);
		}
	}
	if (!report)
		return pl_die(PL_EXIT_INTERNAL, "out of memory");
	if (findings) {
		struct pl_findings f = {0};
		if (pl_steps_findings(&s, path, &f) < 0) {
			pl_findings_release(&f);
			free(report);
			return pl_die(PL_EXIT_INTERNAL, "out of memory");
		}
		json_t *doc = pl_findings_doc("perfloop steps " PERFLOOP_VERSION, &f);
		pl_findings_release(&f);
		rc = doc ? pl_fsio_write_json(findings, doc, &err) : PL_ENOMEM;
		json_decref(doc);
		if (rc != PL_OK) {
			free(report);
			return pl_die(pl_exit_code(rc), "%s",
				      rc == PL_ENOMEM ? "out of memory" : err.msg);
		}
	}
	if (out) {
		rc = pl_fsio_write_atomic(out, report, strlen(report), &err);
		free(report);
		if (rc != PL_OK)
			return pl_die(pl_exit_code(rc), "%s", err.msg);
		return PL_EXIT_OK;
	}
	fputs(report, stdout);
	free(report);
	return PL_EXIT_OK;
}
