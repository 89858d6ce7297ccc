#!/bin/sh
# scan --profile: static findings weighed by a profile perfloop took. A
# quadratic pair loop that takes most of the run (16 million pairs, so
# that Python's start-up, a quarter of a run of 9 million, stays far below
# half) is measured and rated by its share of the samples; a finding in a function the run never calls is
# kept and marked "not seen in the profile"; the summary says how much of
# the profile the findings explain; an advisory rule's finding is kept
# where the profile measured it hot; a file that is not folded stacks is
# one clear error.
. "$(dirname "$0")/lib.sh"
set -e
cat >work.py <<'PY'
def pairs(items):
    n = 0
    for a in items:
        for b in items:
            if a == b:
                n += 1
    return n


def unused(items):
    for x in list(items):
        print(x)


print(pairs(list(range(4000))))
PY
run "$PERFLOOP" profile --lines -o prof -- python3 work.py
expect_rc 0
run "$PERFLOOP" scan --format json -o plain.json work.py
expect_rc 0
check plain.json "sorted(f['leaf'] for f in d['findings']) == ['PY001', 'PY028']"
run "$PERFLOOP" scan --profile prof.folded --format json -o weighed.json work.py
expect_rc 0
f() { echo "[x for x in d['findings'] if x['leaf'] == '$1'][0]"; }
check weighed.json "$(f PY001)['status'] == 'measured' and $(f PY001)['metric']['name'] == 'profile_share'"
# the pair loop (the inner one, lines 4-6) runs in most samples: critical by its share
check weighed.json "$(f PY001)['metric']['value'] >= 0.5 and $(f PY001)['severity'] == 'critical'"
check weighed.json "$(f PY001)['evidence']['numbers']['line_share'] >= 0.5"
check weighed.json "$(f PY028)['status'] != 'measured' and 'not seen in the profile' in $(f PY028)['evidence']['severity_note']"
expect_err "weighed by prof.folded ([0-9]* samples, by line): 1 finding measured, 1 not seen in the profile; the findings' lines run in [0-9.]*% of its samples"
valid findings-1.schema.json weighed.json
# the text report says why each severity is what it is
run "$PERFLOOP" scan --profile prof.folded work.py
expect_rc 0
grep -q "note: from the profile: [0-9.]*% of its samples run its lines (4-6)" out || fail "no measured note: $(cat out)"
grep -q "note: not seen in the profile" out || fail "no unseen note: $(cat out)"
# --min-severity applies to the measured severity
run "$PERFLOOP" scan --profile prof.folded --min-severity critical --format json -o crit.json work.py
check crit.json "[x['leaf'] for x in d['findings']] == ['PY001']"
# in one step: profile --scan scans the sampled source and weighs it
run "$PERFLOOP" profile --lines --scan -o one -- python3 work.py
expect_rc 0
grep -q "scan of 1 source file: 2 findings, 1 on code this profile ran" out || fail "profile --scan: $(cat out)"
grep -q "! PY001 work.py:4: Nested loops over the same collection" out || fail "profile --scan: no hot finding line: $(cat out)"
check one.findings.json "[x for x in d['findings'] if x['leaf'] == 'PY001'][0]['status'] == 'measured'"
check one.findings.json "[x for x in d['findings'] if x['leaf'] == 'PY028'][0]['status'] == 'statically_confirmed'"
# an advisory rule (PY002, off by default) runs under --profile and is
# reported where the profile measured it hot: the membership test the run
# spends its time in, not the same pattern in a function it calls once on
# ten items, which is left out and counted; --advisory shows both
cat >member.py <<'PY'
def common(xs, ys):
    keep = list(ys)
    n = 0
    for x in xs:
        if x in keep:
            n += 1
    return n


def rare(xs, ys):
    keep = list(ys)
    return [x for x in xs if x in keep]


print(common(range(20000), range(2000)))
print(rare(range(10), range(10)))
PY
run "$PERFLOOP" scan --format json -o plain2.json member.py
expect_rc 0
check plain2.json "d['findings'] == []"
run "$PERFLOOP" profile --lines -o prof2 -- python3 member.py
expect_rc 0
run "$PERFLOOP" scan --profile prof2.folded --format json -o hot.json member.py
expect_rc 0
check hot.json "[(x['leaf'], x['location']['line'], x['status']) for x in d['findings']] == [('PY002', 5, 'measured')]"
check hot.json "d['findings'][0]['metric']['value'] >= 0.5"
expect_err "1 finding of advisory rules left out: under 2% of the samples (--advisory shows them)"
# (by line, or by function where every sample of common() fell on one line)
expect_err "weighed by prof2.folded ([0-9]* samples[^)]*): 1 finding measured, 0 not seen"
run "$PERFLOOP" scan --profile prof2.folded --advisory --format json -o both.json member.py
expect_rc 0
check both.json "sorted(x['location']['line'] for x in d['findings'] if x['leaf'] == 'PY002') == [5, 12]"
run "$PERFLOOP" profile --lines --scan -o one2 -- python3 member.py
expect_rc 0
grep -q "! PY002 member.py:5: Membership test against a list" out || fail "profile --scan: no hot advisory finding: $(cat out)"
check one2.findings.json "[x['location']['line'] for x in d['findings'] if x['leaf'] == 'PY002'] == [5]"
# nothing to weigh: said so, not "by function" of a profile taken by line
printf 'def f():\n    return 1\n' >clean.py
run "$PERFLOOP" scan --profile prof.folded clean.py
expect_rc 0
expect_err "weighed by prof.folded ([0-9]* samples): no finding to weigh"
# not a profile
printf 'a;b 3\nnot a profile\n' >bad.folded
run "$PERFLOOP" scan --profile bad.folded work.py
expect_rc 2
expect_err "bad.folded:2: not folded stacks"
run "$PERFLOOP" scan --profile nope.folded work.py
expect_rc 2
expect_err "option '--profile': cannot read 'nope.folded'"
echo ok
