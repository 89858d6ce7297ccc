/*
 * profile --memory (memtrack.h).
 */
#include "memtrack.h"

#include <fcntl.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "grow.h"
#include "strbuf.h"

#define POINT_EVERY_S 0.010

double pl_memtrack_rss(pid_t pid, int *fd)
{
	if (*fd < 0) {
		char path[64];
		snprintf(path, sizeof path, "/proc/%d/statm", (int)pid);
		*fd = open(path, O_RDONLY | O_CLOEXEC);
		if (*fd < 0)
			return -1;
	}
	char buf[128];
	ssize_t k = pread(*fd, buf, sizeof buf - 1, 0);
	if (k <= 0)
		return -1;
	buf[k] = '\0';
	unsigned long size, resident;
	if (sscanf(buf, "%lu %lu", &size, &resident) != 2)
		return -1;
	return (double)resident * (double)sysconf(_SC_PAGESIZE);
}

int pl_memtrack_rollup(pid_t pid, double *pss, double *uss)
{
	char path[64], line[256];
	snprintf(path, sizeof path, "/proc/%d/smaps_rollup", (int)pid);
	FILE *f = fopen(path, "re");
	if (!f)
		return -1;
	unsigned long long v;
	double p = -1, u = 0;
	int priv = 0;
	while (fgets(line, sizeof line, f)) {
		if (sscanf(line, "Pss: %llu kB", &v) == 1)
			p = (double)v * 1024;
		else if (sscanf(line, "Private_Clean: %llu kB", &v) == 1 ||
			 sscanf(line, "Private_Dirty: %llu kB", &v) == 1) {
			u += (double)v * 1024;
			priv++;
		}
	}
	fclose(f);
	if (p < 0 || priv < 2)
		return -1;
	*pss = p;
	*uss = u;
	return 0;
}

#define ROLLUP_EVERY_S 0.25

int pl_memtrack_rollup_due(struct pl_memtrack *m, double t)
{
	/* and at each new RSS peak 5% above the last one read: the PSS peak is
	 * read near the RSS peak, not up to 0.25 s off it */
	return !m->rn || t - m->rollup_last >= ROLLUP_EVERY_S ||
	       m->peak_rss > 1.05 * m->rollup_rss;
}

int pl_memtrack_rollup_point(struct pl_memtrack *m, double t, double pss, double uss)
{
	m->rollup_last = t;
	m->rollup_rss = m->peak_rss;
	if (!(pss > 0))
		return 0;
	m->peak_pss = fmax(m->peak_pss, pss);
	m->peak_uss = fmax(m->peak_uss, uss);
	size_t c1 = m->rcap, c2 = m->rcap;
	if (pl_grow((void **)&m->rt, &c1, m->rn + 1, sizeof *m->rt, 256) < 0 ||
	    pl_grow((void **)&m->pss, &c2, m->rn + 1, sizeof *m->pss, 256) < 0 ||
	    pl_grow((void **)&m->uss, &m->rcap, m->rn + 1, sizeof *m->uss, 256) < 0)
		return -1;
	m->rt[m->rn] = t;
	m->pss[m->rn] = pss;
	m->uss[m->rn++] = uss;
	return 0;
}

/* The growth profile's id for prof's frame id. */
static long mapped(struct pl_memtrack *m, const struct pl_prof *prof, uint32_t id)
{
	if (id >= prof->nframes)
		return -1;
	size_t had = m->capmap;
	if (pl_grow((void **)&m->map, &m->capmap, (size_t)id + 1, sizeof *m->map, 256) < 0)
		return -1;
	if (m->capmap > had) /* the new part: no frame mapped yet */
		memset(m->map + had, 0, (m->capmap - had) * sizeof *m->map);
	if (m->map[id])
		return (long)m->map[id] - 1;
	const struct pl_prof_frame *f = &prof->frames[id];
	long g = pl_prof_frame(&m->growth, f->name, f->file, f->line, f->func_line, f->synthetic);
	if (g >= 0)
		m->map[id] = (uint32_t)g + 1;
	return g;
}

void pl_memtrack_release_bytes(struct pl_memtrack *m, double bytes)
{
	if (bytes > 0)
		m->released += bytes;
}

double pl_memtrack_churn(const struct pl_memtrack *m)
{
	if (!m->n || !(m->grown > 0))
		return 0;
	double held = m->peak_rss - m->rss[0];
	double c = m->grown - (held > 0 ? held : 0);
	return c > 0 ? c : 0;
}

int pl_memtrack_charge(struct pl_memtrack *m, const struct pl_prof *prof, const uint32_t *ids,
		       size_t n, double bytes)
{
	if (!(bytes > 0))
		return 0;
	m->grown += bytes;
	if (!n)
		return 0;
	uint32_t local[256];
	size_t k = n < 256 ? n : 256;
	for (size_t i = 0; i < k; i++) {
		long g = mapped(m, prof, ids[i]);
		if (g < 0)
			return -1;
		local[i] = (uint32_t)g;
	}
	uint64_t kib = (uint64_t)llround(bytes / 1024);
	if (!kib)
		return 0;
	m->charged += bytes;
	return pl_prof_add(&m->growth, local, k, kib);
}

/* "a;b;c" of prof's ids */
static char *stack_text(const struct pl_prof *prof, const uint32_t *ids, size_t n)
{
	struct pl_strbuf b = {0};
	for (size_t i = 0; i < n; i++) {
		if (ids[i] >= prof->nframes)
			continue;
		char *l = pl_prof_label(prof, &prof->frames[ids[i]]);
		pl_strbuf_printf(&b, "%s%s", b.len ? ";" : "", l ? l : "?");
		free(l);
	}
	return pl_strbuf_take(&b);
}

int pl_memtrack_peak_stack(struct pl_memtrack *m, const struct pl_prof *prof, const uint32_t *ids,
			   size_t n)
{
	char *s = stack_text(prof, ids, n);
	if (!s)
		return -1;
	free(m->peak_stack);
	m->peak_stack = s;
	return 0;
}

int pl_memtrack_point(struct pl_memtrack *m, double t, double rss, const struct pl_prof *prof,
		      const uint32_t *ids, size_t n)
{
	if (!(rss > 0))
		return 0;
	if (rss > m->peak_rss) {
		m->peak_rss = rss;
		m->peak_t = t;
		if (n) {
			char *s = stack_text(prof, ids, n);
			if (!s)
				return -1;
			free(m->peak_stack);
			m->peak_stack = s;
		}
	}
	if (m->n && t - m->t[m->n - 1] < POINT_EVERY_S && rss == m->rss[m->n - 1])
		return 0;
	if (m->n && t - m->t[m->n - 1] < POINT_EVERY_S) { /* the latest in its 10 ms */
		m->rss[m->n - 1] = fmax(m->rss[m->n - 1], rss);
		return 0;
	}
	size_t cap = m->cap;
	if (pl_grow((void **)&m->t, &cap, m->n + 1, sizeof *m->t, 1024) < 0 ||
	    pl_grow((void **)&m->rss, &m->cap, m->n + 1, sizeof *m->rss, 1024) < 0)
		return -1;
	m->t[m->n] = t;
	m->rss[m->n++] = rss;
	return 0;
}

json_t *pl_memtrack_json(const struct pl_memtrack *m, double max_rss_bytes, const char *title)
{
	json_t *series = json_array();
	for (size_t i = 0; i < m->n; i++)
		json_array_append_new(series, json_pack("[f, f]", round(m->t[i] * 1000) / 1000,
							m->rss[i]));
	json_t *prop = json_array();
	for (size_t i = 0; i < m->rn; i++)
		json_array_append_new(prop, json_pack("[f, f, f]", round(m->rt[i] * 1000) / 1000,
						      m->pss[i], m->uss[i]));
	json_t *doc = json_pack(
	    "{s:s, s:s, s:f, s:f, s:o, s:o, s:f, s:f, s:o, s:o, s:o, s:o}", "schema",
	    "perfloop.memory/1", "command", title, "peak_rss_bytes", m->peak_rss, "peak_t_s",
	    round(m->peak_t * 1000) / 1000, "peak_stack",
	    m->peak_stack ? json_string(m->peak_stack) : json_null(), "max_rss_bytes",
	    max_rss_bytes > 0 ? json_real(max_rss_bytes) : json_null(), "grown_bytes", m->grown,
	    "charged_bytes", m->charged, "series", series, "peak_pss_bytes",
	    m->rn ? json_real(m->peak_pss) : json_null(), "peak_uss_bytes",
	    m->rn ? json_real(m->peak_uss) : json_null(), "pss_uss_series", prop);
	if (doc) { /* what rose and fell again: a temporary's churn, not retained */
		json_object_set_new(doc, "released_bytes", json_real(m->released));
		json_object_set_new(doc, "churn_bytes", json_real(pl_memtrack_churn(m)));
	}
	return doc;
}

void pl_memtrack_release(struct pl_memtrack *m)
{
	pl_prof_release(&m->growth);
	free(m->map);
	free(m->t);
	free(m->rss);
	free(m->rt);
	free(m->pss);
	free(m->uss);
	free(m->peak_stack);
	memset(m, 0, sizeof *m);
}
