#!/bin/sh
# perfloop steps: the data vs compute split of a training loop from its own
# step-time log: exact shares on constructed logs (JSON lines and CSV, total
# or compute fields), the warm-up apart, the ml.data-loading-bound finding
# and select taking it, and bad logs named by file, line and field.
. "$(dirname "$0")/lib.sh"
set -e
# 3 warm-up steps (data 1.0 of 1.2 s), then 30 steps of 0.02 s data in 0.1 s
python3 - <<'PY'
import json
with open("ok.jsonl", "w") as f:
    for i in range(33):
        d, t = (1.0, 1.2) if i < 3 else (0.02, 0.1)
        f.write(json.dumps({"step": i, "data_time": d, "step_time": t}) + "\n")
with open("bound.jsonl", "w") as f:
    for i in range(33):
        f.write(json.dumps({"data_time": 0.06, "step_time": 0.1}) + "\n")
with open("log.csv", "w") as f:
    f.write('epoch,"batch_time",data_time,loss\n')
    for i in range(10):
        f.write(f"0,0.2,0.08,{1.0 / (i + 1):.3f}\n")
with open("split.jsonl", "w") as f:
    for i in range(10):
        f.write(json.dumps({"wait": 0.05, "fwd_bwd": 0.05}) + "\n")
PY
run "$PERFLOOP" steps --format json ok.jsonl
expect_rc 0
check out "d['schema'] == 'perfloop.steps/1' and d['steps'] == 33 and d['warmup_steps'] == 3"
check out "abs(d['steady']['data_share'] - 0.2) < 1e-9 and abs(d['steady']['step']['p50_s'] - 0.1) < 1e-9"
check out "abs(d['steady']['compute']['sum_s'] - 30 * 0.08) < 1e-9 and abs(d['warmup']['data_share'] - 1.0 / 1.2) < 1e-9"
check out "d['data_bound'] is False and d['fields'] == {'data': 'data_time', 'total': 'step_time'}"
run "$PERFLOOP" steps --findings none.json ok.jsonl
expect_rc 0
grep -q "data wait: 20.0% of the step time" out || fail "text: $(cat out)"
check none.json "d['findings'] == []"
# data-bound: the finding, and select takes it
run "$PERFLOOP" steps --findings f.json bound.jsonl
expect_rc 0
grep -q "finding ml.data-loading-bound" out || fail "no finding line: $(cat out)"
check f.json "d['findings'][0]['leaf'] == 'ml.data-loading-bound' and d['findings'][0]['level'] == 3"
check f.json "abs(d['findings'][0]['metric']['value'] - 0.6) < 1e-9 and d['findings'][0]['metric']['name'] == 'data_loading_share'"
check f.json "d['findings'][0]['severity'] == 'high' and d['findings'][0]['status'] == 'measured'"
run "$PERFLOOP" select --findings f.json -o cand.json
expect_rc 0
check cand.json "d['candidate']['metric_name'] == 'data_loading_share'"
# CSV, with batch_time found as the total and a quoted header; --warmup 0
run "$PERFLOOP" steps --warmup 0 --format json log.csv
expect_rc 0
check out "d['format'] == 'csv' and d['fields']['total'] == 'batch_time' and abs(d['steady']['data_share'] - 0.4) < 1e-9 and d['warmup_steps'] == 0"
# --compute: the step without the wait (total = data + compute)
run "$PERFLOOP" steps --data wait --compute fwd_bwd --format json -o s.json split.jsonl
expect_rc 0
[ ! -s out ] || fail "-o: the report went to stdout"
check s.json "abs(d['steady']['data_share'] - 0.5) < 1e-9 and d['fields']['compute'] == 'fwd_bwd'"

# bad logs: one line naming file, line and field; exit 2
printf '{"data_time": 0.1, "step_time": 0.2}\n{"data_time": 0.1}\n' >missing.jsonl
printf '{"data_time": 0.1, "step_time": 0.2}\n{"data_time": "x", "step_time": 0.2}\n' >text.jsonl
printf '{"data_time": 0.3, "step_time": 0.2}\n' >over.jsonl
printf 'data_time,step_time\n0.1,0.2\n0.1,-1\n' >neg.csv
printf 'data_time,loss\n0.1,2\n' >nocol.csv
printf 'data_time,step_time\n0.1,0.2\n"",0.2\n' >blank.csv
printf '{"data_time": 0.1, "step_time": 0.2}\n[1, 2]\n' >array.jsonl
: >empty.jsonl
check_bad() {
	run "$PERFLOOP" steps "$1"
	expect_rc 2
	[ "$(wc -l <"$T/err")" -eq 1 ] || fail "$1: $(cat "$T/err")"
	expect_err "$2"
}
check_bad missing.jsonl "missing.jsonl:2: field 'step_time': missing"
check_bad text.jsonl "text.jsonl:2: field 'data_time': expected seconds"
check_bad over.jsonl "over.jsonl:1: field 'data_time': .*--compute step_time"
check_bad neg.csv "neg.csv:3: field 'step_time': expected seconds >= 0, got '-1'"
check_bad blank.csv "blank.csv:3: field 'data_time': expected seconds"
check_bad nocol.csv "nocol.csv:1: field 'step_time': no such column"
check_bad array.jsonl "array.jsonl:2: not a JSON object"
check_bad empty.jsonl "empty.jsonl: no steps in it"
check_bad no-such.jsonl "cannot read 'no-such.jsonl'"
for bad in "--total a --compute b ok.jsonl" "--format xml ok.jsonl" "--warmup -1 ok.jsonl" "" "a b"; do
	# shellcheck disable=SC2086
	run "$PERFLOOP" steps $bad
	expect_rc 2
	[ "$(wc -l <"$T/err")" -eq 1 ] || fail "steps $bad: $(cat "$T/err")"
done
# a refused log leaves an existing report and findings file alone
echo keep >keep.json
run "$PERFLOOP" steps -o keep.json --findings keep.json missing.jsonl
expect_rc 2
[ "$(cat keep.json)" = keep ] || fail "a bad log overwrote the output"
echo ok
