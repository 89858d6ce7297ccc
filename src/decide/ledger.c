/*
 * Atomic ledger appends (see ledger.h). Copy-and-rename costs a read of the
 * whole ledger per verdict; ledgers grow by one line per change a person or
 * an agent tried, so they stay small, and the guarantee is worth the copy.
 * The lock is flock(2) on the ledger's directory, never the ledger itself
 * (it is replaced by rename), and never a lock file that would litter the
 * user's tree.
 *
 * PERFLOOP_FAULT_LEDGER_STALL=1 makes an append stop for 30 s half-way
 * through writing the temporary file; tests use it to kill the process
 * mid-write and check that the ledger is intact.
 */
#include "ledger.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include "fsio.h"

struct appended {
	const char *old, *line;
	size_t oldlen, linelen; /* linelen counts the newline */
};

static int write_appended(int fd, void *ctx)
{
	const struct appended *a = ctx;
	if (a->old && pl_fsio_write_all(fd, a->old, a->oldlen) != 0)
		return -1;
	const char *stall = getenv("PERFLOOP_FAULT_LEDGER_STALL");
	if (stall && strcmp(stall, "1") == 0) {
		size_t half = a->linelen / 2;
		if (pl_fsio_write_all(fd, a->line, half) != 0)
			return -1;
		fsync(fd);
		sleep(30);
		return pl_fsio_write_all(fd, a->line + half, a->linelen - half);
	}
	return pl_fsio_write_all(fd, a->line, a->linelen);
}

int pl_ledger_append(const char *path, json_t *entry, struct pl_error *err)
{
	char *line = json_dumps(entry, JSON_COMPACT | JSON_REAL_PRECISION(12));
	if (!line)
		return PL_ENOMEM;
	size_t plen = strlen(path);
	char *lockp = malloc(plen + 2);
	int rc = PL_OK, lockfd = -1;
	char *old = NULL;
	if (!lockp) {
		rc = PL_ENOMEM;
		goto out;
	}
	/* lock the directory: a lock file would litter the user's tree */
	snprintf(lockp, plen + 2, "%s", path);
	char *slash = strrchr(lockp, '/');
	if (slash)
		*(slash == lockp ? slash + 1 : slash) = '\0';
	else
		snprintf(lockp, plen + 2, ".");
	lockfd = open(lockp, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (lockfd < 0 || flock(lockfd, LOCK_EX) != 0) {
		rc = pl_error_set(err, PL_EINPUT, "cannot lock the directory of '%s': %s", path,
				  strerror(errno));
		goto out;
	}
	size_t len;
	int missing;
	old = pl_fsio_read(path, &len, &missing);
	if (!old && !missing) {
		rc = pl_error_set(err, PL_EINPUT, "cannot read '%s': %s", path, strerror(errno));
		goto out;
	}
	if (old && len > 0 && old[len - 1] != '\n') {
		rc = pl_error_set(err, PL_EINPUT,
				  "%s: the last line is incomplete (not written by perfloop?); "
				  "fix the file before appending",
				  path);
		goto out;
	}
	size_t llen = strlen(line);
	line[llen] = '\n'; /* json_dumps leaves room: we wrote over its NUL */
	struct appended a = {old, line, old ? len : 0, llen + 1};
	/* a temporary of a name no one can have chosen (O_EXCL), beside the
	 * ledger's final file, with its mode: see fsio.h */
	rc = pl_fsio_write_atomic_with(path, write_appended, &a, err);
out:
	if (lockfd >= 0)
		close(lockfd); /* releases the lock */
	free(old);
	free(lockp);
	free(line);
	return rc;
}
