#!/bin/sh
# The number the program reports (--metric): read from each run's output
# (a regular expression's first group, the median of its matches; or a
# JSON path), a dimension of its own that decides comparisons, verify and
# the loop instead of the whole process's time. The programs here print
# numbers they read from a file, so that what is asserted is the reading,
# not the machine's noise; their start-up sleeps a random 0-80 ms, which
# the number must not see.
. "$(dirname "$0")/lib.sh"
set -e
cat >train.sh <<'SH'
#!/bin/sh
sleep 0.0$(( $(od -An -N1 -tu1 /dev/urandom) % 9 ))
v=$(cat "${1:-step.txt}")
echo "loading data"
echo "step 0 step_time_ms=$((v * 3)) (warm-up)"
for i in 1 2 3 4; do echo "step $i step_time_ms=$v loss=0.$i"; done
echo "samples/s: $((100000 / v))"
SH
chmod +x train.sh
echo 40 >step.txt
echo 20 >fast.txt

# the median of a run's matches: the slow first step does not move it
run "$PERFLOOP" bench --no-history -w 0 -r 4 --batch 1 --metric 'step_time_ms=([0-9.]+)' --metric-name step_time_ms -n t -o m.json -- ./train.sh
expect_rc 0
check m.json "d['benchmarks'][0]['dimensions']['step_time_ms']['value'] == 40 and d['benchmarks'][0]['dimensions']['step_time_ms']['scored']"
check m.json "d['benchmarks'][0]['dimensions']['step_time_ms']['source'] == 'reported by the program' and d['benchmarks'][0]['dimensions']['step_time_ms']['higher_is_better'] is False"
check m.json "all(s['metric'] == 40 for s in d['benchmarks'][0]['samples']) and len([s for s in d['benchmarks'][0]['samples'] if s['counted']]) == 4"
check m.json "d['benchmarks'][0]['decides']['dimension'] == 'step_time_ms' and d['benchmarks'][0]['metric']['name'] == 'step_time_ms'"
check m.json "d['benchmarks'][0]['sim'] is None"
grep -q "step_time_ms (the program's): median 40, CV 0.0%" out || fail "no metric line: $(cat out)"
valid bench-1.schema.json m.json

# two commands compared on the number; higher is better turns the verdict
run "$PERFLOOP" bench --no-history -w 0 -r 4 --batch 1 --metric 'samples/s: ([0-9]+)' --metric-name throughput --higher-is-better -n slow -n fast -o hb.json "./train.sh step.txt" "./train.sh fast.txt"
expect_rc 0
check hb.json "[(c['name'], c['dimension'], c['verdict']) for c in d['comparisons']] == [('fast', 'throughput', 'faster')]"
check hb.json "d['comparisons'][0]['ratio'] == 2"
grep -q "fast 2.00× higher than slow on throughput" out || fail "the comparison does not name the number: $(cat out)"
grep -q "→ faster" out || fail "a higher throughput is not the faster: $(cat out)"

# verify decides on it, in its direction (a number the program reports is
# as exposed to the machine's speed as its wall time: two measurements the
# speed probe sees 4% apart, in the direction that would explain the gain,
# are measured again, at most three times, as t300 does)
for attempt in 1 2 3; do
	run "$PERFLOOP" bench --no-history -w 0 -r 4 --batch 1 --metric 'step_time_ms=([0-9.]+)' --metric-name step_time_ms -n t -o m.json -- ./train.sh
	expect_rc 0
	run "$PERFLOOP" bench --no-history -w 0 -r 4 --batch 1 --metric 'step_time_ms=([0-9.]+)' --metric-name step_time_ms -n t -o m2.json -- ./train.sh fast.txt
	expect_rc 0
	run "$PERFLOOP" verify --before m.json --after m2.json --suite-exit-code 0 -o v.json
	[ "$rc" -eq 1 ] && grep -q 'FAIL fingerprint_match.*machine_speed' "$T/out" || break
	[ "$attempt" -lt 3 ] || skip "the machine's speed changed between the measurements three times: $(grep fingerprint_match "$T/out")"
done
expect_rc 0
check v.json "d['verdict'] == 'accept' and d['target'] == 'step_time_ms' and d['gain'] == 0.5 and 'the number the program reports' in d['target_why']"
check v.json "'target_not_noisy' in [r['name'] for r in d['rules']]"
run "$PERFLOOP" verify --before m2.json --after m.json --suite-exit-code 0 -o v2.json
expect_rc 1
check v2.json "d['verdict'] == 'reject' and d['gain'] == -1"

# --baseline and --fail-on-regression on the number, in its direction: half
# the throughput is a regression (exit 1), twice it is not
echo 80 >slow.txt
run "$PERFLOOP" bench --no-history -w 0 -r 4 --batch 1 --metric 'samples/s: ([0-9]+)' --metric-name throughput --higher-is-better -n t -o tb.json -- ./train.sh
expect_rc 0
run "$PERFLOOP" bench --no-history -w 0 -r 4 --batch 1 --metric 'samples/s: ([0-9]+)' --metric-name throughput --higher-is-better -n t --baseline tb.json --fail-on-regression -o ts.json -- ./train.sh slow.txt
expect_rc 1
expect_err "perfloop: regression: 't' is 100.0% worse than in tb.json on throughput"
check ts.json "d['baseline']['comparisons'][0]['dimension'] == 'throughput' and d['baseline']['comparisons'][0]['verdict'] == 'slower'"
run "$PERFLOOP" bench --no-history -w 0 -r 4 --batch 1 --metric 'samples/s: ([0-9]+)' --metric-name throughput --higher-is-better -n t --baseline tb.json --fail-on-regression -o tf.json -- ./train.sh fast.txt
expect_rc 0
check tf.json "d['baseline']['comparisons'][0]['verdict'] == 'faster'"
# two commands: the lower throughput is the regression
run "$PERFLOOP" bench --no-history -w 0 -r 4 --batch 1 --metric 'samples/s: ([0-9]+)' --metric-name throughput --higher-is-better --fail-on-regression -n a -n b "./train.sh step.txt" "./train.sh slow.txt"
expect_rc 1
expect_err "'b' is 100.0% worse than 'a' on throughput"

# JSON output (Google Benchmark's --benchmark_format=json), by path
cat >gb.sh <<'SH'
#!/bin/sh
echo '{"context": {"num_cpus": 2}, "benchmarks": [{"name": "BM_sort", "real_time": 1250.5, "time_unit": "ns"}]}'
SH
chmod +x gb.sh
run "$PERFLOOP" bench --no-history -w 0 -r 3 --batch 1 --metric json:benchmarks.0.real_time -n gb -o gb.json -- ./gb.sh
expect_rc 0
check gb.json "d['benchmarks'][0]['dimensions']['metric']['value'] == 1250.5"
run "$PERFLOOP" bench --no-history -w 0 -r 3 --batch 1 --metric 'json:benchmarks[0].real_time' -n gb -o gb2.json -- ./gb.sh
expect_rc 0
check gb2.json "d['benchmarks'][0]['dimensions']['metric']['value'] == 1250.5"

# no number is a failed measurement (exit 3), saying what was looked for
run "$PERFLOOP" bench --no-history -w 0 -r 3 --batch 1 --metric 'epoch_time=([0-9.]+)' -- ./train.sh
expect_rc 3
expect_err "'./train.sh' --metric: 'epoch_time=(\[0-9.\]+)' matched nothing in its output"
run "$PERFLOOP" bench --no-history -w 0 -r 3 --batch 1 --metric json:benchmarks.1.real_time -- ./gb.sh
expect_rc 3
expect_err "its JSON has no number at 'benchmarks.1.real_time'"
# bad usage: one line, exit 2
for bad in "--metric (" "--metric x --metric-name timing" "--metric x --metric-name Bad" "--metric-name x" "--higher-is-better" "--metric x --output f.txt" "--metric json:"; do
	# shellcheck disable=SC2086
	run "$PERFLOOP" bench --no-history -r 3 $bad -- ./train.sh
	expect_rc 2
	[ "$(wc -l <"$T/err")" -eq 1 ] || fail "$bad: more than one line: $(cat "$T/err")"
done

# perfloop.yaml: the same, by name; a bad expression is one line naming it
cat >perfloop.yaml <<'YAML'
benchmarks:
  train:
    cmd: ./train.sh
    metric: 'step_time_ms=([0-9.]+)'
    metric_name: step_time_ms
YAML
run "$PERFLOOP" bench --no-history -w 0 -r 3 --batch 1 -o y.json train
expect_rc 0
check y.json "d['benchmarks'][0]['dimensions']['step_time_ms']['value'] == 40 and d['spec']['settings']['metric']['name'] == 'step_time_ms'"
printf 'benchmarks:\n  train:\n    cmd: ./train.sh\n    metric: "("\n' >perfloop.yaml
run "$PERFLOOP" bench --no-history -r 3 train
expect_rc 2
expect_err "perfloop.yaml:4.*benchmarks.train.metric"
rm perfloop.yaml
# an expression whose repetitions would take the C library gigabytes to
# compile (the fuzzer's "t" and 100 "+") is refused at once, exit 2
run "$PERFLOOP" bench --no-history -r 3 --metric "t$(printf '+%.0s' $(seq 100))" -- ./train.sh
expect_rc 2
expect_err "option '--metric'.*too complex"

# the loop: baseline and turns decided on the number, kept for every turn
command -v git >/dev/null 2>&1 || exit 0
new_repo repo
cp ../train.sh ../step.txt .
echo "notes" >notes.txt
git add -A
git commit -qm base
run "$PERFLOOP" baseline --bench './train.sh' -n train --runs 4 --batch 1 --metric 'samples/s: ([0-9]+)' --metric-name throughput --higher-is-better
expect_rc 0
grep -q 'decides: throughput' "$T/out" || fail "baseline: $(cat "$T/out")"
check .perfloop/loop.json "d['metric'] == {'expr': 'samples/s: ([0-9]+)', 'name': 'throughput', 'higher_is_better': True}"
echo 10 >step.txt
run "$PERFLOOP" try -m "faster steps"
expect_rc 0
grep -q "verdict: accept (on throughput)" "$T/out" || fail "4x the throughput: $(cat "$T/out")"
echo 64 >step.txt
run "$PERFLOOP" try -m "slower steps"
expect_rc 1
grep -q 'verdict: reject (on throughput)' "$T/out" || fail "half the throughput: $(cat "$T/out")"
