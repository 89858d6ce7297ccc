#!/bin/sh
# env.oversubscribed-threads: more of the job's threads ready to run than
# the CPUs it may use, read from /proc while the profile runs. On one CPU
# (taskset), torch with 4 intra-op threads is flagged, with 1 it is not.
. "$(dirname "$0")/lib.sh"
set -e
torch_python
command -v taskset >/dev/null || skip "no taskset"
cat >job.py <<'PY'
import sys, time, torch
torch.set_num_threads(int(sys.argv[1]))
b = torch.randn(4_000_000)
end = time.time() + 3
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
