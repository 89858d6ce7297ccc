#!/bin/sh
# perfloop profile --alloc beside heaptrack and Valgrind's massif, in one run
# (bench/allocbench.c):
#   1. accuracy: bytes per site at the default rate (512 KiB) against the
#      program's known bytes (site_x 4 GiB of 1 KiB blocks, site_y 2 GiB of
#      16 KiB, site_z 1 GiB of 200 B), over ROUNDS runs;
#   2. the slowdown of an allocation-heavy program (2 million malloc/free
#      of 16 B-4 KiB): `perfloop bench` of the program alone, under the
#      sampler alone (LD_PRELOAD), under `perfloop profile --alloc` (the
#      whole job: start, run, read, symbolize, write), heaptrack and
#      massif; medians and ratios to the program alone.
# usage: sh bench/alloc.sh BUILD [ROUNDS]
set -eu
BUILD=$(cd "${1:-build}" && pwd)
ROUNDS=${2:-5}
PL=$BUILD/perfloop
PROG=$BUILD/bench/allocbench
W=$(mktemp -d)
trap 'rm -rf "$W"' EXIT
cd "$W"

echo "== 1. bytes per site at the default rate, $ROUNDS runs (truth: 4096, 2048, 1024 MiB)"
for r in $(seq 1 "$ROUNDS"); do
	"$PL" profile --alloc -o s -- "$PROG" sites 4096 >/dev/null
	python3 - s.alloc.json <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
truth = {"site_x": 4096, "site_y": 2048, "site_z": 1024}
got = {s["function"]: s["allocated_bytes"] / 2**20 for s in d["sites"] if s["function"] in truth}
print("  " + ", ".join("%s %.0f MiB (%+.1f%%)" % (k, got[k], 100 * (got[k] / truth[k] - 1)) for k in truth),
      "| samples %d" % d["samples"])
PY
done

echo "== 2. slowdown, 2 million allocations (perfloop bench: medians, ratios to the program alone)"
mkdir -p alx
cmds="'$PROG churn 2'"
cmds="$cmds 'env PERFLOOP_ALLOC_DIR=$W/alx LD_PRELOAD=$BUILD/libperfloop-alloc.so $PROG churn 2'"
cmds="$cmds '$PL profile --alloc --format none -- $PROG churn 2'"
command -v heaptrack >/dev/null && cmds="$cmds 'heaptrack -o $W/ht $PROG churn 2'"
command -v valgrind >/dev/null && cmds="$cmds 'valgrind --tool=massif --massif-out-file=$W/massif.out $PROG churn 2'"
eval "set -- $cmds"
"$PL" bench --quiet --runs 5 --batch 1 --contention keep -o b.json "$@" >/dev/null 2>&1 || true
python3 - b.json <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
base = d["benchmarks"][0]["stats"]["wall_s"]["p50"]
for b in d["benchmarks"]:
    m = b["stats"]["wall_s"]["p50"]
    print("  %-70.70s median %8.3f s  %6.2fx" % (b["command"], m, m / base))
PY
