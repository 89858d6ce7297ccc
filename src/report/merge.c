/*
 * Per-rank outputs taken together (merge.h).
 *
 * Inputs are only noted when added (a summary's numbers are read then and
 * its document dropped); pl_merge_run gives ranks, sorts by them, checks
 * that the inputs belong together and only then reads the profiles' stacks,
 * one rank at a time, so a refused merge costs nothing and a large one
 * holds one rank's stacks beside the merged ones.
 */
#include "merge.h"

#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "findings.h"
#include "fsio.h"
#include "grow.h"
#include "profread.h"
#include "render.h"
#include "select.h"
#include "stats.h"
#include "strbuf.h"
#include "summary.h"
#include "trainloop.h"

void pl_merge_init(struct pl_merge *m)
{
	memset(m, 0, sizeof *m);
}

void pl_merge_release(struct pl_merge *m)
{
	pl_prof_release(&m->prof);
	for (size_t i = 0; i < m->nprofs; i++) {
		free(m->profs[i].who.path);
		free(m->profs[i].prefix);
		free(m->profs[i].top);
	}
	free(m->profs);
	for (size_t i = 0; i < m->nsums; i++) {
		free(m->sums[i].who.path);
		for (size_t b = 0; b < m->nbench; b++)
			free(m->sums[i].rows[b].x);
		free(m->sums[i].rows);
	}
	free(m->sums);
	for (size_t b = 0; b < m->nbench; b++) {
		free(m->bench[b].name);
		free(m->bench[b].command);
	}
	free(m->bench);
	free(m->spec_hash);
	for (size_t i = 0; i < m->nproblems; i++)
		free(m->problems[i]);
	free(m->problems);
	memset(m, 0, sizeof *m);
}

static int problem(struct pl_merge *m, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static int problem(struct pl_merge *m, const char *fmt, ...)
{
	if (pl_grow((void **)&m->problems, &m->capproblems, m->nproblems + 1, sizeof *m->problems,
		    8) < 0)
		return PL_ENOMEM;
	va_list ap;
	va_start(ap, fmt);
	int n = vasprintf(&m->problems[m->nproblems], fmt, ap);
	va_end(ap);
	if (n < 0)
		return PL_ENOMEM;
	m->nproblems++;
	return PL_OK;
}

/* the rank a `launch` object records (ranks.h's pl_rank_json) */
static void read_launch(json_t *launch, struct pl_merge_who *w)
{
	w->rank = w->world_size = -1;
	snprintf(w->launcher, sizeof w->launcher, "unknown");
	if (!json_is_object(launch))
		return;
	json_t *r = json_object_get(launch, "rank"), *ws = json_object_get(launch, "world_size");
	if (json_is_integer(r) && json_integer_value(r) >= 0)
		w->rank = (long)json_integer_value(r);
	if (json_is_integer(ws) && json_integer_value(ws) > 0)
		w->world_size = (long)json_integer_value(ws);
	const char *h = json_string_value(json_object_get(launch, "host"));
	const char *l = json_string_value(json_object_get(launch, "launcher"));
	snprintf(w->host, sizeof w->host, "%s", h ? h : "");
	snprintf(w->launcher, sizeof w->launcher, "%s", l ? l : "unknown");
}

static int ends_with(const char *s, const char *suffix)
{
	size_t a = strlen(s), b = strlen(suffix);
	return a >= b && strcmp(s + a - b, suffix) == 0;
}

static int is_file(const char *path)
{
	struct stat st;
	return stat(path, &st) == 0 && S_ISREG(st.st_mode);
}

/* profile's outputs beside its stacks: any of them names the profile */
static const char *const side_exts[] = {".speedscope.json", ".findings.json", ".steps.json",
					".gpu.json",	    ".memory.json",   ".alloc.json",
					".syscalls.json",   ".svg",	      ".html"};

static const char *side_ext(const char *path)
{
	for (size_t i = 0; i < sizeof side_exts / sizeof *side_exts; i++)
		if (ends_with(path, side_exts[i]) && strlen(path) > strlen(side_exts[i]))
			return side_exts[i];
	return NULL;
}

/* the outputs' prefix of a profile named by path (malloc'd) */
static char *profile_prefix(const char *path)
{
	const char *ext = side_ext(path);
	if (!ext && ends_with(path, ".folded"))
		ext = ".folded";
	else if (!ext && ends_with(path, ".collapsed"))
		ext = ".collapsed";
	return ext ? strndup(path, strlen(path) - strlen(ext)) : strdup(path);
}

static char *folded_path(const char *path, const char *prefix)
{
	char *out = NULL;
	if (ends_with(path, ".folded") || ends_with(path, ".collapsed"))
		return strdup(path);
	if (asprintf(&out, "%s.folded", prefix) < 0)
		return NULL;
	return out;
}

static int add_profile(struct pl_merge *m, const char *path, struct pl_error *err)
{
	char *prefix = profile_prefix(path);
	char *folded = prefix ? folded_path(path, prefix) : NULL;
	if (!prefix || !folded) {
		free(prefix);
		free(folded);
		return PL_ENOMEM;
	}
	if (!is_file(folded)) {
		int rc = pl_error_set(err, PL_EINPUT,
				      "%s: not a bench summary (perfloop.bench/1) or a profile (no "
				      "collapsed stacks at %s)",
				      path, folded);
		free(prefix);
		free(folded);
		return rc;
	}
	if (pl_grow((void **)&m->profs, &m->capprofs, m->nprofs + 1, sizeof *m->profs, 16) < 0) {
		free(prefix);
		free(folded);
		return PL_ENOMEM;
	}
	for (size_t i = 0; i < m->nprofs; i++)
		if (strcmp(m->profs[i].who.path, folded) == 0) {
			/* prof.0.svg and prof.0.folded (prof.*): one profile */
			free(prefix);
			free(folded);
			return PL_OK;
		}
	struct pl_merge_prof_rank *p = &m->profs[m->nprofs++];
	memset(p, 0, sizeof *p);
	p->who.path = folded;
	p->prefix = prefix;
	p->data_share = NAN;
	p->helper_share = NAN;
	/* the rank: what profile wrote beside the stacks */
	char *fpath = NULL;
	json_t *doc = NULL;
	if (asprintf(&fpath, "%s.findings.json", prefix) < 0)
		return PL_ENOMEM;
	struct pl_error ignored = {{0}};
	if (is_file(fpath) && pl_json_load(fpath, &doc, &ignored) == PL_OK)
		read_launch(json_object_get(doc, "launch"), &p->who);
	else
		read_launch(NULL, &p->who);
	json_decref(doc);
	free(fpath);
	return PL_OK;
}

/* (name, command) of a summary's benchmarks, in order */
static int same_benchmarks(struct pl_merge *m, json_t *doc, const char *path, const char *first,
			   struct pl_error *err)
{
	json_t *list = json_object_get(doc, "benchmarks");
	size_t n = json_array_size(list);
	if (n != m->nbench)
		return pl_error_set(err, PL_EINPUT,
				    "%s: %zu benchmarks where %s has %zu: not the same run's ranks",
				    path, n, first, m->nbench);
	for (size_t b = 0; b < n; b++) {
		json_t *x = json_array_get(list, b);
		const char *name = json_string_value(json_object_get(x, "name"));
		const char *cmd = json_string_value(json_object_get(x, "command"));
		if (strcmp(name, m->bench[b].name) != 0 ||
		    strcmp(cmd ? cmd : "", m->bench[b].command))
			return pl_error_set(err, PL_EINPUT,
					    "%s: benchmarks[%zu] is '%s' (%s) where %s has '%s' "
					    "(%s): not the same run's ranks",
					    path, b, name, cmd ? cmd : "", first, m->bench[b].name,
					    m->bench[b].command);
	}
	return PL_OK;
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return (x > y) - (x < y);
}

static int add_summary(struct pl_merge *m, const char *path, struct pl_error *err)
{
	json_t *doc = NULL;
	int rc = pl_summary_load(path, &doc, err);
	if (rc != PL_OK)
		return rc;
	json_t *list = json_object_get(doc, "benchmarks");
	const char *hash = json_string_value(json_object_get(json_object_get(doc, "spec"), "hash"));
	if (m->nsums == 0) {
		size_t n = json_array_size(list);
		m->bench = calloc(n ? n : 1, sizeof *m->bench);
		if (!m->bench) {
			json_decref(doc);
			return PL_ENOMEM;
		}
		for (size_t b = 0; b < n; b++) {
			json_t *x = json_array_get(list, b);
			const char *cmd = json_string_value(json_object_get(x, "command"));
			m->bench[b].name = strdup(json_string_value(json_object_get(x, "name")));
			m->bench[b].command = strdup(cmd ? cmd : "");
			m->nbench++;
			if (!m->bench[b].name || !m->bench[b].command) {
				json_decref(doc);
				return PL_ENOMEM;
			}
		}
		if (hash && !(m->spec_hash = strdup(hash))) {
			json_decref(doc);
			return PL_ENOMEM;
		}
	} else {
		const char *first = m->sums[0].who.path;
		rc = same_benchmarks(m, doc, path, first, err);
		if (rc == PL_OK && (hash || m->spec_hash) &&
		    (!hash || !m->spec_hash || strcmp(hash, m->spec_hash) != 0))
			rc = pl_error_set(err, PL_EINPUT,
					  "%s: spec.hash %s where %s has %s: the benchmark's "
					  "perfloop.yaml entry differs between ranks",
					  path, hash ? hash : "(none)", first,
					  m->spec_hash ? m->spec_hash : "(none)");
		if (rc != PL_OK) {
			json_decref(doc);
			return rc;
		}
	}
	if (pl_grow((void **)&m->sums, &m->capsums, m->nsums + 1, sizeof *m->sums, 16) < 0) {
		json_decref(doc);
		return PL_ENOMEM;
	}
	struct pl_merge_sum_rank *s = &m->sums[m->nsums++];
	memset(s, 0, sizeof *s);
	s->who.path = strdup(path);
	s->rows = calloc(m->nbench ? m->nbench : 1, sizeof *s->rows);
	if (!s->who.path || !s->rows) {
		json_decref(doc);
		return PL_ENOMEM;
	}
	read_launch(json_object_get(doc, "launch"), &s->who);
	for (size_t b = 0; b < m->nbench; b++) {
		struct pl_merge_row *r = &s->rows[b];
		rc = pl_summary_wall_samples(doc, m->bench[b].name, &r->x, &r->n);
		if (rc != PL_OK)
			break;
		r->p50 = r->p90 = r->p99 = r->max = r->ratio = r->z = r->p = NAN;
		if (r->n == 0)
			continue;
		double *sorted = malloc(r->n * sizeof *sorted);
		if (!sorted) {
			rc = PL_ENOMEM;
			break;
		}
		memcpy(sorted, r->x, r->n * sizeof *sorted);
		qsort(sorted, r->n, sizeof *sorted, cmp_double);
		r->p50 = pl_stats_quantile_sorted(sorted, r->n, 0.5);
		r->p90 = pl_stats_quantile_sorted(sorted, r->n, 0.9);
		r->p99 = pl_stats_quantile_sorted(sorted, r->n, 0.99);
		r->max = sorted[r->n - 1];
		free(sorted);
	}
	json_decref(doc);
	return rc;
}

/* A summary is a JSON file (its first character '{'); anything else a
 * profile (add_profile says so where there are no stacks). */
int pl_merge_add(struct pl_merge *m, const char *path, struct pl_error *err)
{
	if (is_file(path) && !side_ext(path)) {
		FILE *f = fopen(path, "re");
		if (!f)
			return pl_error_set(err, PL_EINPUT, "%s: cannot read: %s", path,
					    strerror(errno));
		int c;
		while ((c = fgetc(f)) == ' ' || c == '\n' || c == '\t' || c == '\r')
			;
		fclose(f);
		if (c == '{')
			return add_summary(m, path, err);
	}
	return add_profile(m, path, err);
}

/* more than any machine has run (a bad file's rank must not size arrays) */
#define MAX_RANKS (1L << 24)

/* Ranks for inputs that recorded none (the lowest left, in the order
 * given), no rank twice, then sorted by rank; what does not add up to one
 * whole run (world sizes, missing ranks) said as problems. */
static int assign_ranks(struct pl_merge *m, void *base, size_t n, size_t size, const char *kind,
			struct pl_error *err)
{
	if (n == 0)
		return PL_OK;
#define WHO(i) ((struct pl_merge_who *)((char *)base + (i)*size))
	long top = -1, world = -1;
	for (size_t i = 0; i < n; i++) {
		if (WHO(i)->rank >= MAX_RANKS || WHO(i)->world_size > MAX_RANKS)
			return pl_error_set(
			    err, PL_EINPUT,
			    "%s: launch: rank %ld of %ld: over %ld ranks, not a run's",
			    WHO(i)->path, WHO(i)->rank, WHO(i)->world_size, (long)MAX_RANKS);
		if (WHO(i)->rank > top)
			top = WHO(i)->rank;
	}
	size_t span = (size_t)(top + 1) + n;
	unsigned char *seen = calloc(span, 1);
	size_t *owner = calloc(span, sizeof *owner);
	if (!seen || !owner) {
		free(seen);
		free(owner);
		return PL_ENOMEM;
	}
	int rc = PL_OK;
	for (size_t i = 0; i < n && rc == PL_OK; i++) {
		long r = WHO(i)->rank;
		if (r < 0)
			continue;
		if (seen[r])
			rc = pl_error_set(err, PL_EINPUT,
					  "%s and %s are both rank %ld: two runs' %s, or one "
					  "given twice",
					  WHO(owner[r])->path, WHO(i)->path, r, kind);
		seen[r] = 1;
		owner[r] = i;
	}
	long next = 0;
	for (size_t i = 0; i < n && rc == PL_OK; i++) {
		if (WHO(i)->rank >= 0)
			continue;
		while (seen[next])
			next++;
		WHO(i)->rank = next;
		WHO(i)->from_order = 1;
		seen[next] = 1;
		rc = problem(m, "%s records no rank: taken as rank %ld from the order given",
			     WHO(i)->path, next);
	}
	free(seen);
	free(owner);
	if (rc != PL_OK)
		return rc;
	/* sorted by rank: insertion, the inputs nearly in order already */
	char *tmp = malloc(size);
	if (!tmp)
		return PL_ENOMEM;
	for (size_t i = 1; i < n; i++) {
		memcpy(tmp, WHO(i), size);
		size_t j = i;
		while (j > 0 && WHO(j - 1)->rank > ((struct pl_merge_who *)tmp)->rank) {
			memcpy(WHO(j), WHO(j - 1), size);
			j--;
		}
		memcpy(WHO(j), tmp, size);
	}
	free(tmp);
	for (size_t i = 0; i < n && rc == PL_OK; i++) {
		long w = WHO(i)->world_size;
		if (w < 0)
			continue;
		if (world >= 0 && w != world)
			rc = problem(m, "%s: world size %ld where %s says %ld", WHO(i)->path, w,
				     WHO(0)->path, world);
		if (w > world)
			world = w;
	}
	top = WHO(n - 1)->rank;
	if (rc == PL_OK && world >= 0 && top >= world)
		rc = problem(m, "%s: rank %ld of a world of %ld", WHO(n - 1)->path, top, world);
	long whole = world > top ? world : top + 1;
	if (rc == PL_OK && (size_t)whole > n) {
		struct pl_strbuf miss = {0};
		size_t i = 0, nmiss = 0;
		for (long r = 0; r < whole; r++) {
			while (i < n && WHO(i)->rank < r)
				i++;
			if (i < n && WHO(i)->rank == r)
				continue;
			if (nmiss++ < 20)
				pl_strbuf_printf(&miss, "%s%ld", nmiss > 1 ? ", " : "", r);
		}
		char *list = pl_strbuf_take(&miss);
		rc = problem(m, "%s: rank%s %s%s missing of 0..%ld", kind, nmiss > 1 ? "s" : "",
			     list ? list : "", nmiss > 20 ? ", ..." : "", whole - 1);
		free(list);
	}
#undef WHO
	return rc;
}

static int has_ci(const char *s, const char *needle)
{
	return strcasestr(s, needle) != NULL;
}

int pl_merge_comm_frame(const char *name, const char *file)
{
	static const char *const ops[] = {
	    "allreduce",     "all_reduce", "barrier",	"allgather", "all_gather", "reduce_scatter",
	    "reducescatter", "bcast",	   "broadcast", "alltoall",  "all_to_all"};
	/* joining and leaving: ranks start and end apart, which is no step's
	 * wait (the rendezvous of init_process_group waits for the last rank
	 * to have imported torch) */
	static const char *const startup[] = {
	    "init_process_group", "new_group",	   "destroy_process_group",
	    "MPI_Init",		  "PMPI_Init",	   "MPI_Finalize",
	    "PMPI_Finalize",	  "ompi_mpi_init", "ompi_mpi_finalize"};
	if (!name)
		return 0;
	for (size_t i = 0; i < sizeof startup / sizeof *startup; i++)
		if (strncmp(name, startup[i], strlen(startup[i])) == 0)
			return -1;
	if (file && ends_with(file, "torch/distributed/distributed_c10d.py"))
		return 1;
	if (strncmp(name, "MPI_", 4) == 0 || strncmp(name, "PMPI_", 5) == 0 ||
	    strstr(name, "ompi_coll") || strstr(name, "opal_progress") ||
	    strstr(name, "ncclKernel"))
		return 1;
	for (size_t i = 0; i < sizeof ops / sizeof *ops; i++)
		if (has_ci(name, ops[i]))
			return 1;
	/* c10d's Work::wait; DDP's backward waiting for its gradients'
	 * all-reduce at the end (Reducer::finalize_backward) */
	return strstr(name, "c10d::") &&
	       (strstr(name, "wait") || strstr(name, "Reducer::finalize_backward"));
}

static int python_file(const char *file)
{
	return file && ends_with(file, ".py");
}

/* Python's autograd entry, where DDP's reducer waits for the gradients'
 * all-reduce (torch/autograd/__init__.py's backward, Tensor.backward) */
static int autograd_backward(const char *name, const char *file)
{
	return name && file && !strcmp(name, "backward") &&
	       (ends_with(file, "torch/autograd/__init__.py") || ends_with(file, "torch/_tensor.py"));
}

/* The share of the samples in collectives. The outermost frame that is a
 * collective's, or start-up's, decides a stack. Where some stacks run
 * Python, only those count (mixed mode's threads without Python are the
 * libraries' workers, idle under --idle, and would water the share down
 * by however many of them a library starts). A Python-mode profile has no
 * native frame to name the all-reduce: there a training thread waiting
 * ("(idle)", --idle) inside autograd's backward is DDP's reducer waiting
 * for the other ranks (on the CPU the caller's thread runs the backward
 * pass itself, so it only sleeps there to wait), and counts as one. */
static double comm_share(const struct pl_prof *one, unsigned char *flag)
{
	enum { COMM = 2, START = 4, PY = 8, BWD = 16, IDLE = 32 };
	int any_py = 0, any_native = 0;
	for (size_t i = 0; i < one->nframes; i++) {
		const char *name = one->frames[i].name, *file = one->frames[i].file;
		int c = pl_merge_comm_frame(name, file);
		flag[i] |= c > 0 ? COMM : c < 0 ? START : 0;
		flag[i] |= python_file(file) ? PY : 0;
		flag[i] |= autograd_backward(name, file) ? BWD : 0;
		flag[i] |= name && !strcmp(name, "(idle)") ? IDLE : 0;
		any_py |= flag[i] & PY;
		/* a native frame: a file that is a shared object or binary */
		any_native |= file && *file && !python_file(file) && file[0] != '<' &&
			      (strstr(file, ".so") || strchr(file, '/')) && !(flag[i] & IDLE);
	}
	uint64_t in = 0, of = 0;
	for (size_t k = 0; k < one->nstacks; k++) {
		const struct pl_prof_stack *st = &one->stacks[k];
		int decided = 0, py = 0, bwd = 0;
		for (size_t i = 0; i < st->depth; i++) {
			unsigned char f = flag[one->ids[st->off + i]];
			py |= f & PY;
			bwd |= f & BWD;
			if (!decided && (f & (COMM | START)))
				decided = f & (COMM | START);
		}
		if (!decided && bwd && !any_native && st->depth &&
		    (flag[one->ids[st->off + st->depth - 1]] & IDLE))
			decided = COMM;
		if (any_py && !py)
			continue;
		of += st->count;
		in += decided == COMM ? st->count : 0;
	}
	return of ? (double)in / (double)of : 0;
}

/* Which stacks run Python (py[k]), where any does: then the rest are the
 * threads of the libraries under it (gloo's, OpenMP's, the allocator's),
 * mostly idle, as many as a library starts. 1 when some stack runs
 * Python, 0 when none does (a native program: every stack counts). */
static int python_stacks(const struct pl_prof *one, unsigned char *py)
{
	int any = 0;
	for (size_t k = 0; k < one->nstacks; k++) {
		const struct pl_prof_stack *st = &one->stacks[k];
		py[k] = 0;
		for (size_t i = 0; i < st->depth && !py[k]; i++)
			py[k] = python_file(one->frames[one->ids[st->off + i]].file);
		any |= py[k];
	}
	return any;
}

/* The profile with the stacks of threads without Python under one frame
 * of their own, so that the merged flame graph shows the training
 * threads' view and the libraries' helpers apart from it. */
static int helpers_apart(const struct pl_prof *one, const unsigned char *py, struct pl_prof *out)
{
	long *map = malloc((one->nframes + 1) * sizeof *map);
	uint32_t *ids = NULL;
	size_t cap = 0;
	long helper = pl_prof_frame(out, "(threads without Python: the libraries' helpers)", "", 0,
				    0, 1);
	int rc = map && helper >= 0 ? 0 : -1;
	for (size_t i = 0; i < one->nframes && rc == 0; i++) {
		const struct pl_prof_frame *f = &one->frames[i];
		map[i] = pl_prof_frame(out, f->name, f->file, f->line, f->func_line, f->synthetic);
		rc = map[i] < 0 ? -1 : 0;
	}
	for (size_t k = 0; k < one->nstacks && rc == 0; k++) {
		const struct pl_prof_stack *st = &one->stacks[k];
		if (pl_grow((void **)&ids, &cap, st->depth + 1, sizeof *ids, 64) < 0) {
			rc = -1;
			break;
		}
		size_t n = 0;
		if (!py[k])
			ids[n++] = (uint32_t)helper;
		for (size_t i = 0; i < st->depth; i++)
			ids[n++] = (uint32_t)map[one->ids[st->off + i]];
		rc = pl_prof_add(out, ids, n, st->count);
	}
	free(map);
	free(ids);
	return rc;
}

/* One rank's stacks: its row, then added to the merged profile. Where
 * some threads run Python, the row is theirs (the training threads'
 * view): the top function and the data share count their samples only,
 * and the helpers' share is said apart. */
static int merge_profile(struct pl_merge *m, struct pl_merge_prof_rank *p, struct pl_error *err)
{
	struct pl_prof one = {0};
	const char *format;
	int rc = pl_prof_read_any(p->who.path, &one, &format, err);
	if (rc != PL_OK || one.oom) {
		pl_prof_release(&one);
		return rc != PL_OK ? rc : PL_ENOMEM;
	}
	p->samples = one.samples;
	uint64_t *self = calloc(one.nframes + 1, sizeof *self);
	unsigned char *data = calloc(one.nframes + 1, 1);
	unsigned char *py = calloc(one.nstacks + 1, 1);
	if (!data || !self || !py) {
		free(data);
		free(self);
		free(py);
		pl_prof_release(&one);
		return PL_ENOMEM;
	}
	int any_py = python_stacks(&one, py);
	uint64_t seen = 0; /* the samples of the threads the row is about */
	for (size_t k = 0; k < one.nstacks; k++) {
		const struct pl_prof_stack *st = &one.stacks[k];
		if (any_py && !py[k])
			continue;
		seen += st->count;
		if (st->depth)
			self[one.ids[st->off + st->depth - 1]] += st->count;
	}
	p->helper_share = any_py && one.samples ? (double)(one.samples - seen) / (double)one.samples
					       : NAN;
	size_t best = SIZE_MAX;
	int any_data = 0;
	for (size_t i = 0; i < one.nframes; i++) {
		/* the top function is one to act on: never "(idle)" or another
		 * frame perfloop made up, nor the interpreter's or torch's
		 * machinery (select's list: imports, autograd's entry, waits) */
		if (self[i] && !one.frames[i].synthetic &&
		    !pl_frame_machinery(one.frames[i].name, one.frames[i].file, NULL) &&
		    (best == SIZE_MAX || self[i] > self[best]))
			best = i;
		data[i] =
		    pl_train_frame_phase(one.frames[i].name, one.frames[i].file) == PL_TRAIN_DATA;
		any_data |= data[i];
	}
	p->comm_share = comm_share(&one, data);
	if (best != SIZE_MAX && seen) {
		p->top = pl_prof_label(&one, &one.frames[best]);
		p->top_share = (double)self[best] / (double)seen;
	}
	if (any_data && seen) {
		uint64_t in = 0;
		for (size_t k = 0; k < one.nstacks; k++) {
			if (any_py && !py[k])
				continue;
			for (size_t i = 0; i < one.stacks[k].depth; i++)
				if (data[one.ids[one.stacks[k].off + i]] & 1) {
					in += one.stacks[k].count;
					break;
				}
		}
		p->data_share = (double)in / (double)seen;
		p->data_from = "stacks";
	}
	free(self);
	free(data);
	/* the wall-clock split profile measured, where it wrote one */
	char *spath = NULL;
	if (asprintf(&spath, "%s.steps.json", p->prefix) >= 0 && is_file(spath)) {
		json_t *doc = NULL;
		struct pl_error ignored = {{0}};
		if (pl_json_load(spath, &doc, &ignored) == PL_OK) {
			json_t *d = json_object_get(json_object_get(doc, "steady"), "data_share");
			if (json_is_number(d)) {
				p->data_share = json_number_value(d);
				p->data_from = "steps";
			}
			json_decref(doc);
		}
	}
	free(spath);
	char root[48];
	snprintf(root, sizeof root, "rank %ld", p->who.rank);
	struct pl_prof apart = {0};
	if (any_py && seen < one.samples && helpers_apart(&one, py, &apart) < 0)
		rc = PL_ENOMEM;
	else
		rc = pl_prof_merge(&m->prof, apart.nframes ? &apart : &one,
				   m->by_rank ? root : NULL) < 0
			 ? PL_ENOMEM
			 : PL_OK;
	pl_prof_release(&apart);
	pl_prof_release(&one);
	free(py);
	return rc;
}

static double median_of(double *x, size_t n)
{
	return n ? pl_stats_median_inplace(x, n) : NAN;
}

static int stragglers(struct pl_merge *m, size_t b)
{
	struct pl_merge_benchmark *bm = &m->bench[b];
	size_t n = 0, pooled = 0;
	double *p50 = malloc((m->nsums + 1) * sizeof *p50);
	double *others = malloc((m->nsums + 1) * sizeof *others);
	for (size_t i = 0; i < m->nsums; i++)
		pooled += m->sums[i].rows[b].n;
	double *rest = malloc((pooled + 1) * sizeof *rest);
	if (!p50 || !others || !rest) {
		free(p50);
		free(others);
		free(rest);
		return PL_ENOMEM;
	}
	for (size_t i = 0; i < m->nsums; i++)
		if (m->sums[i].rows[b].n)
			p50[n++] = m->sums[i].rows[b].p50;
	bm->median_p50 = median_of(p50, n);
	double mad = NAN, slowest = NAN;
	if (n)
		pl_stats_mad(p50, n, &mad);
	for (size_t i = 0; i < m->nsums; i++) {
		struct pl_merge_row *r = &m->sums[i].rows[b];
		if (!r->n)
			continue;
		if (!(r->p50 <= slowest))
			slowest = r->p50;
		size_t no = 0, nr = 0;
		for (size_t j = 0; j < m->nsums; j++) {
			const struct pl_merge_row *o = &m->sums[j].rows[b];
			if (j == i || !o->n)
				continue;
			others[no++] = o->p50;
			memcpy(rest + nr, o->x, o->n * sizeof *rest);
			nr += o->n;
		}
		double med = median_of(others, no);
		r->ratio = no && med > 0 ? r->p50 / med : NAN;
		r->z = n >= 3 && mad > 0 ? 0.6745 * (r->p50 - bm->median_p50) / mad : NAN;
		struct pl_mwu u;
		if (r->n >= 3 && nr >= 3 &&
		    pl_stats_mann_whitney(r->x, r->n, rest, nr, &u) == PL_OK)
			r->p = u.p;
		r->straggler = r->ratio >= PL_STRAGGLER_RATIO && r->p < PL_STRAGGLER_P;
		bm->stragglers += r->straggler != 0;
	}
	bm->spread = bm->median_p50 > 0 ? slowest / bm->median_p50 : NAN;
	free(p50);
	free(others);
	free(rest);
	return PL_OK;
}

/* The rank the others wait for: it waits in collectives at most half as
 * much as their median, which is PL_STRAGGLER_WAIT or more. */
static int profile_stragglers(struct pl_merge *m)
{
	double *o = malloc((m->nprofs + 1) * sizeof *o);
	if (!o)
		return PL_ENOMEM;
	for (size_t i = 0; i < m->nprofs; i++) {
		struct pl_merge_prof_rank *p = &m->profs[i];
		size_t n = 0;
		for (size_t j = 0; j < m->nprofs; j++)
			if (j != i && m->profs[j].samples)
				o[n++] = m->profs[j].comm_share;
		p->comm_others = median_of(o, n);
		p->straggler = p->samples && p->comm_others >= PL_STRAGGLER_WAIT &&
			       p->comm_share <= p->comm_others / 2;
	}
	free(o);
	return PL_OK;
}

int pl_merge_run(struct pl_merge *m, struct pl_error *err)
{
	int rc = assign_ranks(m, m->profs, m->nprofs, sizeof *m->profs, "profiles", err);
	if (rc == PL_OK)
		rc = assign_ranks(m, m->sums, m->nsums, sizeof *m->sums, "summaries", err);
	for (size_t i = 0; i < m->nprofs && rc == PL_OK; i++)
		rc = merge_profile(m, &m->profs[i], err);
	if (rc == PL_OK && m->nprofs)
		rc = profile_stragglers(m);
	for (size_t b = 0; b < m->nbench && rc == PL_OK; b++)
		rc = stragglers(m, b);
	return rc;
}

static json_t *num(double v)
{
	return isfinite(v) ? json_real(v) : json_null();
}

static json_t *who_json(const struct pl_merge_who *w)
{
	return json_pack(
	    "{s:I, s:o, s:s, s:s, s:s, s:b}", "rank", (json_int_t)w->rank, "world_size",
	    w->world_size >= 0 ? json_integer(w->world_size) : json_null(), "host", w->host,
	    "launcher", w->launcher, "file", w->path, "rank_from_order", w->from_order);
}

json_t *pl_merge_json(const struct pl_merge *m)
{
	json_t *doc = json_pack("{s:s}", "schema", PL_MERGE_SCHEMA);
	json_t *probs = json_array();
	for (size_t i = 0; i < m->nproblems; i++)
		json_array_append_new(probs, json_string(m->problems[i]));
	json_object_set_new(doc, "problems", probs);
	if (m->nprofs) {
		json_t *ranks = json_array();
		uint64_t sum = 0;
		for (size_t i = 0; i < m->nprofs; i++) {
			const struct pl_merge_prof_rank *p = &m->profs[i];
			json_t *o = who_json(&p->who);
			json_object_set_new(o, "samples", json_integer((json_int_t)p->samples));
			json_object_set_new(o, "top", p->top ? json_string(p->top) : json_null());
			json_object_set_new(o, "top_share",
					    p->top ? num(p->top_share) : json_null());
			json_object_set_new(o, "data_share", num(p->data_share));
			json_object_set_new(o, "data_share_from",
					    p->data_from ? json_string(p->data_from) : json_null());
			json_object_set_new(o, "helper_share", num(p->helper_share));
			json_object_set_new(o, "wait_share", json_real(p->comm_share));
			json_object_set_new(o, "wait_share_others", num(p->comm_others));
			json_object_set_new(o, "straggler", json_boolean(p->straggler));
			json_array_append_new(ranks, o);
			sum += p->samples;
		}
		json_object_set_new(doc, "profiles",
				    json_pack("{s:I, s:I, s:b, s:o}", "samples",
					      (json_int_t)m->prof.samples, "ranks_samples",
					      (json_int_t)sum, "by_rank", m->by_rank, "ranks",
					      ranks));
	}
	if (m->nsums) {
		json_t *benches = json_array();
		for (size_t b = 0; b < m->nbench; b++) {
			const struct pl_merge_benchmark *bm = &m->bench[b];
			json_t *ranks = json_array();
			for (size_t i = 0; i < m->nsums; i++) {
				const struct pl_merge_row *r = &m->sums[i].rows[b];
				json_t *o = who_json(&m->sums[i].who);
				json_object_set_new(o, "samples", json_integer((json_int_t)r->n));
				json_object_set_new(o, "p50_s", num(r->p50));
				json_object_set_new(o, "p90_s", num(r->p90));
				json_object_set_new(o, "p99_s", num(r->p99));
				json_object_set_new(o, "max_s", num(r->max));
				json_object_set_new(o, "ratio_to_others", num(r->ratio));
				json_object_set_new(o, "modified_z", num(r->z));
				json_object_set_new(o, "p_value", num(r->p));
				json_object_set_new(o, "straggler", json_boolean(r->straggler));
				json_array_append_new(ranks, o);
			}
			json_array_append_new(
			    benches,
			    json_pack("{s:s, s:s, s:o, s:o, s:I, s:o}", "name", bm->name, "command",
				      bm->command, "median_p50_s", num(bm->median_p50), "spread",
				      num(bm->spread), "stragglers", (json_int_t)bm->stragglers,
				      "ranks", ranks));
		}
		json_object_set_new(
		    doc, "summaries",
		    json_pack("{s:o, s:{s:f, s:f}, s:o}", "spec_hash",
			      m->spec_hash ? json_string(m->spec_hash) : json_null(), "rule",
			      "ratio", PL_STRAGGLER_RATIO, "p", PL_STRAGGLER_P, "benchmarks",
			      benches));
	}
	return doc;
}

static const char *host_of(const struct pl_merge_who *w)
{
	return w->host[0] ? w->host : "-";
}

char *pl_merge_text(const struct pl_merge *m)
{
	struct pl_strbuf b = {0};
	char t[4][32];
	if (m->nprofs) {
		uint64_t sum = 0;
		for (size_t i = 0; i < m->nprofs; i++)
			sum += m->profs[i].samples;
		pl_strbuf_printf(
		    &b, "Profiles: %zu rank%s, %llu samples merged (the ranks' sum: %llu)\n",
		    m->nprofs, m->nprofs == 1 ? "" : "s", (unsigned long long)m->prof.samples,
		    (unsigned long long)sum);
		pl_strbuf_printf(&b, "  %5s  %-16s %9s  %7s  %6s  %6s  %5s  %s\n", "rank", "host",
				 "samples", "helpers", "data", "wait", "top", "function (self)");
		for (size_t i = 0; i < m->nprofs; i++) {
			const struct pl_merge_prof_rank *p = &m->profs[i];
			char data[16] = "-", helpers[16] = "-";
			if (!isnan(p->data_share))
				snprintf(data, sizeof data, "%.1f%%", 100 * p->data_share);
			if (!isnan(p->helper_share))
				snprintf(helpers, sizeof helpers, "%.1f%%", 100 * p->helper_share);
			pl_strbuf_printf(&b, "  %5ld  %-16.16s %9llu  %7s  %6s  %5.1f%%  %4.1f%%  %s\n",
					 p->who.rank, host_of(&p->who),
					 (unsigned long long)p->samples, helpers, data,
					 100 * p->comm_share,
					 p->top ? 100 * p->top_share : 0.0, p->top ? p->top : "-");
		}
		pl_strbuf_printf(&b, "  (helpers: samples in the libraries' threads without Python, "
				     "shown apart; data, wait and top: of the threads that run "
				     "Python; data: waiting for the DataLoader; wait: in "
				     "collectives, all-reduce, barrier...)\n");
		for (size_t i = 0; i < m->nprofs; i++)
			if (m->profs[i].straggler)
				pl_strbuf_printf(
				    &b,
				    "  ! straggler: rank %ld, %.1f%% of its samples in "
				    "collectives where the other ranks have %.1f%%: they "
				    "wait for it\n",
				    m->profs[i].who.rank, 100 * m->profs[i].comm_share,
				    100 * m->profs[i].comm_others);
	}
	for (size_t k = 0; k < m->nbench; k++) {
		const struct pl_merge_benchmark *bm = &m->bench[k];
		pl_strbuf_printf(&b,
				 "%sBenchmark '%s' (%s): %zu ranks, median p50 %s, spread %.2fx",
				 b.len ? "\n" : "", bm->name, bm->command, m->nsums,
				 pl_fmt_time(t[0], sizeof t[0], bm->median_p50), bm->spread);
		pl_strbuf_printf(&b, " (slowest rank's p50 over the median)\n");
		pl_strbuf_printf(&b, "  %5s  %-16s %5s %10s %10s %10s %10s %9s\n", "rank", "host",
				 "runs", "p50", "p90", "p99", "max", "vs rest");
		for (size_t i = 0; i < m->nsums; i++) {
			const struct pl_merge_row *r = &m->sums[i].rows[k];
			char ratio[16] = "-";
			if (!isnan(r->ratio))
				snprintf(ratio, sizeof ratio, "%.2fx", r->ratio);
			pl_strbuf_printf(&b, "  %5ld  %-16.16s %5zu %10s %10s %10s %10s %9s%s\n",
					 m->sums[i].who.rank, host_of(&m->sums[i].who), r->n,
					 pl_fmt_time(t[0], sizeof t[0], r->p50),
					 pl_fmt_time(t[1], sizeof t[1], r->p90),
					 pl_fmt_time(t[2], sizeof t[2], r->p99),
					 pl_fmt_time(t[3], sizeof t[3], r->max), ratio,
					 r->straggler ? "  straggler" : "");
		}
		if (!bm->stragglers)
			pl_strbuf_printf(&b,
					 "  no straggler (a rank's p50 %.2fx the others' median "
					 "or more, and slower by a Mann-Whitney test at p < %g)\n",
					 PL_STRAGGLER_RATIO, PL_STRAGGLER_P);
		for (size_t i = 0; i < m->nsums; i++) {
			const struct pl_merge_row *r = &m->sums[i].rows[k];
			if (r->straggler)
				pl_strbuf_printf(
				    &b,
				    "  ! straggler: rank %ld, p50 %.2fx the other ranks' "
				    "median (p = %.2g)\n",
				    m->sums[i].who.rank, r->ratio, r->p);
		}
	}
	if (m->nproblems) {
		pl_strbuf_printf(&b, "%sProblems:\n", b.len ? "\n" : "");
		for (size_t i = 0; i < m->nproblems; i++)
			pl_strbuf_printf(&b, "  ! %s\n", m->problems[i]);
	}
	return pl_strbuf_take(&b);
}

static int profile_findings(const struct pl_merge *m, struct pl_findings *out)
{
	for (size_t i = 0; i < m->nprofs; i++) {
		const struct pl_merge_prof_rank *p = &m->profs[i];
		if (!p->straggler)
			continue;
		char key[64], sig[256], ev[640];
		snprintf(key, sizeof key, "straggler rank %ld profile", p->who.rank);
		snprintf(sig, sizeof sig,
			 "rank %ld is a straggler: the other ranks spend %.0f%% of their samples "
			 "waiting in collectives, it %.0f%%",
			 p->who.rank, 100 * p->comm_others, 100 * p->comm_share);
		snprintf(
		    ev, sizeof ev,
		    "%s: rank %ld of %zu%s%s, %llu samples, %.1f%% in collectives (all-reduce, "
		    "barrier...), the other ranks' median %.1f%%; its top function %s (%.1f%%)",
		    p->who.path, p->who.rank, m->nprofs, p->who.host[0] ? " on " : "", p->who.host,
		    (unsigned long long)p->samples, 100 * p->comm_share, 100 * p->comm_others,
		    p->top ? p->top : "-", 100 * p->top_share);
		struct pl_finding *x = pl_findings_add_measured(
		    out, "distributed.straggler", p->who.path, key, sig, ev,
		    "the other ranks wait at each collective for this one: make its share of "
		    "the work equal (data shard sizes, rank-0-only logging, evaluation or "
		    "checkpointing moved off the step) or find what is slower on its host or "
		    "device; its own profile shows where its time goes",
		    "others_wait_share", "fraction", p->comm_others);
		if (!x)
			return -1;
		x->severity = p->comm_others >= 0.5 ? PL_SEV_HIGH : PL_SEV_MEDIUM;
		x->level = 5;
		x->ratio = p->comm_others < 0.95 ? 1.0 / (1.0 - p->comm_others) : 20.0;
		x->has_ratio = 1;
		x->confidence = 0.7;
		x->evidence_numbers =
		    json_pack("{s:I, s:f, s:f, s:I, s:f}", "rank", (json_int_t)p->who.rank,
			      "wait_share", p->comm_share, "others_wait_share", p->comm_others,
			      "samples", (json_int_t)p->samples, "ratio", x->ratio);
	}
	return 0;
}

int pl_merge_findings(const struct pl_merge *m, struct pl_findings *out)
{
	if (profile_findings(m, out) < 0)
		return -1;
	for (size_t k = 0; k < m->nbench; k++) {
		const struct pl_merge_benchmark *bm = &m->bench[k];
		/* the slowest first, at most PL_STRAGGLER_FINDINGS (the table in
		 * the merge document has them all) */
		unsigned char *done = calloc(m->nsums + 1, 1);
		if (!done)
			return -1;
		for (size_t emitted = 0; emitted < PL_STRAGGLER_FINDINGS; emitted++) {
			size_t i = SIZE_MAX;
			for (size_t j = 0; j < m->nsums; j++)
				if (m->sums[j].rows[k].straggler && !done[j] &&
				    (i == SIZE_MAX ||
				     m->sums[j].rows[k].ratio > m->sums[i].rows[k].ratio))
					i = j;
			if (i == SIZE_MAX)
				break;
			done[i] = 1;
			const struct pl_merge_row *r = &m->sums[i].rows[k];
			const struct pl_merge_who *w = &m->sums[i].who;
			char key[160], sig[256], ev[512], t[2][32];
			snprintf(key, sizeof key, "straggler rank %ld %s", w->rank, bm->name);
			snprintf(
			    sig, sizeof sig,
			    "rank %ld is a straggler: its p50 is %.2fx the other ranks' in '%s'",
			    w->rank, r->ratio, bm->name);
			snprintf(ev, sizeof ev,
				 "%s: rank %ld of %zu%s%s: p50 %s over %zu runs, the median rank's "
				 "%s; slower than the other ranks' runs (Mann-Whitney p = %.2g)",
				 w->path, w->rank, m->nsums, w->host[0] ? " on " : "", w->host,
				 pl_fmt_time(t[0], sizeof t[0], r->p50), r->n,
				 pl_fmt_time(t[1], sizeof t[1], bm->median_p50), r->p);
			struct pl_finding *x = pl_findings_add_measured(
			    out, "distributed.straggler", w->path, key, sig, ev,
			    "every rank waits for the slowest at each collective: profile this "
			    "rank "
			    "beside a fast one (perfloop profile -o prof.%r under the launcher, "
			    "then "
			    "perfloop merge) and look for what only it does: a larger data shard, "
			    "rank-0 logging or checkpointing, a slower or busier host or device",
			    "straggler_ratio", "ratio", r->ratio);
			if (!x) {
				free(done);
				return -1;
			}
			x->severity = r->ratio >= 1.5 ? PL_SEV_HIGH : PL_SEV_MEDIUM;
			x->level = 5;
			x->ratio = r->ratio;
			x->has_ratio = 1;
			x->confidence = r->p < 1e-3 ? 0.9 : 0.7;
			x->evidence_numbers =
			    json_pack("{s:I, s:f, s:f, s:f, s:f, s:I}", "rank", (json_int_t)w->rank,
				      "p50_s", r->p50, "median_p50_s", bm->median_p50, "ratio",
				      r->ratio, "p_value", r->p, "ranks", (json_int_t)m->nsums);
		}
		free(done);
	}
	return 0;
}
