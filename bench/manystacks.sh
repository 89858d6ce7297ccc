#!/bin/sh
# profile --mode native on a program whose samples fall in about a million
# distinct stacks (issue #18's limit): bench/manystacks.c walks every path
# of a BITS-deep binary tree of calls (2^BITS stacks), ITERS spins in the
# last call of each, sampled at RATE a second with frame pointers. Reports perfloop's
# wall time, CPU and peak RSS (GNU time), the samples it counted against
# the folded file's total, the distinct stacks in the folded file, and
# whether the SVG and speedscope files are whole; then, for scale, `perf
# record` of the same program at the same rate (its wall time and peak
# RSS, and its perf.data's size).
# Usage: sh bench/manystacks.sh [build/perfloop] [BITS] [ITERS] [RATE]
set -eu
PL=$(cd "$(dirname "${1:-build/perfloop}")" && pwd)/$(basename "${1:-build/perfloop}")
BITS=${2:-21}
ITERS=${3:-65000}
RATE=${4:-50000}
SRC=$(cd "$(dirname "$0")" && pwd)/manystacks.c
W=$(mktemp -d)
trap 'rm -rf "$W"' EXIT
cd "$W"
gcc -O1 -g -fno-omit-frame-pointer -fno-optimize-sibling-calls -o manystacks "$SRC"
echo "== the program alone"
/usr/bin/time -f "wall %e s, cpu %U+%S s, peak RSS %M KiB" ./manystacks "$BITS" "$ITERS" >/dev/null
echo "== perfloop profile --mode native --unwind fp --rate $RATE"
/usr/bin/time -f "wall %e s, cpu %U+%S s, peak RSS %M KiB" \
	"$PL" profile --mode native --unwind fp --rate "$RATE" -o ms -- ./manystacks "$BITS" "$ITERS" >out 2>err || {
	cat err
	exit 1
}
grep -E "^perfloop profile|samples in" out
tail -1 err

python3 - <<'PY'
import json, re
said = int(re.search(r"(\d+) samples in", open("out").read()).group(1))
total = distinct = 0
for line in open("ms.folded"):
    s, c = line.rsplit(" ", 1)
    total += int(c)
    distinct += 1
svg = open("ms.svg", "rb").read()
sp = json.load(open("ms.speedscope.json"))
print("folded: %d distinct stacks, %d samples (perfloop said %d); svg %.1f MB, whole: %s; speedscope: %d frames"
      % (distinct, total, said, len(svg) / 1e6, svg.rstrip().endswith(b"</svg>"), len(sp["shared"]["frames"])))
PY
if command -v perf >/dev/null 2>&1; then
	echo "== perf record -F $RATE -g (frame pointers)"
	/usr/bin/time -f "wall %e s, cpu %U+%S s, peak RSS %M KiB" \
		perf record -q -F "$RATE" -g -o perf.data ./manystacks "$BITS" "$ITERS" >/dev/null 2>perf.err || tail -3 perf.err
	tail -1 perf.err
	ls -l perf.data | awk '{printf "perf.data %.1f MB\n", $5 / 1e6}'
fi
