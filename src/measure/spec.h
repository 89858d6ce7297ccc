/*
 * The workload spec, perfloop.yaml at the project root (read with
 * libyaml): named benchmarks, each the command, sizes, environment,
 * warm-up and runs every measurement of it uses, the suite, the ledger and
 * the loop's policy. docs/perfloop-yaml.md is the reference.
 *
 * A benchmark is turned into the options the command line would give
 * (pl_spec_bench_args), so nothing downstream knows the spec set them;
 * what it was is recorded in the summary as `spec` (pl_spec_bench_json):
 * the file, the benchmark's name, its settings and their hash, which
 * verify compares.
 */
#ifndef PL_SPEC_H
#define PL_SPEC_H

#include <jansson.h>
#include <stddef.h>

#include "error.h"
#include "words.h"

#define PL_SPEC_FILE "perfloop.yaml"

struct pl_spec_kv {
	char *key, *value;
};

struct pl_spec_bench {
	char *name;
	int line;
	char *cmd;
	int shell;		   /* run through sh -c */
	struct pl_spec_kv *params; /* NAME -> VALUES in -P's syntax */
	size_t nparams;
	size_t combos; /* the params' combinations so far (0 before the first) */
	struct pl_spec_kv *env;
	size_t nenv;
	int warmup;   /* -1: not given */
	int min_runs; /* -1: not given */
	char *expect; /* a complexity class, or NULL */
	char *target; /* the dimension verify improves, or NULL (timing) */
	char *metric; /* the program's own number (bench --metric), or NULL */
	char *metric_name; /* its dimension, or NULL */
	int higher_is_better;
	char hash[17];
};

struct pl_spec {
	char *path;
	char *suite, *ledger; /* or NULL */
	struct pl_spec_bench *bench;
	size_t nbench;
	double min_gain, max_cv; /* NAN: not given */
	int max_iterations;	 /* -1: not given */
};

/* Read path. PL_ENOENT where there is no such file; PL_EINPUT (one line
 * naming the file, line and key) for anything wrong in it. */
int pl_spec_load(const char *path, struct pl_spec *out, struct pl_error *err);
void pl_spec_release(struct pl_spec *s);

/* The project's spec file: perfloop.yaml in the working directory, else
 * at the root of the git work tree around it. 0 with its path, or -1. */
int pl_spec_find(char *path, size_t len);

const struct pl_spec_bench *pl_spec_get(const struct pl_spec *s, const char *name);

/* The bench options the benchmark stands for (--warmup, --min-runs, -P,
 * --expect, --shell; not its command), appended to out. */
int pl_spec_bench_args(const struct pl_spec_bench *b, struct pl_argv *out);

/* The benchmark as command strings for a loop (baseline), one per
 * combination of its parameters, with its names ("NAME k=1"): the values
 * substituted, its environment given through env(1) ("env 'K=V' CMD") and
 * a shell one through "sh -c 'CMD'". Appended to cmds and names. */
int pl_spec_commands(const struct pl_spec_bench *b, struct pl_argv *cmds, struct pl_argv *names,
		     struct pl_error *err);

/* {file, benchmark, hash, settings: {cmd, shell, params, env, warmup,
 * min_runs, expect, target}} for the summary. */
json_t *pl_spec_bench_json(const struct pl_spec *s, const struct pl_spec_bench *b);

/* The keys of settings whose values differ between two summaries' `spec`
 * objects, comma-separated into out ("" where none). */
void pl_spec_diff(json_t *a, json_t *b, char *out, size_t len);

#endif
