/*
 * tracefs (see tracefs.h): ids read from ROOT/events/EV/id; the mount, as
 * perf does it, only where tracefs is absent and this process may mount
 * (root), and undone at once for a caller that needs only the ids.
 */
#include "tracefs.h"

#include <stdio.h>
#include <sys/mount.h>

int pl_tracefs_id(const char *root, const char *ev)
{
	char p[512];
	snprintf(p, sizeof p, "%s/events/%s/id", root, ev);
	FILE *f = fopen(p, "r");
	if (!f)
		return -1;
	int id = -1;
	if (fscanf(f, "%d", &id) != 1)
		id = -1;
	fclose(f);
	return id;
}

int pl_syscall_tracepoints(int *enter, int *leave, const char **root, int *mounted,
			   struct pl_error *err)
{
	static const char *const roots[] = {"/sys/kernel/tracing", "/sys/kernel/debug/tracing"};
	*enter = *leave = -1;
	if (mounted)
		*mounted = 0;
	for (size_t i = 0; i < 2 && (*enter < 0 || *leave < 0); i++) {
		*enter = pl_tracefs_id(roots[i], "raw_syscalls/sys_enter");
		*leave = pl_tracefs_id(roots[i], "raw_syscalls/sys_exit");
		if (root)
			*root = roots[i];
	}
	/* not mounted: as perf does, mount it where permitted (root) */
	if ((*enter < 0 || *leave < 0) &&
	    mount("nodev", roots[0], "tracefs", MS_NOSUID | MS_NODEV | MS_NOEXEC, NULL) == 0) {
		if (root)
			*root = roots[0];
		if (mounted)
			*mounted = 1;
		*enter = pl_tracefs_id(roots[0], "raw_syscalls/sys_enter");
		*leave = pl_tracefs_id(roots[0], "raw_syscalls/sys_exit");
		/* a caller that needs only the ids (bench's counter) leaves
		 * nothing mounted behind it; the others unmount when done */
		if (!mounted)
			umount2(roots[0], MNT_DETACH);
	}
	if (*enter < 0 || *leave < 0)
		return pl_error_set(err, PL_EINPUT,
				    "--syscalls: the raw_syscalls tracepoints are not readable (tracefs "
				    "is not mounted, or not readable by this user): as root, 'mount -t "
				    "tracefs nodev /sys/kernel/tracing'");
	return PL_OK;
}
