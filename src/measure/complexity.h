/*
 * How cost grows with a size n, from a sweep (bench -P n=...): the
 * complexity class that fits best, and the exponent measured.
 *
 * Classes (Google Benchmark's set): each is fitted as cost = a + c*g(n),
 * the constant a standing for what every run pays whatever n is (process
 * start-up: 2 ms of it must not make a quadratic look linear at small n),
 * by least squares on relative errors (timings of a sweep span orders of
 * magnitude; plain least squares would fit the largest n alone), a >= 0.
 * The best class has the smallest normalised RMS. The exponent is b of
 * cost = a + c*n^b fitted the same way over b in [0, 4], with a 95%
 * interval from the profile of the fit's error (the b whose best fit is
 * not worse than the best by more than an F test allows).
 *
 * pl_cx_bigo is Google Benchmark's own method (cost = c*g(n), plain least
 * squares, no constant), for comparing the two in bench/complexity.sh.
 */
#ifndef PL_COMPLEXITY_H
#define PL_COMPLEXITY_H

#include <stddef.h>

enum pl_cx_class { PL_CX_1, PL_CX_LOGN, PL_CX_N, PL_CX_NLOGN, PL_CX_N2, PL_CX_N3, PL_CX_COUNT };

struct pl_cx_fit {
	size_t k;		 /* sizes fitted */
	double range;		 /* largest n / smallest n */
	int weak;		 /* fewer than 4 sizes or less than a 16x range */
	enum pl_cx_class best;	 /* the class with the smallest RMS */
	double a[PL_CX_COUNT];	 /* per class: the constant */
	double c[PL_CX_COUNT];	 /* per class: the coefficient of g(n) */
	double rms[PL_CX_COUNT]; /* per class: RMS of relative residuals */
	double exponent;	 /* b of a + c*n^b */
	double exp_lo, exp_hi;	 /* its 95% interval (NAN where k < 4) */
	double exp_a;		 /* the constant of that fit */
};

/* Fit k points (n > 0, cost > 0). 0, or -1 where fewer than 2 distinct
 * sizes or a value is not positive. */
int pl_cx_fit(const double *n, const double *cost, size_t k, struct pl_cx_fit *out);

/* The fitted cost of class c at n: a[c] + c[c] * g(n). */
double pl_cx_eval(const struct pl_cx_fit *f, enum pl_cx_class c, double n);

/* Google Benchmark's BigO: the class whose c*g(n) has the smallest RMS
 * normalised by the mean cost. */
enum pl_cx_class pl_cx_bigo(const double *n, const double *cost, size_t k);

/* "1", "log n", "n", "n log n", "n^2", "n^3" */
const char *pl_cx_name(enum pl_cx_class c);
/* The exponent a class stands for (log n: 0; n log n: 1). */
double pl_cx_power(enum pl_cx_class c);
/* A class from what a user writes: 1, logn, log n, n, nlogn, n log n,
 * n2, n^2, n3, n^3. 0, or -1. */
int pl_cx_parse(const char *s, enum pl_cx_class *out);

#endif
