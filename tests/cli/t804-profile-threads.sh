#!/bin/sh
# env.oversubscribed-threads: more of the job's threads ready to run than
# the CPUs it may use, read from /proc while the profile runs. On one CPU
# (taskset): a C program with 4 spinning threads (native mode) is flagged;
# torch with 4 intra-op threads is flagged, with 1 it is not. The torch
# job computes for 5 s: the readings of its single-threaded start-up
# (importing torch, a second or two, longer beside other tests) count
# too, and after 3 s of compute they once left the over-the-CPUs share
# under 40% (a clean clone's make test).
. "$(dirname "$0")/lib.sh"
set -e
command -v taskset >/dev/null || skip "no taskset"
cat >spin.c <<'C'
#include <pthread.h>
#include <time.h>
static void *spin(void *a) {
	struct timespec t0, t;
	clock_gettime(CLOCK_MONOTONIC, &t0);
	do clock_gettime(CLOCK_MONOTONIC, &t); while (t.tv_sec - t0.tv_sec < 2);
	return a;
}
int main(void) {
	pthread_t th[4];
	for (int i = 0; i < 4; i++) pthread_create(&th[i], 0, spin, 0);
	for (int i = 0; i < 4; i++) pthread_join(th[i], 0);
	return 0;
}
C
if cc -O1 -pthread -o spin spin.c 2>/dev/null; then
	run taskset -c 0 "$PERFLOOP" profile --mode native -o spin -- ./spin
	if [ "$rc" -eq 2 ] && grep -q "perf_event" "$T/err"; then
		echo "native mode not allowed here: $(cat "$T/err")"
	else
		expect_rc 0
		check spin.findings.json "[f for f in d['findings'] if f['leaf'] == 'env.oversubscribed-threads']"
	fi
fi
torch_python
cat >job.py <<'PY'
import sys, time, torch
torch.set_num_threads(int(sys.argv[1]))
b = torch.randn(4_000_000)
end = time.time() + 5
while time.time() < end:
    torch.exp(b).sum()
PY
run taskset -c 0 "$PERFLOOP" profile -o four -- $PY job.py 4
expect_rc 0
check four.findings.json "[f for f in d['findings'] if f['leaf'] == 'env.oversubscribed-threads']"
check four.findings.json "[f for f in d['findings'] if f['leaf'] == 'env.oversubscribed-threads'][0]['evidence']['numbers']['cpus'] == 1"
grep -q "more threads ready to run than CPUs: .* on 1 CPU " "$T/out" || fail "not printed: $(cat "$T/out")"
valid findings-1.schema.json four.findings.json
run taskset -c 0 "$PERFLOOP" profile -o one -- $PY job.py 1
expect_rc 0
check one.findings.json "not [f for f in d['findings'] if f['leaf'] == 'env.oversubscribed-threads']"
