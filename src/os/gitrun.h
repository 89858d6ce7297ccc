/*
 * Running git for the loop: argv (no shell), optional environment
 * additions (a private GIT_INDEX_FILE), bytes fed to its stdin, and both
 * stdout and stderr kept, so that every failure can quote git's own reason.
 * Not a measurement path: a plain fork and exec, with poll over the pipes
 * so that neither side can block the other whatever the sizes.
 */
#ifndef PL_GITRUN_H
#define PL_GITRUN_H

#include <stddef.h>

#include "error.h"

struct pl_gitrun {
	const char *dir;       /* git -C DIR */
	const char *index;     /* GIT_INDEX_FILE for this call; NULL: the repository's */
	int plain;	       /* no --literal-pathspecs (for commands that refuse it) */
	const char *in;	       /* stdin bytes; NULL: /dev/null */
	size_t inlen;
	char *out;	       /* stdout, malloc'd and NUL-terminated (also on failure) */
	size_t outlen;
	char *errtxt;	       /* stderr, likewise */
	size_t errlen;
};

/* Run `git -C dir --literal-pathspecs ARGS...` (ARGS NULL-terminated, at
 * most 60). Returns PL_OK when git exited 0; otherwise an error whose text
 * names the command and quotes the first line of git's stderr. The caller
 * frees r->out and r->errtxt (pl_gitrun_release). */
int pl_gitrun(struct pl_gitrun *r, struct pl_error *err, ...);
/* The same with an argv array (args[0] is git's first argument). */
int pl_gitrunv(struct pl_gitrun *r, char *const *args, struct pl_error *err);
void pl_gitrun_release(struct pl_gitrun *r);

/* The top of the work tree containing dir, without the checks of
 * pl_git_open; -1 outside a repository. */
int pl_git_toplevel(const char *dir, char *out, size_t len);

/* HEAD's commit id in the repository at top ("" when there is none). */
void pl_git_head_of(const char *top, char *out, size_t len);


#endif
