#!/bin/sh
# Failing, crashing, hanging and unstartable commands.
. "$(dirname "$0")/lib.sh"
set -e
run "$PERFLOOP" bench --quiet -r 3 -o f.json -- sh -c 'exit 3'
expect_rc 3
expect_err "exited with code 3"
expect_err "ignore-failure"
check f.json "d['benchmarks'][0]['status'] == 'failed' and 'code 3' in d['benchmarks'][0]['failure']"
check f.json "d['benchmarks'][0]['samples'][0]['exit_code'] == 3"
# -i: measured anyway, exit 0
run "$PERFLOOP" bench --quiet -w 0 -r 3 -i -o i.json -- sh -c 'exit 3'
expect_rc 0
check i.json "d['benchmarks'][0]['status'] == 'ok' and len([s for s in d['benchmarks'][0]['samples'] if s['counted']]) == 3 * d['benchmarks'][0]['batch'] and all(s['counted'] or s['contended'] for s in d['benchmarks'][0]['samples'])"
check i.json "all(s['exit_code'] == 3 and (s['counted'] or s['contended']) for s in d['benchmarks'][0]['samples'])"
# a crash names its signal
run "$PERFLOOP" bench --quiet -r 3 -o k.json -- sh -c 'kill -SEGV $$'
expect_rc 3
expect_err "SIGSEGV"
check k.json "d['benchmarks'][0]['samples'][0]['signal'] == 11"
# a failure of one command does not stop the other
run "$PERFLOOP" bench --quiet -w 0 -r 3 -o two.json "sh -c 'exit 1'" "$BUSY 1000"
expect_rc 3
check two.json "d['benchmarks'][0]['status'] == 'failed' and d['benchmarks'][1]['status'] == 'ok'"
check two.json "len([s for s in d['benchmarks'][1]['samples'] if s['counted']]) == 3 * d['benchmarks'][1]['batch']"

# --timeout kills the whole process group, grandchildren included
marker="30.$$"
start=$(date +%s)
run "$PERFLOOP" bench --quiet -w 0 -r 3 --timeout 0.3 -o t.json --shell -- "sleep $marker & sleep $marker; wait"
end=$(date +%s)
expect_rc 3
expect_err "timed out"
[ $((end - start)) -lt 10 ] || fail "timeout took $((end - start)) s"
check t.json "d['benchmarks'][0]['samples'][0]['timed_out'] is True"
sleep 0.2
if pgrep -f "sleep $marker" >/dev/null; then
	fail "processes survived the timeout: $(pgrep -af sleep)"
fi

# cannot start: one line, exit 2, before anything runs
run "$PERFLOOP" bench -r 3 -- /no/such/program
expect_rc 2
expect_err "cannot start '/no/such/program'"
[ "$(wc -l <err)" -eq 1 ] || fail "more than one line: $(cat err)"
run "$PERFLOOP" bench -r 3 -- no-such-program-xyz
expect_rc 2
expect_err "command not found"
printf 'not a program\n' >noexec.txt
chmod -x noexec.txt
run "$PERFLOOP" bench -r 3 -- ./noexec.txt
expect_rc 2
expect_err "cannot start"
echo ok
