/*
 * The speed probe: two fixed loops that perfloop times on the measured CPU
 * around every sample bench takes, so that it can tell when the machine,
 * not the command, changed speed.
 *
 * Virtual machines are the machines our users measure on (CI runners,
 * cloud boxes, these 2-core VMs), and their host slows a vCPU down for
 * seconds at a time, invisibly to the guest's load and to a run's own
 * statistics. Measured here: a compare loop (distinct_naive) ran 33 ms in
 * one phase and 60 ms in the next, phases of 1 to 10 s, while the guest was
 * idle. Two kinds of slow-down, two loops:
 *  - a chain of dependent xorshift steps: only its latency matters, so it
 *    slows with the clock and with time stolen by the host;
 *  - compares over a small array, independent of each other: they fill the
 *    core's execution ports, so they slow when the host runs something on
 *    our vCPU's sibling hyperthread (1.8x here, when the chain did not
 *    move at all: a latency loop alone missed the commonest phase).
 * A reading more than PL_PROBE_CONTENDED times slower than the fastest of
 * the run means the CPU was contended: bench waits for it to recover, and
 * leaves out (flagged, never dropped) what was measured while it was not.
 */
#include "speedprobe.h"

#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "monotime.h"

#define LAT_ITERS 100000
#define THR_N 900

static int thr_data[THR_N];
static int thr_ready;

/* The loops time the machine, not perfloop's build: under a sanitizer
 * (every load checked) or -O0 they would be slow and noisy, and judge a
 * quiet CPU contended. */
#if defined(__GNUC__) && !defined(__clang__)
#define PROBE_FN __attribute__((noinline, optimize("O2"), no_sanitize("address", "undefined")))
#elif defined(__clang__)
#define PROBE_FN __attribute__((noinline, no_sanitize("address", "undefined")))
#else
#define PROBE_FN
#endif

PROBE_FN static double lat_loop(void)
{
	volatile uint64_t sink;
	uint64_t x = 88172645463325252ULL;
	double a = pl_now_s();
	for (int i = 0; i < LAT_ITERS; i++) {
		x ^= x << 13;
		x ^= x >> 7;
		x ^= x << 17;
	}
	sink = x;
	(void)sink;
	return pl_now_s() - a;
}

PROBE_FN static double thr_loop(void)
{
	if (!thr_ready) {
		uint32_t s = 12345;
		for (int i = 0; i < THR_N; i++) {
			s = s * 1103515245u + 12345u;
			thr_data[i] = (int)(s >> 16) % 4096;
		}
		thr_ready = 1;
	}
	/* the array is read through a volatile pointer so that the compiler
	 * cannot count the pairs at build time */
	const int *volatile v = thr_data;
	const int *d = v;
	volatile long sink;
	long c = 0;
	double a = pl_now_s();
	for (int i = 0; i < THR_N; i++)
		for (int j = 0; j < i; j++)
			c += d[j] == d[i];
	sink = c;
	(void)sink;
	return pl_now_s() - a;
}

void pl_speedprobe_init(struct pl_speedprobe *p, double wait_budget_s)
{
	memset(p, 0, sizeof(*p));
	p->wait_budget_s = wait_budget_s;
}

void pl_speedprobe_release(struct pl_speedprobe *p)
{
	free(p->r);
	memset(p, 0, sizeof(*p));
}

void pl_speedprobe_record(struct pl_speedprobe *p, struct pl_probe_reading r)
{
	if (p->n == p->cap) {
		size_t cap = p->cap ? p->cap * 2 : 64;
		struct pl_probe_reading *g = realloc(p->r, cap * sizeof(*g));
		if (g) {
			p->r = g;
			p->cap = cap;
		}
	}
	if (p->n < p->cap)
		p->r[p->n++] = r;
	if (p->min.lat_s <= 0 || r.lat_s < p->min.lat_s)
		p->min.lat_s = r.lat_s;
	if (p->min.thr_s <= 0 || r.thr_s < p->min.thr_s)
		p->min.thr_s = r.thr_s;
	p->last_contended = pl_speedprobe_slowdown(p, r) > PL_PROBE_CONTENDED;
}

struct pl_probe_reading pl_speedprobe_take(struct pl_speedprobe *p)
{
	struct pl_probe_reading r = {.lat_s = lat_loop(), .thr_s = thr_loop()};
	pl_speedprobe_record(p, r);
	p->last_at = pl_now_s();
	return r;
}

double pl_speedprobe_slowdown(const struct pl_speedprobe *p, struct pl_probe_reading r)
{
	double a = p->min.lat_s > 0 ? r.lat_s / p->min.lat_s : 1;
	double b = p->min.thr_s > 0 ? r.thr_s / p->min.thr_s : 1;
	double s = a > b ? a : b;
	return s > 1 ? s : 1;
}

struct pl_probe_reading pl_speedprobe_wait(struct pl_speedprobe *p, double max_s,
					   const volatile sig_atomic_t *interrupted)
{
	if (p->n > 0 && !p->last_contended && pl_now_s() - p->last_at < 0.002)
		return p->r[p->n - 1];
	struct pl_probe_reading r = pl_speedprobe_take(p);
	if (!p->last_contended)
		return r;
	double start = pl_now_s();
	p->waits++;
	while (p->last_contended && !(interrupted && *interrupted)) {
		double spent = pl_now_s() - start;
		if (spent >= max_s || p->waited_s + spent >= p->wait_budget_s)
			break;
		struct timespec ts = {0, 20 * 1000 * 1000};
		while (nanosleep(&ts, &ts) != 0 && errno == EINTR && !(interrupted && *interrupted))
			;
		r = pl_speedprobe_take(p);
	}
	p->waited_s += pl_now_s() - start;
	return r;
}

static int cmp_dbl(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return (x > y) - (x < y);
}

struct pl_probe_reading pl_speedprobe_fast(const struct pl_speedprobe *p)
{
	struct pl_probe_reading q = {0, 0};
	if (p->n < 5) /* too few to say */
		return q;
	double *s = malloc(p->n * sizeof(*s));
	if (!s)
		return q;
	for (int kind = 0; kind < 2; kind++) {
		for (size_t i = 0; i < p->n; i++)
			s[i] = kind ? p->r[i].thr_s : p->r[i].lat_s;
		qsort(s, p->n, sizeof(*s), cmp_dbl);
		double v = s[(p->n - 1) / 20];
		if (kind)
			q.thr_s = v;
		else
			q.lat_s = v;
	}
	free(s);
	return q;
}
