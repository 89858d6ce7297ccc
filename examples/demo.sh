#!/bin/sh
# make demo: benchmark two implementations of the same job (count distinct
# values: an O(n^2) scan and a sort) and print perfloop's table and verdict.
set -eu
PL=${1:-build/perfloop}
BIN=$(dirname "$PL")/examples
N=${DEMO_N:-20000}
echo "== perfloop bench: distinct_naive (O(n^2)) vs distinct_sorted (O(n log n)), n=$N"
echo
"$PL" bench --time-budget 2 -n naive -n sorted \
	"$BIN/distinct_naive $N" "$BIN/distinct_sorted $N" \
	-o demo-summary.json
echo "summary written to demo-summary.json (perfloop.bench/1)"
