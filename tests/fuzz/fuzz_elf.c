/*
 * The ELF and DWARF readers given arbitrary bytes as a file: the compiler
 * note (fingerprint), the _PyRuntime lookup (attaching to CPython), and the
 * native symbolizer and CFI unwinder (profile --mode native/mixed, --alloc)
 * with the file mapped into a made-up process: every 64th byte's address
 * symbolized, then one unwind from a register set and a stack taken from
 * the input itself (the unwinder reads memory only from that copy).
 */
#include "fuzz.h"

#include "fingerprint.h"
#include "native.h"
#include "pyproc.h"
#include "profdata.h"

#define BASE 0x400000ULL

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char path[128];
	pl_fuzz_path(path, sizeof path, "lib.so");
	if (pl_fuzz_write(path, data, size) < 0)
		return 0;
	char comp[256];
	pl_elf_compiler(path, comp, sizeof comp);
	uint64_t runtime;
	pl_pyproc_elf_runtime(path, &runtime);

	struct pl_prof p = {0};
	struct pl_native_syms *s = pl_native_syms_new(&p, size > 0 && (data[0] & 1));
	if (!s)
		return 0;
	pid_t pid = getpid();
	uint64_t len = (size + 0xfff) & ~0xfffULL;
	if (len == 0)
		len = 0x1000;
	char maps[512];
	/* two mappings of the file, as the loader makes them: the second one
	 * executable at an offset */
	int n = snprintf(maps, sizeof maps,
			 "%llx-%llx r--p 00000000 00:00 1 %s\n%llx-%llx r-xp 00000000 00:00 1 %s\n",
			 (unsigned long long)BASE, (unsigned long long)(BASE + len), path,
			 (unsigned long long)(BASE + len), (unsigned long long)(BASE + 2 * len), path);
	pl_native_syms_maps_text(s, pid, maps, (size_t)n);
	for (uint64_t off = 0; off < len && off < 64 * 64; off += 64) {
		const uint32_t *ids;
		enum pl_native_kind kind;
		pl_native_pc_frames(s, pid, BASE + len + off, &ids, &kind);
		pl_native_is_entry(s, pid, BASE + len + off);
	}
	uint64_t regs[17] = {0};
	for (int i = 0; i < 17 && (size_t)(i + 1) * 8 <= size; i++)
		memcpy(&regs[i], data + (size - (size_t)(i + 1) * 8), 8);
	regs[16] = BASE + len + (regs[16] % len); /* rip inside the code */
	regs[7] = 0x7ff000000000ULL;		  /* rsp: the copy's start */
	uint64_t pcs[64];
	size_t k = pl_native_unwind(s, pid, pid, regs, data, size, pcs, 64);
	for (size_t i = 0; i < k; i++) {
		const uint32_t *ids;
		enum pl_native_kind kind;
		pl_native_pc_frames(s, pid, pcs[i], &ids, &kind);
	}
	pl_native_syms_free(s);
	pl_prof_release(&p);
	unlink(path);
	return 0;
}
