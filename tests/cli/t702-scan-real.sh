#!/bin/sh
# scan's precision on real third-party code (tests/scan-real: Debian 12's
# sklearn, skorch, torchvision, torch's Python, zlib, lz4, jq, torchvision's
# training references and skorch's examples), scored against labels a person
# made by reading each finding: every finding must have a label (a new one
# is judged before its precision is claimed), with every rule on and by
# default (docs/PERFORMANCE.md has the tables).
. "$PERFLOOP_SRC/tests/cli/lib.sh"
score="$PERFLOOP_SRC/tests/scan-real/score.py"
deps="$PERFLOOP_SRC/.deps/scan-real"
python3 "$score" "$PERFLOOP" "$deps" --advisory --json all.json >all.txt 2>all.err
rc=$?
[ "$rc" -eq 77 ] && skip "the corpus is not installed here (scripts/install-deps installs it)"
cat all.txt
[ "$rc" -eq 0 ] || fail "unlabelled findings (label them in tests/scan-real/labels.jsonl): $(cat all.err)"
python3 "$score" "$PERFLOOP" "$deps" --json default.json >default.txt 2>default.err ||
	fail "default rules: $(cat default.err)"
cat default.txt
# the advisory rules are the ones the corpus showed to be mostly noise: off
# by default. What remains meets #13's targets: every rule that fires 5
# times or more is right at least 60% of the time, all of them together at
# least 80%, and at most 5% of the findings are rated above the severity
# the labeller judged fair
python3 - <<'PY' || fail "the default rules' precision"
import json
a, d = json.load(open("all.json")), json.load(open("default.json"))
assert d["findings"] < a["findings"], "the advisory rules changed nothing"
bad = []
for rule, r in d["rules"].items():
    if r["findings"] >= 5 and r["tp"] < 0.6 * r["findings"]:
        bad.append("%s: %d of %d true (< 60%%): make it advisory or fix it" % (rule, r["tp"], r["findings"]))
if d["findings"] and d["true"] < 0.8 * d["findings"]:
    bad.append("all default rules: %d of %d true (< 80%%)" % (d["true"], d["findings"]))
if d["above_fair"] > 0.05 * d["findings"]:
    bad.append("%d of %d findings rated above their fair severity (> 5%%)" % (d["above_fair"], d["findings"]))
for b in bad:
    print("FAIL:", b)
assert not bad
PY
exit 0
