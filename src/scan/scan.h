/*
 * perfloop scan's engine: rules as data (rules/LANG/NAME.scm, embedded at
 * build time), tree-sitter parsing (Debian's libtree-sitter with the
 * Python and C grammars from the npm registry), query matching with the
 * predicates evaluated here (#eq?, #not-eq?, #match?, #not-match?: the
 * 0.20 library leaves them to the caller), context conditions ("in a
 * loop", "in a training loop", ...) and suppression comments.
 *
 * A rule file is `; key: value` header lines, example code in `;|` lines
 * after `; bad:` and `; good:`, then the query; the node captured as
 * @finding is what is reported (rules/README.md).
 */
#ifndef PL_SCAN_H
#define PL_SCAN_H

#include <stddef.h>
#include <stdint.h>

#include "error.h"
#include "findings.h"

enum pl_lang { PL_LANG_PYTHON, PL_LANG_C, PL_LANG_COUNT };

struct pl_rule;

struct TSQuery;

/* All rules of a language also run as one query (one pass over a tree):
 * pattern k of combined[lang] belongs to owner[lang][k]. */
struct pl_rules {
	struct pl_rule **v;
	size_t n;
	struct TSQuery *combined[PL_LANG_COUNT];
	struct pl_rule **owner[PL_LANG_COUNT];
	unsigned npatterns[PL_LANG_COUNT];
	struct pl_qm *matcher[PL_LANG_COUNT]; /* scanmatch.h; NULL: the query cursor */
	uint64_t source_hash; /* of every rule file's text */
};

/* Parse every embedded rule (pl_rules_compile compiles the queries: most
 * of a small scan's time, and not needed where every result is cached).
 * A bad rule is an internal error naming the file, line and field. */
int pl_rules_load(struct pl_rules *r, struct pl_error *err);
/* Compile the combined query of each language in langs (a bit per enum
 * pl_lang) not compiled yet, of the rules o runs (o NULL: all). The
 * rules o leaves out get no query: later calls must pass the same o. */
struct pl_scan_opts;
int pl_rules_compile(struct pl_rules *r, const struct pl_scan_opts *o, unsigned langs,
		     struct pl_error *err);
void pl_rules_release(struct pl_rules *r);
/* The rule with this id, or NULL. */
const struct pl_rule *pl_rules_find(const struct pl_rules *r, const char *id);

/* Rule fields for listing and documentation. */
struct pl_rule_info {
	const char *id, *title, *severity, *status, *rationale, *fix, *bad, *good, *lang, *path,
	    *when;
	const char *advisory; /* why it is off by default; NULL: on */
	const char *quiet;    /* what it deliberately does not flag */
	const char *lower_why; /* where it rates a finding one level lower; NULL */
	int level;
};
void pl_rule_info(const struct pl_rule *r, struct pl_rule_info *out);

/* Which rules run, and what is reported. */
/* Who matches the rules' patterns: scan's own matcher where it reads the
 * query, else tree-sitter's cursor; the cursor alone (a cross-check: the
 * same findings); or the own matcher, an error where it cannot. */
enum pl_scan_matcher { PL_MATCH_AUTO, PL_MATCH_CURSOR, PL_MATCH_OWN };

struct pl_scan_opts {
	const char *const *select; /* ids or prefixes; NULL: all */
	size_t nselect;
	const char *const *ignore;
	size_t nignore;
	int min_severity; /* enum pl_severity: report at this or more severe */
	int advisory;	  /* also the advisory rules (off by default) */
	int matcher;	  /* enum pl_scan_matcher */
	int whole;	  /* the scan covers the working directory: a finding in
			   * a top-level def or class no scanned file names is
			   * marked unreferenced (pl_finding) */
};

/* One scanned file's result. */
struct pl_scan_file {
	char *path; /* as given/listed */
	enum pl_lang lang;
	size_t lines;	    /* lines in the file */
	size_t error_nodes; /* parse errors (the rest was scanned) */
	int unreadable;	    /* could not be read: errno in read_errno */
	int read_errno;
	struct pl_findings findings;
	size_t findings_cap;
	char *text; /* the source, for printing the code line */
	size_t len;
	char *warnings; /* unknown or unused suppressions, one per line; NULL */
	/* the functions it calls once per training step, "name line\n" each
	 * (NULL: none): what makes another file's pending finding hold */
	char *step_calls;
	int step_device; /* and it names a device (PY010's uses-device) */
};

/* Language by file name, or -1 when perfloop does not scan it. */
int pl_scan_lang(const char *path);

/* Scan files[0..n) with `threads` threads; results in files' order.
 * With a cache (NULL: none), a file whose entry is there is not parsed;
 * the rules are compiled only if some file is. cached (NULL or) counts
 * the files served from the cache. */
struct pl_scan_cache;
int pl_scan_files(struct pl_rules *rules, const struct pl_scan_opts *o,
		  struct pl_scan_cache *cache, const char *const *paths, size_t n,
		  int threads, struct pl_scan_file **out, size_t *cached, struct pl_error *err);
void pl_scan_file_release(struct pl_scan_file *f);

#endif
