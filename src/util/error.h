/*
 * Error reporting shared by every library module.
 *
 * Library functions never print and never exit: they return 0 or a negative
 * pl_status and, when given a struct pl_error, leave one human sentence in
 * it (lowercase, no full stop, the subject quoted). Only src/cmd turns that
 * into "perfloop: error: ..." and an exit code from enum pl_exit.
 */
#ifndef PL_ERROR_H
#define PL_ERROR_H

#include <stddef.h>

/* Process exit codes, documented in README.md and docs/. */
enum pl_exit {
	PL_EXIT_OK = 0,		  /* success */
	PL_EXIT_NEGATIVE = 1,	  /* a negative verdict or no candidate: an answer */
	PL_EXIT_USAGE = 2,	  /* bad usage or bad input */
	PL_EXIT_FAILED = 3,	  /* the measured program failed or timed out */
	PL_EXIT_INTERNAL = 4,	  /* internal error (a bug, or the OS refused) */
	PL_EXIT_INTERRUPTED = 130 /* stopped by SIGINT after writing what it had */
};

/* Library return codes. */
enum pl_status {
	PL_OK = 0,
	PL_EINPUT = -1,	  /* bad input from the user: usage or file content */
	PL_ESYS = -2,	  /* a system call failed */
	PL_ENOMEM = -3,	  /* out of memory */
	PL_EFAILED = -4,  /* the measured program failed */
	PL_ETIMEOUT = -5, /* the measured program timed out */
	PL_EINTR = -6,	  /* interrupted by the user */
	PL_ENOTSUP = -7,  /* the machine or kernel does not support it */
	PL_ENOEXEC = -8,  /* a command could not be started */
};

struct pl_error {
	char msg[1024];
};

/* Fill err (if non-NULL) and return code; lets callers write
 * `return pl_error_set(err, PL_EINPUT, "...", ...);`. */
int pl_error_set(struct pl_error *err, int code, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

/* Map a library status to the process exit code. */
int pl_exit_code(int status);

#endif
