/*
 * perfloop history: the benchmark history of a repository (loop/history.c).
 */
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cmd.h"
#include "fsio.h"
#include "gitops.h"
#include "history.h"

const char cmd_history_usage[] =
    "usage: perfloop history list [-C DIR] [--db FILE]\n"
    "   or: perfloop history show NAME [-C DIR] [--db FILE]\n"
    "   or: perfloop history regressions [-C DIR] [--db FILE]\n"
    "   or: perfloop history export --csv [-o FILE] [-C DIR] [--db FILE]\n"
    "\n"
    "Every 'perfloop bench' run inside a git repository is recorded in\n"
    ".perfloop/history.db (SQLite) with the commit, a hash of the benchmark's\n"
    "command and settings, the fingerprint and every sample.\n"
    "\n"
    "  list         each benchmark: how many runs, the last one and its median\n"
    "  show NAME    the series over commits as a table and a sparkline\n"
    "  regressions  changes between consecutive recordings of the same benchmark\n"
    "               and settings that bench would call slower (p < 0.05 and the\n"
    "               whole 95% interval of the ratio above 1.01); where a timing\n"
    "               is over the noise gate or the machine ran slower, on the\n"
    "               CPU time alone, the rest listed as in doubt\n"
    "  export       every sample as CSV\n"
    "\n"
    "Options:\n"
    "  -C DIR       the repository (default: the current directory)\n"
    "      --db FILE  a history database elsewhere\n"
    "      --csv    the export format (the only one)\n"
    "  -o, --out FILE  write the export to FILE\n"
    "  -h, --help   this text\n"
    "\n"
    "Exit status: 0 ok, 1 regressions found, 2 bad usage, no history, or a\n"
    "file that is not a perfloop history (never overwritten).\n"
    "\n"
    "Examples:\n"
    "  perfloop history list\n"
    "  perfloop history show 'sort 100000'\n"
    "  perfloop history regressions\n"
    "  perfloop history export --csv -o history.csv\n";

int cmd_history(int argc, char **argv, const struct pl_ctx *ctx)
{
	(void)ctx;
	static const struct option longopts[] = {
	    {"db", required_argument, NULL, 'd'},
	    {"csv", no_argument, NULL, 'c'},
	    {"out", required_argument, NULL, 'o'},
	    {"help", no_argument, NULL, 'h'},
	    {NULL, 0, NULL, 0},
	};
	const char *dir = ".", *dbpath = NULL, *out = NULL;
	int csv = 0, c;
	optind = 1;
	opterr = 0;
	while ((c = getopt_long(argc, argv, ":C:o:h", longopts, NULL)) != -1) {
		switch (c) {
		case 'C':
			dir = optarg;
			break;
		case 'd':
			dbpath = optarg;
			break;
		case 'c':
			csv = 1;
			break;
		case 'o':
			out = optarg;
			break;
		case 'h':
			fputs(cmd_history_usage, stdout);
			return PL_EXIT_OK;
		case ':':
		default:
			return pl_bad_option(c, argv, "history");
		}
	}
	if (optind >= argc)
		return pl_die(PL_EXIT_USAGE,
			      "say what: list, show NAME, regressions or export --csv");
	const char *what = argv[optind];
	char db[4400];
	if (dbpath) {
		snprintf(db, sizeof(db), "%s", dbpath);
	} else {
		char top[4096];
		if (pl_git_toplevel(dir, top, sizeof(top)) != 0)
			return pl_die(PL_EXIT_USAGE,
				      "'%s' is not inside a git work tree (or give --db)", dir);
		snprintf(db, sizeof(db), "%s/.perfloop/history.db", top);
	}
	FILE *probe = fopen(db, "rb");
	if (!probe)
		return pl_die(PL_EXIT_USAGE, "no history yet in '%s': run 'perfloop bench' first",
			      db);
	fclose(probe);
	struct pl_error err;
	struct pl_history *h;
	if (pl_history_open(db, &h, &err) != PL_OK)
		return pl_die(PL_EXIT_USAGE, "%s", err.msg);
	struct pl_strbuf b = {0};
	int rc = PL_OK, found = 0;
	if (strcmp(what, "list") == 0 && optind + 1 == argc) {
		rc = pl_history_list(h, &b, &err);
	} else if (strcmp(what, "show") == 0 && optind + 2 == argc) {
		rc = pl_history_show(h, argv[optind + 1], &b, &err);
	} else if (strcmp(what, "regressions") == 0 && optind + 1 == argc) {
		found = pl_history_regressions(h, &b, &err);
		rc = found < 0 ? found : PL_OK;
	} else if (strcmp(what, "export") == 0 && optind + 1 == argc) {
		if (!csv) {
			pl_history_close(h);
			return pl_die(PL_EXIT_USAGE, "history export: give --csv");
		}
		rc = pl_history_export_csv(h, &b, &err);
	} else {
		pl_history_close(h);
		return pl_die(PL_EXIT_USAGE,
			      "history: unknown or incomplete request '%s' (see "
			      "'perfloop history --help')",
			      what);
	}
	pl_history_close(h);
	size_t len = b.len;
	char *text = pl_strbuf_take(&b);
	if (rc != PL_OK) {
		free(text);
		return pl_die(PL_EXIT_USAGE, "%s", err.msg);
	}
	if (!text)
		return pl_die(PL_EXIT_INTERNAL, "out of memory");
	if (out) {
		int wrc = pl_fsio_write_atomic(out, text, len, &err);
		free(text);
		if (wrc != PL_OK)
			return pl_die(PL_EXIT_USAGE, "%s", err.msg);
	} else {
		fputs(text, stdout);
		free(text);
	}
	return found > 0 ? PL_EXIT_NEGATIVE : PL_EXIT_OK;
}
