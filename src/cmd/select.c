/*
 * perfloop select: read findings, choose one candidate (decide/select.c),
 * write the candidate document.
 */
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cmd.h"
#include "fsio.h"
#include "select.h"

const char cmd_select_usage[] =
    "usage: perfloop select --findings FILE [--findings FILE...] [--exclude ID...]\n"
    "                       [--out FILE] [--explain]\n"
    "\n"
    "Choose exactly one finding to work on: a measured bottleneck of a training\n"
    "step first (data loading over 0.3 of the step, a straggler rank, a starved\n"
    "GPU), then the lowest optimization level (1 algorithm .. 8 caching), then\n"
    "severity, then measured impact (ratio), then confidence. A high-severity\n"
    "algorithmic finding closes the stop gate: only algorithmic findings stay\n"
    "eligible. Level 7 (compute: GPU offload, mixed precision, compiled\n"
    "kernels) is never chosen while a level 1-6 finding is open, nor when a\n"
    "measured data-loading share exceeds 0.3. A hot function in interpreter or\n"
    "framework machinery (imports, the autograd engine's entry, waits) is\n"
    "context, never the candidate.\n"
    "\n"
    "Options:\n"
    "      --findings FILE   a perfloop.findings/1 file (repeatable)\n"
    "  -x, --exclude ID      never choose this finding (repeatable; e.g. one\n"
    "                        already tried and rejected)\n"
    "  -o, --out FILE        also write the candidate document to FILE\n"
    "      --explain         say on stderr why each other finding was passed over\n"
    "  -h, --help            this text\n"
    "\n"
    "Output (stdout): {\"status\":\"ok\",\"candidate\":{id, path, metric_name,\n"
    "severity, ratio, stop_gate, level}, \"passed_over\":[{id, why}]} or\n"
    "{\"status\":\"no_candidates\"}.\n"
    "\n"
    "Exit status: 0 a candidate, 1 no candidates (a valid outcome), 2 bad input.\n"
    "\n"
    "Examples:\n"
    "  perfloop select --findings scan.json --findings profile.findings.json\n"
    "  perfloop select --findings scan.json --exclude PF-0a1b2c3d4e5f --explain -o candidate.json\n";

static const struct option longopts[] = {
    {"findings", required_argument, NULL, 'f'}, {"exclude", required_argument, NULL, 'x'},
    {"out", required_argument, NULL, 'o'},	{"explain", no_argument, NULL, 'e'},
    {"help", no_argument, NULL, 'h'},		{NULL, 0, NULL, 0},
};

int cmd_select(int argc, char **argv, const struct pl_ctx *ctx)
{
	(void)ctx;
	const char **files = calloc((size_t)argc, sizeof(char *));
	const char **ex = calloc((size_t)argc, sizeof(char *));
	size_t nfiles = 0, nex = 0;
	const char *out = NULL;
	int explain = 0, rc = PL_EXIT_USAGE, c;
	struct pl_findings f = {0};
	struct pl_selection s = {0};
	struct pl_error err = {{0}};
	json_t *doc = NULL;
	if (!files || !ex) {
		rc = pl_die(PL_EXIT_INTERNAL, "out of memory");
		goto done;
	}
	optind = 1;
	opterr = 0;
	while ((c = getopt_long(argc, argv, ":f:x:o:h", longopts, NULL)) != -1) {
		switch (c) {
		case 'f':
			files[nfiles++] = optarg;
			break;
		case 'x':
			ex[nex++] = optarg;
			break;
		case 'o':
			out = optarg;
			break;
		case 'e':
			explain = 1;
			break;
		case 'h':
			fputs(cmd_select_usage, stdout);
			rc = PL_EXIT_OK;
			goto done;
		case ':':
		default:
			pl_bad_option(c, argv, "select");
			goto done;
		}
	}
	if (optind < argc) {
		pl_die(PL_EXIT_USAGE, "unexpected argument '%s' (findings go after --findings)",
		       argv[optind]);
		goto done;
	}
	if (nfiles == 0) {
		pl_die(PL_EXIT_USAGE, "no findings: give --findings FILE");
		goto done;
	}
	for (size_t i = 0; i < nfiles; i++)
		if (pl_findings_load(files[i], &f, &err) != PL_OK) {
			pl_die(PL_EXIT_USAGE, "%s", err.msg);
			goto done;
		}
	if (pl_select(&f, ex, nex, &s) != PL_OK) {
		rc = pl_die(PL_EXIT_INTERNAL, "out of memory");
		goto done;
	}
	if (s.chosen < 0) {
		doc = json_pack("{s:s}", "status", "no_candidates");
	} else {
		const struct pl_finding *k = &f.v[s.chosen];
		json_t *passed = json_array();
		for (size_t i = 0; i < f.n; i++)
			if (s.why[i])
				json_array_append_new(
				    passed,
				    json_pack("{s:s, s:s}", "id", f.v[i].id, "why", s.why[i]));
		doc = json_pack("{s:s, s:{s:s, s:s, s:s, s:s, s:o, s:b, s:i}, s:o}", "status", "ok",
				"candidate", "id", k->id, "path", k->path, "metric_name",
				k->metric_name, "severity", pl_severity_name(k->severity), "ratio",
				k->has_ratio ? json_real(k->ratio) : json_null(), "stop_gate",
				s.stop_gate, "level", k->level, "passed_over", passed);
		if (s.stop_gate)
			json_object_set_new(json_object_get(doc, "candidate"), "stop_gate_by",
					    json_string(f.v[s.stop_gate_by].id));
	}
	if (explain) {
		if (s.chosen >= 0)
			fprintf(stderr, "chosen: %s (%s, level %d, %s, %s)\n", f.v[s.chosen].id,
				f.v[s.chosen].path, f.v[s.chosen].level,
				pl_severity_name(f.v[s.chosen].severity),
				f.v[s.chosen].metric_name);
		else
			fprintf(stderr, "no candidate\n");
		for (size_t i = 0; i < f.n; i++)
			if (s.why[i])
				fprintf(stderr, "passed over %s: %s\n", f.v[i].id, s.why[i]);
	}
	if (out && pl_fsio_write_json(out, doc, &err) != PL_OK) {
		pl_die(PL_EXIT_USAGE, "%s", err.msg);
		goto done;
	}
	char *text = pl_json_text(doc);
	if (!text) {
		rc = pl_die(PL_EXIT_INTERNAL, "out of memory");
		goto done;
	}
	fputs(text, stdout);
	free(text);
	rc = s.chosen >= 0 ? PL_EXIT_OK : PL_EXIT_NEGATIVE;
done:
	json_decref(doc);
	pl_selection_release(&s);
	pl_findings_release(&f);
	free(files);
	free(ex);
	return rc;
}
