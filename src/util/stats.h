/*
 * Statistics for benchmark samples: order statistics, dispersion, outliers,
 * bootstrap confidence intervals and the Mann-Whitney U test.
 *
 * Every function works on plain arrays of doubles and never keeps state, so
 * bench, verify, history and merge share one tested implementation. Values
 * follow numpy/scipy conventions (linear quantiles, ddof=1, unscaled MAD,
 * scipy.stats.mannwhitneyu's 'auto' method) and are unit-tested against
 * numbers those libraries computed (tests/data/make_stats_reference.py).
 */
#ifndef PL_STATS_H
#define PL_STATS_H

#include <stddef.h>
#include <stdint.h>

struct pl_describe {
	size_t n;
	double min, p50, mean, stdev, cv, mad, p90, p99, max;
	size_t n_outliers;
};

/* Seeded xoshiro256** generator: bootstrap results are reproducible. */
struct pl_rng {
	uint64_t s[4];
};
void pl_rng_seed(struct pl_rng *rng, uint64_t seed);
uint64_t pl_rng_next(struct pl_rng *rng);
/* Uniform integer in [0, bound). */
uint64_t pl_rng_below(struct pl_rng *rng, uint64_t bound);

/* Quantile q in [0,1] of sorted data, numpy's default 'linear' method. */
double pl_stats_quantile_sorted(const double *sorted, size_t n, double q);
/* Median of x, reordering x in place (O(n) selection). */
double pl_stats_median_inplace(double *x, size_t n);
/* Median absolute deviation from the median (unscaled). */
int pl_stats_mad(const double *x, size_t n, double *out);

/* Modified z-score outliers (Iglewicz & Hoaglin): |0.6745 (x - med) / MAD| >
 * 3.5. When MAD is 0, the mean absolute deviation scaled by 1.2533 stands in;
 * when that is 0 too, nothing is an outlier. flags[i] is set to 1 for an
 * outlier (may be NULL). Returns the number of outliers. */
size_t pl_stats_outliers(const double *x, size_t n, unsigned char *flags);

/* All of the above at once. Returns PL_OK, PL_EINPUT for n == 0 or NaN,
 * PL_ENOMEM. */
int pl_stats_describe(const double *x, size_t n, struct pl_describe *out);

/* Spearman's rank correlation of x with its order (1..n): near +1 when the
 * values grow run after run, near -1 when they shrink, NAN when n < 3. */
double pl_stats_trend(const double *x, size_t n);

/* Lag-1 autocorrelation: near 0 when run-to-run noise is independent (a
 * batch mean then averages it out), high when it comes in stretches of
 * slow or fast runs (bursts, which consecutive batches do not average);
 * NAN when n < 3 or the values are all equal. */
double pl_stats_autocorr1(const double *x, size_t n);

/* Percentile bootstrap interval (level e.g. 0.95) for the median of x. */
int pl_stats_bootstrap_median_ci(const double *x, size_t n, size_t resamples, uint64_t seed,
				 double level, double *lo, double *hi);
/* Percentile bootstrap interval for median(a) / median(b), resampling each
 * independently. */
int pl_stats_bootstrap_ratio_ci(const double *a, size_t na, const double *b, size_t nb,
				size_t resamples, uint64_t seed, double level, double *lo,
				double *hi);

struct pl_mwu {
	double u1; /* U statistic of the first sample */
	double p;  /* two-sided p-value */
	int exact; /* 1 when the exact distribution was used */
};
/* Two-sided Mann-Whitney U test, as scipy.stats.mannwhitneyu(a, b) with
 * method='auto' (exact when a sample has at most 8 values and there are no
 * ties, else normal approximation with tie and continuity corrections). */
int pl_stats_mann_whitney(const double *a, size_t na, const double *b, size_t nb,
			  struct pl_mwu *out);

enum pl_change {
	PL_CHANGE_NONE = 0,
	PL_CHANGE_FASTER = 1,
	PL_CHANGE_SLOWER = 2,
};
/* Verdict for ratio = time(candidate)/time(reference): a change counts only
 * when p < alpha and the whole interval lies beyond 1 ± threshold (criterion's
 * rule). */
enum pl_change pl_stats_change(double p, double ci_lo, double ci_hi, double alpha,
			       double threshold);
const char *pl_change_name(enum pl_change c);

#endif
