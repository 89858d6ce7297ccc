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
# one CPU: the workers must be free to run beside the step). 40 steps of
# 12 ms items, not the example's 60 of 4 ms: its 1.9 s of waiting beside
# ~2 s of starting Python and torch made the true win 0.22-0.26 on a quiet
# 2-core machine, too close to the 0.2 asserted below (it failed a CI run
# beside t500); this one waits 3.8 s, and the win is 0.29-0.33 quiet or
# beside a busy loop.
ARGS="--wait 12 --steps 40"
# the number the script reports first (bench --metric): its mean step,
# without the 2 s of starting Python and torch, is what the workers cut;
# it decides where the whole process's time is too noisy to
run "$PERFLOOP" bench --quiet -w 1 -r 5 --batch 1 --pin none --metric 'step=([0-9.]+) ms' --metric-name step_ms -n train -o mbefore.json -- $PY "$TRAIN" $ARGS --workers 0
expect_rc 0
run "$PERFLOOP" bench --quiet -w 1 -r 5 --batch 1 --pin none --metric 'step=([0-9.]+) ms' --metric-name step_ms -n train -o mafter.json -- $PY "$TRAIN" $ARGS --workers 2
expect_rc 0
check mbefore.json "d['benchmarks'][0]['decides']['dimension'] == 'step_ms' and d['benchmarks'][0]['dimensions']['step_ms']['value'] > 0"
run "$PERFLOOP" verify -b mbefore.json -a mafter.json --suite-exit-code 0 --json
if [ "$(j mbefore.json "d['benchmarks'][0]['dimensions']['step_ms']['scored'] and d['benchmarks'][0]['dimensions']['step_ms']['scored']")" = True ] &&
	[ "$(j mafter.json "d['benchmarks'][0]['dimensions']['step_ms']['scored']")" = True ]; then
	[ "$rc" -eq 0 ] || grep -q machine_speed out || fail "verify did not accept num_workers=2 on its step: $(cat out)"
	[ "$rc" -ne 0 ] || [ "$(j out "d['target'] == 'step_ms' and d['gain'] > 0.2")" = True ] ||
		fail "verify on the step: $(cat out)"
	[ "$rc" -ne 0 ] || echo "step gain $(j out "round(d['gain'], 3)")"
fi
run "$PERFLOOP" bench --quiet -w 1 -r 5 --batch 1 --pin none -n train -o before.json -- $PY "$TRAIN" $ARGS --workers 0
expect_rc 0
run "$PERFLOOP" bench --quiet -w 1 -r 5 --batch 1 --pin none -n train -o after.json -- $PY "$TRAIN" $ARGS --workers 2
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
gain=$(j out "round(d['gain'], 3)")
[ "$(j out "d['verdict']")" = accept ] && [ "$(j out "d['gain'] > 0.2")" = True ] ||
	fail "verify's verdict $(j out "d['verdict']") with gain $gain: expected accept with gain > 0.2"
echo "gain $gain"
echo ok
