#!/bin/sh
# perfloop profile on a real PyTorch training loop (examples/train/train.py,
# Debian's python3-torch): the data vs compute split from the stacks over
# wall-clock time agrees with the script's own timers within 0.05 and raises
# ml.data-loading-bound with num_workers=0, in Python and in mixed mode;
# with num_workers=2 the share
# falls and no finding is raised (t802: bench + verify accept it as a win);
# with a GPU (a stand-in NVML) idle meanwhile, gpu.underutilized.
. "$(dirname "$0")/lib.sh"
set -e
torch_python
TRAIN=$PERFLOOP_SRC/examples/train/train.py
# the script's own timers, over the same steps the profile reports (the
# warm-up apart, the last unfinished step left out)
truth() {
	python3 -c "
import json, sys
d = json.load(open(sys.argv[1]))['per_step'][3:-1]
print(sum(s['data_time'] for s in d) / sum(s['step_time'] for s in d))" "$1"
}

run "$PERFLOOP" profile -o w0 -- $PY "$TRAIN" --workers 0 --truth t0.json
expect_rc 0
grep -q "^Training loop: thread" out || fail "no training loop section: $(cat out)"
grep -q "train.py:[0-9]* (main)" out || fail "the waiting line is not named: $(cat out)"
check w0.steps.json "d['schema'] == 'perfloop.steps/1' and d['source'] == 'profile' and d['warmup_steps'] == 3"
share=$(j w0.steps.json "d['steady']['data_share']")
want=$(truth t0.json)
python3 -c "import sys; a, b = float(sys.argv[1]), float(sys.argv[2]); sys.exit(0 if abs(a - b) <= 0.05 and b > 0.3 else 1)" "$share" "$want" ||
	fail "data share $share, the script's own timers say $want"
check w0.findings.json "[f['leaf'] for f in d['findings']].count('ml.data-loading-bound') == 1"
check w0.findings.json "[f for f in d['findings'] if f['leaf'] == 'ml.data-loading-bound'][0]['level'] == 3"
check w0.findings.json "'train.py' in [f for f in d['findings'] if f['leaf'] == 'ml.data-loading-bound'][0]['path']"
# the advice computes how many workers the measured loading needs: the main
# process loads (workers 0), a batch's load over the step's compute
check w0.findings.json "[f for f in d['findings'] if f['leaf'] == 'ml.data-loading-bound'][0]['evidence']['numbers']['workers'] == 0"
# (the load is 8 items x 4 ms of sleep, whatever the machine; the step's
# compute is the machine's: on two idle CPUs ~14 ms, so 3 workers, but
# under ASan and a loaded CI it grew until 1 was enough: the count is
# checked against the numbers measured, not against this machine's speed)
python3 - w0.findings.json <<'PY' || fail "the advice's worker count: $(cat w0.findings.json)"
import json, sys
d = json.load(open(sys.argv[1]))
n = [f for f in d["findings"] if f["leaf"] == "ml.data-loading-bound"][0]["evidence"]["numbers"]
print(n)
assert 28 <= n["load_ms_per_batch"] <= 60, n
r = n["load_ms_per_batch"] / n["compute_ms_per_step"]
assert n["workers_needed"] >= 1 and n["workers_needed"] - 1 - 1e-3 < r <= n["workers_needed"] + 1e-3, n
PY
grep -q "DataLoader(num_workers=[0-9]*) loads batches beside the step" out || fail "no computed worker count: $(cat out)"
# waiting threads feed the split, not the flame graph, without --idle
grep -q "idle thread samples left out" out || fail "idle samples were not set apart: $(cat out)"
# select takes the measured data-loading bottleneck, never a hot function
# inside the step it slows (level 1 ranked first before)
run "$PERFLOOP" select --explain -o cand.json --findings w0.findings.json
expect_rc 0
check cand.json "d['candidate']['metric_name'] == 'data_loading_share'"

# mixed mode (Python over native stacks) gives the same split, from the
# same frames, every thread read at each tick (it had none before)
if [ "$(uname -m)" = x86_64 ]; then
	run "$PERFLOOP" profile --mode mixed -o m0 -- $PY "$TRAIN" --workers 0 --truth tm.json
	if [ "$rc" -ne 0 ] && grep -q "ptrace" err; then
		echo "mixed mode cannot trace here: its split not checked"
	else
		expect_rc 0
		grep -q "^Training loop: thread" out || fail "mixed: no training loop section: $(cat out)"
		check m0.findings.json "[f['leaf'] for f in d['findings']].count('ml.data-loading-bound') == 1"
		# the accuracy holds at a useful rate: under a sanitizer or on a
		# machine too busy to deliver half the asked 1 kHz, said and not
		# judged
		rate=$(sed -n 's/.* \([0-9]*\)\/s delivered.*/\1/p' out | head -n 1)
		if [ "${rate:-0}" -lt 500 ]; then
			echo "mixed: ${rate:-?}/s delivered: the split's accuracy not judged"
		else
			share=$(j m0.steps.json "d['steady']['data_share']")
			want=$(truth tm.json)
			python3 -c "import sys; a, b = float(sys.argv[1]), float(sys.argv[2]); sys.exit(0 if abs(a - b) <= 0.05 and b > 0.3 else 1)" "$share" "$want" ||
				fail "mixed: data share $share, the script's own timers say $want ($rate/s)"
			# steps of ~50 ms: every one found (the warm-up's and the
			# unfinished last one's included, as bench/steps.sh counts)
			check m0.steps.json "d['steps'] + 1 >= 0.95 * 60"
		fi
	fi
fi

# the GPU idle while the step waits for data (a stand-in NVML at 20%)
fake_nvml
FAKE_NVML="util=20" run "$PERFLOOP" profile --gpu --format findings -o gpu -- $PY "$TRAIN" --workers 0 --steps 15
expect_rc 0
check gpu.findings.json "[f['leaf'] for f in d['findings']].count('gpu.underutilized') == 1"
check gpu.findings.json "[f for f in d['findings'] if f['leaf'] == 'gpu.underutilized'][0]['location']['function'] == 'main'"
unset PERFLOOP_NVML_LIB

# two workers load beside the step: the share falls, no finding
run "$PERFLOOP" profile --subprocesses -o w2 -- $PY "$TRAIN" --workers 2 --truth t2.json
expect_rc 0
share2=$(j w2.steps.json "d['steady']['data_share']")
want2=$(truth t2.json)
# (the share must match the script's timers; whether two workers keep up
# is the machine's: on 2 busy CPUs they once did not, 0.30 by the script's
# own timers too, so the finding follows the measured share either way)
python3 -c "import sys; a, b = float(sys.argv[1]), float(sys.argv[2]); sys.exit(0 if abs(a - b) <= 0.05 and (a < 0.3 or b >= 0.25) else 1)" "$share2" "$want2" ||
	fail "workers=2: data share $share2, the script's own timers say $want2"
check w2.findings.json "('ml.data-loading-bound' in [f['leaf'] for f in d['findings']]) == ($share2 > 0.3)"
grep -q "_worker_loop" w2.folded || fail "the workers' stacks are not under their own roots"
# each worker's busy share: two workers, each loading 8 items x 4 ms for
# a step of ~20 ms, busy most of their time, never over 100%
line=$(grep "DataLoader workers, busy loading" out) || fail "no per-worker busy/idle line: $(cat out)"
python3 -c "
import re, sys
v = [int(x) for x in re.findall(r'pid [0-9]+ ([0-9]+)%', sys.argv[1])]
sys.exit(0 if len(v) == 2 and all(20 <= x <= 100 for x in v) else 1)" "$line" || fail "workers' busy shares: $line"

# a program without torch: no training section
run "$PERFLOOP" profile --format none -- $PY -c 'sum(range(3000000))'
expect_rc 0
! grep -q "Training loop" out || fail "a training section without torch: $(cat out)"

echo ok
