/*
 * Files written so that a reader never sees half of one: write to a
 * temporary name in the same directory, fsync, rename over the target.
 */
#ifndef PL_FSIO_H
#define PL_FSIO_H

#include <jansson.h>
#include <stddef.h>

#include "error.h"

/* The mode is the replaced file's, else what the umask gives a new file; a
 * symlink given as path is written through (its target replaced), never
 * replaced itself. */
int pl_fsio_write_atomic(const char *path, const void *data, size_t len, struct pl_error *err);

/* The same in two steps, for a file that must appear only if something
 * else succeeds: stage writes the temporary file, commit renames it into
 * place, discard removes it. */
struct pl_fsio_staged {
	char *tmp, *target;
};
int pl_fsio_stage(const char *path, const void *data, size_t len, struct pl_fsio_staged *st,
		  struct pl_error *err);
/* The same for a file made as it is written: write(fd, ctx) writes all of
 * it to fd, 0 or -1 with errno set. */
typedef int (*pl_fsio_writer)(int fd, void *ctx);
int pl_fsio_stage_with(const char *path, pl_fsio_writer write, void *ctx,
		       struct pl_fsio_staged *st, struct pl_error *err);
int pl_fsio_write_atomic_with(const char *path, pl_fsio_writer write, void *ctx,
			      struct pl_error *err);
int pl_fsio_commit(struct pl_fsio_staged *st, struct pl_error *err);
void pl_fsio_discard(struct pl_fsio_staged *st);

/* Whether path could be written (atomically: its directory writable):
 * found before minutes of measuring, not after. PL_EINPUT says why. */
int pl_fsio_check_writable(const char *path, struct pl_error *err);

/* A whole file, NUL-terminated (*len excludes the NUL); NULL on failure
 * with errno set, and *missing when it does not exist. */
char *pl_fsio_read(const char *path, size_t *len, int *missing);

/* Whether rel, a path taken from a file or a tool call, names something
 * inside a project tree: NULL if so, else why not (a static string). It must
 * be relative, without empty, "." or ".." components, and without a ".git"
 * component in any case (git refuses the same, as its hooks live there);
 * with own_state, nothing under .perfloop/ either. Symlinks are the
 * writer's to refuse (it must not follow one). */
const char *pl_relpath_check(const char *rel, int own_state);

/* perfloop's state directory, top/.perfloop (absent: fine): a real
 * directory holding only real directories and regular files, so that no
 * write of perfloop's lands through a symlink a clone shipped (a committed
 * .perfloop/checkpoint.json -> ~/.bashrc) and no read hangs on a FIFO.
 * displaced/ is not looked into: what a revert moved out of the way is
 * the user's, symlinks included. NULL, or what is wrong (in why). */
const char *pl_fsio_state_problem(const char *top, char *why, size_t len);

/* Open a file that must be a regular one, of at most max bytes (0: any):
 * a FIFO or device found in a project (pyproject.toml -> /dev/zero, a
 * FIFO named perfloop.yaml) is refused at once, never read or waited on.
 * The fd, or -1 with err set (PL_EINPUT; errno ENOENT where it is not
 * there). */
int pl_fsio_open_regular(const char *path, size_t max, struct pl_error *err);

/* write(2) all of buf, retrying short writes and EINTR; 0 or -1 (errno). */
int pl_fsio_write_all(int fd, const void *buf, size_t len);
/* fsync the directory holding path, so a rename into it is durable. */
void pl_fsio_sync_dir(const char *path);

/* Parse a JSON file (duplicate keys rejected); a parse error names the
 * file, line and column. */
int pl_json_load(const char *path, json_t **out, struct pl_error *err);

/* perfloop's JSON text: one-space indent, 12 significant digits, a final
 * newline. malloc'd; NULL when out of memory. */
char *pl_json_text(json_t *doc);
/* pl_json_text on stdout; takes the reference to doc. */
void pl_json_print(json_t *doc);
/* The first line of a file, without its newline; 0, or -1 if unreadable. */
int pl_fsio_first_line(const char *path, char *out, size_t len);
/* pl_json_text written atomically. */
int pl_fsio_write_json(const char *path, json_t *doc, struct pl_error *err);

#endif
