/*
 * perfloop profile: launch or attach to a CPython program and sample its
 * Python stacks from outside (profile/python/pystack.c), then write the top table,
 * collapsed stacks, a flame graph, a speedscope file and findings
 * (profile/profdata.c, report/flamegraph.c).
 *
 * The sampling loop paces itself with absolute deadlines
 * (clock_nanosleep(TIMER_ABSTIME)), so time spent sampling does not slow
 * the rate; a tick that is already late is taken at once and the next
 * deadline moves on from now, never bursting to catch up.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <getopt.h>
#include <math.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ptrace.h>
#include <sys/resource.h>
#include <sys/uio.h>
#include <sys/user.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "cmd.h"
#include "findings.h"
#include "fsio.h"
#include "gpu.h"
#include "grow.h"
#include "fingerprint.h"
#include "allocprof.h"
#include "counters.h"
#include "launch.h"
#include "native.h"
#include "pyproc.h"
#include "syscalls.h"
#include "ranks.h"
#include "monotime.h"
#include "memtrack.h"
#include "profdata.h"
#include "pystack.h"
#include "render.h"
#include "spawn.h"
#include "steps.h"
#include "strbuf.h"
#include "trainloop.h"
#include "words.h"

const char cmd_profile_usage[] =
    "usage: perfloop profile [OPTIONS] -- CMD [ARG...]\n"
    "       perfloop profile [OPTIONS] -p PID\n"
    "\n"
    "Sample a program's stacks from outside the process and show the hottest\n"
    "functions; writes collapsed stacks, a flame graph, a speedscope file and\n"
    "findings. Python mode reads a CPython 3.11-3.15 program's Python stacks\n"
    "with process_vm_readv (never stopping it); native mode samples C/C++ (any\n"
    "compiled code) with perf_event_open on the CPU clock, following children\n"
    "and threads, with function, file:line and inlined frames from DWARF.\n"
    "\n"
    "Options:\n"
    "  -p, --pid PID         attach to a running process instead of launching CMD\n"
    "      --mode MODE       auto (default: python for a CPython interpreter or a\n"
    "                        script run by one, native otherwise), python, native,\n"
    "                        or mixed: CPython's stacks with the native code below\n"
    "                        each Python frame (the C of zlib, numpy, torch...);\n"
    "                        it stops the threads briefly at each sample (x86-64)\n"
    "      --unwind HOW      native stacks: auto (default: dwarf on x86-64), dwarf\n"
    "                        (CFI over a copy of the stack: right without frame\n"
    "                        pointers), fp (the kernel's frame-pointer chain: cheaper,\n"
    "                        cut short where code has none)\n"
    "      --event NAME      native: what a sample counts: cpu-clock (default, works\n"
    "                        on VMs), task-clock, page-faults, context-switches, or\n"
    "                        a hardware counter (cycles, instructions, cache-misses,\n"
    "                        ...) where the machine has it\n"
    "      --kernel          native: the kernel's call chains above the user stack,\n"
    "                        named from /proc/kallsyms (needs perf_event_paranoid 1\n"
    "                        or lower, or root)\n"
    "      --rate HZ         samples per second (default 1000)\n"
    "  -d, --duration SECS   stop after SECS seconds (default: when the program\n"
    "                        exits, or Ctrl-C); a launched program is then stopped\n"
    "      --lines           attribute samples to the line being run, not only the\n"
    "                        function (the line-profiler view)\n"
    "      --idle            include threads that are not running (waiting,\n"
    "                        sleeping; python mode: native mode samples CPU time)\n"
    "      --gil             python mode: only the thread holding the GIL (where\n"
    "                        Python threads contend for it: what runs Python)\n"
    "      --threads         keep threads apart: a root frame per thread\n"
    "      --fold-imports    python mode: a stack inside an import ends in one\n"
    "                        frame, '(import json)', instead of the tower of\n"
    "                        importlib frames above it (start-up and imports\n"
    "                        take their width, not the picture's height)\n"
    "      --full-paths      show frames' files as read; by default they are\n"
    "                        relative to the current directory, the package\n"
    "                        (site-packages/) or the standard library, as py-spy\n"
    "                        shortens them (--full-filenames: the same)\n"
    "      --gpu             python mode: sample the GPUs (NVML, loaded at run time)\n"
    "                        beside the stacks; writes PREFIX.gpu.json\n"
    "      --gpu-hz HZ       GPU readings per second (default 10)\n"
    "      --memory          each process's RSS read with the stacks, its rises\n"
    "                        charged to the stack sampled then (every mode):\n"
    "                        PREFIX.memory.svg/.folded (KiB of growth) and\n"
    "                        PREFIX.memory.json (peak, its stack, RSS over time,\n"
    "                        PSS and USS)\n"
    "      --alloc           a launched program's allocations instead of its CPU:\n"
    "                        malloc & co. sampled in the process (a preloaded\n"
    "                        library), bytes allocated, live at the peak and at\n"
    "                        exit by stack: PREFIX.alloc.svg, .alloc-peak.svg,\n"
    "                        .alloc-exit.svg (+ .folded) and PREFIX.alloc.json\n"
    "      --alloc-rate BYTES  one sample per BYTES allocated on average\n"
    "                        (default 512K; suffixes K, M, G)\n"
    "      --syscalls        system calls instead of the CPU (launched or -p),\n"
    "                        through the kernel's tracepoints (no ptrace): calls,\n"
    "                        errors, time, p99 and bytes per call, the files read\n"
    "                        and written most, I/O findings; PREFIX.syscalls.json\n"
    "      --subprocesses    follow child processes (multiprocessing, DataLoader\n"
    "                        workers): a root frame per process\n"
    "  -o, --out PREFIX      output path prefix (default: profile); -o NAME.svg\n"
    "                        writes NAME.svg and the rest beside it; under mpirun,\n"
    "                        srun or torchrun %r is the rank, %l the local rank,\n"
    "                        %h the host, %p the PID (see perfloop merge)\n"
    "      --rank-filter LIST  under a launcher, profile only these ranks (0,3 or\n"
    "                        0-3); the others run the command unprofiled\n"
    "      --format LIST     comma-separated: folded, svg, speedscope, findings,\n"
    "                        html (the flame graph page alone), or none (default:\n"
    "                        folded,svg,speedscope,findings)\n"
    "      --top N           rows in the table (default 15)\n"
    "      --min-share PCT   functions with at least PCT% of samples as their own\n"
    "                        become findings (default 5)\n"
    "  -h, --help            this text\n"
    "\n"
    "Writes PREFIX.folded (root first, 'frame;frame count'), PREFIX.svg (flame\n"
    "graph: click to zoom, Ctrl-F to search), PREFIX.speedscope.json (open in\n"
    "speedscope.app) and PREFIX.findings.json (perfloop.findings/1). Frames read\n"
    "'function (file:line)'.\n"
    "\n"
    "Exit status: 0 profiled, 2 bad usage, or a process that does not exist, is\n"
    "not a CPython it reads (python mode), or cannot be read or sampled (the\n"
    "message names what is missing: a permission, perf_event_paranoid),\n"
    "3 the launched program failed or was killed (the profile is still written),\n"
    "130 interrupted (what was gathered is written).\n"
    "\n"
    "Examples:\n"
    "  perfloop profile -- python3 train.py --epochs 1\n"
    "  perfloop profile -o sort -- ./sort big.txt        # native: C, C++, Rust\n"
    "  perfloop profile -p 4242 -d 10 --lines -o /tmp/serve\n"
    "  perfloop profile --subprocesses --threads --rate 250 -- python3 loader.py\n";

enum {
	OPT_LINES = 256,
	OPT_IDLE,
	OPT_GIL,
	OPT_GPU,
	OPT_GPU_HZ,
	OPT_THREADS,
	OPT_SUBPROC,
	OPT_FORMAT,
	OPT_TOP,
	OPT_MINSHARE,
	OPT_MODE,
	OPT_UNWIND,
	OPT_EVENT,
	OPT_KERNEL,
	OPT_FULL_PATHS,
	OPT_FOLD_IMPORTS,
	OPT_MEMORY,
	OPT_ALLOC,
	OPT_ALLOC_RATE,
	OPT_SYSCALLS,
	OPT_RANK_FILTER,
	OPT_LIVE_TABLE
};

static const struct option longopts[] = {
    {"pid", required_argument, NULL, 'p'},
    {"rate", required_argument, NULL, 'r'},
    {"duration", required_argument, NULL, 'd'},
    {"lines", no_argument, NULL, OPT_LINES},
    {"idle", no_argument, NULL, OPT_IDLE},
    {"gil", no_argument, NULL, OPT_GIL},
    {"gpu", no_argument, NULL, OPT_GPU},
    {"gpu-hz", required_argument, NULL, OPT_GPU_HZ},
    {"threads", no_argument, NULL, OPT_THREADS},
    {"full-paths", no_argument, NULL, OPT_FULL_PATHS},
    {"full-filenames", no_argument, NULL, OPT_FULL_PATHS},
    {"fold-imports", no_argument, NULL, OPT_FOLD_IMPORTS},
    {"memory", no_argument, NULL, OPT_MEMORY},
    {"alloc", no_argument, NULL, OPT_ALLOC},
    {"alloc-rate", required_argument, NULL, OPT_ALLOC_RATE},
    {"syscalls", no_argument, NULL, OPT_SYSCALLS},
    {"rank-filter", required_argument, NULL, OPT_RANK_FILTER},
    {"live-table", no_argument, NULL, OPT_LIVE_TABLE}, /* perfloop top's */
    {"subprocesses", no_argument, NULL, OPT_SUBPROC},
    {"out", required_argument, NULL, 'o'},
    {"format", required_argument, NULL, OPT_FORMAT},
    {"top", required_argument, NULL, OPT_TOP},
    {"min-share", required_argument, NULL, OPT_MINSHARE},
    {"mode", required_argument, NULL, OPT_MODE},
    {"unwind", required_argument, NULL, OPT_UNWIND},
    {"event", required_argument, NULL, OPT_EVENT},
    {"kernel", no_argument, NULL, OPT_KERNEL},
    {"help", no_argument, NULL, 'h'},
    {NULL, 0, NULL, 0},
};

enum { FMT_FOLDED = 1, FMT_SVG = 2, FMT_SPEEDSCOPE = 4, FMT_FINDINGS = 8, FMT_HTML = 16 };

enum mode { MODE_AUTO, MODE_PYTHON, MODE_NATIVE, MODE_MIXED };

struct opts {
	pid_t pid;
	enum mode mode;
	enum pl_unwind unwind;
	int event; /* native mode: -1 the CPU clock, else a counter id */
	int kernel;
	double rate, duration, min_share;
	int lines, idle, gil, threads, subprocs, formats, gpu, full_paths, fold_imports, memory;
	int alloc;		 /* --alloc: the preloaded sampler instead of stacks */
	int syscalls;		 /* --syscalls: the tracepoints instead of stacks */
	unsigned long long alloc_rate; /* --alloc-rate: mean bytes between samples */
	int live_table; /* perfloop top: the table redrawn every second */
	double gpu_hz;
	long top;
	const char *out;
	int out_given; /* -o given: never renamed per rank */
	char **argv;
	struct pl_rank rank;	 /* under a launcher: which rank this is */
	const char *rank_filter; /* --rank-filter: the ranks to profile */
};

/* One sampled process. */
struct target {
	pid_t pid;
	struct pl_pystack *st;
	int gone;
	int fails;  /* consecutive unreadable samples */
	int tries;  /* attach attempts while not (yet) CPython */
	long frame; /* synthetic "process" frame id, -1 none */
	char cmd[256];
	int statm_fd;	 /* --memory: /proc/PID/statm, -1 not open */
	double rss_last; /* its RSS at the last tick, bytes */
};

/* (code object, line) -> frame id: saves hashing strings per frame. */
struct fcache_ent {
	const void *code;
	int line;
	uint32_t id;
};

struct thread_frame {
	pid_t pid;
	unsigned long tid;
	uint32_t id;
	char name[64]; /* threading's name it was labelled with, or "" */
};

/* Keeping perfloop off the CPU the sampled program runs on: sharing it,
 * the program is preempted at its system calls for perfloop's wake-ups and
 * the lines making them gain samples (docs/profile.md, "Keeping off the
 * program's CPU"). */
struct cpu_avoid {
	cpu_set_t allowed; /* perfloop's own affinity at the start */
	int on;		   /* allowed holds two CPUs or more */
	int avoiding;	   /* the CPU left out now; -1: none */
	unsigned long tid; /* a thread seen running in the last tick */
	unsigned long fd_tid;
	int fd; /* /proc/TID/stat of fd_tid */
};

struct profiler {
	struct opts o;
	struct cpu_avoid ca;
	struct pl_prof prof;
	struct target *t;
	size_t nt, capt;
	struct fcache_ent *fc;
	size_t nfc, capfc;
	struct thread_frame *tf;
	size_t ntf, captf;
	uint32_t *ids;
	struct target *cur;
	struct pl_pysample_stats stats;
	unsigned long long ticks;
	int oom;
	/* a PyTorch training loop (trainloop.h): found once libtorch is
	 * mapped; then idle threads are read too (waiting for a batch is the
	 * point), for the split only unless --idle */
	int torch;
	double tick_dt; /* seconds this tick's samples stand for */
	int live;	/* stderr is a terminal: a live line while sampling */
	double live_start, live_last, table_last;
	struct pl_train train;
	unsigned char *fphase; /* per frame id: phase + 1, 0 not yet known */
	size_t capfphase, ntrained;
	/* where the loop waits for batches: the caller of __next__ */
	char loop_file[400], loop_func[128];
	int loop_line;
	struct pl_gpu gpu;    /* --gpu */
	/* --memory: the growth profile, and the stack of this tick to charge
	 * (the GIL holder's where one was sampled) */
	struct pl_memtrack mem;
	uint32_t *mstack;
	size_t mdepth;
	int mhave, mgil;
	double mtotal; /* this tick's RSS of every process followed */
};

static int parse_double(const char *s, double lo, double hi, double *out)
{
	char *end;
	errno = 0;
	double v = strtod(s, &end);
	if (errno || end == s || *end || !isfinite(v) || v < lo || v > hi)
		return -1;
	*out = v;
	return 0;
}

static int parse_formats(const char *s, int *out)
{
	int f = 0;
	char buf[256];
	snprintf(buf, sizeof buf, "%s", s);
	for (char *save = NULL, *w = strtok_r(buf, ",", &save); w; w = strtok_r(NULL, ",", &save)) {
		if (strcmp(w, "folded") == 0)
			f |= FMT_FOLDED;
		else if (strcmp(w, "svg") == 0)
			f |= FMT_SVG;
		else if (strcmp(w, "speedscope") == 0)
			f |= FMT_SPEEDSCOPE;
		else if (strcmp(w, "findings") == 0)
			f |= FMT_FINDINGS;
		else if (strcmp(w, "html") == 0)
			f |= FMT_HTML;
		else if (strcmp(w, "none") != 0)
			return -1;
	}
	*out = f;
	return 0;
}

/* This process's own CPU time (user + system), seconds. */
static double self_cpu_s(void)
{
	struct rusage ru;
	getrusage(RUSAGE_SELF, &ru);
	return (double)ru.ru_utime.tv_sec + (double)ru.ru_utime.tv_usec * 1e-6 +
	       (double)ru.ru_stime.tv_sec + (double)ru.ru_stime.tv_usec * 1e-6;
}

static size_t ptr_slot(const void *code, int line, size_t cap)
{
	uint64_t h = ((uint64_t)(uintptr_t)code >> 4) * 0x9e3779b97f4a7c15ULL ^ (uint64_t)line;
	return (size_t)(h * 0x9e3779b97f4a7c15ULL >> 17) & (cap - 1);
}

static long frame_id(struct profiler *P, const struct pl_pyframe *f)
{
	int line = P->o.lines ? f->line : f->code->firstline;
	if (P->nfc * 2 >= P->capfc) {
		size_t cap = P->capfc ? P->capfc * 2 : 4096;
		struct fcache_ent *n = calloc(cap, sizeof *n);
		if (!n)
			return -1;
		for (size_t i = 0; i < P->capfc; i++) {
			if (!P->fc[i].code)
				continue;
			size_t j = ptr_slot(P->fc[i].code, P->fc[i].line, cap);
			while (n[j].code)
				j = (j + 1) & (cap - 1);
			n[j] = P->fc[i];
		}
		free(P->fc);
		P->fc = n;
		P->capfc = cap;
	}
	size_t j = ptr_slot(f->code, line, P->capfc);
	while (P->fc[j].code) {
		if (P->fc[j].code == f->code && P->fc[j].line == line)
			return P->fc[j].id;
		j = (j + 1) & (P->capfc - 1);
	}
	long id =
	    pl_prof_frame(&P->prof, f->code->name, f->code->file, line, f->code->firstline, 0);
	if (id < 0)
		return -1;
	P->fc[j] = (struct fcache_ent){f->code, line, (uint32_t)id};
	P->nfc++;
	return id;
}

static void read_small(const char *path, char *buf, size_t len)
{
	buf[0] = '\0';
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return;
	ssize_t n = read(fd, buf, len - 1);
	close(fd);
	buf[n > 0 ? n : 0] = '\0';
	buf[strcspn(buf, "\n")] = '\0';
}

/* The frame "thread TID (NAME)"; pyname: threading's name for it where
 * the process was read for one (a thread renamed while running gets a
 * frame of each name). */
static long thread_frame(struct profiler *P, pid_t pid, unsigned long tid, const char *pyname)
{
	struct thread_frame *tf = NULL;
	for (size_t i = 0; i < P->ntf && !tf; i++)
		if (P->tf[i].pid == pid && P->tf[i].tid == tid)
			tf = &P->tf[i];
	if (tf && (!pyname || !strncmp(tf->name, pyname, sizeof tf->name - 1)))
		return tf->id;
	char name[64], label[128];
	pl_thread_name(pid, tid, pyname, name, sizeof name);
	snprintf(label, sizeof label, "thread %lu (%s)", tid, name);
	long id = pl_prof_frame(&P->prof, label, "", 0, 0, 1);
	if (id < 0)
		return -1;
	if (!tf) {
		if (pl_grow((void **)&P->tf, &P->captf, P->ntf + 1, sizeof *P->tf, 16) < 0)
			return -1;
		tf = &P->tf[P->ntf++];
	}
	*tf = (struct thread_frame){pid, tid, (uint32_t)id, ""};
	snprintf(tf->name, sizeof tf->name, "%s", pyname ? pyname : "");
	return id;
}

/* Classify a thread's stack (frame ids, root first) for the training
 * split, by the outermost frame that names a phase. */
static int train_sample(struct profiler *P, const struct pl_pythread *t, const uint32_t *ids,
			size_t n)
{
	enum pl_train_phase ph = PL_TRAIN_OTHER;
	for (size_t i = 0; i < n && ph == PL_TRAIN_OTHER; i++) {
		uint32_t id = ids[i];
		if (pl_grow((void **)&P->fphase, &P->capfphase, (size_t)id + 1, 1, 4096) < 0)
			return -1;
		if (id >= P->ntrained) {
			memset(P->fphase + P->ntrained, 0, (size_t)id + 1 - P->ntrained);
			P->ntrained = (size_t)id + 1;
		}
		if (!P->fphase[id]) {
			const struct pl_prof_frame *f = &P->prof.frames[id];
			P->fphase[id] = (unsigned char)(pl_train_frame_phase(f->name, f->file) + 1);
		}
		ph = (enum pl_train_phase)(P->fphase[id] - 1);
		if (ph == PL_TRAIN_DATA && i > 0 && !P->loop_file[0]) {
			/* the caller of __next__, at the line it runs (ids are root
			 * first, t->frames leaf first) */
			const struct pl_pyframe *c = &t->frames[t->depth - i];
			snprintf(P->loop_file, sizeof P->loop_file, "%s", c->code->file);
			snprintf(P->loop_func, sizeof P->loop_func, "%s", c->code->name);
			P->loop_line = c->line;
		}
	}
	return pl_train_add(&P->train, P->cur->pid, t->tid, ph, P->tick_dt);
}

/* --fold-imports: frame i (leaf-first index) is importlib's; the module
 * being imported is the first `<module>` frame nearer the leaf. One
 * synthetic frame, "(import json)", stands for all of them. */
static long import_frame(struct profiler *P, const struct pl_pythread *t, size_t i)
{
	const char *mod = NULL;
	for (size_t k = i; k-- > 0 && !mod;) {
		const struct pl_pycode *c = t->frames[k].code;
		if (c && c->name && c->file && !strcmp(c->name, "<module>") && c->file[0] != '<')
			mod = pl_prof_shown_file(&P->prof, c->file);
	}
	char label[300];
	if (!mod) {
		snprintf(label, sizeof label, "(import)");
	} else {
		size_t len = strlen(mod);
		if (len > 12 && !strcmp(mod + len - 12, "/__init__.py"))
			len -= 12;
		else if (len > 3 && !strcmp(mod + len - 3, ".py"))
			len -= 3;
		snprintf(label, sizeof label, "(import %.*s)", (int)len, mod);
		for (char *c = label + 8; *c; c++)
			if (*c == '/')
				*c = '.';
	}
	return pl_prof_frame(&P->prof, label, "", 0, 0, 1);
}

static void on_thread(void *arg, const struct pl_pythread *t)
{
	struct profiler *P = arg;
	size_t n = 0;
	if (t->depth == 0)
		return; /* no Python frame: starting, or in C code only */
	if (!t->idle)
		P->ca.tid = t->tid;
	if (P->cur->frame >= 0)
		P->ids[n++] = (uint32_t)P->cur->frame;
	if (P->o.threads) {
		long id = thread_frame(P, P->cur->pid, t->tid, t->name);
		if (id < 0)
			goto oom;
		P->ids[n++] = (uint32_t)id;
	}
	if (t->truncated) {
		long id = pl_prof_frame(&P->prof, "(deeper frames not read)", "", 0, 0, 1);
		if (id < 0)
			goto oom;
		P->ids[n++] = (uint32_t)id;
	}
	size_t first = n;
	for (size_t i = t->depth; i-- > 0;) {
		const struct pl_pycode *c = t->frames[i].code;
		if (P->o.fold_imports && c && c->file && !strncmp(c->file, "<frozen importlib", 17)) {
			long id = import_frame(P, t, i);
			if (id < 0)
				goto oom;
			P->ids[n++] = (uint32_t)id;
			break;
		}
		long id = frame_id(P, &t->frames[i]);
		if (id < 0)
			goto oom;
		P->ids[n++] = (uint32_t)id;
	}
	if (P->torch && train_sample(P, t, P->ids + first, n - first) < 0)
		goto oom;
	if (t->idle && !P->o.idle) { /* read for the training split only */
		P->stats.idle++;
		return;
	}
	if (P->o.gil && !t->gil) { /* the same */
		P->stats.nogil++;
		return;
	}
	if (t->idle) {
		/* --idle: a waiting thread's stack ends in "(idle)", so that the
		 * flame graph tells waiting from running and no hot-function
		 * finding names a sleep (synthetic frames are never findings) */
		long id = pl_prof_frame(&P->prof, "(idle)", "", 0, 0, 1);
		if (id < 0)
			goto oom;
		P->ids[n++] = (uint32_t)id;
	}
	if (pl_prof_add(&P->prof, P->ids, n, 1) < 0)
		goto oom;
	if (P->o.memory && (!P->mhave || (t->gil && !P->mgil))) {
		memcpy(P->mstack, P->ids, n * sizeof *P->ids);
		P->mdepth = n;
		P->mhave = 1;
		P->mgil = t->gil;
	}
	return;
oom:
	P->oom = 1;
}

static void cpu_avoid_init(struct cpu_avoid *ca)
{
	ca->avoiding = -1;
	ca->fd = -1;
	ca->on = sched_getaffinity(0, sizeof ca->allowed, &ca->allowed) == 0 &&
		 CPU_COUNT(&ca->allowed) >= 2;
}

/* The CPU the thread last seen running is on; perfloop's affinity set to
 * all its allowed CPUs but that one when it changed. */
static void cpu_avoid_update(struct cpu_avoid *ca)
{
	if (!ca->on || !ca->tid)
		return;
	if (ca->fd < 0 || ca->fd_tid != ca->tid) {
		if (ca->fd >= 0)
			close(ca->fd);
		char path[64];
		snprintf(path, sizeof path, "/proc/%lu/stat", ca->tid);
		ca->fd = open(path, O_RDONLY | O_CLOEXEC);
		ca->fd_tid = ca->tid;
		if (ca->fd < 0)
			return;
	}
	char buf[1024];
	ssize_t n = pread(ca->fd, buf, sizeof buf - 1, 0);
	if (n <= 0)
		return;
	buf[n] = '\0';
	char *p = strrchr(buf, ')');
	/* after "comm)": state is field 3, processor field 39 */
	for (int field = 2; p && field < 39; field++)
		p = strchr(p + 1, ' ');
	if (!p)
		return;
	int cpu = atoi(p + 1);
	if (cpu == ca->avoiding || cpu < 0 || cpu >= CPU_SETSIZE || !CPU_ISSET(cpu, &ca->allowed))
		return;
	cpu_set_t set = ca->allowed;
	CPU_CLR(cpu, &set);
	if (sched_setaffinity(0, sizeof set, &set) == 0)
		ca->avoiding = cpu;
}

static struct target *add_target(struct profiler *P, pid_t pid, struct pl_pystack *st)
{
	if (pl_grow((void **)&P->t, &P->capt, P->nt + 1, sizeof *P->t, 8) < 0)
		return NULL;
	struct target *t = &P->t[P->nt++];
	memset(t, 0, sizeof *t);
	t->pid = pid;
	t->st = st;
	t->frame = -1;
	t->statm_fd = -1;
	pl_pyproc_cmdline(pid, t->cmd, sizeof t->cmd);
	return t;
}

static struct target *find_target(struct profiler *P, pid_t pid)
{
	for (size_t i = 0; i < P->nt; i++)
		if (P->t[i].pid == pid)
			return &P->t[i];
	return NULL;
}

/* Try to attach a pending target: 0 attached, or the library status. */
static int try_attach(struct profiler *P, struct target *t, struct pl_error *err)
{
	struct pl_pystack *st;
	int rc = pl_pystack_open(t->pid, &st, err);
	if (rc < 0)
		return rc;
	t->st = st;
	t->fails = 0;
	pl_pyproc_cmdline(t->pid, t->cmd, sizeof t->cmd);
	if (P->o.subprocs && t->frame < 0) {
		char label[400];
		snprintf(label, sizeof label, "process %d: %s", (int)t->pid, t->cmd);
		t->frame = pl_prof_frame(&P->prof, label, "", 0, 0, 1);
	}
	return 0;
}

/* Add every descendant of the targets that is not known yet (pending until
 * it is seen to be CPython). */
static void scan_children(struct profiler *P)
{
	for (size_t i = 0; i < P->nt; i++) {
		if (P->t[i].gone)
			continue;
		pid_t pid = P->t[i].pid;
		char path[96];
		snprintf(path, sizeof path, "/proc/%d/task", (int)pid);
		DIR *d = opendir(path);
		if (!d)
			continue;
		struct dirent *e;
		while ((e = readdir(d))) {
			if (e->d_name[0] == '.')
				continue;
			char cpath[320], buf[4096];
			snprintf(cpath, sizeof cpath, "/proc/%d/task/%s/children", (int)pid,
				 e->d_name);
			read_small(cpath, buf, sizeof buf);
			for (char *save = NULL, *w = strtok_r(buf, " ", &save); w;
			     w = strtok_r(NULL, " ", &save)) {
				pid_t c = (pid_t)atoi(w);
				if (c > 0 && !find_target(P, c))
					add_target(P, c, NULL); /* may move P->t */
			}
		}
		closedir(d);
	}
}

/* Launch argv; its exec failure is reported through a close-on-exec pipe. */
static pid_t launch(char **argv, struct pl_error *err)
{
	int fds[2];
	if (pipe2(fds, O_CLOEXEC) < 0) {
		pl_error_set(err, PL_ESYS, "pipe: %s", strerror(errno));
		return -1;
	}
	pid_t pid = fork();
	if (pid < 0) {
		pl_error_set(err, PL_ESYS, "fork: %s", strerror(errno));
		close(fds[0]);
		close(fds[1]);
		return -1;
	}
	if (pid == 0) {
		close(fds[0]);
		signal(SIGINT, SIG_DFL);
		signal(SIGTERM, SIG_DFL);
		execvp(argv[0], argv);
		int e = errno;
		(void)!write(fds[1], &e, sizeof e);
		_exit(127);
	}
	close(fds[1]);
	int e = 0;
	ssize_t n;
	do
		n = read(fds[0], &e, sizeof e);
	while (n < 0 && errno == EINTR);
	close(fds[0]);
	if (n == (ssize_t)sizeof e) {
		waitpid(pid, NULL, 0);
		pl_error_set(err, PL_ENOEXEC, "cannot run '%s': %s", argv[0], strerror(e));
		return -1;
	}
	return pid;
}

static void sleep_s(double s)
{
	struct timespec ts = {(time_t)s, (long)((s - (double)(time_t)s) * 1e9)};
	nanosleep(&ts, NULL);
}

/* Stop a launched program: SIGTERM, then SIGKILL after 2 s; reap it. */
/* The launched program's resource use once it is reaped (--memory: the
 * kernel's high-water mark of its RSS). */
static struct rusage child_ru;
static int child_ru_set;

static pid_t reap(pid_t pid, int *status, int flags)
{
	struct rusage ru;
	pid_t r = wait4(pid, status, flags, &ru);
	if (r == pid) {
		child_ru = ru;
		child_ru_set = 1;
	}
	return r;
}

static void stop_child(pid_t pid, int *status)
{
	kill(pid, SIGTERM);
	for (int i = 0; i < 200; i++) {
		if (reap(pid, status, WNOHANG) == pid)
			return;
		sleep_s(0.01);
	}
	kill(pid, SIGKILL);
	reap(pid, status, 0);
}


struct row {
	uint32_t id;
	uint64_t self, total;
};

static int cmp_row(const void *a, const void *b)
{
	const struct row *x = a, *y = b;
	if (x->self != y->self)
		return x->self < y->self ? 1 : -1;
	if (x->total != y->total)
		return x->total < y->total ? 1 : -1;
	return (x->id > y->id) - (x->id < y->id);
}

/* A C++ name for the table when the whole is long: template arguments as
 * <…>, no return type, no parameter list (folded stacks, the flame graph
 * and speedscope keep the full name). */
static const char *short_name(const char *in, char *out, size_t len)
{
	if (strlen(in) <= 48 || len < 16)
		return in;
	/* templates collapsed; "operator<", "operator<<" and "operator()" kept */
	char t[1024];
	size_t o = 0;
	int depth = 0;
	for (const char *p = in; *p && o + 6 < sizeof t; p++) {
		int after_op = p - in >= 8 && strncmp(p - 8, "operator", 8) == 0;
		if (*p == '<' && !after_op && !(p > in && p[-1] == '<' && depth == 0)) {
			if (depth++ == 0) {
				memcpy(t + o, "<\u2026>", 5);
				o += 5;
			}
			continue;
		}
		if (*p == '>' && depth > 0) {
			depth--;
			continue;
		}
		if (!depth)
			t[o++] = *p;
	}
	t[o] = '\0';
	/* the parameter list: the first '(' that is not "operator()" */
	char *par = NULL;
	for (char *p = t; *p && !par; p++)
		if (*p == '(' && !(p - t >= 8 && strncmp(p - 8, "operator", 8) == 0))
			par = p;
	char tail[32] = "";
	if (par) {
		char *inl = strstr(par, " [inlined]");
		if (inl)
			snprintf(tail, sizeof tail, "%s", inl);
		*par = '\0';
	}
	/* the return type: up to the last space not inside "operator new" */
	char *name = t, *sp = strrchr(t, ' ');
	if (sp && !(sp - t >= 8 && strncmp(sp - 8, "operator", 8) == 0))
		name = sp + 1;
	snprintf(out, len, "%.200s%.30s", name, tail);
	return out;
}

static int print_table(const struct profiler *P)
{
	uint64_t *self, *total;
	const struct pl_prof *p = &P->prof;
	if (pl_prof_totals(p, &self, &total) < 0)
		return -1;
	struct row *r = calloc(p->nframes ? p->nframes : 1, sizeof *r);
	if (!r) {
		free(self);
		free(total);
		return -1;
	}
	size_t n = 0;
	for (size_t i = 0; i < p->nframes; i++)
		if (!p->frames[i].synthetic)
			r[n++] = (struct row){(uint32_t)i, self[i], total[i]};
	qsort(r, n, sizeof *r, cmp_row);
	if (n > (size_t)P->o.top)
		n = (size_t)P->o.top;
	if (n)
		printf("\n  %6s  %6s  %8s  %-36s %s\n", "self", "total", "samples", "function",
		       P->o.lines ? "line" : "location");
	double all = p->samples ? (double)p->samples : 1;
	for (size_t k = 0; k < n; k++) {
		const struct pl_prof_frame *f = &p->frames[r[k].id];
		char sn[256];
		const char *name = short_name(f->name, sn, sizeof sn);
		if (!f->file[0]) /* [kernel], [unknown]: no place */
			printf("  %5.1f%%  %5.1f%%  %8llu  %s\n", 100.0 * (double)r[k].self / all,
			       100.0 * (double)r[k].total / all, (unsigned long long)r[k].self,
			       name);
		else if (f->line == 0)
			printf("  %5.1f%%  %5.1f%%  %8llu  %-36s %s\n",
			       100.0 * (double)r[k].self / all, 100.0 * (double)r[k].total / all,
			       (unsigned long long)r[k].self, name, pl_prof_shown_file(p, f->file));
		else
			printf("  %5.1f%%  %5.1f%%  %8llu  %-36s %s:%d\n",
			       100.0 * (double)r[k].self / all, 100.0 * (double)r[k].total / all,
			       (unsigned long long)r[k].self, name, pl_prof_shown_file(p, f->file), f->line);
	}
	free(r);
	free(self);
	free(total);
	return 0;
}

/* py-spy's live line: samples, rate, elapsed time and errors, redrawn on
 * a terminal about four times a second (never into a pipe or file). */
static void live_line(struct profiler *P, int done)
{
	if (!P->live)
		return;
	double now = pl_now_s();
	if (done) {
		if (P->live_last > 0)
			pl_progress_clear(stderr);
		return;
	}
	if (now - P->live_last < 0.25)
		return;
	if (P->live_last == 0) {
		P->live_last = now;
		return;
	}
	P->live_last = now;
	double el = now - P->live_start;
	fprintf(stderr, "\r\033[K  sampling: %llu samples, %.0f/s, %.1f s, %zu errors",
		(unsigned long long)P->prof.samples,
		el > 0 ? (double)P->prof.samples / el : 0.0, el, P->stats.errors);
	fflush(stderr);
}

/* perfloop top: every second, the table so far, on a terminal redrawn in
 * place (the screen cleared first), into a pipe or file one after another. */
static void top_refresh(struct profiler *P)
{
	double now = pl_now_s();
	if (now - P->table_last < 1.0)
		return;
	P->table_last = now;
	double el = now - P->live_start;
	fputs(isatty(STDOUT_FILENO) ? "\033[H\033[2J" : "\n", stdout);
	printf("perfloop top: pid %d: %s\n  %llu samples, %.0f/s, %.1f s, %zu errors "
	       "(Ctrl-C to stop)\n",
	       (int)P->t[0].pid, P->t[0].cmd, (unsigned long long)P->prof.samples,
	       el > 0 ? (double)P->prof.samples / el : 0.0, el, P->stats.errors);
	print_table(P);
	fflush(stdout);
}

static int write_text(const char *prefix, const char *ext, char *text, struct pl_strbuf *names)
{
	struct pl_error err = {{0}};
	char path[4096];
	snprintf(path, sizeof path, "%s%s", prefix, ext);
	if (!text)
		return pl_die(PL_EXIT_INTERNAL, "out of memory writing %s", path);
	int rc = pl_fsio_write_atomic(path, text, strlen(text), &err);
	free(text);
	if (rc < 0)
		return pl_die(pl_exit_code(rc), "%s", err.msg);
	pl_strbuf_printf(names, "%s%s", names->len ? ", " : "", path);
	return 0;
}

/* A folded, SVG or speedscope output, written as it is made (never held
 * whole). */
static int write_prof(const char *prefix, const char *ext, const struct pl_prof *prof,
		      const struct pl_prof_out *how, struct pl_strbuf *names)
{
	struct pl_error err = {{0}};
	char path[4096];
	snprintf(path, sizeof path, "%s%s", prefix, ext);
	int rc = pl_prof_write(prof, how, path, &err);
	if (rc < 0)
		return pl_die(pl_exit_code(rc), "%s", err.msg);
	pl_strbuf_printf(names, "%s%s", names->len ? ", " : "", path);
	return 0;
}

static int write_folded(const char *prefix, const char *ext, const struct pl_prof *prof,
			struct pl_strbuf *names)
{
	return write_prof(prefix, ext, prof, &(struct pl_prof_out){.kind = PL_OUT_FOLDED}, names);
}

/* The flame graph without the frames narrower than 0.1 px at full width,
 * as flamegraph.pl and inferno draw by default: no one sees them, and a
 * million distinct stacks drew 2.1 GB of them (the folded and speedscope
 * files keep every stack). Nothing is left out under 23,600 samples. */
static int write_svg(const char *prefix, const char *ext, const struct pl_prof *prof,
		     const char *title, const char *subtitle, struct pl_strbuf *names)
{
	struct pl_prof_out how = {
	    .kind = PL_OUT_SVG, .title = title, .subtitle = subtitle, .min_px = 0.1};
	return write_prof(prefix, ext, prof, &how, names);
}

/* A JSON output, with the rank that wrote it (merge reads it back). */
static int write_doc(const struct opts *o, const char *ext, json_t *doc, struct pl_strbuf *names)
{
	if (doc)
		json_object_set_new(doc, "launch", pl_rank_json(&o->rank));
	return write_text(o->out, ext, doc ? pl_json_text(doc) : NULL, names);
}

static void print_ms(const char *what, const struct pl_steps_dist *d)
{
	printf("%s p50 %.1f ms, p90 %.1f ms, max %.1f ms", what, d->p50 * 1e3, d->p90 * 1e3,
	       d->max * 1e3);
}

/* The data vs compute split of the training loop, where one was seen:
 * printed, and in *out. 1 found, 0 none, -1 out of memory. */
static int train_report(struct profiler *P, const char *cwd, struct pl_steps *out)
{
	memset(out, 0, sizeof(*out));
	const struct pl_train_thread *x = pl_train_loop_thread(&P->train);
	if (!x)
		return 0;
	int rc = pl_steps_compute(out, x->data, x->total, x->nsteps, -1);
	if (rc == PL_ENOMEM)
		return -1;
	if (rc != PL_OK)
		return 0;
	snprintf(out->data_field, sizeof out->data_field, "data (DataLoader __next__)");
	snprintf(out->total_field, sizeof out->total_field, "step (batch to batch)");
	printf("\nTraining loop: thread %lu of pid %d, %zu steps (%zu of warm-up apart), "
	       "wall-clock time, waits included\n",
	       x->tid, (int)x->pid, out->n, out->warmup);
	printf("  waiting for data %.1f%% of the step time (%.2f s of %.2f s) at %s:%d (%s)\n",
	       100 * out->data_share, out->data.sum, out->total.sum, pl_prof_relative(P->loop_file, cwd),
	       P->loop_line, P->loop_func);
	printf("  per step: ");
	print_ms("data", &out->data);
	printf("; ");
	print_ms("step", &out->total);
	printf("\n  in the loop's thread: forward %.2f s, backward %.2f s, optimizer %.2f s, "
	       "data %.2f s, other %.2f s\n",
	       x->t[PL_TRAIN_FORWARD], x->t[PL_TRAIN_BACKWARD], x->t[PL_TRAIN_OPTIM],
	       x->t[PL_TRAIN_DATA], x->t[PL_TRAIN_OTHER]);
	if (out->warmup)
		printf("  warm-up (%zu steps): data %.1f%% of %.2f s\n", out->warmup,
		       100 * out->w_data_share, out->w_total.sum);
	if (out->data_share > 0.3)
		printf("  ! data-loading bound (ml.data-loading-bound): the step waits for its "
		       "batch; DataLoader(num_workers > 0), pin_memory=True, "
		       "persistent_workers=True, prefetch_factor\n");
	return 1;
}

/* The training findings from before on point at the line that waits for
 * batches. */
static int at_loop(const struct profiler *P, struct pl_findings *f, size_t from)
{
	for (size_t i = from; i < f->n; i++) {
		f->v[i].line = P->loop_line;
		free(f->v[i].function);
		f->v[i].function = strdup(P->loop_func);
		if (!f->v[i].function)
			return -1;
	}
	return 0;
}

static int write_outputs(struct profiler *P, const char *title, const char *cwd,
			 const struct pl_steps *steps)
{
	const struct opts *o = &P->o;
	struct pl_strbuf names = {0};
	char sub[640], exporter[64];
	snprintf(exporter, sizeof exporter, "perfloop %s", PERFLOOP_VERSION);
	char who[320] = "";
	if (strcmp(o->rank.launcher, "none") != 0) {
		char of[32] = ""; /* a launcher may not say the world's size */
		if (o->rank.world_size > 0)
			snprintf(of, sizeof of, " of %ld", o->rank.world_size);
		snprintf(who, sizeof who, ", rank %ld%s on %s", o->rank.rank, of, o->rank.host);
	}
	snprintf(sub, sizeof sub, "%llu samples at %.0f Hz%s%s", (unsigned long long)P->prof.samples,
		 o->rate, o->lines ? ", by line" : "", who);
	int rc = 0;
	if (!rc && (o->formats & FMT_FOLDED))
		rc = write_folded(o->out, ".folded", &P->prof, &names);
	if (!rc && (o->formats & FMT_SVG))
		rc = write_svg(o->out, ".svg", &P->prof, title, sub, &names);
	if (!rc && (o->formats & FMT_HTML))
		rc = write_text(o->out, ".html", pl_prof_html_page(&P->prof, title, sub), &names);
	if (!rc && (o->formats & FMT_SPEEDSCOPE)) {
		/* its name carries the rank (speedscope keeps no other field) */
		char named[1000];
		snprintf(named, sizeof named, "%s%s", title, who);
		struct pl_prof_out how = {
		    .kind = PL_OUT_SPEEDSCOPE, .title = named, .subtitle = exporter};
		rc = write_prof(o->out, ".speedscope.json", &P->prof, &how, &names);
	}
	if (!rc && (o->formats & FMT_FINDINGS)) {
		struct pl_findings f = {0};
		int frc = pl_prof_findings(&P->prof, o->min_share, 20, o->rate, cwd, &f);
		size_t hot = f.n; /* the training findings follow */
		if (frc >= 0 && steps)
			frc = pl_steps_findings(steps, pl_prof_relative(P->loop_file, cwd), &f);
		if (frc >= 0 && o->gpu)
			frc = pl_gpu_findings(&P->gpu, steps ? steps->data_share : -1,
					      pl_prof_relative(P->loop_file, cwd), &f);
		if (frc >= 0)
			frc = at_loop(P, &f, hot);
		if (frc < 0) {
			pl_findings_release(&f);
			free(pl_strbuf_take(&names));
			return pl_die(PL_EXIT_INTERNAL, "out of memory");
		}
		char tool[64];
		snprintf(tool, sizeof tool, "perfloop profile %s", PERFLOOP_VERSION);
		json_t *doc = pl_findings_doc(tool, &f);
		pl_findings_release(&f);
		rc = write_doc(o, ".findings.json", doc, &names);
		json_decref(doc);
	}
	if (!rc && o->gpu && o->formats) {
		json_t *doc = pl_gpu_to_json(&P->gpu);
		json_object_set_new(doc, "schema", json_string("perfloop.gpu/1"));
		rc = write_doc(o, ".gpu.json", doc, &names);
		json_decref(doc);
	}
	if (!rc && o->memory && o->formats) {
		char mtitle[600];
		snprintf(mtitle, sizeof mtitle, "RSS growth: %s", title);
		snprintf(sub, sizeof sub, "KiB of resident memory gained, by the stack sampled as it "
					  "grew (%.0f Hz)",
			 o->rate);
		P->mem.growth.root = P->prof.root;
		P->mem.growth.full_paths = P->prof.full_paths;
		P->mem.growth.unit = "KiB";
		if (o->formats & FMT_FOLDED)
			rc = write_folded(o->out, ".memory.folded", &P->mem.growth, &names);
		if (!rc && (o->formats & FMT_SVG))
			rc = write_svg(o->out, ".memory.svg", &P->mem.growth, mtitle, sub, &names);
		if (!rc) {
			json_t *doc = pl_memtrack_json(
			    &P->mem, child_ru_set ? (double)child_ru.ru_maxrss * 1024 : -1, title);
			rc = write_doc(o, ".memory.json", doc, &names);
			json_decref(doc);
		}
	}
	if (!rc && steps && (o->formats & FMT_FINDINGS)) {
		json_t *doc = pl_steps_to_json(steps, title);
		if (doc)
			json_object_set_new(doc, "source", json_string("profile"));
		rc = write_doc(o, ".steps.json", doc, &names);
		json_decref(doc);
	}
	char *list = pl_strbuf_take(&names);
	if (!rc && list && list[0])
		printf("\nwrote %s\n", list);
	free(list);
	return rc;
}

/* --memory's lines: the peak (sampled, and the kernel's for a launched
 * program), the growth and how much of it a stack was charged with, and
 * the innermost frames running at the peak. */
static void print_memory(struct profiler *P)
{
	const struct pl_memtrack *m = &P->mem;
	char peak[32], hwm[32], grown[32];
	pl_fmt_bytes(peak, sizeof peak, m->peak_rss);
	pl_fmt_bytes(grown, sizeof grown, m->grown);
	printf("  memory: RSS peak %s sampled at %.2f s", peak, m->peak_t);
	if (child_ru_set) {
		pl_fmt_bytes(hwm, sizeof hwm, (double)child_ru.ru_maxrss * 1024);
		printf(" (the kernel's high-water mark: %s)", hwm);
	}
	printf("; it grew %s in all, %.0f%% of that charged to a %sstack\n", grown,
	       m->grown > 0 ? 100 * m->charged / m->grown : 0.0,
	       P->o.mode == MODE_PYTHON ? "Python " : "");
	if (m->rn) {
		char pss[32], uss[32];
		printf("    PSS peak %s, USS peak %s (smaps_rollup: shared pages divided among "
		       "their sharers / its own pages only)\n",
		       pl_fmt_bytes(pss, sizeof pss, m->peak_pss),
		       pl_fmt_bytes(uss, sizeof uss, m->peak_uss));
	}
	if (m->peak_stack) {
		/* the three innermost frames */
		const char *p = m->peak_stack + strlen(m->peak_stack);
		for (int k = 0; k < 3 && p > m->peak_stack;) {
			p--;
			if (*p == ';' && ++k == 3)
				p++;
		}
		printf("    at the peak: %s%s\n", p > m->peak_stack ? "... " : "", p);
	}
}

/* --memory, after a target's sample: its RSS now; a rise since the last
 * tick is charged to the stack sampled in this one. */
static int memory_tick(struct profiler *P, struct target *t)
{
	double rss = pl_memtrack_rss(t->pid, &t->statm_fd);
	if (!(rss > 0))
		return 0;
	P->mtotal += rss;
	int rc = 0;
	if (t->rss_last > 0 && rss > t->rss_last)
		rc = pl_memtrack_charge(&P->mem, &P->prof, P->mstack, P->mhave ? P->mdepth : 0,
					rss - t->rss_last);
	t->rss_last = rss;
	return rc;
}

/* --memory, after a tick: the followed processes' PSS and USS when a
 * reading is due (smaps_rollup costs a page-table walk: 4 a second) */
static int memory_rollup(struct profiler *P, double t)
{
	if (!pl_memtrack_rollup_due(&P->mem, t))
		return 0;
	double pss = 0, uss = 0;
	for (size_t i = 0; i < P->nt; i++) {
		double p, u;
		if (!P->t[i].gone && P->t[i].st && pl_memtrack_rollup(P->t[i].pid, &p, &u) == 0) {
			pss += p;
			uss += u;
		}
	}
	return pl_memtrack_rollup_point(&P->mem, t, pss, uss);
}

static void release(struct profiler *P)
{
	for (size_t i = 0; i < P->nt; i++) {
		pl_pystack_close(P->t[i].st);
		if (P->t[i].statm_fd >= 0)
			close(P->t[i].statm_fd);
	}
	free(P->t);
	free(P->mstack);
	pl_memtrack_release(&P->mem);
	free(P->fc);
	free(P->tf);
	free(P->ids);
	free(P->fphase);
	pl_gpu_release(&P->gpu);
	pl_train_release(&P->train);
	if (P->ca.fd >= 0)
		close(P->ca.fd);
	pl_prof_release(&P->prof);
}

#if defined(__x86_64__)
/* ---- --mode mixed: Python and native stacks of the same instant ----
 *
 * Each tick stops the running threads (PTRACE_INTERRUPT on threads seized
 * once), reads the Python stacks while they are stopped (so both views
 * are of the same instant), takes each thread's registers and the top of
 * its stack, lets them go, then unwinds with DWARF (profile/native/native.c).
 * The native stack is kept, except CPython's own code: each
 * _PyEval_EvalFrameDefault frame becomes the Python frames it was running
 * (up to the first frame of that call, pl_pyframe.entry), and the other
 * interpreter frames (call machinery) are left out. Stopping costs the
 * program a few tens of microseconds per thread and tick: see
 * docs/profile.md. */

#define MIXED_STACK (64 * 1024)
#define MIXED_MAX_PCS 2048

struct mthread {
	pid_t tid;
	int asked;    /* interrupted this tick, its stop not seen yet */
	int stopped;  /* in the interrupt stop we asked for */
	int listen;   /* a group stop: resume with PTRACE_LISTEN */
	int gone;
	uint64_t regs[17];
	uint8_t *stack;
	size_t stack_len;
	/* its Python stack at this tick */
	struct pl_pyframe *py;
	size_t npy, cappy;
	int idle, has_py;
	char pyname[64]; /* threading's name, or "" */
};

struct mixed {
	struct mthread *th;
	size_t n, cap;
	pid_t pid;
	int done;      /* the process ended */
	int *status;
	size_t approx; /* samples merged at the interpreter's boundary */
	uint64_t pcs[MIXED_MAX_PCS];
	uint32_t pyids[PL_PYSTACK_MAX_DEPTH];
	uint8_t pyentry[PL_PYSTACK_MAX_DEPTH];
};

static struct mthread *mt_find(struct mixed *M, pid_t tid)
{
	for (size_t i = 0; i < M->n; i++)
		if (M->th[i].tid == tid)
			return &M->th[i];
	return NULL;
}

/* Seize the threads not seized yet. */
static void mt_refresh(struct mixed *M)
{
	char path[64];
	snprintf(path, sizeof path, "/proc/%d/task", (int)M->pid);
	DIR *d = opendir(path);
	if (!d)
		return;
	struct dirent *e;
	while ((e = readdir(d))) {
		if (e->d_name[0] < '0' || e->d_name[0] > '9')
			continue;
		pid_t tid = (pid_t)atoi(e->d_name);
		struct mthread *t = mt_find(M, tid);
		if (t && !t->gone)
			continue;
		/* room first: a thread seized but not recorded would have its
		 * stops ignored and stay stopped */
		if (!t && pl_grow((void **)&M->th, &M->cap, M->n + 1, sizeof *M->th, 16) < 0)
			break;
		if (ptrace(PTRACE_SEIZE, tid, NULL, NULL) != 0)
			continue;
		if (!t) {
			t = &M->th[M->n++];
			memset(t, 0, sizeof *t);
		}
		t->tid = tid;
		t->gone = 0;
	}
	closedir(d);
}

/* Handle one wait status of a tracee. */
static void mt_event(struct mixed *M, pid_t w, int st)
{
	struct mthread *t = mt_find(M, w);
	if (WIFEXITED(st) || WIFSIGNALED(st)) {
		if (t)
			t->gone = 1;
		if (w == M->pid) {
			M->done = 1;
			*M->status = st;
		}
		return;
	}
	if (!WIFSTOPPED(st) || !t)
		return;
	int sig = WSTOPSIG(st), event = st >> 16;
	if (event == PTRACE_EVENT_STOP) {
		int group = sig == SIGSTOP || sig == SIGTSTP || sig == SIGTTIN || sig == SIGTTOU;
		if (t->asked) {
			t->asked = 0;
			t->stopped = 1;
			t->listen = group;
			return;
		}
		/* a stop we did not ask for this tick (a late one, or the program
		 * stopped by Ctrl-Z): never leave it there; LISTEN keeps a group
		 * stop a stop that SIGCONT ends */
		ptrace(group ? PTRACE_LISTEN : PTRACE_CONT, w, NULL, NULL);
		return;
	}
	/* a signal on its way to the program: let it through */
	ptrace(PTRACE_CONT, w, NULL, (void *)(long)sig);
}

/* Wait up to limit_s for the asked threads' stops (handling whatever else
 * comes); the ones that do not come are given up for this tick. */
static void mt_wait(struct mixed *M, double limit_s)
{
	double end = pl_now_s() + limit_s;
	for (;;) {
		size_t pending = 0;
		for (size_t i = 0; i < M->n; i++)
			pending += M->th[i].asked && !M->th[i].gone;
		if (!pending || M->done)
			return;
		int st;
		pid_t w = waitpid(-1, &st, WNOHANG | __WALL);
		if (w > 0) {
			mt_event(M, w, st);
			continue;
		}
		if (w < 0 || pl_now_s() > end)
			break;
		struct timespec ts = {0, 50000};
		nanosleep(&ts, NULL);
	}
	for (size_t i = 0; i < M->n; i++)
		M->th[i].asked = 0; /* a stop that comes later is resumed by mt_event */
}

static int running(pid_t pid, pid_t tid)
{
	char path[96], buf[512];
	snprintf(path, sizeof path, "/proc/%d/task/%d/stat", (int)pid, (int)tid);
	read_small(path, buf, sizeof buf);
	const char *p = strrchr(buf, ')');
	return p && p[1] == ' ' && p[2] == 'R';
}

static void on_mixed_thread(void *arg, const struct pl_pythread *t)
{
	struct mixed *M = arg;
	struct mthread *m = mt_find(M, (pid_t)t->tid);
	if (!m || !m->stopped)
		return;
	if (pl_grow((void **)&m->py, &m->cappy, t->depth ? t->depth : 1, sizeof *m->py, 64) < 0)
		return;
	memcpy(m->py, t->frames, t->depth * sizeof *m->py);
	m->npy = t->depth;
	m->has_py = 1;
	snprintf(m->pyname, sizeof m->pyname, "%s", t->name ? t->name : "");
	m->idle = t->idle;
}

/* One thread's merged stack into the profile. */
static void mixed_add(struct profiler *P, struct pl_native_syms *syms, struct mixed *M,
		      struct mthread *t)
{
	size_t n = t->stack_len ? pl_native_unwind(syms, M->pid, t->tid, t->regs, t->stack,
						   t->stack_len, M->pcs, MIXED_MAX_PCS)
				: 0;
	size_t cap = PL_PYSTACK_MAX_DEPTH, npy = 0;
	for (size_t i = 0; i < t->npy; i++) {
		long id = frame_id(P, &t->py[i]);
		if (id >= 0) {
			M->pyids[npy] = (uint32_t)id;
			M->pyentry[npy++] = (uint8_t)t->py[i].entry;
		} else if (t->py[i].entry && npy) { /* out of memory: keep the boundary */
			M->pyentry[npy - 1] = 1;
		}
	}
	int approx, unmatched;
	size_t depth = pl_native_splice(syms, M->pid, M->pcs, n, M->pyids, M->pyentry, npy, P->ids,
					cap, &approx, &unmatched);
	M->approx += (size_t)approx;
	P->stats.errors += (size_t)unmatched;
	if (P->o.threads && depth < cap) {
		long id = thread_frame(P, M->pid, (unsigned long)t->tid, t->pyname[0] ? t->pyname : NULL);
		if (id >= 0)
			P->ids[depth++] = (uint32_t)id;
	}
	for (size_t i = 0; i < depth / 2; i++) {
		uint32_t x = P->ids[i];
		P->ids[i] = P->ids[depth - 1 - i];
		P->ids[depth - 1 - i] = x;
	}
	if (depth && pl_prof_add(&P->prof, P->ids, depth, 1) < 0)
		P->oom = 1;
	if (P->o.memory && depth && !P->mhave) { /* --memory: this tick's stack */
		memcpy(P->mstack, P->ids, depth * sizeof *P->ids);
		P->mdepth = depth;
		P->mhave = 1;
	}
	P->stats.threads++;
}

static int mixed_loop(struct profiler *P, const struct pl_ctx *ctx, pid_t child, int *status,
		      int *reaped, struct pl_error *err)
{
	struct opts *o = &P->o;
	struct mixed M = {.pid = P->t[0].pid, .status = status};
	struct pl_native_syms *syms = pl_native_syms_new(&P->prof, o->lines);
	if (!syms)
		return PL_ENOMEM;
	pl_native_syms_maps(syms, M.pid);
	mt_refresh(&M);
	if (M.n == 0) {
		pl_native_syms_free(syms);
		return pl_error_set(err, PL_EINPUT,
				    "--mode mixed: cannot trace process %d (%s): it needs ptrace "
				    "rights (your own child, or kernel.yama.ptrace_scope 0, or "
				    "CAP_SYS_PTRACE) and no other debugger attached",
				    (int)M.pid, strerror(errno));
	}
	long period_ns = (long)(1e9 / o->rate);
	struct timespec next;
	clock_gettime(CLOCK_MONOTONIC, &next);
	double start = pl_now_s();
	while (!M.done && !P->oom) {
		next.tv_nsec += period_ns;
		while (next.tv_nsec >= 1000000000L) {
			next.tv_nsec -= 1000000000L;
			next.tv_sec++;
		}
		struct timespec cur;
		clock_gettime(CLOCK_MONOTONIC, &cur);
		if ((double)(cur.tv_sec - next.tv_sec) + (double)(cur.tv_nsec - next.tv_nsec) * 1e-9 >
		    (double)period_ns * 1e-9)
			next = cur;
		while (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &next, NULL) == EINTR &&
		       !*ctx->interrupted)
			;
		if (*ctx->interrupted)
			break;
		P->ticks++;
		live_line(P, 0);
		/* signals and exits that came in meanwhile */
		int st;
		pid_t w;
		while ((w = waitpid(-1, &st, WNOHANG | __WALL)) > 0)
			mt_event(&M, w, st);
		if (M.done)
			break;
		if (P->ticks % 16 == 1) {
			mt_refresh(&M);
			pl_native_syms_maps(syms, M.pid);
		}
		/* stop the threads that are running (all of them with --idle) */
		for (size_t i = 0; i < M.n; i++) {
			struct mthread *t = &M.th[i];
			t->stopped = t->has_py = t->asked = 0; /* every stopped one was resumed */
			t->npy = 0;
			t->stack_len = 0;
			if (t->gone || (!o->idle && !running(M.pid, t->tid)))
				continue;
			t->asked = ptrace(PTRACE_INTERRUPT, t->tid, NULL, NULL) == 0;
		}
		mt_wait(&M, 0.1);
		if (M.done)
			break;
		/* Python stacks, registers and stacks while they stand still */
		if (P->t[0].st)
		{
			struct pl_pysample_stats ps = {0};
			unsigned names = P->o.threads ? PL_PYSAMPLE_NAMES : 0;
			pl_pystack_sample(P->t[0].st, PL_PYSAMPLE_IDLE | names, on_mixed_thread, &M,
					  &ps);
		}
		for (size_t i = 0; i < M.n; i++) {
			struct mthread *t = &M.th[i];
			if (!t->stopped)
				continue;
			struct user_regs_struct r;
			if (ptrace(PTRACE_GETREGS, t->tid, NULL, &r) == 0) {
				uint64_t dw[17] = {r.rax, r.rdx, r.rcx, r.rbx, r.rsi, r.rdi,
						   r.rbp, r.rsp, r.r8,	r.r9,  r.r10, r.r11,
						   r.r12, r.r13, r.r14, r.r15, r.rip};
				memcpy(t->regs, dw, sizeof dw);
				if (!t->stack && !(t->stack = malloc(MIXED_STACK)))
					P->oom = 1;
				for (size_t want = MIXED_STACK; t->stack && want >= 4096; want /= 2) {
					struct iovec lv = {t->stack, want};
					struct iovec rv = {(void *)(uintptr_t)r.rsp, want};
					ssize_t got = process_vm_readv(M.pid, &lv, 1, &rv, 1, 0);
					if (got > 0) {
						t->stack_len = (size_t)got;
						break;
					}
				}
			}
			ptrace(t->listen ? PTRACE_LISTEN : PTRACE_CONT, t->tid, NULL, NULL);
		}
		P->mhave = 0;
		for (size_t i = 0; i < M.n; i++) {
			struct mthread *t = &M.th[i];
			/* only running threads were stopped (all with --idle): the
			 * Python reader's idle flag sees the stop itself */
			if (t->stopped)
				mixed_add(P, syms, &M, t);
		}
		if (o->memory) { /* the RSS now; a rise charged to this tick's stack */
			P->mtotal = 0;
			double now = pl_now_s() - start;
			if (memory_tick(P, &P->t[0]) < 0 ||
			    pl_memtrack_point(&P->mem, now, P->mtotal, &P->prof, P->mstack,
					      P->mhave ? P->mdepth : 0) < 0 ||
			    memory_rollup(P, now) < 0)
				P->oom = 1;
		}
		if (o->duration > 0 && pl_now_s() - start >= o->duration)
			break;
	}
	/* let the program go: stop each thread still traced and detach it (a
	 * tracee must be stopped to be detached); a thread that does not stop
	 * within the time is detached by the kernel when perfloop exits */
	if (!M.done) {
		for (size_t i = 0; i < M.n; i++) {
			struct mthread *t = &M.th[i];
			t->stopped = 0;
			t->asked = !t->gone && ptrace(PTRACE_INTERRUPT, t->tid, NULL, NULL) == 0;
		}
		mt_wait(&M, 1.0);
		for (size_t i = 0; i < M.n; i++)
			if (M.th[i].stopped && !M.th[i].gone)
				ptrace(PTRACE_DETACH, M.th[i].tid, NULL, NULL);
	}
	if (M.done && child > 0)
		*reaped = 1;
	if (M.approx)
		fprintf(stderr,
			"perfloop: note: this interpreter hides _PyEval_EvalFrameDefault (no "
			"symbol): in %zu samples the Python frames were placed at the "
			"interpreter's innermost frame, exact unless C called back into "
			"Python\n",
			M.approx);
	for (size_t i = 0; i < M.n; i++) {
		free(M.th[i].stack);
		free(M.th[i].py);
	}
	free(M.th);
	pl_native_syms_free(syms);
	return P->oom ? PL_ENOMEM : PL_OK;
}
#else
static int mixed_loop(struct profiler *P, const struct pl_ctx *ctx, pid_t child, int *status,
		      int *reaped, struct pl_error *err)
{
	(void)P, (void)ctx, (void)child, (void)status, (void)reaped;
	return pl_error_set(err, PL_EINPUT, "--mode mixed: only on x86-64 for now");
}
#endif

/* Wait until the launched root is CPython (or, with --subprocesses, just
 * running). 0, or an exit code after printing the error. */
static int wait_for_python(struct profiler *P, pid_t child, const struct pl_ctx *ctx, int *status,
			   int *reaped)
{
	struct pl_error err = {{0}};
	double t0 = pl_now_s();
	for (;;) {
		int rc = try_attach(P, &P->t[0], &err);
		if (rc == 0)
			return 0;
		if (rc != PL_EINPUT && !P->o.subprocs) {
			stop_child(child, status);
			*reaped = 1;
			return pl_die(PL_EXIT_USAGE, "%s", err.msg);
		}
		if (reap(child, status, WNOHANG) == child) {
			*reaped = 1;
			if (P->o.subprocs)
				return 0;
			return pl_die(
			    PL_EXIT_USAGE,
			    "'%s' exited before a CPython interpreter could be read in it",
			    P->o.argv[0]);
		}
		if (*ctx->interrupted)
			return 0;
		if (P->o.subprocs && pl_now_s() - t0 > 0.05)
			return 0; /* a wrapper (shell, launcher): its children are followed */
		if (pl_now_s() - t0 > 5.0) {
			stop_child(child, status);
			*reaped = 1;
			return pl_die(PL_EXIT_USAGE,
				      "'%s' did not run a CPython interpreter within 5 s (%s); "
				      "use --subprocesses if it starts Python as a child",
				      P->o.argv[0], err.msg);
		}
		sleep_s(0.001);
	}
}

/* A running process is Python when its executable is a python* or it has
 * libpython mapped (an embedding program). */
static int pid_is_python(pid_t pid)
{
	char path[64], exe[4096];
	snprintf(path, sizeof path, "/proc/%d/exe", (int)pid);
	ssize_t n = readlink(path, exe, sizeof exe - 1);
	if (n > 0) {
		exe[n] = '\0';
		const char *base = strrchr(exe, '/');
		if (strncmp(base ? base + 1 : exe, "python", 6) == 0)
			return 1;
	}
	return pl_pyproc_maps_has(pid, "/libpython3");
}

/* The launched command line ("pid N" for -p), for titles and headers. */
static void command_title(const struct opts *o, char *title, size_t size)
{
	if (!o->argv) {
		snprintf(title, size, "pid %d", (int)o->pid);
		return;
	}
	size_t len = 0;
	title[0] = '\0';
	for (char **a = o->argv; *a && len < size - 1; a++)
		len += (size_t)snprintf(title + len, size - len, "%s%s", a == o->argv ? "" : " ", *a);
}

/* The launched program's end, as profile reports it: interrupted (130),
 * killed by a signal or exited non-zero (3), else 0. */
static int exit_status(const struct opts *o, const struct pl_ctx *ctx, int status)
{
	if (*ctx->interrupted) {
		fprintf(stderr, "perfloop: interrupted: the profile holds what was gathered\n");
		return PL_EXIT_INTERRUPTED;
	}
	if (o->argv && WIFSIGNALED(status)) {
		char sig[32];
		fprintf(stderr, "perfloop: '%s' was killed by %s\n", o->argv[0],
			pl_signal_name(WTERMSIG(status), sig, sizeof sig));
		return PL_EXIT_FAILED;
	}
	if (o->argv && WIFEXITED(status) && WEXITSTATUS(status) != 0) {
		fprintf(stderr, "perfloop: '%s' exited with status %d\n", o->argv[0],
			WEXITSTATUS(status));
		return PL_EXIT_FAILED;
	}
	return PL_EXIT_OK;
}

/* --mode native: perf_event_open sampling (profile/native/native.c), the same
 * table and outputs. */
static int profile_native(struct profiler *P, const struct pl_ctx *ctx, const char *cwd)
{
	struct opts *o = &P->o;
	struct pl_native_opts no = {.rate = o->rate,
				    .unwind = o->unwind,
				    .lines = o->lines,
				    .threads = o->threads,
				    .subprocs = o->subprocs,
				    .duration = o->duration,
				    .event = o->event,
				    .kernel = o->kernel,
				    .mem = o->memory ? &P->mem : NULL,
				    .interrupted = ctx->interrupted};
	struct pl_native_stats st;
	struct pl_error err = {{0}};
	int status = 0;
	int rc = pl_native_profile(o->argv, o->pid, &no, &P->prof, &st, &status, &err);
	if (rc != PL_OK) {
		pl_prof_release(&P->prof);
		return pl_die(pl_exit_code(rc), "%s", rc == PL_ENOMEM ? "out of memory" : err.msg);
	}
	char title[600];
	command_title(o, title, sizeof title);
	printf("perfloop profile: %s (native, %s unwinding%s%s)\n", title, pl_unwind_name(st.unwind),
	       o->event >= 0 ? ", event " : "", o->event >= 0 ? pl_counter_def(o->event)->name : "");
	uint64_t complete = st.samples - st.truncated;
	printf("  %llu samples in %.2f s of %llu process%s, %llu lost, %.1f%% of stacks complete "
	       "to the entry point",
	       (unsigned long long)st.samples, st.elapsed_s, (unsigned long long)st.processes,
	       st.processes == 1 ? "" : "es", (unsigned long long)st.lost,
	       st.samples ? 100.0 * (double)complete / (double)st.samples : 0.0);
	if (!st.kernel_sampled)
		printf(", kernel time not sampled (perf_event_paranoid)");
	printf("\n  profiler CPU %.1f%% of one core\n",
	       st.elapsed_s > 0 ? 100.0 * st.cpu_s / st.elapsed_s : 0.0);
	if (st.lost)
		fprintf(stderr,
			"perfloop: warning: the kernel dropped %llu samples (perfloop fell "
			"behind); a lower --rate keeps up\n",
			(unsigned long long)st.lost);
	if (print_table(P) < 0) {
		pl_prof_release(&P->prof);
		return pl_die(PL_EXIT_INTERNAL, "out of memory");
	}
	if (P->prof.samples == 0)
		fprintf(stderr, "perfloop: warning: no sample was taken (the program used "
				"less CPU time than one sampling period?)\n");
	if (o->memory) {
		/* the launched program is the only child reaped: its high-water mark */
		if (o->argv && getrusage(RUSAGE_CHILDREN, &child_ru) == 0)
			child_ru_set = 1;
		print_memory(P);
	}
	rc = write_outputs(P, title, cwd, NULL);
	pl_prof_release(&P->prof);
	pl_memtrack_release(&P->mem);
	if (rc)
		return rc;
	if (!*ctx->interrupted && o->argv && st.stopped) {
		fprintf(stderr, "perfloop: stopped '%s' after %.0f s (--duration)\n", o->argv[0],
			o->duration);
		return PL_EXIT_OK;
	}
	return exit_status(o, ctx, status);
}

/* --alloc-rate: bytes with an optional K, M or G (KiB, MiB, GiB); 0 bad */
static unsigned long long parse_bytes(const char *s)
{
	char *end;
	errno = 0;
	double v = strtod(s, &end);
	if (errno || end == s || !(v >= 1))
		return 0;
	double mul = 1;
	if (*end == 'K' || *end == 'k')
		mul = 1024, end++;
	else if (*end == 'M' || *end == 'm')
		mul = 1024.0 * 1024, end++;
	else if (*end == 'G' || *end == 'g')
		mul = 1024.0 * 1024 * 1024, end++;
	if (mul > 1 && (*end == 'i' || *end == 'I') && (end[1] == 'B' || end[1] == 'b'))
		end += 2;
	else if (mul > 1 && (*end == 'B' || *end == 'b'))
		end++;
	if (*end || v * mul > 1e15)
		return 0;
	return (unsigned long long)(v * mul);
}

/* An ELF executable without an interpreter: nothing can be preloaded into
 * it. 1 static, 0 dynamic or not ELF (a script: its interpreter is). */
static int is_static_elf(const char *path)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return 0;
	elf_version(EV_CURRENT);
	Elf *e = elf_begin(fd, ELF_C_READ, NULL);
	int st = 0;
	size_t n = 0;
	if (e && elf_kind(e) == ELF_K_ELF && elf_getphdrnum(e, &n) == 0) {
		st = 1;
		for (size_t i = 0; i < n; i++) {
			GElf_Phdr ph;
			if (gelf_getphdr(e, (int)i, &ph) && ph.p_type == PT_INTERP)
				st = 0;
		}
	}
	if (e)
		elf_end(e);
	close(fd);
	return st;
}

/* profile --alloc: the program run with the sampler preloaded, its files
 * read back into flame graphs, the sites' table and PREFIX.alloc.json */
static int profile_alloc(struct profiler *P, const struct pl_ctx *ctx, const char *cwd)
{
	struct opts *o = &P->o;
	if (!o->argv)
		return pl_die(PL_EXIT_USAGE, "--alloc: launch the program (-- CMD ...): a running "
					     "process cannot have the sampler preloaded");
	if (o->memory || o->gpu || o->live_table)
		return pl_die(PL_EXIT_USAGE, "--alloc: on its own (not with --memory, --gpu or top)");
	char *exe = pl_spawn_which(o->argv[0]);
	if (!exe)
		return pl_die(PL_EXIT_USAGE, "cannot start '%s': command not found", o->argv[0]);
	int st = is_static_elf(exe);
	free(exe);
	if (st)
		return pl_die(PL_EXIT_USAGE, "--alloc: '%s' is statically linked: no library can "
					     "be preloaded into it to see its allocations",
			      o->argv[0]);
	char dir[] = "/tmp/perfloop-alloc.XXXXXX";
	if (!mkdtemp(dir))
		return pl_die(PL_EXIT_INTERNAL, "cannot make a temporary directory: %s",
			      strerror(errno));
	unsigned long long rate = o->alloc_rate ? o->alloc_rate : 512 * 1024;
	double t0 = pl_now_s();
	struct pl_error err = {{0}};
	struct pl_launch L;
	int status = 0;
	/* CPython's small objects come from its own arenas: through malloc
	 * they are seen */
	setenv("PYTHONMALLOC", "malloc", 0);
	int rc = pl_alloc_env(dir, rate, &err);
	if (rc == PL_OK)
		rc = pl_launch_start(o->argv, &L, &err);
	if (rc == PL_OK && (rc = pl_launch_go(&L, o->argv[0], &status, &err)) == PL_OK) {
		while (waitpid(L.pid, &status, 0) < 0 && errno == EINTR)
			if (*ctx->interrupted)
				kill(L.pid, SIGINT);
	}
	double wall = pl_now_s() - t0;
	if (rc != PL_OK) {
		pl_alloc_dir_remove(dir);
		return pl_die(rc == PL_ENOEXEC ? PL_EXIT_USAGE : pl_exit_code(rc), "--alloc: %s",
			      err.msg);
	}
	struct pl_alloc a = {0};
	rc = pl_alloc_read_dir(dir, o->full_paths ? NULL : cwd, &a, &err);
	pl_alloc_dir_remove(dir);
	if (rc != PL_OK) {
		pl_alloc_release(&a);
		return pl_die(pl_exit_code(rc), "%s", rc == PL_ENOMEM ? "out of memory" : err.msg);
	}
	a.prof.full_paths = o->full_paths;
	char title[600];
	command_title(o, title, sizeof title);
	printf("perfloop profile: %s (allocations, %.2f s)\n", title, wall);
	pl_alloc_print(&a, (size_t)o->top);
	size_t unseen = 0;
	for (size_t i = 0; i < a.nprocs; i++)
		unseen += !a.procs[i].finished;
	if (a.nprocs > 1 || unseen || a.files_empty)
		printf("  %zu process%s sampled%s%s\n", a.nprocs, a.nprocs == 1 ? "" : "es",
		       unseen ? " (some ended without their totals: killed, or exec'd)" : "",
		       a.files_empty ? "; some exec'd before any sample was written" : "");
	struct pl_strbuf names = {0};
	static const char *const what[] = {"allocated", "live at the peak", "live at exit"};
	static const char *const ext[] = {".alloc", ".alloc-peak", ".alloc-exit"};
	for (int w = 0; w < 3 && rc == 0 && o->formats; w++) {
		struct pl_prof pr;
		if (pl_alloc_profile(&a, w, &pr) != 0) {
			pl_prof_release(&pr);
			rc = pl_die(PL_EXIT_INTERNAL, "out of memory");
			break;
		}
		pr.full_paths = o->full_paths;
		char t[700], sub[200], f[64];
		snprintf(t, sizeof t, "Bytes %s: %.500s", what[w], title);
		snprintf(sub, sizeof sub, "KiB %s by stack, estimated from samples of one per %llu bytes",
			 what[w], rate);
		if (o->formats & FMT_FOLDED) {
			snprintf(f, sizeof f, "%s.folded", ext[w]);
			rc = write_folded(o->out, f, &pr, &names);
		}
		if (!rc && (o->formats & FMT_SVG)) {
			snprintf(f, sizeof f, "%s.svg", ext[w]);
			rc = write_svg(o->out, f, &pr, t, sub, &names);
		}
		pl_prof_release(&pr);
	}
	if (!rc && o->formats) {
		json_t *doc = pl_alloc_json(&a, title, (size_t)o->top);
		rc = write_doc(o, ".alloc.json", doc, &names);
		json_decref(doc);
	}
	if (!rc && names.len)
		printf("\nwrote %s\n", names.s);
	free(names.s);
	pl_alloc_release(&a);
	if (rc)
		return rc;
	return exit_status(o, ctx, status);
}

/* profile --syscalls: the program under the syscall tracepoints */
static int profile_syscalls(struct profiler *P, const struct pl_ctx *ctx)
{
	struct opts *o = &P->o;
	if (o->memory || o->gpu || o->live_table)
		return pl_die(PL_EXIT_USAGE,
			      "--syscalls: on its own (not with --memory, --gpu or top)");
	struct pl_syscalls *s = calloc(1, sizeof(*s));
	if (!s)
		return pl_die(PL_EXIT_INTERNAL, "out of memory");
	struct pl_error err = {{0}};
	int status = 0;
	char cwd[4096];
	if (!o->full_paths && getcwd(cwd, sizeof cwd))
		s->prof.root = cwd; /* the slowest calls' stacks' files, as profiles show them */
	int rc = pl_syscalls_trace(o->argv, o->pid, o->duration, ctx->interrupted, s, &status, &err);
	if (rc != PL_OK) {
		pl_syscalls_release(s);
		free(s);
		return pl_die(rc == PL_ENOEXEC ? PL_EXIT_USAGE : pl_exit_code(rc), "%s",
			      rc == PL_ENOMEM ? "out of memory" : err.msg);
	}
	char title[600];
	command_title(o, title, sizeof title);
	printf("perfloop profile: %s (system calls, tracepoints)\n", title);
	if (s->mounted == 1)
		fprintf(stderr, "perfloop: mounted tracefs at %s to open the tracepoints (it was "
				"not mounted), and unmounted it\n",
			s->tracefs);
	else if (s->mounted)
		fprintf(stderr, "perfloop: mounted tracefs at %s to open the tracepoints (it was "
				"not mounted); it could not be unmounted: 'umount %s'\n",
			s->tracefs, s->tracefs);
	pl_syscalls_print(s, (size_t)o->top);
	struct pl_strbuf names = {0};
	if (o->formats) {
		json_t *doc = pl_syscalls_json(s, title);
		rc = write_doc(o, ".syscalls.json", doc, &names);
		json_decref(doc);
	}
	if (!rc && names.len)
		printf("\nwrote %s\n", names.s);
	free(names.s);
	if (s->lost)
		fprintf(stderr, "perfloop: warning: the kernel dropped %llu events (perfloop fell "
				"behind): the counts are low\n",
			(unsigned long long)s->lost);
	int stopped = s->stopped;
	pl_syscalls_release(s);
	free(s);
	if (rc)
		return rc;
	if (stopped && !*ctx->interrupted) {
		fprintf(stderr, "perfloop: stopped after %.0f s (--duration)%s\n", o->duration,
			o->argv ? "" : "; the process goes on");
		return PL_EXIT_OK;
	}
	return exit_status(o, ctx, status);
}

int cmd_profile(int argc, char **argv, const struct pl_ctx *ctx)
{
	struct profiler P = {0};
	struct opts *o = &P.o;
	P.ca.fd = -1;
	o->rate = 1000;
	o->gpu_hz = 10;
	o->event = -1;
	o->min_share = 0.05;
	o->top = 15;
	o->out = "profile";
	o->formats = FMT_FOLDED | FMT_SVG | FMT_SPEEDSCOPE | FMT_FINDINGS;
	int c;
	double v;
	optind = 1;
	opterr = 0;
	while ((c = getopt_long(argc, argv, "+:p:r:d:o:h", longopts, NULL)) != -1) {
		switch (c) {
		case 'p':
			if (parse_double(optarg, 1, 4194304, &v) < 0 || v != floor(v))
				return pl_die(PL_EXIT_USAGE,
					      "--pid: expected a process id, got '%s'", optarg);
			o->pid = (pid_t)v;
			break;
		case 'r':
			if (parse_double(optarg, 1, 100000, &o->rate) < 0)
				return pl_die(PL_EXIT_USAGE,
					      "--rate: expected samples per second in 1..100000, "
					      "got '%s'",
					      optarg);
			break;
		case 'd':
			if (parse_double(optarg, 0.001, 1e7, &o->duration) < 0)
				return pl_die(PL_EXIT_USAGE,
					      "--duration: expected seconds > 0, got '%s'", optarg);
			break;
		case 'o':
			o->out = optarg;
			o->out_given = 1;
			break;
		case OPT_LINES:
			o->lines = 1;
			break;
		case OPT_IDLE:
			o->idle = 1;
			break;
		case OPT_GIL:
			o->gil = 1;
			break;
		case OPT_GPU:
			o->gpu = 1;
			break;
		case OPT_GPU_HZ:
			if (parse_double(optarg, 0.1, 1000, &o->gpu_hz) < 0)
				return pl_die(PL_EXIT_USAGE,
					      "option '--gpu-hz': expected readings per second from "
					      "0.1 to 1000, got '%s'",
					      optarg);
			o->gpu = 1;
			break;
		case OPT_THREADS:
			o->threads = 1;
			break;
		case OPT_FULL_PATHS:
			o->full_paths = 1;
			break;
		case OPT_FOLD_IMPORTS:
			o->fold_imports = 1;
			break;
		case OPT_MEMORY:
			o->memory = 1;
			break;
		case OPT_ALLOC:
			o->alloc = 1;
			break;
		case OPT_SYSCALLS:
			o->syscalls = 1;
			break;
		case OPT_RANK_FILTER:
			o->rank_filter = optarg;
			break;
		case OPT_ALLOC_RATE:
			if (!(o->alloc_rate = parse_bytes(optarg)))
				return pl_die(PL_EXIT_USAGE,
					      "option '--alloc-rate': expected a number of bytes "
					      "(4096, 64K, 1M), got '%s'",
					      optarg);
			o->alloc = 1;
			break;
		case OPT_LIVE_TABLE:
			o->live_table = 1;
			break;
		case OPT_SUBPROC:
			o->subprocs = 1;
			break;
		case OPT_FORMAT:
			if (parse_formats(optarg, &o->formats) < 0)
				return pl_die(PL_EXIT_USAGE,
					      "--format: expected a list of folded, svg, "
					      "speedscope, findings, html or none, got '%s'",
					      optarg);
			break;
		case OPT_TOP:
			if (parse_double(optarg, 0, 100000, &v) < 0 || v != floor(v))
				return pl_die(PL_EXIT_USAGE, "--top: expected a count, got '%s'",
					      optarg);
			o->top = (long)v;
			break;
		case OPT_MINSHARE:
			if (pl_parse_share(optarg, 1, &o->min_share) < 0)
				return pl_die(PL_EXIT_USAGE,
					      "--min-share: expected a percentage from 0 to 100 (5 "
					      "or 5%%), got '%s'",
					      optarg);
			break;
		case OPT_MODE:
			if (strcmp(optarg, "auto") == 0)
				o->mode = MODE_AUTO;
			else if (strcmp(optarg, "python") == 0)
				o->mode = MODE_PYTHON;
			else if (strcmp(optarg, "native") == 0)
				o->mode = MODE_NATIVE;
			else if (strcmp(optarg, "mixed") == 0)
				o->mode = MODE_MIXED;
			else
				return pl_die(PL_EXIT_USAGE,
					      "--mode: expected auto, python, native or mixed, got "
					      "'%s'",
					      optarg);
			break;
		case OPT_KERNEL:
			o->kernel = 1;
			break;
		case OPT_EVENT:
			if (strcmp(optarg, "cpu-clock") == 0) {
				o->event = -1;
			} else if ((o->event = pl_counter_lookup(optarg)) < 0) {
				return pl_die(PL_EXIT_USAGE,
					      "--event: expected cpu-clock or one of bench's counters "
					      "(task-clock, page-faults, cycles, instructions, "
					      "cache-misses...), got '%s'",
					      optarg);
			}
			break;
		case OPT_UNWIND:
			if (strcmp(optarg, "auto") == 0)
				o->unwind = PL_UNWIND_AUTO;
			else if (strcmp(optarg, "fp") == 0)
				o->unwind = PL_UNWIND_FP;
			else if (strcmp(optarg, "dwarf") == 0)
				o->unwind = PL_UNWIND_DWARF;
			else
				return pl_die(PL_EXIT_USAGE,
					      "--unwind: expected auto, fp or dwarf, got '%s'", optarg);
			break;
		case 'h':
			fputs(cmd_profile_usage, stdout);
			return PL_EXIT_OK;
		default:
			return pl_bad_option(c, argv, "profile");
		}
	}
	if (optind < argc)
		o->argv = argv + optind;
	if (o->pid && o->argv)
		return pl_die(PL_EXIT_USAGE,
			      "give either -p PID or a command after '--', not both");
	if (!o->pid && !o->argv)
		return pl_die(PL_EXIT_USAGE,
			      "nothing to profile: give a command after '--' or -p PID (see "
			      "'perfloop profile --help')");

	/* -o out.svg means the flame graph is out.svg (as py-spy's -o), not
	 * out.svg.svg: a known output's extension is taken off the prefix */
	static char prefix[4096];
	/* under a launcher, one profile per rank: %r %l %h %p in the name */
	pl_rank_detect(&o->rank);
	struct pl_error xerr = {{0}};
	/* several ranks never write one file: the default name gets the rank,
	 * a name given without it is refused (below, once --rank-filter has
	 * said whether several ranks write) */
	if (!o->out_given && pl_rank_shared_name(o->out, &o->rank))
		o->out = "profile.%r";
	if (pl_rank_expand("--out", o->out, &o->rank, prefix, sizeof prefix, &xerr) != PL_OK)
		return pl_die(PL_EXIT_USAGE, "%s", xerr.msg);
	if (o->rank_filter) {
		int in = pl_rank_in("--rank-filter", o->rank_filter, o->rank.rank, &xerr);
		if (in < 0)
			return pl_die(PL_EXIT_USAGE, "%s", xerr.msg);
		if (!in && o->pid)
			return PL_EXIT_OK; /* not this rank: nothing to attach to */
		if (!in) {
			/* the rank's program as the launcher would have run it: the
			 * same process, so the launcher sees its exit */
			fflush(NULL);
			execvp(o->argv[0], o->argv);
			return pl_die(PL_EXIT_FAILED, "cannot run '%s': %s", o->argv[0],
				      strerror(errno));
		}
	}
	/* one rank named by --rank-filter writes alone */
	int one_rank = o->rank_filter && strspn(o->rank_filter, "0123456789") == strlen(o->rank_filter);
	if (!one_rank && pl_rank_shared_name(o->out, &o->rank))
		return pl_die(PL_EXIT_USAGE,
			      "option '--out': '%s' is one file for every rank (rank %ld under %s): "
			      "put %%r in the name (as prof.%%r), or the ranks overwrite each "
			      "other's",
			      o->out, o->rank.rank, o->rank.launcher);
	static const char *const exts[] = {".speedscope.json", ".findings.json", ".steps.json",
					   ".gpu.json", ".folded", ".svg"};
	for (size_t i = 0; i < sizeof exts / sizeof *exts; i++) {
		size_t n = strlen(prefix), e = strlen(exts[i]);
		if (n > e && strcmp(prefix + n - e, exts[i]) == 0) {
			prefix[n - e] = '\0';
			break;
		}
	}
	o->out = prefix;
	/* an output that cannot be written is found before the program runs
	 * (--format none writes nothing: nothing to check) */
	char probe[4200];
	snprintf(probe, sizeof probe, "%s.svg", o->out);
	struct pl_error werr = {{0}};
	if ((o->formats || o->gpu) && pl_fsio_check_writable(probe, &werr) != PL_OK)
		return pl_die(PL_EXIT_USAGE, "option '--out': %s", werr.msg);

	char cwd[4096];
	if (!getcwd(cwd, sizeof cwd))
		cwd[0] = '\0';
	P.prof.root = cwd;
	P.prof.full_paths = o->full_paths;
	if (o->alloc && o->syscalls)
		return pl_die(PL_EXIT_USAGE, "--alloc and --syscalls: one at a time");
	if (o->alloc)
		return profile_alloc(&P, ctx, cwd);
	if (o->syscalls)
		return profile_syscalls(&P, ctx);
	/* auto: Python where CPython runs, native otherwise; a process that
	 * does not exist gets the Python path's error */
	if (o->mode == MODE_AUTO)
		o->mode = (o->argv ? pl_command_is_python(o->argv[0])
				   : pid_is_python(o->pid) || kill(o->pid, 0) != 0)
			      ? MODE_PYTHON
			      : MODE_NATIVE;
	if (o->live_table && o->mode != MODE_PYTHON)
		return pl_die(PL_EXIT_USAGE, "top: reads CPython programs' stacks (this one is "
					     "not one, or --mode is not python); for native code: "
					     "perfloop profile --mode native");
	if (o->mode == MODE_NATIVE && o->gpu)
		return pl_die(PL_EXIT_USAGE, "--gpu: with Python programs only for now (--mode "
					     "python or mixed)");
	if (o->mode != MODE_PYTHON && o->gil)
		return pl_die(PL_EXIT_USAGE, "--gil: python mode only (the program is not a CPython "
					     "one, or --mode is native or mixed)");
	if (o->mode == MODE_NATIVE)
		return profile_native(&P, ctx, cwd);
	if (o->mode == MODE_MIXED && o->subprocs)
		return pl_die(PL_EXIT_USAGE, "--mode mixed does not follow subprocesses yet: "
					     "profile a worker with -p PID");
	if (o->mode == MODE_MIXED && o->unwind == PL_UNWIND_FP)
		return pl_die(PL_EXIT_USAGE, "--mode mixed unwinds with DWARF (--unwind dwarf)");
#if !defined(__x86_64__)
	if (o->mode == MODE_MIXED)
		return pl_die(PL_EXIT_USAGE, "--mode mixed: only on x86-64 for now");
#endif
	P.ids = malloc((PL_PYSTACK_MAX_DEPTH + 4) * sizeof *P.ids);
	P.mstack = o->memory ? malloc((PL_PYSTACK_MAX_DEPTH + 4) * sizeof *P.mstack) : NULL;
	if (!P.ids || (o->memory && !P.mstack)) {
		free(P.ids);
		free(P.mstack);
		return pl_die(PL_EXIT_INTERNAL, "out of memory");
	}
	struct pl_error err = {{0}};
	pid_t child = -1;
	int status = 0, reaped = 0, rc = 0;
	if (o->argv) {
		child = launch(o->argv, &err);
		if (child < 0) {
			release(&P);
			return pl_die(PL_EXIT_USAGE, "%s", err.msg);
		}
		add_target(&P, child, NULL);
		rc = wait_for_python(&P, child, ctx, &status, &reaped);
		if (rc) {
			release(&P);
			return rc;
		}
	} else {
		add_target(&P, o->pid, NULL);
		int r = try_attach(&P, &P.t[0], &err);
		if (r < 0) {
			release(&P);
			return pl_die(PL_EXIT_USAGE, "%s", err.msg);
		}
	}

	/* PERFLOOP_PROFILE_SHARE_CPU=1 turns the CPU avoidance off, to measure
	 * the bias it removes (bench/profile.sh) */
	const char *share = getenv("PERFLOOP_PROFILE_SHARE_CPU");
	if (!share || strcmp(share, "1") != 0)
		cpu_avoid_init(&P.ca);

	if (o->gpu && pl_gpu_start(&P.gpu, o->gpu_hz) == PL_ENOMEM) {
		release(&P);
		return pl_die(PL_EXIT_INTERNAL, "out of memory");
	}
	pl_gpu_set_pid(&P.gpu, child > 0 ? child : o->pid);

	/* the sampling loop */
	long period_ns = (long)(1e9 / o->rate);
	unsigned long long children_every = (unsigned long long)(o->rate / 10) + 1;
	unsigned long long attach_every = (unsigned long long)(o->rate / 50) + 1;
	unsigned long long reap_every = (unsigned long long)(o->rate / 100) + 1;
	struct timespec next;
	clock_gettime(CLOCK_MONOTONIC, &next);
	double start = pl_now_s(), cpu0 = self_cpu_s(), last_tick = start;
	P.live = isatty(STDERR_FILENO);
	P.live_start = start;
	P.table_last = start; /* top's first table after a second of samples */
	unsigned long long torch_every = (unsigned long long)o->rate + 1; /* about 1 s */
	int stopped_by_us = 0;
	if (o->mode == MODE_MIXED && !reaped) {
		int mrc = mixed_loop(&P, ctx, child, &status, &reaped, &err);
		if (mrc != PL_OK) {
			if (child > 0 && !reaped)
				stop_child(child, &status);
			release(&P);
			return pl_die(pl_exit_code(mrc), "%s",
				      mrc == PL_ENOMEM ? "out of memory" : err.msg);
		}
		/* reaped by the tracer's waitpid(-1): the kernel's high-water mark */
		if (o->memory && reaped && getrusage(RUSAGE_CHILDREN, &child_ru) == 0)
			child_ru_set = 1;
	}
	while (!reaped && o->mode != MODE_MIXED) {
		next.tv_nsec += period_ns;
		while (next.tv_nsec >= 1000000000L) {
			next.tv_nsec -= 1000000000L;
			next.tv_sec++;
		}
		struct timespec cur;
		clock_gettime(CLOCK_MONOTONIC, &cur);
		double late = (double)(cur.tv_sec - next.tv_sec) +
			      (double)(cur.tv_nsec - next.tv_nsec) * 1e-9;
		if (late > (double)period_ns * 1e-9)
			next = cur; /* too late: sample now, never burst to catch up */
		while (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &next, NULL) == EINTR &&
		       !*ctx->interrupted)
			;
		if (*ctx->interrupted)
			break;
		P.ticks++;
		if (o->live_table)
			top_refresh(&P);
		else
			live_line(&P, 0);
		double tnow = pl_now_s();
		P.tick_dt = tnow - last_tick < 10.0 / o->rate ? tnow - last_tick : 1.0 / o->rate;
		last_tick = tnow;
		if (!P.torch && P.ticks % torch_every == 1)
			for (size_t i = 0; i < P.nt && !P.torch; i++)
				P.torch = P.t[i].st && pl_pyproc_maps_has(P.t[i].pid, "/libtorch");
		size_t live = 0;
		P.mtotal = 0;
		for (size_t i = 0; i < P.nt; i++) {
			struct target *t = &P.t[i];
			if (t->gone)
				continue;
			if (!t->st) {
				/* not CPython yet: try for 5 s at 50 Hz, then only watch it
				 * (a shell or launcher whose children are followed) */
				if (P.ticks % attach_every == 0) {
					if (kill(t->pid, 0) < 0 && errno == ESRCH)
						t->gone = 1;
					else if (t->tries++ < 250)
						try_attach(&P, t, &err);
				}
				live += !t->gone;
				continue;
			}
			P.cur = t;
			P.mhave = P.mgil = 0;
			/* a training profile reads every thread for its split */
			unsigned flags = (o->idle || P.torch ? PL_PYSAMPLE_IDLE : 0) |
					 (o->gil && !P.torch ? PL_PYSAMPLE_GIL_ONLY : 0) |
					 (o->threads ? PL_PYSAMPLE_NAMES : 0);
			int r = pl_pystack_sample(t->st, flags, on_thread, &P, &P.stats);
			if (r == PL_ESYS) {
				t->gone = 1;
				continue;
			}
			live++;
			if (o->memory && memory_tick(&P, t) < 0)
				P.oom = 1;
			if (r == PL_EFAILED) {
				P.stats.errors++;
				if (++t->fails > 20) { /* exec'd something else: attach again */
					pl_pystack_close(t->st);
					t->st = NULL;
				}
			} else {
				t->fails = 0;
			}
		}
		if (o->memory && (pl_memtrack_point(&P.mem, tnow - start, P.mtotal, &P.prof, P.mstack,
						    P.mhave ? P.mdepth : 0) < 0 ||
				  memory_rollup(&P, tnow - start) < 0))
			P.oom = 1;
		if (P.oom)
			break;
		if (o->subprocs && P.ticks % children_every == 0)
			scan_children(&P);
		if (P.ticks % reap_every == 0)
			cpu_avoid_update(&P.ca);
		/* the child's exit shows as unreadable memory at once; reap it then,
		 * or every 10 ms for a child that is not (yet) read */
		if (child > 0 && (P.t[0].gone || !P.t[0].st || P.ticks % reap_every == 0) &&
		    reap(child, &status, WNOHANG) == child)
			reaped = 1;
		if (child < 0 && P.t[0].gone)
			break;
		if (child < 0 && live == 0)
			break;
		if (o->duration > 0 && pl_now_s() - start >= o->duration)
			break;
	}
	double elapsed = pl_now_s() - start, cpu = self_cpu_s() - cpu0;
	live_line(&P, 1);
	pl_gpu_stop(&P.gpu);
	if (child > 0 && !reaped) {
		stop_child(child, &status);
		reaped = 1;
		stopped_by_us = 1;
	}
	if (P.oom) {
		release(&P);
		return pl_die(PL_EXIT_INTERNAL, "out of memory");
	}

	/* report */
	struct target *root = &P.t[0];
	const char *version = root->st ? pl_pystack_version(root->st) : "?";
	char title[512];
	if (o->argv)
		snprintf(title, sizeof title, "%s", root->cmd);
	else
		snprintf(title, sizeof title, "pid %d: %s", (int)root->pid, root->cmd);
	size_t nproc = 0;
	for (size_t i = 0; i < P.nt; i++)
		nproc += P.t[i].st != NULL || P.t[i].fails;
	double rate = elapsed > 0 ? (double)P.ticks / elapsed : 0;
	size_t tried = P.stats.threads + P.stats.errors;
	printf("perfloop profile: %s (pid %d, CPython %s%s)\n", title, (int)root->pid, version,
	       o->mode == MODE_MIXED ? ", mixed Python + native stacks" : "");
	printf("  %llu samples in %.2f s: %.0f/s delivered (asked %.0f), %zu errors (%.2f%%)",
	       (unsigned long long)P.prof.samples, elapsed, rate, o->rate, P.stats.errors,
	       tried ? 100.0 * (double)P.stats.errors / (double)tried : 0.0);
	if (!o->idle && P.stats.idle)
		printf(", %zu idle thread samples left out", P.stats.idle);
	if (o->gil)
		printf(", %zu samples of threads without the GIL left out", P.stats.nogil);
	if (o->subprocs)
		printf(", %zu processes", nproc);
	printf("\n  profiler CPU %.1f%% of one core\n", elapsed > 0 ? 100.0 * cpu / elapsed : 0.0);
	if (o->memory)
		print_memory(&P);
	if (print_table(&P) < 0) {
		release(&P);
		return pl_die(PL_EXIT_INTERNAL, "out of memory");
	}
	if (P.prof.samples == 0)
		fprintf(stderr, "perfloop: warning: no Python stack was sampled%s\n",
			o->idle ? "" : " (threads not running are left out; --idle keeps them)");
	struct pl_steps steps;
	int trained = train_report(&P, cwd, &steps);
	if (trained < 0) {
		release(&P);
		return pl_die(PL_EXIT_INTERNAL, "out of memory");
	}
	if (o->gpu) {
		printf("\n");
		pl_gpu_print(stdout, &P.gpu);
	}
	rc = write_outputs(&P, title, cwd, trained ? &steps : NULL);
	release(&P);
	if (rc)
		return rc;
	if (*ctx->interrupted) {
		fprintf(stderr, "perfloop: interrupted: the profile holds what was gathered\n");
		return PL_EXIT_INTERRUPTED;
	}
	if (child > 0 && stopped_by_us) {
		fprintf(stderr, "perfloop: stopped '%s' after %.0f s (--duration)\n", o->argv[0],
			o->duration);
		return PL_EXIT_OK;
	}
	if (child > 0 && WIFSIGNALED(status)) {
		char sig[32];
		fprintf(stderr, "perfloop: '%s' was killed by %s\n", o->argv[0],
			pl_signal_name(WTERMSIG(status), sig, sizeof sig));
		return PL_EXIT_FAILED;
	}
	if (child > 0 && WIFEXITED(status) && WEXITSTATUS(status) != 0) {
		fprintf(stderr, "perfloop: '%s' exited with status %d\n", o->argv[0],
			WEXITSTATUS(status));
		return PL_EXIT_FAILED;
	}
	return PL_EXIT_OK;
}

const char cmd_top_usage[] =
    "usage: perfloop top [OPTIONS] -p PID\n"
    "       perfloop top [OPTIONS] -- CMD [ARG...]\n"
    "\n"
    "A live table of where a running CPython 3.11-3.15 program spends its time\n"
    "(py-spy top): profile's sampling, with the table of functions (self and\n"
    "total share, samples, location) redrawn every second since the start, on a\n"
    "terminal in place; no files written. Ctrl-C (or --duration, or the program's\n"
    "end) stops it and prints the last table.\n"
    "\n"
    "Options (profile's):\n"
    "  -p, --pid PID         the process to watch (or a command after '--')\n"
    "      --rate HZ         samples per second (default 1000)\n"
    "  -d, --duration SECS   stop after SECS seconds\n"
    "      --idle            include threads that are waiting or sleeping\n"
    "      --gil             only the thread holding the GIL\n"
    "      --threads         a row group per thread\n"
    "      --lines           rows per line, not per function\n"
    "      --subprocesses    follow child processes too\n"
    "      --top N           rows in the table (default 15)\n"
    "  -h, --help            this text\n"
    "\n"
    "Exit status: as profile's: 0, 2 bad usage or a process it cannot read,\n"
    "3 a launched program that failed, 130 interrupted (the last table printed).\n";

int cmd_top(int argc, char **argv, const struct pl_ctx *ctx)
{
	for (int i = 1; i < argc && strcmp(argv[i], "--"); i++)
		if (!strcmp(argv[i], "-h") || !strcmp(argv[i], "--help")) {
			fputs(cmd_top_usage, stdout);
			return PL_EXIT_OK;
		}
	/* profile, told to redraw its table and to write no file */
	char **av = calloc((size_t)argc + 5, sizeof *av);
	if (!av)
		return pl_die(PL_EXIT_INTERNAL, "out of memory");
	int n = 0;
	av[n++] = "profile";
	av[n++] = "--live-table";
	av[n++] = "--format";
	av[n++] = "none";
	for (int i = 1; i < argc; i++)
		av[n++] = argv[i];
	av[n] = NULL;
	int rc = cmd_profile(n, av, ctx);
	free(av);
	return rc;
}
