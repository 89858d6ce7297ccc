/*
 * What the environment costs, proved by the profile (see envfind.h).
 *
 * The one finding so far: the reference BLAS. Debian installs the
 * Fortran reference implementation of BLAS and LAPACK as the default
 * libblas.so.3 / liblapack.so.3 alternative (under .../blas/ and
 * .../lapack/); PyTorch and numpy built against the generic interface
 * then run every matrix product through it. On a CPU MLP a profile found
 * 45.6% of the time in sgemm_ there, and an optimised BLAS made the job
 * 2.8x faster, which torch.profiler only showed as aten::mm. The samples'
 * native frames name the library file, so the profile can prove it.
 */
#include "envfind.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "strbuf.h"

/* Debian's reference implementations, by the directory the alternative
 * links into: .../x86_64-linux-gnu/blas/libblas.so.3, .../lapack/... */
static int reference_blas(const char *file)
{
	return file && (strstr(file, "/blas/libblas.so") || strstr(file, "/lapack/liblapack.so"));
}

int pl_prof_env_findings(const struct pl_prof *p, struct pl_findings *out)
{
	if (!p->samples || !p->nframes)
		return 0;
	uint32_t *group = calloc(p->nframes, sizeof *group);
	if (!group)
		return -1;
	size_t lib = 0;
	for (size_t i = 0; i < p->nframes; i++)
		if (!p->frames[i].synthetic && reference_blas(p->frames[i].file)) {
			group[i] = 1;
			if (!lib)
				lib = i + 1;
		}
	uint64_t *self = NULL, *total = NULL;
	int rc = 0;
	if (lib && pl_prof_totals_by(p, group, 2, &self, &total) < 0)
		rc = -1;
	double share = lib && self ? (double)self[1] / (double)p->samples : 0;
	if (rc == 0 && share >= PL_ENV_BLAS_MIN_SHARE) {
		const char *file = p->frames[lib - 1].file;
		struct pl_strbuf sig = {0}, ev = {0};
		pl_strbuf_printf(&sig,
				 "the reference BLAS (Debian's unoptimised libblas3/liblapack3) runs "
				 "%.1f%% of the time",
				 100 * share);
		pl_strbuf_printf(&ev,
				 "%.1f%% of %llu samples have their innermost frame in %s (%s, the "
				 "first of its functions seen)",
				 100 * share, (unsigned long long)p->samples, file,
				 p->frames[lib - 1].name);
		char *s = pl_strbuf_take(&sig), *e = pl_strbuf_take(&ev);
		struct pl_finding *x =
		    s && e ? pl_findings_add_measured(
				 out, "env.reference-blas", file, "reference-blas", s, e,
				 "install an optimised BLAS, which registers itself as the libblas.so.3 "
				 "and liblapack.so.3 alternatives: apt-get install libopenblas0-pthread "
				 "(or libblis4-pthread); update-alternatives --display "
				 "libblas.so.3-x86_64-linux-gnu shows which one is used; no rebuild of "
				 "numpy or torch needed",
				 "blas_share", "fraction", share)
			   : NULL;
		free(s);
		free(e);
		if (!x) {
			rc = -1;
		} else {
			x->severity = share >= 0.25 ? PL_SEV_HIGH : PL_SEV_MEDIUM;
			x->level = 8; /* the environment, not the code */
			/* if the library's time went to nothing: an upper bound
			 * (an optimised sgemm is several times faster, not free) */
			x->ratio = share < 0.99 ? 1.0 / (1.0 - share) : 100.0;
			x->has_ratio = 1;
			x->evidence_numbers =
			    json_pack("{s:f, s:I, s:f}", "blas_share", share, "samples",
				      (json_int_t)self[1], "ratio", x->ratio);
			x->confidence = (double)self[1] / ((double)self[1] + 30.0);
			if (!x->evidence_numbers)
				rc = -1;
		}
	}
	free(group);
	free(self);
	free(total);
	return rc < 0 ? -1 : (share >= PL_ENV_BLAS_MIN_SHARE ? 1 : 0);
}
