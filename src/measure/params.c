/*
 * Parsing of parameter sweeps (see params.h). Ranges are computed as
 * LO + i*STEP (never by accumulation) so decimal steps do not drift, and a
 * sweep is capped at PL_PARAM_MAX values so a typo cannot ask for a billion
 * benchmarks.
 */
#include "params.h"

#include <errno.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define PL_PARAM_MAX 10000

static int add_value(struct pl_param *p, const char *v, size_t len)
{
	return pl_argv_push(&p->values, v, len);
}

static int parse_num(const char *s, size_t len, double *out, int *is_int)
{
	char buf[64];
	if (len == 0 || len >= sizeof(buf))
		return -1;
	memcpy(buf, s, len);
	buf[len] = '\0';
	char *end;
	errno = 0;
	*out = strtod(buf, &end);
	if (errno || *end || !isfinite(*out))
		return -1;
	*is_int = strpbrk(buf, ".eE") == NULL;
	return 0;
}

static int add_number(struct pl_param *p, double v, int as_int)
{
	char buf[64];
	int len =
	    as_int ? snprintf(buf, sizeof(buf), "%.0f", v) : snprintf(buf, sizeof(buf), "%.10g", v);
	return add_value(p, buf, (size_t)len);
}

int pl_param_parse(const char *spec, struct pl_param *out, struct pl_error *err)
{
	memset(out, 0, sizeof(*out));
	const char *eq = strchr(spec, '=');
	if (!eq || eq == spec)
		return pl_error_set(err, PL_EINPUT, "option '-P': expected NAME=VALUES in '%s'",
				    spec);
	for (const char *c = spec; c < eq; c++)
		if (!(*c == '_' || (*c >= 'a' && *c <= 'z') || (*c >= 'A' && *c <= 'Z') ||
		      (c > spec && *c >= '0' && *c <= '9')))
			return pl_error_set(err, PL_EINPUT,
					    "option '-P': bad parameter name in '%s'", spec);
	out->name = strndup(spec, (size_t)(eq - spec));
	if (!out->name)
		return PL_ENOMEM;
	const char *v = eq + 1;
	const char *dots = strstr(v, "..");
	int rc = PL_OK;
	if (!dots) {
		for (const char *p = v;;) {
			const char *comma = strchr(p, ',');
			size_t len = comma ? (size_t)(comma - p) : strlen(p);
			if (len == 0) {
				rc = pl_error_set(err, PL_EINPUT,
						  "option '-P': empty value in '%s'", spec);
				goto fail;
			}
			if ((rc = add_value(out, p, len)) != PL_OK)
				goto fail;
			if (!comma)
				break;
			p = comma + 1;
		}
		return PL_OK;
	}
	double lo, hi, step = 1, factor = 0;
	int lo_int, hi_int, step_int = 1;
	const char *rest = dots + 2;
	const char *mod = strpbrk(rest, ":*");
	size_t hilen = mod ? (size_t)(mod - rest) : strlen(rest);
	if (parse_num(v, (size_t)(dots - v), &lo, &lo_int) || parse_num(rest, hilen, &hi, &hi_int))
		goto bad_range;
	if (mod && *mod == ':') {
		if (parse_num(mod + 1, strlen(mod + 1), &step, &step_int) || !(step > 0))
			goto bad_range;
	} else if (mod && *mod == '*') {
		int f_int;
		if (parse_num(mod + 1, strlen(mod + 1), &factor, &f_int) || !(factor > 1) ||
		    !(lo > 0))
			goto bad_range;
	}
	if (hi < lo)
		goto bad_range;
	int as_int = lo_int && hi_int && step_int && (factor == 0 || floor(factor) == factor);
	if (factor > 0) {
		for (double x = lo; x <= hi * (1 + 1e-12); x *= factor) {
			if (out->values.n >= PL_PARAM_MAX)
				goto too_many;
			if ((rc = add_number(out, x, as_int)) != PL_OK)
				goto fail;
		}
	} else {
		double count = floor((hi - lo) / step + 1e-9) + 1;
		if (count > PL_PARAM_MAX)
			goto too_many;
		for (size_t i = 0; i < (size_t)count; i++)
			if ((rc = add_number(out, lo + (double)i * step, as_int)) != PL_OK)
				goto fail;
	}
	return PL_OK;
bad_range:
	rc = pl_error_set(err, PL_EINPUT,
			  "option '-P': bad range '%s': expected NAME=LO..HI[:STEP] with LO <= HI "
			  "and STEP > 0, or NAME=LO..HI*FACTOR with LO > 0 and FACTOR > 1",
			  spec);
	goto fail;
too_many:
	rc = pl_error_set(err, PL_EINPUT, "option '-P': '%s' gives more than %d values", spec,
			  PL_PARAM_MAX);
fail:
	pl_param_release(out);
	return rc;
}

void pl_param_release(struct pl_param *p)
{
	pl_argv_release(&p->values);
	free(p->name);
	memset(p, 0, sizeof(*p));
}

size_t pl_params_combinations(const struct pl_param *p, size_t k)
{
	size_t total = 1;
	for (size_t i = 0; i < k; i++) {
		if (p[i].values.n && total > SIZE_MAX / p[i].values.n)
			return SIZE_MAX; /* eight sweeps of 256 values wrapped to 0 */
		total *= p[i].values.n;
	}
	return total;
}

void pl_params_combination(const struct pl_param *p, size_t k, size_t i, size_t *idx)
{
	for (size_t j = k; j-- > 0;) {
		idx[j] = i % p[j].values.n;
		i /= p[j].values.n;
	}
}
