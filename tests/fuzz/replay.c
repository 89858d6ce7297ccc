/*
 * The fuzz targets without libFuzzer: main() feeds each file named on the
 * command line (or each file of each directory) to LLVMFuzzerTestOneInput
 * once. CTest runs it over tests/fuzz/corpus/TARGET and crashes/TARGET in
 * the ordinary and the ASan builds, so every input that once crashed stays
 * a regression test without clang.
 */
#include <dirent.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static int one(const char *path)
{
	FILE *f = fopen(path, "rb");
	if (!f) {
		fprintf(stderr, "replay: cannot read %s\n", path);
		return 1;
	}
	uint8_t *buf = NULL;
	size_t len = 0, cap = 0, n;
	do {
		if (len == cap) {
			cap = cap ? 2 * cap : 65536;
			uint8_t *b = realloc(buf, cap);
			if (!b) {
				fclose(f);
				free(buf);
				return 1;
			}
			buf = b;
		}
		n = fread(buf + len, 1, cap - len, f);
		len += n;
	} while (n > 0);
	fclose(f);
	LLVMFuzzerTestOneInput(buf, len);
	free(buf);
	return 0;
}

int main(int argc, char **argv)
{
	int rc = 0, count = 0;
	for (int i = 1; i < argc; i++) {
		struct stat st;
		if (stat(argv[i], &st) != 0)
			continue; /* a directory not made yet: nothing to replay */
		if (!S_ISDIR(st.st_mode)) {
			rc |= one(argv[i]);
			count++;
			continue;
		}
		DIR *d = opendir(argv[i]);
		struct dirent *e;
		while (d && (e = readdir(d))) {
			if (e->d_name[0] == '.')
				continue;
			char p[4096];
			snprintf(p, sizeof p, "%s/%s", argv[i], e->d_name);
			rc |= one(p);
			count++;
		}
		if (d)
			closedir(d);
	}
	printf("replayed %d inputs\n", count);
	return rc;
}
