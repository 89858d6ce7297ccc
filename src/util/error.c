/*
 * The one place library errors are formatted; see error.h for the rules.
 */
#include "error.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

int pl_error_set(struct pl_error *err, int code, const char *fmt, ...)
{
	if (err) {
		/* formatted aside first: callers wrap the message already there
		 * ("suite '%s': %s", ..., err->msg), and vsnprintf into its own
		 * argument is undefined (it printed garbage) */
		char buf[sizeof(err->msg)];
		va_list ap;
		va_start(ap, fmt);
		vsnprintf(buf, sizeof(buf), fmt, ap);
		va_end(ap);
		memcpy(err->msg, buf, sizeof(buf));
	}
	return code;
}

int pl_exit_code(int status)
{
	switch (status) {
	case PL_OK:
		return PL_EXIT_OK;
	case PL_EINPUT:
	case PL_ENOEXEC:
		return PL_EXIT_USAGE;
	case PL_EFAILED:
	case PL_ETIMEOUT:
		return PL_EXIT_FAILED;
	case PL_EINTR:
		return PL_EXIT_INTERRUPTED;
	default:
		return PL_EXIT_INTERNAL;
	}
}
