#!/bin/sh
# perfloop report: golden files for both formats and styles (inputs made
# by tests/data/report/make_inputs.py), the confidence rules, and bad input.
# Run with --update to rewrite the expected files after an intended change.
. "$(dirname "$0")/lib.sh"
set -e
DATA=$PERFLOOP_SRC/tests/data/report
cp "$DATA"/*.json "$DATA"/*.jsonl .
golden() {
	name=$1
	shift
	"$PERFLOOP" report "$@" >"$name" 2>err || fail "report $*: $(cat err)"
	if [ "${UPDATE:-0}" = 1 ]; then
		cp "$name" "$DATA/expected-$name"
	else
		diff -u "$DATA/expected-$name" "$name" || fail "report $* differs from expected-$name"
	fi
}
golden findings.txt findings.json verdict.json ledger.jsonl before.json
golden findings.md --format md findings.json verdict.json ledger.jsonl before.json
golden review.txt --style review findings.json verdict.json
golden review.md --style review --format md findings.json verdict.json

# the template and the rules the golden files rely on
grep -q '^   \[Measured\] none — static analysis; measure before merging$' findings.txt ||
	fail "no static-only marker"
grep -A3 'Additional options (not defects)' findings.txt | grep -q 'persistent_workers' ||
	fail "advisory not in the trailing list"
if grep -q '^[0-9]*\. persistent_workers' findings.txt; then fail "advisory numbered as a defect"; fi
# ranked by impact: the measured 3.5x finding comes first
head -8 findings.txt | grep -q '^1\. one write per record' || fail "not ranked by impact"
grep -Eq '^0\.(8[5-9]|9[0-4]) — a mix of statically confirmed and measured findings\.$' findings.txt ||
	fail "confidence for a static+runtime mix: $(tail -1 findings.txt)"
"$PERFLOOP" report findings-profiling.json | tail -1 | grep -q '^0\.7[0-9] — some findings need profiling' ||
	fail "confidence with profiling needed"
python3 -c "
import json; d = json.load(open('findings.json'))
d['findings'] = [f for f in d['findings'] if f['status'] == 'statically_confirmed']
json.dump(d, open('static.json', 'w'))"
"$PERFLOOP" report static.json | tail -1 | grep -q '^0\.9[5-8] — every finding is statically confirmed' ||
	fail "confidence for static-only findings"
# verdicts in the order they were made, each not accepted with the rules
# it failed (they came in the files' order, and "reject" said no why)
python3 -c "
import json; d = json.load(open('verdict.json'))
d['created'] = '2000-01-01T00:00:00Z'; d['verdict'] = 'reject'; d['failed_rules'] = ['target_not_noisy', 'fingerprint_match']
json.dump(d, open('zz-older.json', 'w'))"
"$PERFLOOP" report verdict.json zz-older.json >order.txt
first=$(grep -n 'reject (failed: target_not_noisy, fingerprint_match)' order.txt | cut -d: -f1)
other=$(grep -n ': accept' order.txt | head -1 | cut -d: -f1)
[ -n "$first" ] && [ -n "$other" ] && [ "$first" -lt "$other" ] || fail "verdicts not oldest first, or no reason: $(cat order.txt)"
# measurements alone: not "no measurements" beside the benchmarks listed
"$PERFLOOP" report --format md before.json after.json | tail -1 | grep -q '^n/a — measurements only, no finding and no verdict to judge' ||
	fail "confidence for two summaries: $("$PERFLOOP" report --format md before.json after.json | tail -1)"
# review says unmeasured where there is no measurement
"$PERFLOOP" report --style review verdict.json >r2.txt
grep -q '\[Cost model\] unmeasured' r2.txt || fail "review invents a cost model"
# a summary the reader refuses is unmeasured, with the reader's reason
python3 -c "
import json; d = json.load(open('after.json'))
d['benchmarks'][0]['dimensions']['timing']['value'] /= 2
json.dump(d, open('after.json', 'w'))"
"$PERFLOOP" report --style review verdict.json >r3.txt
grep -q '\[Result\] unmeasured (after.json: benchmarks\[0\].dimensions.timing.value: .* is not the median of its samples' r3.txt ||
	fail "refused after-run not said: $(grep Result r3.txt)"
rm after.json
"$PERFLOOP" report --style review verdict.json >r3.txt
grep -q '\[Result\] unmeasured (after.json: unable to open after.json' r3.txt ||
	fail "missing after-run not said: $(grep Result r3.txt)"
# a summary without the verdict's benchmark
python3 -c "
import json; d = json.load(open('before.json'))
d['benchmarks'][0]['name'] = 'other'
json.dump(d, open('before.json', 'w'))"
"$PERFLOOP" report --style review verdict.json >r3.txt
grep -q '\[Baseline\] unmeasured (before.json has no benchmark `' r3.txt ||
	fail "benchmark missing from the baseline not said: $(grep Baseline r3.txt)"
# written atomically with --out
run "$PERFLOOP" report --format md -o out.md findings.json
expect_rc 0
[ -s out.md ] && [ ! -s out ] || fail "--out"

# bad input
echo '{"schema":"perfloop.other/1"}' >other.json
run "$PERFLOOP" report other.json
expect_rc 2
expect_err "other.json: schema: expected"
printf '{"verdict":"accept","gain":0.1}\nnot json\n' >bad.jsonl
run "$PERFLOOP" report bad.jsonl
expect_rc 2
expect_err "bad.jsonl:2:"
head -c 50 findings.json >trunc.json
run "$PERFLOOP" report trunc.json
expect_rc 2
expect_err "trunc.json:"
run "$PERFLOOP" report --format pdf findings.json
expect_rc 2
expect_err "option '--format'"
run "$PERFLOOP" report
expect_rc 2
echo ok
