/*
 * Complexity fits for size sweeps (the method is in complexity.h): two
 * unknowns per model, solved in closed form, so a fit of a sweep is a few
 * hundred multiplications per class and a thousand small ones for the
 * exponent's profile.
 */
#include "complexity.h"

#include <math.h>
#include <string.h>
#include <strings.h>

static const char *const names[PL_CX_COUNT] = {"1", "log n", "n", "n log n", "n^2", "n^3"};

const char *pl_cx_name(enum pl_cx_class c)
{
	return c < PL_CX_COUNT ? names[c] : "?";
}

double pl_cx_power(enum pl_cx_class c)
{
	static const double p[PL_CX_COUNT] = {0, 0, 1, 1, 2, 3};
	return c < PL_CX_COUNT ? p[c] : NAN;
}

int pl_cx_parse(const char *s, enum pl_cx_class *out)
{
	static const char *const spell[][3] = {{"1", "o(1)", "const"},	 {"logn", "log n", "o(log n)"},
					       {"n", "o(n)", "linear"},	 {"nlogn", "n log n", "o(n log n)"},
					       {"n2", "n^2", "o(n^2)"}, {"n3", "n^3", "o(n^3)"}};
	for (int c = 0; c < PL_CX_COUNT; c++)
		for (int k = 0; k < 3; k++)
			if (!strcasecmp(s, spell[c][k])) {
				*out = (enum pl_cx_class)c;
				return 0;
			}
	return -1;
}

static double g_of(enum pl_cx_class c, double n)
{
	switch (c) {
	case PL_CX_1:
		return 1;
	case PL_CX_LOGN:
		return log2(n);
	case PL_CX_N:
		return n;
	case PL_CX_NLOGN:
		return n * log2(n);
	case PL_CX_N2:
		return n * n;
	default:
		return n * n * n;
	}
}

double pl_cx_eval(const struct pl_cx_fit *f, enum pl_cx_class c, double n)
{
	return c < PL_CX_COUNT ? f->a[c] + f->c[c] * g_of(c, n) : NAN;
}

/* min over a >= 0, c >= 0 of sum ((a + c*g_i) / y_i - 1)^2: the relative
 * error of each point counts the same. Returns that sum. */
static double fit2(const double *g, const double *y, size_t k, int with_c, double *a, double *c)
{
	double suu = 0, sug = 0, sgg = 0, su = 0, sg = 0;
	for (size_t i = 0; i < k; i++) {
		double u = 1 / y[i], v = with_c ? g[i] / y[i] : 0;
		suu += u * u;
		sug += u * v;
		sgg += v * v;
		su += u;
		sg += v;
	}
	double det = suu * sgg - sug * sug;
	double A = 0, C = 0;
	if (with_c && det > 1e-300 * (suu * sgg + 1e-300)) {
		A = (su * sgg - sg * sug) / det;
		C = (sg * suu - su * sug) / det;
	}
	if (!with_c || A < 0 || C < 0 || !(det > 0)) {
		/* on the boundary: the better of a alone and c alone */
		double a1 = su / suu, c1 = with_c && sgg > 0 ? sg / sgg : 0;
		double r1 = 0, r2 = 0;
		for (size_t i = 0; i < k; i++) {
			double e1 = a1 / y[i] - 1, e2 = c1 * g[i] / y[i] - 1;
			r1 += e1 * e1;
			r2 += e2 * e2;
		}
		if (!with_c || r1 <= r2) {
			A = a1;
			C = 0;
		} else {
			A = 0;
			C = c1;
		}
	}
	*a = A;
	*c = C;
	double r = 0;
	for (size_t i = 0; i < k; i++) {
		double e = (A + C * g[i]) / y[i] - 1;
		r += e * e;
	}
	return r;
}

/* Student's t, 99.9% quantile, df degrees of freedom. */
static double t999(size_t df)
{
	static const double t[] = {318.309, 22.327, 10.215, 7.173, 5.893, 5.208, 4.785, 4.501,
				   4.297,   4.144,  4.025,  3.930, 3.852, 3.787, 3.733, 3.686,
				   3.646,   3.610,  3.579,  3.552, 3.527, 3.505, 3.485, 3.467,
				   3.450,   3.435,  3.421,  3.408, 3.396, 3.385};
	if (df == 0)
		return INFINITY;
	return df <= 30 ? t[df - 1] : df <= 60 ? 3.27 : 3.09;
}

/* Student's t, 97.5% quantile, df degrees of freedom. */
static double t975(size_t df)
{
	static const double t[] = {12.706, 4.303, 3.182, 2.776, 2.571, 2.447, 2.365, 2.306,
				   2.262,  2.228, 2.201, 2.179, 2.160, 2.145, 2.131, 2.120,
				   2.110,  2.101, 2.093, 2.086, 2.080, 2.074, 2.069, 2.064,
				   2.060,  2.056, 2.052, 2.048, 2.045, 2.042};
	if (df == 0)
		return INFINITY;
	return df <= 30 ? t[df - 1] : df <= 60 ? 2.0 : 1.96;
}

#define MAXK 256
#define BSTEPS 800 /* the exponent's grid: [0, 4] by 0.005 */

static double rss_at(const double *x, const double *y, size_t k, double b, double *a)
{
	double g[MAXK], c;
	for (size_t i = 0; i < k; i++)
		g[i] = pow(x[i], b);
	return fit2(g, y, k, 1, a, &c);
}

int pl_cx_fit(const double *n, const double *cost, size_t k, struct pl_cx_fit *out)
{
	memset(out, 0, sizeof *out);
	if (k < 2 || k > MAXK)
		return -1;
	double lo = INFINITY, hi = 0;
	for (size_t i = 0; i < k; i++) {
		if (!(n[i] > 0) || !(cost[i] > 0) || !isfinite(n[i]) || !isfinite(cost[i]))
			return -1;
		lo = fmin(lo, n[i]);
		hi = fmax(hi, n[i]);
	}
	if (!(hi > lo))
		return -1;
	out->k = k;
	out->range = hi / lo;
	size_t distinct = 0;
	for (size_t i = 0; i < k; i++) {
		size_t j = 0;
		while (j < i && n[j] != n[i])
			j++;
		distinct += j == i;
	}
	out->weak = distinct < 4 || out->range < 16;
	/* the classes: the best of those with a growing term, unless an F test
	 * at 1% says its growth is not told apart from noise by the constant
	 * alone (the nested model with one unknown less): noise must not read
	 * as growth */
	double g[MAXK], rss[PL_CX_COUNT];
	for (int cl = 0; cl < PL_CX_COUNT; cl++) {
		for (size_t i = 0; i < k; i++)
			g[i] = g_of((enum pl_cx_class)cl, n[i]);
		rss[cl] = fit2(g, cost, k, cl != PL_CX_1, &out->a[cl], &out->c[cl]);
		out->rms[cl] = sqrt(rss[cl] / (double)k);
	}
	out->best = PL_CX_LOGN;
	for (int cl = PL_CX_LOGN + 1; cl < PL_CX_COUNT; cl++)
		if (rss[cl] < rss[out->best])
			out->best = (enum pl_cx_class)cl;
	/* a simpler class that fits almost as well (RMS within 20%) is the
	 * answer: under noise n and n log n differ by a factor of 1.4 over a
	 * 64x range, and a noisy point must not buy a log factor */
	for (int cl = PL_CX_LOGN; cl < (int)out->best; cl++)
		if (out->rms[cl] <= out->rms[out->best] * 1.2) {
			out->best = (enum pl_cx_class)cl;
			break;
		}
	if (k > 2) {
		/* 1% shared by the five growing classes the best is picked from
		 * (Bonferroni: 0.2% each): at 1% each, pure noise over five sizes
		 * read as growth in 1.75% of sweeps (simulated), a constant
		 * program's sweep once in t114 */
		double t = t999(k - 2);
		double f = (rss[PL_CX_1] - rss[out->best]) / (rss[out->best] / (double)(k - 2) + 1e-300);
		/* the test is weak with few sizes, or where no class fits well (a
		 * knee where the data leave a cache): a cost that no constant
		 * comes near (25% RMS and more) and that at least doubles from
		 * the smallest size to the largest is growth, whatever the test */
		size_t i0 = 0, i1 = 0;
		for (size_t i = 1; i < k; i++) {
			if (n[i] < n[i0])
				i0 = i;
			if (n[i] > n[i1])
				i1 = i;
		}
		int obvious = (out->rms[PL_CX_1] >= 0.15 &&
			       out->rms[out->best] * 3 <= out->rms[PL_CX_1]) ||
			      (out->rms[PL_CX_1] >= 0.25 && cost[i1] >= 2 * cost[i0]);
		if (f < t * t && !obvious)
			out->best = PL_CX_1;
		/* growth must not rest on the largest size alone: one slow
		 * run there is "fitted" by n^3 at no cost elsewhere (0.5% of
		 * pure-noise sweeps over five sizes did so). Without the
		 * largest size the same class must still tell growth. */
		if (out->best != PL_CX_1 && !obvious && k >= 5) {
			double gs[MAXK], ys[MAXK], g1[MAXK], a2, c2;
			size_t m = 0;
			for (size_t i = 0; i < k; i++)
				if (n[i] < n[i1]) {
					gs[m] = g_of(out->best, n[i]);
					g1[m] = 1;
					ys[m++] = cost[i];
				}
			if (m >= 4) {
				double rb = fit2(gs, ys, m, 1, &a2, &c2);
				double r1 = fit2(g1, ys, m, 0, &a2, &c2);
				double ts = t999(m - 2);
				if ((r1 - rb) / (rb / (double)(m - 2) + 1e-300) < ts * ts)
					out->best = PL_CX_1;
			}
		}
	}
	/* the exponent: b of a + c*(n/lo)^b, on a grid, then refined */
	double x[MAXK], prof[BSTEPS + 1], a;
	for (size_t i = 0; i < k; i++)
		x[i] = n[i] / lo;
	size_t bi = 0;
	for (size_t s = 0; s <= BSTEPS; s++) {
		prof[s] = rss_at(x, cost, k, 4.0 * (double)s / BSTEPS, &a);
		if (prof[s] < prof[bi])
			bi = s;
	}
	double l = 4.0 * (double)(bi ? bi - 1 : 0) / BSTEPS;
	double r = 4.0 * (double)(bi < BSTEPS ? bi + 1 : BSTEPS) / BSTEPS;
	for (int it = 0; it < 40; it++) { /* golden section within the grid cell */
		double m1 = r - (r - l) * 0.618, m2 = l + (r - l) * 0.618;
		if (rss_at(x, cost, k, m1, &a) < rss_at(x, cost, k, m2, &a))
			r = m2;
		else
			l = m1;
	}
	out->exponent = (l + r) / 2;
	double rmin = rss_at(x, cost, k, out->exponent, &out->exp_a);
	if (out->best == PL_CX_1) { /* no growth told from noise: b is 0 */
		out->exponent = 0;
		out->exp_a = out->a[PL_CX_1];
	}
	out->exp_lo = out->exp_hi = NAN;
	if (k >= 4) {
		double t = t975(k - 3);
		double limit = rmin * (1 + t * t / (double)(k - 3)) + 1e-18;
		size_t s = bi;
		while (s > 0 && prof[s - 1] <= limit)
			s--;
		out->exp_lo = fmin(4.0 * (double)s / BSTEPS, out->exponent);
		if (out->best == PL_CX_1)
			out->exp_lo = 0;
		s = bi;
		while (s < BSTEPS && prof[s + 1] <= limit)
			s++;
		out->exp_hi = fmax(4.0 * (double)s / BSTEPS, out->exponent);
	}
	return 0;
}

enum pl_cx_class pl_cx_bigo(const double *n, const double *cost, size_t k)
{
	enum pl_cx_class best = PL_CX_1;
	double best_rms = INFINITY, mean = 0;
	for (size_t i = 0; i < k; i++)
		mean += cost[i] / (double)k;
	for (int cl = 0; cl < PL_CX_COUNT; cl++) {
		double sgy = 0, sgg = 0;
		for (size_t i = 0; i < k; i++) {
			double g = g_of((enum pl_cx_class)cl, n[i]);
			sgy += g * cost[i];
			sgg += g * g;
		}
		double c = sgg > 0 ? sgy / sgg : 0, r = 0;
		for (size_t i = 0; i < k; i++) {
			double e = cost[i] - c * g_of((enum pl_cx_class)cl, n[i]);
			r += e * e;
		}
		double rms = sqrt(r / (double)k) / mean;
		if (rms < best_rms) {
			best_rms = rms;
			best = (enum pl_cx_class)cl;
		}
	}
	return best;
}
