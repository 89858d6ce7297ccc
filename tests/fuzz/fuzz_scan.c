/*
 * The scanner on source in any state: the bytes as a Python file or a C
 * file (the first byte picks), parsed by tree-sitter and matched by every
 * rule, advisory ones too, with scan's own matcher and the query cursor,
 * and (a third bit) judged as a whole project: the pass for code nothing
 * calls reads its definitions, imports and identifiers.
 */
#include "fuzz.h"

#include "scan.h"

static struct pl_rules rules;
static int loaded;

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (size < 1)
		return 0;
	struct pl_error err = {{0}};
	if (!loaded) {
		if (pl_rules_load(&rules, &err) < 0)
			abort();
		loaded = 1;
	}
	char path[128];
	pl_fuzz_path(path, sizeof path, data[0] & 1 ? "in.c" : "in.py");
	if (pl_fuzz_write(path, data + 1, size - 1) < 0)
		return 0;
	struct pl_scan_opts o = {.advisory = 1,
				 .matcher = data[0] & 2 ? PL_MATCH_CURSOR : PL_MATCH_AUTO,
				 .whole = (data[0] & 4) != 0};
	const char *paths[] = {path};
	struct pl_scan_file *out = NULL;
	if (pl_scan_files(&rules, &o, NULL, paths, 1, 1, &out, NULL, &err) == 0) {
		pl_scan_file_release(&out[0]);
		free(out);
	}
	unlink(path);
	return 0;
}
