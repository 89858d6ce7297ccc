/*
 * Every document `perfloop report` reads, as bytes: bench summaries,
 * findings, verdicts, ledgers (JSON lines), memory/GPU/steps series, merge
 * documents (dispatched on "schema") and intake cost models (YAML), then
 * rendered as text, Markdown and the HTML page. The first byte picks the
 * file's extension (.json or .yaml), the rest is the file.
 */
#include "fuzz.h"

#include "htmlreport.h"
#include "report.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (size < 1)
		return 0;
	char path[128];
	pl_fuzz_path(path, sizeof path, data[0] & 1 ? "in.yaml" : "in.json");
	if (pl_fuzz_write(path, data + 1, size - 1) < 0)
		return 0;
	struct pl_report_input in;
	pl_report_input_init(&in);
	struct pl_error err = {{0}};
	if (pl_report_add_file(&in, path, &err) == 0) {
		free(pl_report_render(&in, PL_REPORT_TEXT, PL_REPORT_FINDINGS));
		free(pl_report_render(&in, PL_REPORT_MD, PL_REPORT_REVIEW));
		free(pl_report_html(&in, NULL, 0));
	}
	pl_report_input_release(&in);
	unlink(path);
	return 0;
}
