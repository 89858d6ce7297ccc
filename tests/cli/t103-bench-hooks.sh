#!/bin/sh
# --setup/--prepare/--conclude/--cleanup: how often they run, parameter
# substitution in them, and a failing hook.
. "$(dirname "$0")/lib.sh"
set -e
# (--sim off throughout: these count executions and hooks, and simulated
# runs under Valgrind are executions too, with their hooks: t124)
run "$PERFLOOP" bench --sim off --quiet -w 1 -r 3 --batch 1 --contention keep -P v=1,2 \
	--setup "sh -c 'echo setup{v} >> $T/h'" --prepare "sh -c 'echo prepare >> $T/h'" \
	--conclude "sh -c 'echo conclude >> $T/h'" --cleanup "sh -c 'echo cleanup{v} >> $T/h'" \
	-- "$BUSY" 1000
expect_rc 0
[ "$(grep -c '^setup' h)" -eq 2 ] || fail "setup ran $(grep -c '^setup' h) times"
grep -q '^setup1$' h && grep -q '^setup2$' h || fail "setup not substituted: $(cat h)"
[ "$(grep -c '^cleanup' h)" -eq 2 ] || fail "cleanup ran $(grep -c '^cleanup' h) times"
# 2 benchmarks x (1 warm-up + 3 runs)
[ "$(grep -c '^prepare$' h)" -eq 8 ] || fail "prepare ran $(grep -c '^prepare$' h) times"
[ "$(grep -c '^conclude$' h)" -eq 8 ] || fail "conclude ran $(grep -c '^conclude$' h) times"
# runs on a contended CPU, left out and measured again, are runs like any
# other: their hooks ran, and they are on record
: >h2
run "$PERFLOOP" bench --sim off --quiet -w 1 -r 3 --batch 1 -o h2.json \
	--prepare "sh -c 'echo prepare >> $T/h2'" -- "$BUSY" 1000
expect_rc 0
n=$(j h2.json "len(d['benchmarks'][0]['samples'])")
[ "$(grep -c '^prepare$' h2)" -eq $((1 + n)) ] || fail "prepare ran $(grep -c '^prepare$' h2) times for 1 warm-up and $n runs"
check h2.json "len([s for s in d['benchmarks'][0]['samples'] if s['counted']]) == 3"

run "$PERFLOOP" bench --sim off --quiet -r 3 --prepare "sh -c 'exit 4'" -- "$BUSY" 1000
expect_rc 3
expect_err "prepare"
expect_err "exited with code 4"
run "$PERFLOOP" bench --sim off --quiet -r 3 --setup "no-such-program-xyz" -- "$BUSY" 1000
expect_rc 2
expect_err "no-such-program-xyz"
echo ok
