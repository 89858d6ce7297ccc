#!/bin/sh
# How many runs: --runs, --min-runs, --max-runs, --time-budget, --precision,
# --warmup; interleaved and sequential order.
. "$(dirname "$0")/lib.sh"
set -e
# (--sim off throughout: these count executions and hooks, and simulated
# runs under Valgrind are executions too, with their hooks: t124)
# run counts count samples (each the mean of `batch` runs)
n() { j "$1" "d['benchmarks'][0]['stats']['wall_s']['n']"; }
run "$PERFLOOP" bench --sim off --quiet -w 0 --min-runs 3 --max-runs 4 --time-budget 100 --max-time 10 -o a.json -- "$BUSY" 1000
expect_rc 0
[ "$(n a.json)" -eq 4 ] || fail "max-runs: $(n a.json) runs"
run "$PERFLOOP" bench --sim off --quiet -w 0 --min-runs 6 --time-budget 0.000001 -o b.json -- "$BUSY" 1000
expect_rc 0
[ "$(n b.json)" -eq 6 ] || fail "min-runs: $(n b.json) runs"
# budget / first run: a ~20 ms command with a 0.3 s budget is about 15 runs
run "$PERFLOOP" bench --sim off --quiet -w 0 --min-runs 2 --time-budget 0.3 --batch 1 -o c.json -- sleep 0.02
expect_rc 0
c=$(n c.json)
[ "$c" -ge 5 ] && [ "$c" -le 16 ] || fail "time budget gave $c runs"
# batched, the budget counts batches: 0.3 s of 3-run batches of ~20 ms is
# about 5 samples (the calibration may ask for more runs per sample under a
# sanitizer, so the check is on the pinned batch)
run "$PERFLOOP" bench --sim off --quiet -w 0 --min-runs 2 --time-budget 0.3 --batch 3 -o c3.json -- sleep 0.02
expect_rc 0
c=$(n c3.json)
[ "$c" -ge 2 ] && [ "$c" -le 6 ] || fail "time budget with --batch 3 gave $c samples"
check c3.json "len([s for s in d['benchmarks'][0]['samples'] if s['counted']]) == 3 * d['benchmarks'][0]['stats']['wall_s']['n'] and all(s['counted'] or s['contended'] for s in d['benchmarks'][0]['samples'])"
# precision: a loose target is met long before max-runs (--max-time keeps
# a loaded machine's calibrated batches from taking a minute per command:
# the CI's test timed out so)
run "$PERFLOOP" bench --sim off --quiet -w 0 --min-runs 5 --max-runs 200 --precision 40 --max-time 10 -o p.json -- "$BUSY" 100000
expect_rc 0
p=$(n p.json)
[ "$p" -ge 5 ] && [ "$p" -lt 200 ] || fail "precision gave $p runs"
check p.json "d['settings']['precision_pct'] == 40"
# interleaved commands under --precision stop together (same rounds)
run "$PERFLOOP" bench --sim off --quiet -w 0 --min-runs 5 --max-runs 300 --precision 20 --max-time 10 -o p2.json "$BUSY 100000" "$BUSY 300000"
expect_rc 0
check p2.json "len(set(b['stats']['wall_s']['n'] for b in d['benchmarks'])) == 1"
check p2.json "d['benchmarks'][0]['stats']['wall_s']['n'] < 300"
# batched, a precision never reached ends at --max-time, not --max-runs
# (1000 samples of 4 runs here would take 4 s or more)
run "$PERFLOOP" bench --sim off --quiet -w 0 --batch 4 --precision 0.01 --max-runs 1000 --max-time 1 -o pm.json -- "$BUSY" 1000
expect_rc 0
check pm.json "5 <= d['benchmarks'][0]['stats']['wall_s']['n'] < 1000"
# an explicit --time-budget bounds the calibrated batch: the 6 samples of
# a 1 us budget are single runs
check b.json "d['benchmarks'][0]['batch'] == 1"
# warm-up runs are not samples
echo 0 >count
run "$PERFLOOP" bench --sim off --quiet --shell -w 3 -r 2 --batch 1 --contention keep -- "echo x >> $T/count"
expect_rc 0
[ "$(grep -c x count)" -eq 5 ] || fail "warmup+runs: $(grep -c x count) executions"
# calibrated: warm-ups, then samples of `batch` runs each (the calibration's
# runs are the first samples when it calls for no batch)
echo 0 >count
run "$PERFLOOP" bench --sim off --quiet --shell -w 3 -r 2 --batch auto --contention keep -o cal.json -- "echo x >> $T/count"
expect_rc 0
k=$(j cal.json "d['benchmarks'][0]['batch']")
c=$(grep -c x count)
[ "$k" -eq 1 ] && [ "$c" -eq 5 ] || [ "$k" -gt 1 ] && [ "$c" -ge $((3 + 2 * k)) ] ||
	fail "calibrated: $c executions for batch $k"

# order: interleaved rotates, sequential does not
: >log
run "$PERFLOOP" bench --sim off --quiet --shell -w 0 -r 3 --batch 1 --contention keep "echo A >> $T/log" "echo B >> $T/log"
expect_rc 0
[ "$(tr -d '\n' <log)" = "ABBAAB" ] || fail "interleaved order: $(tr -d '\n' <log)"
# batches interleave whole: a batch of A, one of B, rotated each round
: >log
run "$PERFLOOP" bench --sim off --quiet --shell -w 0 -r 3 --batch 2 --contention keep "echo A >> $T/log" "echo B >> $T/log"
expect_rc 0
[ "$(tr -d '\n' <log)" = "AABBBBAAAABB" ] || fail "interleaved batches: $(tr -d '\n' <log)"
: >log
run "$PERFLOOP" bench --sim off --quiet --shell --order sequential -w 0 -r 3 --batch 1 --contention keep "echo A >> $T/log" "echo B >> $T/log"
expect_rc 0
[ "$(tr -d '\n' <log)" = "AAABBB" ] || fail "sequential order: $(tr -d '\n' <log)"

for bad in "--batch 0" "--batch x" "--max-time 0" "--runs -3" "--runs 0" "--min-runs x" "--warmup -1" "--time-budget 0" "--precision 0" "--precision 100" "--timeout -1" "--order random"; do
	# shellcheck disable=SC2086
	run "$PERFLOOP" bench --sim off $bad -- "$BUSY" 1
	expect_rc 2
	opt=${bad%% *}
	expect_err "option '$opt'"
	[ "$(wc -l <err)" -eq 1 ] || fail "$bad: more than one line: $(cat err)"
done
run "$PERFLOOP" bench --sim off --min-runs 5 --max-runs 3 -- "$BUSY" 1
expect_rc 2
expect_err "option '--min-runs'"
run "$PERFLOOP" bench --sim off --runs
expect_rc 2
expect_err "needs a value"
run "$PERFLOOP" bench --sim off --frob -- "$BUSY" 1
expect_rc 2
expect_err "unknown option '--frob'"
echo ok
