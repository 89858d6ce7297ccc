#!/bin/sh
# Trust of the verdict, measured: TRIALS A/A trials (the same busy loop of
# about MS milliseconds twice) and TRIALS A/B trials (B does DIFF% more
# iterations). Counts how often perfloop says faster/slower, and the time
# and batch each trial took. Targets: A/A verdicts <= 1 in 20; A/B right
# verdict >= 18 in 20 (5%), >= 15 in 20 (2%, 200 ms).
#
# usage: [MS=200] [DIFF=5] bench/trust.sh [BUILD_DIR] [TRIALS] [BENCH OPTIONS...]
# e.g.   bench/trust.sh build 20 --precision 1
#        MS=5 bench/trust.sh build 20
#        MS=200 DIFF=2 bench/trust.sh build 20
set -eu
BUILD=${1:-build}
TRIALS=${2:-20}
shift 2 2>/dev/null || shift $#
PL=$BUILD/perfloop
BUSY=$BUILD/bench/busy
OUT=$(mktemp -d)
trap 'rm -rf "$OUT"' EXIT

MS=${MS:-200}
DIFF=${DIFF:-5}
# calibrate: iterations for ~MS milliseconds
"$PL" bench --quiet -w 1 -r 5 --batch 1 --counters none -o "$OUT/cal.json" -- "$BUSY" 10000000
N=$(python3 -c "import json;t=json.load(open('$OUT/cal.json'))['benchmarks'][0]['stats']['wall_s']['p50'];print(int(10000000*$MS/1000/t))")
NB=$(python3 -c "print(int($N*(1+$DIFF/100)))")
echo "busy loop: A=$N iterations (~$MS ms), B=$NB ($DIFF% more)"

verdict() { python3 -c "import json;print(json.load(open('$1'))['comparisons'][0]['verdict'])"; }
detail() {
	python3 -c "
import json; d = json.load(open('$1')); c = d['comparisons'][0]; b = d['benchmarks']
print('ratio %.4f [%.4f, %.4f] p=%.2g samples=%s batch=%s cv=%s' % (c['ratio'], c['ci95'][0], c['ci95'][1], c['p_value'],
      '/'.join(str(x['stats']['wall_s']['n']) for x in b), b[0]['batch'],
      '/'.join('%.1f%%' % (100 * x['stats']['wall_s']['cv']) for x in b)))"
}
now() { date +%s.%N; }
echo "options: ${*:-(defaults)}"
aa_wrong=0
ab_right=0
gate=0
: >"$OUT/times"
for t in $(seq "$TRIALS"); do
	t0=$(now)
	"$PL" bench --quiet "$@" -n A -n A2 "$BUSY $N" "$BUSY $N" -o "$OUT/aa.json" || true
	t1=$(now)
	v=$(verdict "$OUT/aa.json")
	[ "$v" = "no change" ] || aa_wrong=$((aa_wrong + 1))
	"$PL" bench --quiet "$@" -n A -n B "$BUSY $N" "$BUSY $NB" -o "$OUT/ab.json" || true
	t2=$(now)
	w=$(verdict "$OUT/ab.json")
	[ "$w" = "slower" ] && ab_right=$((ab_right + 1))
	for f in aa ab; do
		python3 -c "import json,sys;d=json.load(open('$OUT/$f.json'));sys.exit(0 if all(b['stats']['wall_s']['cv']<=0.05 for b in d['benchmarks']) else 1)" &&
			gate=$((gate + 1))
	done
	echo "$t1 - $t0" | bc -l >>"$OUT/times"
	echo "$t2 - $t1" | bc -l >>"$OUT/times"
	echo "trial $t: A/A $v ($(detail "$OUT/aa.json")) $(printf %.0f "$(echo "$t1 - $t0" | bc -l)") s; A/B $w ($(detail "$OUT/ab.json")) $(printf %.0f "$(echo "$t2 - $t1" | bc -l)") s"
done
med=$(sort -g "$OUT/times" | awk '{a[NR]=$1} END {print (NR%2) ? a[(NR+1)/2] : (a[NR/2]+a[NR/2+1])/2}')
echo "A/A: $aa_wrong of $TRIALS trials said faster/slower (target <= 1)"
echo "A/B ($DIFF%): $ab_right of $TRIALS trials said slower"
echo "noise gate (every command's CV <= 5%): passed in $gate of $((2 * TRIALS)) benches"
echo "time per bench of two commands: median $(printf %.1f "$med") s"
