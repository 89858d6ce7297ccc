#!/bin/sh
# Does perfloop's speed probe see the host's slow phases? Runs a command
# again and again for SECONDS on the last CPU with both probe loops timed
# before each run, then prints, per window of 20 runs, the medians of the
# run and of each loop, and the correlation of each loop with the run.
# usage: sh bench/probetrack.sh BUILD_DIR [SECONDS] [COMMAND...]
set -eu
B=${1:-build}
S=${2:-25}
shift 2 2>/dev/null || shift $#
[ $# -gt 0 ] || set -- "$B/examples/distinct_naive" 20000
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
cc -O2 -o "$T/probetrack" "$(dirname "$0")/probetrack.c"
CPU=$(($(nproc) - 1))
"$T/probetrack" "$CPU" "$S" "$@" >"$T/out"
python3 - "$T/out" <<'PY'
import statistics as st, sys
r = [tuple(map(float, l.split())) for l in open(sys.argv[1])]
def corr(a, b):
    ma, mb = st.mean(a), st.mean(b)
    num = sum((x - ma) * (y - mb) for x, y in zip(a, b))
    den = (sum((x - ma) ** 2 for x in a) * sum((y - mb) ** 2 for y in b)) ** 0.5
    return num / den if den else float("nan")
print("runs %d; correlation with the run: chain %.2f, ports %.2f" % (
    len(r), corr([x[0] for x in r], [x[2] for x in r]), corr([x[1] for x in r], [x[2] for x in r])))
print("window  run_ms  chain_ms  ports_ms")
for i in range(0, len(r) - 19, 20):
    w = r[i:i + 20]
    print("%6d %7.2f %9.3f %9.3f" % (i, st.median(x[2] for x in w), st.median(x[0] for x in w), st.median(x[1] for x in w)))
PY
