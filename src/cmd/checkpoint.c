/*
 * perfloop checkpoint and perfloop revert: thin shells over lib/gitops.c.
 */
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cmd.h"
#include "fsio.h"
#include "gitops.h"

const char cmd_checkpoint_usage[] =
    "usage: perfloop checkpoint [-C DIR] [--json]\n"
    "\n"
    "Record the state before a change, without touching the working tree, the\n"
    "index or refs/stash: the tracked files as a commit (what 'git stash\n"
    "create' makes; HEAD when nothing tracked is modified) kept alive by\n"
    "refs/perfloop/checkpoint, and every untracked, non-ignored file stored as\n"
    "a git blob. It goes in .perfloop/checkpoint.json, a directory that git\n"
    "ignores through its own .perfloop/.gitignore. A new checkpoint replaces\n"
    "the previous one.\n"
    "\n"
    "Options:\n"
    "  -C DIR      the repository (default: the current directory)\n"
    "      --json  print the checkpoint document\n"
    "  -h, --help  this text\n"
    "\n"
    "Exit status: 0 ok, 2 not a repository, no commit yet, or in the middle of\n"
    "a merge, rebase, cherry-pick, revert or bisect.\n"
    "\n"
    "Examples:\n"
    "  perfloop checkpoint\n"
    "  perfloop checkpoint -C ~/src/app\n";

const char cmd_revert_usage[] =
    "usage: perfloop revert [-C DIR] [--dry-run] [--json]\n"
    "\n"
    "Undo the change made since 'perfloop checkpoint', touching only the files\n"
    "the change touched (a rename counts as both paths): each one that existed\n"
    "at the checkpoint gets back its bytes, mode and index entry. Never the\n"
    "whole tree, never a stash pop, and nothing is deleted: files the change\n"
    "created are listed for you to remove. Ignored files are not part of a\n"
    "checkpoint and are left alone.\n"
    "\n"
    "Options:\n"
    "  -C DIR         the repository (default: the current directory)\n"
    "  -n, --dry-run  only say what would be restored and what was created\n"
    "      --json     print {\"restored\": [...], \"created\": [...]}\n"
    "  -h, --help     this text\n"
    "\n"
    "Exit status: 0 ok, 2 no checkpoint, not a repository, or a repository in\n"
    "the middle of a merge or rebase.\n"
    "\n"
    "Examples:\n"
    "  perfloop revert --dry-run\n"
    "  perfloop revert\n";

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
		rc = pl_checkpoint_create(&g, &doc, &err);
	if (rc != PL_OK)
		return pl_die(pl_exit_code(rc), "%s", err.msg);
	if (json) {
		char *text = pl_json_text(doc);
		if (text)
			fputs(text, stdout);
		free(text);
	} else {
		printf("checkpoint %.12s: tracked state%s, %zu untracked file%s recorded in "
		       ".perfloop/checkpoint.json\n",
		       json_string_value(json_object_get(doc, "worktree")),
		       strcmp(json_string_value(json_object_get(doc, "worktree")),
			      json_string_value(json_object_get(doc, "head")))
			   ? " with uncommitted edits"
			   : " (clean: HEAD)",
		       json_array_size(json_object_get(doc, "untracked")),
		       json_array_size(json_object_get(doc, "untracked")) == 1 ? "" : "s");
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
	if (rc == PL_OK)
		rc = pl_checkpoint_revert(&g, dry, &r, &err);
	if (rc != PL_OK)
		return pl_die(pl_exit_code(rc), "%s", err.msg);
	if (json) {
		json_t *a = json_array(), *b = json_array();
		for (size_t i = 0; i < r.nrestored; i++)
			json_array_append_new(a, json_string(r.restored[i]));
		for (size_t i = 0; i < r.ncreated; i++)
			json_array_append_new(b, json_string(r.created[i]));
		json_t *doc =
		    json_pack("{s:b, s:o, s:o}", "dry_run", dry, "restored", a, "created", b);
		char *text = pl_json_text(doc);
		if (text)
			fputs(text, stdout);
		free(text);
		json_decref(doc);
	} else {
		printf("%s %zu file%s%s\n", dry ? "would restore" : "restored", r.nrestored,
		       r.nrestored == 1 ? "" : "s", r.nrestored ? ":" : "");
		for (size_t i = 0; i < r.nrestored; i++)
			printf("  %s\n", r.restored[i]);
		if (r.ncreated) {
			printf("created by the change (left in place; remove them if unwanted):\n");
			for (size_t i = 0; i < r.ncreated; i++)
				printf("  %s\n", r.created[i]);
		}
	}
	pl_revert_result_release(&r);
	return PL_EXIT_OK;
}
