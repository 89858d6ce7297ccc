/*
 * Private to the scanner (scanrules.c, scancond.c, scan.c, scanrun.c):
 * a rule as parsed (struct pl_rule, opaque in scan.h), the one file being
 * scanned (struct src), and the functions these files share. Callers
 * outside src/scan/ use scan.h. The driver (scanrun.c) is the only file
 * that joins the per-file scan to the result cache: nothing declared here
 * may need scancache.h.
 */
#ifndef PL_SCAN_INT_H
#define PL_SCAN_INT_H

#include <regex.h>
#include <stddef.h>
#include <stdint.h>
#include <tree_sitter/api.h>

#include "scan.h"
#include "suppress.h"

/* ---- rules (scanrules.c) ---- */

/* P_TORCH: (#torch? @c), the capture names the torch module as the file
 * imports it (torch, or X of `import torch as X`) */
enum pred_kind { P_EQ, P_NOT_EQ, P_MATCH, P_NOT_MATCH, P_TORCH };

struct pred {
	enum pred_kind kind;
	uint32_t cap;  /* first capture */
	int other_cap; /* second operand is a capture */
	uint32_t cap2;
	char *str;  /* string operand */
	regex_t re; /* for match */
	int has_re;
};

struct pattern_preds {
	struct pred *v;
	size_t n;
};

enum cond_kind {
	C_IN_LOOP,
	C_IN_ASYNC_DEF,
	C_IN_TRAINING_LOOP,
	C_NOT_IN_NO_GRAD,
	C_NOT_PERIODIC,
	C_IN_METHOD,
	C_ENCLOSING_LOOP_ITERATES,
	C_FUNCTION_LACKS,
	C_FUNCTION_HAS,
	C_FILE_HAS,
	C_FILE_LACKS,
	C_LOOP_LACKS,
	C_LOOP_HAS,
	C_NODE_HAS,
	C_NODE_LACKS,
	C_LOOP_HEADER_HAS,
	C_LOOP_HEADER_LACKS,
	C_UNCONDITIONAL,
	C_LOOP_NOT_SMALL,
	C_CALL_ARGS_LACK,
	C_UNUSED,
	C_COSTLY_DATASET,
	C_LARGE_BATCHES,
	C_NON_BLOCKING,
	C_BLOCKING,
	C_NOT_REBOUND,
	C_PER_STEP,
	C_CPU_FACTORY,
	C_NOT_HOST_MADE,
	C_NOT_READ_ONCE,
	C_ONLY_GROWN,
	C_USES_DEVICE,
	C_USES_CUDA,
	C_IN_TRAINING_STEP,
	C_IN_DEF,
	C_EVAL_LOADER,
	C_NOT_EVAL_LOADER,
	C_NO_PAIRWISE,
	C_NOT_MUTATED,
	C_NOT_IN_EXCEPT,
	C_IN_EVAL_LOOP,
	C_EVALUATED,
	C_FILE_TRAINS,
	C_NOT_ENV_INPUT,
	C_NOT_DEMO_MAIN,
	C_BLEND_UPDATE,
	C_ACCUMULATED,
	C_GRAD_FREE_FORWARD,
	C_NO_BLOCKING_COPY,
	C_NOT_WAITING,
	C_PAIRWISE,
	C_NOT_RECOVERY,
	C_UNDER_IF,
};

struct cond {
	enum cond_kind kind;
	char *cap;     /* capture name for C_ENCLOSING_LOOP_ITERATES */
	char *re_text; /* regex source, with {@name} placeholders */
	regex_t re;    /* compiled once when re_text has no placeholder */
	int has_re;
	regex_t re2; /* C_IN_TRAINING_STEP: the periodic branch's (re: backward's);
		      * C_IN_EVAL_LOOP: no_grad's */
	int has_re2;
};

struct pl_rule {
	char *id, *title, *severity_s, *status_s, *rationale, *fix, *bad, *good, *path, *when;
	char *quiet; /* what the rule deliberately does not flag, in words */
	char *needs; /* `; needs: TEXT`: a file without TEXT is not matched at all */
	char *metric;
	char *advisory; /* why it is off by default (low precision on real code); NULL: on */
	int level;
	double confidence;
	enum pl_severity severity;
	enum pl_fstatus status;
	enum pl_lang lang;
	TSQuery *query; /* the rule alone, then the language's combined query */
	int own_query;
	char *qtext;
	uint32_t pat_off; /* its first pattern in the combined query */
	uint32_t finding_cap;
	struct pattern_preds *preds; /* per pattern */
	uint32_t npatterns;
	struct cond *conds;
	size_t nconds;
	/* `; lower: CONDS` and `; lower-why: TEXT`: where every one holds, the
	 * finding is rated one level lower, and says why */
	char *lower, *lower_why;
	struct cond *lconds;
	size_t nlconds;
	int group_loop; /* `; group: loop`: one finding per enclosing loop */
};

/* The tree-sitter grammar of a language. */
const TSLanguage *pl_scan_language(enum pl_lang l);
/* s[0..n) as a string, and with its white space trimmed; NULL: no memory. */
char *pl_scan_dupn(const char *s, size_t n);
char *pl_scan_trim_dup(const char *s, size_t n);
/* Does o (NULL: all) run rule r: selected, not ignored, severe enough,
 * and not advisory unless asked for? */
int pl_scan_rule_selected(const struct pl_rule *r, const struct pl_scan_opts *o);

/* ---- one file being scanned (scancond.c, scan.c) ---- */

struct scope; /* scancond.c */

struct src {
	const char *text;
	size_t len;
	enum pl_lang lang;
	uint32_t *line_start;  /* offset of each line's first byte */
	struct pl_supps supps; /* suppression comments */
	uint32_t *group;       /* per finding: its loop's start byte + 1 (group: loop), 0 */
	size_t group_cap;
	size_t nlines;
	struct scope *scopes; /* loops, functions, classes, with, decorators */
	size_t nscopes, scopes_cap;
	TSNode root;
	char *code;	/* the text with comments blanked (built on first use) */
	int code_state; /* 0 not built (built on first use), 1 built, -1 failed */
	int device, device_known; /* uses-device (1), uses-cuda (2), pin_memory=True (4),
				   * non_blocking=True (8):
				   * found on first use */
	const char *torch_as; /* X of a top-level `import torch as X` (NULL: none) */
	size_t torch_as_len;
	int torch_known; /* torch_as looked for */
	int trains;	 /* file-trains: 0 not looked, 1 no, 2 yes */
	int evals;	 /* the text holds ".eval()": 0 not looked, 1 no, 2 yes */
	uint32_t eval_fn;	 /* evaluated: the function last looked in (start + 1) */
	uint32_t eval_at[8];	 /* its X.eval() calls: where they end, */
	TSNode eval_obj[8];	 /* and their X */
	int neval;
	/* in-training-step held only if another file's step loop calls the
	 * function named so (set while a match's conditions are judged) */
	const char *pending, *pending_class; /* its class (NULL: not a method) */
	size_t pending_len, pending_class_len;
	int pending_device; /* uses-device asked of the caller's file instead */
	uint32_t pscope; /* periodic_cond: the scope last looked at (start + 1), */
	int pscope_has;	 /* and whether its text has what a periodic condition has */
};

/* The functions the file calls once per training step (in a step loop
 * that bwd finds, not under a branch per matches), "name line\n" each,
 * each name once; NULL: none (or out of memory: *failed). */
char *pl_scan_step_calls(struct src *s, const regex_t *bwd, const regex_t *per, int *failed);
/* uses-device: the file names a device (cuda, .to(device), ...) */
int pl_scan_uses_device(struct src *s);

/* The text of node n, not NUL-terminated: its length in *len. */
const char *pl_scan_ntext(struct src *s, TSNode n, size_t *len);
/* Do nodes a and b have the same text? */
int pl_scan_text_eq(struct src *s, TSNode a, TSNode b);
/* Scope node n, as the query pass finds it: 0, or -1 out of memory. */
int pl_scan_add_scope(struct src *s, TSNode n);
/* The innermost loop around n within its function, the innermost function
 * around n (null nodes: none), and a function's name (NULL: none). */
TSNode pl_scan_enclosing_loop(struct src *s, TSNode n);
TSNode pl_scan_enclosing_function(struct src *s, TSNode n);
char *pl_scan_function_name(struct src *s, TSNode fn);
/* Helpers over the tree the conditions share (scancond.c): is n a node
 * of this type; an attribute chain's last name (a.b.c: c; any other node
 * as it is); fn(node, arg) on every named node under root in document
 * order until it returns nonzero (that value, or 0); the scope a name's
 * local definitions are looked for in (its function, or the file); does
 * text[0..len) match re, in place. */
int pl_scan_node_is(TSNode n, const char *type);
TSNode pl_scan_last_name(TSNode n);
int pl_scan_walk_named(TSNode root, int (*fn)(TSNode, void *), void *arg);
TSNode pl_scan_name_scope(struct src *s, TSNode n);
int pl_scan_re_hit(const regex_t *re, const char *text, size_t len);
/* Does node n (an identifier) name the torch module: `torch`, or the X of
 * a top-level `import torch as X` (th, t)? */
int pl_scan_is_torch(struct src *s, TSNode n);
#define node_is pl_scan_node_is
#define last_name pl_scan_last_name
#define walk_named pl_scan_walk_named
#define name_scope pl_scan_name_scope
#define re_hit pl_scan_re_hit

/* What a DataLoader call's dataset shows of its cost per item
 * (scandata.c): held in memory (a TensorDataset, torchvision's MNIST or
 * CIFAR, a class of this file that indexes its own arrays); read from
 * files per item (an ImageFolder, a class whose __getitem__ opens or
 * decodes, a builder given a path); a per-item augmentation or resize in
 * its transform; items large enough that copying them costs (images
 * decoded from files, a resize to 128 pixels or more); a collate_fn of
 * this file doing work per batch. COSTLY: any evidence of CPU work per
 * item in the loading process. */
enum {
	PL_DS_MEMORY = 1,
	PL_DS_FILES = 2,
	PL_DS_AUGMENT = 4,
	PL_DS_BIG = 8,
	PL_DS_COLLATE = 16,
	PL_DS_COSTLY = PL_DS_FILES | PL_DS_AUGMENT | PL_DS_COLLATE,
};
int pl_scan_dataset_evidence(struct src *s, TSNode call);
/* The value last assigned to name in scope (`name = v`, or the call of
 * `name, other = f(...)`), only assignments ending before byte `before`
 * where it is not 0; a null node where none (scandata.c). */
TSNode pl_scan_last_assigned(struct src *s, TSNode scope, TSNode name, uint32_t before);
/* Is text[0..len) one of the NULL-terminated list's words? */
int pl_scan_in_list(const char *t, size_t len, const char *const *list);

/* Does condition c of rule r hold for match m, whose finding is node? */
int pl_scan_cond_holds(struct src *s, const struct pl_rule *r, const struct cond *c,
		       const TSQueryMatch *m, TSNode node);

/* ---- the scan of one file (scan.c) ---- */

/* One file's findings with this thread's parser and query cursor. */
int pl_scan_with(TSParser *parser, TSQueryCursor *qc, const struct pl_rules *rules,
		 const struct pl_scan_opts *o, struct pl_scan_file *f);

#endif
