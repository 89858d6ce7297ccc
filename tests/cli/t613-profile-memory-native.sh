#!/bin/sh
# profile --memory --mode native: each process's RSS read every pass of the
# sampling loop (20 ms at most), its rises charged to the stack of its
# latest sample. A C program that touches 24 blocks of 4 MiB in grow()
# between two idle spins (and stays 0.3 s in grow after the last: under
# ASan beside other tests a sampling pass once came more than 30 ms late,
# and the peak was read, and its stack taken, in idle): the growth flame
# graph is grow's (at least 90% of the 96 MiB), the peak matches the
# kernel's high-water mark within 2%, the JSON validates, PSS and USS hold
# the 96 MiB (mixed mode: t611).
. "$PERFLOOP_SRC/tests/cli/lib.sh"
set -e
need_perf_events
cat >grow.c <<'C'
#include <stdlib.h>
#include <string.h>
#include <time.h>
static void spin(double s)
{
	struct timespec a, b;
	clock_gettime(CLOCK_MONOTONIC, &a);
	do
		clock_gettime(CLOCK_MONOTONIC, &b);
	while ((b.tv_sec - a.tv_sec) + (b.tv_nsec - a.tv_nsec) * 1e-9 < s);
}
__attribute__((noinline)) void grow(void)
{
	for (int i = 0; i < 24; i++) {
		char *p = malloc(4 << 20);
		memset(p, 1, 4 << 20);
		spin(0.03);
	}
	spin(0.3); /* the peak is read while grow runs, however late a pass */
}
__attribute__((noinline)) void idle(void) { spin(0.4); }
int main(void)
{
	idle();
	grow();
	idle();
	return 0;
}
C
cc -O1 -g -o grow grow.c || skip "no C compiler"
run "$PERFLOOP" profile --mode native --memory -o m -- ./grow
expect_rc 0
grep -q "memory: RSS peak .* (the kernel's high-water mark: .*); it grew .* charged to a stack" "$T/out" || fail "no memory line: $(cat "$T/out")"
for f in m.memory.folded m.memory.svg m.memory.json; do [ -s "$f" ] || fail "no $f"; done
python3 - m.memory.folded <<'PY' || fail "growth by stack: $(cat m.memory.folded)"
import sys
total = grow = 0
for line in open(sys.argv[1]):
    stack, n = line.rsplit(" ", 1)
    total += int(n)
    grow += int(n) if ";grow (grow.c:" in stack else 0
print("KiB charged: %d, under grow: %d" % (total, grow))
assert grow >= 0.9 * 96 * 1024, grow
assert grow >= 0.8 * total, (grow, total)
PY
# the samples taken in clock_gettime unwind through the vDSO by its CFI
# (perfloop's own copy): none ends as a stack of [vdso] alone, which about
# 3 in 100 of this program's did, and took a growth charge under load
grep -q "__vdso_clock_gettime" m.folded || fail "no vDSO frame: $(head -3 m.folded)"
! grep -q "^\[vdso\] " m.folded || fail "stacks cut at the vDSO: $(grep "^\[vdso\] " m.folded)"
check m.memory.json 'abs(d["peak_rss_bytes"] - d["max_rss_bytes"]) <= 0.02 * d["max_rss_bytes"]'
check m.memory.json '";grow (grow.c:" in d["peak_stack"] and d["charged_bytes"] <= d["grown_bytes"]'
check m.memory.json 'd["peak_pss_bytes"] >= 96 * 2**20 and d["peak_uss_bytes"] <= d["peak_pss_bytes"] <= 1.01 * d["peak_rss_bytes"]'
valid memory-1.schema.json m.memory.json
echo ok
