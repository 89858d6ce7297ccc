#!/bin/sh
# perfloop profile --mode native beside Debian's perf, in one run, on the
# known-split program (bench/nativesplit.c, built without frame pointers):
#   1. accuracy: the split each tool measures against the program's own
#      clock, the share of complete stacks, the top-5 functions;
#   2. the whole job, record to folded stacks + flame graph: wall time, peak
#      RSS, bytes written (perf: record + script + folding, with perf.data);
#   3. the program's slowdown at 1 kHz (fixed work; medians of ROUNDS).
# usage: sh bench/native.sh BUILD [ROUNDS]
set -eu
BUILD=${1:-build}
ROUNDS=${2:-5}
PL=$(cd "$BUILD" && pwd)/perfloop
PROG=$(cd "$BUILD" && pwd)/bench/nativesplit_nofp
command -v perf >/dev/null || { echo "perf (linux-perf) is needed"; exit 1; }
W=$(mktemp -d)
trap 'rm -rf "$W"' EXIT
cd "$W"

# fold perf script output (frames leaf first per sample) into "a;b;c N"
fold_perf() {
	awk '
	/^[^ \t]/ { if (n) emit(); n = 0; next }
	/^[ \t]+[0-9a-f]+ / { sym = $2; sub(/\+0x[0-9a-f]+$/, "", sym); f[n++] = sym; next }
	/^$/ { if (n) emit(); n = 0 }
	function emit(   s, i) { s = f[n-1]; for (i = n - 2; i >= 0; i--) s = s ";" f[i]; c[s]++ }
	END { if (n) emit(); for (s in c) print s, c[s] }'
}
share() { # FOLDED LEAF: percent of samples whose leaf is LEAF
	awk -v l="$2" '{n=$NF; t+=n; s0=$0; sub(/ [0-9]+$/, "", s0); k=split(s0, a, ";"); x=a[k]; sub(/ \(.*/, "", x); if (x == l || index(x, l ".") == 1) s+=n} END {printf "%.1f", 100*s/t}' "$1"
}
complete() { # FOLDED: percent of samples whose root is _start
	awk '{n=$NF; t+=n; if (index($0, "_start") == 1) s+=n} END {printf "%.1f", 100*s/t}' "$1"
}
peak() { # the max RSS line of /usr/bin/time -v, in MiB
	awk -F: '/Maximum resident/ {printf "%.1f", $2/1024}' "$1"
}
now() { date +%s.%N; }

echo "== 1-2. accuracy and the whole job (3 s of CPU, split 70/30, 999 Hz)"
t0=$(now)
/usr/bin/time -v -o pl.time "$PL" profile --mode native -r 999 -o pl -- "$PROG" 0.7 3 >pl.out
t1=$(now)
truth=$(python3 -c 'import json,sys; d=json.loads(open("pl.out").readline()); print("%.1f" % (100*d["a_s"]/(d["a_s"]+d["b_s"])))')
t2=$(now)
/usr/bin/time -v -o rec.time perf record -q -F 999 --call-graph dwarf -o perf.data -- "$PROG" 0.7 3 >perf.out 2>/dev/null
t3=$(now)
/usr/bin/time -v -o script.time sh -c 'perf script -i perf.data 2>/dev/null >perf.script'
fold_perf <perf.script >perf.folded
t4=$(now)
perf report -i perf.data --no-children --stdio 2>/dev/null | grep -E '^ +[0-9.]+%' | head -5 >perf.top
ptruth=$(python3 -c 'import json,sys; d=json.loads(open("perf.out").readline()); print("%.1f" % (100*d["a_s"]/(d["a_s"]+d["b_s"])))')
printf '%-28s %10s %10s\n' "" perfloop perf
printf '%-28s %10s %10s\n' "program's own A share" "$truth%" "$ptruth%"
printf '%-28s %10s %10s\n' "leaf_a share" "$(share pl.folded leaf_a)%" "$(share perf.folded leaf_a)%"
printf '%-28s %10s %10s\n' "leaf_b share" "$(share pl.folded leaf_b)%" "$(share perf.folded leaf_b)%"
printf '%-28s %10s %10s\n' "stacks complete to _start" "$(complete pl.folded)%" "$(complete perf.folded)%"
printf '%-28s %9.2fs %9.2fs\n' "job wall time" "$(echo "$t1 - $t0" | bc)" "$(echo "$t4 - $t2" | bc)"
printf '%-28s %9.2fs %9.2fs\n' "  after the program ended" "$(echo "$t1 - $t0 - 3" | bc)" "$(echo "$t4 - $t2 - 3" | bc)"
printf '%-28s %8sMiB %8sMiB\n' "peak RSS" "$(peak pl.time)" "$(peak rec.time)/$(peak script.time)"
printf '%-28s %8sKiB %8sKiB\n' "bytes written" "$(du -ck pl.* | tail -1 | cut -f1)" "$(du -ck perf.data perf.folded | tail -1 | cut -f1)"
echo "perf report --no-children, top 5:"
cat perf.top
echo "perfloop, top 5:"
sed -n '/self   total/,$p' pl.out | sed -n 2,6p

echo
echo "== 3. the program's slowdown at 1 kHz (fixed work, medians of $ROUNDS)"
CH=4000
: >times
for r in $(seq "$ROUNDS"); do
	for cfg in plain pl-fp pl-dwarf perf-fp perf-dwarf; do
		case $cfg in
		plain) "$PROG" 0.7 0 $CH >o ;;
		pl-fp) "$PL" profile --mode native --unwind fp -r 1000 --format none -- "$PROG" 0.7 0 $CH >o ;;
		pl-dwarf) "$PL" profile --mode native --unwind dwarf -r 1000 --format none -- "$PROG" 0.7 0 $CH >o ;;
		perf-fp) perf record -q -F 1000 -g -o p.data -- "$PROG" 0.7 0 $CH >o 2>/dev/null ;;
		perf-dwarf) perf record -q -F 1000 --call-graph dwarf -o p.data -- "$PROG" 0.7 0 $CH >o 2>/dev/null ;;
		esac
		echo "$cfg $(python3 -c 'import json; print(json.loads(open("o").readline())["wall_s"])')" >>times
	done
done
python3 - <<'PY'
import statistics as st
t = {}
for line in open("times"):
    k, v = line.split(); t.setdefault(k, []).append(float(v))
base = st.median(t["plain"])
for k in ["plain", "pl-fp", "pl-dwarf", "perf-fp", "perf-dwarf"]:
    m = st.median(t[k])
    print(f"{k:12s} median {m:.3f} s  slowdown {100*(m/base-1):+.1f}%  (n={len(t[k])})")
PY
