#!/bin/sh
# report --format html: one self-contained page from real perfloop outputs
# (two bench summaries, one with a benchmark named like an injected
# script; findings, a verdict; a flame graph of collapsed stacks with a
# function named </script><img src=x onerror=...> and a file with quotes).
# Checked as text (nothing external, every injected string escaped) and in
# Debian's Chromium through chromedriver (skipped, 77, where it cannot
# start): no console error, the flame graph's frames, a click zooms a frame
# to the full width, the search marks the matching frames, the injected
# strings did not run, a screenshot that is not blank. Also profile
# --format html, bad input, and the size of a 100k-sample page.
. "$(dirname "$0")/lib.sh"
set -e
DATA=$PERFLOOP_SRC/tests/data/report
cp "$DATA"/findings.json "$DATA"/verdict.json .

"$PERFLOOP" bench -r 5 -w 0 --batch 1 -n fast -n slow -o side.json 'sleep 0.01' 'sleep 0.02' >/dev/null 2>&1 ||
	fail "bench side by side"
"$PERFLOOP" bench -r 3 -w 0 --batch 1 -n '</script><script>window.__pwned=2</script>' -o evil.json \
	'sleep 0.01' >/dev/null 2>&1 || fail "bench with a hostile name"
cat >prof.folded <<'F'
main (app.py:1);heavy (app.py:5) 70
main (app.py:1);light (app.py:9) 30
main (app.py:1);</script><img src=x onerror="window.__pwned=1"> (we"ird'.py:3) 5
F
run "$PERFLOOP" report --format html -o report.html verdict.json findings.json side.json evil.json prof.folded
expect_rc 0
[ -s report.html ] || fail "no report.html"
# self-contained: no external reference of any kind
if grep -Eiq '(src|href)="(https?:)?//|@import|url\(' report.html; then
	fail "an external reference: $(grep -Eio '(src|href)="[^"]*"|@import[^;]*|url\([^)]*\)' report.html | head -3)"
fi
# every injected string is escaped where it lands
if grep -q '<img src=x' report.html; then fail "an unescaped <img> from a function name"; fi
# the rules' numbers in their units, empty lists said as such: not
# "before_p50 3.85862e+07" nor a bare "regressed" beside "passed"
python3 - report.html <<'PY' || fail "rule numbers as raw floats or empty lists as bare words"
import re, sys
page = open(sys.argv[1]).read()
cells = re.findall(r'<td class="(?:pass|fail)">(?:passed|failed)</td><td>.*?</td><td>(.*?)</td></tr>', page)
bad = [c for c in cells if re.search(r'_p50 [0-9.]+e[+-]', c) or re.search(r'(^|, )(regressed|mismatched|differing)(,|$)', c)]
sys.exit(1 if not cells or bad else 0)
PY
if grep -q '<script>window.__pwned' report.html; then fail "an unescaped <script> from a benchmark name"; fi
grep -q '&lt;/script&gt;&lt;img src=x onerror=&quot;window.__pwned=1&quot;&gt;' report.html ||
	fail "the function name is not shown escaped"
grep -q 'we&quot;ird' report.html || fail "the file with a quote is not shown escaped"
# the data block: no '<' in it at all
python3 - report.html <<'PY' || fail "the data block"
import json, re, sys
t = open(sys.argv[1]).read()
m = re.search(r'<script type="application/json" id="perfloop-data">(.*?)</script>', t, re.S)
assert m and "<" not in m.group(1), "a '<' inside the JSON block"
d = json.loads(m.group(1))
assert d["schema"] == "perfloop.report-data/1" and len(d["verdicts"]) == 1, d.keys()
PY
for s in summary benchmarks profiles findings-section; do
	grep -q "<section id=\"$s\">" report.html || fail "no section $s"
done

# profile --format html: the flame graph page alone (from a profile of a
# Python program where one can be read)
py=$(pythons311 | head -1)
if [ -n "$py" ]; then
	printf 'def f():\n    s = 0\n    for i in range(3000000):\n        s += i\n    return s\nf()\n' >busy.py
	run "$PERFLOOP" profile --memory --format html,folded -o p -- "$py" busy.py
	expect_rc 0
	[ -s p.html ] || fail "profile --format html wrote no p.html: $(cat "$T/out")"
	grep -q '<svg class="flame"' p.html || fail "p.html has no flame graph"
	# its memory series on the report's page
	run "$PERFLOOP" report --format html -o mem.html p.memory.json p.folded
	expect_rc 0
	grep -q '<section id="series">' mem.html || fail "no series section"
	grep -q 'memory over time (RSS peak ' mem.html || fail "no memory chart"
	grep -q '<polyline class="series"' mem.html || fail "no memory line"
fi
# a training log's data/compute split
"$PERFLOOP" steps --format json "$PERFLOOP_SRC/examples/train/train_log.jsonl" >steps.json ||
	fail "steps --format json"
run "$PERFLOOP" report --format html -o steps.html steps.json
expect_rc 0
grep -q 'waiting for data [0-9.]*% (.*) · computing [0-9.]*%' steps.html || fail "no split: $(grep -c split steps.html)"
run "$PERFLOOP" report steps.json
expect_rc 2
expect_err "--format html only"

# bad input: one line naming the file and line
printf 'a;b 3\nno count here\n' >bad.folded
run "$PERFLOOP" report --format html bad.folded
expect_rc 2
expect_err "bad.folded:2: count"
run "$PERFLOOP" report prof.folded
expect_rc 2
expect_err "--format html only"
run "$PERFLOOP" report --format pdf findings.json
expect_rc 2
expect_err "expected text, md or html"

# a 100k-sample profile of 20,000 distinct stacks and 10 benchmarks: the
# page stays under 5 MB
python3 "$PERFLOOP_SRC/tests/cli/gen_folded.py" big.folded 100000
"$PERFLOOP" bench -r 3 -w 0 --batch 1 -n a -n b -n c -n d -n e -n f -n g -n h -n i -n j -o ten.json \
	true true true true true true true true true true >/dev/null 2>&1 || fail "bench of ten"
run "$PERFLOOP" report --format html -o big.html big.folded ten.json
expect_rc 0
size=$(wc -c <big.html)
[ "$size" -lt 5000000 ] || fail "a 100k-sample page is $size bytes"

# two profiles: the difference of the second against the first (heavy's
# share fell from 70% to 30%: blue; light's rose from 30% to 70%: red); a
# size sweep: the complexity section with its log-log plot
printf 'main (app.py:1);heavy (app.py:5) 30\nmain (app.py:1);light (app.py:9) 70\n' >after.folded
printf 'main (app.py:1);heavy (app.py:5) 70\nmain (app.py:1);light (app.py:9) 30\n' >before.folded
"$PERFLOOP" bench -r 3 -w 0 --batch 1 -P n=1..8*2 -o sweep.json 'sleep 0.00{n}' >/dev/null 2>&1 ||
	fail "bench sweep"
run "$PERFLOOP" report --format html -o diff.html before.folded after.folded sweep.json
expect_rc 0
grep -q '<h3 id="difference">Difference: before.folded → after.folded</h3>' diff.html || fail "no difference"
grep -q '<section id="complexity">' diff.html || fail "no complexity section"
python3 - diff.html <<'PY' || fail "the difference's colours"
import re, sys
t = open(sys.argv[1]).read()
d = t[t.index('id="difference"'):]
def fill(name):
    m = re.search(r'<g class="f" data-n="%s [^"]*"[^>]*><title>[^<]*</title><rect [^>]*fill="rgb\((\d+),(\d+),(\d+)\)"' % name, d)
    return tuple(int(x) for x in m.groups())
h, l, m = fill("heavy"), fill("light"), fill("main")
assert h[2] == 255 and h[0] < 200, ("heavy is not blue", h)
assert l[0] == 255 and l[2] < 200, ("light is not red", l)
assert m == (255, 255, 255), ("main's share did not change", m)
assert "-40.00 points since before" in d and "+40.00 points since before" in d
PY

# a benchmark of 20,000 runs (a fast command under load): one dot per half
# pixel and lane, at most 3000, and the page says so
python3 - <<'PY'
import json, random
d = json.load(open("side.json"))
b = d["benchmarks"][0]
random.seed(1)
b["samples"] = [dict(b["samples"][0], wall_s=0.01 + random.random() * 0.002, counted=True,
                     outlier=False, contended=False) for _ in range(20000)]
b.pop("batch", None)
json.dump(d, open("many.json", "w"))
PY
refigure many.json
run "$PERFLOOP" report --format html -o many.html many.json
expect_rc 0
[ "$(wc -c <many.html)" -lt 1000000 ] || fail "20,000 runs make a $(wc -c <many.html)-byte page"
grep -q 'every 7th of 20000 runs' many.html || fail "no note of the runs drawn"

# in a real browser
python3 - "$PERFLOOP_SRC/tests/cli" report.html <<'PY' || exit $?
import os, sys
sys.path.insert(0, sys.argv[1])
import browser
try:
    b = browser.Browser(os.getcwd())
except browser.Unavailable as e:
    print("skip: %s" % e)
    sys.exit(77)
with b:
    b.open(sys.argv[2])
    errors = b.console_errors()
    assert not errors, errors
    n = b.js("return document.querySelectorAll('#profiles svg.flame g.f').length")
    # all, main, heavy, light and the hostile one
    assert n == 5, n
    assert b.js("return window.__pwned === undefined"), "an injected script ran"
    assert b.js("return document.querySelectorAll('img').length") == 0, "an injected <img>"
    assert "</script><img src=x" in b.js("return document.body.textContent"), "the name is not shown as text"
    # a click on heavy zooms it to the full width (1180 of 1200)
    b.click('#profiles g.f[data-n^="heavy"] rect')
    w = b.js("return +document.querySelector('#profiles g.f[data-n^=\"heavy\"] rect').getAttribute('width')")
    assert abs(w - 1180) < 0.01, w
    assert b.js("return document.querySelector('#profiles g.f[data-n^=\"light\"]').style.display") == "none"
    b.click("#profiles .reset")
    w = b.js("return +document.querySelector('#profiles g.f[data-n^=\"heavy\"] rect').getAttribute('width')")
    assert abs(w - 1180 * 70 / 105) < 0.1, w
    # search: the matching frames, and the share they hold
    b.type("#profiles input[type=search]", "heavy|light")
    m = b.js("return Array.prototype.map.call(document.querySelectorAll('#profiles g.f.match'), function(g){return g.getAttribute('data-n')})")
    assert sorted(x.split(" ")[0] for x in m) == ["heavy", "light"], m
    assert b.js("return document.querySelector('#profiles .matched').textContent") == "matched: 95.2%"
    # the findings table sorts by level and a row opens to its template
    b.click('#findings th[data-key="level"]')
    levels = b.js("return Array.prototype.map.call(document.querySelectorAll('#findings tbody.finding'), function(t){return +t.getAttribute('data-level')})")
    assert levels == sorted(levels) and len(levels) > 1, levels
    b.click("#findings tbody.finding tr.head")
    assert "[Bottleneck]" in b.js("return document.querySelector('#findings tbody.finding tr.detail:not([hidden])').textContent")
    assert not b.console_errors()
    png = b.screenshot("report.png")
    colours = browser.png_colours(png)
    assert colours > 20, "a blank screenshot (%d colours)" % colours
    # the difference and the complexity plot load cleanly too
    b.open("diff.html")
    assert not b.console_errors()
    assert b.js("return document.querySelectorAll('svg.flame').length") == 3
    assert b.js("return document.querySelectorAll('#complexity svg circle').length") >= 4
    print("browser: %d frames, zoom, search, sort and a %d-colour screenshot" % (n, colours))
PY
echo ok
