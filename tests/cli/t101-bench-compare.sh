#!/bin/sh
# Several commands: names, reference, the verdicts and their intervals.
. "$(dirname "$0")/lib.sh"
set -e
run "$PERFLOOP" bench -w 1 -r 12 -n fast -n slow "$BUSY 1000" "$BUSY 30000000" -o c.json
expect_rc 0
check c.json "[b['name'] for b in d['benchmarks']] == ['fast', 'slow']"
check c.json "d['reference'] == 'fast'"
check c.json "len(d['comparisons']) == 1"
check c.json "d['comparisons'][0]['name'] == 'slow' and d['comparisons'][0]['verdict'] == 'slower'"
check c.json "d['comparisons'][0]['ci95'][0] <= d['comparisons'][0]['ratio'] <= d['comparisons'][0]['ci95'][1]"
check c.json "d['comparisons'][0]['ratio'] > 2 and d['comparisons'][0]['p_value'] < 0.05"
grep -q 'Summary' out || fail "no summary section"
grep -q 'slower than' out || fail "no comparison line: $(cat out)"

run "$PERFLOOP" bench -w 0 -r 12 -n fast -n slow --reference slow "$BUSY 1000" "$BUSY 30000000" -o r.json
expect_rc 0
check r.json "d['reference'] == 'slow' and d['comparisons'][0]['name'] == 'fast' and d['comparisons'][0]['verdict'] == 'faster'"

run "$PERFLOOP" bench -r 3 --reference nosuch "$BUSY 1" "$BUSY 2"
expect_rc 2
expect_err "option '--reference'"
run "$PERFLOOP" bench -r 3 -n a -n b -n c "$BUSY 1" "$BUSY 2"
expect_rc 2
expect_err "option '--name'"
run "$PERFLOOP" bench -r 3 "$BUSY 1" -- "$BUSY" 2
expect_rc 2
echo ok
