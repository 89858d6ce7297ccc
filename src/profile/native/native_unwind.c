/*
 * The native profiler's DWARF unwinder, as `perf record --call-graph
 * dwarf` does it: libdw's CFI unwinder walks a sample's copy of the user
 * registers and the top of its stack. Each process has a libdwfl Dwfl with
 * every mapped module reported at its address, kept up to date with its
 * maps; libdw's thread callbacks read registers and memory from the sample
 * (struct unw), never from the live process. Private to the native
 * profiler (native_int.h).
 */
#include "native_int.h"

#include <elfutils/libdwfl.h>
#include <string.h>

/* ---- unwinding ---- */

int pl_native_frame_cb(Dwfl_Frame *state, void *arg)
{
	struct unw *u = arg;
	Dwarf_Addr pc;
	bool act;
	if (!dwfl_frame_pc(state, &pc, &act))
		return DWARF_CB_ABORT;
	if (u->n >= u->max)
		return DWARF_CB_ABORT;
	u->pcs[u->n] = act || u->n == 0 ? pc : pc - 1;
	u->n++;
	return DWARF_CB_OK;
}

static pid_t cb_next_thread(Dwfl *dwfl, void *arg, void **thread_argp)
{
	(void)dwfl;
	struct unw *u = arg;
	if (*thread_argp)
		return 0;
	*thread_argp = u;
	return u->tid;
}

static bool cb_get_thread(Dwfl *dwfl, pid_t tid, void *arg, void **thread_argp)
{
	(void)dwfl;
	(void)tid;
	*thread_argp = arg;
	return true;
}

static bool cb_memory_read(Dwfl *dwfl, Dwarf_Addr addr, Dwarf_Word *result, void *arg)
{
	(void)dwfl;
	struct unw *u = arg;
	if (addr < u->sp || u->stack_len < sizeof(*result) ||
	    addr - u->sp > u->stack_len - sizeof(*result))
		return false;
	memcpy(result, u->stack + (addr - u->sp), sizeof(*result));
	return true;
}

static bool cb_set_initial_registers(Dwfl_Thread *thread, void *arg)
{
	struct unw *u = arg;
	Dwarf_Word regs[17];
	for (int i = 0; i < 17; i++)
		regs[i] = u->regs[i];
	return dwfl_thread_state_registers(thread, 0, 17, regs);
}

static const Dwfl_Thread_Callbacks thread_cb = {
    .next_thread = cb_next_thread,
    .get_thread = cb_get_thread,
    .memory_read = cb_memory_read,
    .set_initial_registers = cb_set_initial_registers,
};

/* Bring the process's unwinding Dwfl up to date with its maps. */
int pl_native_proc_dwfl(struct nat *N, struct nproc *p)
{
	if (p->dwfl && !p->dirty)
		return 0;
	if (p->dwfl && p->stale) {
		/* a module gone: begin again (libdwfl cannot take a module back,
		 * nor be told again of one it has when it opens the file anew) */
		dwfl_end(p->dwfl);
		p->dwfl = NULL;
		p->attached = 0;
	}
	p->stale = 0;
	if (!p->dwfl) {
		p->dwfl = dwfl_begin(&pl_native_proc_cb);
		if (!p->dwfl)
			return -1;
		for (size_t i = 0; i < p->n; i++)
			p->maps[i].reported = 0;
		dwfl_report_begin(p->dwfl);
	} else {
		dwfl_report_begin_add(p->dwfl);
	}
	for (size_t i = 0; i < p->n; i++) {
		struct nmap *m = &p->maps[i];
		if (m->reported || m->file < 0)
			continue;
		m->reported = 1;
		struct nfile *f = &N->files[m->file];
		pl_native_file_load(f);
		uint64_t base = pl_native_map_bias(f, m);
		/* a file with two executable mappings is one module (asking the
		 * Dwfl which module covers an address while modules are being
		 * reported answers from a stale table: it once hid libblas
		 * behind libonnx) */
		int dup = 0;
		for (size_t j = 0; j < p->n && !dup; j++)
			dup = j < i && p->maps[j].file == m->file && p->maps[j].reported &&
			      pl_native_map_bias(f, &p->maps[j]) == base;
		if (!dup)
			dwfl_report_elf(p->dwfl, f->name, f->path, -1, base, false);
	}
	dwfl_report_end(p->dwfl, NULL, NULL);
	p->dirty = 0;
	if (!p->attached) {
		if (!dwfl_attach_state(p->dwfl, NULL, p->pid, &thread_cb, &N->u))
			return -1;
		p->attached = 1;
	}
	return 0;
}
