/*
 * perfloop profile --syscalls, beside profile/syscalls/: the program traced
 * through the kernel's syscall tracepoints (no ptrace), the table printed
 * and PREFIX.syscalls.json written.
 */
#include "profile_int.h"

#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include "syscalls.h"

/* profile --syscalls: the program under the syscall tracepoints */
int profile_syscalls(struct profiler *P, const struct pl_ctx *ctx)
{
	struct opts *o = &P->o;
	if (o->memory || o->gpu || o->live_table)
		return pl_die(PL_EXIT_USAGE,
			      "--syscalls: on its own (not with --memory, --gpu or top)");
	struct pl_syscalls *s = calloc(1, sizeof(*s));
	if (!s)
		return pl_die(PL_EXIT_INTERNAL, "out of memory");
	struct pl_error err = {{0}};
	int status = 0;
	char cwd[4096];
	if (!o->full_paths && getcwd(cwd, sizeof cwd))
		s->prof.root = cwd; /* the slowest calls' stacks' files, as profiles show them */
	int rc = pl_syscalls_trace(o->argv, o->pid, o->duration, ctx->interrupted, s, &status, &err);
	if (rc != PL_OK) {
		pl_syscalls_release(s);
		free(s);
		return pl_die(rc == PL_ENOEXEC ? PL_EXIT_USAGE : pl_exit_code(rc), "%s",
			      rc == PL_ENOMEM ? "out of memory" : err.msg);
	}
	char title[600];
	profile_command_title(o, title, sizeof title);
	printf("perfloop profile: %s (system calls, tracepoints)\n", title);
	if (s->mounted == 1)
		fprintf(stderr, "perfloop: mounted tracefs at %s to open the tracepoints (it was "
				"not mounted), and unmounted it\n",
			s->tracefs);
	else if (s->mounted)
		fprintf(stderr, "perfloop: mounted tracefs at %s to open the tracepoints (it was "
				"not mounted); it could not be unmounted: 'umount %s'\n",
			s->tracefs, s->tracefs);
	pl_syscalls_print(s, (size_t)o->top);
	struct pl_strbuf names = {0};
	if (o->formats) {
		json_t *doc = pl_syscalls_json(s, title);
		rc = profile_write_doc(o, ".syscalls.json", doc, &names);
		json_decref(doc);
	}
	if (!rc && names.len)
		printf("\nwrote %s\n", names.s);
	free(names.s);
	if (s->lost)
		fprintf(stderr, "perfloop: warning: the kernel dropped %llu events (perfloop fell "
				"behind): the counts are low\n",
			(unsigned long long)s->lost);
	int stopped = s->stopped;
	pl_syscalls_release(s);
	free(s);
	if (rc)
		return rc;
	if (stopped && !*ctx->interrupted) {
		fprintf(stderr, "perfloop: stopped after %.0f s (--duration)%s\n", o->duration,
			o->argv ? "" : "; the process goes on");
		return PL_EXIT_OK;
	}
	return profile_exit_status(o, ctx, status);
}

