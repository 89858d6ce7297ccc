/*
 * The user's repository, handled so that no work is ever lost: a checkpoint
 * records the pre-change state without touching the working tree, the index
 * or refs/stash, and a revert restores from it only the files the change
 * touched, deleting nothing. git runs as a program (argv, no shell) with
 * --literal-pathspecs, and every call's exit status is checked.
 */
#ifndef PL_GITOPS_H
#define PL_GITOPS_H

#include <jansson.h>
#include <stddef.h>

#include "error.h"

#define PL_CHECKPOINT_SCHEMA "perfloop.checkpoint/1"

struct pl_git {
	char top[4096]; /* the work tree's top directory */
};

/* Find the repository containing dir; refuse a bare repository, one without
 * a commit, and one in the middle of a merge, rebase, cherry-pick, revert or
 * bisect. */
int pl_git_open(struct pl_git *g, const char *dir, struct pl_error *err);

/* The top of the work tree containing dir, without the checks of
 * pl_git_open; -1 outside a repository. */
int pl_git_toplevel(const char *dir, char *out, size_t len);

/* Create TOP/.perfloop (ignored by git through its own .gitignore). */
int pl_perfloop_dir(const struct pl_git *g, char *out, size_t len, struct pl_error *err);

/* Record a checkpoint in TOP/.perfloop/checkpoint.json. */
int pl_checkpoint_create(const struct pl_git *g, json_t **out, struct pl_error *err);

struct pl_revert_result {
	char **restored; /* paths put back as they were */
	size_t nrestored;
	char **created; /* paths the change created: listed, never deleted */
	size_t ncreated;
};

/* Restore the files the change touched since the checkpoint. dry_run only
 * computes the lists. PL_EINPUT when there is no checkpoint. */
int pl_checkpoint_revert(const struct pl_git *g, int dry_run, struct pl_revert_result *res,
			 struct pl_error *err);
void pl_revert_result_release(struct pl_revert_result *r);

#endif
