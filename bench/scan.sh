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
: >"$OUT/t1" ; : >"$OUT/t2" ; : >"$OUT/tr" ; : >"$OUT/cpu_parse" ; : >"$OUT/cpu_scan"
: >"$OUT/cold" ; : >"$OUT/warm" ; : >"$OUT/edit"
PARSE=$(cd "$BUILD" && pwd)/bench/parseonly
cpu() { /usr/bin/time -f "%U %S" -o "$OUT/cpu.tmp" "$@" >/dev/null 2>&1; awk '{print $1 + $2}' "$OUT/cpu.tmp"; }
EDIT=$(sed -n 1p "$OUT/files.txt")
for i in $(seq "$N"); do
	for j in 1 2; do
		t0=$(now)
		(cd "$OUT" && "$PL" scan --no-cache --no-gitignore -j $j --format json -o pl.json corpus 2>/dev/null)
		echo "$(now) - $t0" | bc -l >>"$OUT/t$j"
	done
	# the parser's floor: the same library and grammar, parse and walk
	# every file, nothing else; CPU seconds, one thread each
	(cd "$OUT" && cpu "$PARSE" files.txt) >>"$OUT/cpu_parse"
	(cd "$OUT" && cpu "$PL" scan --no-cache --no-gitignore -j 1 --format json -o pl.json corpus) >>"$OUT/cpu_scan"
	# the cache: a cold scan that fills it, a rescan of the unchanged tree,
	# and one with one line of one file edited
	rm -rf "$OUT/.perfloop"
	for k in cold warm; do
		t0=$(now)
		(cd "$OUT" && git init -q . 2>/dev/null; "$PL" scan --no-gitignore -j 1 --format json -o pl-$k.json corpus 2>/dev/null)
		echo "$(now) - $t0" | bc -l >>"$OUT/$k"
	done
	cp "$OUT/$EDIT" "$OUT/edit.bak"
	echo "x_$i = $i" >>"$OUT/$EDIT"
	t0=$(now)
	(cd "$OUT" && "$PL" scan --no-gitignore -j 1 --format json -o pl-edit.json corpus 2>"$OUT/edit.err")
	echo "$(now) - $t0" | bc -l >>"$OUT/edit"
	mv "$OUT/edit.bak" "$OUT/$EDIT"
	t0=$(now)
	(cd "$OUT" && node "$SRC/bench/ruff-check.js" "$OUT/ruff/node_modules/@astral-sh/ruff-wasm-nodejs" files.txt >ruff.txt 2>ruff.err)
	echo "$(now) - $t0" | bc -l >>"$OUT/tr"
done
t1=$(med <"$OUT/t1"); t2=$(med <"$OUT/t2"); tr=$(med <"$OUT/tr")
cp=$(med <"$OUT/cpu_parse"); cs=$(med <"$OUT/cpu_scan")
cold=$(med <"$OUT/cold"); warm=$(med <"$OUT/warm"); edit=$(med <"$OUT/edit")
echo "## perfloop scan vs ruff $RUFF_VERSION (wasm, PERF rules) on $FILES files, $LINES lines ($(date -u +%F), $(nproc) CPUs)"
echo
echo "| run | median wall s ($N rounds) | lines/s | lines/s per core |"
echo "|---|---|---|---|"
echo "| perfloop scan -j 1 --no-cache (the $("$PL" scan --list-rules | grep '^PY' | grep -vc advisory) default Python rules) | $t1 | $(echo "$LINES / $t1" | bc) | $(echo "$LINES / $t1" | bc) |"
echo "| perfloop scan -j 2 --no-cache | $t2 | $(echo "$LINES / $t2" | bc) | $(echo "$LINES / $t2 / 2" | bc) |"
echo "| ruff wasm (one thread, PERF only, node) | $tr | $(echo "$LINES / $tr" | bc) | $(echo "$LINES / $tr" | bc) |"
echo
echo "| against the parser's floor (CPU s, one thread, median of $N) | CPU s | ratio |"
echo "|---|---|---|"
echo "| bench/parseonly: parse + walk every file (same libtree-sitter, same grammar) | $cp | 1.00 |"
echo "| perfloop scan -j 1 --no-cache | $cs | $(echo "scale=2; $cs / $cp" | bc) |"
echo
echo "| the cache (.perfloop/cache/scan), -j 1 | median wall s | vs cold |"
echo "|---|---|---|"
echo "| cold: empty cache, every file scanned and stored | $cold | 1.00 |"
echo "| rescan, nothing changed | $warm | $(echo "scale=1; $cold / $warm" | bc)x faster |"
echo "| rescan, one line of one file edited | $edit | $(echo "scale=1; $cold / $edit" | bc)x faster ($(grep -o '[0-9]* of [0-9]* files unchanged' "$OUT/edit.err")) |"
echo
(cd "$OUT" && "$PL" scan --no-cache --advisory --no-gitignore -j 2 --format json -o pl.json corpus 2>/dev/null)
# agreement on the patterns both cover (every rule, advisory ones too):
# PY029 ~ PERF401 (a loop that only appends), PY028 ~ PERF101 (list() around
# what a for iterates), PY033 ~ PERF102, PY034 ~ PERF402, PY035 ~ PERF403
python3 - "$OUT/pl.json" "$OUT/ruff.txt" <<'PY'
import json, sys
pl = json.load(open(sys.argv[1]))["findings"]
PAIRS = (("PERF401", "PY029", 3), ("PERF101", "PY028", 0), ("PERF102", "PY033", 0),
         ("PERF402", "PY034", 3), ("PERF403", "PY035", 3))
ours = {code: set() for code, _, _ in PAIRS}
for f in pl:
    key = {rule: code for code, rule, _ in PAIRS}.get(f["leaf"])
    if key:
        ours[key].add((f["path"], f["location"]["line"]))
theirs = {code: set() for code, _, _ in PAIRS}
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
for code, ours_rule, near in PAIRS:
    # perfloop reports the for statement, ruff PERF401/402/403 the statement inside it
    both = sum(1 for (p, l) in ours[code] if any((p, l + d) in theirs[code] for d in range(near + 1)))
    print(f"| {ours_rule} / {code} | {len(ours[code])} | {len(theirs[code])} | {both} |")
print()
print("ruff's other PERF findings: " + (", ".join(f"{k} {v}" for k, v in sorted(other.items())) or "none"))
PY
