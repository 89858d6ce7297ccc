/*
 * Shared by the libFuzzer targets (tests/fuzz/fuzz_*.c, built by
 * `make fuzz`): perfloop's readers take paths, so each input is written to
 * a file of the target's own under /tmp (named with the extension the
 * reader dispatches on) and read back from there.
 */
#ifndef PL_FUZZ_H
#define PL_FUZZ_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* path of this process's scratch file NAME (a static buffer per call site
 * is enough: one input at a time) */
static inline const char *pl_fuzz_path(char *buf, size_t len, const char *name)
{
	snprintf(buf, len, "/tmp/perfloop-fuzz-%d-%s", (int)getpid(), name);
	return buf;
}

/* data[0..size) written to path; 0, or -1 when it cannot be */
static inline int pl_fuzz_write(const char *path, const uint8_t *data, size_t size)
{
	FILE *f = fopen(path, "wb");
	if (!f)
		return -1;
	int ok = fwrite(data, 1, size, f) == size;
	return fclose(f) == 0 && ok ? 0 : -1;
}

#endif
