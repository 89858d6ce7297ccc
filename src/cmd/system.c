/*
 * perfloop system show|tune|reset: what on this machine disturbs
 * measurements, and setting what can be set (os/machine.c).
 */
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cmd.h"
#include "fsio.h"
#include "machine.h"
#include "render.h"
#include "strbuf.h"

const char cmd_system_usage[] =
    "usage: perfloop system show [--json] [--window S]\n"
    "   or: perfloop system tune [--json] [--state FILE]\n"
    "   or: perfloop system reset [--json] [--state FILE]\n"
    "\n"
    "  show   everything known to disturb timings here (virtualization, governor,\n"
    "         turbo, SMT, clock spread, load, busy CPUs and processes, interrupts,\n"
    "         ASLR, the NMI watchdog, perf_event_paranoid, power), each with its\n"
    "         value, its effect and what helps. Needs no privileges.\n"
    "  tune   set what can be set: every CPU's governor to 'performance', turbo\n"
    "         off, the NMI watchdog off; the old values are recorded for reset.\n"
    "         Writes /sys and /proc/sys: needs root. Neither is needed to use\n"
    "         perfloop; bench works on an untuned machine and says how noisy it is.\n"
    "  reset  write back what tune recorded\n"
    "\n"
    "Options:\n"
    "      --json        print JSON (perfloop.system/1) instead of text\n"
    "      --window S    watch busy CPUs, processes and interrupts for S seconds\n"
    "                    (default 1)\n"
    "      --state FILE  tune's record (default /var/lib/perfloop/system-tune.json)\n"
    "  -h, --help        this text\n"
    "\n"
    "Exit status: 0 ok (show: whatever it finds), 2 bad usage, a setting tune\n"
    "could not write (each named, e.g. without root), or nothing for reset to undo.\n"
    "\n"
    "Examples:\n"
    "  perfloop system show\n"
    "  sudo perfloop system tune && perfloop bench ... && sudo perfloop system reset\n";

/* A value as text: numbers short, shares (cpu busy, a process's cpu) in
 * percent, objects as "key value" pairs. */
static void value_text(struct pl_strbuf *b, json_t *v, int percent)
{
	if (json_is_string(v)) {
		pl_strbuf_printf(b, "%s", json_string_value(v));
	} else if (json_is_real(v)) {
		if (percent)
			pl_strbuf_printf(b, "%.0f%%", json_real_value(v) * 100);
		else
			pl_strbuf_printf(b, "%.4g", json_real_value(v));
	} else if (json_is_integer(v)) {
		pl_strbuf_printf(b, "%lld", (long long)json_integer_value(v));
	} else if (json_is_boolean(v)) {
		pl_strbuf_printf(b, "%s", json_is_true(v) ? "yes" : "no");
	} else if (json_is_object(v)) {
		const char *k;
		json_t *x;
		int first = 1;
		json_object_foreach(v, k, x)
		{
			pl_strbuf_printf(b, "%s%s ", first ? "" : ", ", k);
			value_text(b, x, percent || strcmp(k, "cpu") == 0);
			first = 0;
		}
	} else if (json_is_array(v)) {
		size_t i;
		json_t *x;
		if (json_array_size(v) == 0)
			pl_strbuf_printf(b, "none");
		json_array_foreach(v, i, x)
		{
			pl_strbuf_printf(b, "%s", i ? json_is_object(x) ? "; " : "," : "");
			value_text(b, x, percent);
		}
	} else {
		pl_strbuf_printf(b, "unknown");
	}
}

static void print_show(json_t *items)
{
	struct pl_style st;
	pl_style_detect(&st, stdout);
	printf("What can disturb a measurement on this machine:\n\n");
	size_t i;
	json_t *it;
	json_array_foreach(items, i, it)
	{
		const char *status = json_string_value(json_object_get(it, "status"));
		const char *col = strcmp(status, "warn") == 0 ? PL_YELLOW
				  : strcmp(status, "ok") == 0 ? PL_GREEN
							      : PL_DIM;
		const char *name = json_string_value(json_object_get(it, "name"));
		struct pl_strbuf b = {0};
		value_text(&b, json_object_get(it, "value"), strcmp(name, "cpu busy") == 0);
		char *text = pl_strbuf_take(&b);
		printf("  %s%-4s%s  %-22s %s\n", pl_c(&st, col), status, pl_c(&st, PL_RESET), name,
		       text ? text : "");
		free(text);
		const char *effect = json_string_value(json_object_get(it, "effect"));
		const char *advice = json_string_value(json_object_get(it, "advice"));
		if (effect && *effect && strcmp(status, "ok") != 0)
			printf("        %s%s%s\n", pl_c(&st, PL_DIM), effect, pl_c(&st, PL_RESET));
		if (advice && *advice && strcmp(status, "ok") != 0)
			printf("        -> %s\n", advice);
	}
}

static int print_changes(const char *what, json_t *done, json_t *failed, int json)
{
	if (json) {
		json_t *doc = json_pack("{s:s, s:s, s:O, s:O}", "schema", "perfloop.system/1",
					"action", what, "changed", done, "failed", failed);
		pl_json_print(doc);
	} else {
		size_t i;
		json_t *c;
		if (json_array_size(done) == 0 && json_array_size(failed) == 0)
			printf("%s: nothing to change here\n", what);
		json_array_foreach(done, i, c)
		{
			json_t *old = json_object_get(c, "old");
			if (old)
				printf("%s: %s: %s -> %s\n", what,
				       json_string_value(json_object_get(c, "path")),
				       json_string_value(old),
				       json_string_value(json_object_get(c, "new")));
			else
				printf("%s: %s: back to %s\n", what,
				       json_string_value(json_object_get(c, "path")),
				       json_string_value(json_object_get(c, "value")));
		}
	}
	size_t i;
	json_t *f;
	json_array_foreach(failed, i, f)
	    fprintf(stderr, "perfloop: error: %s: cannot set %s\n", what, json_string_value(f));
	return json_array_size(failed) ? PL_EXIT_USAGE : PL_EXIT_OK;
}

int cmd_system(int argc, char **argv, const struct pl_ctx *ctx)
{
	(void)ctx;
	static const struct option longopts[] = {
	    {"json", no_argument, NULL, 'j'},
	    {"window", required_argument, NULL, 'w'},
	    {"state", required_argument, NULL, 's'},
	    {"help", no_argument, NULL, 'h'},
	    {NULL, 0, NULL, 0},
	};
	int json = 0, c;
	double window = 1.0;
	const char *state = NULL;
	optind = 1;
	opterr = 0;
	while ((c = getopt_long(argc, argv, ":h", longopts, NULL)) != -1) {
		switch (c) {
		case 'j':
			json = 1;
			break;
		case 'w': {
			char *end;
			window = strtod(optarg, &end);
			if (*end || end == optarg || !(window >= 0.05 && window <= 60))
				return pl_die(PL_EXIT_USAGE,
					      "option '--window': expected seconds from 0.05 to 60, "
					      "got '%s'",
					      optarg);
			break;
		}
		case 's':
			state = optarg;
			break;
		case 'h':
			fputs(cmd_system_usage, stdout);
			return PL_EXIT_OK;
		default:
			return pl_bad_option(c, argv, "system");
		}
	}
	if (optind + 1 != argc)
		return pl_die(PL_EXIT_USAGE, "expected one of show, tune, reset (see 'perfloop "
					     "system --help')");
	const char *what = argv[optind];
	struct pl_error err = {0};
	if (strcmp(what, "show") == 0) {
		json_t *items = pl_machine_inventory(window);
		if (json) {
			json_t *doc = json_pack("{s:s, s:o}", "schema", "perfloop.system/1",
						"items", items);
			pl_json_print(doc);
		} else {
			print_show(items);
			json_decref(items);
		}
		return PL_EXIT_OK;
	}
	json_t *done = NULL, *failed = NULL;
	int rc;
	if (strcmp(what, "tune") == 0)
		rc = pl_machine_tune(state, &done, &failed, &err);
	else if (strcmp(what, "reset") == 0)
		rc = pl_machine_reset(state, &done, &failed, &err);
	else
		return pl_die(PL_EXIT_USAGE, "unknown action '%s': expected show, tune or reset",
			      what);
	int out = print_changes(what, done, failed, json);
	json_decref(done);
	json_decref(failed);
	if (rc != PL_OK)
		return pl_die(pl_exit_code(rc), "%s", err.msg);
	return out;
}
