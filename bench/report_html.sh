#!/bin/sh
# report --format html: the size of a page made from a 100k-sample profile
# of 20,000 distinct stacks and 10 benchmarks, and how long Debian's
# Chromium takes to open it from disk (navigation start to the end of the
# load event, which includes running the page's script over every frame),
# 5 loads, median. Usage: sh bench/report_html.sh [build/perfloop]
set -eu
PL=$(cd "$(dirname "${1:-build/perfloop}")" && pwd)/$(basename "${1:-build/perfloop}")
SRC=$(cd "$(dirname "$0")/.." && pwd)
W=$(mktemp -d)
trap 'rm -rf "$W"' EXIT
cd "$W"
python3 "$SRC/tests/cli/gen_folded.py" big.folded 100000
"$PL" bench -r 10 -w 0 --batch 1 -n a -n b -n c -n d -n e -n f -n g -n h -n i -n j -o ten.json \
	true true true true true true true true true true >/dev/null 2>&1
"$PL" report --format html -o big.html big.folded ten.json
echo "page: $(wc -c <big.html) bytes, $(grep -c '<g class="f"' big.html) frames drawn"
python3 - "$SRC/tests/cli" big.html <<'PY'
import os, statistics, sys
sys.path.insert(0, sys.argv[1])
import browser
with browser.Browser(os.getcwd()) as b:
    t = []
    for _ in range(5):
        b.open(sys.argv[2])
        t.append(b.js("var n = performance.getEntriesByType('navigation')[0]; return n.loadEventEnd - n.startTime"))
    assert not b.console_errors()
print("open (ms, 5 loads): " + " ".join("%.0f" % x for x in t) + "; median %.0f ms" % statistics.median(t))
PY
