/*
 * perfloop.yaml: the benchmarks' spec file (libyaml underneath, our
 * reading of its events above), then each benchmark's commands expanded.
 */
#include "fuzz.h"

#include "spec.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char path[128];
	pl_fuzz_path(path, sizeof path, "perfloop.yaml");
	if (pl_fuzz_write(path, data, size) < 0)
		return 0;
	struct pl_spec s;
	struct pl_error err = {{0}};
	if (pl_spec_load(path, &s, &err) == 0) {
		for (size_t i = 0; i < s.nbench; i++) {
			struct pl_argv args = {0}, cmds = {0}, names = {0};
			if (pl_spec_bench_args(&s.bench[i], &args) == 0)
				pl_argv_release(&args);
			if (pl_spec_commands(&s.bench[i], &cmds, &names, &err) == 0) {
				pl_argv_release(&cmds);
				pl_argv_release(&names);
			}
		}
		pl_spec_release(&s);
	}
	unlink(path);
	return 0;
}
