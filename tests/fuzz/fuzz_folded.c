/*
 * Collapsed stacks (perfloop's, py-spy's, flamegraph.pl's, inferno's): read,
 * then written back as folded, speedscope, the SVG flame graph and its HTML
 * page, and its findings.
 */
#include "fuzz.h"

#include "findings.h"
#include "profdata.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char path[128];
	pl_fuzz_path(path, sizeof path, "in.folded");
	if (pl_fuzz_write(path, data, size) < 0)
		return 0;
	struct pl_prof p = {0};
	struct pl_error err = {{0}};
	if (pl_prof_read_folded(path, &p, &err) == 0) {
		free(pl_prof_folded(&p));
		free(pl_prof_speedscope(&p, "fuzz", "fuzz"));
		free(pl_prof_svg(&p, "fuzz", "sub"));
		free(pl_prof_html_page(&p, "fuzz", "sub"));
		struct pl_findings f = {0};
		pl_prof_findings(&p, 0.05, 20, 100, "/tmp", &f);
		pl_findings_release(&f);
	}
	pl_prof_release(&p);
	unlink(path);
	return 0;
}
