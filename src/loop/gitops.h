/*
 * The user's repository, handled so that no work is ever lost: a checkpoint
 * records the pre-change state byte for byte without touching the working
 * tree, the index or refs/stash, and a revert restores from it only what
 * the change touched, deleting nothing the change created. git runs as a
 * program (argv, no shell, --literal-pathspecs); every call is checked and
 * its own error message kept for ours.
 */
#ifndef PL_GITOPS_H
#define PL_GITOPS_H

#include <jansson.h>
#include <stddef.h>

#include "error.h"
#include "gitrun.h"

#define PL_CHECKPOINT_SCHEMA "perfloop.checkpoint/2"

struct pl_git {
	char top[4096];	  /* the work tree's top directory */
	char index[4200]; /* git's index file, absolute ("" where not known yet) */
};

/* Find the repository containing dir; refuse a bare repository, one without
 * a commit, and one in the middle of a merge, rebase, cherry-pick, revert or
 * bisect. */
int pl_git_open(struct pl_git *g, const char *dir, struct pl_error *err);



/* pl_fsio_state_problem for the repository's .perfloop, after removing
 * the temporaries of reverts that were killed (pl_git_sweep_scratch). */
const char *pl_git_state_problem(const struct pl_git *g, char *why, size_t len);
void pl_git_sweep_scratch(const struct pl_git *g);

/* Create TOP/.perfloop (ignored by git through its own .gitignore). */
int pl_perfloop_dir(const struct pl_git *g, char *out, size_t len, struct pl_error *err);

/* Record a checkpoint in TOP/.perfloop/checkpoint.json; refuses (PL_EINPUT,
 * one line naming the path) whatever it cannot record exactly. */
int pl_checkpoint_create(const struct pl_git *g, json_t **out, struct pl_error *err);
/* The same, marking the paths in leftovers (files a rejected turn created
 * and left in place) so that a later revert does not bring one back once
 * the user deleted it; earlier marks carry over while a file is unchanged. */
int pl_checkpoint_create_ex(const struct pl_git *g, const char *const *leftovers, size_t nleft,
			    json_t **out, struct pl_error *err);

struct pl_revert_result {
	char **restored; /* paths put back as they were (or removed from the index) */
	size_t nrestored;
	char **created; /* paths the change created: listed, never deleted */
	size_t ncreated;
	char **displaced; /* "PATH -> .perfloop/displaced/..." moved out of the way */
	size_t ndisplaced;
	char **kept; /* "PATH: why" changed but not restorable (submodules) */
	size_t nkept;
	char **unstored; /* changed, but too large for the checkpoint to have
			  * kept its bytes: left as they are */
	size_t nunstored;
	int index_restored; /* the index was put back as at the checkpoint */
	char saved[64];	    /* commit holding the state before the revert */
};

/* Restore what the change touched since the checkpoint. dry_run only
 * computes the lists. PL_EINPUT when there is no checkpoint or git's index
 * is locked by another process (nothing is changed then). */
int pl_checkpoint_revert(const struct pl_git *g, int dry_run, struct pl_revert_result *res,
			 struct pl_error *err);
void pl_revert_result_release(struct pl_revert_result *r);

/* The largest untracked file whose bytes a checkpoint keeps:
 * PERFLOOP_CHECKPOINT_MAX_FILE (bytes, or with K, M or G), else 64 MiB. A
 * data file or model written by the program would otherwise be stored
 * again in .git at every checkpoint it changed in. */
long long pl_git_max_stored(void);

/* Paths recorded as ignored at the checkpoint, or ignored now: never to be
 * committed. *ignored[i] is set for each path (relative to top). */
/* A path in a JSON document: a string, or {"path_hex": ...} where the name
 * is not UTF-8 (JSON strings must be); and back (malloc'd; NULL if
 * neither). */
json_t *pl_git_path_json(const char *path);
char *pl_git_path_of(json_t *v);

int pl_git_ignored(const struct pl_git *g, char *const *paths, size_t n, unsigned char *ignored,
		   struct pl_error *err);

/* A path as people read it: itself when it is printable UTF-8, else quoted
 * the way git quotes it ("a\377b"). malloc'd. */
char *pl_git_quote(const char *path);

#endif
