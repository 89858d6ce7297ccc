/*
 * `perfloop profile --scan`: "profile, then tell me which known
 * anti-patterns sit on the hot lines" as one command. The source files
 * the profile's frames name (the project's own: under the working
 * directory, not an installed package's) are scanned with scan's default
 * rules, and every finding is weighed by this profile as `scan --profile`
 * does (scan/scanweigh.c), then added to PREFIX.findings.json.
 */
#include "profile_int.h"

#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "findings.h"
#include "fsio.h"
#include "scan.h"
#include "scanweigh.h"

/* a frame's file is the project's own source: scanned by perfloop, there,
 * under cwd, and not an installed package */
static int own_source(const char *file, const char *cwd, char *real, size_t len)
{
	if (!file[0] || pl_scan_lang(file) < 0 || strstr(file, "site-packages/") ||
	    strstr(file, "dist-packages/") || file[0] == '<')
		return 0;
	char buf[PATH_MAX];
	if (!realpath(file, buf))
		return 0;
	size_t n = strlen(cwd);
	if (strncmp(buf, cwd, n) != 0 || (buf[n] != '/' && buf[n] != '\0'))
		return 0;
	snprintf(real, len, "%s", buf[n] == '/' ? buf + n + 1 : buf);
	return real[0] != '\0';
}

int profile_scan_findings(struct profiler *P, const char *cwd, struct pl_findings *out)
{
	const struct pl_prof *p = &P->prof;
	char **paths = calloc(p->nframes ? p->nframes : 1, sizeof *paths);
	size_t n = 0;
	if (!paths)
		return -1;
	for (size_t i = 0; i < p->nframes; i++) {
		char rel[PATH_MAX];
		if (p->frames[i].synthetic || !own_source(p->frames[i].file, cwd, rel, sizeof rel))
			continue;
		size_t k = 0;
		while (k < n && strcmp(paths[k], rel))
			k++;
		if (k == n && !(paths[n++] = strdup(rel))) {
			n--;
			break;
		}
	}
	int rc = 0;
	struct pl_rules rules = {0};
	struct pl_scan_file *files = NULL;
	struct pl_error err;
	char tmp[] = "/tmp/perfloop-profile-scan-XXXXXX";
	int fd = -1;
	if (!n) {
		printf("  scan: no source file of the project's in the profile\n");
		goto done;
	}
	/* the profile as scan --profile reads it */
	if ((fd = mkstemp(tmp)) < 0 || pl_prof_folded_fd(p, fd) != 0) {
		printf("  scan: cannot write the profile for it to %s\n", tmp);
		goto done;
	}
	/* the advisory rules too, each finding kept where this profile
	 * measured it hot (scanweigh.h) */
	struct pl_scan_opts so = {NULL, 0, NULL, 0, PL_SEV_LOW, 1, PL_MATCH_AUTO, 0};
	size_t cached = 0;
	struct pl_weigh_summary sum;
	if (pl_rules_load(&rules, &err) < 0 ||
	    pl_scan_files(&rules, &so, NULL, (const char *const *)paths, n, 2, &files, &cached,
			  &err) < 0 ||
	    pl_scan_weigh_hot(files, n, tmp, P->o.lines ? 1 : 0, &rules, &sum, &err) != PL_OK) {
		printf("  scan: %s\n", err.msg);
		goto done;
	}
	size_t total = 0;
	for (size_t i = 0; i < n; i++)
		total += files[i].findings.n;
	if (!total)
		printf("  scan of %zu source file%s: no finding\n", n, n == 1 ? "" : "s");
	else
		printf("  scan of %zu source file%s: %zu finding%s, %zu on code this profile ran; "
		       "they run in %.1f%% of its samples (by %s)\n",
		       n, n == 1 ? "" : "s", total, total == 1 ? "" : "s", sum.measured,
		       sum.samples > 0 ? 100 * sum.explained / sum.samples : 0.0,
		       sum.has_lines ? "line" : "function: --lines weighs by line");
	/* the hottest first, as select ranks them */
	for (size_t i = 0; i < n; i++)
		for (size_t j = 0; j < files[i].findings.n; j++) {
			struct pl_finding *f = &files[i].findings.v[j];
			double share = pl_finding_profile_share(f);
			if (share >= 0)
				printf("  ! %s %s:%ld: %s (%.1f%% of the samples)\n", f->leaf, f->path,
				       f->line, f->signal, 100 * share);
			struct pl_finding *x = pl_findings_push(out);
			if (!x) {
				rc = -1;
				goto done;
			}
			*x = *f; /* moved: the file's copy is forgotten below */
			memset(f, 0, sizeof *f);
		}
done:
	if (fd >= 0) {
		close(fd);
		unlink(tmp);
	}
	for (size_t i = 0; files && i < n; i++)
		pl_scan_file_release(&files[i]);
	free(files);
	pl_rules_release(&rules);
	for (size_t i = 0; i < n; i++)
		free(paths[i]);
	free(paths);
	return rc;
}
