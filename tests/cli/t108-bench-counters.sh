#!/bin/sh
# Counters: software ones counted in the command only; hardware ones either
# counted or "unsupported" with a hint, as this machine allows; none; bad
# names.
. "$(dirname "$0")/lib.sh"
set -e
run "$PERFLOOP" bench --quiet -w 0 -r 3 --counters none -o none.json -- "$BUSY" 1000
expect_rc 0
check none.json "d['benchmarks'][0]['counters'] == {} and d['settings']['counters'] == []"

run "$PERFLOOP" bench --counters task-clock,bogus -- "$BUSY" 1
expect_rc 2
expect_err "unknown counter 'bogus'"

run "$PERFLOOP" bench --quiet -w 0 -r 3 --counters task-clock,page-faults -o sw.json -- "$BUSY" 30000000
expect_rc 0
if j sw.json "d['unsupported_counters']" | grep -q task-clock; then
	skip "perf_event_open refused here ($(cat /proc/sys/kernel/perf_event_paranoid 2>/dev/null))"
fi
# task-clock counts the program (~its CPU time), not perfloop
check sw.json "d['benchmarks'][0]['counters']['task-clock']['unit'] == 'ns'"
check sw.json "abs(d['benchmarks'][0]['counters']['task-clock']['value'] / 1e9 - d['benchmarks'][0]['stats']['cpu_s']['p50']) < 0.5 * d['benchmarks'][0]['stats']['cpu_s']['p50'] + 0.005"
check sw.json "d['benchmarks'][0]['counters']['page-faults']['value'] > 0"
check sw.json "'task_clock' in d['benchmarks'][0]['dimensions']"
# inherited: a child's work counts (sh runs busy as a child)
run "$PERFLOOP" bench --quiet -w 0 -r 3 --counters task-clock -o inh.json -- sh -c "$BUSY 30000000; true"
expect_rc 0
check inh.json "d['benchmarks'][0]['counters']['task-clock']['value'] > 0.5 * d['benchmarks'][0]['stats']['cpu_s']['p50'] * 1e9"

# hardware: what the machine says
run "$PERFLOOP" bench -w 0 -r 3 --counters instructions,cycles -o hw.json -- "$BUSY" 1000
expect_rc 0
if perf stat -e instructions -x, true 2>&1 | grep -q 'not supported\|not counted\|<not'; then
	hw=no
elif command -v perf >/dev/null 2>&1; then
	hw=yes
else
	hw=unknown
fi
if j hw.json "d['unsupported_counters']" | grep -q instructions; then
	[ "$hw" != yes ] || fail "perf counts instructions here but perfloop says unsupported"
	check hw.json "d['benchmarks'][0]['counters']['instructions'] == 'unsupported'"
	check hw.json "len(d['unsupported_counters']['instructions']) > 10"
	grep -q 'unsupported here: instructions' out || fail "table does not say which counters are unsupported"
	check hw.json "'ipc' not in d['benchmarks'][0]['dimensions']"
else
	[ "$hw" != no ] || fail "perf cannot count instructions here but perfloop reported a value"
	check hw.json "d['benchmarks'][0]['counters']['instructions']['value'] > 0"
	check hw.json "'ipc' in d['benchmarks'][0]['dimensions']"
fi
# the unsupported-counters notice is said once per machine (and again for
# --counters LIST); the summary lists them every time
rm -rf "$XDG_CACHE_HOME"
run "$PERFLOOP" bench -w 0 -r 2 --batch 1 -o n1.json -- true
first=$(grep -c "Counters unsupported here" "$T/out" || true)
if [ "$(j n1.json "len(d['unsupported_counters'])")" -gt 0 ]; then
	[ "$first" -eq 1 ] || fail "the first run does not say which counters are unsupported: $(cat "$T/out")"
	run "$PERFLOOP" bench -w 0 -r 2 --batch 1 -o n2.json -- true
	if grep -q "Counters unsupported here" "$T/out"; then fail "the notice was said twice"; fi
	check n2.json "len(d['unsupported_counters']) > 0"
	c=$(j n1.json "list(d['unsupported_counters'])[0]")
	run "$PERFLOOP" bench -w 0 -r 2 --batch 1 --counters "$c" -- true
	grep -q "Counters unsupported here" "$T/out" || fail "--counters $c: the notice is not said"
fi
echo ok
