#!/bin/sh
# The fix t801's finding asks for, measured: examples/train/train.py with
# num_workers=2 instead of 0, benched as a user would, is accepted by
# verify as a win (skipped where the machine is too noisy to score a 3 s
# command, as t300 is).
. "$(dirname "$0")/lib.sh"
set -e
torch_python
TRAIN=$PERFLOOP_SRC/examples/train/train.py
# the fix, measured: bench both, verify accepts the second (not pinned to
# one CPU: the workers must be free to run beside the step)
run "$PERFLOOP" bench --quiet -w 1 -r 5 --batch 1 --pin none -n train -o before.json -- $PY "$TRAIN" --workers 0
expect_rc 0
run "$PERFLOOP" bench --quiet -w 1 -r 5 --batch 1 --pin none -n train -o after.json -- $PY "$TRAIN" --workers 2
expect_rc 0
for f in before.json after.json; do
	[ "$(j $f "d['benchmarks'][0]['dimensions']['timing']['scored']")" = True ] ||
		skip "this machine is too noisy for a scored 3 s benchmark ($f: CV $(j $f "d['benchmarks'][0]['stats']['wall_s']['cv']"))"
done
run "$PERFLOOP" verify -b before.json -a after.json --suite-exit-code 0 --json
[ "$rc" -eq 0 ] || {
	grep -q machine_speed out && skip "the machine changed speed between the two: $(cat out)"
	fail "verify did not accept num_workers=2: $(cat out)"
}
check out "d['verdict'] == 'accept' and d['gain'] > 0.2"
echo ok
