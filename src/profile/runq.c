/*
 * Runnable threads against CPUs (see runq.h).
 */
#include "runq.h"

#include <dirent.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "procid.h"
#include "strbuf.h"

/* runnable threads of pid and its descendants (depth-limited), and how
 * many threads in all */
static void count(pid_t pid, int depth, unsigned *run, unsigned *all)
{
	char p[96];
	snprintf(p, sizeof p, "/proc/%d/task", (int)pid);
	DIR *d = opendir(p);
	if (!d)
		return;
	struct dirent *e;
	while ((e = readdir(d))) {
		if (e->d_name[0] < '0' || e->d_name[0] > '9')
			continue;
		char sp[320];
		snprintf(sp, sizeof sp, "/proc/%d/task/%s/stat", (int)pid, e->d_name);
		char buf[512];
		const char *st = pl_proc_stat_read(sp, buf, sizeof buf);
		if (!st)
			continue;
		char s = *st;
		(*all)++;
		*run += s == 'R';
		if (depth >= 4)
			continue;
		char cp[320], kids[1024];
		snprintf(cp, sizeof cp, "/proc/%d/task/%s/children", (int)pid, e->d_name);
		FILE *f = fopen(cp, "re");
		size_t n = f ? fread(kids, 1, sizeof kids - 1, f) : 0;
		if (f)
			fclose(f);
		kids[n] = '\0';
		for (char *save = NULL, *w = strtok_r(kids, " \n", &save); w;
		     w = strtok_r(NULL, " \n", &save))
			count((pid_t)atoi(w), depth + 1, run, all);
	}
	closedir(d);
}

void pl_runq_tick(struct pl_runq *q, pid_t root, double now)
{
	if (root <= 0 || (q->readings && now - q->last < 0.1))
		return;
	q->last = now;
	if (!q->ncpu) {
		cpu_set_t set;
		q->ncpu = sched_getaffinity(root, sizeof set, &set) == 0 ? CPU_COUNT(&set) : 0;
		if (q->ncpu <= 0)
			q->ncpu = 1;
	}
	unsigned run = 0, all = 0;
	count(root, 0, &run, &all);
	if (all > q->max_threads)
		q->max_threads = all;
	if (!run)
		return; /* nothing ready: waiting, not oversubscribed */
	q->readings++;
	q->sum += run;
	q->over += run > (unsigned)q->ncpu;
}

int pl_runq_findings(const struct pl_runq *q, struct pl_findings *out)
{
	if (q->readings < 5 || !q->ncpu)
		return 0;
	double mean = q->sum / (double)q->readings;
	if (mean < PL_RUNQ_OVER * q->ncpu || mean < q->ncpu + 0.5 ||
	    (double)q->over < PL_RUNQ_OVER_SHARE * (double)q->readings)
		return 0;
	struct pl_strbuf sig = {0}, ev = {0};
	pl_strbuf_printf(&sig,
			 "more threads ready to run than CPUs: %.1f on average on %d CPU%s (they "
			 "take turns)",
			 mean, q->ncpu, q->ncpu == 1 ? "" : "s");
	pl_strbuf_printf(&ev,
			 "%lu readings of /proc/PID/task/*/stat 100 ms apart, while any thread "
			 "ran: %.1f threads in state R on average, more than %d in %.0f%% of them; "
			 "up to %u threads in the job's processes",
			 q->readings, mean, q->ncpu, 100.0 * (double)q->over / (double)q->readings,
			 q->max_threads);
	char *s = pl_strbuf_take(&sig), *e = pl_strbuf_take(&ev);
	struct pl_finding *x =
	    s && e ? pl_findings_add_measured(
			 out, "env.oversubscribed-threads", "(threads)", "oversubscribed-threads", s,
			 e,
			 "size the thread pools to the CPUs: torch.set_num_threads(N) or "
			 "OMP_NUM_THREADS=N (and OPENBLAS_NUM_THREADS, MKL_NUM_THREADS), with N "
			 "times the processes that compute at once (ranks, DataLoader workers "
			 "doing tensor work) at most the CPUs the job has",
			 "runnable_per_cpu", "ratio", mean / q->ncpu)
		   : NULL;
	free(s);
	free(e);
	if (!x)
		return -1;
	x->severity = mean >= 2.0 * q->ncpu ? PL_SEV_HIGH : PL_SEV_MEDIUM;
	x->level = 8; /* the environment, not the code */
	x->evidence_numbers = json_pack("{s:f, s:i, s:I, s:f, s:i}", "runnable_mean", mean, "cpus",
					q->ncpu, "readings", (json_int_t)q->readings,
					"over_fraction", (double)q->over / (double)q->readings,
					"max_threads", (int)q->max_threads);
	x->confidence = (double)q->over / ((double)q->readings + 10.0);
	return x->evidence_numbers ? 1 : -1;
}
