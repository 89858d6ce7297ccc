#!/bin/sh
# Does batching lower the noise here? For commands of about 2, 30 and 200 ms
# (bench/busy calibrated), RUNS single runs each (perfloop bench --batch 1),
# then: the per-run CV, the lag-1 autocorrelation of the runs (0: independent
# noise, which batch means average out; high: noise in stretches, which they
# do not), and the CV of samples that are means of K consecutive runs, next
# to 1/sqrt(K) of the per-run CV (what independent noise would give).
#
# usage: bench/batches.sh [BUILD_DIR] [RUNS]   (prefix taskset -c N to pin)
set -eu
BUILD=${1:-build}
RUNS=${2:-200}
PL=$BUILD/perfloop
BUSY=$BUILD/bench/busy
OUT=$(mktemp -d)
trap 'rm -rf "$OUT"' EXIT
"$PL" bench --quiet -w 1 -r 5 --counters none -o "$OUT/cal.json" -- "$BUSY" 10000000
for ms in 2 30 200; do
	n=$(python3 -c "import json;t=json.load(open('$OUT/cal.json'))['benchmarks'][0]['stats']['wall_s']['p50'];print(int(10000000*$ms/1000/t))")
	r=$RUNS
	[ "$ms" -eq 200 ] && r=$((RUNS / 2))
	"$PL" bench --quiet -w 2 -r "$r" --batch 1 --counters none -o "$OUT/r.json" -- "$BUSY" "$n"
	python3 - "$OUT/r.json" "$ms" <<'PY'
import json, statistics as st, sys
w = [s["wall_s"] for s in json.load(open(sys.argv[1]))["benchmarks"][0]["samples"]]
m = st.mean(w)
cv = st.stdev(w) / m
ac = sum((w[i] - m) * (w[i + 1] - m) for i in range(len(w) - 1)) / sum((x - m) ** 2 for x in w)
row = ["~%s ms" % sys.argv[2], "%d" % len(w), "%.1f%%" % (cv * 100), "%.2f" % ac]
for k in (5, 10, 20):
    b = [st.mean(w[i:i + k]) for i in range(0, len(w) - k + 1, k)]
    row.append("%.1f%% (%.1f%%)" % (st.stdev(b) / st.mean(b) * 100, cv / k ** 0.5 * 100))
print("| " + " | ".join(row) + " |")
PY
done
