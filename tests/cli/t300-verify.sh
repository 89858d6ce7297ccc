#!/bin/sh
# perfloop verify end to end on summaries from the real bench: accept, each
# reject reason, no feasible win, the ledger (atomic, even when killed
# mid-write), bad input.
. "$(dirname "$0")/lib.sh"
set -e
bench() { $PIN "$PERFLOOP" bench --quiet -w 1 -r 8 -n app -o "$1" -- "$BUSY" "$2"; }
bench slow.json 40000000
bench fast.json 20000000
bench fast2.json 20000000

run "$PERFLOOP" verify -b slow.json -a fast.json --suite true -o v.json
if j slow.json "d['benchmarks'][0]['dimensions']['timing']['scored']" | grep -q False ||
	j fast.json "d['benchmarks'][0]['dimensions']['timing']['scored']" | grep -q False; then
	skip "this machine is too noisy for a scored 40 ms benchmark (CV $(j slow.json "d['benchmarks'][0]['stats']['wall_s']['cv']"), $(j fast.json "d['benchmarks'][0]['stats']['wall_s']['cv']"); samples $(j slow.json "[round(s['wall_s'],4) for s in d['benchmarks'][0]['samples']]"))"
fi
# so is the refusal of two measurements the machine ran at different speeds
if [ "$rc" -eq 1 ] && grep -q 'FAIL fingerprint_match.*machine_speed' out; then
	skip "the machine's speed changed between the measurements: $(grep fingerprint_match out)"
fi
expect_rc 0
grep -q 'verdict: accept' out || fail "no accept line: $(cat out)"
check v.json "d['schema'] == 'perfloop.verdict/1' and d['verdict'] == 'accept' and d['failed_rules'] == []"
check v.json "[r['name'] for r in d['rules']] == ['target_improved','timing_not_noisy','enough_samples','fingerprint_match','same_spec','suite_green','no_tier_regression']"
check v.json "d['gain'] > 0.3 and d['before']['p50'] > d['after']['p50']"
# report on the real bench output and verdict
run "$PERFLOOP" report --style review v.json slow.json
expect_rc 0
grep -q '\[Result\] fast.json: .*→ accept' out || fail "review of a real verdict: $(cat out)"
grep -q '\[Baseline\] slow.json: ' out || fail "review baseline: $(cat out)"

# no feasible win: the same program twice
run "$PERFLOOP" verify -b fast.json -a fast2.json --suite-exit-code 0 --json
expect_rc 1
# (refused as no gain, or because the machine's speed changed between them:
# never accepted)
check out "d['verdict'] in ('no_feasible_win', 'reject') and ('target_improved' in d['failed_rules'] or any('machine_speed' in m for r in d['rules'] for m in r['numbers'].get('mismatched', [])))"
# slower: reject
run "$PERFLOOP" verify -b fast.json -a slow.json --suite-exit-code 0 --json
expect_rc 1
check out "d['verdict'] == 'reject'"
# suite red, run for real; its output goes to stderr
run "$PERFLOOP" verify -b slow.json -a fast.json --suite "sh -c 'echo suite-ran; exit 1'" --json
expect_rc 1
check out "d['verdict'] == 'reject' and d['failed_rules'] == ['suite_green']"
grep -q suite-ran err || fail "suite output not on stderr"
# no suite result at all
run "$PERFLOOP" verify -b slow.json -a fast.json --json
expect_rc 1
check out "d['failed_rules'] == ['suite_green']"
# --min-gain too high for the change: no feasible win
run "$PERFLOOP" verify -b slow.json -a fast.json --suite true --min-gain 0.9 --json
expect_rc 1
# (or a reject because the machine's speed changed between them, as above:
# a loaded CI machine's speed probe moved 5% here once)
check out "d['verdict'] == 'no_feasible_win' or (d['verdict'] == 'reject' and 'target_improved' in d['failed_rules'] and any('machine_speed' in m for r in d['rules'] for m in r['numbers'].get('mismatched', [])))"

# the other reasons, made by editing a real summary
python3 - <<'PY'
import json
d = json.load(open('fast.json'))
n = json.loads(json.dumps(d)); n['benchmarks'][0]['dimensions']['timing']['scored'] = False
json.dump(n, open('noisy.json', 'w'))
k = json.loads(json.dumps(d)); k['fingerprint']['kernel'] = '9.9.9'; k['fingerprint']['governor'] = 'powersave'
json.dump(k, open('kernel.json', 'w'))
# two samples (of batch runs each), equal: only enough_samples can fail
f = json.loads(json.dumps(d)); fb = f['benchmarks'][0]
fb['samples'] = [next(s for s in fb['samples'] if s['counted'])] * (2 * fb.get('batch', 1))
json.dump(f, open('few.json', 'w'))
m = json.loads(json.dumps(d)); mem = m['benchmarks'][0]['dimensions']['memory']; mem['value'] *= 1.5; mem['scored'] = True
json.dump(m, open('mem.json', 'w'))
o = json.loads(json.dumps(d)); o['benchmarks'][0]['name'] = 'other'
json.dump(o, open('other.json', 'w'))
PY
refigure few.json
run "$PERFLOOP" verify -b slow.json -a noisy.json --suite true --json
expect_rc 1
check out "d['failed_rules'] == ['timing_not_noisy']"
run "$PERFLOOP" verify -b slow.json -a kernel.json --suite true --json
expect_rc 1
check out "d['failed_rules'] == ['fingerprint_match']"
grep -q 'differ in: kernel, governor' err || fail "mismatch not named: $(cat err)"
run "$PERFLOOP" verify -b slow.json -a few.json --suite true --json
expect_rc 1
check out "d['failed_rules'] == ['enough_samples']"
if j slow.json "d['benchmarks'][0]['dimensions']['memory']['scored']" | grep -q True; then
	run "$PERFLOOP" verify -b slow.json -a mem.json --suite true --json
	expect_rc 1
	check out "d['failed_rules'] == ['no_tier_regression']"
	check out "d['rules'][5]['numbers']['regressed'][0]['dimension'] == 'memory'"
fi

# the ledger: one whole JSON line per verdict
mkdir -p docs/perf
run "$PERFLOOP" verify -b slow.json -a fast.json --suite true --ledger docs/perf/baseline_ledger.jsonl
expect_rc 0
run "$PERFLOOP" verify -b fast.json -a slow.json --suite true --ledger docs/perf/baseline_ledger.jsonl
expect_rc 1
[ "$(wc -l <docs/perf/baseline_ledger.jsonl)" -eq 2 ] || fail "ledger lines"
python3 - <<'PY' || fail "ledger content"
import json
lines = [json.loads(l) for l in open('docs/perf/baseline_ledger.jsonl')]
assert [l['verdict'] for l in lines] == ['accept', 'reject'], lines
assert all(k in lines[0] for k in ('time', 'commit', 'target', 'before_p50', 'after_p50', 'gain', 'verdict', 'failed_rules'))
assert lines[1]['failed_rules'] == ['target_improved', 'no_tier_regression'] or 'target_improved' in lines[1]['failed_rules']
PY
# killed in the middle of an append: the ledger is the old one, whole
cp docs/perf/baseline_ledger.jsonl before.jsonl
PERFLOOP_FAULT_LEDGER_STALL=1 "$PERFLOOP" verify -b slow.json -a fast.json --suite true \
	--ledger docs/perf/baseline_ledger.jsonl >/dev/null 2>&1 &
pid=$!
i=0
started() { for t in docs/perf/baseline_ledger.jsonl.tmp.*; do [ -s "$t" ] && return 0; done; return 1; }
while ! started && [ $i -lt 100 ]; do
	sleep 0.1
	i=$((i + 1))
done
started || fail "the append never started"
kill -KILL "$pid"
wait "$pid" 2>/dev/null || true
cmp -s before.jsonl docs/perf/baseline_ledger.jsonl || fail "ledger changed by a killed append"
python3 -c "import json; [json.loads(l) for l in open('docs/perf/baseline_ledger.jsonl')]" || fail "partial line"
# and the next append works and is whole
run "$PERFLOOP" verify -b slow.json -a fast.json --suite true --ledger docs/perf/baseline_ledger.jsonl
expect_rc 0
[ "$(wc -l <docs/perf/baseline_ledger.jsonl)" -eq 3 ] || fail "append after a kill"
rm -f docs/perf/baseline_ledger.jsonl.tmp.*

# the temporary file is no fixed name a planted symlink can redirect
echo "victim" >victim.txt
ln -s "$PWD/victim.txt" docs/perf/baseline_ledger.jsonl.tmp
run "$PERFLOOP" verify -b slow.json -a fast.json --suite true --ledger docs/perf/baseline_ledger.jsonl
expect_rc 0
[ "$(cat victim.txt)" = victim ] || fail "a symlinked ledger.tmp overwrote its target"
[ "$(wc -l <docs/perf/baseline_ledger.jsonl)" -eq 4 ] || fail "append beside a planted tmp"
# a private ledger stays private
chmod 600 docs/perf/baseline_ledger.jsonl
run "$PERFLOOP" verify -b slow.json -a fast.json --suite true --ledger docs/perf/baseline_ledger.jsonl
expect_rc 0
[ "$(stat -c %a docs/perf/baseline_ledger.jsonl)" = 600 ] || fail "a 0600 ledger lost its mode"
# a symlinked ledger is appended through, and stays a symlink
mkdir -p keep && mv docs/perf/baseline_ledger.jsonl keep/ledger.jsonl
ln -s ../../keep/ledger.jsonl docs/perf/baseline_ledger.jsonl
run "$PERFLOOP" verify -b slow.json -a fast.json --suite true --ledger docs/perf/baseline_ledger.jsonl
expect_rc 0
[ -L docs/perf/baseline_ledger.jsonl ] || fail "a symlinked ledger was replaced by a file"
[ "$(wc -l <keep/ledger.jsonl)" -eq 6 ] || fail "append through a symlinked ledger"
rm docs/perf/baseline_ledger.jsonl && mv keep/ledger.jsonl docs/perf/baseline_ledger.jsonl

# a suite that hangs is killed at its time limit and fails, never hangs
# the verdict
run "$PERFLOOP" verify -b slow.json -a fast.json --suite "sleep 30" --suite-timeout 0.5 --json
expect_rc 1
check out "d['verdict'] == 'reject' and d['failed_rules'] == ['suite_green']"
expect_err "timed out after 0.5 s"
run "$PERFLOOP" verify -b slow.json -a fast.json --suite true --suite-timeout 0
expect_rc 2
expect_err "option '--suite-timeout': expected seconds > 0"

# bad input: one line, exit 2, nothing written
run "$PERFLOOP" verify -b slow.json -a other.json --suite true -o never.json --ledger never.jsonl
expect_rc 2
expect_err "different benchmarks"
[ ! -e never.json ] && [ ! -e never.jsonl ] || fail "written on bad input"
head -c 100 fast.json >trunc.json
run "$PERFLOOP" verify -b slow.json -a trunc.json --suite true
expect_rc 2
expect_err "trunc.json:"
sed 's/perfloop.bench\/1/perfloop.bench\/7/' fast.json >v7.json
run "$PERFLOOP" verify -b slow.json -a v7.json --suite true
expect_rc 2
expect_err "v7.json: schema"
python3 -c "
import json; d = json.load(open('fast.json')); d['benchmarks'][0]['samples'][1]['wall_s'] = -0.5
json.dump(d, open('neg.json', 'w'))"
run "$PERFLOOP" verify -b slow.json -a neg.json --suite true
expect_rc 2
expect_err "neg.json: benchmarks\[0\].samples\[1\].wall_s"
# a summary whose figures are not its samples' (the after's timing halved by
# hand; a slow run's samples pasted under the fast run's statistics): verify
# takes the gain from the figures, so it would report a win nothing measured
python3 -c "
import json; d = json.load(open('slow.json')); d['benchmarks'][0]['dimensions']['timing']['value'] /= 2
json.dump(d, open('halved.json', 'w'))
f = json.load(open('fast.json')); f['benchmarks'][0]['samples'] = d['benchmarks'][0]['samples']
f['benchmarks'][0]['batch'] = d['benchmarks'][0]['batch']
json.dump(f, open('pieced.json', 'w'))"
run "$PERFLOOP" verify -b slow.json -a halved.json --suite true
expect_rc 2
expect_err "halved.json: benchmarks\[0\].dimensions.timing.value: .* is not the median of its samples"
run "$PERFLOOP" verify -b slow.json -a pieced.json --suite true
expect_rc 2
expect_err "pieced.json: benchmarks\[0\].stats.wall_s"
run "$PERFLOOP" report halved.json
expect_rc 2
expect_err "halved.json: benchmarks\[0\].dimensions.timing.value"
run "$PERFLOOP" verify -b slow.json -a fast.json --target nosuch --suite true
expect_rc 2
expect_err "dimensions.nosuch: missing"
run "$PERFLOOP" verify -b slow.json -a fast.json --min-gain 5
expect_rc 2
expect_err "option '--min-gain'"
run "$PERFLOOP" verify -b slow.json -a fast.json --suite true --suite-exit-code 0
expect_rc 2
run "$PERFLOOP" verify -b slow.json --suite true
expect_rc 2

# the machine's speed: the same summary with its speed probe 10% slower is
# refused (a 10% slower machine explains any gain under 35%), but a gain of
# 50% stands; summaries without a probe (older perfloop) are not compared
python3 - <<'PY'
import json
for src, dst, f in (("fast.json", "fast-slowmachine.json", 1.10), ("fast.json", "fast-noprobe.json", None)):
    d = json.load(open(src))
    if f is None:
        d["fingerprint"].pop("speed_probe", None)
    else:  # a busy sibling hyperthread: only the independent compares slow down
        d["fingerprint"]["speed_probe"]["ports_fast_s"] *= f
    json.dump(d, open(dst, "w"))
# an older perfloop's one loop ("p25_s"): compared with its like only
for dst, v in (("old-a.json", 0.00065), ("old-b.json", 0.00065 * 1.10)):
    d = json.load(open("fast.json"))
    d["fingerprint"]["speed_probe"] = {"p25_s": v, "cv": 0.01, "n": 20}
    json.dump(d, open(dst, "w"))
PY
run "$PERFLOOP" verify -b fast.json -a fast-slowmachine.json --suite-exit-code 0 --json
expect_rc 1
check out "'machine_speed' in [r for r in d['rules'] if r['name'] == 'fingerprint_match'][0]['numbers']['mismatched']"
run "$PERFLOOP" verify -b fast-noprobe.json -a fast.json --suite-exit-code 0 --json
check out "'machine_speed' not in [r for r in d['rules'] if r['name'] == 'fingerprint_match'][0]['numbers']['mismatched']"
run "$PERFLOOP" verify -b old-a.json -a old-b.json --suite-exit-code 0 --json
expect_rc 1
check out "'machine_speed' in [r for r in d['rules'] if r['name'] == 'fingerprint_match'][0]['numbers']['mismatched']"
run "$PERFLOOP" verify -b old-a.json -a fast.json --suite-exit-code 0 --json
check out "'machine_speed' not in [r for r in d['rules'] if r['name'] == 'fingerprint_match'][0]['numbers']['mismatched']"
python3 - <<'PY'
import json
a = json.load(open("fast.json")); b = json.load(open("slow.json"))
for k in ("chain_fast_s", "ports_fast_s"):
    b["fingerprint"]["speed_probe"][k] = a["fingerprint"]["speed_probe"][k] / 1.10
json.dump(b, open("slow-fastmachine.json", "w"))
PY
run "$PERFLOOP" verify -b slow-fastmachine.json -a fast.json --suite-exit-code 0 --json
check out "'machine_speed' not in [r for r in d['rules'] if r['name'] == 'fingerprint_match'][0]['numbers']['mismatched'] and d['gain'] > 0.35"
echo ok
