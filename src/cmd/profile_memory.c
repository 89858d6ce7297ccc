/*
 * perfloop profile's memory, beside profile/memory/ and memtrack: --memory
 * (each process's RSS read at every tick, its rises charged to the stack
 * sampled then; the summary lines) and --alloc (the program run with the
 * allocation sampler preloaded, its files read back into flame graphs, the
 * sites' table and PREFIX.alloc.json).
 */
#include "profile_int.h"

#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "allocprof.h"
#include "launch.h"
#include "monotime.h"
#include "render.h"
#include "spawn.h"

/* --memory's lines: the peak (sampled, and the kernel's for a launched
 * program), the growth and how much of it a stack was charged with, and
 * the innermost frames running at the peak. */
void profile_print_memory(struct profiler *P)
{
	const struct pl_memtrack *m = &P->mem;
	char peak[32], hwm[32], grown[32];
	pl_fmt_bytes(peak, sizeof peak, m->peak_rss);
	pl_fmt_bytes(grown, sizeof grown, m->grown);
	printf("  memory: RSS peak %s sampled at %.2f s", peak, m->peak_t);
	if (P->child_ru_set) {
		pl_fmt_bytes(hwm, sizeof hwm, (double)P->child_ru.ru_maxrss * 1024);
		printf(" (the kernel's high-water mark: %s)", hwm);
	}
	printf("; it grew %s in all, %.0f%% of that charged to a %sstack\n", grown,
	       m->grown > 0 ? 100 * m->charged / m->grown : 0.0,
	       P->o.mode == MODE_PYTHON ? "Python " : "");
	double churn = pl_memtrack_churn(m);
	if (m->grown > 0 && churn >= 0.5 * m->grown) {
		/* rises given back again before the peak: a temporary's churn,
		 * which the growth graph charges to where it rose, not memory
		 * retained */
		char c[32], held[32];
		pl_fmt_bytes(c, sizeof c, churn);
		pl_fmt_bytes(held, sizeof held, m->grown - churn);
		printf("    RSS churn: %s of that growth was given back (%.0f%%), %s held at the "
		       "peak: the growth graph shows where temporaries rose, not what was "
		       "retained\n",
		       c, 100 * churn / m->grown, held);
	}
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
int profile_memory_tick(struct profiler *P, struct target *t)
{
	double rss = pl_memtrack_rss(t->pid, &t->statm_fd);
	if (!(rss > 0))
		return 0;
	P->mtotal += rss;
	int rc = 0;
	if (t->rss_last > 0 && rss > t->rss_last)
		rc = pl_memtrack_charge(&P->mem, &P->prof, P->mstack, P->mhave ? P->mdepth : 0,
					rss - t->rss_last);
	else if (t->rss_last > 0)
		pl_memtrack_release_bytes(&P->mem, t->rss_last - rss);
	t->rss_last = rss;
	return rc;
}

/* --memory, after a tick: the followed processes' PSS and USS when a
 * reading is due (smaps_rollup costs a page-table walk: 4 a second) */
int profile_memory_rollup(struct profiler *P, double t)
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
int profile_alloc(struct profiler *P, const struct pl_ctx *ctx, const char *cwd)
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
	profile_command_title(o, title, sizeof title);
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
	/* each file from the measure its name says (pl_alloc_profile's 1 is
	 * live at exit, 2 live at the peak: .alloc-peak once held the exit's
	 * and was empty for a Python program, whose exit frees everything) */
	static const char *const what[] = {"allocated", "live at the peak", "live at exit"};
	static const char *const ext[] = {".alloc", ".alloc-peak", ".alloc-exit"};
	static const int measure[] = {PL_ALLOC_ALLOCATED, PL_ALLOC_LIVE_PEAK, PL_ALLOC_LIVE_END};
	for (int w = 0; w < 3 && rc == 0 && o->formats; w++) {
		struct pl_prof pr;
		if (pl_alloc_profile(&a, measure[w], &pr) != 0) {
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
			rc = profile_write_folded(o->out, f, &pr, &names);
		}
		if (!rc && (o->formats & FMT_SVG)) {
			snprintf(f, sizeof f, "%s.svg", ext[w]);
			rc = profile_write_svg(o->out, f, &pr, t, sub, &names);
		}
		pl_prof_release(&pr);
	}
	if (!rc && o->formats) {
		json_t *doc = pl_alloc_json(&a, title, (size_t)o->top);
		rc = profile_write_doc(o, ".alloc.json", doc, &names);
		json_decref(doc);
	}
	if (!rc && names.len)
		printf("\nwrote %s\n", names.s);
	free(names.s);
	pl_alloc_release(&a);
	if (rc)
		return rc;
	return profile_exit_status(o, ctx, status);
}

