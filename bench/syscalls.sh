#!/bin/sh
# perfloop profile --syscalls beside strace -c, in one run: a small-read-
# heavy program (dd copying 200000 one-byte blocks to /dev/null) alone,
# under `perfloop profile --syscalls` (the whole job: tracepoints, reading
# them, the tables) and under `strace -c -f`; `perfloop bench` medians and
# the ratio of each to the program alone.
# usage: sh bench/syscalls.sh BUILD [RUNS]
set -eu
BUILD=$(cd "${1:-build}" && pwd)
RUNS=${2:-5}
PL=$BUILD/perfloop
W=$(mktemp -d)
trap 'rm -rf "$W"' EXIT
cd "$W"
head -c 200000 /dev/zero >in
DD="dd if=$W/in of=/dev/null bs=1 status=none"
"$PL" bench --quiet --runs "$RUNS" --batch 1 --contention keep -o b.json \
	"$DD" "$PL profile --syscalls --format none -- $DD" "strace -c -f -o /dev/null $DD" >/dev/null
python3 - b.json <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
base = d["benchmarks"][0]["stats"]["wall_s"]["p50"]
for b in d["benchmarks"]:
    m = b["stats"]["wall_s"]["p50"]
    print("  %-60.60s median %8.3f s  %6.2fx" % (b["command"].replace(sys.argv[1][:0], ""), m, m / base))
PY
