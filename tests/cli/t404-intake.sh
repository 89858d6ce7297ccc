#!/bin/sh
# perfloop intake: writes docs/perf/intake-NAME.yaml at the git root (from a
# subfolder too), pre-filled with what a summary measured and the
# estimates left empty; refuses to overwrite it without --force; --check
# says the first empty or wrong field with its file and line (exit 2) and
# passes a filled one; report --style review shows it as the Cost model,
# given or found as the loop's evidence.
. "$PERFLOOP_SRC/tests/cli/lib.sh"
new_repo repo
mkdir sub
run "$PERFLOOP" bench -r 3 -w 0 -n parse -o sub/before.json 'sleep 0.01'
expect_rc 0
cd sub
run "$PERFLOOP" intake parse --from before.json
expect_rc 0
f=../docs/perf/intake-parse.yaml
[ -f "$f" ] || fail "no $f: $(cat "$T/out")"
python3 - "$f" <<'PY' || fail "template: $(cat "$f")"
import sys
t = open(sys.argv[1]).read()
assert "schema: perfloop.intake/1" in t and 'name: "parse"' in t and 'benchmark: "parse"' in t
assert 'from: "before.json"' in t
w = [l for l in t.splitlines() if l.strip().startswith("wall_s:")][0]
assert 0.005 < float(w.split(":")[1]) < 1, w
assert "bytes_moved: ~" in t and 'dominant_cost: ""' in t
PY
# it holds the user's estimates: not replaced without --force
run "$PERFLOOP" intake parse
expect_rc 2
expect_err "intake-parse.yaml exists (it holds your estimates)"
run "$PERFLOOP" intake --check parse
expect_rc 2
expect_err "intake-parse.yaml:9: kpi.metric: still empty (and kpi.workload, frequency, dominant_cost, largest_plausible_improvement)"
[ "$(wc -l <"$T/err")" -eq 1 ] || fail "more than one line: $(cat "$T/err")"
sed -e 's/metric: ""/metric: "wall time per file"/' -e 's/workload: ""/workload: "one 20 MB JSON file"/' \
	-e 's/frequency: ""/frequency: "per call"/' -e 's/bytes_moved: ~/bytes_moved: 2e7/' \
	-e 's/dominant_cost: ""/dominant_cost: "memory bandwidth"/' \
	-e 's/largest_plausible_improvement: ""/largest_plausible_improvement: "2x: one pass"/' "$f" >x && mv x "$f"
run "$PERFLOOP" intake --check parse
expect_rc 0
grep -q "complete" "$T/out" || fail "check: $(cat "$T/out")"
grep -q "~2e7 bytes_moved" "$T/out" || fail "check: $(cat "$T/out")"
sed 's/frequency: "per call"/frequency: "hourly"/' "$f" >bad.yaml
run "$PERFLOOP" intake --check ./bad.yaml
expect_rc 2
expect_err "bad.yaml:[0-9]*: frequency: expected setup, per batch"
# review: the Cost model from the intake
run "$PERFLOOP" verify --before before.json --after before.json --suite-exit-code 0 -o v.json
run "$PERFLOOP" report --style review v.json before.json "$f"
expect_rc 0
grep -q "\[Cost model\] intake 'parse': KPI wall time per file on one 20 MB JSON file, per call; ~2e7 bytes_moved; expected dominant cost: memory bandwidth; largest plausible improvement: 2x: one pass (measured: wall_s" "$T/out" ||
	fail "review: $(grep -A1 Cost "$T/out")"
# without one, the review says the cost model is unmeasured
run "$PERFLOOP" report --style review v.json before.json
grep -q "\[Cost model\] unmeasured" "$T/out" || fail "no intake: $(grep Cost "$T/out")"
run "$PERFLOOP" intake 'a/b'
expect_rc 2
expect_err "NAME is letters, digits"
exit 0
