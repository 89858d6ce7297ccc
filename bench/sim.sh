#!/bin/sh
# The deterministic measure (bench --sim) side by side with Valgrind run by
# hand, one run each: for a C program (bench/busy) and a Python script, the
# simulated instructions' CV over RUNS runs (goal <= 0.1%), the slowdown of
# a simulated run against the bare run, and perfloop's cost per simulated
# run against `valgrind --tool=cachegrind --cache-sim=no` by hand (goal <=
# 1.1x). Then an A/A and A/B table: N bench comparisons each of identical
# commands and of 5% and 10% more work, decided on the counts (--sim
# instructions), with HOGS background CPU hogs running.
#
# usage: bench/sim.sh [BUILD_DIR] [RUNS] [N] [HOGS]
set -eu
BUILD=${1:-build}
RUNS=${2:-10}
N=${3:-20}
HOGS=${4:-2}
PL=$BUILD/perfloop
BUSY=$BUILD/bench/busy
PY=/usr/bin/python3
OUT=$(mktemp -d)
hogs=""
trap 'for p in $hogs; do kill $p 2>/dev/null; done; rm -rf "$OUT"' EXIT
cat >"$OUT/d.py" <<'PYEOF'
d = {}
for i in range(200000):
    d["k%d" % i] = i * i
print(sum(v for v in d.values()) % 97)
PYEOF
echo "| program | sim runs | instructions (median) | CV | bare run | simulated run (perfloop) | slowdown | cachegrind by hand | perfloop / by hand |"
echo "|---|---|---|---|---|---|---|---|---|"
for prog in "c:$BUSY 20000000" "python:$PY $OUT/d.py"; do
	name=${prog%%:*}
	cmd=${prog#*:}
	# shellcheck disable=SC2086
	"$PL" bench --quiet --no-history -w 1 -r 5 --batch 1 --sim instructions --sim-runs "$RUNS" -o "$OUT/s.json" -- $cmd
	# by hand: the same valgrind, one process at a time, timed by the shell's clock
	by_hand=""
	for i in 1 2 3; do
		t0=$(date +%s.%N)
		# shellcheck disable=SC2086
		PYTHONHASHSEED=0 valgrind --tool=cachegrind --cache-sim=no --trace-children=yes \
			--cachegrind-out-file="$OUT/cg.%p" --log-file="$OUT/vg.log" $cmd >/dev/null
		t1=$(date +%s.%N)
		by_hand="$by_hand $(echo "$t1 - $t0" | bc)"
	done
	python3 - "$OUT/s.json" "$name" "$RUNS" $by_hand <<'PYEOF'
import json, statistics as st, sys
b = json.load(open(sys.argv[1]))["benchmarks"][0]
runs = b["sim"]["runs"]
ir = [r["instructions"] for r in runs]
sim_wall = st.median(r["wall_s"] for r in runs)
bare = b["stats"]["wall_s"]["p50"]
hand = st.median(float(x) for x in sys.argv[4:])
cv = st.stdev(ir) / st.mean(ir) if len(ir) > 1 else 0
print("| %s | %d | %.0f | %.4f%% | %.1f ms | %.2f s | %.0fx | %.2f s | %.2f |" % (
    sys.argv[2], len(ir), st.median(ir), cv * 100, bare * 1e3, sim_wall, sim_wall / bare, hand, sim_wall / hand))
PYEOF
done
echo
i=0
while [ "$i" -lt "$HOGS" ]; do
	sh -c 'while :; do :; done' &
	hogs="$hogs $!"
	i=$((i + 1))
done
echo "With $HOGS background CPU hogs: $N bench comparisons each (default settings but --sim instructions; 'b' against 'a')"
echo
echo "| b's work | wrong (A/A: faster or slower; A/B: not slower) | of | median bench time |"
echo "|---|---|---|---|"
for pct in 0 5 10; do
	wrong=0
	times=""
	k=0
	while [ "$k" -lt "$N" ]; do
		nb=$((20000000 * (100 + pct) / 100))
		t0=$(date +%s.%N)
		"$PL" bench --quiet --no-history --sim instructions -n a -n b -o "$OUT/ab.json" "$BUSY 20000000" "$BUSY $nb"
		t1=$(date +%s.%N)
		times="$times $(echo "$t1 - $t0" | bc)"
		v=$(python3 -c "import json;print(json.load(open('$OUT/ab.json'))['comparisons'][0]['verdict'])")
		if [ "$pct" -eq 0 ] && [ "$v" != "no change" ]; then wrong=$((wrong + 1)); fi
		if [ "$pct" -gt 0 ] && [ "$v" != "slower" ]; then wrong=$((wrong + 1)); fi
		k=$((k + 1))
	done
	med=$(python3 -c "import statistics,sys;print('%.1f s' % statistics.median(float(x) for x in sys.argv[1:]))" $times)
	echo "| +$pct% | $wrong | $N | $med |"
done
