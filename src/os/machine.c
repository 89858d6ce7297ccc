/*
 * The machine as perfloop acts on it (see machine.h).
 */
#include "machine.h"

#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <glob.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "fsio.h"
#include "monotime.h"

#define QUIET_BUSY 0.10

static const char *sysroot(void)
{
	const char *r = getenv("PERFLOOP_SYSROOT");
	return r && *r ? r : "";
}

static void rooted(char *out, size_t len, const char *path)
{
	snprintf(out, len, "%.2047s%.2047s", sysroot(), path);
}

/* The first line of a file below the root, without its newline. */
static int read_value(const char *path, char *out, size_t len)
{
	char p[4096];
	rooted(p, sizeof(p), path);
	return pl_fsio_first_line(p, out, len);
}

/* Write "value\n" to an existing file below the root. */
static int write_value(const char *path, const char *value, char *why, size_t len)
{
	char buf[256];
	int n = snprintf(buf, sizeof(buf), "%s\n", value);
	if (n < 0 || (size_t)n >= sizeof(buf)) {
		snprintf(why, len, "%s: a value of %zu bytes is not a setting", path, strlen(value));
		return -1;
	}
	char p[4096];
	rooted(p, sizeof(p), path);
	int fd = open(p, O_WRONLY | O_TRUNC);
	if (fd < 0) {
		snprintf(why, len, "%s: %s%s", path, strerror(errno),
			 errno == EACCES || errno == EPERM ? " (needs root)" : "");
		return -1;
	}
	int rc = write(fd, buf, (size_t)n) == n ? 0 : -1;
	int e = errno;
	if (close(fd) != 0 && rc == 0) {
		rc = -1;
		e = errno;
	}
	if (rc != 0)
		snprintf(why, len, "%s: %s", path, strerror(e));
	return rc;
}

int pl_machine_parse_pin(const char *s)
{
	if (strcmp(s, "auto") == 0)
		return PL_PIN_AUTO;
	if (strcmp(s, "none") == 0)
		return PL_PIN_NONE;
	char *end;
	errno = 0;
	long v = strtol(s, &end, 10);
	if (end == s || *end || errno || v < 0 || v >= CPU_SETSIZE)
		return -3;
	return (int)v;
}

int pl_machine_auto_cpu(void)
{
	cpu_set_t set;
	if (sched_getaffinity(0, sizeof(set), &set) != 0 || CPU_COUNT(&set) < 2)
		return -1;
	for (int c = CPU_SETSIZE - 1; c >= 0; c--)
		if (CPU_ISSET(c, &set))
			return c;
	return -1;
}

int pl_machine_pin(int cpu, cpu_set_t *saved, struct pl_error *err)
{
	if (sched_getaffinity(0, sizeof(*saved), saved) != 0)
		return pl_error_set(err, PL_ESYS, "cannot read the CPU affinity: %s",
				    strerror(errno));
	if (cpu < 0 || cpu >= CPU_SETSIZE || !CPU_ISSET(cpu, saved))
		return pl_error_set(err, PL_EINPUT,
				    "option '--pin': CPU %d is not one this process may run on "
				    "(allowed: %d CPU%s; see 'perfloop system show')",
				    cpu, CPU_COUNT(saved), CPU_COUNT(saved) == 1 ? "" : "s");
	cpu_set_t one;
	CPU_ZERO(&one);
	CPU_SET(cpu, &one);
	if (sched_setaffinity(0, sizeof(one), &one) != 0)
		return pl_error_set(err, PL_ESYS, "cannot pin to CPU %d: %s", cpu,
				    strerror(errno));
	return PL_OK;
}

void pl_machine_unpin(const cpu_set_t *saved)
{
	(void)sched_setaffinity(0, sizeof(*saved), saved);
}

int pl_machine_cpu_times(struct pl_cpu_times *t)
{
	char p[4096];
	rooted(p, sizeof(p), "/proc/stat");
	FILE *f = fopen(p, "r");
	if (!f)
		return -1;
	memset(t, 0, sizeof(*t));
	char line[512];
	while (fgets(line, sizeof(line), f)) {
		if (strncmp(line, "cpu", 3) != 0)
			continue;
		unsigned long long v[8] = {0};
		char *s = line + 3;
		int cpu = -1;
		if (isdigit((unsigned char)*s))
			cpu = (int)strtol(s, &s, 10);
		else if (*s != ' ')
			continue;
		for (int i = 0; i < 8; i++)
			v[i] = strtoull(s, &s, 10);
		/* user nice system idle iowait irq softirq steal */
		unsigned long long busy = v[0] + v[1] + v[2] + v[5] + v[6] + v[7];
		unsigned long long total = busy + v[3] + v[4];
		int idx = cpu < 0 ? 0 : cpu + 1;
		if (idx >= (int)(sizeof(t->busy) / sizeof(t->busy[0])))
			continue;
		t->busy[idx] = busy;
		t->total[idx] = total;
		if (cpu + 1 > t->ncpu)
			t->ncpu = cpu + 1;
	}
	fclose(f);
	return t->ncpu > 0 ? 0 : -1;
}

double pl_machine_busy_share(const struct pl_cpu_times *a, const struct pl_cpu_times *b, int cpu)
{
	int idx = cpu < 0 ? 0 : cpu + 1;
	if (cpu >= a->ncpu || cpu >= b->ncpu)
		return NAN;
	double dt = (double)(b->total[idx] - a->total[idx]);
	if (!(dt > 0))
		return NAN;
	return (double)(b->busy[idx] - a->busy[idx]) / dt;
}

static void sleep_s(double s)
{
	struct timespec ts = {(time_t)s, (long)((s - (double)(time_t)s) * 1e9)};
	while (nanosleep(&ts, &ts) != 0 && errno == EINTR)
		;
}

void pl_machine_wait_quiet(int cpu, double timeout_s, const volatile sig_atomic_t *interrupted,
			   struct pl_quiet *q)
{
	memset(q, 0, sizeof(*q));
	q->busy = NAN;
	double la[1];
	q->loadavg1 = getloadavg(la, 1) == 1 ? la[0] : -1;
	if (!(timeout_s > 0))
		return;
	struct pl_cpu_times *a = malloc(sizeof(*a)), *b = malloc(sizeof(*b));
	if (!a || !b || pl_machine_cpu_times(a) != 0) {
		free(a);
		free(b);
		return;
	}
	double t0 = pl_now_s();
	for (;;) {
		sleep_s(0.1);
		if (pl_machine_cpu_times(b) != 0)
			break;
		q->checked = 1;
		q->busy = pl_machine_busy_share(a, b, cpu);
		q->waited_s = pl_now_s() - t0;
		if (!(q->busy >= QUIET_BUSY)) { /* quiet, or not measurable */
			q->quiet = 1;
			break;
		}
		if (q->waited_s >= timeout_s || (interrupted && *interrupted))
			break;
		struct pl_cpu_times *t = a;
		a = b;
		b = t;
	}
	/* the first 0.1 s is the measurement, not a wait */
	q->waited_s = q->waited_s > 0.15 ? q->waited_s : 0;
	q->loadavg1 = getloadavg(la, 1) == 1 ? la[0] : -1;
	free(a);
	free(b);
}

json_t *pl_quiet_to_json(const struct pl_quiet *q)
{
	if (!q->checked)
		return json_pack("{s:b}", "checked", 0);
	return json_pack("{s:b, s:b, s:f, s:o, s:f}", "checked", 1, "quiet", q->quiet, "waited_s",
			 q->waited_s, "busy", isfinite(q->busy) ? json_real(q->busy) : json_null(),
			 "loadavg_1m", q->loadavg1);
}

/* ---- the inventory ---- */

struct proc_cpu {
	int pid;
	char comm[64];
	unsigned long long ticks;
};

/* Every process's utime + stime. */
static size_t read_procs(struct proc_cpu **out)
{
	char p[4096];
	rooted(p, sizeof(p), "/proc");
	DIR *d = opendir(p);
	*out = NULL;
	if (!d)
		return 0;
	size_t n = 0, cap = 0;
	struct dirent *e;
	while ((e = readdir(d))) {
		if (!isdigit((unsigned char)e->d_name[0]))
			continue;
		char path[4400], buf[1024];
		snprintf(path, sizeof(path), "%s/%s/stat", p, e->d_name);
		FILE *f = fopen(path, "r");
		if (!f)
			continue;
		size_t len = fread(buf, 1, sizeof(buf) - 1, f);
		fclose(f);
		buf[len] = '\0';
		char *open = strchr(buf, '('), *close = strrchr(buf, ')');
		if (!open || !close || close < open)
			continue;
		/* after ')': state ppid pgrp session tty tpgid flags minflt cminflt
		 * majflt cmajflt utime stime */
		unsigned long long ut = 0, st = 0;
		if (sscanf(close + 1, " %*c %*d %*d %*d %*d %*d %*u %*u %*u %*u %*u %llu %llu",
			   &ut, &st) != 2)
			continue;
		if (n == cap) {
			cap = cap ? cap * 2 : 256;
			struct proc_cpu *g = realloc(*out, cap * sizeof(**out));
			if (!g)
				break;
			*out = g;
		}
		struct proc_cpu *pc = &(*out)[n++];
		pc->pid = atoi(e->d_name);
		size_t cl = (size_t)(close - open - 1);
		if (cl >= sizeof(pc->comm))
			cl = sizeof(pc->comm) - 1;
		memcpy(pc->comm, open + 1, cl);
		pc->comm[cl] = '\0';
		pc->ticks = ut + st;
	}
	closedir(d);
	return n;
}

/* Interrupts per CPU (the columns of /proc/interrupts summed). */
static int read_irqs(unsigned long long *per_cpu, int max)
{
	char p[4096];
	memset(per_cpu, 0, (size_t)max * sizeof(*per_cpu));
	rooted(p, sizeof(p), "/proc/interrupts");
	FILE *f = fopen(p, "r");
	if (!f)
		return 0;
	char *line = NULL;
	size_t cap = 0;
	int ncol = 0;
	if (getline(&line, &cap, f) > 0)
		for (char *s = line; (s = strstr(s, "CPU")); s += 3)
			ncol++;
	if (ncol > max)
		ncol = max;
	while (getline(&line, &cap, f) > 0) {
		char *s = strchr(line, ':');
		if (!s)
			continue;
		s++;
		for (int c = 0; c < ncol; c++) {
			char *end;
			unsigned long long v = strtoull(s, &end, 10);
			if (end == s)
				break;
			per_cpu[c] += v;
			s = end;
		}
	}
	free(line);
	fclose(f);
	return ncol;
}

static void add(json_t *items, const char *name, json_t *value, const char *status,
		const char *effect, const char *advice, int tunable)
{
	json_array_append_new(items, json_pack("{s:s, s:o, s:s, s:s, s:s, s:b}", "name", name,
					       "value", value ? value : json_null(), "status",
					       status, "effect", effect, "advice", advice,
					       "tunable", tunable));
}

static int has_cpuinfo_flag(const char *flag)
{
	char p[4096];
	rooted(p, sizeof(p), "/proc/cpuinfo");
	FILE *f = fopen(p, "r");
	if (!f)
		return 0;
	char *line = NULL;
	size_t cap = 0;
	int found = 0;
	while (!found && getline(&line, &cap, f) > 0) {
		if (strncmp(line, "flags", 5) != 0)
			continue;
		for (char *t = strtok(strchr(line, ':') ? strchr(line, ':') + 1 : line, " \n"); t;
		     t = strtok(NULL, " \n"))
			found |= strcmp(t, flag) == 0;
	}
	free(line);
	fclose(f);
	return found;
}

/* "N" or "N-M,..." values of every CPU's file (cpuN/cpufreq/NAME). */
static json_t *per_cpu_values(int ncpu, const char *name, int *distinct, char *first,
			      size_t flen)
{
	json_t *vals = json_object();
	*distinct = 0;
	first[0] = '\0';
	for (int c = 0; c < ncpu; c++) {
		char path[256], v[128];
		snprintf(path, sizeof(path), "/sys/devices/system/cpu/cpu%d/cpufreq/%s", c, name);
		if (read_value(path, v, sizeof(v)) != 0)
			continue;
		char key[16];
		snprintf(key, sizeof(key), "cpu%d", c);
		json_object_set_new(vals, key, json_string(v));
		if (!first[0])
			snprintf(first, flen, "%s", v);
		else if (strcmp(first, v) != 0)
			*distinct = 1;
	}
	if (json_object_size(vals) == 0) {
		json_decref(vals);
		return NULL;
	}
	return vals;
}

static void inventory_cpu(json_t *items, int ncpu)
{
	char buf[256], first[128];
	int differ;
	int vm = has_cpuinfo_flag("hypervisor");
	add(items, "virtual machine", json_boolean(vm), vm ? "warn" : "ok",
	    vm ? "the host shares its cores among guests: this CPU's speed can change for "
		 "seconds at a time, invisibly from inside (no steal time is reported)"
	       : "bare metal: the machine's speed is this kernel's to manage",
	    vm ? "nothing inside the guest removes it; compare commands interleaved in one "
		 "bench run, let batches average it out, and measure twice before trusting "
		 "a small difference"
	       : "",
	    0);

	json_t *gov = per_cpu_values(ncpu, "scaling_governor", &differ, first, sizeof(first));
	if (!gov)
		add(items, "governor", json_string("not exposed"), "info",
		    "no cpufreq here: frequency is set by the firmware or the host", "", 0);
	else
		add(items, "governor", gov,
		    strcmp(first, "performance") == 0 && !differ ? "ok" : "warn",
		    "a power-saving governor lowers the clock when idle and raises it under load: "
		    "the first runs are slower and short commands never reach full speed",
		    "perfloop system tune sets 'performance' (reset restores it)", 1);

	json_t *turbo = NULL;
	int turbo_on = 0;
	if (read_value("/sys/devices/system/cpu/intel_pstate/no_turbo", buf, sizeof(buf)) == 0) {
		turbo_on = atoi(buf) == 0;
		turbo = json_string(turbo_on ? "on" : "off");
	} else if (read_value("/sys/devices/system/cpu/cpufreq/boost", buf, sizeof(buf)) == 0) {
		turbo_on = atoi(buf) != 0;
		turbo = json_string(turbo_on ? "on" : "off");
	}
	if (!turbo)
		add(items, "turbo", json_string("not exposed"), "info",
		    "no boost control here (a VM's host decides)", "", 0);
	else
		add(items, "turbo", turbo, turbo_on ? "warn" : "ok",
		    "boost raises the clock while few cores are busy and the chip is cool: a "
		    "run's speed depends on what ran before it and what runs beside it",
		    "perfloop system tune turns it off (reset restores it)", 1);

	if (read_value("/sys/devices/system/cpu/smt/active", buf, sizeof(buf)) == 0) {
		int on = atoi(buf) != 0;
		add(items, "smt", json_string(on ? "on" : "off"), on ? "warn" : "ok",
		    on ? "a CPU's sibling thread shares its core: work there slows the measured "
			 "command"
		       : "one thread per core",
		    on ? "keep the pinned CPU's sibling idle, or turn SMT off for the session "
			 "(echo off > /sys/devices/system/cpu/smt/control; not done by tune)"
		       : "",
		    0);
	}

	/* clock spread: scaling_cur_freq where exposed, else cpuinfo MHz */
	double lo = INFINITY, hi = 0;
	json_t *mhz = per_cpu_values(ncpu, "scaling_cur_freq", &differ, first, sizeof(first));
	if (mhz) {
		const char *k;
		json_t *v;
		json_object_foreach(mhz, k, v)
		{
			double f = atof(json_string_value(v)) / 1000.0;
			lo = f < lo ? f : lo;
			hi = f > hi ? f : hi;
		}
		json_decref(mhz);
	} else {
		char p[4096];
		rooted(p, sizeof(p), "/proc/cpuinfo");
		FILE *f = fopen(p, "r");
		char *line = NULL;
		size_t cap = 0;
		while (f && getline(&line, &cap, f) > 0) {
			if (strncmp(line, "cpu MHz", 7) != 0 || !strchr(line, ':'))
				continue;
			double v = atof(strchr(line, ':') + 1);
			lo = v < lo ? v : lo;
			hi = v > hi ? v : hi;
		}
		free(line);
		if (f)
			fclose(f);
	}
	if (hi > 0) {
		double spread = hi / lo - 1;
		add(items, "clock spread", json_pack("{s:f, s:f}", "min_mhz", lo, "max_mhz", hi),
		    spread > 0.05 ? "warn" : "ok",
		    "CPUs at different clocks run the same command at different speeds: an "
		    "unpinned benchmark that moves between them is bimodal",
		    "bench pins by default (--pin auto); a fixed governor evens the clocks", 0);
	}

	cpu_set_t set;
	json_t *allowed = json_array();
	if (sched_getaffinity(0, sizeof(set), &set) == 0)
		for (int c = 0; c < CPU_SETSIZE; c++)
			if (CPU_ISSET(c, &set))
				json_array_append_new(allowed, json_integer(c));
	char iso[256] = "";
	read_value("/sys/devices/system/cpu/isolated", iso, sizeof(iso));
	int pin = pl_machine_auto_cpu();
	add(items, "cpus",
	    json_pack("{s:i, s:o, s:s, s:o}", "online", ncpu, "allowed", allowed, "isolated", iso[0] ? iso : "none",
		      "bench_pins_to", pin >= 0 ? json_integer(pin) : json_null()),
	    "info",
	    "bench runs every command of a comparison on one CPU (the highest allowed), so a "
	    "before and an after ran on the same one",
	    iso[0] ? "pin to an isolated CPU with --pin N"
		   : "an isolated CPU (isolcpus= at boot) keeps the kernel's other work off it",
	    0);
}

static void inventory_kernel(json_t *items)
{
	char buf[128];
	if (read_value("/proc/sys/kernel/randomize_va_space", buf, sizeof(buf)) == 0)
		add(items, "aslr", json_integer(atoi(buf)), "info",
		    "addresses change from run to run, and with them cache and alignment "
		    "effects: a few percent of spread, averaged over the runs",
		    "left on (users' programs run with it); 'setarch -R CMD' runs one command "
		    "without it",
		    0);
	if (read_value("/proc/sys/kernel/nmi_watchdog", buf, sizeof(buf)) == 0) {
		int on = atoi(buf) != 0;
		add(items, "nmi watchdog", json_integer(atoi(buf)), on ? "warn" : "ok",
		    "holds a hardware counter on every CPU and interrupts each periodically",
		    on ? "perfloop system tune turns it off (reset restores it)" : "", on);
	}
	if (read_value("/proc/sys/kernel/perf_event_paranoid", buf, sizeof(buf)) == 0) {
		int v = atoi(buf);
		add(items, "perf_event_paranoid", json_integer(v), v <= 2 ? "ok" : "warn",
		    "decides who may open counters: at 2 or below a user may count their own "
		    "processes (bench's counters, profile --mode native)",
		    v > 2 ? "sysctl kernel.perf_event_paranoid=2 (or run as root, or grant "
			    "CAP_PERFMON)"
			  : "",
		    0);
	}
	glob_t g;
	char pat[4096];
	rooted(pat, sizeof(pat), "/sys/class/power_supply/*/online");
	if (glob(pat, 0, NULL, &g) == 0) {
		int mains = 0, online = 0;
		for (size_t i = 0; i < g.gl_pathc; i++) {
			char type[4096], v[32] = "";
			snprintf(type, sizeof(type), "%.*s/type",
				 (int)(strrchr(g.gl_pathv[i], '/') - g.gl_pathv[i]), g.gl_pathv[i]);
			FILE *f = fopen(type, "r");
			char t[64] = "";
			if (f) {
				if (!fgets(t, sizeof(t), f))
					t[0] = '\0';
				fclose(f);
			}
			if (strncmp(t, "Mains", 5) != 0)
				continue;
			mains = 1;
			f = fopen(g.gl_pathv[i], "r");
			if (f) {
				if (fgets(v, sizeof(v), f))
					online |= atoi(v) != 0;
				fclose(f);
			}
		}
		if (mains)
			add(items, "power", json_string(online ? "mains" : "battery"),
			    online ? "ok" : "warn",
			    "on battery the firmware lowers clocks to save power",
			    online ? "" : "plug in before measuring", 0);
		globfree(&g);
	}
}

static int cmp_ticks(const void *a, const void *b)
{
	const struct proc_cpu *x = a, *y = b;
	return x->ticks < y->ticks ? 1 : x->ticks > y->ticks ? -1 : 0;
}

static void inventory_activity(json_t *items, int ncpu, double window_s)
{
	struct pl_cpu_times *a = malloc(sizeof(*a)), *b = malloc(sizeof(*b));
	unsigned long long irq0[1024], irq1[1024];
	struct proc_cpu *p0 = NULL, *p1 = NULL;
	if (!a || !b)
		goto out;
	int have_times = pl_machine_cpu_times(a) == 0;
	int ncol = read_irqs(irq0, 1024);
	size_t n0 = read_procs(&p0);
	double t0 = pl_now_s();
	sleep_s(window_s);
	have_times = have_times && pl_machine_cpu_times(b) == 0;
	read_irqs(irq1, 1024);
	size_t n1 = read_procs(&p1);
	double dt = pl_now_s() - t0;

	double la[3];
	if (getloadavg(la, 3) == 3) {
		int warn = la[0] > 0.5;
		add(items, "load",
		    json_pack("{s:f, s:f, s:f, s:i}", "1m", la[0], "5m", la[1], "15m", la[2],
			      "cpus", ncpu),
		    warn ? "warn" : "ok",
		    "other runnable work competes with the measured command for CPUs, caches "
		    "and memory bandwidth",
		    warn ? "wait for it to end; bench waits up to --wait-quiet seconds for the "
			   "pinned CPU to be idle"
			 : "",
		    0);
	}
	if (have_times) {
		json_t *busy = json_object();
		int warn = 0;
		for (int c = 0; c < a->ncpu && c < b->ncpu; c++) {
			double s = pl_machine_busy_share(a, b, c);
			char key[16];
			snprintf(key, sizeof(key), "cpu%d", c);
			json_object_set_new(busy, key, isfinite(s) ? json_real(s) : json_null());
			warn |= s >= QUIET_BUSY;
		}
		add(items, "cpu busy", busy, warn ? "warn" : "ok",
		    "the share of each CPU used by other work while perfloop watched",
		    warn ? "see 'busy processes'" : "", 0);
	}
	if (n1) {
		/* ticks used during the window, matched by pid */
		for (size_t i = 0; i < n1; i++) {
			unsigned long long before = 0;
			int seen = 0;
			for (size_t j = 0; j < n0 && !seen; j++)
				if (p0[j].pid == p1[i].pid) {
					before = p0[j].ticks;
					seen = 1;
				}
			p1[i].ticks = p1[i].ticks >= before ? p1[i].ticks - before : 0;
			if (p1[i].pid == getpid())
				p1[i].ticks = 0;
		}
		qsort(p1, n1, sizeof(*p1), cmp_ticks);
		double hz = (double)sysconf(_SC_CLK_TCK);
		json_t *top = json_array();
		int warn = 0;
		for (size_t i = 0; i < n1 && i < 5; i++) {
			double share = (double)p1[i].ticks / hz / (dt > 0 ? dt : 1);
			if (share < 0.02)
				break;
			warn |= share >= QUIET_BUSY;
			json_array_append_new(top, json_pack("{s:i, s:s, s:f}", "pid", p1[i].pid,
							     "command", p1[i].comm, "cpu", share));
		}
		add(items, "busy processes", top, warn ? "warn" : "ok",
		    "processes that used at least 2% of a CPU while perfloop watched",
		    warn ? "stop or pause them while measuring" : "", 0);
	}
	if (ncol > 0) {
		json_t *rate = json_object();
		for (int c = 0; c < ncol; c++) {
			char key[16];
			snprintf(key, sizeof(key), "cpu%d", c);
			/* a row gone between the readings must not wrap the count */
			double d = irq1[c] >= irq0[c] ? (double)(irq1[c] - irq0[c]) : 0;
			json_object_set_new(rate, key, json_real(d / (dt > 0 ? dt : 1)));
		}
		add(items, "interrupts per second", rate, "info",
		    "each interrupt takes the CPU from the measured command for a moment",
		    "irqbalance or /proc/irq/*/smp_affinity can move them off the pinned CPU", 0);
	}
out:
	free(p0);
	free(p1);
	free(a);
	free(b);
}

json_t *pl_machine_inventory(double window_s)
{
	json_t *items = json_array();
	long n = sysconf(_SC_NPROCESSORS_ONLN);
	int ncpu = n > 0 && n <= 1024 ? (int)n : 1;
	inventory_cpu(items, ncpu);
	inventory_kernel(items);
	inventory_activity(items, ncpu, window_s);
	return items;
}

/* ---- tune and reset ---- */

struct setting {
	char path[256];
	char want[64];
};

/* What tune sets here: every CPU's governor (where 'performance' is
 * available), boost off, the NMI watchdog off. */
static size_t tunable(struct setting *s, size_t max)
{
	size_t n = 0;
	char buf[512];
	for (int c = 0; c < 1024 && n < max; c++) {
		char path[256];
		snprintf(path, sizeof(path),
			 "/sys/devices/system/cpu/cpu%d/cpufreq/scaling_available_governors", c);
		if (read_value(path, buf, sizeof(buf)) != 0) {
			snprintf(path, sizeof(path), "/sys/devices/system/cpu/cpu%d", c);
			char p[4096];
			rooted(p, sizeof(p), path);
			struct stat st;
			if (stat(p, &st) != 0)
				break;
			continue;
		}
		if (!strstr(buf, "performance"))
			continue;
		snprintf(s[n].path, sizeof(s[n].path),
			 "/sys/devices/system/cpu/cpu%d/cpufreq/scaling_governor", c);
		snprintf(s[n++].want, sizeof(s[0].want), "performance");
	}
	if (n < max && read_value("/sys/devices/system/cpu/intel_pstate/no_turbo", buf,
				  sizeof(buf)) == 0) {
		snprintf(s[n].path, sizeof(s[n].path), "/sys/devices/system/cpu/intel_pstate/no_turbo");
		snprintf(s[n++].want, sizeof(s[0].want), "1");
	} else if (n < max &&
		   read_value("/sys/devices/system/cpu/cpufreq/boost", buf, sizeof(buf)) == 0) {
		snprintf(s[n].path, sizeof(s[n].path), "/sys/devices/system/cpu/cpufreq/boost");
		snprintf(s[n++].want, sizeof(s[0].want), "0");
	}
	if (n < max && read_value("/proc/sys/kernel/nmi_watchdog", buf, sizeof(buf)) == 0) {
		snprintf(s[n].path, sizeof(s[n].path), "/proc/sys/kernel/nmi_watchdog");
		snprintf(s[n++].want, sizeof(s[0].want), "0");
	}
	return n;
}

static void state_file(const char *given, char *out, size_t len)
{
	if (given)
		snprintf(out, len, "%s", given);
	else
		rooted(out, len, "/var/lib/perfloop/system-tune.json");
}

static json_t *load_state(const char *path, struct pl_error *err, int *rc)
{
	*rc = PL_OK;
	json_error_t je;
	json_t *st = json_load_file(path, 0, &je);
	if (!st) {
		if (access(path, F_OK) != 0)
			return NULL;
		*rc = pl_error_set(err, PL_EINPUT, "%s:%d: %s", path, je.line, je.text);
		return NULL;
	}
	json_t *files = json_object_get(st, "files");
	if (!json_is_object(files) || !json_is_string(json_object_get(st, "schema")) ||
	    strcmp(json_string_value(json_object_get(st, "schema")), "perfloop.tune/1") != 0) {
		json_decref(st);
		*rc = pl_error_set(err, PL_EINPUT,
				   "%s: field 'schema'/'files': not a perfloop tune record", path);
		return NULL;
	}
	return st;
}

static int save_state(const char *path, json_t *st, struct pl_error *err)
{
	char dir[4096];
	snprintf(dir, sizeof(dir), "%s", path);
	/* mkdir -p of the record's directory */
	for (char *s = dir + 1; *s; s++) {
		if (*s != '/')
			continue;
		*s = '\0';
		if (mkdir(dir, 0755) != 0 && errno != EEXIST)
			return pl_error_set(err, PL_ESYS, "cannot create %s: %s", dir,
					    strerror(errno));
		*s = '/';
	}
	return pl_fsio_write_json(path, st, err);
}

int pl_machine_tune(const char *state_path, json_t **changed, json_t **failed,
		    struct pl_error *err)
{
	char sp[4096];
	state_file(state_path, sp, sizeof(sp));
	*changed = json_array();
	*failed = json_array();
	int rc;
	json_t *st = load_state(sp, err, &rc);
	if (rc != PL_OK)
		return rc;
	if (!st)
		st = json_pack("{s:s, s:{}}", "schema", "perfloop.tune/1", "files");
	json_t *files = json_object_get(st, "files");
	struct setting s[1100];
	size_t n = tunable(s, sizeof(s) / sizeof(s[0]));
	/* the old values are recorded before anything is written: a record
	 * that cannot be saved leaves the machine as it was */
	char (*old)[128] = calloc(n ? n : 1, sizeof(*old));
	if (!old) {
		json_decref(st);
		return PL_ENOMEM;
	}
	int todo = 0;
	for (size_t i = 0; i < n; i++) {
		if (read_value(s[i].path, old[i], sizeof(old[i])) != 0 ||
		    strcmp(old[i], s[i].want) == 0) {
			old[i][0] = '\0';
			continue;
		}
		todo = 1;
		if (!json_object_get(files, s[i].path)) /* a second tune keeps the first's */
			json_object_set_new(files, s[i].path, json_string(old[i]));
	}
	rc = todo ? save_state(sp, st, err) : PL_OK;
	int dropped = 0;
	for (size_t i = 0; i < n && rc == PL_OK; i++) {
		char why[512];
		if (!old[i][0])
			continue;
		if (write_value(s[i].path, s[i].want, why, sizeof(why)) != 0) {
			json_array_append_new(*failed, json_string(why));
			/* never written: nothing for reset to undo there */
			if (strcmp(json_string_value(json_object_get(files, s[i].path)), old[i]) == 0) {
				json_object_del(files, s[i].path);
				dropped = 1;
			}
			continue;
		}
		json_array_append_new(*changed, json_pack("{s:s, s:s, s:s}", "path", s[i].path,
							  "old", old[i], "new", s[i].want));
	}
	if (rc == PL_OK && dropped) {
		if (json_object_size(files) == 0)
			unlink(sp);
		else
			rc = save_state(sp, st, err);
	}
	free(old);
	json_decref(st);
	return rc;
}

/* Whether path = value is a setting tune makes (see tunable) with a value
 * such a file can hold: a record is a file anyone with the path may have
 * written, and reset runs as root. */
static int tuned_setting(const char *path, const char *value)
{
	static const char *const flags[] = {"/sys/devices/system/cpu/intel_pstate/no_turbo",
					    "/sys/devices/system/cpu/cpufreq/boost",
					    "/proc/sys/kernel/nmi_watchdog"};
	for (size_t i = 0; i < sizeof(flags) / sizeof(flags[0]); i++)
		if (strcmp(path, flags[i]) == 0)
			return strcmp(value, "0") == 0 || strcmp(value, "1") == 0;
	const char *pre = "/sys/devices/system/cpu/cpu", *post = "/cpufreq/scaling_governor";
	size_t pl = strlen(pre);
	if (strncmp(path, pre, pl) != 0)
		return 0;
	const char *d = path + pl, *e = d;
	while (*e >= '0' && *e <= '9')
		e++;
	if (e == d || e - d > 4 || strcmp(e, post) != 0)
		return 0;
	/* a governor's name: lower-case letters, digits, '_' */
	size_t vl = strspn(value, "abcdefghijklmnopqrstuvwxyz0123456789_");
	return vl > 0 && vl < 32 && value[vl] == '\0';
}

int pl_machine_reset(const char *state_path, json_t **restored, json_t **failed,
		     struct pl_error *err)
{
	char sp[4096];
	state_file(state_path, sp, sizeof(sp));
	*restored = json_array();
	*failed = json_array();
	int rc;
	json_t *st = load_state(sp, err, &rc);
	if (rc != PL_OK)
		return rc;
	if (!st)
		return pl_error_set(err, PL_EINPUT,
				    "%s: no record of a 'perfloop system tune' to undo", sp);
	json_t *files = json_object_get(st, "files"), *v;
	const char *path;
	void *tmp;
	json_object_foreach_safe(files, tmp, path, v)
	{
		char why[512];
		if (!json_is_string(v) || !tuned_setting(path, json_string_value(v))) {
			json_array_append_new(*failed, json_sprintf("%s: field 'files.%s': not a "
								    "setting 'system tune' makes, "
								    "or not a value it records; "
								    "left as it is",
								    sp, path));
			continue;
		}
		if (write_value(path, json_string_value(v), why, sizeof(why)) != 0) {
			json_array_append_new(*failed, json_string(why));
			continue;
		}
		json_array_append_new(*restored,
				      json_pack("{s:s, s:s}", "path", path, "value",
						json_string_value(v)));
		json_object_del(files, path);
	}
	if (json_object_size(files) == 0) {
		if (unlink(sp) != 0)
			rc = pl_error_set(err, PL_ESYS, "cannot remove %s: %s", sp, strerror(errno));
	} else {
		rc = save_state(sp, st, err);
	}
	json_decref(st);
	return rc;
}
