/*
 * The native symbolizer's map of a process. Unmapping leaves no perf record,
 * so a library unloaded (dlclose) is known gone only when another is mapped
 * where its file lay: Open MPI loads and drops dozens of components in
 * MPI_Init, and the stale module there cut every stack through the new one
 * (t119). Real libraries of this process at made-up addresses; and the whole
 * real map of this process, where nothing may be taken for gone.
 */
#include "testutil.h"

#include <fcntl.h>
#include <gelf.h>
#include <string.h>
#include <unistd.h>

#include "native.h"
#include "profdata.h"

struct seg {
	uint64_t vaddr, offset, filesz;
};

/* a library's executable PT_LOAD and its last PT_LOAD */
static int segments(const char *path, struct seg *exec, struct seg *last)
{
	int fd = open(path, O_RDONLY);
	if (fd < 0)
		return -1;
	elf_version(EV_CURRENT);
	Elf *e = elf_begin(fd, ELF_C_READ, NULL);
	size_t n = 0;
	int found = 0;
	if (e && elf_getphdrnum(e, &n) == 0)
		for (size_t i = 0; i < n; i++) {
			GElf_Phdr ph;
			if (!gelf_getphdr(e, (int)i, &ph) || ph.p_type != PT_LOAD)
				continue;
			struct seg s = {ph.p_vaddr, ph.p_offset, ph.p_filesz};
			if ((ph.p_flags & PF_X) && !found) {
				*exec = s;
				found = 1;
			}
			*last = s;
		}
	if (e)
		elf_end(e);
	close(fd);
	return found ? 0 : -1;
}

/* the path of a library this process has mapped whose name has needle */
static int mapped_library(const char *needle, char *out, size_t cap)
{
	FILE *f = fopen("/proc/self/maps", "r");
	char line[4600];
	int ok = 0;
	while (f && !ok && fgets(line, sizeof line, f)) {
		char *path = strchr(line, '/');
		if (!path || !strstr(line, " r-xp "))
			continue;
		path[strcspn(path, "\n")] = '\0';
		const char *base = strrchr(path, '/') + 1;
		if (strstr(base, needle)) {
			snprintf(out, cap, "%s", path);
			ok = 1;
		}
	}
	if (f)
		fclose(f);
	return ok ? 0 : -1;
}

static enum pl_native_kind kind_at(struct pl_native_syms *s, uint64_t pc)
{
	const uint32_t *ids;
	enum pl_native_kind kind = PL_NATIVE_UNMAPPED;
	pl_native_pc_frames(s, getpid(), pc, &ids, &kind);
	return kind;
}

#define PAGE(x) ((x) & ~0xfffULL)
#define PAGE_UP(x) PAGE((x) + 0xfff)

static void a_library_loaded_where_another_lay_replaces_it(void **state)
{
	(void)state;
	char a[4096], b[4096];
	struct seg ax, alast, bx, blast;
	if (mapped_library("libelf", a, sizeof a) || mapped_library("libz", b, sizeof b) ||
	    segments(a, &ax, &alast) || segments(b, &bx, &blast))
		skip();
	assert_true(alast.vaddr > ax.vaddr); /* data after code, as ld lays it out */
	const uint64_t X = 0x7f0000000000ULL;
	uint64_t as = X + PAGE(ax.vaddr), ae = X + PAGE_UP(ax.vaddr + ax.filesz);
	/* b's code where a's data was: a must have been unloaded first */
	uint64_t Y = X + PAGE(alast.vaddr) - PAGE(bx.vaddr);
	uint64_t bs = Y + PAGE(bx.vaddr), be = Y + PAGE_UP(bx.vaddr + bx.filesz);
	assert_true(bs >= ae);
	char maps[9000];
	int n1 = snprintf(maps, sizeof maps, "%llx-%llx r-xp %08llx 00:00 1 %s\n",
			  (unsigned long long)as, (unsigned long long)ae,
			  (unsigned long long)PAGE(ax.offset), a);
	int n2 = snprintf(maps + n1, sizeof maps - (size_t)n1, "%llx-%llx r-xp %08llx 00:00 1 %s\n",
			  (unsigned long long)bs, (unsigned long long)be,
			  (unsigned long long)PAGE(bx.offset), b);

	struct pl_prof p = {0};
	struct pl_native_syms *s = pl_native_syms_new(&p, 0);
	assert_non_null(s);
	pl_native_syms_maps_text(s, getpid(), maps, (size_t)n1); /* a alone */
	assert_int_equal(kind_at(s, (as + ae) / 2), PL_NATIVE_OTHER);
	assert_int_equal(kind_at(s, (bs + be) / 2), PL_NATIVE_UNMAPPED);
	pl_native_syms_maps_text(s, getpid(), maps, (size_t)(n1 + n2)); /* a, then b over it */
	assert_int_equal(kind_at(s, (bs + be) / 2), PL_NATIVE_OTHER);
	assert_int_equal(kind_at(s, (as + ae) / 2), PL_NATIVE_UNMAPPED);
	/* b first, then a where b's code lies: a's span meets b's code */
	char rev[9000];
	snprintf(rev, sizeof rev, "%s%.*s", maps + n1, n1, maps);
	pl_native_syms_maps_text(s, getpid(), rev, (size_t)(n1 + n2));
	assert_int_equal(kind_at(s, (as + ae) / 2), PL_NATIVE_OTHER);
	assert_int_equal(kind_at(s, (bs + be) / 2), PL_NATIVE_UNMAPPED);
	pl_native_syms_free(s);
	pl_prof_release(&p);
}

/* anonymous executable memory inside a file's data (a program may make
 * part of its own data executable): the file stays */
static void anonymous_code_in_a_files_data_drops_nothing(void **state)
{
	(void)state;
	char a[4096];
	struct seg ax, alast;
	if (mapped_library("libelf", a, sizeof a) || segments(a, &ax, &alast))
		skip();
	const uint64_t X = 0x7f0000000000ULL;
	uint64_t as = X + PAGE(ax.vaddr), ae = X + PAGE_UP(ax.vaddr + ax.filesz);
	uint64_t js = X + PAGE(alast.vaddr);
	char maps[9000];
	int n = snprintf(maps, sizeof maps,
			 "%llx-%llx r-xp %08llx 00:00 1 %s\n%llx-%llx rwxp 00000000 00:00 0 \n",
			 (unsigned long long)as, (unsigned long long)ae,
			 (unsigned long long)PAGE(ax.offset), a, (unsigned long long)js,
			 (unsigned long long)(js + 0x1000));
	struct pl_prof p = {0};
	struct pl_native_syms *s = pl_native_syms_new(&p, 0);
	assert_non_null(s);
	pl_native_syms_maps_text(s, getpid(), maps, (size_t)n);
	assert_int_equal(kind_at(s, (as + ae) / 2), PL_NATIVE_OTHER);
	assert_int_equal(kind_at(s, js + 0x800), PL_NATIVE_OTHER);
	pl_native_syms_free(s);
	pl_prof_release(&p);
}

static void every_mapping_of_a_real_process_stays(void **state)
{
	(void)state;
	struct pl_prof p = {0};
	struct pl_native_syms *s = pl_native_syms_new(&p, 0);
	assert_non_null(s);
	pl_native_syms_maps(s, getpid());
	FILE *f = fopen("/proc/self/maps", "r");
	assert_non_null(f);
	char line[4600];
	size_t checked = 0;
	while (fgets(line, sizeof line, f)) {
		unsigned long long lo, hi;
		char perms[8];
		if (sscanf(line, "%llx-%llx %7s", &lo, &hi, perms) != 3 || perms[2] != 'x' ||
		    !strchr(line, '/'))
			continue;
		if (kind_at(s, lo + (hi - lo) / 2) == PL_NATIVE_UNMAPPED)
			fail_msg("taken for gone: %s", line);
		checked++;
	}
	fclose(f);
	assert_true(checked >= 5); /* the test, libc, ld.so, libelf, libdw at least */
	pl_native_syms_free(s);
	pl_prof_release(&p);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(a_library_loaded_where_another_lay_replaces_it),
	    cmocka_unit_test(anonymous_code_in_a_files_data_drops_nothing),
	    cmocka_unit_test(every_mapping_of_a_real_process_stays),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
