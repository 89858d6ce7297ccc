#!/bin/sh
# make demo: perfloop's loop on a shipped example. Count the distinct values
# among N integers: the "before" program scans everything seen so far
# (O(n^2)), the "after" program sorts first (O(n log n)). perfloop benches
# both side by side, then measures each as a before/after pair, lets verify
# decide (the outputs' equality is the functional suite), and reports.
set -eu
PL=${1:-build/perfloop}
BIN=$(dirname "$PL")/examples
N=${DEMO_N:-20000}
OUT=${DEMO_OUT:-demo-out}
rm -rf "$OUT"
mkdir -p "$OUT"
SRC=$(cd "$(dirname "$0")" && pwd)

echo "== 0. select: which finding first? (examples/distinct/findings.json)"
"$PL" select --findings "$SRC/distinct/findings.json" --explain -o "$OUT/candidate.json" >/dev/null
echo

echo "== 1. side by side: distinct_naive vs distinct_sorted, n=$N"
echo
"$PL" bench --time-budget 2 -n naive -n sorted \
	"$BIN/distinct_naive $N" "$BIN/distinct_sorted $N" -o "$OUT/side-by-side.json"

echo "== 2. before and after the change, measured identically"
"$PL" bench --quiet --time-budget 2 -n distinct -o "$OUT/before.json" -- "$BIN/distinct_naive" "$N"
"$PL" bench --quiet --time-budget 2 -n distinct -o "$OUT/after.json" -- "$BIN/distinct_sorted" "$N"

echo
echo "== 3. verify: is it a quantified win? (suite: both programs agree)"
set +e
"$PL" verify --before "$OUT/before.json" --after "$OUT/after.json" \
	--suite "sh -c '[ \"\$($BIN/distinct_naive 5000)\" = \"\$($BIN/distinct_sorted 5000)\" ]'" \
	--ledger "$OUT/baseline_ledger.jsonl" --out "$OUT/verdict.json"
rc=$?
set -e
echo
echo "== 4. the report (review style)"
echo
"$PL" report --style review "$SRC/distinct/findings.json" "$OUT/verdict.json" \
	"$OUT/baseline_ledger.jsonl"
echo
echo "candidate, summaries, verdict and ledger are in $OUT/"
# a rejected change is a valid outcome of the demo, not a failure of it
[ "$rc" -le 1 ]
