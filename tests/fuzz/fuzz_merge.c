/*
 * perfloop merge's inputs: the bytes as a bench summary (a .json rank
 * beside a well-formed one, so the checks between ranks run) or as a
 * profile's collapsed stacks with its findings file, per the first byte;
 * then the tables, the JSON document and the findings.
 */
#include "fuzz.h"

#include "findings.h"
#include "merge.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (size < 1)
		return 0;
	char a[128], b[128];
	int profile = data[0] & 1;
	pl_fuzz_path(a, sizeof a, profile ? "p.folded" : "a.json");
	pl_fuzz_path(b, sizeof b, profile ? "p.findings.json" : "b.json");
	if (pl_fuzz_write(a, data + 1, size - 1) < 0 || pl_fuzz_write(b, data + 1, size - 1) < 0)
		return 0;
	struct pl_merge m;
	pl_merge_init(&m);
	m.by_rank = data[0] & 2;
	struct pl_error err = {{0}};
	int rc = pl_merge_add(&m, a, &err);
	if (rc == 0 && !profile)
		rc = pl_merge_add(&m, b, &err);
	if (rc == 0)
		rc = pl_merge_run(&m, &err);
	if (rc == 0) {
		free(pl_merge_text(&m));
		json_decref(pl_merge_json(&m));
		struct pl_findings f = {0};
		pl_merge_findings(&m, &f);
		pl_findings_release(&f);
	}
	pl_merge_release(&m);
	unlink(a);
	unlink(b);
	return 0;
}
