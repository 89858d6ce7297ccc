/*
 * perfloop dump: the Python stacks of a running CPython process, once
 * (py-spy dump): every thread, running or waiting, read from outside the
 * process with the profiler's reader (profile/python/pystack.c), never stopping it.
 */
#include <getopt.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cmd.h"
#include "error.h"
#include "fsio.h"
#include "pyproc.h"
#include "pystack.h"
#include "strbuf.h"

const char cmd_dump_usage[] =
    "usage: perfloop dump [--json] -p PID\n"
    "       perfloop dump [--json] PID\n"
    "\n"
    "Print the Python stack of every thread of a running CPython 3.11-3.15\n"
    "process, once, leaf first, as py-spy dump does: where a program that\n"
    "seems stuck is, without stopping it (read with process_vm_readv, as\n"
    "profile does). Each thread is marked active (running) or idle (waiting or\n"
    "sleeping), +gil where it holds the GIL, with its threading name (read\n"
    "from the process; MainThread for the main one).\n"
    "\n"
    "Options:\n"
    "  -p, --pid PID   the process (or give PID as the argument)\n"
    "      --json      print JSON: {pid, command, python, threads: [{tid, name,\n"
    "                  active, gil, frames: [{function, file, line}]}]}\n"
    "  -h, --help      this text\n"
    "\n"
    "Exit status: 0 printed, 1 no consistent stack could be read (the process\n"
    "was changing it: run again), 2 bad usage, or a process that does not\n"
    "exist, is not a CPython it reads, or cannot be read (the message names\n"
    "what is missing: a permission).\n"
    "\n"
    "Examples:\n"
    "  perfloop dump -p $(pgrep -f train.py)\n"
    "  perfloop dump --json 4242 | jq '.threads[0].frames[0]'\n";

/* What py-spy shows a thread as: the main thread is MainThread (CPython's
 * name for it); others by threading's name where it was read from the
 * process (pyname), else by the name the kernel has (which 3.14 and later
 * set from threading's, cut to 15 bytes; or the process's). */
void pl_thread_name(pid_t pid, unsigned long tid, const char *pyname, char *out, size_t len)
{
	if ((unsigned long)pid == tid) {
		snprintf(out, len, "MainThread");
		return;
	}
	if (pyname && *pyname) {
		snprintf(out, len, "%s", pyname);
		return;
	}
	char path[96];
	snprintf(path, sizeof path, "/proc/%d/task/%lu/comm", (int)pid, tid);
	if (pl_fsio_first_line(path, out, len) != 0 || !out[0])
		snprintf(out, len, "?");
}

struct dump {
	pid_t pid;
	json_t *threads;
};

static void one_thread(void *arg, const struct pl_pythread *t)
{
	struct dump *d = arg;
	char name[64];
	pl_thread_name(d->pid, t->tid, t->name, name, sizeof name);
	json_t *frames = json_array();
	for (size_t i = 0; i < t->depth; i++) {
		const struct pl_pyframe *f = &t->frames[i];
		json_array_append_new(frames, json_pack("{s:s, s:s, s:i}", "function",
							f->code && f->code->name ? f->code->name : "?",
							"file",
							f->code && f->code->file ? f->code->file : "?",
							"line", f->line));
	}
	json_array_append_new(d->threads, json_pack("{s:I, s:s, s:b, s:b, s:b, s:o}", "tid",
						   (json_int_t)t->tid, "name", name, "active",
						   !t->idle, "gil", t->gil, "truncated",
						   t->truncated, "frames", frames));
}

int cmd_dump(int argc, char **argv, const struct pl_ctx *ctx)
{
	(void)ctx;
	enum { OPT_JSON = 256 };
	static const struct option opts[] = {
	    {"pid", required_argument, NULL, 'p'},
	    {"json", no_argument, NULL, OPT_JSON},
	    {"help", no_argument, NULL, 'h'},
	    {NULL, 0, NULL, 0},
	};
	const char *pidarg = NULL;
	int json = 0, c;
	optind = 1;
	while ((c = getopt_long(argc, argv, "+p:h", opts, NULL)) != -1) {
		switch (c) {
		case 'p':
			pidarg = optarg;
			break;
		case OPT_JSON:
			json = 1;
			break;
		case 'h':
			fputs(cmd_dump_usage, stdout);
			return PL_EXIT_OK;
		default:
			return pl_bad_option(c, argv, "dump");
		}
	}
	if (optind < argc && !pidarg)
		pidarg = argv[optind++];
	if (optind < argc)
		return pl_die(PL_EXIT_USAGE, "dump: unexpected argument '%s' (one PID)", argv[optind]);
	if (!pidarg)
		return pl_die(PL_EXIT_USAGE, "dump: which process? perfloop dump -p PID");
	char *end;
	long pid = strtol(pidarg, &end, 10);
	if (*end || end == pidarg || pid <= 0 || pid > 4194304)
		return pl_die(PL_EXIT_USAGE, "dump: --pid: expected a process id, got '%s'", pidarg);

	struct pl_error err = {{0}};
	struct pl_pystack *st;
	if (pl_pystack_open((pid_t)pid, &st, &err) < 0)
		return pl_die(PL_EXIT_USAGE, "%s", err.msg);
	struct dump d = {(pid_t)pid, NULL};
	/* a stack read while the program changes it is inconsistent: a few
	 * tries at one whole reading, then say so */
	int rc = PL_OK;
	struct pl_pysample_stats ss = {0};
	for (int attempt = 0; attempt < 20; attempt++) {
		json_decref(d.threads);
		d.threads = json_array();
		memset(&ss, 0, sizeof ss);
		rc = pl_pystack_sample(st, PL_PYSAMPLE_IDLE | PL_PYSAMPLE_NAMES, one_thread, &d,
				       &ss);
		if (rc != PL_OK || ss.errors == 0)
			break;
		usleep(2000);
	}
	char version[32];
	snprintf(version, sizeof version, "%s", pl_pystack_version(st));
	pl_pystack_close(st);
	if (rc != PL_OK) {
		json_decref(d.threads);
		return pl_die(PL_EXIT_USAGE, "process %ld exited or changed (exec) while being read",
			      pid);
	}
	if (ss.errors && !json_array_size(d.threads)) {
		json_decref(d.threads);
		fprintf(stderr, "perfloop dump: no consistent stack read from process %ld in 20 "
				"tries (it kept changing them); run again\n",
			pid);
		return PL_EXIT_NEGATIVE;
	}
	char cmd[512];
	pl_pyproc_cmdline((pid_t)pid, cmd, sizeof cmd);
	if (json) {
		json_t *doc = json_pack("{s:I, s:s, s:s, s:O}", "pid", (json_int_t)pid, "command", cmd,
					"python", version, "threads", d.threads);
		char *text = doc ? pl_json_text(doc) : NULL;
		json_decref(doc);
		json_decref(d.threads);
		if (!text)
			return pl_die(PL_EXIT_INTERNAL, "out of memory");
		fputs(text, stdout);
		free(text);
		return PL_EXIT_OK;
	}
	struct pl_strbuf b = {0};
	pl_strbuf_printf(&b, "Process %ld: %s\nPython %s\n", pid, cmd, version);
	size_t i;
	json_t *t;
	json_array_foreach(d.threads, i, t)
	{
		pl_strbuf_printf(&b, "\nThread %lld (%s%s): \"%s\"\n",
				 (long long)json_integer_value(json_object_get(t, "tid")),
				 json_is_true(json_object_get(t, "active")) ? "active" : "idle",
				 json_is_true(json_object_get(t, "gil")) ? "+gil" : "",
				 json_string_value(json_object_get(t, "name")));
		size_t k;
		json_t *f;
		json_array_foreach(json_object_get(t, "frames"), k, f)
		pl_strbuf_printf(&b, "    %s (%s:%lld)\n",
				 json_string_value(json_object_get(f, "function")),
				 json_string_value(json_object_get(f, "file")),
				 (long long)json_integer_value(json_object_get(f, "line")));
		if (json_is_true(json_object_get(t, "truncated")))
			pl_strbuf_puts(&b, "    ... (deeper frames not read)\n");
	}
	if (ss.errors)
		pl_strbuf_printf(&b, "\n(%zu thread%s changed while being read and %s left out)\n",
				 ss.errors, ss.errors == 1 ? "" : "s",
				 ss.errors == 1 ? "is" : "are");
	json_decref(d.threads);
	if (b.failed)
		return pl_die(PL_EXIT_INTERNAL, "out of memory");
	fputs(b.s ? b.s : "", stdout);
	free(b.s);
	return PL_EXIT_OK;
}
