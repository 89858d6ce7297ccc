#!/bin/sh
# The loop end to end in a real repository: baseline -> a genuine win
# (accepted, committed, ledger line) -> a slower change (rejected, files
# restored, the user's unrelated uncommitted edit still there) -> a third
# turn and the stop. The work sleeps and computes in proportion (work_sh):
# where the wall time is too noisy to decide, the simulated instructions
# do, so the verdicts do not wait for a quiet machine.
. "$(dirname "$0")/lib.sh"
set -e
command -v git >/dev/null 2>&1 || skip "git is not installed"
new_repo repo
work_sh 0.12
chmod +x work.sh
echo "notes" >notes.txt
git add -A
git commit -qm base

run "$PERFLOOP" try
expect_rc 2
expect_err "no loop"
run "$PERFLOOP" baseline --bench './work.sh' --suite false --runs 3
expect_rc 3
expect_err "suite must pass"
run "$PERFLOOP" baseline --runs 2 --bench './work.sh'
expect_rc 2
expect_err "option '--runs'"
for bad in "--batch 0" "--batch lots" "--timeout 0" "--timeout x"; do
	# shellcheck disable=SC2086
	run "$PERFLOOP" baseline $bad --bench './work.sh'
	expect_rc 2
	expect_err "option '${bad%% *}'"
done
run "$PERFLOOP" baseline --ledger /tmp/outside.jsonl --bench './work.sh'
expect_rc 2
expect_err "outside the repository"
[ ! -e .perfloop/loop.json ] || fail "a refused baseline wrote loop.json"

echo "user's unrelated work in progress" >>notes.txt
run "$PERFLOOP" baseline --bench './work.sh' -n work --suite true --runs 5
if [ "$rc" -eq 1 ] && grep -q 'too noisy' "$T/err"; then skip "this machine is too noisy even for sleep"; fi
expect_rc 0
[ -f .perfloop/baseline.json ] && [ -f .perfloop/checkpoint.json ] || fail "baseline state missing"
# baseline and status print the baseline's median, as bench does
grep -q '^  work: median [0-9.]* ms (95% CI [0-9.]*-[0-9.]* ms), CV [0-9.]*%, [0-9]* samples$' "$T/out" ||
	fail "baseline: no median: $(cat "$T/out")"
run "$PERFLOOP" status
grep -q '^  work: median [0-9.]* ms' "$T/out" || fail "status: no median: $(cat "$T/out")"
# a try with nothing changed is refused and uses up no iteration
run "$PERFLOOP" try -m "nothing"
expect_rc 2
expect_err "nothing changed since the last checkpoint"
check .perfloop/loop.json "d['iteration'] == 0"

# turn 1: a genuine win
work_sh 0.06
run "$PERFLOOP" try -m "work: sleep half as long"
# the noise gate refusing a verdict is the product working, not a pass:
# skip, as for the baseline above, and say what was measured
# (the verdict names that rule: "FAIL timing_not_noisy"; the old check
# looked for a phrase try never prints, so a noisy turn failed the test)
if [ "$rc" -eq 1 ] && grep -q 'FAIL timing_not_noisy' "$T/out"; then
	skip "this machine is too noisy right now: $(grep 'timing_not_noisy' "$T/out" | head -1)"
fi
if [ "$rc" -eq 1 ] && grep -q 'FAIL fingerprint_match.*machine_speed' "$T/out"; then
	skip "the machine's speed changed between baseline and turn: $(grep 'fingerprint_match' "$T/out" | head -1)"
fi
# a sleep script's CPU time is the shell's start (about 1 ms): the ASan CI
# run under ctest -j2 once moved it 10% between baseline and turn, a tier,
# and verify rejected the halved sleep for it. Only that rule failing, on
# cpu alone, is the machine, not the loop under test
if [ "$rc" -eq 1 ] && [ "$(grep -c '^  FAIL ' "$T/out")" -eq 1 ] &&
	grep -q '^  FAIL no_tier_regression  regressed: cpu tier 3 -> 4$' "$T/out"; then
	skip "the shell's CPU time moved a tier between baseline and turn (a loaded machine)"
fi
expect_rc 0
grep -q 'verdict: accept' "$T/out" || fail "turn 1: $(cat "$T/out")"
[ "$(git log -1 --format=%s)" = "work: sleep half as long" ] || fail "commit subject"
git log -1 --format=%b | grep -Eq "perfloop: (timing|sim_instructions) of 'work' improved" || fail "gain not in the message"
[ "$(git show --name-only --format= HEAD | sort | tr '\n' ' ')" = "docs/perf/baseline_ledger.jsonl work.sh " ] ||
	fail "the commit holds other files: $(git show --name-only --format= HEAD)"
[ "$(git status --porcelain)" = " M notes.txt" ] || fail "status after accept: $(git status --porcelain)"
grep -q "unrelated work" notes.txt || fail "the user's edit is gone"
check docs/perf/baseline_ledger.jsonl "d['verdict'] == 'accept' and d['gain'] > 0.3"

# turn 2: slower, rejected, restored
work_sh 0.09
echo "scratch" >scratch.txt
run "$PERFLOOP" try -m "slower"
expect_rc 1
grep -q 'verdict: reject' "$T/out" || fail "turn 2: $(cat "$T/out")"
grep -q 'sleep 0.06' work.sh || fail "work.sh not restored: $(cat work.sh)"
[ -f scratch.txt ] || fail "a created file was deleted"
grep -q '^  scratch.txt$' "$T/out" || fail "created file not listed"
grep -q "unrelated work" notes.txt || fail "the user's edit is gone after a reject"
[ "$(git log -1 --format=%s)" = "work: sleep half as long" ] || fail "a rejected change was committed"
[ "$(wc -l <docs/perf/baseline_ledger.jsonl)" -eq 2 ] || fail "ledger lines after reject"
ls .perfloop/rejected-2.json >/dev/null || fail "rejected evidence not kept"
check .perfloop/rejected-2.verdict.json "d['verdict'] == 'reject' and 'target_improved' in d['failed_rules']"

# told "remove them if unwanted", the user removes the file: a later
# rejected turn must not bring it back
rm scratch.txt
# turn 3: a change that does nothing; then the loop stops
echo "# comment" >>work.sh
run "$PERFLOOP" try -m "noop"
expect_rc 1
[ ! -e scratch.txt ] || fail "a file the user removed came back with turn 3's revert"
grep -q "reverted 1 file: work.sh" "$T/out" || fail "turn 3 reverted more than its change: $(cat "$T/out")"
grep -q 'the loop is done: 3 iterations' "$T/out" || fail "no stop after 3 turns: $(cat "$T/out")"
# the reject of turn 2 must survive turn 3's revert
[ "$(wc -l <docs/perf/baseline_ledger.jsonl)" -eq 3 ] || fail "ledger lost a line"
run "$PERFLOOP" try
expect_rc 1
grep -q 'the loop is done' "$T/out" || fail "a 4th turn ran without --continue"
# the loop's runs are in the history: baseline + 3 turns
run "$PERFLOOP" history list
expect_rc 0
grep -q '^work  *4 ' "$T/out" || fail "loop runs not in the history: $(cat "$T/out")"
# ... each with its state: turn 2 was slower but rejected, so no commit is
# blamed for it; the baseline ran with the user's edit in notes.txt (dirty)
run "$PERFLOOP" history show work
grep -q 'turn:1:accept' "$T/out" && grep -q 'turn:2:reject' "$T/out" && grep -q 'dirty:' "$T/out" ||
	fail "history: the turns' states: $(cat "$T/out")"
run "$PERFLOOP" history regressions
expect_rc 0
grep -q "no regressions" "$T/out" || fail "a rejected turn was blamed: $(cat "$T/out")"
run "$PERFLOOP" status
expect_rc 0
grep -q 'iterations: 3 of 3' "$T/out" || fail "status: $(cat "$T/out")"
grep -q '1: accept' "$T/out" && grep -q '2: reject' "$T/out" || fail "status turns"
# status and the ledger name the same commit for a turn: the one measured on
on=$(python3 -c 'import json; print(json.loads(open("docs/perf/baseline_ledger.jsonl").readline())["commit"][:12])')
grep -q "1: accept .*measured on $on (the ledger's commit)" "$T/out" ||
	fail "status and the ledger name different commits (ledger: $on): $(cat "$T/out")"
# report with no file: the loop's own evidence, durations with units
run "$PERFLOOP" report
expect_rc 0
expect_err "the current loop's evidence: docs/perf/baseline_ledger.jsonl (this loop's lines), .perfloop/baseline.json"
grep -q '3 verdicts: 1 accepted, ' "$T/out" || fail "report: $(cat "$T/out")"
grep -q 'timing p50 [0-9.]* ms' "$T/out" || fail "report: no unit: $(cat "$T/out")"
# nothing else left behind (scratch.txt is the file the change created, listed)
[ -z "$(git status --porcelain | grep -v 'notes.txt\|baseline_ledger\|scratch.txt')" ] ||
	fail "litter: $(git status --porcelain | tr '\n' ' ')"
echo ok
