#!/bin/sh
# bench: page faults per run (getrusage), always in samples[] and stats;
# with --memory shown and scored as dimensions. A program that touches
# 32 MiB takes at least 8192 minor faults (4 KiB pages) per run, one that
# touches nothing far fewer; the summary validates.
. "$PERFLOOP_SRC/tests/cli/lib.sh"
set -e
cat >touch.c <<'C'
#include <stdlib.h>
#include <string.h>
int main(int argc, char **argv)
{
	size_t n = (size_t)atol(argv[1]) << 20;
	char *p = malloc(n ? n : 1);
	memset(p, 1, n);
	return p[n / 2] == 2;
}
C
cc -O1 -o touch touch.c || skip "no C compiler"
run "$PERFLOOP" bench --memory --batch 1 -r 5 -o m.json "./touch 32" "./touch 0"
expect_rc 0
grep -q "Page faults (median): [0-9]* minor, [0-9]* major per run" "$T/out" || fail "no faults line: $(cat "$T/out")"
check m.json "d['settings']['memory'] is True"
check m.json "d['benchmarks'][0]['stats']['minor_faults']['p50'] >= 8192"
check m.json "d['benchmarks'][1]['stats']['minor_faults']['p50'] < 2048"
check m.json "all(s['minor_faults'] >= 8192 for s in d['benchmarks'][0]['samples'])"
check m.json "all(k in d['benchmarks'][0]['dimensions'] for k in ('minor_faults', 'major_faults', 'memory'))"
check m.json "d['benchmarks'][0]['dimensions']['minor_faults']['unit'] == 'count'"
# without --memory: in the samples, not a dimension, not printed
run "$PERFLOOP" bench --batch 1 -r 3 -o n.json -- ./touch 8
expect_rc 0
grep -q "Page faults" "$T/out" && fail "faults printed without --memory"
check n.json "'minor_faults' not in d['benchmarks'][0]['dimensions'] and d['benchmarks'][0]['samples'][0]['minor_faults'] >= 2048"
valid bench-1.schema.json m.json
echo ok
