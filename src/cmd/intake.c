/*
 * perfloop intake: write (or --check) docs/perf/intake-NAME.yaml, the cost
 * model of the code about to be optimized (src/report/intake.h).
 */
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cmd.h"
#include "fsio.h"
#include "gitops.h"
#include "intake.h"
#include "summary.h"

const char cmd_intake_usage[] =
    "usage: perfloop intake [NAME] [--from SUMMARY.json] [-b BENCH] [--force]\n"
    "       perfloop intake --check [NAME | FILE]\n"
    "\n"
    "Write the cost model of the code about to be optimized, before optimizing:\n"
    "docs/perf/intake-NAME.yaml (at the git root, else here; NAME defaults to\n"
    "the first word of -b, else 'main'), with the primary KPI and workload\n"
    "shape, how often the code runs (setup, per batch, per request, per token,\n"
    "per rank, per element, ...), rough counts (bytes moved, allocations,\n"
    "launches, synchronizations, boundary crossings, storage/network\n"
    "operations), the expected dominant cost and the largest plausible\n"
    "improvement, left empty for you to estimate; what a benchmark summary\n"
    "measured (wall, CPU, peak RSS, instructions) is filled in and marked as\n"
    "measured. --check validates a filled one. 'perfloop report --style\n"
    "review' shows it as the Cost model.\n"
    "\n"
    "Options:\n"
    "      --from FILE     the summary to take the measurements from (default:\n"
    "                      the loop's baseline, .perfloop/baseline.json, if any)\n"
    "  -b, --bench NAME    its benchmark (default: the first)\n"
    "      --force         replace an existing intake (it holds your estimates)\n"
    "      --check         validate: exit 0 when complete, 2 naming the file,\n"
    "                      line and field that is wrong or still empty\n"
    "  -h, --help          this text\n"
    "\n"
    "Exit status: 0 written or complete, 2 bad usage, a malformed or\n"
    "incomplete intake, or an intake that exists (without --force).\n"
    "\n"
    "Examples:\n"
    "  perfloop intake parse --from before.json\n"
    "  perfloop intake --check parse\n";

/* docs/perf/intake-NAME.yaml under the project's root */
static void intake_path(const char *name, char *out, size_t len)
{
	char top[4096];
	if (strchr(name, '/') || strstr(name, ".yaml")) {
		snprintf(out, len, "%s", name); /* a file, for --check */
		return;
	}
	if (pl_git_toplevel(".", top, sizeof top) != 0)
		snprintf(top, sizeof top, ".");
	snprintf(out, len, "%s/docs/perf/intake-%s.yaml", top, name);
}

static int valid_name(const char *s)
{
	if (!*s)
		return 0;
	for (; *s; s++)
		if (!((*s >= 'a' && *s <= 'z') || (*s >= 'A' && *s <= 'Z') ||
		      (*s >= '0' && *s <= '9') || *s == '-' || *s == '_' || *s == '.'))
			return 0;
	return 1;
}

static int check(const char *path)
{
	struct pl_intake in;
	struct pl_error err = {{0}};
	if (pl_intake_load(path, &in, &err) != PL_OK)
		return pl_die(PL_EXIT_USAGE, "%s", err.msg);
	int rc = PL_EXIT_OK;
	if (in.missing[0]) {
		const char *comma = strchr(in.missing, ',');
		char first[128];
		snprintf(first, sizeof first, "%.*s", comma ? (int)(comma - in.missing) : 127,
			 in.missing);
		rc = pl_die(PL_EXIT_USAGE,
			    "%s:%d: %s: still empty%s%s%s: estimate it (docs/intake.md)", path,
			    in.missing_line, first, comma ? " (and " : "", comma ? comma + 2 : "",
			    comma ? ")" : "");
	} else {
		char line[1600];
		pl_intake_describe(&in, line, sizeof line);
		printf("%s: complete\n  %s\n", path, line);
	}
	pl_intake_release(&in);
	return rc;
}

int cmd_intake(int argc, char **argv, const struct pl_ctx *ctx)
{
	(void)ctx;
	enum { OPT_FROM = 256, OPT_FORCE, OPT_CHECK };
	static const struct option opts[] = {
	    {"from", required_argument, NULL, OPT_FROM},
	    {"bench", required_argument, NULL, 'b'},
	    {"force", no_argument, NULL, OPT_FORCE},
	    {"check", no_argument, NULL, OPT_CHECK},
	    {"help", no_argument, NULL, 'h'},
	    {NULL, 0, NULL, 0},
	};
	const char *from = NULL, *bench = NULL;
	int force = 0, check_only = 0, c;
	optind = 1;
	opterr = 0;
	while ((c = getopt_long(argc, argv, ":b:h", opts, NULL)) != -1) {
		switch (c) {
		case OPT_FROM:
			from = optarg;
			break;
		case 'b':
			bench = optarg;
			break;
		case OPT_FORCE:
			force = 1;
			break;
		case OPT_CHECK:
			check_only = 1;
			break;
		case 'h':
			fputs(cmd_intake_usage, stdout);
			return PL_EXIT_OK;
		default:
			return pl_bad_option(c, argv, "intake");
		}
	}
	if (argc - optind > 1)
		return pl_die(PL_EXIT_USAGE, "intake: unexpected argument '%s' (one NAME)",
			      argv[optind + 1]);
	/* NAME, else the benchmark's first word ("parse n=1000": parse) */
	char from_bench[128] = "main";
	if (bench)
		snprintf(from_bench, sizeof from_bench, "%.*s", (int)strcspn(bench, " \t"), bench);
	const char *name = optind < argc ? argv[optind] : from_bench;
	char path[4400];
	if (check_only) {
		intake_path(name, path, sizeof path);
		return check(path);
	}
	if (!valid_name(name))
		return pl_die(PL_EXIT_USAGE,
			      "intake: NAME is letters, digits, '-', '_' or '.' (it names "
			      "docs/perf/intake-NAME.yaml), got '%s'",
			      name);
	intake_path(name, path, sizeof path);
	struct stat sb;
	if (!force && stat(path, &sb) == 0)
		return pl_die(PL_EXIT_USAGE,
			      "%s exists (it holds your estimates): --check it, or --force to "
			      "write a new one",
			      path);
	/* the measurements: --from, else the loop's baseline */
	json_t *summary = NULL;
	struct pl_error err = {{0}};
	char base[4200];
	if (!from) {
		char top[4096];
		if (pl_git_toplevel(".", top, sizeof top) != 0)
			snprintf(top, sizeof top, ".");
		snprintf(base, sizeof base, "%s/.perfloop/baseline.json", top);
		if (access(base, R_OK) == 0)
			from = base;
	}
	if (from && pl_summary_load(from, &summary, &err) != PL_OK)
		return pl_die(PL_EXIT_USAGE, "option '--from': %s", err.msg);
	if (summary && bench) {
		int found = 0;
		size_t i;
		json_t *b;
		json_array_foreach(json_object_get(summary, "benchmarks"), i, b)
		{
			found |=
			    !strcmp(json_string_value(json_object_get(b, "name")) ?: "", bench);
		}
		if (!found) {
			json_decref(summary);
			return pl_die(PL_EXIT_USAGE, "option '--bench': %s has no benchmark '%s'",
				      from, bench);
		}
	}
	char *text = pl_intake_template(name, summary,
					from == base ? ".perfloop/baseline.json" : from, bench);
	json_decref(summary);
	if (!text)
		return pl_die(PL_EXIT_INTERNAL, "out of memory");
	/* docs/perf/ may not exist yet */
	char dir[4400];
	snprintf(dir, sizeof dir, "%s", path);
	for (char *p = strchr(dir + 1, '/'); p; p = strchr(p + 1, '/')) {
		*p = '\0';
		if (mkdir(dir, 0777) != 0 && errno != EEXIST) {
			free(text);
			return pl_die(PL_EXIT_USAGE, "cannot create %s: %s", dir, strerror(errno));
		}
		*p = '/';
	}
	int rc = pl_fsio_write_atomic(path, text, strlen(text), &err);
	free(text);
	if (rc != PL_OK)
		return pl_die(PL_EXIT_USAGE, "%s", err.msg);
	printf("wrote %s%s: fill in the estimates, then 'perfloop intake --check %s'\n", path,
	       from ? " (measurements from the summary)" : "", name);
	return PL_EXIT_OK;
}
