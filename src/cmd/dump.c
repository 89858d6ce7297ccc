/*
 * perfloop dump: the Python stacks of a running CPython process, once
 * (py-spy dump): every thread, running or waiting, read from outside the
 * process with the profiler's reader (profile/python/pystack.c), never stopping it.
 */
#include <dirent.h>
#include <getopt.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cmd.h"
#include "error.h"
#include "fsio.h"
#include "grow.h"
#include "native.h"
#include "procid.h"
#include "profdata.h"
#include "ptsnap.h"
#include "pyproc.h"
#include "pystack.h"
#include "strbuf.h"

const char cmd_dump_usage[] =
    "usage: perfloop dump [--json] [--native | --locals] -p PID\n"
    "       perfloop dump [--json] [--native | --locals] PID\n"
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
    "      --native    the C, C++ and Rust frames too, with the Python frames\n"
    "                  where the interpreter ran them (as py-spy dump --native):\n"
    "                  the threads are stopped for the instant of the reading\n"
    "                  (ptrace: your own child, ptrace_scope 0 or root);\n"
    "                  x86-64\n"
    "      --locals    each frame's local variables (py-spy dump --locals):\n"
    "                  numbers, strings (cut), None and bools by value,\n"
    "                  containers by size, other objects by type; read while\n"
    "                  the program runs; CPython 3.11 to 3.13 for now\n"
    "      --json      print JSON: {pid, command, python, threads: [{tid, name,\n"
    "                  active, gil, frames: [{function, file, line, native,\n"
    "                  locals: [{name, value, type}] with --locals}]}]}\n"
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
	struct pl_pystack *st; /* --locals: read through it */
	int locals, locals_rc;
};

/* --locals: frame i's local variables as a JSON list */
static json_t *frame_locals(struct dump *d, size_t i)
{
	struct pl_pylocal *v;
	size_t n;
	int rc = pl_pystack_locals(d->st, i, &v, &n);
	if (rc != PL_OK) {
		if (rc == PL_ENOTSUP || rc == PL_ENOMEM)
			d->locals_rc = rc;
		return json_array();
	}
	json_t *a = json_array();
	for (size_t k = 0; k < n; k++)
		json_array_append_new(a, json_pack("{s:s, s:s, s:s}", "name", v[k].name, "value",
						   v[k].value, "type", v[k].type));
	pl_pylocals_free(v, n);
	return a;
}

static void one_thread(void *arg, const struct pl_pythread *t)
{
	struct dump *d = arg;
	char name[64];
	pl_thread_name(d->pid, t->tid, t->name, name, sizeof name);
	json_t *frames = json_array();
	for (size_t i = 0; i < t->depth; i++) {
		const struct pl_pyframe *f = &t->frames[i];
		json_t *fr = json_pack("{s:s, s:s, s:i, s:b}", "function",
				       f->code && f->code->name ? f->code->name : "?", "file",
				       f->code && f->code->file ? f->code->file : "?", "line",
				       f->line, "native", 0);
		if (d->locals)
			json_object_set_new(fr, "locals", frame_locals(d, i));
		json_array_append_new(frames, fr);
	}
	json_array_append_new(d->threads, json_pack("{s:I, s:s, s:b, s:b, s:b, s:o}", "tid",
						   (json_int_t)t->tid, "name", name, "active",
						   !t->idle, "gil", t->gil, "truncated",
						   t->truncated, "frames", frames));
}

/* ---- --native: one instant of every thread, stopped ---- */

struct nthread {
	unsigned long tid;
	char name[64];
	int idle, gil, truncated;
	uint32_t *py; /* Python frame ids, leaf first */
	uint8_t *entry;
	size_t npy;
};

struct ndump {
	pid_t pid;
	struct pl_pystack *st;
	struct pl_prof prof;
	unsigned char *is_py; /* per frame id: a Python frame */
	size_t capis;
	struct nthread *th;
	size_t n, cap;
	int oom, rc;
	struct pl_pysample_stats ss;
};

static void native_py_thread(void *arg, const struct pl_pythread *t)
{
	struct ndump *D = arg;
	if (pl_grow((void **)&D->th, &D->cap, D->n + 1, sizeof *D->th, 8) < 0) {
		D->oom = 1;
		return;
	}
	struct nthread *x = &D->th[D->n++];
	memset(x, 0, sizeof *x);
	x->tid = t->tid;
	pl_thread_name(D->pid, t->tid, t->name, x->name, sizeof x->name);
	x->idle = t->idle;
	x->gil = t->gil;
	x->truncated = t->truncated;
	x->py = malloc((t->depth + 1) * sizeof *x->py);
	x->entry = malloc(t->depth + 1);
	if (!x->py || !x->entry) {
		D->oom = 1;
		return;
	}
	for (size_t i = 0; i < t->depth; i++) {
		const struct pl_pyframe *f = &t->frames[i];
		long id = pl_prof_frame(&D->prof, f->code && f->code->name ? f->code->name : "?",
					f->code && f->code->file ? f->code->file : "?", f->line,
					f->code ? f->code->firstline : 0, 0);
		size_t was = D->capis;
		if (id < 0 ||
		    pl_grow((void **)&D->is_py, &D->capis, (size_t)id + 1, 1, 256) < 0) {
			D->oom = 1;
			return;
		}
		memset(D->is_py + was, 0, D->capis - was); /* pl_grow leaves it as it was */
		D->is_py[id] = 1;
		x->py[x->npy] = (uint32_t)id;
		x->entry[x->npy++] = (uint8_t)f->entry;
	}
}

/* while every thread stands still: their Python stacks, consistent */
static void native_read_py(void *arg)
{
	struct ndump *D = arg;
	D->rc = pl_pystack_sample(D->st, PL_PYSAMPLE_IDLE | PL_PYSAMPLE_NAMES, native_py_thread, D,
				  &D->ss);
}

static struct nthread *nthread_of(struct ndump *D, unsigned long tid)
{
	for (size_t i = 0; i < D->n; i++)
		if (D->th[i].tid == tid)
			return &D->th[i];
	return NULL;
}

#define NATIVE_STACK (256 * 1024)
#define NATIVE_MAX_PCS 2048

/* Each thread's frames (ids, leaf first) into the JSON list of threads */
static int dump_native(struct ndump *D, json_t *threads, struct pl_error *err)
{
	struct pl_native_syms *syms = pl_native_syms_new(&D->prof, 1);
	if (!syms)
		return PL_ENOMEM;
	pl_native_syms_maps(syms, D->pid);
	/* whether each thread runs, read before the stop (stopped, every
	 * one would read as idle) */
	char path[96], buf[512];
	unsigned long running[256];
	size_t nrun = 0;
	snprintf(path, sizeof path, "/proc/%d/task", (int)D->pid);
	DIR *dir = opendir(path);
	struct dirent *de;
	while (dir && (de = readdir(dir)) && nrun < sizeof running / sizeof *running) {
		if (de->d_name[0] < '0' || de->d_name[0] > '9')
			continue;
		snprintf(path, sizeof path, "/proc/%d/task/%.20s/stat", (int)D->pid, de->d_name);
		const char *st = pl_proc_stat_read(path, buf, sizeof buf);
		if (st && *st == 'R')
			running[nrun++] = strtoul(de->d_name, NULL, 10);
	}
	if (dir)
		closedir(dir);
	struct pl_ptsnap_thread *snap = NULL;
	size_t ns = 0;
	int rc = pl_ptsnap_take(D->pid, NATIVE_STACK, native_read_py, D, &snap, &ns, err);
	if (rc == PL_OK && (D->oom || D->rc == PL_ENOMEM))
		rc = PL_ENOMEM;
	else if (rc == PL_OK && D->rc != PL_OK)
		rc = pl_error_set(err, PL_EINPUT, "process %d exited or changed while being read",
				  (int)D->pid);
	uint64_t *pcs = malloc(NATIVE_MAX_PCS * sizeof *pcs);
	uint32_t *ids = malloc((NATIVE_MAX_PCS * 4 + PL_PYSTACK_MAX_DEPTH) * sizeof *ids);
	if (rc == PL_OK && (!pcs || !ids))
		rc = PL_ENOMEM;
	for (size_t i = 0; rc == PL_OK && i < ns; i++) {
		struct pl_ptsnap_thread *t = &snap[i];
		if (!t->stopped)
			continue;
		struct nthread none = {0}, *x = nthread_of(D, (unsigned long)t->tid);
		if (!x) { /* no Python frames: a library's thread, or C only */
			x = &none;
			x->tid = (unsigned long)t->tid;
			pl_thread_name(D->pid, x->tid, NULL, x->name, sizeof x->name);
			x->idle = 1;
		}
		x->idle = 1;
		for (size_t r = 0; r < nrun; r++)
			x->idle &= running[r] != x->tid;
		size_t n = pl_native_unwind(syms, D->pid, t->tid, t->regs, t->stack, t->stack_len,
					    pcs, NATIVE_MAX_PCS);
		int approx = 0, unmatched = 0;
		size_t depth = pl_native_splice(syms, D->pid, pcs, n, x->py, x->entry, x->npy, ids,
						NATIVE_MAX_PCS * 4 + PL_PYSTACK_MAX_DEPTH, &approx,
						&unmatched);
		json_t *frames = json_array();
		for (size_t k = 0; k < depth; k++) {
			const struct pl_prof_frame *f = &D->prof.frames[ids[k]];
			int py = ids[k] < D->capis && D->is_py[ids[k]];
			json_array_append_new(frames,
					      json_pack("{s:s, s:s, s:i, s:b}", "function",
							f->name ? f->name : "?", "file",
							f->file ? f->file : "", "line", f->line,
							"native", !py));
		}
		json_array_append_new(
		    threads, json_pack("{s:I, s:s, s:b, s:b, s:b, s:o}", "tid", (json_int_t)x->tid,
				       "name", x->name, "active", !x->idle, "gil", x->gil,
				       "truncated", x->truncated, "frames", frames));
	}
	free(pcs);
	free(ids);
	pl_ptsnap_free(snap, ns);
	pl_native_syms_free(syms);
	return rc;
}

static void ndump_release(struct ndump *D)
{
	for (size_t i = 0; i < D->n; i++) {
		free(D->th[i].py);
		free(D->th[i].entry);
	}
	free(D->th);
	free(D->is_py);
	pl_prof_release(&D->prof);
}

int cmd_dump(int argc, char **argv, const struct pl_ctx *ctx)
{
	(void)ctx;
	enum { OPT_JSON = 256, OPT_NATIVE, OPT_LOCALS };
	static const struct option opts[] = {
	    {"pid", required_argument, NULL, 'p'},
	    {"json", no_argument, NULL, OPT_JSON},
	    {"native", no_argument, NULL, OPT_NATIVE},
	    {"locals", no_argument, NULL, OPT_LOCALS},
	    {"help", no_argument, NULL, 'h'},
	    {NULL, 0, NULL, 0},
	};
	const char *pidarg = NULL;
	int json = 0, native = 0, locals = 0, c;
	optind = 1;
	while ((c = getopt_long(argc, argv, "+p:h", opts, NULL)) != -1) {
		switch (c) {
		case 'p':
			pidarg = optarg;
			break;
		case OPT_JSON:
			json = 1;
			break;
		case OPT_NATIVE:
			native = 1;
			break;
		case OPT_LOCALS:
			locals = 1;
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
	if (locals && native)
		return pl_die(PL_EXIT_USAGE, "dump: --locals with --native is not there yet: "
					     "one or the other");
	char *end;
	long pid = strtol(pidarg, &end, 10);
	if (*end || end == pidarg || pid <= 0 || pid > 4194304)
		return pl_die(PL_EXIT_USAGE, "dump: --pid: expected a process id, got '%s'", pidarg);

	struct pl_error err = {{0}};
	struct pl_pystack *st;
	if (pl_pystack_open((pid_t)pid, &st, &err) < 0)
		return pl_die(PL_EXIT_USAGE, "%s", err.msg);
	struct dump d = {(pid_t)pid, NULL, st, locals, PL_OK};
	/* a stack read while the program changes it is inconsistent: a few
	 * tries at one whole reading, then say so (with --native the threads
	 * stand still: one reading) */
	int rc = PL_OK;
	struct pl_pysample_stats ss = {0};
	if (native) {
		struct ndump D = {.pid = (pid_t)pid, .st = st};
		d.threads = json_array();
		rc = dump_native(&D, d.threads, &err);
		ss = D.ss;
		ndump_release(&D);
		if (rc != PL_OK) {
			pl_pystack_close(st);
			json_decref(d.threads);
			return pl_die(rc == PL_ENOMEM ? PL_EXIT_INTERNAL : PL_EXIT_USAGE, "%s",
				      rc == PL_ENOMEM ? "out of memory" : err.msg);
		}
	}
	for (int attempt = 0; !native && attempt < 20; attempt++) {
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
	if (d.locals_rc == PL_ENOTSUP) {
		pl_pystack_close(st);
		json_decref(d.threads);
		return pl_die(PL_EXIT_USAGE,
			      "dump --locals: process %ld runs Python %s; the locals are read "
			      "from CPython 3.11 to 3.13 for now (the stacks of every version: "
			      "without --locals)",
			      pid, version);
	}
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
		{
			const char *file = json_string_value(json_object_get(f, "file"));
			long long line = json_integer_value(json_object_get(f, "line"));
			if (!file || !*file)
				pl_strbuf_printf(&b, "    %s\n",
						 json_string_value(json_object_get(f, "function")));
			else if (line > 0)
				pl_strbuf_printf(&b, "    %s (%s:%lld)\n",
						 json_string_value(json_object_get(f, "function")),
						 file, line);
			else
				pl_strbuf_printf(&b, "    %s (%s)\n",
						 json_string_value(json_object_get(f, "function")),
						 file);
			size_t q;
			json_t *l;
			json_array_foreach(json_object_get(f, "locals"), q, l)
			pl_strbuf_printf(&b, "        %s = %s\n",
					 json_string_value(json_object_get(l, "name")),
					 json_string_value(json_object_get(l, "value")));
		}
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
