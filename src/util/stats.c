/*
 * Benchmark statistics. Design notes:
 * - Medians use quickselect on a scratch copy; the bootstrap's thousands of
 *   resample medians are found from counts over the once-sorted values
 *   (resample_median), which is what dominated `bench --precision`.
 * - The bootstrap is the plain percentile method with a seeded generator, so
 *   a summary can be recomputed bit for bit from its samples.
 * - The exact Mann-Whitney distribution is the Gaussian binomial coefficient
 *   [m+n choose m]_q, expanded as a polynomial in doubles; it is only used
 *   when one sample has at most 8 values, as scipy does.
 */
#include "stats.h"

#include "error.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

static uint64_t rotl(uint64_t x, int k)
{
	return (x << k) | (x >> (64 - k));
}

static uint64_t splitmix64(uint64_t *state)
{
	uint64_t z = (*state += 0x9e3779b97f4a7c15ULL);
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
	return z ^ (z >> 31);
}

void pl_rng_seed(struct pl_rng *rng, uint64_t seed)
{
	for (int i = 0; i < 4; i++)
		rng->s[i] = splitmix64(&seed);
}

uint64_t pl_rng_next(struct pl_rng *rng)
{
	uint64_t *s = rng->s;
	uint64_t result = rotl(s[1] * 5, 7) * 9;
	uint64_t t = s[1] << 17;
	s[2] ^= s[0];
	s[3] ^= s[1];
	s[1] ^= s[2];
	s[0] ^= s[3];
	s[2] ^= t;
	s[3] = rotl(s[3], 45);
	return result;
}

uint64_t pl_rng_below(struct pl_rng *rng, uint64_t bound)
{
	/* Lemire's nearly divisionless method, unbiased. */
	unsigned __int128 m = (unsigned __int128)pl_rng_next(rng) * bound;
	uint64_t l = (uint64_t)m;
	if (l < bound) {
		uint64_t t = -bound % bound;
		while (l < t) {
			m = (unsigned __int128)pl_rng_next(rng) * bound;
			l = (uint64_t)m;
		}
	}
	return (uint64_t)(m >> 64);
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return (x > y) - (x < y);
}

double pl_stats_quantile_sorted(const double *sorted, size_t n, double q)
{
	if (n == 0)
		return NAN;
	double pos = q * (double)(n - 1);
	size_t i = (size_t)floor(pos);
	if (i >= n - 1)
		return sorted[n - 1];
	double frac = pos - (double)i;
	return sorted[i] + (sorted[i + 1] - sorted[i]) * frac;
}

/* Hoare-style quickselect: afterwards x[k] is the k-th smallest and every
 * element before it is <= x[k]. */
static void select_kth(double *x, size_t n, size_t k)
{
	size_t lo = 0, hi = n - 1;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		/* median of three as pivot */
		if (x[mid] < x[lo]) {
			double t = x[mid];
			x[mid] = x[lo];
			x[lo] = t;
		}
		if (x[hi] < x[lo]) {
			double t = x[hi];
			x[hi] = x[lo];
			x[lo] = t;
		}
		if (x[hi] < x[mid]) {
			double t = x[hi];
			x[hi] = x[mid];
			x[mid] = t;
		}
		double pivot = x[mid];
		size_t i = lo, j = hi;
		while (i <= j) {
			while (x[i] < pivot)
				i++;
			while (x[j] > pivot)
				j--;
			if (i <= j) {
				double t = x[i];
				x[i] = x[j];
				x[j] = t;
				i++;
				if (j == 0)
					break;
				j--;
			}
		}
		if (k <= j)
			hi = j;
		else if (k >= i)
			lo = i;
		else
			return;
	}
}

double pl_stats_median_inplace(double *x, size_t n)
{
	if (n == 0)
		return NAN;
	size_t k = n / 2;
	select_kth(x, n, k);
	double upper = x[k];
	if (n % 2)
		return upper;
	double lower = x[0];
	for (size_t i = 1; i < k; i++)
		if (x[i] > lower)
			lower = x[i];
	return (lower + upper) / 2.0;
}

int pl_stats_mad(const double *x, size_t n, double *out)
{
	if (n == 0)
		return PL_EINPUT;
	double *tmp = malloc(n * sizeof(*tmp));
	if (!tmp)
		return PL_ENOMEM;
	memcpy(tmp, x, n * sizeof(*tmp));
	double med = pl_stats_median_inplace(tmp, n);
	for (size_t i = 0; i < n; i++)
		tmp[i] = fabs(x[i] - med);
	*out = pl_stats_median_inplace(tmp, n);
	free(tmp);
	return PL_OK;
}

size_t pl_stats_outliers(const double *x, size_t n, unsigned char *flags)
{
	if (flags)
		memset(flags, 0, n);
	if (n < 3)
		return 0;
	double *tmp = malloc(n * sizeof(*tmp));
	if (!tmp)
		return 0;
	memcpy(tmp, x, n * sizeof(*tmp));
	double med = pl_stats_median_inplace(tmp, n);
	for (size_t i = 0; i < n; i++)
		tmp[i] = fabs(x[i] - med);
	double mad = pl_stats_median_inplace(tmp, n);
	double scale;
	if (mad > 0) {
		scale = mad / 0.6745;
	} else {
		double meanad = 0;
		for (size_t i = 0; i < n; i++)
			meanad += fabs(x[i] - med);
		meanad /= (double)n;
		scale = 1.253314 * meanad;
	}
	free(tmp);
	if (!(scale > 0))
		return 0;
	size_t count = 0;
	for (size_t i = 0; i < n; i++) {
		if (fabs(x[i] - med) / scale > 3.5) {
			count++;
			if (flags)
				flags[i] = 1;
		}
	}
	return count;
}

int pl_stats_describe(const double *x, size_t n, struct pl_describe *out)
{
	memset(out, 0, sizeof(*out));
	if (n == 0)
		return PL_EINPUT;
	for (size_t i = 0; i < n; i++)
		if (!isfinite(x[i]))
			return PL_EINPUT;
	double *s = malloc(n * sizeof(*s));
	if (!s)
		return PL_ENOMEM;
	memcpy(s, x, n * sizeof(*s));
	qsort(s, n, sizeof(*s), cmp_double);
	out->n = n;
	out->min = s[0];
	out->max = s[n - 1];
	out->p50 = pl_stats_quantile_sorted(s, n, 0.5);
	out->p90 = pl_stats_quantile_sorted(s, n, 0.9);
	out->p99 = pl_stats_quantile_sorted(s, n, 0.99);
	double sum = 0;
	for (size_t i = 0; i < n; i++)
		sum += x[i];
	out->mean = sum / (double)n;
	double ss = 0;
	for (size_t i = 0; i < n; i++)
		ss += (x[i] - out->mean) * (x[i] - out->mean);
	out->stdev = n > 1 ? sqrt(ss / (double)(n - 1)) : 0.0;
	out->cv = out->mean != 0 ? out->stdev / fabs(out->mean) : 0.0;
	for (size_t i = 0; i < n; i++)
		s[i] = fabs(x[i] - out->p50);
	out->mad = pl_stats_median_inplace(s, n);
	free(s);
	out->n_outliers = pl_stats_outliers(x, n, NULL);
	return PL_OK;
}

/* A bootstrap resample's median from counts, not a copy: the values are
 * sorted once, each draw adds one to its value's rank, and a walk over the
 * counts finds the middle ranks. The draws are the same as copying the
 * drawn values and selecting their median (so are the results), at a third
 * of the cost: the selection was most of a 500-run bench's own CPU time. */
struct boot {
	double *sorted;	  /* the values, ascending */
	size_t *rank;	  /* rank[i]: where x[i] sits in sorted */
	uint32_t *count;  /* draws per rank in this resample */
	size_t n;
};

struct ranked {
	double v;
	size_t idx;
};

static int cmp_ranked(const void *a, const void *b)
{
	const struct ranked *x = a, *y = b;
	if (x->v != y->v)
		return (x->v > y->v) - (x->v < y->v);
	return (x->idx > y->idx) - (x->idx < y->idx);
}

static int boot_init(struct boot *bt, const double *x, size_t n)
{
	bt->n = n;
	bt->sorted = malloc(n * sizeof(*bt->sorted));
	bt->rank = malloc(n * sizeof(*bt->rank));
	bt->count = malloc(n * sizeof(*bt->count));
	struct ranked *order = malloc(n * sizeof(*order));
	if (!bt->sorted || !bt->rank || !bt->count || !order) {
		free(bt->sorted);
		free(bt->rank);
		free(bt->count);
		free(order);
		return PL_ENOMEM;
	}
	for (size_t i = 0; i < n; i++)
		order[i] = (struct ranked){x[i], i};
	qsort(order, n, sizeof(*order), cmp_ranked);
	for (size_t r = 0; r < n; r++) {
		bt->sorted[r] = order[r].v;
		bt->rank[order[r].idx] = r;
	}
	free(order);
	return PL_OK;
}

static void boot_free(struct boot *bt)
{
	free(bt->sorted);
	free(bt->rank);
	free(bt->count);
}

static double resample_median(struct boot *bt, struct pl_rng *rng)
{
	size_t n = bt->n;
	memset(bt->count, 0, n * sizeof(*bt->count));
	for (size_t i = 0; i < n; i++)
		bt->count[bt->rank[pl_rng_below(rng, n)]]++;
	/* the values at positions (n-1)/2 and n/2 of the sorted resample */
	size_t want_lo = (n - 1) / 2, want_hi = n / 2, seen = 0;
	double lo = NAN;
	for (size_t r = 0; r < n; r++) {
		seen += bt->count[r];
		if (lo != lo && seen > want_lo)
			lo = bt->sorted[r];
		if (seen > want_hi)
			return n % 2 ? bt->sorted[r] : (lo + bt->sorted[r]) / 2.0;
	}
	return lo;
}

static int boot_alloc(size_t resamples, double **stat)
{
	*stat = malloc(resamples * sizeof(**stat));
	return *stat ? PL_OK : PL_ENOMEM;
}

static void percentile_interval(double *stat, size_t b, double level, double *lo, double *hi)
{
	qsort(stat, b, sizeof(*stat), cmp_double);
	double alpha = (1.0 - level) / 2.0;
	*lo = pl_stats_quantile_sorted(stat, b, alpha);
	*hi = pl_stats_quantile_sorted(stat, b, 1.0 - alpha);
}

int pl_stats_bootstrap_median_ci(const double *x, size_t n, size_t resamples, uint64_t seed,
				 double level, double *lo, double *hi)
{
	if (n == 0 || resamples == 0 || !(level > 0 && level < 1))
		return PL_EINPUT;
	double *stat;
	struct boot bt;
	if (boot_alloc(resamples, &stat) != PL_OK)
		return PL_ENOMEM;
	if (boot_init(&bt, x, n) != PL_OK) {
		free(stat);
		return PL_ENOMEM;
	}
	struct pl_rng rng;
	pl_rng_seed(&rng, seed);
	for (size_t b = 0; b < resamples; b++)
		stat[b] = resample_median(&bt, &rng);
	percentile_interval(stat, resamples, level, lo, hi);
	boot_free(&bt);
	free(stat);
	return PL_OK;
}

int pl_stats_bootstrap_ratio_ci(const double *a, size_t na, const double *b, size_t nb,
				size_t resamples, uint64_t seed, double level, double *lo,
				double *hi)
{
	if (na == 0 || nb == 0 || resamples == 0 || !(level > 0 && level < 1))
		return PL_EINPUT;
	double *stat;
	struct boot ba, bb;
	if (boot_alloc(resamples, &stat) != PL_OK)
		return PL_ENOMEM;
	if (boot_init(&ba, a, na) != PL_OK) {
		free(stat);
		return PL_ENOMEM;
	}
	if (boot_init(&bb, b, nb) != PL_OK) {
		boot_free(&ba);
		free(stat);
		return PL_ENOMEM;
	}
	struct pl_rng rng;
	pl_rng_seed(&rng, seed);
	size_t kept = 0;
	for (size_t r = 0; r < resamples; r++) {
		double ma = resample_median(&ba, &rng);
		double mb = resample_median(&bb, &rng);
		if (mb != 0)
			stat[kept++] = ma / mb;
	}
	int rc = PL_OK;
	if (kept == 0) {
		*lo = *hi = NAN;
		rc = PL_EINPUT;
	} else {
		percentile_interval(stat, kept, level, lo, hi);
	}
	boot_free(&ba);
	boot_free(&bb);
	free(stat);
	return rc;
}

/* P(U >= u) under H0 for sample sizes m, n without ties. Counts arrangements
 * via the q-binomial coefficient prod_{i=1..m} (1 - q^(n+i)) / (1 - q^i). */
static double mwu_exact_sf(double u, size_t m, size_t n)
{
	size_t deg = m * n;
	double *c = calloc(deg + 1, sizeof(*c));
	if (!c)
		return NAN;
	c[0] = 1.0;
	for (size_t i = 1; i <= m; i++) {
		/* multiply by (1 - q^(n+i)) */
		size_t a = n + i;
		for (size_t k = deg; k >= a; k--) {
			c[k] -= c[k - a];
			if (k == a)
				break;
		}
		/* divide by (1 - q^i): running sum with stride i */
		for (size_t k = i; k <= deg; k++)
			c[k] += c[k - i];
	}
	double total = 0, tail = 0;
	for (size_t k = 0; k <= deg; k++) {
		total += c[k];
		if ((double)k >= u - 1e-9)
			tail += c[k];
	}
	free(c);
	return tail / total;
}

int pl_stats_mann_whitney(const double *a, size_t na, const double *b, size_t nb,
			  struct pl_mwu *out)
{
	memset(out, 0, sizeof(*out));
	if (na == 0 || nb == 0)
		return PL_EINPUT;
	size_t n = na + nb;
	struct ranked *r = malloc(n * sizeof(*r));
	if (!r)
		return PL_ENOMEM;
	for (size_t i = 0; i < na; i++)
		r[i] = (struct ranked){a[i], i};
	for (size_t i = 0; i < nb; i++)
		r[na + i] = (struct ranked){b[i], na + i};
	qsort(r, n, sizeof(*r), cmp_ranked);

	double r1 = 0, tie_term = 0;
	int ties = 0;
	for (size_t i = 0; i < n;) {
		size_t j = i;
		while (j + 1 < n && r[j + 1].v == r[i].v)
			j++;
		double t = (double)(j - i + 1);
		double rank = (double)(i + j) / 2.0 + 1.0;
		if (t > 1) {
			ties = 1;
			tie_term += t * t * t - t;
		}
		for (size_t k = i; k <= j; k++)
			if (r[k].idx < na)
				r1 += rank;
		i = j + 1;
	}
	free(r);

	double dna = (double)na, dnb = (double)nb, dn = (double)n;
	double u1 = r1 - dna * (dna + 1) / 2.0;
	double u2 = dna * dnb - u1;
	double u = u1 > u2 ? u1 : u2;
	out->u1 = u1;
	if (!(na > 8 && nb > 8) && !ties) {
		out->exact = 1;
		out->p = 2.0 * mwu_exact_sf(u, na, nb);
	} else {
		double mu = dna * dnb / 2.0;
		double s = sqrt(dna * dnb / 12.0 * ((dn + 1) - tie_term / (dn * (dn - 1))));
		double z = s > 0 ? (u - mu - 0.5) / s : 0.0;
		out->p = s > 0 ? erfc(z / sqrt(2.0)) : 1.0; /* 2 * norm.sf(z) */
	}
	if (out->p > 1)
		out->p = 1;
	if (out->p < 0)
		out->p = 0;
	return PL_OK;
}

enum pl_change pl_stats_change(double p, double ci_lo, double ci_hi, double alpha, double threshold)
{
	if (!(p < alpha))
		return PL_CHANGE_NONE;
	if (ci_lo > 1.0 + threshold)
		return PL_CHANGE_SLOWER;
	if (ci_hi < 1.0 - threshold)
		return PL_CHANGE_FASTER;
	return PL_CHANGE_NONE;
}

const char *pl_change_name(enum pl_change c)
{
	switch (c) {
	case PL_CHANGE_FASTER:
		return "faster";
	case PL_CHANGE_SLOWER:
		return "slower";
	default:
		return "no change";
	}
}

double pl_stats_trend(const double *x, size_t n)
{
	if (n < 3)
		return NAN;
	struct ranked *r = malloc(n * sizeof(*r));
	double *rank = malloc(n * sizeof(*rank));
	if (!r || !rank) {
		free(r);
		free(rank);
		return NAN;
	}
	for (size_t i = 0; i < n; i++)
		r[i] = (struct ranked){x[i], i};
	qsort(r, n, sizeof(*r), cmp_ranked);
	for (size_t i = 0; i < n;) {
		size_t j = i;
		while (j + 1 < n && r[j + 1].v == r[i].v)
			j++;
		double avg = (double)(i + j) / 2.0 + 1.0; /* ties share their mean rank */
		for (size_t k = i; k <= j; k++)
			rank[r[k].idx] = avg;
		i = j + 1;
	}
	double mean = ((double)n + 1.0) / 2.0, sxy = 0, sxx = 0, syy = 0;
	for (size_t i = 0; i < n; i++) {
		double a = (double)(i + 1) - mean, b = rank[i] - mean;
		sxy += a * b;
		sxx += a * a;
		syy += b * b;
	}
	free(r);
	free(rank);
	return sxx > 0 && syy > 0 ? sxy / sqrt(sxx * syy) : 0;
}

double pl_stats_autocorr1(const double *x, size_t n)
{
	if (n < 3)
		return NAN;
	double m = 0;
	for (size_t i = 0; i < n; i++)
		m += x[i];
	m /= (double)n;
	double num = 0, den = 0;
	for (size_t i = 0; i < n; i++) {
		den += (x[i] - m) * (x[i] - m);
		if (i + 1 < n)
			num += (x[i] - m) * (x[i + 1] - m);
	}
	return den > 0 ? num / den : NAN;
}
