#!/bin/sh
# perfloop report --diff BEFORE AFTER: the functions whose own share moved
# most on stdout, the differential flame graph SVG with --out (valid XML;
# a frame that grew red, one that shrank blue, a path only before has
# dashed), shares rather than counts, bad input refused with file:line and
# exit 2, nothing written then, and the movers on the HTML page.
. "$(dirname "$0")/lib.sh"
set -e

# before: 100 samples, after: 600. Own shares: grow 10% -> 40%, shrink
# 50% -> 20%, gone 20% -> none, leaf (under new) none -> 20%, same 20% ->
# 20% (20 samples, then 120: the same share of a run six times as long)
cat >before.folded <<'EOF'
main (app.py:1);grow (app.py:3) 10
main (app.py:1);shrink (app.py:7) 50
main (app.py:1);gone (app.py:9) 20
main (app.py:1);same (app.py:12) 20
EOF
cat >after.folded <<'EOF'
main (app.py:1);grow (app.py:3) 240
main (app.py:1);shrink (app.py:7) 120
main (app.py:1);new (app.py:11);leaf (app.py:20) 120
main (app.py:1);same (app.py:12) 120
EOF

run "$PERFLOOP" report --diff before.folded after.folded -o diff.svg
expect_rc 0
[ ! -s err ] || fail "stderr: $(cat err)"
cat >expected <<'EOF'
Own share of the samples: before.folded (100 samples) -> after.folded (600 samples)
  before    after   change  function
  10.00%   40.00%   +30.00  grow (app.py:3)
  50.00%   20.00%   -30.00  shrink (app.py:7)
  20.00%    0.00%   -20.00  gone (app.py:9)
   0.00%   20.00%   +20.00  leaf (app.py:20)
  20.00%   20.00%    +0.00  same (app.py:12)
(change: in percentage points; 5 of 5 functions with samples of their own, the largest change first)

wrote diff.svg
EOF
diff -u expected out || fail "the movers' table"

python3 - diff.svg <<'PY' || fail "the SVG"
import sys
import xml.etree.ElementTree as ET
NS = "{http://www.w3.org/2000/svg}"
root = ET.parse(sys.argv[1]).getroot()  # valid XML, or this raises
assert root.tag == NS + "svg", root.tag
frames = {}
for g in root.iter(NS + "g"):
    if g.get("class") == "f":
        r = g.find(NS + "rect")
        rgb = tuple(int(v) for v in r.get("fill")[4:-1].split(","))
        frames[g.get("data-n")] = (rgb, float(g.get("data-w")), r.get("stroke-dasharray"),
                                   g.find(NS + "title").text)
def red(c): return c[0] == 255 and c[1] < 200 and c[2] < 200
def blue(c): return c[2] == 255 and c[0] < 200 and c[1] < 200
def white(c): return c == (255, 255, 255)
grow, shrink = frames["grow (app.py:3)"], frames["shrink (app.py:7)"]
gone, leaf = frames["gone (app.py:9)"], frames["leaf (app.py:20)"]
same, main = frames["same (app.py:12)"], frames["main (app.py:1)"]
assert red(grow[0]) and red(leaf[0]), (grow, leaf)
assert blue(shrink[0]) and blue(gone[0]), (shrink, gone)
assert white(same[0]), ("a share that stayed is not white", same)
assert white(main[0]), ("a caller with no samples of its own", main)
# deeper for the larger change: grow moved 30 points, leaf 20
assert grow[0][1] < leaf[0][1] and shrink[0][0] < gone[0][0]
# widths: after's samples; the path only before has at its share of before
# scaled to after's total (20% of 600), dashed
assert (grow[1], leaf[1], same[1]) == (240, 120, 120), (grow, leaf, same)
assert gone[1] == 120 and gone[2], gone
assert grow[2] is None
assert "+30.00 points since before" in grow[3], grow[3]
assert "only before" in gone[3] and "only after" in leaf[3]
PY

# Markdown, and --top
run "$PERFLOOP" report --diff --format md --top 2 before.folded after.folded
expect_rc 0
grep -q '^| 10.00% | 40.00% | +30.00 | grow (app.py:3) |$' out || fail "md: $(cat out)"
[ "$(grep -c '^| [0-9]' out)" -eq 2 ] || fail "--top 2: $(cat out)"

# a run of the same program seven times as long: nothing moved
awk '{ $NF = $NF * 7; print }' before.folded >long.folded
run "$PERFLOOP" report --diff before.folded long.folded -o same.svg
expect_rc 0
grep -q '(700 samples)' out || fail "long.folded: $(cat out)"
[ -z "$(awk '/%/ && $3 != "+0.00"' out)" ] || fail "shares moved: $(cat out)"
grep -q "no frame's own share moved" same.svg || fail "same.svg's legend"

# bad input: one line naming the file and line, exit 2, nothing written
printf 'main (app.py:1);grow (app.py:3) 10\nmain (app.py:1);shrink (app.py:7) many\n' >bad.folded
cp diff.svg kept.svg
run "$PERFLOOP" report --diff before.folded bad.folded -o diff.svg
expect_rc 2
expect_err "^perfloop: error: bad.folded:2: count: expected 'frame;frame;... COUNT'"
[ "$(wc -l <err)" -eq 1 ] || fail "more than one line: $(cat err)"
[ ! -s out ] || fail "a table from bad input: $(cat out)"
cmp -s diff.svg kept.svg || fail "diff.svg changed on bad input"
run "$PERFLOOP" report --diff bad.folded after.folded -o new.svg
expect_rc 2
expect_err "bad.folded:2: count"
[ ! -e new.svg ] || fail "new.svg written from bad input"
: >empty.folded
run "$PERFLOOP" report --diff empty.folded after.folded
expect_rc 2
expect_err "empty.folded: no samples"
run "$PERFLOOP" report --diff before.folded missing.folded
expect_rc 2
expect_err "missing.folded: cannot read"
run "$PERFLOOP" report --diff before.folded
expect_rc 2
expect_err "expected two profiles, BEFORE AFTER"
run "$PERFLOOP" report --diff --format html before.folded after.folded
expect_rc 2
expect_err "perfloop report --format html"
run "$PERFLOOP" report --top 3 before.folded
expect_rc 2
expect_err "option '--top' is for --diff"
run "$PERFLOOP" report --diff --top few before.folded after.folded
expect_rc 2
expect_err "option '--top': expected a count, got 'few'"

# the HTML page given both profiles: the same graph and the movers
run "$PERFLOOP" report --format html -o page.html before.folded after.folded
expect_rc 0
python3 - page.html <<'PY' || fail "the page's difference"
import re, sys
t = open(sys.argv[1]).read()
d = t[t.index('id="difference"'):]
assert '<svg class="flame diff"' in d
rows = re.findall(r'<tr><td class="num">([0-9.]+%)</td><td class="num">([0-9.]+%)</td>'
                  r'<td class="num">([+-][0-9.]+)</td><td>([^<]*)</td></tr>', d)
assert rows[0] == ("10.00%", "40.00%", "+30.00", "grow (app.py:3)"), rows
assert rows[2] == ("20.00%", "0.00%", "-20.00", "gone (app.py:9)"), rows
PY
echo ok
