/*
 * What profile shows and writes, whatever the mode: the table of hottest
 * functions, the live line and top's redrawn table while sampling, and the
 * output files (folded, SVG, HTML, speedscope, findings, GPU, memory and
 * steps JSON), each written to a temporary name and renamed into place.
 * Also the title and exit status every mode reports the same way.
 */
#include "profile_int.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "envfind.h"
#include "findings.h"
#include "torchops.h"
#include "fsio.h"
#include "monotime.h"
#include "render.h"
#include "spawn.h"

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

/* --threads: the samples by thread (the "thread TID (name)" frame each
 * stack starts from under its process), each with its own top functions,
 * largest thread first; its share of all samples. top and the table
 * otherwise mix every thread's functions in one list. */
static int print_threads(const struct pl_prof *p, int top)
{
	size_t nt = 0;
	uint32_t *tid = malloc((p->nframes + 1) * sizeof *tid);
	uint64_t *tsum = calloc(p->nframes + 1, sizeof *tsum);
	uint64_t *leaf = calloc(p->nframes + 1, sizeof *leaf);
	int rc = tid && tsum && leaf ? 0 : -1;
	/* the threads, and each one's samples */
	for (size_t i = 0; rc == 0 && i < p->nframes; i++)
		if (p->frames[i].synthetic && !strncmp(p->frames[i].name, "thread ", 7))
			tid[nt++] = (uint32_t)i;
	for (size_t s = 0; rc == 0 && s < p->nstacks; s++) {
		const struct pl_prof_stack *st = &p->stacks[s];
		for (size_t d = 0; d < st->depth && d < 3; d++) {
			uint32_t id = p->ids[st->off + d];
			if (p->frames[id].synthetic && !strncmp(p->frames[id].name, "thread ", 7)) {
				tsum[id] += st->count;
				break;
			}
		}
	}
	/* largest first */
	for (size_t a = 1; rc == 0 && a < nt; a++)
		for (size_t b = a; b > 0 && tsum[tid[b]] > tsum[tid[b - 1]]; b--) {
			uint32_t x = tid[b];
			tid[b] = tid[b - 1];
			tid[b - 1] = x;
		}
	double all = p->samples ? (double)p->samples : 1;
	if (rc == 0 && nt)
		printf("\n  %6s  %8s  %s\n", "share", "samples", "thread: its top functions (self)");
	for (size_t k = 0; rc == 0 && k < nt && k < (size_t)top; k++) {
		uint32_t t = tid[k];
		memset(leaf, 0, (p->nframes + 1) * sizeof *leaf);
		for (size_t s = 0; s < p->nstacks; s++) {
			const struct pl_prof_stack *st = &p->stacks[s];
			int mine = 0;
			for (size_t d = 0; d < st->depth && d < 3 && !mine; d++)
				mine = p->ids[st->off + d] == t;
			if (mine && st->depth)
				leaf[p->ids[st->off + st->depth - 1]] += st->count;
		}
		printf("  %5.1f%%  %8llu  %s:", 100.0 * (double)tsum[t] / all,
		       (unsigned long long)tsum[t], p->frames[t].name);
		for (int shown = 0; shown < 3; shown++) {
			size_t best = SIZE_MAX;
			for (size_t i = 0; i < p->nframes; i++)
				if (leaf[i] && i != t && (best == SIZE_MAX || leaf[i] > leaf[best]))
					best = i;
			if (best == SIZE_MAX || 1000.0 * (double)leaf[best] < all)
				break; /* under 0.1%: noise, not a top function */
			char sn[256];
			printf("%s %s %.1f%%", shown ? "," : "", short_name(p->frames[best].name, sn, sizeof sn),
			       100.0 * (double)leaf[best] / all);
			leaf[best] = 0;
		}
		putchar('\n');
	}
	free(tid);
	free(tsum);
	free(leaf);
	return rc;
}

int profile_print_table(const struct profiler *P)
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
	/* synthetic frames (threads, imports folded) are not functions, but
	 * "(idle)" is where --idle's waiting samples are: without its row the
	 * self column added up to 57% */
	for (size_t i = 0; i < p->nframes; i++)
		if (!p->frames[i].synthetic || !strcmp(p->frames[i].name, "(idle)"))
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
	if (P->o.threads && print_threads(p, P->o.top) < 0)
		return -1;
	/* libtorch's frames by the operator they dispatch (native, mixed) */
	struct pl_torch_op *ops;
	size_t nops;
	if (pl_torch_ops(p, &ops, &nops) < 0)
		return -1;
	if (nops)
		printf("\n  %6s  %8s  %s\n", "share", "samples",
		       "PyTorch operator (the innermost at::_ops frame of each sample)");
	for (size_t k = 0; k < nops && k < (size_t)P->o.top && ops[k].samples; k++)
		printf("  %5.1f%%  %8llu  %s\n", 100.0 * (double)ops[k].samples / all,
		       (unsigned long long)ops[k].samples, ops[k].name);
	free(ops);
	return 0;
}

/* py-spy's live line: samples, rate, elapsed time and errors, redrawn on
 * a terminal about four times a second (never into a pipe or file). */
void profile_live_line(struct profiler *P, int done)
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
	/* the rate the summary will say: ticks a second (a tick samples every
	 * thread, so samples a second ran ahead of it: 1,116/s live, then
	 * "875/s delivered") */
	fprintf(stderr, "\r\033[K  sampling: %llu samples, %.0f/s delivered, %.1f s, %zu errors",
		(unsigned long long)P->prof.samples, el > 0 ? (double)P->ticks / el : 0.0, el,
		P->stats.errors);
	fflush(stderr);
}

/* perfloop top: every second, the table so far, on a terminal redrawn in
 * place (the screen cleared first), into a pipe or file one after another. */
void profile_top_refresh(struct profiler *P)
{
	double now = pl_now_s();
	if (now - P->table_last < 1.0)
		return;
	P->table_last = now;
	double el = now - P->live_start;
	fputs(isatty(STDOUT_FILENO) ? "\033[H\033[2J" : "\n", stdout);
	printf("perfloop top: pid %d: %s\n  %llu samples, %.0f/s delivered, %.1f s, %zu errors "
	       "(Ctrl-C to stop)\n",
	       (int)P->t[0].pid, P->t[0].cmd, (unsigned long long)P->prof.samples,
	       el > 0 ? (double)P->ticks / el : 0.0, el, P->stats.errors);
	profile_print_table(P);
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

int profile_write_folded(const char *prefix, const char *ext, const struct pl_prof *prof,
			 struct pl_strbuf *names)
{
	return write_prof(prefix, ext, prof, &(struct pl_prof_out){.kind = PL_OUT_FOLDED}, names);
}

/* The flame graph without the frames narrower than 0.1 px at full width,
 * as flamegraph.pl and inferno draw by default: no one sees them, and a
 * million distinct stacks drew 2.1 GB of them (the folded and speedscope
 * files keep every stack). Nothing is left out under 23,600 samples. */
int profile_write_svg(const char *prefix, const char *ext, const struct pl_prof *prof,
		      const char *title, const char *subtitle, struct pl_strbuf *names)
{
	struct pl_prof_out how = {
	    .kind = PL_OUT_SVG, .title = title, .subtitle = subtitle, .min_px = 0.1};
	return write_prof(prefix, ext, prof, &how, names);
}

/* A JSON output, with the rank that wrote it (merge reads it back). */
int profile_write_doc(const struct opts *o, const char *ext, json_t *doc, struct pl_strbuf *names)
{
	if (doc)
		json_object_set_new(doc, "launch", pl_rank_json(&o->rank));
	return write_text(o->out, ext, doc ? pl_json_text(doc) : NULL, names);
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

int profile_write_outputs(struct profiler *P, const char *title, const char *cwd,
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
		rc = profile_write_folded(o->out, ".folded", &P->prof, &names);
	if (!rc && (o->formats & FMT_SVG))
		rc = profile_write_svg(o->out, ".svg", &P->prof, title, sub, &names);
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
		size_t before_env = f.n;
		if (frc >= 0)
			frc = pl_prof_env_findings(&P->prof, &f);
		if (frc >= 0)
			frc = pl_runq_findings(&P->runq, &f);
		for (size_t i = before_env; frc >= 0 && i < f.n; i++)
			printf("  ! %s (%s): %s\n", f.v[i].signal, f.v[i].leaf,
			       f.v[i].suggested_action);
		if (frc >= 0 && o->scan)
			frc = profile_scan_findings(P, cwd, &f);
		if (frc < 0) {
			pl_findings_release(&f);
			free(pl_strbuf_take(&names));
			return pl_die(PL_EXIT_INTERNAL, "out of memory");
		}
		char tool[64];
		snprintf(tool, sizeof tool, "perfloop profile %s", PERFLOOP_VERSION);
		json_t *doc = pl_findings_doc(tool, &f);
		pl_findings_release(&f);
		rc = profile_write_doc(o, ".findings.json", doc, &names);
		json_decref(doc);
	}
	if (!rc && o->gpu && o->formats) {
		json_t *doc = pl_gpu_to_json(&P->gpu);
		json_object_set_new(doc, "schema", json_string("perfloop.gpu/1"));
		rc = profile_write_doc(o, ".gpu.json", doc, &names);
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
			rc = profile_write_folded(o->out, ".memory.folded", &P->mem.growth, &names);
		if (!rc && (o->formats & FMT_SVG))
			rc = profile_write_svg(o->out, ".memory.svg", &P->mem.growth, mtitle, sub,
					       &names);
		if (!rc) {
			json_t *doc = pl_memtrack_json(
			    &P->mem, P->child_ru_set ? (double)P->child_ru.ru_maxrss * 1024 : -1,
			    title);
			rc = profile_write_doc(o, ".memory.json", doc, &names);
			json_decref(doc);
		}
	}
	if (!rc && steps && (o->formats & FMT_FINDINGS)) {
		json_t *doc = pl_steps_to_json(steps, title);
		if (doc)
			json_object_set_new(doc, "source", json_string("profile"));
		rc = profile_write_doc(o, ".steps.json", doc, &names);
		json_decref(doc);
	}
	char *list = pl_strbuf_take(&names);
	if (!rc && list && list[0])
		printf("\nwrote %s\n", list);
	free(list);
	return rc;
}

/* The launched command line ("pid N" for -p), for titles and headers. */
void profile_command_title(const struct opts *o, char *title, size_t size)
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
int profile_exit_status(const struct opts *o, const struct pl_ctx *ctx, int status)
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

