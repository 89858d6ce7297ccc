/*
 * Candidate selection. The order of the rules matters and is the order
 * below: exclusion, the stop gate (if any high-severity algorithmic finding
 * is eligible, only algorithmic findings stay eligible), the level-7 guard
 * (compute-level work waits while any level 1-6 finding is open or data
 * loading takes more than 30% of a step), framework machinery (imports,
 * the autograd engine's entry, thread and queue waits) kept as context,
 * then ranking: a measured bottleneck of the training step (data loading,
 * a straggler, a starved GPU) above everything inside the step, then by
 * level, severity, measured ratio and confidence, with the id as the last
 * tie-breaker so the choice never depends on input order.
 */
#include "select.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int pl_metric_is_algorithmic(const char *m)
{
	static const char *names[] = {"complexity_exponent", "call_amplification",
				      "data_reuse",	     "write_amplification",
				      "allocation_churn",    "multiplicative_paths"};
	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++)
		if (strcmp(m, names[i]) == 0)
			return 1;
	return 0;
}

static int excluded(const struct pl_finding *f, const char *const *ex, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (strcmp(f->id, ex[i]) == 0)
			return 1;
	return 0;
}

/* Frames that are machinery, by the file they are in (a suffix of the
 * path or a part of it) or by their own name wherever they are. */
static const struct {
	const char *path, *name, *what;
} machinery[] = {
    {"<frozen importlib._bootstrap>", NULL, "Python's import machinery"},
    {"<frozen importlib._bootstrap_external>", NULL, "Python's import machinery"},
    {"importlib/", NULL, "Python's import machinery"},
    {NULL, "_call_with_frames_removed", "Python's import machinery"},
    {NULL, "_find_and_load", "Python's import machinery"},
    {NULL, "_find_and_load_unlocked", "Python's import machinery"},
    {NULL, "_load_unlocked", "Python's import machinery"},
    {NULL, "exec_module", "Python's import machinery"},
    {"torch/autograd/__init__.py", NULL, "the autograd engine's entry"},
    {"torch/autograd/graph.py", NULL, "the autograd engine's entry"},
    {NULL, "_engine_run_backward", "the autograd engine's entry"},
    {"torch/_tensor.py", "backward", "the autograd engine's entry"},
    {"torch/nn/modules/module.py", "_call_impl", "torch's module call dispatch"},
    {"torch/nn/modules/module.py", "_wrapped_call_impl", "torch's module call dispatch"},
    {"threading.py", NULL, "thread bootstrap and waits"},
    {"queue.py", NULL, "a queue's wait"},
    {"multiprocessing/connection.py", NULL, "a worker pipe's wait"},
    {"multiprocessing/queues.py", NULL, "a worker queue's wait"},
    {"selectors.py", NULL, "a poll's wait"},
    {NULL, "_PyEval_EvalFrameDefault", "the interpreter's loop"},
    {NULL, "__futex_abstimed_wait_common", "a lock's or condition's wait"},
    {NULL, "pthread_cond_wait", "a lock's or condition's wait"},
    {NULL, "pthread_cond_timedwait", "a lock's or condition's wait"},
    {NULL, "epoll_wait", "a poll's wait"},
    {NULL, "poll", "a poll's wait"},
};

static int path_has(const char *path, const char *part)
{
	if (!path)
		return 0;
	size_t pl = strlen(path), n = strlen(part);
	if (part[n - 1] == '/') /* a folder anywhere in the path */
		return strstr(path, part) != NULL;
	/* a file: the whole path or its tail after a '/' */
	return pl >= n && strcmp(path + pl - n, part) == 0 &&
	       (pl == n || path[pl - n - 1] == '/');
}

int pl_finding_machinery(const struct pl_finding *f, const char **what)
{
	/* only a function the profile found hot: a rule's or a measurement's
	 * finding is about the user's own code or the whole job */
	if (!f->leaf || strcmp(f->leaf, "profile.hot-function") != 0)
		return 0;
	return pl_frame_machinery(f->function, f->path, what);
}

int pl_frame_machinery(const char *function, const char *path, const char **what)
{
	for (size_t i = 0; i < sizeof machinery / sizeof machinery[0]; i++) {
		if (machinery[i].path && !path_has(path, machinery[i].path))
			continue;
		if (machinery[i].name && (!function || strcmp(function, machinery[i].name)))
			continue;
		if (what)
			*what = machinery[i].what;
		return 1;
	}
	return 0;
}

int pl_finding_step_bottleneck(const struct pl_finding *f)
{
	if (f->status != PL_FST_MEASURED || !f->metric_name)
		return 0;
	if (strcmp(f->metric_name, "data_loading_share") == 0)
		return f->has_metric_value && f->metric_value > PL_DATA_LOADING_SHARE_MAX;
	return f->leaf && (strcmp(f->leaf, "distributed.straggler") == 0 ||
			   strcmp(f->leaf, "gpu.underutilized") == 0);
}

/* <0 when a ranks before b: a measured bottleneck of the step first (a
 * hot function is inside the step it slows), then by level, severity,
 * measured ratio, confidence and id */
static int rank_cmp(const struct pl_finding *a, const struct pl_finding *b)
{
	int ba = pl_finding_step_bottleneck(a), bb = pl_finding_step_bottleneck(b);
	if (ba != bb)
		return bb - ba;
	/* a library the machine can replace (the reference BLAS) that the
	 * profile proved hot: before the hot functions inside it, whose
	 * advice ("start with sgemm_") no one can take */
	int ea = a->leaf && !strncmp(a->leaf, "env.", 4) && a->status == PL_FST_MEASURED,
	    eb = b->leaf && !strncmp(b->leaf, "env.", 4) && b->status == PL_FST_MEASURED;
	if (ea != eb)
		return eb - ea;
	/* static findings weighed by a profile (scan --profile): the measured
	 * ones first, the larger share first, whatever their rules' levels;
	 * one the profile never ran has static evidence only */
	double pa = pl_finding_profile_share(a), pb = pl_finding_profile_share(b);
	if ((pa >= 0) != (pb >= 0) && (a->status != PL_FST_MEASURED || pa >= 0) &&
	    (b->status != PL_FST_MEASURED || pb >= 0))
		return pa >= 0 ? -1 : 1;
	if (pa >= 0 && pb >= 0 && pa != pb)
		return pa > pb ? -1 : 1;
	if (a->level != b->level)
		return a->level - b->level;
	if (a->severity != b->severity)
		return (int)a->severity - (int)b->severity;
	double ra = a->has_ratio ? a->ratio : 0, rb = b->has_ratio ? b->ratio : 0;
	if (ra != rb)
		return ra > rb ? -1 : 1;
	if (a->confidence != b->confidence)
		return a->confidence > b->confidence ? -1 : 1;
	return strcmp(a->id, b->id);
}

static void set_why(struct pl_selection *s, size_t i, const char *fmt, const char *a, const char *b)
{
	if (s->why[i])
		return;
	size_t len = strlen(fmt) + (a ? strlen(a) : 0) + (b ? strlen(b) : 0) + 1;
	s->why[i] = malloc(len);
	if (s->why[i])
		snprintf(s->why[i], len, fmt, a ? a : "", b ? b : "");
}

int pl_select(const struct pl_findings *f, const char *const *exclude, size_t nexclude,
	      struct pl_selection *s)
{
	memset(s, 0, sizeof(*s));
	s->chosen = -1;
	s->stop_gate_by = -1;
	s->n = f->n;
	s->why = calloc(f->n ? f->n : 1, sizeof(char *));
	if (!s->why)
		return PL_ENOMEM;
	unsigned char *ok = calloc(f->n ? f->n : 1, 1);
	if (!ok)
		return PL_ENOMEM;
	const char *what = NULL;

	for (size_t i = 0; i < f->n; i++) {
		ok[i] = !excluded(&f->v[i], exclude, nexclude);
		if (!ok[i])
			set_why(s, i, "excluded by --exclude%s%s", NULL, NULL);
		else if (f->v[i].advisory)
			ok[i] = 0,
			set_why(s, i, "an advisory (a best-practice option), not a defect%s%s",
				NULL, NULL);
		else if (pl_finding_machinery(&f->v[i], &what))
			ok[i] = 0,
			set_why(s, i,
				"%s: context, not a candidate (the time is the work it runs: "
				"look below '%s' in the flame graph)",
				what, f->v[i].function);
	}

	/* stop gate */
	for (size_t i = 0; i < f->n; i++)
		if (ok[i] && f->v[i].severity <= PL_SEV_HIGH &&
		    pl_metric_is_algorithmic(f->v[i].metric_name)) {
			s->stop_gate = 1;
			s->stop_gate_by = (long)i;
			break;
		}
	if (s->stop_gate) {
		const char *by = f->v[s->stop_gate_by].id;
		for (size_t i = 0; i < f->n; i++)
			if (ok[i] && !pl_metric_is_algorithmic(f->v[i].metric_name)) {
				ok[i] = 0;
				set_why(s, i,
					"stop gate: %s is a high-severity algorithmic finding, so "
					"only algorithmic work is eligible (metric '%s' is not)",
					by, f->v[i].metric_name);
			}
	}

	/* level-7 guard */
	long open_low = -1, loading = -1;
	for (size_t i = 0; i < f->n; i++) {
		const struct pl_finding *x = &f->v[i];
		if (!excluded(x, exclude, nexclude) && !x->advisory && x->level <= 6 &&
		    open_low < 0)
			open_low = (long)i;
		if (strcmp(x->metric_name, "data_loading_share") == 0 &&
		    x->status == PL_FST_MEASURED && x->has_metric_value &&
		    x->metric_value > PL_DATA_LOADING_SHARE_MAX && loading < 0)
			loading = (long)i;
	}
	for (size_t i = 0; i < f->n; i++) {
		if (!ok[i] || f->v[i].level != 7)
			continue;
		if (open_low >= 0) {
			ok[i] = 0;
			set_why(s, i,
				"level-7 guard: compute-level work waits while %s (level 1-6) is "
				"open%s",
				f->v[open_low].id, NULL);
		} else if (loading >= 0) {
			ok[i] = 0;
			char share[32];
			snprintf(share, sizeof(share), "%.2f", f->v[loading].metric_value);
			set_why(s, i,
				"level-7 guard: measured data-loading share %s > 0.3 (%s): fix the "
				"input pipeline first",
				share, f->v[loading].id);
		}
	}

	for (size_t i = 0; i < f->n; i++)
		if (ok[i] && (s->chosen < 0 || rank_cmp(&f->v[i], &f->v[s->chosen]) < 0))
			s->chosen = (long)i;

	for (size_t i = 0; i < f->n; i++) {
		if (!ok[i] || (long)i == s->chosen)
			continue;
		const struct pl_finding *a = &f->v[i], *c = &f->v[s->chosen];
		char buf[300];
		if (pl_finding_step_bottleneck(c) && !pl_finding_step_bottleneck(a))
			snprintf(buf, sizeof(buf),
				 "the step's measured bottleneck %s (%s) ranks first: a hot "
				 "function is inside the step it slows",
				 c->id, c->leaf ? c->leaf : "?");
		else if (a->level != c->level)
			snprintf(buf, sizeof(buf), "level %d ranks after the candidate's level %d",
				 a->level, c->level);
		else if (a->severity != c->severity)
			snprintf(buf, sizeof(buf), "same level; severity %s ranks after %s",
				 pl_severity_name(a->severity), pl_severity_name(c->severity));
		else if ((a->has_ratio ? a->ratio : 0) != (c->has_ratio ? c->ratio : 0))
			snprintf(buf, sizeof(buf),
				 "same level and severity; measured ratio %g is "
				 "below the candidate's %g",
				 a->has_ratio ? a->ratio : 0, c->has_ratio ? c->ratio : 0);
		else if (a->confidence != c->confidence)
			snprintf(buf, sizeof(buf),
				 "same level, severity and ratio; confidence %.2f is below %.2f",
				 a->confidence, c->confidence);
		else
			snprintf(buf, sizeof(buf), "ties with the candidate; ids order it after");
		set_why(s, i, "%s%s", buf, NULL);
	}
	free(ok);
	return PL_OK;
}

int pl_select_rank_cmp(const struct pl_finding *a, const struct pl_finding *b)
{
	return rank_cmp(a, b);
}

void pl_selection_release(struct pl_selection *s)
{
	for (size_t i = 0; i < s->n; i++)
		free(s->why[i]);
	free(s->why);
	memset(s, 0, sizeof(*s));
}
