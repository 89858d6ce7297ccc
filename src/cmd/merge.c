/*
 * perfloop merge: one run's per-rank profiles and bench summaries taken
 * together (report/merge.c): the per-rank tables, the stragglers, the merged
 * flame graph.
 */
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cmd.h"
#include "findings.h"
#include "fsio.h"
#include "merge.h"
#include "strbuf.h"

const char cmd_merge_usage[] =
    "usage: perfloop merge [OPTIONS] INPUT...\n"
    "\n"
    "Take one run's per-rank outputs together: under mpirun, srun or torchrun\n"
    "one perfloop runs per rank (bench -o bench.%r.json, profile -o prof.%r).\n"
    "Bench summaries give, per benchmark, each rank's p50, p90, p99 and max,\n"
    "the spread (the slowest rank's p50 over the median rank's) and the\n"
    "stragglers: a rank 1.10x the other ranks' median p50 or more and slower\n"
    "than their runs by a Mann-Whitney test (p < 0.01); each is a finding\n"
    "(level 5).\n"
    "Profiles (PREFIX.folded, any of PREFIX's outputs, or PREFIX) give one\n"
    "merged profile, its samples the ranks' sum, and each rank's samples, top\n"
    "function and data-loading share. Each input's rank is the one it\n"
    "recorded (else the order given, said); a rank given twice, or summaries\n"
    "of different benchmarks, are refused; missing ranks are reported.\n"
    "\n"
    "Options:\n"
    "  -o, --out PREFIX      write PREFIX.json (perfloop.merge/1) and\n"
    "                        PREFIX.findings.json; with profiles also the merged\n"
    "                        PREFIX.folded and PREFIX.svg\n"
    "      --by-rank         a root frame per rank in the merged flame graph\n"
    "      --format FMT      stdout: text (default) or json (perfloop.merge/1)\n"
    "  -h, --help            this text\n"
    "\n"
    "Exit status: 0 ok (with stragglers or without), 2 bad usage or input (the\n"
    "file and field named).\n"
    "\n"
    "Examples:\n"
    "  mpirun -np 4 perfloop bench -o bench.%r.json -- ./app input\n"
    "  perfloop merge bench.*.json\n"
    "  torchrun --nproc_per_node=2 --no-python perfloop profile -o prof.%r -- python train.py\n"
    "  perfloop merge -o merged --by-rank prof.*.folded\n";

enum { OPT_BY_RANK = 256, OPT_FORMAT };

/* text (taken), or prof's output (how) written as it is made */
static int write_out(const char *prefix, const char *ext, char *text, const struct pl_prof *prof,
		     const struct pl_prof_out *how, struct pl_strbuf *names)
{
	char path[4096];
	struct pl_error err = {{0}};
	snprintf(path, sizeof path, "%s%s", prefix, ext);
	if (!text && !prof)
		return pl_die(PL_EXIT_INTERNAL, "out of memory writing %s", path);
	int rc = prof ? pl_prof_write(prof, how, path, &err)
		      : pl_fsio_write_atomic(path, text, strlen(text), &err);
	free(text);
	if (rc != PL_OK)
		return pl_die(pl_exit_code(rc), "%s", err.msg);
	pl_strbuf_printf(names, "%s%s", names->len ? ", " : "", path);
	return PL_EXIT_OK;
}

static char *doc_text(json_t *doc)
{
	char *t = doc ? pl_json_text(doc) : NULL;
	json_decref(doc);
	return t;
}

/* The outputs; their names in *names. */
static int write_all(const struct pl_merge *m, const char *prefix, struct pl_strbuf *names_out)
{
	struct pl_strbuf names = {0};
	int rc = PL_EXIT_OK;
	if (m->nprofs) {
		char title[128], sub[128];
		snprintf(title, sizeof title, "%zu ranks merged%s", m->nprofs,
			 m->by_rank ? ", by rank" : "");
		snprintf(sub, sizeof sub, "%llu samples", (unsigned long long)m->prof.samples);
		struct pl_prof_out folded = {.kind = PL_OUT_FOLDED};
		struct pl_prof_out svg = {
		    .kind = PL_OUT_SVG, .title = title, .subtitle = sub, .min_px = 0.1};
		rc = write_out(prefix, ".folded", NULL, &m->prof, &folded, &names);
		if (!rc)
			rc = write_out(prefix, ".svg", NULL, &m->prof, &svg, &names);
	}
	if (!rc)
		rc = write_out(prefix, ".json", doc_text(pl_merge_json(m)), NULL, NULL, &names);
	if (!rc) {
		struct pl_findings f = {0};
		if (pl_merge_findings(m, &f) < 0) {
			pl_findings_release(&f);
			free(pl_strbuf_take(&names));
			return pl_die(PL_EXIT_INTERNAL, "out of memory");
		}
		json_t *doc = pl_findings_doc("perfloop merge " PERFLOOP_VERSION, &f);
		pl_findings_release(&f);
		rc = write_out(prefix, ".findings.json", doc_text(doc), NULL, NULL, &names);
	}
	*names_out = names;
	return rc;
}

int cmd_merge(int argc, char **argv, const struct pl_ctx *ctx)
{
	(void)ctx;
	static const struct option longopts[] = {
	    {"out", required_argument, NULL, 'o'},
	    {"by-rank", no_argument, NULL, OPT_BY_RANK},
	    {"format", required_argument, NULL, OPT_FORMAT},
	    {"help", no_argument, NULL, 'h'},
	    {NULL, 0, NULL, 0},
	};
	const char *out = NULL;
	int json = 0, by_rank = 0, c;
	optind = 1;
	opterr = 0;
	while ((c = getopt_long(argc, argv, ":o:h", longopts, NULL)) != -1) {
		switch (c) {
		case 'o':
			out = optarg;
			break;
		case OPT_BY_RANK:
			by_rank = 1;
			break;
		case OPT_FORMAT:
			if (pl_format_text_json(optarg, &json))
				return PL_EXIT_USAGE;
			break;
		case 'h':
			fputs(cmd_merge_usage, stdout);
			return PL_EXIT_OK;
		default:
			return pl_bad_option(c, argv, "merge");
		}
	}
	if (optind >= argc)
		return pl_die(PL_EXIT_USAGE, "nothing to merge: give the ranks' summaries or "
					     "profiles (see 'perfloop merge --help')");
	struct pl_merge m;
	pl_merge_init(&m);
	m.by_rank = by_rank;
	struct pl_error err = {{0}};
	int rc = PL_OK;
	for (int i = optind; i < argc && rc == PL_OK; i++)
		rc = pl_merge_add(&m, argv[i], &err);
	if (rc == PL_OK)
		rc = pl_merge_run(&m, &err);
	if (rc != PL_OK) {
		pl_merge_release(&m);
		return pl_die(pl_exit_code(rc), "%s", rc == PL_ENOMEM ? "out of memory" : err.msg);
	}
	struct pl_strbuf names = {0};
	int xrc = out ? write_all(&m, out, &names) : PL_EXIT_OK;
	if (xrc == PL_EXIT_OK) {
		char *text = json ? doc_text(pl_merge_json(&m)) : pl_merge_text(&m);
		if (!text)
			xrc = pl_die(PL_EXIT_INTERNAL, "out of memory");
		else
			fputs(text, stdout);
		free(text);
		for (size_t i = 0; json && i < m.nproblems; i++)
			fprintf(stderr, "perfloop merge: %s\n", m.problems[i]);
		if (names.len)
			fprintf(json ? stderr : stdout, "%swrote %s\n",
				json ? "perfloop merge: " : "\n", names.s);
	}
	free(pl_strbuf_take(&names));
	pl_merge_release(&m);
	return xrc;
}
