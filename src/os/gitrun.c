/*
 * Running git with its stdin fed and its stdout and stderr kept (see
 * gitrun.h). One poll loop moves the three pipes, so a git that writes
 * megabytes while we are still feeding it paths never deadlocks.
 */
#include "gitrun.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "strbuf.h"

#define MAX_ARGS 64

void pl_gitrun_release(struct pl_gitrun *r)
{
	free(r->out);
	free(r->errtxt);
	r->out = r->errtxt = NULL;
	r->outlen = r->errlen = 0;
}

static int readsome(int *fd, struct pl_strbuf *b)
{
	char buf[65536];
	ssize_t n = read(*fd, buf, sizeof(buf));
	if (n > 0) {
		pl_strbuf_append(b, buf, (size_t)n);
		return 0;
	}
	if (n < 0 && (errno == EINTR || errno == EAGAIN))
		return 0;
	close(*fd);
	*fd = -1;
	return 0;
}

int pl_gitrunv(struct pl_gitrun *r, char *const *args, struct pl_error *err)
{
	r->out = r->errtxt = NULL;
	r->outlen = r->errlen = 0;
	char *argv[MAX_ARGS + 5];
	int n = 0;
	argv[n++] = "git";
	argv[n++] = "-C";
	argv[n++] = (char *)r->dir;
	if (!r->plain)
		argv[n++] = "--literal-pathspecs";
	for (int i = 0; args[i] && i < MAX_ARGS; i++)
		argv[n++] = args[i];
	argv[n] = NULL;
	int pin[2] = {-1, -1}, pout[2], perr[2];
	if ((r->in && pipe2(pin, O_CLOEXEC) != 0) || pipe2(pout, O_CLOEXEC) != 0 ||
	    pipe2(perr, O_CLOEXEC) != 0)
		return pl_error_set(err, PL_ESYS, "cannot create a pipe: %s", strerror(errno));
	/* a git that exits before reading all of its stdin must not kill us */
	struct sigaction ign = {.sa_handler = SIG_IGN}, old;
	sigaction(SIGPIPE, &ign, &old);
	pid_t pid = fork();
	if (pid < 0) {
		sigaction(SIGPIPE, &old, NULL);
		return pl_error_set(err, PL_ESYS, "cannot fork: %s", strerror(errno));
	}
	if (pid == 0) {
		sigaction(SIGPIPE, &old, NULL);
		int devnull = open("/dev/null", O_RDONLY);
		dup2(r->in ? pin[0] : devnull, 0);
		dup2(pout[1], 1);
		dup2(perr[1], 2);
		if (r->index)
			setenv("GIT_INDEX_FILE", r->index, 1);
		/* messages in English, whatever the user's locale: we quote them */
		setenv("LC_ALL", "C", 1);
		setenv("GIT_TERMINAL_PROMPT", "0", 1);
		execvp("git", argv);
		_exit(127);
	}
	if (r->in)
		close(pin[0]);
	close(pout[1]);
	close(perr[1]);
	int fin = r->in ? pin[1] : -1, fout = pout[0], ferr = perr[0];
	if (fin >= 0)
		fcntl(fin, F_SETFL, O_NONBLOCK);
	size_t fed = 0;
	struct pl_strbuf ob = {0}, eb = {0};
	if (fin >= 0 && r->inlen == 0) {
		close(fin);
		fin = -1;
	}
	while (fout >= 0 || ferr >= 0 || fin >= 0) {
		struct pollfd p[3];
		int np = 0, io = -1, ie = -1, ii = -1;
		if (fout >= 0) {
			p[np] = (struct pollfd){fout, POLLIN, 0};
			io = np++;
		}
		if (ferr >= 0) {
			p[np] = (struct pollfd){ferr, POLLIN, 0};
			ie = np++;
		}
		if (fin >= 0) {
			p[np] = (struct pollfd){fin, POLLOUT, 0};
			ii = np++;
		}
		if (poll(p, (nfds_t)np, -1) < 0) {
			if (errno == EINTR)
				continue;
			break;
		}
		if (io >= 0 && p[io].revents)
			readsome(&fout, &ob);
		if (ie >= 0 && p[ie].revents)
			readsome(&ferr, &eb);
		if (ii >= 0 && p[ii].revents) {
			ssize_t w = write(fin, r->in + fed, r->inlen - fed);
			if (w > 0)
				fed += (size_t)w;
			if ((w < 0 && errno != EAGAIN && errno != EINTR) || fed == r->inlen) {
				close(fin);
				fin = -1;
			}
		}
	}
	if (fin >= 0)
		close(fin);
	if (fout >= 0)
		close(fout);
	if (ferr >= 0)
		close(ferr);
	int status = 0;
	while (waitpid(pid, &status, 0) < 0 && errno == EINTR)
		;
	sigaction(SIGPIPE, &old, NULL);
	pl_strbuf_puts(&ob, "");
	pl_strbuf_puts(&eb, "");
	r->outlen = ob.len;
	r->errlen = eb.len;
	r->out = pl_strbuf_take(&ob);
	r->errtxt = pl_strbuf_take(&eb);
	if (!r->out || !r->errtxt)
		return pl_error_set(err, PL_ENOMEM, "out of memory reading git's output");
	if (WIFEXITED(status) && WEXITSTATUS(status) == 0)
		return PL_OK;
	/* git's first line of complaint, without its "fatal: " */
	char why[400] = "";
	const char *e = r->errtxt;
	while (*e == '\n')
		e++;
	size_t l = strcspn(e, "\n");
	if (l >= sizeof(why))
		l = sizeof(why) - 1;
	memcpy(why, e, l);
	why[l] = '\0';
	const char *w = why;
	if (strncmp(w, "fatal: ", 7) == 0)
		w += 7;
	else if (strncmp(w, "error: ", 7) == 0)
		w += 7;
	if (WIFEXITED(status) && WEXITSTATUS(status) == 127 && !*w)
		return pl_error_set(err, PL_ESYS, "cannot run git (is it installed?)");
	char code[48];
	if (WIFEXITED(status))
		snprintf(code, sizeof(code), "exit status %d", WEXITSTATUS(status));
	else
		snprintf(code, sizeof(code), "signal %d", WTERMSIG(status));
	return pl_error_set(err, PL_ESYS, "'git %s%s%s' failed (%s)%s%s", args[0],
			    args[1] ? " " : "", args[1] ? args[1] : "", code, *w ? ": " : "", w);
}

int pl_gitrun(struct pl_gitrun *r, struct pl_error *err, ...)
{
	char *args[MAX_ARGS + 1];
	int n = 0;
	va_list ap;
	va_start(ap, err);
	const char *a;
	while ((a = va_arg(ap, const char *)) && n < MAX_ARGS)
		args[n++] = (char *)a;
	va_end(ap);
	args[n] = NULL;
	return pl_gitrunv(r, args, err);
}

int pl_git_toplevel(const char *dir, char *out, size_t len)
{
	struct pl_gitrun r = {.dir = dir, .plain = 1};
	struct pl_error err;
	char *args[] = {"rev-parse", "--show-toplevel", NULL};
	out[0] = '\0';
	if (pl_gitrunv(&r, args, &err) == PL_OK && r.out) {
		r.out[strcspn(r.out, "\r\n")] = '\0';
		snprintf(out, len, "%s", r.out);
	}
	pl_gitrun_release(&r);
	return *out ? 0 : -1;
}

void pl_git_head_of(const char *top, char *out, size_t len)
{
	struct pl_gitrun r = {.dir = top, .plain = 1};
	struct pl_error err;
	char *args[] = {"rev-parse", "--verify", "-q", "HEAD", NULL};
	out[0] = '\0';
	if (pl_gitrunv(&r, args, &err) == PL_OK && r.out) {
		r.out[strcspn(r.out, "\r\n")] = '\0';
		snprintf(out, len, "%s", r.out);
	}
	pl_gitrun_release(&r);
}
