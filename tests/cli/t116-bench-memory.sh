#!/bin/sh
# bench: page faults per run (getrusage), always in samples[] and stats;
# with --memory shown and scored as dimensions. A program that touches
# 32 MiB takes at least 8192 minor faults (4 KiB pages) per run, one that
# touches nothing far fewer; the summary validates. --alloc: a program of
# 1000 mallocs of 10 KiB allocates 10240000 bytes per run, exactly.
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

# --alloc: bytes and calls allocated per run, counted by the preloaded
# library; a --prepare hook's allocations are not the run's
cat >allocs.c <<'C'
#include <stdlib.h>
int main(void)
{
	for (int i = 0; i < 1000; i++) {
		volatile char *p = malloc(10240);
		p[0] = 1;
		free((void *)p);
	}
	return 0;
}
C
cc -O1 -o allocs allocs.c
run "$PERFLOOP" bench --alloc --batch 1 -r 4 --prepare ./allocs -o a.json -- ./allocs
expect_rc 0
grep -q "Allocated (median):   9.8 MiB in 1000 calls per run" "$T/out" || fail "no allocation line: $(cat "$T/out")"
check a.json "d['settings']['alloc'] is True"
check a.json "10240000 <= d['benchmarks'][0]['stats']['allocated_bytes']['p50'] <= 10240000 + 65536"
check a.json "1000 <= d['benchmarks'][0]['stats']['allocations']['p50'] <= 1050"
check a.json "all(s['allocated_bytes'] >= 10240000 for s in d['benchmarks'][0]['samples'])"
check a.json "d['benchmarks'][0]['dimensions']['allocated_bytes']['unit'] == 'bytes'"
valid bench-1.schema.json a.json
run "$PERFLOOP" bench --batch 1 -r 2 -o n2.json -- ./allocs
check n2.json "'allocated_bytes' not in d['benchmarks'][0]['stats'] and d['settings']['alloc'] is False"

# --syscalls: system calls per run, counted by the raw_syscalls tracepoint
# in the kernel: a program making N getppid calls makes exactly N more than
# with 0, and as many in all as strace -c -f counts; where the tracepoint is
# refused (not root), one notice and the run goes on. Batches of 4 (counts
# are per run: exact only if divided right) and not the auto batch, which a
# loaded machine drives to hundreds of runs a sample (37 s of a CI run)
cat >calls.c <<'C'
#include <stdlib.h>
#include <sys/syscall.h>
#include <unistd.h>
int main(int argc, char **argv)
{
	int n = atoi(argv[1]);
	for (int i = 0; i < n; i++)
		syscall(SYS_getppid);
	return 0;
}
C
cc -O1 -o calls calls.c
run "$PERFLOOP" bench --counters none --syscalls --batch 4 -r 5 -o s0.json -- ./calls 0
expect_rc 0
if grep -q "Counters unsupported here: syscalls" "$T/out"; then
	grep -q "syscalls: .*tracepoint" "$T/out" || fail "no reason: $(cat "$T/out")"
	check s0.json "d['unsupported_counters']['syscalls']"
	echo "ok (syscalls: the tracepoint is refused here)"
	exit 0
fi
run "$PERFLOOP" bench --counters none --syscalls --batch 4 -r 5 -o s1.json -- ./calls 2500
expect_rc 0
grep -q "Counters (median):    syscalls [0-9]" "$T/out" || fail "no syscalls line: $(cat "$T/out")"
n0=$(j s0.json "d['benchmarks'][0]['counters']['syscalls']['stats']['p50']")
check s1.json "d['benchmarks'][0]['counters']['syscalls']['stats']['p50'] == $n0 + 2500"
check s1.json "all(s['counters']['syscalls'] == $n0 + 2500 for s in d['benchmarks'][0]['samples'])"
# scored unless the timing itself was too noisy (a loaded machine)
check s1.json "d['benchmarks'][0]['dimensions']['syscalls']['unit'] == 'count' and (d['benchmarks'][0]['dimensions']['syscalls']['scored'] or 'timing CV' in d['benchmarks'][0]['dimensions']['syscalls']['reason'])"
valid bench-1.schema.json s1.json
if command -v strace >/dev/null 2>&1; then
	strace -f -c -o st.txt ./calls 2500
	# % time, seconds, usecs/call, calls, errors, "total"
	total=$(awk '$NF == "total" {print $4; exit}' st.txt)
	check s1.json "d['benchmarks'][0]['counters']['syscalls']['stats']['p50'] == $total"
fi
# --counters auto does not ask for the tracepoint; --counters syscalls does
run "$PERFLOOP" bench -r 2 -o s2.json -- ./calls 1
check s2.json "'syscalls' not in d['benchmarks'][0]['counters']"
run "$PERFLOOP" bench --counters syscalls -r 2 -o s3.json -- ./calls 1
check s3.json "d['benchmarks'][0]['counters']['syscalls']['stats']['p50'] == $n0 + 1"
echo ok
