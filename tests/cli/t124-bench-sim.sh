#!/bin/sh
# The deterministic measure (--sim): instructions counted under Valgrind,
# identical run after run whatever the machine does, deciding where the
# wall time cannot. The "noisy" commands below wait a random 0-80 ms after
# their work, so their wall time is over the noise gate on any machine and
# the simulated counts must decide; the work itself is exact ($BUSY N).
. "$(dirname "$0")/lib.sh"
set -e
command -v valgrind >/dev/null 2>&1 || skip "valgrind is not installed (Debian: apt-get install valgrind)"
cat >noisy.sh <<'SH'
#!/bin/sh
"$1" "$2"
sleep 0.0$(( $(od -An -N1 -tu1 /dev/urandom) % 9 ))
SH
chmod +x noisy.sh

# deterministic: a C program's count over 5 runs, and its source said
run "$PERFLOOP" bench --no-history -w 0 -r 3 --batch 1 --sim instructions --sim-runs 5 -n c -o c.json -- "$BUSY" 2000000
expect_rc 0
check c.json "d['benchmarks'][0]['dimensions']['sim_instructions']['cv'] <= 0.001 and d['benchmarks'][0]['dimensions']['sim_instructions']['scored']"
check c.json "'not a hardware counter' in d['benchmarks'][0]['dimensions']['sim_instructions']['source']"
check c.json "len(d['benchmarks'][0]['sim']['runs']) == 5 and d['benchmarks'][0]['sim']['tool'].startswith('valgrind')"
check c.json "d['benchmarks'][0]['sim']['instructions']['p50'] > 2000000"
grep -q 'Simulated (Valgrind): .* instructions, CV 0.0' out || fail "no simulated line: $(cat out)"
valid bench-1.schema.json c.json
# ... and a Python program's (string hashing pinned: PYTHONHASHSEED=0)
cat >d.py <<'PY'
d = {}
for i in range(20000):
    d["k%d" % i] = i
print(sum(len(k) for k in d))
PY
run "$PERFLOOP" bench --no-history -w 0 -r 3 --batch 1 --sim instructions --sim-runs 4 -n py -o py.json -- python3 d.py
expect_rc 0
check py.json "d['benchmarks'][0]['dimensions']['sim_instructions']['cv'] <= 0.001"
check py.json "'PYTHONHASHSEED=0' in d['benchmarks'][0]['sim']['pinned']"
# --sim cycles: the cache simulated, estimated cycles above the instructions
run "$PERFLOOP" bench --no-history -w 0 -r 3 --batch 1 --sim cycles -n c -o cy.json -- "$BUSY" 2000000
expect_rc 0
check cy.json "d['benchmarks'][0]['dimensions']['sim_cycles']['value'] >= d['benchmarks'][0]['dimensions']['sim_instructions']['value'] and d['benchmarks'][0]['sim']['cache'].startswith('I1 32 KiB')"
valid bench-1.schema.json cy.json
# --sim off: none; auto on a quiet wall time: none either (nothing to decide)
run "$PERFLOOP" bench --no-history -w 0 -r 3 --batch 1 --sim off -n c -o off.json -- "$BUSY" 2000000
expect_rc 0
check off.json "'sim_instructions' not in d['benchmarks'][0]['dimensions'] and d['benchmarks'][0]['sim'] is None"

# auto: the wall time over the gate, the counts decide the comparison: a
# 2x slower command is slower, an identical one is not
run "$PERFLOOP" bench --no-history -w 0 -r 5 --batch 1 -n a -n b -n a2 -o ab.json "./noisy.sh $BUSY 2000000" "./noisy.sh $BUSY 4000000" "./noisy.sh $BUSY 2000000"
expect_rc 0
check ab.json "all(b['dimensions']['timing']['scored'] is False for b in d['benchmarks'])"
check ab.json "all(b['decides']['dimension'] == 'sim_instructions' for b in d['benchmarks'])"
check ab.json "[(c['name'], c['dimension'], c['verdict']) for c in d['comparisons']] == [('b', 'sim_instructions', 'slower'), ('a2', 'sim_instructions', 'no change')]"
check ab.json "all(c['p_value'] is None for c in d['comparisons'])"
grep -q 'decided on sim_instructions' out || fail "the table does not say what decided: $(cat out)"
valid bench-1.schema.json ab.json

# --baseline and --fail-on-regression under noise: 2x the work is a
# regression (exit 1); the same command is not (exit 0)
run "$PERFLOOP" bench --no-history -w 0 -r 5 --batch 1 -n w -o base.json -- ./noisy.sh "$BUSY" 2000000
expect_rc 0
run "$PERFLOOP" bench --no-history -w 0 -r 5 --batch 1 -n w --baseline base.json --fail-on-regression -o slow.json -- ./noisy.sh "$BUSY" 4000000
expect_rc 1
expect_err "perfloop: regression: 'w' is .*% slower than in base.json on sim_instructions"
check slow.json "d['baseline']['comparisons'][0]['dimension'] == 'sim_instructions' and d['baseline']['comparisons'][0]['doubt'] is None"
run "$PERFLOOP" bench --no-history -w 0 -r 5 --batch 1 -n w --baseline base.json --fail-on-regression -o same.json -- ./noisy.sh "$BUSY" 2000000
expect_rc 0
check same.json "d['baseline']['comparisons'][0]['verdict'] == 'no change'"

# verify decides on the counts (auto), says so, and its rules apply to them
run "$PERFLOOP" bench --no-history -w 0 -r 5 --batch 1 -n w -o fast.json -- ./noisy.sh "$BUSY" 1500000
expect_rc 0
run "$PERFLOOP" verify --before base.json --after fast.json --suite-exit-code 0 -o v.json
expect_rc 0
check v.json "d['verdict'] == 'accept' and d['target'] == 'sim_instructions' and 'confirm on a quiet machine' in d['target_why']"
check v.json "[r['name'] for r in d['rules']] == ['target_improved','target_not_noisy','enough_samples','fingerprint_match','same_spec','suite_green','no_tier_regression']"
check v.json "0.2 < d['gain'] < 0.3"
grep -q 'decided on sim_instructions' out || fail "verify does not say what decided: $(cat out)"
valid verdict-1.schema.json v.json
run "$PERFLOOP" verify --before base.json --after same.json --suite-exit-code 0 -o aa.json
expect_rc 1
check aa.json "d['verdict'] == 'no_feasible_win' and abs(d['gain']) < 0.001"
run "$PERFLOOP" verify --before base.json --after slow.json --suite-exit-code 0 -o r.json
expect_rc 1
check r.json "d['verdict'] == 'reject' and d['gain'] < -0.5"
# asked for, the wall time still refuses to decide
run "$PERFLOOP" verify --before base.json --after fast.json --suite-exit-code 0 --target timing -o t.json
expect_rc 1
check t.json "d['target'] == 'timing' and 'timing_not_noisy' in d['failed_rules']"
# a hand-edited count is refused, naming the field
python3 - <<'PY'
import json
d = json.load(open("fast.json"))
d["benchmarks"][0]["dimensions"]["sim_instructions"]["value"] /= 2
json.dump(d, open("edited.json", "w"))
PY
run "$PERFLOOP" verify --before base.json --after edited.json --suite-exit-code 0
expect_rc 2
expect_err "edited.json: benchmarks\[0\].dimensions.sim_instructions.value: .* is not the median of sim.runs"

run "$PERFLOOP" bench --no-history -w 0 -r 3 --batch 1 --sim nope -- true
expect_rc 2
expect_err "option '--sim': expected auto, off, instructions or cycles"
