/*
 * Candidate selection. The order of the rules matters and is the order
 * below: exclusion, the stop gate (if any high-severity algorithmic finding
 * is eligible, only algorithmic findings stay eligible), the level-7 guard
 * (compute-level work waits while any level 1-6 finding is open or data
 * loading takes more than 30% of a step), then ranking by level, severity,
 * measured ratio and confidence, with the id as the last tie-breaker so the
 * choice never depends on input order.
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

/* <0 when a ranks before b */
static int rank_cmp(const struct pl_finding *a, const struct pl_finding *b)
{
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

	for (size_t i = 0; i < f->n; i++) {
		ok[i] = !excluded(&f->v[i], exclude, nexclude);
		if (!ok[i])
			set_why(s, i, "excluded by --exclude%s%s", NULL, NULL);
		else if (f->v[i].advisory)
			ok[i] = 0,
			set_why(s, i, "an advisory (a best-practice option), not a defect%s%s",
				NULL, NULL);
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
		char buf[160];
		if (a->level != c->level)
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

void pl_selection_release(struct pl_selection *s)
{
	for (size_t i = 0; i < s->n; i++)
		free(s->why[i]);
	free(s->why);
	memset(s, 0, sizeof(*s));
}
