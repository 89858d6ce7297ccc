/*
 * perf_event_open counters: the table of events perfloop knows, parsing of
 * `--counters`, probing, and reading. Opening happens in spawn.c's child.
 * Events are opened one by one rather than as a group: inherited events
 * cannot be read as a group on older kernels, and one refused event must not
 * take the others down with it.
 */
#include "counters.h"

#include "tracefs.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#define HWC(op, res) (PERF_COUNT_HW_CACHE_L1D | ((uint64_t)(op) << 8) | ((uint64_t)(res) << 16))

static const struct pl_counter_def defs[PL_CTR_COUNT] = {
    [PL_CTR_TASK_CLOCK] = {"task-clock", "ns", PERF_TYPE_SOFTWARE, PERF_COUNT_SW_TASK_CLOCK, 0},
    [PL_CTR_PAGE_FAULTS] = {"page-faults", "count", PERF_TYPE_SOFTWARE, PERF_COUNT_SW_PAGE_FAULTS,
			    0},
    [PL_CTR_CONTEXT_SWITCHES] = {"context-switches", "count", PERF_TYPE_SOFTWARE,
				 PERF_COUNT_SW_CONTEXT_SWITCHES, 0},
    [PL_CTR_CPU_MIGRATIONS] = {"cpu-migrations", "count", PERF_TYPE_SOFTWARE,
			       PERF_COUNT_SW_CPU_MIGRATIONS, 0},
    [PL_CTR_INSTRUCTIONS] = {"instructions", "count", PERF_TYPE_HARDWARE,
			     PERF_COUNT_HW_INSTRUCTIONS, 1},
    [PL_CTR_CYCLES] = {"cycles", "count", PERF_TYPE_HARDWARE, PERF_COUNT_HW_CPU_CYCLES, 1},
    [PL_CTR_BRANCHES] = {"branches", "count", PERF_TYPE_HARDWARE, PERF_COUNT_HW_BRANCH_INSTRUCTIONS,
			 1},
    [PL_CTR_BRANCH_MISSES] = {"branch-misses", "count", PERF_TYPE_HARDWARE,
			      PERF_COUNT_HW_BRANCH_MISSES, 1},
    [PL_CTR_CACHE_REFERENCES] = {"cache-references", "count", PERF_TYPE_HARDWARE,
				 PERF_COUNT_HW_CACHE_REFERENCES, 1},
    [PL_CTR_CACHE_MISSES] = {"cache-misses", "count", PERF_TYPE_HARDWARE,
			     PERF_COUNT_HW_CACHE_MISSES, 1},
    [PL_CTR_L1D_LOADS] = {"L1-dcache-loads", "count", PERF_TYPE_HW_CACHE,
			  HWC(PERF_COUNT_HW_CACHE_OP_READ, PERF_COUNT_HW_CACHE_RESULT_ACCESS), 1},
    [PL_CTR_L1D_LOAD_MISSES] = {"L1-dcache-load-misses", "count", PERF_TYPE_HW_CACHE,
				HWC(PERF_COUNT_HW_CACHE_OP_READ, PERF_COUNT_HW_CACHE_RESULT_MISS),
				1},
    /* the config (the tracepoint's id) is read from tracefs when probed */
    [PL_CTR_SYSCALLS] = {"syscalls", "count", PERF_TYPE_TRACEPOINT, 0, 0},
};

const struct pl_counter_def *pl_counter_def(int id)
{
	return id >= 0 && id < PL_CTR_COUNT ? &defs[id] : NULL;
}

int pl_counter_lookup(const char *name)
{
	for (int i = 0; i < PL_CTR_COUNT; i++)
		if (strcmp(defs[i].name, name) == 0)
			return i;
	return -1;
}

int pl_perf_open(struct perf_event_attr *attr, int pid)
{
	long fd = syscall(SYS_perf_event_open, attr, pid, -1, -1, PERF_FLAG_FD_CLOEXEC);
	return (int)fd;
}

static void init_attr(struct perf_event_attr *a, const struct pl_counter_def *d)
{
	memset(a, 0, sizeof(*a));
	a->size = sizeof(*a);
	a->type = d->type;
	a->config = d->config;
	a->disabled = 1;
	a->enable_on_exec = 1;
	a->inherit = 1;
	a->exclude_hv = 1;
	a->read_format = PERF_FORMAT_TOTAL_TIME_ENABLED | PERF_FORMAT_TOTAL_TIME_RUNNING;
}

void pl_counters_add(struct pl_counter_set *set, int id)
{
	for (size_t i = 0; i < set->n; i++)
		if (set->id[i] == id)
			return; /* listed twice: count once */
	set->id[set->n] = id;
	set->supported[set->n] = 1;
	set->err[set->n] = 0;
	init_attr(&set->attr[set->n], &defs[id]);
	set->n++;
}

int pl_counters_parse(struct pl_counter_set *set, const char *spec, struct pl_error *err)
{
	memset(set, 0, sizeof(*set));
	if (!spec || strcmp(spec, "auto") == 0 || strcmp(spec, "all") == 0) {
		for (int i = 0; i < PL_CTR_COUNT; i++)
			if (defs[i].type != PERF_TYPE_TRACEPOINT)
				pl_counters_add(set, i);
		return PL_OK;
	}
	if (strcmp(spec, "none") == 0)
		return PL_OK;
	char *copy = strdup(spec);
	if (!copy)
		return PL_ENOMEM;
	char *save = NULL;
	for (char *tok = strtok_r(copy, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
		while (*tok == ' ')
			tok++;
		int id = pl_counter_lookup(tok);
		if (id < 0) {
			int rc =
			    pl_error_set(err, PL_EINPUT,
					 "option '--counters': unknown counter '%s' (known: "
					 "task-clock, page-faults, context-switches, "
					 "cpu-migrations, instructions, cycles, branches, "
					 "branch-misses, cache-references, cache-misses, "
					 "L1-dcache-loads, L1-dcache-load-misses, syscalls; or auto, "
					 "none)",
					 tok);
			free(copy);
			return rc;
		}
		pl_counters_add(set, id);
	}
	free(copy);
	if (set->n == 0)
		return pl_error_set(err, PL_EINPUT, "option '--counters': empty list");
	return PL_OK;
}

void pl_counters_probe(struct pl_counter_set *set, pl_perf_open_fn open_fn)
{
	for (size_t i = 0; i < set->n; i++) {
		if (set->attr[i].type == PERF_TYPE_TRACEPOINT) {
			int enter, leave;
			struct pl_error e = {0};
			if (pl_syscall_tracepoints(&enter, &leave, NULL, NULL, &e) != PL_OK) {
				set->supported[i] = 0;
				set->err[i] = PL_CTR_ETRACEFS;
				continue;
			}
			set->attr[i].config = (uint64_t)enter;
		}
		struct perf_event_attr a = set->attr[i];
		errno = 0;
		int fd = open_fn(&a, 0);
		if (fd < 0 && (errno == EACCES || errno == EPERM) && a.type != PERF_TYPE_TRACEPOINT) {
			/* perf_event_paranoid 2 still allows user-space counting */
			a.exclude_kernel = 1;
			fd = open_fn(&a, 0);
			if (fd >= 0)
				set->attr[i].exclude_kernel = 1;
		}
		if (fd < 0) {
			set->supported[i] = 0;
			set->err[i] = errno ? errno : ENOENT;
			if (a.type == PERF_TYPE_TRACEPOINT && (errno == EACCES || errno == EPERM))
				set->err[i] = PL_CTR_ETRACEPERM;
		} else {
			close(fd);
		}
	}
}

size_t pl_counters_active(const struct pl_counter_set *set)
{
	size_t k = 0;
	for (size_t i = 0; i < set->n; i++)
		k += set->supported[i] != 0;
	return k;
}

const char *pl_counter_hint(int errnum)
{
	switch (errnum) {
	case PL_CTR_ETRACEFS:
		return "syscalls: the raw_syscalls tracepoint is not readable (as root, 'mount -t "
		       "tracefs nodev /sys/kernel/tracing')";
	case PL_CTR_ETRACEPERM:
		return "syscalls: a tracepoint needs root, CAP_PERFMON or kernel.perf_event_paranoid "
		       "<= -1";
	case EACCES:
	case EPERM:
		return "not permitted: lower kernel.perf_event_paranoid (sysctl -w "
		       "kernel.perf_event_paranoid=1) or grant CAP_PERFMON";
	case ENOENT:
	case EOPNOTSUPP:
	case ENODEV:
		return "not available on this CPU or virtual machine (no PMU exposed to it)";
	case ENOSYS:
		return "the kernel has no perf_event_open (CONFIG_PERF_EVENTS is off)";
	case EMFILE:
	case ENFILE:
		return "out of file descriptors: raise the limit (ulimit -n)";
	case EBUSY:
		return "the PMU is busy (another tool holds it exclusively)";
	default:
		return "refused by the kernel";
	}
}

int pl_counter_read(int fd, double *value)
{
	uint64_t buf[3];
	ssize_t r = read(fd, buf, sizeof(buf));
	if (r != (ssize_t)sizeof(buf))
		return -1;
	if (buf[2] == 0) {
		*value = 0; /* never scheduled: the program ran no instructions we saw */
		return buf[1] == 0 ? 0 : -1;
	}
	*value =
	    buf[2] < buf[1] ? (double)buf[0] * ((double)buf[1] / (double)buf[2]) : (double)buf[0];
	return 0;
}
