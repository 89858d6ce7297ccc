#!/bin/sh
# perfloop scan beside ruff (its WebAssembly build from the npm registry,
# PERF rules selected) on one corpus of real Python from this machine: the
# pyenv standard library (without tests) and Debian's numpy and scipy.
#     sh bench/scan.sh [BUILD_DIR] [ROUNDS]
# Prints a Markdown table for docs/PERFORMANCE.md.
set -eu
BUILD=${1:-build}
N=${2:-3}
PL=$(cd "$BUILD" && pwd)/perfloop
SRC=$(cd "$(dirname "$0")/.." && pwd)
OUT=$SRC/bench/out/scan
RUFF_VERSION=0.17.4
mkdir -p "$OUT"
if [ ! -d "$OUT/corpus" ]; then
	python3 - "$OUT/corpus" <<'PY'
import os, shutil, sys, sysconfig
dst = sys.argv[1]
roots = [(sysconfig.get_paths()["stdlib"], "stdlib"),
         ("/usr/lib/python3/dist-packages/numpy", "numpy"),
         ("/usr/lib/python3/dist-packages/scipy", "scipy")]
for root, name in roots:
    for d, dirs, files in os.walk(root):
        dirs[:] = [x for x in dirs if x not in ("test", "tests", "idle_test", "site-packages", "__pycache__")]
        for f in files:
            if f.endswith(".py"):
                rel = os.path.relpath(os.path.join(d, f), root)
                os.makedirs(os.path.join(dst, name, os.path.dirname(rel)), exist_ok=True)
                shutil.copyfile(os.path.join(d, f), os.path.join(dst, name, rel))
PY
fi
(cd "$OUT" && find corpus -name '*.py' | sort >files.txt)
LINES=$(cd "$OUT" && cat $(cat files.txt) | wc -l)
FILES=$(wc -l <"$OUT/files.txt")
if [ ! -d "$OUT/ruff/node_modules/@astral-sh/ruff-wasm-nodejs" ]; then
	npm install --silent --prefix "$OUT/ruff" "@astral-sh/ruff-wasm-nodejs@$RUFF_VERSION" >/dev/null
fi
med() { sort -n | awk '{a[NR]=$1} END {print (NR%2) ? a[(NR+1)/2] : (a[NR/2]+a[NR/2+1])/2}'; }
now() { date +%s.%N; }
: >"$OUT/t1" ; : >"$OUT/t2" ; : >"$OUT/tr"
for i in $(seq "$N"); do
	for j in 1 2; do
		t0=$(now)
		(cd "$OUT" && "$PL" scan --no-gitignore -j $j --format json -o pl.json corpus 2>/dev/null)
		echo "$(now) - $t0" | bc -l >>"$OUT/t$j"
	done
	t0=$(now)
	(cd "$OUT" && node "$SRC/bench/ruff-check.js" "$OUT/ruff/node_modules/@astral-sh/ruff-wasm-nodejs" files.txt >ruff.txt 2>ruff.err)
	echo "$(now) - $t0" | bc -l >>"$OUT/tr"
done
t1=$(med <"$OUT/t1"); t2=$(med <"$OUT/t2"); tr=$(med <"$OUT/tr")
echo "## perfloop scan vs ruff $RUFF_VERSION (wasm, PERF rules) on $FILES files, $LINES lines ($(date -u +%F), $(nproc) CPUs)"
echo
echo "| run | median wall s ($N rounds) | lines/s | lines/s per core |"
echo "|---|---|---|---|"
echo "| perfloop scan -j 1 (all $("$PL" scan --list-rules | grep -c '^PY') Python rules) | $t1 | $(echo "$LINES / $t1" | bc) | $(echo "$LINES / $t1" | bc) |"
echo "| perfloop scan -j 2 | $t2 | $(echo "$LINES / $t2" | bc) | $(echo "$LINES / $t2 / 2" | bc) |"
echo "| ruff wasm (one thread, PERF only, node) | $tr | $(echo "$LINES / $tr" | bc) | $(echo "$LINES / $tr" | bc) |"
echo
# agreement on the patterns both cover: PY029 ~ PERF401 (a loop that only
# appends), PY028 ~ PERF101 (list() around what a for iterates)
python3 - "$OUT/pl.json" "$OUT/ruff.txt" <<'PY'
import json, sys
pl = json.load(open(sys.argv[1]))["findings"]
ours = {"PERF401": set(), "PERF101": set()}
for f in pl:
    key = {"PY029": "PERF401", "PY028": "PERF101"}.get(f["leaf"])
    if key:
        ours[key].add((f["path"], f["location"]["line"]))
theirs = {"PERF401": set(), "PERF101": set()}
other = {}
for l in open(sys.argv[2]):
    loc, code = l.split()
    path, row = loc.rsplit(":", 1)
    if code in theirs:
        theirs[code].add((path, int(row)))
    else:
        other[code] = other.get(code, 0) + 1
print("| pattern | perfloop | ruff | both |")
print("|---|---|---|---|")
for code, ours_rule, near in (("PERF401", "PY029", 3), ("PERF101", "PY028", 0)):
    # perfloop reports the for statement, ruff PERF401 the append inside it
    both = sum(1 for (p, l) in ours[code] if any((p, l + d) in theirs[code] for d in range(near + 1)))
    print(f"| {ours_rule} / {code} | {len(ours[code])} | {len(theirs[code])} | {both} |")
print()
print("ruff's other PERF findings: " + (", ".join(f"{k} {v}" for k, v in sorted(other.items())) or "none"))
PY
