/*
 * Private to the repository code (gitops.c, checkpoint.c, revert.c): the
 * manifest (every path git would show the user, as it is on disk), git run
 * as a program, and the functions these files share. Callers outside them
 * use gitops.h. gitops.c holds the model and the repository; checkpoint.c
 * takes a manifest of the tree and commits one; revert.c writes one back.
 */
#ifndef PL_GITOPS_INT_H
#define PL_GITOPS_INT_H

#include <ftw.h>
#include <jansson.h>
#include <stddef.h>
#include <sys/stat.h>

#include "error.h"
#include "gitops.h"

/* ---- the manifest (gitops.c) ---- */

enum kind { K_FILE, K_LINK, K_REPO, K_OTHER };
extern const char *const pl_git_kind_name[]; /* by enum kind, as JSON writes it */

struct entry {
	char *path;
	enum kind kind;
	unsigned mode;	 /* st_mode & 07777 for files */
	char oid[48];	 /* blob (file, symlink) or HEAD (repository) */
	char state[24];	 /* repository: digest of its status */
	long long st[4]; /* size, mtime ns, ctime ns, inode: the hash cache key */
	int tracked;
	int hashed;   /* oid known */
	int leftover; /* created by a rejected turn and left in place: if the
		       * user deletes it, that is not a change to undo */
	int unstored; /* untracked and over pl_git_max_stored(): hashed (to see a
		       * change) but its bytes not kept, so never restored */
};

struct manifest {
	struct entry *v;
	size_t n, cap;
	char **ignored; /* sorted; directories end in '/' */
	size_t nignored, ignored_cap;
	long long taken_ns;
};

void pl_git_manifest_release(struct manifest *m);
int pl_git_cmp_entry(const void *a, const void *b);
int pl_git_cmp_str(const void *a, const void *b);
struct entry *pl_git_find_entry(const struct manifest *m, const char *path);
struct entry *pl_git_add_entry(struct manifest *m, const char *path, size_t len, int tracked);
/* Under a path the checkpoint recorded as ignored (a file, or a directory
 * ending in '/')? */
int pl_git_under_ignored(const struct manifest *m, const char *path);
/* The manifest of a checkpoint document (file names it in errors); each
 * path confined to the work tree. */
int pl_git_manifest_load(json_t *doc, const char *file, struct manifest *m, struct pl_error *err);
/* A path into a JSON object: "path", or "path_hex" where it is not UTF-8. */
void pl_git_set_path(json_t *o, const char *path);

/* ---- git (gitops.c) ---- */

/* git ARGS, with stdin (in: NULL for none) and its stdout kept in *out */
int pl_git_cmd_in(const struct pl_git *g, const char *index, const char *in, size_t inlen,
		  char **out, size_t *len, struct pl_error *err, char *const *args);
/* git with its arguments listed, NULL last */
int pl_git_cmd(const struct pl_git *g, const char *index, char **out, size_t *len,
	       struct pl_error *err, ...);
void pl_git_chomp(char *s);
/* git's index file, absolute (GIT_INDEX_FILE where set) */
int pl_git_index_file(const struct pl_git *g, char *out, size_t len, struct pl_error *err);
/* nftw's callback that removes what it walks (FTW_DEPTH | FTW_PHYS) */
int pl_git_rm_one(const char *p, const struct stat *st, int flag, struct FTW *f);

/* ---- the manifest of the tree (checkpoint.c) ---- */

/*
 * The manifest of the tree now, as git's index `index` (a path) sees it.
 * strict: refuse what cannot be recorded (checkpoint); otherwise record it
 * as K_OTHER, which differs from anything (revert). cache: ids to reuse for
 * files whose stat is unchanged. extra: paths to look at even when git no
 * longer lists them (the checkpoint's, for a revert).
 */
int pl_git_take_manifest(const struct pl_git *g, const char *index, int strict,
			 const struct manifest *cache, const struct manifest *extra,
			 struct manifest *m, struct pl_error *err);
/* A commit of the manifest's entries, built in a private index, so that
 * the blobs stay reachable (and a person can `git show` them). */
int pl_git_manifest_commit(const struct pl_git *g, const struct manifest *m, const char *msg,
			   char *commit, size_t clen, struct pl_error *err);

#endif
