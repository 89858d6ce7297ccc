#!/bin/sh
# What `scan --profile` adds to a scan: the same warm (cached) scan of the
# bench/scan.sh corpus with and without a large folded profile whose
# stacks run through the corpus's files (STACKS lines, four frames each,
# synthetic but shaped as `perfloop profile --lines` writes them), beside
# the time perfloop's own profile reader takes to read that file (`report
# --diff` of the file against itself, halved: it reads two) and `wc -l`
# (the floor: reading the bytes).
# CPU seconds (user + system), medians of ROUNDS.
#     sh bench/scan-profile.sh [BUILD_DIR] [ROUNDS] [STACKS]
set -eu
BUILD=${1:-build}
N=${2:-5}
STACKS=${3:-200000}
PL=$(cd "$BUILD" && pwd)/perfloop
SRC=$(cd "$(dirname "$0")/.." && pwd)
OUT=$SRC/bench/out/scan
[ -d "$OUT/corpus" ] || { echo "run bench/scan.sh once first (it builds the corpus)" >&2; exit 1; }
cd "$OUT"
find corpus -name '*.py' | sort >files.txt
python3 - "$STACKS" <<'PY'
import random, sys
random.seed(7)
files = open("files.txt").read().split()
n = int(sys.argv[1])
with open("big.folded", "w") as out:
    for i in range(n):
        fr = ["<module> (%s:1)" % files[0]]
        for d in range(3):
            f = random.choice(files)
            fr.append("f%d (%s:%d)" % (random.randrange(50), f, random.randrange(1, 400)))
        out.write(";".join(fr) + " %d\n" % random.randrange(1, 20))
PY
med() { sort -n | awk '{a[NR]=$1} END {print (NR%2) ? a[(NR+1)/2] : (a[NR/2]+a[NR/2+1])/2}'; }
cpu() { /usr/bin/time -f "%U %S" -o cpu.tmp "$@" >/dev/null 2>&1 || true; awk '{print $1 + $2}' cpu.tmp; }
git init -q . 2>/dev/null || true
# fill the cache for both option sets (--profile runs the advisory rules too)
"$PL" scan --no-gitignore -j 1 --format json -o /dev/null corpus 2>/dev/null || true
"$PL" scan --no-gitignore -j 1 --profile big.folded --format json -o /dev/null corpus 2>/dev/null || true
: >t_plain; : >t_prof; : >t_report; : >t_wc
for i in $(seq "$N"); do
	cpu "$PL" scan --no-gitignore -j 1 --format json -o /dev/null corpus >>t_plain
	cpu "$PL" scan --no-gitignore -j 1 --profile big.folded --format json -o /dev/null corpus >>t_prof
	cpu "$PL" report --diff --top 1 big.folded big.folded | awk '{print $1 / 2}' >>t_report
	cpu wc -l big.folded >>t_wc
done
P=$(med <t_plain); Q=$(med <t_prof); R=$(med <t_report); W=$(med <t_wc)
SIZE=$(du -m big.folded | cut -f1)
echo "| what (CPU s, median of $N; $STACKS stacks, ${SIZE} MB) | time |"
echo "|---|---:|"
echo "| scan, warm cache | $P |"
echo "| scan --profile, warm cache | $Q |"
echo "| added by --profile | $(echo "$Q - $P" | bc -l | awk '{printf "%.3f", $1}') |"
echo "| perfloop's profile reader (report --diff of the file with itself, halved) | $R |"
echo "| wc -l (the bytes) | $W |"
