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

int pl_ledger_append(const char *path, json_t *entry, struct pl_error *err)
{
	char *line = json_dumps(entry, JSON_COMPACT | JSON_REAL_PRECISION(12));
	if (!line)
		return PL_ENOMEM;
	size_t plen = strlen(path);
	char *lockp = malloc(plen + 8), *tmp = malloc(plen + 8);
	int rc = PL_OK, lockfd = -1, fd = -1;
	char *old = NULL;
	if (!lockp || !tmp) {
		rc = PL_ENOMEM;
		goto out;
	}
	/* lock the directory: a lock file would litter the user's tree */
	snprintf(lockp, plen + 8, "%s", path);
	char *slash = strrchr(lockp, '/');
	if (slash)
		*(slash == lockp ? slash + 1 : slash) = '\0';
	else
		snprintf(lockp, plen + 8, ".");
	snprintf(tmp, plen + 8, "%s.tmp", path);
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
	fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	if (fd < 0)
		goto sys_fail;
	size_t llen = strlen(line);
	line[llen] = '\n'; /* json_dumps leaves room: we wrote over its NUL */
	if (old && pl_fsio_write_all(fd, old, len) != 0)
		goto sys_fail;
	const char *stall = getenv("PERFLOOP_FAULT_LEDGER_STALL");
	if (stall && strcmp(stall, "1") == 0) {
		if (pl_fsio_write_all(fd, line, llen / 2) != 0)
			goto sys_fail;
		fsync(fd);
		sleep(30);
		if (pl_fsio_write_all(fd, line + llen / 2, llen + 1 - llen / 2) != 0)
			goto sys_fail;
	} else if (pl_fsio_write_all(fd, line, llen + 1) != 0) {
		goto sys_fail;
	}
	if (fsync(fd) != 0 || close(fd) != 0) {
		fd = -1;
		goto sys_fail;
	}
	fd = -1;
	if (rename(tmp, path) != 0)
		goto sys_fail;
	pl_fsio_sync_dir(path);
	goto out;
sys_fail:
	rc = pl_error_set(err, PL_EINPUT, "cannot append to '%s': %s", path, strerror(errno));
	if (fd >= 0)
		close(fd);
	unlink(tmp);
out:
	if (lockfd >= 0)
		close(lockfd); /* releases the lock */
	free(old);
	free(lockp);
	free(tmp);
	free(line);
	return rc;
}
