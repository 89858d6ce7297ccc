#!/bin/sh
# perfloop select end to end: the candidate, the stop gate, the level-7
# guard, --exclude, --explain, no candidates, bad findings.
. "$(dirname "$0")/lib.sh"
set -e
# finding ID LEVEL SEVERITY METRIC [RATIO] [VALUE] [STATUS]
finding() {
	printf '{"id":"%s","leaf":"test.%s","signal":"s","severity":"%s","status":"%s","path":"src/%s.py","location":{"line":1,"column":1,"function":"f"},"metric":{"name":"%s","value":%s,"unit":null},"evidence":{"text":"t","numbers":{%s}},"confidence":0.8,"level":%s,"suggested_action":"fix it"}' \
		"$1" "$1" "$3" "${7:-statically_confirmed}" "$1" "$4" "${6:-null}" "${5:+\"ratio\":$5}" "$2"
}
doc() {
	printf '{"schema":"perfloop.findings/1","tool":"test","created":"2026-12-02T00:00:00Z","findings":[%s]}\n' "$1"
}
doc "$(finding IO 3 high io_wait 2.0),$(finding MEM 4 medium allocation_rate 1.5)" >a.json
doc "$(finding GPU 7 high gpu_offload 9.0)" >b.json
run "$PERFLOOP" select --findings a.json --findings b.json -o cand.json
expect_rc 0
check out "d['status'] == 'ok' and d['candidate']['id'] == 'IO'"
check cand.json "d['candidate'] == {'id': 'IO', 'path': 'src/IO.py', 'metric_name': 'io_wait', 'severity': 'high', 'ratio': 2.0, 'stop_gate': False, 'level': 3}"
check cand.json "any(p['id'] == 'GPU' and 'level-7 guard' in p['why'] for p in d['passed_over'])"

# stop gate: a high algorithmic finding makes only algorithmic work eligible
doc "$(finding LOOP 1 low loop_count),$(finding ALG 2 high complexity_exponent 3.0 2.1 measured),$(finding IO 3 critical io_wait)" >g.json
run "$PERFLOOP" select -f g.json --explain
expect_rc 0
check out "d['candidate']['id'] == 'ALG' and d['candidate']['stop_gate'] is True"
grep -q 'passed over LOOP: stop gate' err || fail "--explain: $(cat err)"
grep -q 'passed over IO: stop gate' err || fail "--explain: $(cat err)"

# --exclude, then nothing left: no_candidates, exit 1
run "$PERFLOOP" select -f a.json -x IO
expect_rc 0
check out "d['candidate']['id'] == 'MEM'"
run "$PERFLOOP" select -f a.json -x IO -x MEM -o none.json
expect_rc 1
check out "d == {'status': 'no_candidates'}"
check none.json "d == {'status': 'no_candidates'}"
# level 7 alone, with a measured data-loading share above 0.3: held back
doc "$(finding GPU 7 high gpu_offload),$(finding DL 8 low data_loading_share '' 0.45 measured)" >dl.json
run "$PERFLOOP" select -f dl.json --explain
expect_rc 0
check out "d['candidate']['id'] == 'DL'"
grep -q 'data-loading share 0.45' err || fail "no data-loading reason: $(cat err)"
# empty findings list: a valid answer
doc "" >empty.json
run "$PERFLOOP" select -f empty.json
expect_rc 1

# bad input: one line naming file and JSON path, exit 2, nothing written
doc "$(finding IO 3 urgent io_wait)" >bad.json
run "$PERFLOOP" select -f bad.json -o never.json
expect_rc 2
expect_err "bad.json: findings\[0\].severity: expected one of critical|high|medium|low"
[ "$(wc -l <err)" -eq 1 ] || fail "more than one line"
[ ! -e never.json ] || fail "output written on bad input"
head -c 60 a.json >trunc.json
run "$PERFLOOP" select -f trunc.json
expect_rc 2
expect_err "trunc.json:1:"
echo '{"schema":"perfloop.findings/2","tool":"x","findings":[]}' >v2.json
run "$PERFLOOP" select -f v2.json
expect_rc 2
expect_err 'schema: expected "perfloop.findings/1"'
run "$PERFLOOP" select
expect_rc 2
expect_err "no findings"
echo ok
