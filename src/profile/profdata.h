/*
 * A profile in memory: distinct frames and distinct stacks with their
 * sample counts, and everything written from it: the top table, collapsed
 * stacks (Brendan Gregg's "folded" format), the speedscope "sampled" file,
 * the flame graph SVG (flamegraph.c) and findings.
 *
 * Frames are interned by (name, file, line): with line the function's
 * first line they are functions; with the executed line (`--lines`) they
 * are lines. Synthetic frames ("process 123 ...", "thread 456 ...") group
 * stacks for --subprocesses and --threads and are left out of the table
 * and findings.
 */
#ifndef PL_PROFDATA_H
#define PL_PROFDATA_H

#include <stddef.h>
#include <stdint.h>

#include "error.h"

struct pl_prof_frame {
	char *name, *file;
	int line;
	int func_line; /* the function's first line (equal to line without --lines) */
	int synthetic;
};

struct pl_prof_stack {
	size_t off, depth; /* ids in pl_prof.ids[off .. off+depth), root first */
	uint64_t count;
	uint64_t hash;
};

struct pl_prof {
	struct pl_prof_frame *frames;
	size_t nframes, capframes;
	uint32_t *frame_tab; /* hash of frame ids (index+1), 0 empty */
	size_t cap_frame_tab;
	struct pl_prof_stack *stacks;
	size_t nstacks, capstacks;
	uint32_t *stack_tab; /* hash of stack index+1 */
	size_t cap_stack_tab;
	uint32_t *ids;
	size_t nids, capids;
	uint64_t samples; /* stacks added, with their counts */
	int oom;
	/* how frames' files are shown in the folded, SVG and speedscope
	 * outputs (findings keep the path read): relative to root where under
	 * it, else from the package (after site-packages/ or dist-packages/)
	 * or the standard library (after lib/pythonX.Y/), as py-spy shortens
	 * them; full_paths: as read. root NULL: no relative paths. */
	const char *root;
	int full_paths;
	const char *unit; /* what a count is, in the flame graph ("KiB"); NULL: samples */
};

/* path relative to cwd where under it, else path (a suffix either way) */
const char *pl_prof_relative(const char *path, const char *cwd);
/* file as p shows it: a suffix of file (see root, full_paths) */
const char *pl_prof_shown_file(const struct pl_prof *p, const char *file);

/* Zero it to start. Returns the frame's id, or -1 out of memory. */
long pl_prof_frame(struct pl_prof *p, const char *name, const char *file, int line, int func_line,
		   int synthetic);
/* Add count samples of a stack of frame ids, root first. 0 or -1. */
int pl_prof_add(struct pl_prof *p, const uint32_t *ids, size_t depth, uint64_t count);
void pl_prof_release(struct pl_prof *p);

/* Per frame id: self and total sample counts (a frame counted once per
 * stack, however often it recurses). Arrays of nframes, malloc'd. */
int pl_prof_totals(const struct pl_prof *p, uint64_t **self, uint64_t **total);
/* The same per group: group[frame id] in 0..ngroups-1. */
int pl_prof_totals_by(const struct pl_prof *p, const uint32_t *group, size_t ngroups,
		      uint64_t **self, uint64_t **total);

/* Functions (frames grouped by name, file and first line; synthetic frames
 * left out) holding at least min_share of the samples as their own, most
 * first, at most max, as `measured` findings; paths relative to cwd when
 * under it. rate is the sampling rate, for the evidence text. */
struct pl_findings;
int pl_prof_findings(const struct pl_prof *p, double min_share, size_t max, double rate,
		     const char *cwd, struct pl_findings *out);

/* "name (file:line)" as used in folded stacks and the flame graph. */
char *pl_prof_label(const struct pl_prof *p, const struct pl_prof_frame *f);

/* Read collapsed stacks ("a;b;c COUNT" lines, as perfloop, py-spy,
 * flamegraph.pl and inferno write them) into p (zeroed, or added to).
 * Frames "name (file:line)" keep their parts. PL_EINPUT naming the file
 * and line of a line without a count. */
int pl_prof_read_folded(const char *path, struct pl_prof *p, struct pl_error *err);
/* the most samples a read profile may hold in all (sums of counts must
 * not wrap; a billion samples a second for 11 days) */
#define PL_PROF_MAX_COUNT 1000000000000000ULL

/* Add every stack of src to dst, frames matched by name, file and line;
 * under a synthetic root frame named root where root is not NULL (merge
 * --by-rank). 0, or -1 out of memory. */
int pl_prof_merge(struct pl_prof *dst, const struct pl_prof *src, const char *root);

/* Writers: malloc'd text (NULL when out of memory). */
char *pl_prof_folded(const struct pl_prof *p);
/* The folded text written to fd as it is made, never held whole (a
 * million distinct stacks make a gigabyte of it): 0, or -1 with errno set
 * (ENOMEM included). */
int pl_prof_folded_fd(const struct pl_prof *p, int fd);
/* That, into path atomically (a temporary file, then rename). */
struct pl_error;
int pl_prof_write_folded(const struct pl_prof *p, const char *path, struct pl_error *err);
/* One of the outputs, written to path (atomically) as it is made, never
 * held whole: a million distinct stacks make gigabytes of SVG. */
struct pl_prof_out {
	enum { PL_OUT_FOLDED, PL_OUT_SVG, PL_OUT_SPEEDSCOPE } kind;
	/* SVG: its title and subtitle; speedscope: its name and exporter */
	const char *title, *subtitle;
	double min_px; /* SVG: the frames narrower than this left out */
};
int pl_prof_write(const struct pl_prof *p, const struct pl_prof_out *o, const char *path,
		  struct pl_error *err);
struct pl_strbuf;
/* The SVG appended to b (spilled as it goes where b writes to a file):
 * 0, -1 out of memory or a failed write. */
int pl_prof_svg_to(const struct pl_prof *p, const char *title, const char *subtitle,
		   double min_px, struct pl_strbuf *b);
char *pl_prof_speedscope(const struct pl_prof *p, const char *name, const char *exporter);
char *pl_prof_svg(const struct pl_prof *p, const char *title, const char *subtitle);
/* The same without the frames narrower than min_px at full width (0.1:
 * flamegraph.pl's default --minwidth): a merged profile of a million
 * distinct stacks drew 140 MB of frames no one can see. */
char *pl_prof_svg_min(const struct pl_prof *p, const char *title, const char *subtitle,
		      double min_px);
/* The same flame graph as an <svg class="flame"> element to put in an HTML
 * page, without its own script: pl_html_flame_js drives every one on the
 * page (zoom on click, search, reset, tooltips). Frames under a tenth of
 * a pixel are left out (a page stays small on a 100k-sample profile). */
char *pl_prof_svg_html(const struct pl_prof *p, const char *title, const char *subtitle);
/* The standalone SVG's script (zoom, search, reset); a frame's label is
 * its data-n attribute where it has one (report/flamediff.c's differential
 * graph), else its <title> less the counts. */
extern const char pl_prof_svg_script[];
extern const char pl_html_flame_js[];
extern const char pl_html_flame_css[];
/* A whole HTML page of one flame graph (profile --format html). */
char *pl_prof_html_page(const struct pl_prof *p, const char *title, const char *subtitle);

#endif
