#!/bin/sh
# How well bench's size-sweep fit reads programs of known class
# (bench/cxprog.c: a scan and a hash set, O(n); a sort, O(n log n);
# every pair, O(n^2); a matrix product, O(n^3)), REPS sweeps of each, and
# Google Benchmark's BigO (each class alone, plain least squares: its
# method, in src/measure/complexity.c) on the very same medians.
#     sh bench/complexity.sh [BUILD_DIR] [REPS]
# Prints a Markdown table for docs/PERFORMANCE.md.
set -eu
BUILD=${1:-build}
REPS=${2:-5}
PL=$(cd "$BUILD" && pwd)/perfloop
B=$(cd "$BUILD" && pwd)/bench
OUT=$(cd "$(dirname "$0")" && pwd)/out/complexity
mkdir -p "$OUT"
# program | class | sizes | the exponent the class has over those sizes
CASES="scan|n|n=15625..1000000*2|1.000
hash|n|n=1000..32000*2|1.000
hash|n|n=15625..1000000*2|1.000
sort|n log n|n=125000..4000000*2|1.075
pairs|n^2|n=2500..40000*2|2.000
cubic|n^3|n=40..640*2|3.000"
echo "| program | true class | sizes | perfloop: class right | exponent: median (min-max) | truth | 95% CI held | BigO: class right (its picks) |"
echo "|---|---|---|---|---|---|---|---|"
echo "$CASES" | while IFS='|' read -r prog class sizes truth; do
	right=0 held=0 bright=0 exps="" picks=""
	for r in $(seq "$REPS"); do
		"$PL" bench --quiet --runs 5 -w 1 --batch 1 -o "$OUT/$prog.json" -P "$sizes" "$B/cxprog $prog {n}" >/dev/null
		line=$(python3 - "$OUT/$prog.json" "$B/cxfit" <<'PY'
import json, subprocess, sys
fit = [c for c in json.load(open(sys.argv[1]))["complexity"] if c["dimension"] == "wall_s"][0]
pts = "\n".join("%r %r" % (p["n"], p["value"]) for p in fit["points"])
ours = subprocess.run([sys.argv[2]], input=pts, capture_output=True, text=True).stdout.strip()
lo, hi = fit["exponent_ci95"] or (float("nan"), float("nan"))
print("%s|%.3f|%.3f|%.3f|%s" % (fit["class"], fit["exponent"], lo, hi, ours.split("|")[4]))
PY
)
		got=$(echo "$line" | cut -d'|' -f1)
		e=$(echo "$line" | cut -d'|' -f2)
		lo=$(echo "$line" | cut -d'|' -f3)
		hi=$(echo "$line" | cut -d'|' -f4)
		big=$(echo "$line" | cut -d'|' -f5)
		[ "$got" = "$class" ] && right=$((right + 1))
		[ "$big" = "$class" ] && bright=$((bright + 1))
		[ "$(echo "$lo <= $truth && $truth <= $hi" | bc -l)" = 1 ] && held=$((held + 1))
		exps="$exps $e"
		picks="$picks${picks:+, }$big"
	done
	med=$(echo "$exps" | tr ' ' '\n' | grep . | sort -n | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}')
	mn=$(echo "$exps" | tr ' ' '\n' | grep . | sort -n | head -1)
	mx=$(echo "$exps" | tr ' ' '\n' | grep . | sort -n | tail -1)
	echo "| $prog | O($class) | $sizes | $right of $REPS | $med ($mn-$mx) | $truth | $held of $REPS | $bright of $REPS ($picks) |"
done
