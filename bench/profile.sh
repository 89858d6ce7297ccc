#!/bin/sh
# perfloop profile, measured side by side with the peers available here, on
# examples/profile/split.py (heavy 70% / light 30% by its own CPU clock).
# Target pinned to the last CPU, profilers to the first, where there are two.
#     sh bench/profile.sh [BUILD_DIR] [REPEATS]
# Prints a Markdown table for docs/PERFORMANCE.md. Takes ~4 minutes.
set -eu
BUILD=${1:-build}
N=${2:-9}
PL=$BUILD/perfloop
SRC=$(cd "$(dirname "$0")/.." && pwd)
SPLIT=$SRC/examples/profile/split.py
OUT=$SRC/bench/out/profile
mkdir -p "$OUT"
LAST=$(($(nproc) - 1))
TP="taskset -c $LAST"
PP="taskset -c 0"
PYS=$( (/usr/bin/python3 -c 'import sys; print(sys.executable)'; python3 -c 'import sys; print(sys.executable)') | awk '!s[$0]++')
# and, as root, the 3.12+ in .deps/pyroots (scripts/install-test-pythons),
# run with chroot through a wrapper, split.py copied in at the same path
if [ "$(id -u)" = 0 ]; then
	for root in "$SRC"/.deps/pyroots/*; do
		[ -f "$root/.ready" ] || continue
		for exe in "$root"/usr/bin/python3.1[2-9]; do
			[ -f "$exe" ] && [ ! -L "$exe" ] || continue
			v=${exe##*/python}
			mkdir -p "$OUT/pyrun" "$root$(dirname "$SPLIT")"
			cp "$SPLIT" "$root$SPLIT"
			w=$OUT/pyrun/${root##*/}-python$v
			printf '#!/bin/sh\nexec chroot %s /usr/bin/python%s "$@"\n' "$root" "$v" >"$w"
			chmod +x "$w"
			PYS="$PYS $w"
		done
	done
fi

# share FOLDED: heavy's share of heavy+light samples, in percent
share() {
	python3 - "$1" <<'PY'
import sys
c = {"heavy": 0, "light": 0}
for l in open(sys.argv[1]):
    for f in c:
        if ";" + f + " (" in l or l.startswith(f + " ("):
            c[f] += int(l.split()[-1])
print(f"{100 * c['heavy'] / max(1, c['heavy'] + c['light']):.1f}")
PY
}
med() { sort -n | awk '{a[NR]=$1} END {print (NR%2) ? a[(NR+1)/2] : (a[NR/2]+a[NR/2+1])/2}'; }
true_split() { sed -n 's/.*split: heavy \([0-9.]*\)%.*/\1/p' "$1"; }
wall() { sed -n 's/.*wall \([0-9.]*\).*/\1/p' "$1"; }

echo "## perfloop profile on split.py ($(date -u +%F), $(nproc) CPUs, target on CPU $LAST)"
echo
echo "| interpreter | rate asked | delivered/s (median) | delivered % | profiler CPU % | heavy share: profile vs its own clock (pp, median of 3) |"
echo "|---|---|---|---|---|---|"
for py in $PYS; do
	for rate in 1000 10000; do
		rates="" cpus="" diffs=""
		for i in 1 2 3; do
			$PP "$PL" profile -r $rate -o "$OUT/p" --format folded -- $TP "$py" "$SPLIT" 5 >"$OUT/o" 2>"$OUT/e"
			rates="$rates $(sed -n 's/.*s: \([0-9]*\)\/s delivered.*/\1/p' "$OUT/o")"
			cpus="$cpus $(sed -n 's/.*profiler CPU \([0-9.]*\)%.*/\1/p' "$OUT/o")"
			d=$(echo "$(share "$OUT/p.folded") - $(true_split "$OUT/e")" | bc -l)
			diffs="$diffs ${d#-}"
		done
		r=$(echo $rates | tr ' ' '\n' | med)
		echo "| $py $("$py" -c 'import platform; print(platform.python_version())') | $rate | $r | $(echo "scale=1; 100 * $r / $rate" | bc) | $(echo $cpus | tr ' ' '\n' | med) | $(echo $diffs | tr ' ' '\n' | med) |"
	done
done
echo
echo "Floor: a loop that only sleeps to absolute deadlines costs $($PP "$BUILD/bench/ticker" 1000 3)% of a core at 1 kHz and $($PP "$BUILD/bench/ticker" 10000 3)% at 10 kHz on this machine (bench/ticker.c)."
echo

# the same-CPU bias: unpinned, beside a busy loop so that perfloop must
# share a CPU with something; the samples on main's own lines (its clock
# calls, ~2% of the time) with perfloop keeping off the program's CPU (the
# default) and without (PERFLOOP_PROFILE_SHARE_CPU=1), interleaved
# mainself FOLDED: percent of samples whose leaf is main itself
mainself() {
	awk '{n = $NF; t += n; sub(/ [0-9]+$/, ""); k = split($0, f, ";"); if (f[k] ~ /^main \(/) m += n} END {printf "%.1f\n", 100 * m / t}' "$1"
}
if [ "$(nproc)" -ge 2 ]; then
	sh -c 'while :; do :; done' &
	hog=$!
	: >"$OUT/b_avoid"
	: >"$OUT/b_share"
	for i in 1 2 3; do
		"$PL" profile --lines -r 1000 -o "$OUT/b" --format folded -- /usr/bin/python3 "$SPLIT" 3 >/dev/null 2>&1
		mainself "$OUT/b.folded" >>"$OUT/b_avoid"
		PERFLOOP_PROFILE_SHARE_CPU=1 "$PL" profile --lines -r 1000 -o "$OUT/b" --format folded -- /usr/bin/python3 "$SPLIT" 3 >/dev/null 2>&1
		mainself "$OUT/b.folded" >>"$OUT/b_share"
	done
	kill $hog
	"$PL" profile --lines -r 1000 -o "$OUT/b" --format folded -- /usr/bin/python3 "$SPLIT" 3 >/dev/null 2>&1
	echo "### Same-CPU bias: samples on main's own lines (its clock calls), unpinned, beside a busy loop (median of 3)"
	echo
	echo "| perfloop | main's own lines |"
	echo "|---|---|"
	echo "| keeps off the program's CPU (default) | $(med <"$OUT/b_avoid")% |"
	echo "| shares it (PERFLOOP_PROFILE_SHARE_CPU=1) | $(med <"$OUT/b_share")% |"
	echo "| machine quiet, for reference (one run) | $(mainself "$OUT/b.folded")% |"
	echo
fi

# slowdown: fixed work (split.py --rounds), its own wall clock, interleaved
ROUNDS=${ROUNDS:-12000}
py=/usr/bin/python3
has_scalene=0
$py -c 'import scalene' 2>/dev/null && has_scalene=1
echo "### Target slowdown: split.py --rounds $ROUNDS under $py, $N interleaved runs each (median wall of its own loop)"
echo
: >"$OUT/alone" ; : >"$OUT/r1k" ; : >"$OUT/r10k" ; : >"$OUT/scalene"
for i in $(seq "$N"); do
	$TP $py "$SPLIT" --rounds $ROUNDS 2>"$OUT/e" >/dev/null; wall "$OUT/e" >>"$OUT/alone"
	$PP "$PL" profile -r 1000 --format none -- $TP $py "$SPLIT" --rounds $ROUNDS >/dev/null 2>"$OUT/e"; wall "$OUT/e" >>"$OUT/r1k"
	$PP "$PL" profile -r 10000 --format none -- $TP $py "$SPLIT" --rounds $ROUNDS >/dev/null 2>"$OUT/e"; wall "$OUT/e" >>"$OUT/r10k"
	if [ $has_scalene = 1 ]; then
		(cd "$(dirname "$SPLIT")" && $TP $py -m scalene --cli --cpu-only --json --outfile "$OUT/sc.json" split.py --rounds $ROUNDS >/dev/null 2>"$OUT/e"); wall "$OUT/e" >>"$OUT/scalene"
	fi
done
a=$(med <"$OUT/alone")
echo "| run | median wall s | slowdown %, median of the per-round ratios to the run alone |"
echo "|---|---|---|"
echo "| alone | $a | 0 |"
for k in r1k r10k scalene; do
	[ -s "$OUT/$k" ] || continue
	m=$(med <"$OUT/$k")
	r=$(paste "$OUT/alone" "$OUT/$k" | awk '{printf "%.4f\n", 100 * ($2 - $1) / $1}' | med)
	echo "| $k | $m | $r |"
done
echo
if [ $has_scalene = 1 ]; then
	# scalene profiles only files under its working directory
	(cd "$(dirname "$SPLIT")" && $TP $py -m scalene --cli --cpu-only --json --outfile "$OUT/sc.json" split.py 5 >/dev/null 2>"$OUT/e")
	python3 - "$OUT/sc.json" "$(true_split "$OUT/e")" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
f = next(v for k, v in d["files"].items() if k.endswith("split.py"))
c = {x["line"]: x["n_cpu_percent_python"] + x["n_cpu_percent_c"] for x in f["functions"]}
s = 100 * c["heavy"] / (c["heavy"] + c["light"])
print(f"scalene (Debian python3-scalene) heavy share {s:.1f}% vs its own clock {sys.argv[2]}% "
      f"(difference {abs(s - float(sys.argv[2])):.1f} pp), one 5 s run")
PY
fi
if command -v austin >/dev/null; then
	if timeout 10 austin -i 1000 -o "$OUT/austin.out" $py "$SPLIT" 1 >/dev/null 2>"$OUT/austin.err"; then
		echo "austin $(austin --version 2>&1): ran"
	else
		echo "austin: '$(austin --version 2>&1)' cannot read CPython 3.11 ($(tail -1 "$OUT/austin.err"))"
	fi
fi
