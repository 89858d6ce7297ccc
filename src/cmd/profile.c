/*
 * perfloop profile and perfloop top: the options, their checks, the output
 * prefix (per rank under a launcher), and the dispatch to the mode that
 * runs: Python (profile_python.c), native or mixed (profile_native.c),
 * --alloc (profile_memory.c) or --syscalls (profile_syscalls.c). What the
 * modes share (the profiler's state, the outputs written) is in
 * profile_int.h.
 */
#include "profile_int.h"

#include <errno.h>
#include <getopt.h>
#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "counters.h"
#include "fingerprint.h"
#include "fsio.h"
#include "pyproc.h"
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
    "      --scan            scan the sampled source files for known anti-patterns\n"
    "                        and weigh each finding by this profile (scan\n"
    "                        --profile in one step; by line with --lines)\n"
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
	OPT_LIVE_TABLE,
	OPT_SCAN
};

static const struct option longopts[] = {
    {"pid", required_argument, NULL, 'p'},
    {"rate", required_argument, NULL, 'r'},
    {"duration", required_argument, NULL, 'd'},
    {"lines", no_argument, NULL, OPT_LINES},
    {"scan", no_argument, NULL, OPT_SCAN},
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
		case OPT_SCAN:
			o->scan = 1;
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
	return profile_python(&P, ctx, cwd);
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
