#!/bin/sh
# The noise gate: a command whose time swings is N/A, and says so.
. "$(dirname "$0")/lib.sh"
set -e
run "$PERFLOOP" bench -w 0 -r 10 -o n.json --shell -- \
	"if [ -e $T/flag ]; then rm $T/flag; sleep 0.06; else touch $T/flag; sleep 0.01; fi"
expect_rc 0
check n.json "d['benchmarks'][0]['stats']['wall_s']['cv'] > 0.05"
check n.json "d['benchmarks'][0]['dimensions']['timing']['scored'] is False"
check n.json "'CV' in d['benchmarks'][0]['dimensions']['timing']['reason']"
check n.json "all(not v['scored'] for v in d['benchmarks'][0]['dimensions'].values())"
grep -q 'timing N/A' out || fail "no noise line: $(cat out)"
# a steady command is scored
run "$PERFLOOP" bench -w 1 -r 10 -o q.json -- sleep 0.05
expect_rc 0
check q.json "d['benchmarks'][0]['dimensions']['timing']['scored'] is True"
# outliers are flagged, never dropped
check n.json "len(d['benchmarks'][0]['samples']) == 10"
echo ok
