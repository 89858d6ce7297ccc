/*
 * perfloop mcp: the loop's steps as tools a coding agent calls, over the
 * Model Context Protocol (JSON-RPC 2.0, one message per line on stdin and
 * stdout). Each tool runs perfloop itself (this binary) with the matching
 * command and returns its JSON document as structuredContent, with a short
 * text. While a tool runs the server keeps reading the client (run_self
 * polls stdin beside the child's output): a cancellation stops the child,
 * a ping is answered, other requests wait their turn in a queue.
 *
 * What a client sends is data, never perfloop's options: operands follow
 * "--" and values travel as "--option=VALUE", one argv element each. Every
 * path is resolved inside the directory the server started in (no "..",
 * nothing in .git, no symlink out of it), and files the server reads
 * itself (resources, the loop's documents) are opened one component at a
 * time without following symlinks. A tool that changes the loop's state
 * (baseline, try, checkpoint, revert) is asked to stop when cancelled and
 * never killed: it stops at its own safe point.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <jansson.h>
#include <limits.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "cmd.h"
#include "error.h"
#include "grow.h"
#include "strbuf.h"

const char cmd_mcp_usage[] =
    "usage: perfloop mcp\n"
    "\n"
    "Serve perfloop's steps as tools over the Model Context Protocol (JSON-RPC\n"
    "2.0, one message per line on stdin and stdout), for coding agents and\n"
    "editors: scan, bench, profile, select, verify, baseline, try, checkpoint,\n"
    "revert, status, history and report, each returning its JSON document\n"
    "(perfloop.findings/1, perfloop.bench/1, perfloop.verdict/1...) as structured\n"
    "content. Long tools send progress and stop when cancelled (bench keeps\n"
    "what it measured). The loop's evidence and the last flame graph are\n"
    "resources. Paths are confined to the directory it is started in. Register\n"
    "it in a client as the command `perfloop mcp`.\n"
    "\n"
    "Options:\n"
    "  -h, --help   this text\n"
    "\n"
    "Exit status: 0 when stdin ends.\n";

#define PROTOCOL "2025-06-18"
#define MAX_LINE (16u << 20)	 /* a longer message is refused, never buffered */
#define MAX_RESOURCE (32u << 20) /* a larger file is not served */

struct pl_schema_file {
	const char *path, *text;
};
extern const struct pl_schema_file pl_schema_files[];

/* The server: where it started, what it has read, and the tool running. */
struct server {
	char root[PATH_MAX];
	char *in; /* bytes read, not yet a whole line */
	size_t inlen, incap;
	int skipping; /* inside a line over MAX_LINE: its rest is dropped */
	int eof;
	json_t *queue; /* requests read while a tool ran, in order */
	json_t *last;  /* tool name -> its last document (perfloop://last/NAME.json) */
	/* the tool being run */
	json_t *run_id;	  /* its request's id */
	json_t *progress; /* its progress token, or NULL */
	unsigned progress_n;
	int cancelled;
};

/* Bytes that are not UTF-8 (a file name in a message, a line cut short)
 * become '?': jansson refuses to encode them, and a message it cannot
 * encode would never be sent. */
static void utf8_clean(char *s)
{
	unsigned char *p = (unsigned char *)s;
	while (*p) {
		int n = *p < 0x80			    ? 0
			: (*p & 0xe0) == 0xc0 && *p >= 0xc2 ? 1
			: (*p & 0xf0) == 0xe0		    ? 2
			: (*p & 0xf8) == 0xf0 && *p <= 0xf4 ? 3
							    : -1;
		int ok = n >= 0;
		for (int k = 1; ok && k <= n; k++)
			ok = (p[k] & 0xc0) == 0x80;
		if (ok && n == 2) /* no overlong form, no surrogate */
			ok = !(p[0] == 0xe0 && p[1] < 0xa0) && !(p[0] == 0xed && p[1] >= 0xa0);
		if (ok && n == 3)
			ok = !(p[0] == 0xf0 && p[1] < 0x90) && !(p[0] == 0xf4 && p[1] >= 0x90);
		if (!ok) {
			*p++ = '?';
			continue;
		}
		p += n + 1;
	}
}

/* A path from a tool call as a path relative to the root, or why not.
 * Lexically: absolute only inside the root, no "..", no ".git" component
 * (any case). Then what exists of it must resolve inside the root and
 * outside its .git: a symlink that leads out, or nowhere, is refused. A
 * path that does not exist yet is the command's to report. rel never
 * starts with '-' (a "./" is put before one that would). */
static const char *project_path(const struct server *S, const char *path, char *rel, size_t len)
{
	size_t rn = strlen(S->root), o = 0;
	const char *p = path;
	if (!*p)
		return "an empty path";
	if (strlen(p) >= PATH_MAX)
		return "a path too long";
	if (p[0] == '/') {
		if (strncmp(p, S->root, rn) || (p[rn] && p[rn] != '/'))
			return "a path outside the project";
		p += rn;
	}
	if (len < 4)
		return "a path too long";
	while (*p) {
		while (*p == '/')
			p++;
		size_t n = strcspn(p, "/");
		if (!n)
			break;
		if (n == 2 && !strncmp(p, "..", 2))
			return "a path with '..' (name it from the project's top)";
		if (n == 4 && !strncasecmp(p, ".git", 4))
			return "a path inside .git";
		if (!(n == 1 && p[0] == '.')) {
			if (o + n + 2 > len)
				return "a path too long";
			if (o && rel[o - 1] != '/')
				rel[o++] = '/';
			memcpy(rel + o, p, n);
			o += n;
		}
		p += n;
	}
	if (!o)
		rel[o++] = '.';
	rel[o] = '\0';
	if (rel[0] == '-') { /* never read as an option, whatever parses it */
		if (o + 3 > len)
			return "a path too long";
		memmove(rel + 2, rel, o + 1);
		memcpy(rel, "./", 2);
	}
	char full[2 * PATH_MAX + 2], real[PATH_MAX];
	snprintf(full, sizeof full, "%s/%s", S->root, rel);
	while (!realpath(full, real)) {
		struct stat st;
		if ((errno != ENOENT && errno != ENOTDIR) || lstat(full, &st) == 0)
			return "a path that does not resolve inside the project (a symlink?)";
		char *slash = strrchr(full, '/');
		if (!slash || (size_t)(slash - full) < rn)
			return "a path outside the project";
		*slash = '\0';
	}
	size_t n = rn == 1 ? 0 : rn; /* the root may be "/" */
	if (strncmp(real, S->root, n) || (real[n] && real[n] != '/'))
		return "a path outside the project (through a symlink)";
	if (!strncmp(real + n, "/.git", 5) && (real[n + 5] == '\0' || real[n + 5] == '/'))
		return "a path inside .git";
	return NULL;
}

/* Open rel, a path under the root, for reading: each directory opened
 * with O_NOFOLLOW, so no symlink anywhere on the way is followed (nor
 * "..", nor .git); a regular file only (a FIFO would block: O_NONBLOCK).
 * The descriptor, or -1. */
static int open_in_root(const struct server *S, const char *rel, int want_dir, struct stat *st)
{
	char buf[PATH_MAX];
	if (!rel || !*rel || rel[0] == '/' || strlen(rel) >= sizeof buf)
		return -1;
	snprintf(buf, sizeof buf, "%s", rel);
	int dfd = open(S->root, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	for (char *p = buf; dfd >= 0;) {
		char *slash = strchr(p, '/');
		if (slash)
			*slash = '\0';
		if (!*p || !strcmp(p, ".") || !strcmp(p, "..") || !strcasecmp(p, ".git"))
			break;
		int dir = slash || want_dir;
		int fd = openat(dfd, p,
				O_RDONLY | O_NOFOLLOW | O_CLOEXEC |
				    (dir ? O_DIRECTORY : O_NONBLOCK | O_NOCTTY));
		close(dfd);
		dfd = fd;
		if (fd < 0 || slash) {
			p = slash ? slash + 1 : p;
			continue;
		}
		if (fstat(fd, st) != 0 || (dir ? !S_ISDIR(st->st_mode) : !S_ISREG(st->st_mode)))
			break;
		return fd;
	}
	if (dfd >= 0)
		close(dfd);
	return -1;
}

/* The bytes of rel (open_in_root), NUL-terminated; NULL when it cannot be
 * read or is over MAX_RESOURCE. */
static char *read_in_root(const struct server *S, const char *rel, size_t *len)
{
	struct stat st;
	int fd = open_in_root(S, rel, 0, &st);
	if (fd < 0)
		return NULL;
	struct pl_strbuf b = {0};
	char buf[65536];
	ssize_t n;
	int ok = 1;
	while ((n = read(fd, buf, sizeof buf)) != 0) {
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0 || b.len + (size_t)n > MAX_RESOURCE) {
			ok = 0;
			break;
		}
		pl_strbuf_append(&b, buf, (size_t)n);
	}
	close(fd);
	char *text = pl_strbuf_take(&b);
	if (!ok) {
		free(text);
		return NULL;
	}
	if (!text)
		text = calloc(1, 1);
	if (len)
		*len = text ? strlen(text) : 0;
	return text;
}

/* perfloop's state directory, .perfloop/, where the tools write: a real
 * directory, and no symlink in it or in its cache/ and mcp/ (a clone can
 * ship one, and a write through it would land outside the project). NULL,
 * or what is wrong. */
static const char *state_dir_problem(const struct server *S, char *why, size_t len)
{
	static const char *const dirs[] = {".perfloop", ".perfloop/cache", ".perfloop/cache/scan",
					   ".perfloop/mcp"};
	for (size_t i = 0; i < sizeof dirs / sizeof dirs[0]; i++) {
		char path[PATH_MAX + 64];
		struct stat st;
		snprintf(path, sizeof path, "%s/%s", S->root, dirs[i]);
		if (lstat(path, &st) != 0 && errno == ENOENT)
			continue;
		int fd = open_in_root(S, dirs[i], 1, &st);
		if (fd < 0) {
			snprintf(why, len,
				 "'%s' is not a directory of this project (a symlink?): perfloop's "
				 "state is never written through one; remove it",
				 dirs[i]);
			return why;
		}
		DIR *d = fdopendir(fd);
		if (!d) {
			close(fd);
			continue;
		}
		struct dirent *e;
		while ((e = readdir(d))) {
			if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, ".."))
				continue;
			if (fstatat(dirfd(d), e->d_name, &st, AT_SYMLINK_NOFOLLOW) == 0 &&
			    S_ISLNK(st.st_mode)) {
				snprintf(why, len,
					 "'%s/%.200s' is a symlink: perfloop's state is never read "
					 "or written through one; remove it",
					 dirs[i], e->d_name);
				utf8_clean(why);
				closedir(d);
				return why;
			}
		}
		closedir(d);
	}
	return NULL;
}

/* ---- messages out ---- */

static void send_msg(json_t *m)
{
	char *s = json_dumps(m, JSON_COMPACT);
	if (s) {
		fputs(s, stdout);
		fputc('\n', stdout);
		fflush(stdout);
		free(s);
	}
	json_decref(m);
}

static void send_error(json_t *id, int code, const char *msg)
{
	char text[512];
	snprintf(text, sizeof text, "%s", msg);
	utf8_clean(text);
	send_msg(json_pack("{s:s, s:O, s:{s:i, s:s}}", "jsonrpc", "2.0", "id",
			   id ? id : json_null(), "error", "code", code, "message", text));
}

/* Every request is answered: a result that could not be built is an
 * internal error, not silence. */
static void send_result(json_t *id, json_t *result)
{
	if (!result) {
		send_error(id, -32603, "internal error (out of memory)");
		return;
	}
	send_msg(json_pack("{s:s, s:O, s:o}", "jsonrpc", "2.0", "id", id, "result", result));
}

/* ---- messages in ---- */

/* One line from the client: a message queued, or a parse error said. */
static void take_line(struct server *S, char *line, size_t n)
{
	while (n > 0 && (line[n - 1] == '\r' || line[n - 1] == ' '))
		n--;
	if (n == 0)
		return;
	json_error_t jerr;
	json_t *msg = json_loadb(line, n, 0, &jerr);
	if (!msg)
		send_error(NULL, -32700, "parse error");
	else if (json_is_array(msg)) /* batches are not part of the current revision */
		send_error(NULL, -32600, "invalid request (batches are not supported)");
	else
		json_array_append(S->queue, msg);
	json_decref(msg);
}

static int grow_in(struct server *S, size_t need)
{
	return pl_grow((void **)&S->in, &S->incap, need, 1, 4096);
}

/* A line over MAX_LINE (or one that cannot be held): one error for it,
 * and its rest is read and dropped up to its newline. */
static void refuse_line(struct server *S)
{
	send_error(NULL, -32700, "parse error (a message over 16 MiB: refused, its line skipped)");
	S->skipping = 1;
	S->inlen = 0;
}

/* Read what stdin has (it was said readable) into whole messages. */
static void read_input(struct server *S)
{
	char buf[65536];
	ssize_t n = read(0, buf, sizeof buf);
	if (n < 0 && (errno == EINTR || errno == EAGAIN))
		return;
	if (n <= 0) {
		S->eof = 1;
		if (S->inlen && !S->skipping)
			take_line(S, S->in, S->inlen);
		S->inlen = 0;
		S->skipping = 0;
		return;
	}
	for (size_t from = 0; from < (size_t)n;) {
		const char *nl = memchr(buf + from, '\n', (size_t)n - from);
		size_t end = nl ? (size_t)(nl - buf) : (size_t)n, piece = end - from;
		if (S->skipping) {
			/* the rest of a refused line */
		} else if (S->inlen + piece > MAX_LINE) {
			refuse_line(S);
		} else if (!S->inlen && nl) { /* a whole line in this read */
			take_line(S, buf + from, piece);
		} else if (grow_in(S, S->inlen + piece + 1) < 0) {
			refuse_line(S);
		} else {
			memcpy(S->in + S->inlen, buf + from, piece);
			S->inlen += piece;
			if (nl)
				take_line(S, S->in, S->inlen);
		}
		if (nl) { /* a line ends: the next one starts clean */
			S->inlen = 0;
			S->skipping = 0;
		}
		from = end + (nl != NULL);
	}
}

static int is_method(json_t *msg, const char *m)
{
	json_t *v = json_object_get(msg, "method");
	return json_is_string(v) && !strcmp(json_string_value(v), m);
}

/* Messages that cannot wait for the running tool: a cancellation (of it,
 * or of a request still queued: S->cancelled says, run_self stops the
 * child) and ping. */
static void control(struct server *S, pid_t child)
{
	for (size_t i = 0; i < json_array_size(S->queue);) {
		json_t *msg = json_array_get(S->queue, i);
		json_t *id = json_object_get(msg, "id");
		if (is_method(msg, "notifications/cancelled")) {
			json_t *rid = json_object_get(json_object_get(msg, "params"), "requestId");
			if (rid && S->run_id && json_equal(rid, S->run_id) && child > 0)
				S->cancelled = 1;
			for (size_t k = 0; rid && k < json_array_size(S->queue); k++) {
				json_t *q = json_array_get(S->queue, k);
				json_t *qid = json_object_get(q, "id");
				if (k != i && qid && json_equal(qid, rid) &&
				    json_object_get(q, "method")) { /* never started: drop it */
					json_array_remove(S->queue, k);
					if (k < i)
						i--;
					break;
				}
			}
			json_array_remove(S->queue, i);
			continue;
		}
		if (child > 0 && is_method(msg, "ping") && (json_is_string(id) || json_is_integer(id))) {
			send_result(id, json_object());
			json_array_remove(S->queue, i);
			continue;
		}
		i++;
	}
}

/* ---- running perfloop ---- */

static void progress(struct server *S, const char *tool, double elapsed, const char *line)
{
	if (!S->progress)
		return;
	char msg[300];
	snprintf(msg, sizeof msg, "%s: %.0f s%s%.200s", tool, elapsed, line && *line ? ": " : "",
		 line ? line : "");
	utf8_clean(msg);
	send_msg(json_pack("{s:s, s:s, s:{s:O, s:i, s:s}}", "jsonrpc", "2.0", "method",
			   "notifications/progress", "params", "progressToken", S->progress,
			   "progress", (int)++S->progress_n, "message", msg));
}

static double now_s(void)
{
	struct timespec t;
	clock_gettime(CLOCK_MONOTONIC, &t);
	return (double)t.tv_sec + (double)t.tv_nsec / 1e9;
}

/* Run this binary with argv (argv[0] a command) in its own process group,
 * collecting stdout and stderr, while still reading the client: a ping is
 * answered, progress is sent each second, and a cancellation stops it.
 * How depends on the tool. One that changes the loop's state (stateful:
 * revert, try, checkpoint, baseline) gets SIGINT alone, never its group:
 * the gits it runs finish their step, perfloop stops at its own safe point
 * (try holds signals through its journalled steps; checkpoint and revert
 * do not look and complete), and nothing kills it:
 * a SIGKILL mid-revert left half a tree and git's index lock. Any other
 * tool's group gets SIGINT (bench writes what it measured) and SIGKILL
 * 5 s later. Returns the exit code, -1 if it could not run or was
 * killed. */
static int run_self(struct server *S, const char *tool, int stateful, char **argv, char **out,
		    char **errtext)
{
	int po[2], pe[2];
	*out = *errtext = NULL;
	if (pipe2(po, O_CLOEXEC) < 0)
		return -1;
	if (pipe2(pe, O_CLOEXEC) < 0) {
		close(po[0]);
		close(po[1]);
		return -1;
	}
	pid_t pid = fork();
	if (pid == 0) {
		setpgid(0, 0);
		int nul = open("/dev/null", O_RDONLY);
		if (nul >= 0)
			dup2(nul, 0);
		dup2(po[1], 1);
		dup2(pe[1], 2);
		if (chdir(S->root) != 0)
			_exit(126);
		execv("/proc/self/exe", argv);
		_exit(127);
	}
	if (pid > 0)
		setpgid(pid, pid); /* either side may win the race */
	close(po[1]);
	close(pe[1]);
	struct pl_strbuf bo = {0}, be = {0};
	struct pollfd fds[3] = {{po[0], POLLIN, 0}, {pe[0], POLLIN, 0}, {0, POLLIN, 0}};
	int open_fds = pid > 0 ? 2 : 0;
	double start = now_s(), last_progress = start, kill_at = 0;
	char lastline[256] = "";
	while (open_fds) {
		fds[2].fd = S->eof ? -1 : 0;
		int r = poll(fds, 3, 250);
		if (r < 0 && errno != EINTR)
			break;
		for (int i = 0; i < 2; i++) {
			if (fds[i].fd < 0 || !(fds[i].revents & (POLLIN | POLLHUP | POLLERR)))
				continue;
			char buf[65536];
			ssize_t n = read(fds[i].fd, buf, sizeof buf);
			if (n > 0) {
				pl_strbuf_append(i ? &be : &bo, buf, (size_t)n);
				if (i) { /* the last line it said, for progress */
					size_t e = (size_t)n;
					while (e > 0 && (buf[e - 1] == '\n' || buf[e - 1] == '\r'))
						e--;
					size_t b = e;
					while (b > 0 && buf[b - 1] != '\n' && buf[b - 1] != '\r')
						b--;
					if (e > b)
						snprintf(lastline, sizeof lastline, "%.*s", (int)(e - b),
							 buf + b);
				}
			} else {
				close(fds[i].fd);
				fds[i].fd = -1;
				open_fds--;
			}
		}
		if (fds[2].fd >= 0 && (fds[2].revents & (POLLIN | POLLHUP | POLLERR))) {
			read_input(S);
			int was = S->cancelled;
			control(S, pid);
			if (S->cancelled && !was && pid > 0) {
				if (stateful) {
					kill(pid, SIGINT);
				} else {
					kill(-pid, SIGINT);
					kill_at = now_s() + 5;
				}
			}
		}
		double t = now_s();
		if (kill_at && t > kill_at) {
			kill(-pid, SIGKILL);
			kill_at = 0;
		}
		if (t - last_progress >= 1.0) {
			progress(S, tool, t - start, lastline);
			last_progress = t;
		}
	}
	for (int i = 0; i < 2; i++)
		if (fds[i].fd >= 0)
			close(fds[i].fd);
	int status = 0, rc = -1;
	if (pid > 0 && waitpid(pid, &status, 0) == pid && WIFEXITED(status))
		rc = WEXITSTATUS(status);
	*out = pl_strbuf_take(&bo);
	*errtext = pl_strbuf_take(&be);
	return rc;
}

/* ---- tools ---- */

/* A command line being built. Each element is one argv entry, so a value
 * is never split; owned[] are the ones formatted here. */
struct argv_b {
	char *v[256];
	int n;
	int full; /* an element did not fit: the call is refused */
	char *owned[256];
	int nowned;
};

static void add(struct argv_b *a, const char *s)
{
	if (a->n < 254 && s)
		a->v[a->n++] = (char *)s;
	else
		a->full = 1;
	a->v[a->n] = NULL;
}

static void argv_b_release(struct argv_b *a)
{
	for (int i = 0; i < a->nowned; i++)
		free(a->owned[i]);
	a->nowned = 0;
}

/* "OPT=VALUE" as one element: an option's value, whatever it starts with
 * (an option and its value as two elements would do for getopt, but not
 * for main's --color, which takes "--color=..." from anywhere before
 * "--"). */
static void add_opt(struct argv_b *a, const char *opt, const char *value)
{
	char *s = NULL;
	if (a->nowned < 256 && asprintf(&s, "%s=%s", opt, value) >= 0)
		a->owned[a->nowned++] = s;
	else
		s = NULL;
	add(a, s);
}

/* A string or an array of strings at key: each one after "OPT=" when opt
 * is given, else as operands (the caller has added "--" before them).
 * paths: each a path in the project (project_path), passed as resolved. */
static const char *add_strings(const struct server *S, struct argv_b *a, json_t *args,
			       const char *key, const char *opt, int paths)
{
	json_t *v = json_object_get(args, key), *one = NULL;
	if (!v)
		return NULL;
	if (json_is_string(v)) {
		one = json_array();
		json_array_append(one, v);
		v = one;
	}
	if (!json_is_array(v))
		return "expected a string or an array of strings";
	size_t i;
	json_t *x;
	const char *bad = NULL;
	json_array_foreach(v, i, x)
	{
		char rel[PATH_MAX];
		const char *s = json_string_value(x);
		if (!s) {
			bad = "expected strings";
			break;
		}
		if (paths && (bad = project_path(S, s, rel, sizeof rel)))
			break;
		if (paths) {
			char *d = strdup(rel);
			if (!d || a->nowned == 256) {
				free(d);
				bad = "too many arguments";
				break;
			}
			a->owned[a->nowned++] = d;
			s = d;
		}
		if (opt)
			add_opt(a, opt, s);
		else
			add(a, s);
	}
	json_decref(one);
	return bad;
}

/* A number at key, within [lo, hi], as "OPT=N"; nothing when absent. */
static const char *add_number(struct argv_b *a, json_t *args, const char *key, const char *opt,
			      double lo, double hi, int integer)
{
	json_t *v = json_object_get(args, key);
	if (!v)
		return NULL;
	if (!(integer ? json_is_integer(v) : json_is_number(v)) || json_number_value(v) < lo ||
	    json_number_value(v) > hi)
		return integer ? "expected an integer in range" : "expected a number in range";
	char num[64];
	if (integer)
		snprintf(num, sizeof num, "%lld", (long long)json_integer_value(v));
	else
		snprintf(num, sizeof num, "%.15g", json_number_value(v));
	add_opt(a, opt, num);
	return NULL;
}

static void add_flag(struct argv_b *a, json_t *args, const char *key, const char *opt)
{
	if (json_is_true(json_object_get(args, key)))
		add(a, opt);
}

/* A tool's annotations, which a client may use to run it unasked (a
 * read-only tool) and so must be true of the worst call of it:
 * RO           changes nothing (scan's cache in .perfloop/cache aside)
 * DESTRUCTIVE  may overwrite or delete: runs a command the client gives,
 *              or replaces the loop's state or the user's files
 * IDEMPOTENT   a second identical call changes nothing more
 * OPEN         runs commands or reads processes beyond the project
 * STATEFUL     (not an annotation) cancelled, it is asked to stop, never
 *              killed: see run_self */
enum { RO = 1, DESTRUCTIVE = 2, IDEMPOTENT = 4, OPEN = 8, STATEFUL = 16 };

struct tool {
	const char *name, *title, *description, *schema; /* schema: JSON text */
	const char *output; /* docs/schemas/NAME.schema.json, a schema's text, or NULL */
	int hints;
};

#define STR_ARRAY "{\"type\":\"array\",\"items\":{\"type\":\"string\"}"

static const struct tool tools[] = {
    {"scan", "Scan source for performance anti-patterns",
     "Find known performance anti-patterns in Python/PyTorch and C source (perfloop "
     "scan). Returns perfloop.findings/1.",
     "{\"type\":\"object\",\"properties\":{\"paths\":" STR_ARRAY
     ",\"description\":\"files or directories (default: the project)\"},"
     "\"select\":" STR_ARRAY "},\"advisory\":{\"type\":\"boolean\"}},"
     "\"additionalProperties\":false}",
     "findings-1", RO | IDEMPOTENT},
    {"bench", "Time commands with statistics and a noise gate",
     "Benchmark one or more commands (no shell: words split as a shell would, without "
     "pipes or variables) and compare them to the first. Runs each command as given, "
     "repeatedly: whatever the command does, it does. Sends progress; cancelled, it "
     "stops the command and keeps what was measured (perfloop://last/bench.json). "
     "Returns perfloop.bench/1.",
     "{\"type\":\"object\",\"properties\":{\"commands\":" STR_ARRAY ",\"minItems\":1},"
     "\"runs\":{\"type\":\"integer\",\"minimum\":2},"
     "\"max_time\":{\"type\":\"number\",\"exclusiveMinimum\":0,\"description\":\"seconds\"}},"
     "\"required\":[\"commands\"],\"additionalProperties\":false}",
     "bench-1", DESTRUCTIVE | OPEN},
    {"profile", "Sample where a program spends its time",
     "Profile a command (argv, no shell: it runs as given) or a running process for a "
     "bounded duration "
     "(perfloop profile: Python, native or mixed stacks). Writes the flame graph "
     "(perfloop://profile/last.svg) and returns the hot-function findings "
     "(perfloop.findings/1) with the top table as text.",
     "{\"type\":\"object\",\"properties\":{\"command\":" STR_ARRAY ",\"minItems\":1},"
     "\"pid\":{\"type\":\"integer\",\"minimum\":1},"
     "\"duration\":{\"type\":\"number\",\"exclusiveMinimum\":0,\"maximum\":600,"
     "\"description\":\"seconds\"},\"rate\":{\"type\":\"number\",\"minimum\":1,"
     "\"maximum\":20000},\"mode\":{\"enum\":[\"auto\",\"python\",\"native\",\"mixed\"]},"
     "\"idle\":{\"type\":\"boolean\"},\"gil\":{\"type\":\"boolean\"},"
     "\"subprocesses\":{\"type\":\"boolean\"}},\"required\":[\"duration\"],"
     "\"additionalProperties\":false}",
     "findings-1", DESTRUCTIVE | OPEN},
    {"select", "Choose the one finding to work on",
     "Choose exactly one finding from findings files: algorithm first (SPEC.md section "
     "3). Returns the candidate document.",
     "{\"type\":\"object\",\"properties\":{\"findings\":" STR_ARRAY ",\"minItems\":1}},"
     "\"required\":[\"findings\"],\"additionalProperties\":false}",
     "{\"type\":\"object\",\"required\":[\"status\"],\"properties\":{\"status\":{\"enum\":"
     "[\"ok\",\"no_candidates\"]},\"candidate\":{\"type\":\"object\"}}}",
     RO | IDEMPOTENT},
    {"verify", "Accept or reject a change from two benchmark summaries",
     "Compare a before and an after perfloop.bench/1 summary: accept only a quantified "
     "win that passes every rule. Returns perfloop.verdict/1.",
     "{\"type\":\"object\",\"properties\":{\"before\":{\"type\":\"string\"},\"after\":{"
     "\"type\":\"string\"},\"min_gain\":{\"type\":\"number\",\"minimum\":0,"
     "\"exclusiveMaximum\":1}},\"required\":[\"before\",\"after\"],"
     "\"additionalProperties\":false}",
     "verdict-1", RO | IDEMPOTENT},
    {"baseline", "Start the loop: measure the benchmarks and take a checkpoint",
     "Measure each benchmark command (and run the functional suite), store the baseline "
     "in .perfloop/baseline.json and take a checkpoint of the working tree (perfloop "
     "baseline). Returns the baseline (perfloop.bench/1).",
     "{\"type\":\"object\",\"properties\":{\"benches\":" STR_ARRAY ",\"minItems\":1},"
     "\"names\":" STR_ARRAY "},\"suite\":{\"type\":\"string\"},"
     "\"runs\":{\"type\":\"integer\",\"minimum\":3},"
     "\"max_iterations\":{\"type\":\"integer\",\"minimum\":1},"
     "\"min_gain\":{\"type\":\"number\",\"minimum\":0,\"exclusiveMaximum\":1},"
     "\"timeout\":{\"type\":\"number\",\"exclusiveMinimum\":0}},"
     "\"required\":[\"benches\"],\"additionalProperties\":false}",
     "bench-1", DESTRUCTIVE | OPEN | STATEFUL},
    {"try", "One turn of the loop: measure the change, keep or revert it",
     "After one change: run the suite and the baseline's benchmarks, verify; accept "
     "commits exactly the touched files with the ledger line, reject reverts them "
     "(perfloop try). Returns the turn and its verdict.",
     "{\"type\":\"object\",\"properties\":{\"message\":{\"type\":\"string\"},"
     "\"continue\":{\"type\":\"boolean\"}},\"additionalProperties\":false}",
     "{\"type\":\"object\",\"required\":[\"turn\",\"iteration\"],\"properties\":{\"turn\":"
     "{\"type\":[\"object\",\"null\"]},\"iteration\":{\"type\":\"integer\"},\"verdict\":"
     "{\"type\":\"object\"}}}",
     DESTRUCTIVE | OPEN | STATEFUL},
    {"checkpoint", "Record the working tree before a change",
     "Record every tracked and untracked, non-ignored path as it is, without touching "
     "the tree or the index (perfloop checkpoint); it replaces the previous checkpoint, "
     "which revert would have restored. Returns the checkpoint document.",
     "{\"type\":\"object\",\"properties\":{},\"additionalProperties\":false}",
     "{\"type\":\"object\",\"required\":[\"schema\",\"entries\"],\"properties\":{\"schema\":"
     "{\"type\":\"string\"},\"entries\":{\"type\":\"array\"}}}",
     DESTRUCTIVE | IDEMPOTENT | STATEFUL},
    {"revert", "Undo the change made since the checkpoint",
     "Restore every path that differs from the checkpoint and remove what was created "
     "(perfloop revert); dry_run only says what it would do.",
     "{\"type\":\"object\",\"properties\":{\"dry_run\":{\"type\":\"boolean\"}},"
     "\"additionalProperties\":false}",
     "{\"type\":\"object\",\"required\":[\"restored\",\"created\"],\"properties\":{"
     "\"restored\":{\"type\":\"array\"},\"created\":{\"type\":\"array\"},\"dry_run\":{"
     "\"type\":\"boolean\"}}}",
     DESTRUCTIVE | IDEMPOTENT | STATEFUL},
    {"status", "The loop's state",
     "The loop's baseline, iterations and verdicts (.perfloop/loop.json).",
     "{\"type\":\"object\",\"properties\":{},\"additionalProperties\":false}",
     "{\"type\":\"object\",\"required\":[\"schema\"],\"properties\":{\"schema\":{\"const\":"
     "\"perfloop.loop/1\"},\"turns\":{\"type\":\"array\"}}}",
     RO | IDEMPOTENT},
    {"history", "Past runs of each benchmark, and regressions",
     "The benchmark history kept by bench and the loop (perfloop history): list the "
     "benchmarks, show one's runs, or find regressions between comparable runs.",
     "{\"type\":\"object\",\"properties\":{\"action\":{\"enum\":[\"list\",\"show\","
     "\"regressions\"]},\"name\":{\"type\":\"string\"}},\"required\":[\"action\"],"
     "\"additionalProperties\":false}",
     NULL, RO | IDEMPOTENT},
    {"report", "One report of the loop's evidence",
     "A Markdown report from findings, summaries and verdicts (default: the loop's "
     "evidence).",
     "{\"type\":\"object\",\"properties\":{\"inputs\":" STR_ARRAY "}},"
     "\"additionalProperties\":false}",
     NULL, RO | IDEMPOTENT},
};

/* An output schema: perfloop's own, without the keys that name its draft
 * and id (a client validates it as a plain schema). */
static json_t *output_schema(const char *name)
{
	if (name[0] == '{') /* written here: a document without a schema file */
		return json_loads(name, 0, NULL);
	char path[128];
	snprintf(path, sizeof path, "docs/schemas/%s.schema.json", name);
	for (size_t i = 0; pl_schema_files[i].path; i++)
		if (!strcmp(pl_schema_files[i].path, path)) {
			json_t *s = json_loads(pl_schema_files[i].text, 0, NULL);
			if (s) {
				json_object_del(s, "$schema");
				json_object_del(s, "$id");
			}
			return s;
		}
	return NULL;
}

static json_t *tool_list(void)
{
	json_t *a = json_array();
	for (size_t i = 0; i < sizeof tools / sizeof tools[0]; i++) {
		const struct tool *t = &tools[i];
		json_t *schema = json_loads(t->schema, 0, NULL);
		json_t *o = json_pack(
		    "{s:s, s:s, s:s, s:o, s:{s:s, s:b, s:b, s:b, s:b}}", "name", t->name, "title",
		    t->title, "description", t->description, "inputSchema",
		    schema ? schema : json_object(), "annotations", "title", t->title,
		    "readOnlyHint", (t->hints & RO) != 0, "destructiveHint",
		    (t->hints & DESTRUCTIVE) != 0, "idempotentHint", (t->hints & IDEMPOTENT) != 0,
		    "openWorldHint", (t->hints & OPEN) != 0);
		json_t *out = t->output ? output_schema(t->output) : NULL;
		if (out)
			json_object_set_new(o, "outputSchema", out);
		json_array_append_new(a, o);
	}
	return a;
}

/* A JSON document under the root, read without following a symlink. */
static json_t *load_file(const struct server *S, const char *rel)
{
	size_t n = 0;
	char *text = read_in_root(S, rel, &n);
	json_t *doc = text ? json_loadb(text, n, 0, NULL) : NULL;
	free(text);
	return doc;
}

/* A tool's result: the document and a text. A tool whose output schema
 * promises a document and has none (baseline refusing a noisy
 * measurement) failed as far as its caller can tell: isError. */
static json_t *tool_result(int rc, const char *out, const char *errtext, json_t *doc,
			   int promised)
{
	struct pl_strbuf t = {0};
	if (rc < 0)
		pl_strbuf_puts(&t, "perfloop could not run or was killed\n");
	else if (rc >= 2)
		pl_strbuf_printf(&t, "exit %d\n", rc);
	if (!doc && out && *out)
		pl_strbuf_puts(&t, out);
	if (errtext && *errtext)
		pl_strbuf_puts(&t, errtext);
	if (doc && !t.s)
		pl_strbuf_puts(&t, "ok (the document is in structuredContent)");
	char *text = pl_strbuf_take(&t);
	if (text)
		utf8_clean(text);
	json_t *r = json_pack("{s:[{s:s, s:s}], s:b}", "content", "type", "text", "text",
			      text ? text : "", "isError",
			      rc < 0 || rc >= 2 || (promised && !json_is_object(doc)));
	free(text);
	if (doc && json_is_object(doc))
		json_object_set(r, "structuredContent", doc);
	return r;
}

/* The arguments of tool name into a perfloop command line (a), or a
 * complaint about them. json_out: the command prints its document. No
 * string from the client is an element of its own where an option could
 * be read: values are "--option=VALUE", operands come after "--" (every
 * command's getopt_long stops there), and bench's command lines, which
 * bench reads as operands with "--" meaning something else, cannot start
 * with '-'. */
static const char *build(struct server *S, const char *name, json_t *args, struct argv_b *a,
			 int *json_out)
{
	const char *bad = NULL;
	*json_out = 1;
	if (!strcmp(name, "scan")) {
		add(a, "scan");
		add(a, "--format=json");
		add_flag(a, args, "advisory", "--advisory");
		if ((bad = add_strings(S, a, args, "select", "--select", 0)))
			return bad;
		add(a, "--");
		bad = add_strings(S, a, args, "paths", NULL, 1);
	} else if (!strcmp(name, "bench")) {
		add(a, "bench");
		add(a, "--json");
		add(a, "--no-history");
		if ((bad = add_number(a, args, "runs", "--runs", 2, 1e9, 1)) ||
		    (bad = add_number(a, args, "max_time", "--max-time", 1e-9, 1e9, 0)))
			return bad;
		json_t *cs = json_object_get(args, "commands");
		if (!json_is_array(cs) || !json_array_size(cs))
			return "commands: required, an array of command lines";
		size_t i;
		json_t *x;
		json_array_foreach(cs, i, x) /* each a command line, never an option */
		if (json_is_string(x) && json_string_value(x)[0] == '-')
			return "commands: a command cannot start with '-'";
		bad = add_strings(S, a, args, "commands", NULL, 0);
	} else if (!strcmp(name, "profile")) {
		json_t *cmd = json_object_get(args, "command"), *pid = json_object_get(args, "pid");
		json_t *mode = json_object_get(args, "mode");
		if (!json_is_number(json_object_get(args, "duration")))
			return "duration: required (seconds, at most 600)";
		if (!!cmd == !!pid)
			return "one of command (an argv array) or pid";
		if (mode && (!json_is_string(mode) ||
			     !strstr(" auto python native mixed ", json_string_value(mode)) ||
			     strchr(json_string_value(mode), ' ') || !*json_string_value(mode)))
			return "mode: auto, python, native or mixed";
		if (cmd && (!json_is_array(cmd) || !json_array_size(cmd)))
			return "command: an argv array";
		char dir[PATH_MAX + 32];
		snprintf(dir, sizeof dir, "%s/.perfloop", S->root);
		mkdir(dir, 0777);
		snprintf(dir, sizeof dir, "%s/.perfloop/mcp", S->root);
		mkdir(dir, 0777);
		add(a, "profile");
		add(a, "--out=.perfloop/mcp/profile");
		add(a, "--format=folded,svg,findings");
		if ((bad = add_number(a, args, "duration", "--duration", 1e-3, 600, 0)) ||
		    (bad = add_number(a, args, "rate", "--rate", 1, 20000, 0)) ||
		    (bad = add_number(a, args, "pid", "--pid", 1, 4194304, 1)))
			return bad;
		if (mode)
			add_opt(a, "--mode", json_string_value(mode));
		add_flag(a, args, "idle", "--idle");
		add_flag(a, args, "gil", "--gil");
		add_flag(a, args, "subprocesses", "--subprocesses");
		if (cmd) {
			add(a, "--");
			bad = add_strings(S, a, args, "command", NULL, 0);
		}
		*json_out = 0;
	} else if (!strcmp(name, "select")) {
		add(a, "select");
		if (!json_object_get(args, "findings"))
			return "findings: required";
		bad = add_strings(S, a, args, "findings", "--findings", 1);
	} else if (!strcmp(name, "verify")) {
		add(a, "verify");
		add(a, "--json");
		if (!json_is_string(json_object_get(args, "before")) ||
		    !json_is_string(json_object_get(args, "after")))
			return "before, after: required strings (summary files)";
		if (!(bad = add_strings(S, a, args, "before", "--before", 1)) &&
		    !(bad = add_strings(S, a, args, "after", "--after", 1)))
			bad = add_number(a, args, "min_gain", "--min-gain", 0, 0.999999, 0);
	} else if (!strcmp(name, "baseline")) {
		add(a, "baseline");
		json_t *bs = json_object_get(args, "benches");
		json_t *names = json_object_get(args, "names");
		if (!json_is_array(bs) || !json_array_size(bs))
			return "benches: required, an array of command lines";
		if (names && (!json_is_array(names) || json_array_size(names) > json_array_size(bs)))
			return "names: an array, one per bench at most";
		for (size_t i = 0; i < json_array_size(bs); i++) {
			json_t *n = json_array_get(names, i), *b = json_array_get(bs, i);
			if ((n && !json_is_string(n)) || !json_is_string(b))
				return "benches, names: strings";
			if (n)
				add_opt(a, "--name", json_string_value(n));
			add_opt(a, "--bench", json_string_value(b));
		}
		json_t *suite = json_object_get(args, "suite");
		if (suite && !json_is_string(suite))
			return "suite: a command line";
		if (suite)
			add_opt(a, "--suite", json_string_value(suite));
		if ((bad = add_number(a, args, "runs", "--runs", 3, 1e9, 1)) ||
		    (bad = add_number(a, args, "max_iterations", "--max-iterations", 1, 1e6, 1)) ||
		    (bad = add_number(a, args, "min_gain", "--min-gain", 0, 0.999999, 0)))
			return bad;
		bad = add_number(a, args, "timeout", "--timeout", 1e-3, 1e9, 0);
		*json_out = 0;
	} else if (!strcmp(name, "try")) {
		add(a, "try");
		json_t *m = json_object_get(args, "message");
		if (m && !json_is_string(m))
			return "message: a string";
		if (m)
			add_opt(a, "--message", json_string_value(m));
		add_flag(a, args, "continue", "--continue");
		*json_out = 0;
	} else if (!strcmp(name, "checkpoint")) {
		add(a, "checkpoint");
		add(a, "--json");
	} else if (!strcmp(name, "revert")) {
		add(a, "revert");
		add(a, "--json");
		add_flag(a, args, "dry_run", "--dry-run");
	} else if (!strcmp(name, "status")) {
		add(a, "status");
		add(a, "--json");
	} else if (!strcmp(name, "history")) {
		json_t *act = json_object_get(args, "action"), *n = json_object_get(args, "name");
		const char *v = json_is_string(act) ? json_string_value(act) : "";
		if (strcmp(v, "list") && strcmp(v, "show") && strcmp(v, "regressions"))
			return "action: list, show or regressions";
		if (!strcmp(v, "show") && !json_is_string(n))
			return "name: the benchmark to show";
		add(a, "history");
		add(a, "--"); /* a name such as "--db=/x" is a name */
		add(a, v);
		if (!strcmp(v, "show"))
			add(a, json_string_value(n));
		*json_out = 0;
	} else if (!strcmp(name, "report")) {
		add(a, "report");
		add(a, "--format=md");
		add(a, "--");
		*json_out = 0;
		bad = add_strings(S, a, args, "inputs", NULL, 1);
	} else {
		return "unknown tool (tools/list names them)";
	}
	if (!bad && a->full)
		bad = "too many arguments";
	return bad;
}

/* The document of a tool that writes files rather than printing it. */
static json_t *written_doc(struct server *S, const char *name)
{
	if (!strcmp(name, "baseline"))
		return load_file(S, ".perfloop/baseline.json");
	if (!strcmp(name, "profile"))
		return load_file(S, ".perfloop/mcp/profile.findings.json");
	if (!strcmp(name, "try")) { /* the turn, and its verdict where one was kept */
		json_t *loop = load_file(S, ".perfloop/loop.json");
		json_t *turns = json_object_get(loop, "turns");
		json_t *turn = json_array_get(turns, json_array_size(turns) - 1);
		json_t *doc = json_pack("{s:O, s:O, s:O}", "turn", turn ? turn : json_null(),
					"iteration", json_object_get(loop, "iteration"), "done",
					json_object_get(loop, "done") ? json_object_get(loop, "done")
								      : json_false());
		const char *ev = json_string_value(json_object_get(turn, "evidence"));
		size_t n = ev ? strlen(ev) : 0;
		if (n > 5 && n < 200 && !strcmp(ev + n - 5, ".json")) {
			char v[256];
			snprintf(v, sizeof v, "%.*s.verdict.json", (int)(n - 5), ev);
			json_t *vd = load_file(S, v);
			if (vd)
				json_object_set_new(doc, "verdict", vd);
		}
		json_decref(loop);
		return doc;
	}
	return NULL;
}

static const struct tool *find_tool(const char *name)
{
	for (size_t i = 0; i < sizeof tools / sizeof tools[0]; i++)
		if (!strcmp(tools[i].name, name))
			return &tools[i];
	return NULL;
}

/* tools/call: the result, or NULL with *bad (then a JSON-RPC error). A
 * cancelled call returns NULL with *bad NULL: no answer is sent. */
static json_t *call_tool(struct server *S, const char *name, json_t *args, const char **bad)
{
	struct argv_b a = {0};
	const struct tool *t = find_tool(name);
	add(&a, "perfloop");
	int json_out;
	*bad = NULL;
	if (args && !json_is_object(args)) {
		*bad = "arguments: expected an object";
		return NULL;
	}
	char why[400];
	if (t && state_dir_problem(S, why, sizeof why)) /* refused before anything runs */
		return tool_result(2, NULL, why, NULL, 0);
	if ((*bad = build(S, name, args, &a, &json_out))) {
		argv_b_release(&a);
		return NULL;
	}
	char *out, *errtext;
	int rc = run_self(S, name, t && (t->hints & STATEFUL), a.v, &out, &errtext);
	argv_b_release(&a);
	json_t *doc = json_out && out ? json_loads(out, 0, NULL) : NULL;
	if (!doc && rc >= 0 && rc < 2)
		doc = written_doc(S, name);
	if (doc && json_is_object(doc))
		json_object_set(S->last, name, doc);
	json_t *r = NULL;
	if (!S->cancelled)
		r = tool_result(rc, out, errtext, doc, t && t->output);
	json_decref(doc);
	free(out);
	free(errtext);
	return r;
}

/* ---- resources ---- */

struct resource {
	char uri[160];
	char rel[PATH_MAX]; /* the file, under the root; "" for a document in memory */
	const char *mime;
};

/* Whether rel is a regular file under the root, reached through no
 * symlink (open_in_root): 0, or -1. */
static int readable(const struct server *S, const char *rel)
{
	struct stat st;
	int fd = open_in_root(S, rel, 0, &st);
	if (fd < 0)
		return -1;
	close(fd);
	return 0;
}

/* What uri names, if it is one of the loop's: 0, or -1. */
static int resource_of(struct server *S, const char *u, struct resource *r)
{
	snprintf(r->uri, sizeof r->uri, "%s", u);
	r->rel[0] = '\0';
	r->mime = "application/json";
	if (!strncmp(u, "perfloop://last/", 16)) {
		char name[64];
		const char *n = u + 16, *dot = strstr(n, ".json");
		if (!dot || dot[5] || dot - n >= (long)sizeof name)
			return -1;
		snprintf(name, sizeof name, "%.*s", (int)(dot - n), n);
		return json_object_get(S->last, name) ? 0 : -1;
	}
	if (!strcmp(u, "perfloop://profile/last.svg") || !strcmp(u, "perfloop://profile/last.folded") ||
	    !strcmp(u, "perfloop://profile/last.findings.json")) {
		const char *ext = u + strlen("perfloop://profile/last");
		snprintf(r->rel, sizeof r->rel, ".perfloop/mcp/profile%s", ext);
		r->mime = !strcmp(ext, ".svg")	    ? "image/svg+xml"
			  : !strcmp(ext, ".folded") ? "text/plain"
						    : "application/json";
		return readable(S, r->rel);
	}
	if (!strcmp(u, "perfloop://loop/ledger.jsonl")) {
		json_t *loop = load_file(S, ".perfloop/loop.json");
		const char *l = json_string_value(json_object_get(loop, "ledger"));
		size_t rn = strlen(S->root);
		if (l && l[0] == '/') /* absolute: only inside the root */
			l = !strncmp(l, S->root, rn) && l[rn] == '/' ? l + rn + 1 : NULL;
		int ok = l && strlen(l) < sizeof r->rel;
		if (ok)
			snprintf(r->rel, sizeof r->rel, "%s", l);
		json_decref(loop);
		r->mime = "application/x-ndjson";
		return ok ? readable(S, r->rel) : -1;
	}
	if (strncmp(u, "perfloop://loop/", 16))
		return -1;
	const char *n = u + 16;
	size_t len = strlen(n);
	if (!len || len > 100 || n[0] == '.' || len < 6 || strcmp(n + len - 5, ".json") ||
	    strspn(n, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_.-") != len)
		return -1;
	snprintf(r->rel, sizeof r->rel, ".perfloop/%s", n);
	return readable(S, r->rel);
}

static json_t *resource_list(struct server *S)
{
	json_t *a = json_array();
	struct pl_strbuf names = {0};
	struct stat st;
	int fd = open_in_root(S, ".perfloop", 1, &st); /* not a symlinked one */
	DIR *d = fd >= 0 ? fdopendir(fd) : NULL;
	if (fd >= 0 && !d)
		close(fd);
	struct dirent *e;
	while (d && (e = readdir(d))) { /* the loop's documents and verdicts */
		size_t n = strlen(e->d_name);
		if (n > 5 && n <= 100 && e->d_name[0] != '.' && !strcmp(e->d_name + n - 5, ".json"))
			pl_strbuf_printf(&names, "perfloop://loop/%s\n", e->d_name);
	}
	if (d)
		closedir(d);
	pl_strbuf_puts(&names, "perfloop://loop/ledger.jsonl\nperfloop://profile/last.svg\n"
			       "perfloop://profile/last.folded\nperfloop://profile/last.findings.json\n");
	const char *k;
	json_t *v;
	json_object_foreach(S->last, k, v) pl_strbuf_printf(&names, "perfloop://last/%s.json\n", k);
	char *all = pl_strbuf_take(&names);
	for (char *line = all, *nl; line && (nl = strchr(line, '\n')); line = nl + 1) {
		*nl = '\0';
		struct resource r;
		if (resource_of(S, line, &r) == 0) /* a symlink is not listed: never read */
			json_array_append_new(a, json_pack("{s:s, s:s, s:s}", "uri", r.uri, "name",
							   strrchr(r.uri, '/') + 1, "mimeType",
							   r.mime));
	}
	free(all);
	return a;
}

static void resource_read(struct server *S, json_t *id, json_t *params)
{
	json_t *uri = json_object_get(params, "uri");
	struct resource r;
	if (!json_is_string(uri) || resource_of(S, json_string_value(uri), &r) < 0) {
		send_error(id, -32002, "resource not found");
		return;
	}
	char *text = NULL;
	if (!r.rel[0]) {
		const char *n = r.uri + 16;
		char name[64];
		snprintf(name, sizeof name, "%.*s", (int)(strstr(n, ".json") - n), n);
		text = json_dumps(json_object_get(S->last, name), JSON_INDENT(1));
	} else if (!(text = read_in_root(S, r.rel, NULL))) {
		send_error(id, -32002, "resource not found (or over 32 MiB)");
		return;
	} else {
		utf8_clean(text);
	}
	send_result(id, json_pack("{s:[{s:s, s:s, s:s}]}", "contents", "uri", r.uri, "mimeType",
				  r.mime, "text", text ? text : ""));
	free(text);
}

static const char optimize_prompt[] =
    "You are optimizing this project's performance with perfloop's loop. Rules: "
    "measure first (bench, then baseline); find the bottleneck (scan, then profile); "
    "work on the one finding select chooses (algorithm first: level 1 before 2 ... "
    "before 8; a high-severity algorithmic finding closes the stop gate; level 7 never "
    "while a level 1-6 finding is open); change one thing; measure again with try, which "
    "runs verify against the baseline and keeps the change only when the verdict accepts (a p50 gain of at least 5%, neither run "
    "noisy, the same machine, the functional suite passing, no other dimension worse) "
    "and reverts it otherwise. Never edit after a rejected turn without a new idea. "
    "Stop after the iteration bound (try says the loop is done) or when nothing is "
    "left to win.";

static void handle(struct server *S, json_t *msg)
{
	json_t *id = json_object_get(msg, "id");
	json_t *method = json_object_get(msg, "method");
	if (!json_is_object(msg) || !json_is_string(method) ||
	    !json_is_string(json_object_get(msg, "jsonrpc")) ||
	    strcmp(json_string_value(json_object_get(msg, "jsonrpc")), "2.0") ||
	    (id && !json_is_string(id) && !json_is_integer(id))) {
		/* a response from the client, or not a request at all */
		if (json_is_object(msg) && !method &&
		    (json_object_get(msg, "result") || json_object_get(msg, "error")))
			return;
		send_error(json_is_string(id) || json_is_integer(id) ? id : NULL, -32600,
			   "invalid request");
		return;
	}
	const char *m = json_string_value(method);
	if (!id) /* a notification: initialized, cancelled (control()), ...: nothing to say */
		return;
	json_t *params = json_object_get(msg, "params");
	if (params && !json_is_object(params)) {
		send_error(id, -32602, "params: expected an object");
		return;
	}
	if (!strcmp(m, "initialize")) {
		json_t *v = json_object_get(params, "protocolVersion");
		send_result(id, json_pack("{s:s, s:{s:{}, s:{}, s:{}}, s:{s:s, s:s}, s:s}",
					  "protocolVersion", json_is_string(v) ? json_string_value(v)
									       : PROTOCOL,
					  "capabilities", "tools", "resources", "prompts",
					  "serverInfo", "name", "perfloop", "version",
					  PERFLOOP_VERSION, "instructions", optimize_prompt));
	} else if (!strcmp(m, "ping")) {
		send_result(id, json_object());
	} else if (!strcmp(m, "tools/list")) {
		send_result(id, json_pack("{s:o}", "tools", tool_list()));
	} else if (!strcmp(m, "tools/call")) {
		json_t *name = json_object_get(params, "name");
		if (!json_is_string(name)) {
			send_error(id, -32602, "params.name: expected a tool name");
			return;
		}
		const char *bad;
		S->run_id = id;
		S->progress = json_object_get(json_object_get(params, "_meta"), "progressToken");
		if (S->progress && !json_is_string(S->progress) && !json_is_integer(S->progress))
			S->progress = NULL;
		S->progress_n = 0;
		S->cancelled = 0;
		json_t *r = call_tool(S, json_string_value(name),
				      json_object_get(params, "arguments"), &bad);
		S->run_id = S->progress = NULL;
		if (r) {
			send_result(id, r);
		} else if (bad) {
			char msgbuf[300];
			snprintf(msgbuf, sizeof msgbuf, "%s: %s", json_string_value(name), bad);
			send_error(id, -32602, msgbuf);
		} /* else cancelled: no answer (the client has moved on) */
	} else if (!strcmp(m, "resources/list")) {
		send_result(id, json_pack("{s:o}", "resources", resource_list(S)));
	} else if (!strcmp(m, "resources/read")) {
		resource_read(S, id, params);
	} else if (!strcmp(m, "prompts/list")) {
		send_result(id, json_pack("{s:[{s:s, s:s}]}", "prompts", "name", "optimize",
					  "description", "the loop's rules, for the agent using the tools"));
	} else if (!strcmp(m, "prompts/get")) {
		json_t *name = json_object_get(params, "name");
		if (!json_is_string(name) || strcmp(json_string_value(name), "optimize")) {
			send_error(id, -32602, "params.name: no such prompt (prompts/list)");
			return;
		}
		send_result(id, json_pack("{s:s, s:[{s:s, s:{s:s, s:s}}]}", "description",
					  "the loop's rules", "messages", "role", "user", "content",
					  "type", "text", "text", optimize_prompt));
	} else {
		send_error(id, -32601, "method not found");
	}
}

int cmd_mcp(int argc, char **argv, const struct pl_ctx *ctx)
{
	(void)ctx;
	for (int i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "-h") || !strcmp(argv[i], "--help")) {
			fputs(cmd_mcp_usage, stdout);
			return PL_EXIT_OK;
		}
		return pl_die(PL_EXIT_USAGE, "mcp: unexpected argument '%s'", argv[i]);
	}
	struct server *S = calloc(1, sizeof *S);
	char cwd[PATH_MAX];
	if (!S || !getcwd(cwd, sizeof cwd) || !realpath(cwd, S->root))
		return pl_die(PL_EXIT_INTERNAL, "mcp: cannot read the current directory");
	S->queue = json_array();
	S->last = json_object();
	signal(SIGPIPE, SIG_IGN);
	for (;;) {
		if (json_array_size(S->queue)) {
			json_t *msg = json_incref(json_array_get(S->queue, 0));
			json_array_remove(S->queue, 0);
			if (is_method(msg, "notifications/cancelled"))
				control(S, 0); /* of nothing running: nothing to do */
			else
				handle(S, msg);
			json_decref(msg);
			continue;
		}
		if (S->eof)
			break;
		struct pollfd in = {0, POLLIN, 0};
		if (poll(&in, 1, -1) < 0 && errno != EINTR)
			break;
		read_input(S);
		control(S, 0); /* a cancellation of a request still queued */
	}
	json_decref(S->queue);
	json_decref(S->last);
	free(S->in);
	free(S);
	return PL_EXIT_OK;
}
