#!/bin/sh
# Harness overhead, side by side in one run: the minimal posix_spawn+wait4
# loop (the physical floor), perfloop bench (default counters, --counters
# none, and --counters none --contention keep: no re-measuring or waiting
# for a contended CPU) and hyperfine -N, each on /bin/true, RUNS executions
# each (perfloop with --batch 1: a sample per execution, as hyperfine).
# Repeated ROUNDS times in rotation; prints medians over the rounds.
#
# usage: bench/overhead.sh [BUILD_DIR] [RUNS] [ROUNDS]
set -eu
BUILD=${1:-build}
RUNS=${2:-500}
ROUNDS=${3:-5}
PL=$BUILD/perfloop
LOOP=$BUILD/bench/spawnloop
OUT=$(mktemp -d)
trap 'rm -rf "$OUT"' EXIT

now() { date +%s.%N; }
median() { sort -g | awk '{a[NR]=$1} END {if (NR%2) print a[(NR+1)/2]; else print (a[NR/2]+a[NR/2+1])/2}'; }

for r in $(seq "$ROUNDS"); do
	"$LOOP" "$RUNS" /bin/true | sed 's/.*median_s=\([^ ]*\).*total_s=\([^ ]*\)/\1 \2/' >>"$OUT/loop"
	for mode in auto none keep; do
		t0=$(now)
		case $mode in
		keep) opts="--counters none --contention keep" ;;
		*) opts="--counters $mode" ;;
		esac
		# shellcheck disable=SC2086
		"$PL" bench --quiet -w 0 -r "$RUNS" --batch 1 $opts -o "$OUT/pl.json" -- /bin/true
		t1=$(now)
		med=$(python3 -c "import json;print(json.load(open('$OUT/pl.json'))['benchmarks'][0]['stats']['wall_s']['p50'])")
		echo "$med $(echo "$t1 - $t0" | bc -l)" >>"$OUT/pl_$mode"
	done
	t0=$(now)
	hyperfine -N -w 0 -r "$RUNS" --style none --export-json "$OUT/hf.json" /bin/true >/dev/null 2>&1
	t1=$(now)
	med=$(python3 -c "import json;print(json.load(open('$OUT/hf.json'))['results'][0]['median'])")
	echo "$med $(echo "$t1 - $t0" | bc -l)" >>"$OUT/hf"
done

loop_med=$(cut -d' ' -f1 "$OUT/loop" | median)
loop_tot=$(cut -d' ' -f2 "$OUT/loop" | median)
printf '%-28s %14s %10s %16s %10s\n' tool "median/run" "vs floor" "total ($RUNS runs)" "vs hyperfine"
hf_tot=$(cut -d' ' -f2 "$OUT/hf" | median)
for t in loop pl_auto pl_none pl_keep hf; do
	m=$(cut -d' ' -f1 "$OUT/$t" | median)
	tot=$(cut -d' ' -f2 "$OUT/$t" | median)
	case $t in
	loop) name="minimal posix_spawn loop" ;;
	pl_auto) name="perfloop (counters auto)" ;;
	pl_none) name="perfloop (--counters none)" ;;
	pl_keep) name="perfloop (none, keep)" ;;
	hf) name="hyperfine -N" ;;
	esac
	printf '%-28s %11.1f µs %9.3fx %14.3f s %9.3fx\n' "$name" "$(echo "$m * 1000000" | bc -l)" \
		"$(echo "$m / $loop_med" | bc -l)" "$tot" "$(echo "$tot / $hf_tot" | bc -l)"
done
