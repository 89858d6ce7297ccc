#!/bin/sh
# Trust of the verdict, measured: TRIALS A/A trials (the same ~0.2 s busy
# loop twice) and TRIALS A/B trials (B does 5% more iterations). Counts how
# often perfloop says faster/slower. Target: A/A verdicts <= 1 in 20, A/B
# right verdict >= 18 in 20.
#
# usage: bench/trust.sh [BUILD_DIR] [TRIALS] [BENCH OPTIONS...]
# e.g.   bench/trust.sh build 20 --precision 1
set -eu
BUILD=${1:-build}
TRIALS=${2:-20}
shift 2 2>/dev/null || shift $#
PL=$BUILD/perfloop
BUSY=$BUILD/bench/busy
OUT=$(mktemp -d)
trap 'rm -rf "$OUT"' EXIT

# calibrate: iterations for ~0.2 s
"$PL" bench --quiet -w 1 -r 5 --counters none -o "$OUT/cal.json" -- "$BUSY" 100000000
N=$(python3 -c "import json;t=json.load(open('$OUT/cal.json'))['benchmarks'][0]['stats']['wall_s']['p50'];print(int(100000000*0.2/t))")
NB=$(python3 -c "print(int($N*1.05))")
echo "busy loop: A=$N iterations, B=$NB (5% more)"

verdict() { python3 -c "import json;print(json.load(open('$1'))['comparisons'][0]['verdict'])"; }
detail() {
	python3 -c "
import json; d = json.load(open('$1')); c = d['comparisons'][0]
print('ratio %.4f [%.4f, %.4f] p=%.2g n=%s' % (c['ratio'], c['ci95'][0], c['ci95'][1], c['p_value'],
      '/'.join(str(b['stats']['wall_s']['n']) for b in d['benchmarks'])))"
}
echo "options: ${*:-(defaults)}"
aa_wrong=0
ab_right=0
for t in $(seq "$TRIALS"); do
	"$PL" bench --quiet "$@" -n A -n A2 "$BUSY $N" "$BUSY $N" -o "$OUT/aa.json" || true
	v=$(verdict "$OUT/aa.json")
	[ "$v" = "no change" ] || aa_wrong=$((aa_wrong + 1))
	"$PL" bench --quiet "$@" -n A -n B "$BUSY $N" "$BUSY $NB" -o "$OUT/ab.json" || true
	w=$(verdict "$OUT/ab.json")
	[ "$w" = "slower" ] && ab_right=$((ab_right + 1))
	echo "trial $t: A/A $v ($(detail "$OUT/aa.json")), A/B $w ($(detail "$OUT/ab.json"))"
done
echo "A/A: $aa_wrong of $TRIALS trials said faster/slower (target <= 1)"
echo "A/B: $ab_right of $TRIALS trials said slower (target >= 18)"
