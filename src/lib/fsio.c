/*
 * Atomic file writes (see fsio.h). The temporary file lives beside the
 * target so that rename(2) stays within one file system, and is removed if
 * anything fails, so a failed write leaves the old file as it was.
 */
#include "fsio.h"

#include <errno.h>
#include <fcntl.h>
#include <libgen.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

int pl_fsio_write_all(int fd, const void *buf, size_t len)
{
	const char *p = buf;
	while (len > 0) {
		ssize_t w = write(fd, p, len);
		if (w < 0 && errno == EINTR)
			continue;
		if (w < 0)
			return -1;
		p += w;
		len -= (size_t)w;
	}
	return 0;
}

void pl_fsio_sync_dir(const char *path)
{
	char *dcopy = strdup(path);
	if (!dcopy)
		return;
	int dfd = open(dirname(dcopy), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (dfd >= 0) {
		fsync(dfd);
		close(dfd);
	}
	free(dcopy);
}

int pl_json_load(const char *path, json_t **out, struct pl_error *err)
{
	json_error_t jerr;
	*out = json_load_file(path, JSON_REJECT_DUPLICATES, &jerr);
	if (*out)
		return PL_OK;
	if (jerr.line <= 0)
		return pl_error_set(err, PL_EINPUT, "%s: %s", path, jerr.text);
	return pl_error_set(err, PL_EINPUT, "%s:%d:%d: %s", path, jerr.line, jerr.column,
			    jerr.text);
}

int pl_fsio_write_atomic(const char *path, const void *data, size_t len, struct pl_error *err)
{
	size_t plen = strlen(path);
	char *tmp = malloc(plen + 16);
	if (!tmp)
		return PL_ENOMEM;
	snprintf(tmp, plen + 16, "%s.tmp.XXXXXX", path);
	int fd = mkstemp(tmp);
	if (fd < 0) {
		int e = errno;
		free(tmp);
		return pl_error_set(err, PL_EINPUT, "cannot write '%s': %s", path, strerror(e));
	}
	fchmod(fd, 0644);
	if (pl_fsio_write_all(fd, data, len) != 0)
		goto fail;
	if (fsync(fd) != 0)
		goto fail;
	if (close(fd) != 0) {
		fd = -1;
		goto fail;
	}
	fd = -1;
	if (rename(tmp, path) != 0)
		goto fail;
	pl_fsio_sync_dir(path);
	free(tmp);
	return PL_OK;
fail:;
	int e = errno;
	if (fd >= 0)
		close(fd);
	unlink(tmp);
	free(tmp);
	return pl_error_set(err, PL_EINPUT, "cannot write '%s': %s", path, strerror(e));
}

char *pl_json_text(json_t *doc)
{
	char *text = json_dumps(doc, JSON_INDENT(1) | JSON_REAL_PRECISION(12));
	if (!text)
		return NULL;
	size_t len = strlen(text);
	char *withnl = realloc(text, len + 2);
	if (!withnl) {
		free(text);
		return NULL;
	}
	withnl[len] = '\n';
	withnl[len + 1] = '\0';
	return withnl;
}

int pl_fsio_write_json(const char *path, json_t *doc, struct pl_error *err)
{
	char *text = pl_json_text(doc);
	if (!text)
		return PL_ENOMEM;
	int rc = pl_fsio_write_atomic(path, text, strlen(text), err);
	free(text);
	return rc;
}
