#!/bin/sh
# --pin and --wait-quiet: by default every run of a comparison is on one CPU
# (the highest allowed, the same each time), the CPU is recorded in the
# fingerprint, and verify refuses to compare runs pinned to different CPUs;
# a busy CPU is waited for, then measured anyway with a note.
. "$(dirname "$0")/lib.sh"
set -e
# (--sim off: the subject is where runs go; simulating python3 under
# Valgrind made this test 186 s)
command -v taskset >/dev/null 2>&1 || skip "no taskset to pin the busy loop"
allowed=$(python3 -c 'import os; print(" ".join(map(str, sorted(os.sched_getaffinity(0)))))')
[ "$(echo "$allowed" | wc -w)" -ge 2 ] || skip "one CPU allowed: nothing to choose"
last=${allowed##* }
first=${allowed%% *}
# the child sees one CPU: it reports its own affinity
aff='python3 -c "import os; print(sorted(os.sched_getaffinity(0)))"'
run "$PERFLOOP" bench --sim off -w 0 -r 2 --batch 1 --contention keep --shell --output o.txt -o a.json -- "$aff"
expect_rc 0
[ "$(sort -u o.txt)" = "[$last]" ] || fail "--pin auto: the command ran on $(sort -u o.txt), not [$last]"
check a.json "d['fingerprint']['pinned_cpu'] == $last and d['settings']['pin'] == 'auto'"
check a.json "d['fingerprint']['pinned_by'] == '--pin auto'"
grep -q "Runs pinned to CPU $last" out || fail "the pin is not shown: $(cat out)"
# the summary, pin, quiet check and speed probe included, follows its schema
valid bench-1.schema.json a.json
# however few the runs, the probe is read often enough (5 times) to tell the machine's speed
check a.json "d['fingerprint']['speed_probe']['n'] >= 5 and d['fingerprint']['speed_probe']['chain_fast_s'] > 0"
run "$PERFLOOP" bench --sim off -w 0 -r 2 --batch 1 --pin "$first" --shell --output o.txt -o b.json -- "$aff"
expect_rc 0
[ "$(sort -u o.txt)" = "[$first]" ] || fail "--pin $first: ran on $(sort -u o.txt)"
check b.json "d['fingerprint']['pinned_cpu'] == $first and d['settings']['pin'] == $first"
run "$PERFLOOP" bench --sim off -w 0 -r 2 --batch 1 --pin none --shell --output o.txt -o c.json -- "$aff"
expect_rc 0
[ "$(cat o.txt | head -1)" = "[$(echo "$allowed" | sed 's/ /, /g')]" ] || fail "--pin none: ran on $(head -1 o.txt)"
check c.json "d['fingerprint']['pinned_cpu'] is None and d['settings']['pin'] == 'none'"
# pinned from outside: recorded as such
run taskset -c "$first" "$PERFLOOP" bench --sim off -w 0 -r 2 --batch 1 -o d.json -- true
expect_rc 0
check d.json "d['fingerprint']['pinned_cpu'] == $first and d['fingerprint']['pinned_by'] == 'the caller'"
# verify: the same command pinned to two CPUs is not a comparison
run "$PERFLOOP" bench --sim off -w 0 -r 5 --batch 1 --pin "$first" -o p1.json -- true
run "$PERFLOOP" bench --sim off -w 0 -r 5 --batch 1 --pin "$last" -o p2.json -- true
check p2.json "d['fingerprint']['speed_probe']['chain_fast_s'] > 0 and d['fingerprint']['speed_probe']['ports_fast_s'] > 0 and d['fingerprint']['speed_probe']['n'] >= 5"
# (--target timing: a simulated count is the same whichever CPU ran it)
run "$PERFLOOP" verify --before p1.json --after p2.json --suite-exit-code 0 --ledger l.jsonl --target timing
grep -q "FAIL fingerprint_match.*pinned_cpu ($first, then $last)" out ||
	fail "verify compared runs on two CPUs: $(cat out)"
# bad values: one line, exit 2
for bad in "--pin x" "--pin -1" "--pin 99999" "--wait-quiet -1" "--wait-quiet x" "--contention maybe" "--gpu-hz x"; do
	# shellcheck disable=SC2086
	run "$PERFLOOP" bench -r 2 $bad -- true
	expect_rc 2
	[ "$(wc -l <err)" -eq 1 ] || fail "$bad: $(cat err)"
done
run "$PERFLOOP" bench -r 2 --pin 1000 -- true
expect_rc 2
expect_err "CPU 1000 is not one this process may run on"
# a busy CPU: waited for, then measured anyway, and said so
taskset -c "$last" sh -c 'while :; do :; done' &
spin=$!
sleep 0.3
run "$PERFLOOP" bench --sim off -w 0 -r 2 --batch 1 --wait-quiet 0.5 -o q.json -- true
kill $spin
expect_rc 0
check q.json "d['fingerprint']['quiet']['checked'] and not d['fingerprint']['quiet']['quiet']"
check q.json "d['fingerprint']['quiet']['busy'] >= 0.5 and d['fingerprint']['quiet']['waited_s'] >= 0.4"
grep -q "CPU $last was still .* busy with other work after 0.5 s: measured anyway" out ||
	fail "no note for a busy CPU: $(cat out)"
# --wait-quiet 0: not checked
run "$PERFLOOP" bench --sim off -w 0 -r 2 --batch 1 --wait-quiet 0 -o z.json -- true
check z.json "d['fingerprint']['quiet'] == {'checked': False} and d['settings']['wait_quiet_s'] == 0"
# single executions share a probe segment: a probe every ~10 ms of runs,
# not one around each of 100 runs of a 1 ms command
run "$PERFLOOP" bench --sim off -w 0 -r 100 --batch 1 --contention keep -o seg.json -- true
expect_rc 0
# (a segment per 10 ms of the runs' own time, one more at the end; each
# segment read at most twice: before, unless the last reading is under 2 ms
# old and was not contended, and after; plus the readings that tell the
# machine's speed. Bounded by the runs' time, not by a count that assumed
# 1 ms runs; and two readings a segment, not one: a loaded CI machine
# read 'true's fresh 'before' every segment)
check seg.json "d['benchmarks'][0]['stats']['wall_s']['n'] == 100"
check seg.json "2 <= d['fingerprint']['speed_probe']['n'] <= 2 * (sum(s['wall_s'] for s in d['benchmarks'][0]['samples']) / 0.010 + 2) + 5"
exit 0
