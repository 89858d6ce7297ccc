/*
 * perfloop checkpoint and perfloop revert: thin shells over loop/checkpoint.c and loop/revert.c.
 */
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cmd.h"
#include "fsio.h"
#include "gitops.h"
#include "loop.h"

const char cmd_checkpoint_usage[] =
    "usage: perfloop checkpoint [-C DIR] [--json]\n"
    "\n"
    "Record the state before a change, byte for byte, without touching the\n"
    "working tree, the index, refs/stash or git's index lock: every tracked and\n"
    "every untracked, non-ignored path as what it is on disk (a file with its\n"
    "exact bytes and mode, a symlink with its target, a submodule or nested\n"
    "repository by its HEAD and status), any name, no filter applied; a copy\n"
    "of git's index; and the list of ignored paths. The bytes are kept by\n"
    "refs/perfloop/checkpoint, the record in .perfloop/checkpoint.json, a\n"
    "directory git ignores through its own .perfloop/.gitignore. A new\n"
    "checkpoint replaces the previous one. What cannot be recorded exactly (a\n"
    "FIFO or device, an unreadable file, an unresolved conflict, a split\n"
    "index) is refused by name, never recorded in part. An untracked file\n"
    "larger than 64 MiB (PERFLOOP_CHECKPOINT_MAX_FILE: bytes, or with K, M, G)\n"
    "is recorded by its hash only, not copied into .git each time it changes;\n"
    "a revert then says it changed and leaves it.\n"
    "\n"
    "Options:\n"
    "  -C DIR      the repository (default: the current directory)\n"
    "      --json  print the checkpoint document\n"
    "  -h, --help  this text\n"
    "\n"
    "Exit status: 0 ok; 2 not a repository, no commit yet, in the middle of a\n"
    "merge, rebase, cherry-pick, revert or bisect, or something that cannot\n"
    "be recorded; 4 git or the system failed (the message quotes why).\n"
    "\n"
    "Examples:\n"
    "  perfloop checkpoint\n"
    "  perfloop checkpoint -C ~/src/app\n";

const char cmd_revert_usage[] =
    "usage: perfloop revert [-C DIR] [--dry-run] [--json]\n"
    "\n"
    "Undo the change made since 'perfloop checkpoint': each path that differs\n"
    "from the checkpoint and existed then gets back its bytes, mode or symlink,\n"
    "written through real directories only, and git's index is put back as it\n"
    "was. Nothing is deleted: paths the change created are listed and left,\n"
    "and whatever stands where a restored path must go (a directory where a\n"
    "file was) is moved under .perfloop/displaced/. The tree as it was before\n"
    "the revert is kept as refs/perfloop/reverted ('git checkout\n"
    "refs/perfloop/reverted -- PATH' brings an undone edit back). Ignored\n"
    "files are left alone, whatever the change did to .gitignore; inside\n"
    "submodules and nested repositories nothing is restored: they are listed,\n"
    "and so are untracked files too large for the checkpoint to keep.\n"
    "\n"
    "Options:\n"
    "  -C DIR         the repository (default: the current directory)\n"
    "      --dry-run  only say what would be restored and what was created\n"
    "      --json     print {\"restored\": [...], \"created\": [...], ...}\n"
    "  -h, --help     this text\n"
    "\n"
    "Exit status: 0 ok; 2 no checkpoint, not a repository, a repository in\n"
    "the middle of a merge or rebase, or git's index locked by another\n"
    "process (nothing changed); 3 restored, but a submodule or nested\n"
    "repository changed and was left as it is; 4 git or the system failed.\n"
    "\n"
    "Examples:\n"
    "  perfloop revert --dry-run\n"
    "  perfloop revert\n";

/* JSON strings: names that are not UTF-8 are given quoted as git quotes them */
static json_t *strings(char **v, size_t n)
{
	json_t *a = json_array();
	for (size_t i = 0; i < n; i++) {
		json_t *s = json_string(v[i]);
		if (!s) {
			char *q = pl_git_quote(v[i]);
			s = json_string(q ? q : "?");
			free(q);
		}
		json_array_append_new(a, s);
	}
	return a;
}

static void print_paths(char **v, size_t n, int quote)
{
	for (size_t i = 0; i < n; i++) {
		char *q = quote ? pl_git_quote(v[i]) : NULL;
		printf("  %s\n", q ? q : v[i]);
		free(q);
	}
}

static int parse(int argc, char **argv, const char *cmd, const char *usage, const char **dir,
		 int *json, int *dry)
{
	static const struct option longopts[] = {
	    {"json", no_argument, NULL, 'j'},
	    {"dry-run", no_argument, NULL, 'n'},
	    {"help", no_argument, NULL, 'h'},
	    {NULL, 0, NULL, 0},
	};
	int c;
	optind = 1;
	opterr = 0;
	while ((c = getopt_long(argc, argv, dry ? ":C:nh" : ":C:h", longopts, NULL)) != -1) {
		switch (c) {
		case 'C':
			*dir = optarg;
			break;
		case 'j':
			*json = 1;
			break;
		case 'n':
			if (!dry)
				return pl_bad_option('?', argv, cmd);
			*dry = 1;
			break;
		case 'h':
			fputs(usage, stdout);
			return -1;
		case ':':
		default:
			return pl_bad_option(c, argv, cmd);
		}
	}
	if (optind < argc)
		return pl_die(PL_EXIT_USAGE, "unexpected argument '%s'", argv[optind]);
	return 0;
}

int cmd_checkpoint(int argc, char **argv, const struct pl_ctx *ctx)
{
	(void)ctx;
	const char *dir = ".";
	int json = 0;
	int prc = parse(argc, argv, "checkpoint", cmd_checkpoint_usage, &dir, &json, NULL);
	if (prc)
		return prc < 0 ? PL_EXIT_OK : prc;
	struct pl_git g;
	struct pl_error err;
	json_t *doc;
	int rc = pl_git_open(&g, dir, &err);
	if (rc == PL_OK)
		rc = pl_loop_lock(&g, &err);
	if (rc == PL_OK)
		rc = pl_checkpoint_create(&g, &doc, &err);
	if (rc != PL_OK)
		return pl_die(pl_exit_code(rc), "%s", err.msg);
	if (json) {
		char *text = pl_json_text(doc);
		if (text)
			fputs(text, stdout);
		free(text);
	} else {
		json_int_t nt = json_integer_value(json_object_get(doc, "tracked"));
		json_int_t nu = json_integer_value(json_object_get(doc, "untracked"));
		printf("checkpoint %.12s: %lld tracked and %lld untracked path%s recorded in "
		       ".perfloop/checkpoint.json\n",
		       json_string_value(json_object_get(doc, "commit")), (long long)nt,
		       (long long)nu, nt + nu == 1 ? "" : "s");
		size_t i, big = 0;
		json_t *e;
		json_array_foreach(json_object_get(doc, "entries"), i, e)
			big += json_is_false(json_object_get(e, "stored"));
		if (big)
			printf("%zu untracked file%s larger than %.0f MiB recorded by hash only (no "
			       "copy kept): a revert leaves %s; ignore data in .gitignore, or "
			       "raise PERFLOOP_CHECKPOINT_MAX_FILE\n",
			       big, big == 1 ? "" : "s", (double)pl_git_max_stored() / 1048576.0,
			       big == 1 ? "it as it is" : "them as they are");
	}
	json_decref(doc);
	return PL_EXIT_OK;
}

int cmd_revert(int argc, char **argv, const struct pl_ctx *ctx)
{
	(void)ctx;
	const char *dir = ".";
	int json = 0, dry = 0;
	int prc = parse(argc, argv, "revert", cmd_revert_usage, &dir, &json, &dry);
	if (prc)
		return prc < 0 ? PL_EXIT_OK : prc;
	struct pl_git g;
	struct pl_error err;
	struct pl_revert_result r;
	int rc = pl_git_open(&g, dir, &err);
	if (rc == PL_OK && !dry)
		rc = pl_loop_lock(&g, &err);
	if (rc == PL_OK)
		rc = pl_checkpoint_revert(&g, dry, &r, &err);
	if (rc != PL_OK)
		return pl_die(pl_exit_code(rc), "%s", err.msg);
	if (json) {
		json_t *doc = json_pack("{s:b, s:o, s:o, s:o, s:o, s:o, s:b, s:s?}", "dry_run", dry,
					"restored", strings(r.restored, r.nrestored), "created",
					strings(r.created, r.ncreated), "displaced",
					strings(r.displaced, r.ndisplaced), "not_restored",
					strings(r.kept, r.nkept), "not_kept",
					strings(r.unstored, r.nunstored), "index_restored",
					r.index_restored, "saved", r.saved[0] ? r.saved : NULL);
		pl_json_print(doc);
	} else {
		printf("%s %zu path%s%s\n", dry ? "would restore" : "restored", r.nrestored,
		       r.nrestored == 1 ? "" : "s", r.nrestored ? ":" : "");
		print_paths(r.restored, r.nrestored, 1);
		if (r.index_restored)
			printf("%s git's index as it was at the checkpoint\n",
			       dry ? "would put back" : "put back");
		if (r.ndisplaced) {
			printf("moved out of the way (nothing deleted):\n");
			print_paths(r.displaced, r.ndisplaced, 0);
		}
		if (r.ncreated) {
			printf("created by the change (left in place; remove them if unwanted):\n");
			print_paths(r.created, r.ncreated, 1);
		}
		if (r.nkept) {
			printf("not restored:\n");
			print_paths(r.kept, r.nkept, 0);
		}
		if (r.nunstored) {
			printf("changed, left as they are (untracked and larger than %.0f MiB, "
			       "so the checkpoint kept no copy):\n",
			       (double)pl_git_max_stored() / 1048576.0);
			print_paths(r.unstored, r.nunstored, 1);
		}
		if (r.saved[0])
			printf("the tree before this revert: refs/perfloop/reverted (%.12s)\n",
			       r.saved);
	}
	int code = r.nkept ? PL_EXIT_FAILED : PL_EXIT_OK;
	pl_revert_result_release(&r);
	return code;
}
