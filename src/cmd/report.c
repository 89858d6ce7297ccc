/*
 * perfloop report: read any mix of findings, summaries, verdicts and
 * ledgers, and print one report (report/report.c).
 */
#include <dirent.h>
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cmd.h"
#include "flamediff.h"
#include "fsio.h"
#include "gitops.h"
#include "history.h"
#include "htmlreport.h"
#include "loop.h"
#include "profread.h"
#include "report.h"
#include "strbuf.h"

const char cmd_report_usage[] =
    "usage: perfloop report [--format text|md|html] [--style findings|review]\n"
    "                       [--out FILE]\n"
    "                       [INPUT... | --loop NAME]\n"
    "       perfloop report --diff [--format text|md] [--top N] [--out FILE.svg]\n"
    "                       BEFORE AFTER\n"
    "\n"
    "One report from any mix of findings (perfloop.findings/1), benchmark\n"
    "summaries (perfloop.bench/1), verdicts (perfloop.verdict/1) and ledgers\n"
    "(perfloop.ledger/1 JSON lines), recognised by their schema. Each finding\n"
    "follows the template [Bottleneck] [Severity] [Status] [Before] [Fix]\n"
    "[After] [Impact], ranked by measured impact; static-only findings say\n"
    "[Measured] none; advisories go to a trailing \"Additional options (not\n"
    "defects)\" list; a Confidence block closes the report. With no INPUT,\n"
    "inside a repository where a loop runs ('perfloop baseline'): the loop's\n"
    "evidence (its own lines of the ledger, its baseline, every turn's kept\n"
    "verdict, and the cost models of 'perfloop intake', docs/perf/intake-*.yaml);\n"
    "--loop NAME: the same of a loop a new baseline archived under\n"
    ".perfloop/loops/NAME. Two loops are never mixed. With --format\n"
    "html, one self-contained page: verdicts, run-time strip plots, the flame\n"
    "graphs of profile INPUTs (*.folded, *.collapsed; other tools':\n"
    "*.speedscope.json, *.trace.json, *.austin, *.perf, cProfile's *.prof)\n"
    "and a sortable findings table.\n"
    "\n"
    "With --diff, two profiles (perfloop profile's PREFIX.folded, any\n"
    "'frame;frame;... COUNT' file, or another tool's, told by its content:\n"
    "speedscope, Chrome trace, Austin, perf script, cProfile's pstats),\n"
    "before and after:\n"
    "the functions whose own share of the samples moved most (before %, after\n"
    "%, change in points, largest first) on stdout, and with --out the\n"
    "differential flame graph SVG: AFTER's frames and widths, each coloured by\n"
    "how its own share moved (red grew, blue shrank, white the same), a path\n"
    "only BEFORE has drawn dashed at its share of BEFORE. Shares, not counts:\n"
    "the two runs' lengths may differ.\n"
    "\n"
    "Options:\n"
    "  -f, --format FORMAT  text (default), md (Markdown) or html (a page that\n"
    "                       opens from disk: no network, nothing external)\n"
    "  -s, --style STYLE    findings (default) or review: per verdict also Path,\n"
    "                       Baseline, Cost model, Evidence, Change, Result and\n"
    "                       Boundary, from the verdict and its summaries\n"
    "  -o, --out FILE       write the report to FILE instead of stdout\n"
    "                       (with --diff: the differential flame graph SVG)\n"
    "      --diff           compare two collapsed-stack profiles, BEFORE AFTER\n"
    "                       (above)\n"
    "      --top N          rows of the --diff table (default 15; 0: all)\n"
    "      --loop NAME      an archived loop's evidence (.perfloop/loops/NAME)\n"
    "  -h, --help           this text\n"
    "\n"
    "Exit status: 0 ok, 2 bad input (one line naming the file and the field or\n"
    "line).\n"
    "\n"
    "Examples:\n"
    "  perfloop report scan.json profile.findings.json\n"
    "  perfloop report --style review --format md verdict.json \\\n"
    "      docs/perf/baseline_ledger.jsonl -o review.md\n"
    "  perfloop report --format html -o report.html verdict.json before.json \\\n"
    "      after.json profile.folded profile.findings.json\n"
    "  perfloop report --diff before.folded after.folded -o diff.svg\n";

enum { OPT_DIFF = 256, OPT_TOP, OPT_LOOP };

static const struct option longopts[] = {
    {"format", required_argument, NULL, 'f'},
    {"diff", no_argument, NULL, OPT_DIFF},
    {"top", required_argument, NULL, OPT_TOP},
    {"loop", required_argument, NULL, OPT_LOOP},
    {"style", required_argument, NULL, 's'},
    {"out", required_argument, NULL, 'o'},
    {"help", no_argument, NULL, 'h'},
    {NULL, 0, NULL, 0},
};

/* Of the ledger lines from index `from` on, keep those of the loop
 * `state`: the lines that carry its id, and (lines written before loops
 * had ids) those whose iteration and commit are one of its turns'. A
 * ledger outlives loops: two loops' lines mixed made "3 verdicts" of a
 * loop that had one. */
static void only_this_loop(json_t *ledger, size_t from, json_t *state)
{
	const char *id = json_string_value(json_object_get(state, "loop_id"));
	json_t *turns = json_object_get(state, "turns");
	for (size_t i = from; i < json_array_size(ledger);) {
		json_t *l = json_array_get(ledger, i);
		const char *lid = json_string_value(json_object_get(l, "loop"));
		int keep = 0;
		if (lid) {
			keep = id && !strcmp(lid, id);
		} else {
			json_int_t it = json_integer_value(json_object_get(l, "iteration"));
			const char *commit = json_string_value(json_object_get(l, "commit"));
			size_t k;
			json_t *t;
			json_array_foreach(turns, k, t)
			{
				const char *on = json_string_value(json_object_get(t, "measured_on"));
				if (json_integer_value(json_object_get(t, "iteration")) == it &&
				    commit && on && !strcmp(commit, on))
					keep = 1;
			}
		}
		if (keep)
			i++;
		else
			json_array_remove(ledger, i);
	}
}

/* The loops archived under .perfloop/loops (a new baseline moves the one
 * it replaces there), newest last; their count. */
static size_t archived_loops(const char *top, struct pl_strbuf *names)
{
	char path[4400];
	snprintf(path, sizeof path, "%s/.perfloop/loops", top);
	DIR *d = opendir(path);
	size_t n = 0;
	struct dirent *e;
	while (d && (e = readdir(d))) {
		char lj[4700];
		if (e->d_name[0] == '.')
			continue;
		snprintf(lj, sizeof lj, "%s/%s/loop.json", path, e->d_name);
		if (access(lj, R_OK) != 0)
			continue;
		pl_strbuf_printf(names, "%s%s", n ? ", " : "", e->d_name);
		n++;
	}
	if (d)
		closedir(d);
	return n;
}

/* The evidence of a loop in this repository: its ledger lines, its
 * baseline, and every turn's kept verdict; the loop running now (loop:
 * NULL) or one archived under .perfloop/loops/LOOP. Returns how many
 * files were added (0: no such loop here), or -1. */
static int loop_evidence(struct pl_report_input *in, const char *loop, struct pl_error *err)
{
	char top[4096], dir[300], path[4500];
	if (pl_git_toplevel(".", top, sizeof top) != 0) {
		if (loop)
			pl_error_set(err, PL_EINPUT, "--loop: not inside a git repository");
		return loop ? -1 : 0;
	}
	if (loop && (!loop[0] || strchr(loop, '/') || loop[0] == '.' || strlen(loop) > 200))
		return pl_error_set(err, PL_EINPUT,
				    "--loop: expected the name of a folder under .perfloop/loops, "
				    "got '%s'",
				    loop),
		       -1;
	if (loop)
		snprintf(dir, sizeof dir, ".perfloop/loops/%.200s", loop);
	else
		snprintf(dir, sizeof dir, ".perfloop");
	snprintf(path, sizeof path, "%s/%s/loop.json", top, dir);
	json_t *state = json_load_file(path, 0, NULL);
	if (!state) {
		if (!loop)
			return 0;
		struct pl_strbuf names = {0};
		size_t n = archived_loops(top, &names);
		pl_error_set(err, PL_EINPUT, "--loop: no loop '%s' archived here (%s%s)", loop,
			     n ? "archived: " : "none is", n ? names.s : "");
		free(names.s);
		return -1;
	}
	int n = 0;
	const char *ledger = json_string_value(json_object_get(state, "ledger"));
	struct pl_strbuf names = {0};
	char file[8800];
	const char *lwhy = ledger ? pl_loop_ledger_problem(top, ledger) : NULL;
	if (lwhy) { /* a loop.json can name ../elsewhere: never read there */
		pl_error_set(err, PL_EINPUT, "%s/loop.json: ledger: '%.200s' is %s; refused", dir,
			     ledger, lwhy);
		goto fail;
	}
	if (ledger) {
		snprintf(file, sizeof file, "%s/%s", top, ledger);
		if (access(file, R_OK) == 0) {
			size_t from = json_array_size(in->ledger);
			if (pl_report_add_file(in, file, err) != PL_OK)
				goto fail;
			only_this_loop(in->ledger, from, state);
			pl_strbuf_printf(&names, "%s (this loop's lines)", ledger);
			n++;
		}
	}
	snprintf(file, sizeof file, "%s/%s/baseline.json", top, dir);
	if (access(file, R_OK) == 0) {
		if (pl_report_add_file(in, file, err) != PL_OK)
			goto fail;
		pl_strbuf_printf(&names, "%s%s/baseline.json", n ? ", " : "", dir);
		n++;
	}
	snprintf(path, sizeof path, "%s/%s", top, dir);
	DIR *d = opendir(path);
	struct dirent *e;
	while (d && (e = readdir(d))) {
		size_t len = strlen(e->d_name);
		if (len < 13 || strcmp(e->d_name + len - 13, ".verdict.json") != 0)
			continue;
		snprintf(file, sizeof file, "%s/%s", path, e->d_name);
		if (pl_report_add_file(in, file, err) != PL_OK) {
			closedir(d);
			goto fail;
		}
		pl_strbuf_printf(&names, "%s%s/%s", n ? ", " : "", dir, e->d_name);
		n++;
	}
	if (d)
		closedir(d);
	/* the cost models written with perfloop intake */
	snprintf(path, sizeof path, "%s/docs/perf", top);
	d = opendir(path);
	while (d && (e = readdir(d))) {
		size_t len = strlen(e->d_name);
		if (len < 12 || strncmp(e->d_name, "intake-", 7) != 0 ||
		    strcmp(e->d_name + len - 5, ".yaml") != 0)
			continue;
		snprintf(file, sizeof file, "%s/%s", path, e->d_name);
		if (pl_report_add_file(in, file, err) != PL_OK) {
			closedir(d);
			goto fail;
		}
		pl_strbuf_printf(&names, "%sdocs/perf/%s", n ? ", " : "", e->d_name);
		n++;
	}
	if (d)
		closedir(d);
	if (n)
		fprintf(stderr, "perfloop report: the %s loop's evidence: %s\n",
			loop ? "archived" : "current", names.s ? names.s : "");
	if (n && !loop) {
		struct pl_strbuf old = {0};
		size_t k = archived_loops(top, &old);
		if (k)
			fprintf(stderr,
				"perfloop report: %zu earlier loop%s archived (perfloop report "
				"--loop NAME): %s\n",
				k, k == 1 ? "" : "s", old.s);
		free(old.s);
	}
	free(names.s);
	json_decref(state);
	return n;
fail:
	free(names.s);
	json_decref(state);
	return -1;
}

/* A perfloop history database (SQLite): by its header */
static int is_sqlite(const char *path)
{
	char head[16] = "";
	FILE *f = fopen(path, "rb");
	if (!f)
		return 0;
	size_t n = fread(head, 1, sizeof head, f);
	fclose(f);
	return n == sizeof head && memcmp(head, "SQLite format 3", 16) == 0;
}

/* A profile to draw, by name: collapsed stacks (PREFIX.folded,
 * PREFIX.memory.folded, a .collapsed file from another tool), Austin's
 * .austin, `perf script` text saved as .perf or .perf.txt, and
 * .speedscope.json (not findings: its $schema is speedscope's), which
 * profread.h reads */
static int is_folded(const char *path)
{
	static const char *const ends[] = {".folded", ".collapsed", ".austin", ".perf",
					   ".perf.txt", ".speedscope.json", ".trace.json", ".prof",
					   ".pstats"};
	size_t n = strlen(path);
	for (size_t i = 0; i < sizeof ends / sizeof ends[0]; i++) {
		size_t e = strlen(ends[i]);
		if (n > e && strcmp(path + n - e, ends[i]) == 0)
			return 1;
	}
	return 0;
}

/* One profile for --diff: 0, or the exit code (said) */
static int read_profile(const char *path, struct pl_prof *p)
{
	struct pl_error err = {{0}};
	const char *format;
	int rc = pl_prof_read_any(path, p, &format, &err);
	if (rc == PL_ENOMEM)
		return pl_die(PL_EXIT_INTERNAL, "out of memory");
	if (rc != PL_OK)
		return pl_die(PL_EXIT_USAGE, "%s", err.msg);
	if (!p->samples)
		return pl_die(PL_EXIT_USAGE,
			      "%s: no samples: expected 'frame;frame;... COUNT' lines", path);
	return 0;
}

/* --diff BEFORE AFTER: the movers' table on stdout, the SVG to out */
static int report_diff(const char *before, const char *after, int md, long top, const char *out)
{
	struct pl_prof bp = {0}, ap = {0};
	struct pl_flamediff_in in = {&bp, &ap, before, after};
	struct pl_flamediff_mover *m = NULL;
	struct pl_error err = {{0}};
	size_t n = 0;
	char *table = NULL;
	int rc = read_profile(before, &bp);
	if (!rc)
		rc = read_profile(after, &ap);
	if (rc)
		goto done;
	if (pl_flamediff_movers(&in, &m, &n) != PL_OK ||
	    !(table = pl_flamediff_table(&in, m, n, top ? (size_t)top : n, md))) {
		rc = pl_die(PL_EXIT_INTERNAL, "out of memory");
		goto done;
	}
	if (out) {
		int wrc = pl_flamediff_write_svg(&in, out, &err);
		if (wrc != PL_OK) {
			rc = pl_die(wrc == PL_ENOMEM ? PL_EXIT_INTERNAL : PL_EXIT_USAGE, "%s",
				    err.msg);
			goto done;
		}
	}
	fputs(table, stdout);
	if (out)
		fprintf(md ? stderr : stdout, "\nwrote %s\n", out);
	rc = PL_EXIT_OK;
done:
	free(table);
	pl_flamediff_movers_free(m, n);
	pl_prof_release(&bp);
	pl_prof_release(&ap);
	return rc;
}

int cmd_report(int argc, char **argv, const struct pl_ctx *ctx)
{
	(void)ctx;
	enum pl_report_format fmt = PL_REPORT_TEXT;
	enum pl_report_style style = PL_REPORT_FINDINGS;
	const char *out = NULL, *loop = NULL;
	int c, rc = PL_EXIT_USAGE, html = 0, diff = 0, top_given = 0;
	long top = 15;
	struct pl_html_profile *profs = NULL;
	size_t nprofs = 0;
	struct pl_report_input in;
	struct pl_error err = {{0}};
	pl_report_input_init(&in);
	optind = 1;
	opterr = 0;
	while ((c = getopt_long(argc, argv, ":f:s:o:h", longopts, NULL)) != -1) {
		switch (c) {
		case 'f':
			if (strcmp(optarg, "text") == 0)
				fmt = PL_REPORT_TEXT;
			else if (strcmp(optarg, "md") == 0 || strcmp(optarg, "markdown") == 0)
				fmt = PL_REPORT_MD;
			else if (strcmp(optarg, "html") == 0)
				html = 1;
			else {
				pl_die(PL_EXIT_USAGE,
				       "option '--format': expected text, md or html, got '%s'",
				       optarg);
				goto done;
			}
			break;
		case 's':
			if (strcmp(optarg, "findings") == 0)
				style = PL_REPORT_FINDINGS;
			else if (strcmp(optarg, "review") == 0)
				style = PL_REPORT_REVIEW;
			else {
				pl_die(PL_EXIT_USAGE,
				       "option '--style': expected findings or review, got '%s'",
				       optarg);
				goto done;
			}
			break;
		case 'o':
			out = optarg;
			break;
		case OPT_DIFF:
			diff = 1;
			break;
		case OPT_LOOP:
			loop = optarg;
			break;
		case OPT_TOP: {
			char *end;
			errno = 0;
			top = strtol(optarg, &end, 10);
			top_given = 1;
			if (errno || end == optarg || *end || top < 0 || top > 1000000) {
				pl_die(PL_EXIT_USAGE, "option '--top': expected a count, got '%s'",
				       optarg);
				goto done;
			}
			break;
		}
		case 'h':
			fputs(cmd_report_usage, stdout);
			rc = PL_EXIT_OK;
			goto done;
		case ':':
		default:
			pl_bad_option(c, argv, "report");
			goto done;
		}
	}
	if (diff) {
		if (style != PL_REPORT_FINDINGS) {
			pl_die(PL_EXIT_USAGE, "option '--style' does not apply to --diff");
			goto done;
		}
		if (html) {
			pl_die(PL_EXIT_USAGE,
			       "--diff: the table is text or md; for the HTML page give both "
			       "profiles to 'perfloop report --format html' (it draws their "
			       "difference)");
			goto done;
		}
		if (argc - optind != 2) {
			pl_die(PL_EXIT_USAGE,
			       "--diff: expected two profiles, BEFORE AFTER (collapsed stacks), "
			       "got %d",
			       argc - optind);
			goto done;
		}
		rc = report_diff(argv[optind], argv[optind + 1], fmt == PL_REPORT_MD, top, out);
		goto done;
	}
	if (top_given) {
		pl_die(PL_EXIT_USAGE, "option '--top' is for --diff (the rows of its table)");
		goto done;
	}
	if (loop && (diff || optind < argc)) {
		pl_die(PL_EXIT_USAGE, "option '--loop' reads a loop's own evidence: give no INPUT");
		goto done;
	}
	if (optind >= argc) {
		/* no files: the loop's own evidence, where a loop runs here */
		int got = loop_evidence(&in, loop, &err);
		if (got < 0) {
			pl_die(PL_EXIT_USAGE, "%s", err.msg);
			goto done;
		}
		if (got == 0) {
			pl_die(PL_EXIT_USAGE, "no input: give findings, summaries, verdicts or "
					      "ledgers (or run it where a 'perfloop baseline' loop is)");
			goto done;
		}
	}
	for (int i = optind; i < argc; i++) {
		if (is_folded(argv[i])) {
			/* collapsed stacks: a flame graph on the HTML page */
			if (!html) {
				pl_die(PL_EXIT_USAGE,
				       "%s: collapsed stacks are drawn by --format html only",
				       argv[i]);
				goto done;
			}
			struct pl_html_profile *np = realloc(profs, (nprofs + 1) * sizeof(*np));
			if (!np) {
				rc = pl_die(PL_EXIT_INTERNAL, "out of memory");
				goto done;
			}
			profs = np;
			memset(&profs[nprofs], 0, sizeof(*profs));
			profs[nprofs].file = argv[i];
			const char *format;
			int frc = pl_prof_read_any(argv[i], &profs[nprofs++].prof, &format, &err);
			if (frc != PL_OK) {
				rc = pl_die(frc == PL_ENOMEM ? PL_EXIT_INTERNAL : PL_EXIT_USAGE, "%s",
					    frc == PL_ENOMEM ? "out of memory" : err.msg);
				goto done;
			}
			continue;
		}
		if (is_sqlite(argv[i])) {
			/* a history database: its series over commits */
			if (!html) {
				pl_die(PL_EXIT_USAGE,
				       "%s: a history is drawn by --format html only ('perfloop "
				       "history' shows it as text)",
				       argv[i]);
				goto done;
			}
			struct pl_history *h = NULL;
			json_t *series = NULL;
			if (pl_history_open(argv[i], &h, &err) != PL_OK ||
			    !(series = pl_history_series(h, &err))) {
				pl_history_close(h);
				pl_die(PL_EXIT_USAGE, "%s", err.msg);
				goto done;
			}
			pl_history_close(h);
			json_array_append_new(in.series,
					      json_pack("{s:s, s:{s:s, s:o}}", "file", argv[i], "doc",
							"schema", "perfloop.history", "benchmarks",
							series));
			continue;
		}
		if (pl_report_add_file(&in, argv[i], &err) != PL_OK) {
			pl_die(PL_EXIT_USAGE, "%s", err.msg);
			goto done;
		}
	}
	if (!html && json_array_size(in.series)) { /* given as JSON documents */
		pl_die(PL_EXIT_USAGE, "%s: memory, GPU and step series are drawn by --format html only",
		       json_string_value(json_object_get(json_array_get(in.series, 0), "file")));
		goto done;
	}
	char *text = html ? pl_report_html(&in, profs, nprofs) : pl_report_render(&in, fmt, style);
	if (!text) {
		rc = pl_die(PL_EXIT_INTERNAL, "out of memory");
		goto done;
	}
	if (out) {
		int wrc = pl_fsio_write_atomic(out, text, strlen(text), &err);
		free(text);
		if (wrc != PL_OK) {
			pl_die(PL_EXIT_USAGE, "%s", err.msg);
			goto done;
		}
	} else {
		fputs(text, stdout);
		free(text);
	}
	rc = PL_EXIT_OK;
done:
	for (size_t i = 0; i < nprofs; i++)
		pl_prof_release(&profs[i].prof);
	free(profs);
	pl_report_input_release(&in);
	return rc;
}
