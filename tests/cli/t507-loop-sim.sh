#!/bin/sh
# The loop on a machine whose wall time cannot decide: the benchmark waits
# a random 0-80 ms after its work, so its timing is over the noise gate
# however quiet the machine, and the baseline must still start, decided
# on the simulated instructions: a 25% win accepted, a change that does
# not touch the work no feasible win, a 2x slowdown rejected, each verdict
# naming the dimension that decided.
. "$(dirname "$0")/lib.sh"
set -e
command -v git >/dev/null 2>&1 || skip "git is not installed"
command -v valgrind >/dev/null 2>&1 || skip "valgrind is not installed (Debian: apt-get install valgrind)"
new_repo repo
cat >app.sh <<SH
#!/bin/sh
"$BUSY" \$(cat size.txt)
sleep 0.0\$(( \$(od -An -N1 -tu1 /dev/urandom) % 9 ))
SH
chmod +x app.sh
echo 4000000 >size.txt
echo "notes" >notes.txt
git add -A
git commit -qm base

run "$PERFLOOP" baseline --bench './app.sh' -n app --max-iterations 6 --batch 1 --runs 5
expect_rc 0
grep -q 'decides: sim_instructions' "$T/out" || fail "the baseline does not say what decides: $(cat "$T/out")"
check .perfloop/loop.json "d['sim'] == 'instructions'"
check .perfloop/baseline.json "d['benchmarks'][0]['dimensions']['timing']['scored'] is False and d['benchmarks'][0]['decides']['dimension'] == 'sim_instructions'"

echo 3000000 >size.txt
run "$PERFLOOP" try -m "less work"
expect_rc 0
grep -q 'verdict: accept (on sim_instructions)' "$T/out" || fail "no accept on the counts: $(cat "$T/out")"
grep -q 'confirm on a quiet machine' "$T/out" || fail "the verdict does not say what it does not cover: $(cat "$T/out")"
git log -1 --format=%B | grep -q 'sim_instructions of .app. improved 2[0-9]\.' || fail "commit message: $(git log -1 --format=%B)"
tail -1 docs/perf/baseline_ledger.jsonl | python3 -c "import json,sys; d=json.loads(sys.stdin.read()); sys.exit(0 if d['target'] == 'sim_instructions' and d['verdict'] == 'accept' else 1)" ||
	fail "ledger: $(tail -1 docs/perf/baseline_ledger.jsonl)"
# an accepted turn keeps its verdict and its run, as a rejected one does
check .perfloop/accepted-1.verdict.json "d['verdict'] == 'accept' and d['target'] == 'sim_instructions' and d['after']['file'].endswith('.perfloop/accepted-1.json')"
check .perfloop/accepted-1.json "d['benchmarks'][0]['decides']['dimension'] == 'sim_instructions'"

echo "more notes" >>notes.txt
run "$PERFLOOP" try -m "nothing that runs"
expect_rc 1
grep -q 'verdict: no_feasible_win (on sim_instructions)' "$T/out" || fail "a no-op: $(cat "$T/out")"
[ "$(cat notes.txt)" = "notes" ] || fail "the no-op was not reverted"

echo 6000000 >size.txt
run "$PERFLOOP" try -m "twice the work"
expect_rc 1
grep -q 'verdict: reject (on sim_instructions)' "$T/out" || fail "a 2x slowdown: $(cat "$T/out")"
[ "$(cat size.txt)" = 3000000 ] || fail "the slowdown was not reverted: $(cat size.txt)"
check .perfloop/rejected-3.verdict.json "d['target'] == 'sim_instructions' and d['gain'] < -0.9"
# every rejected turn keeps its change as a patch that git apply re-applies
grep -q "git apply .perfloop/rejected-3.patch" "$T/out" || fail "no re-apply command: $(cat "$T/out")"
git apply --check .perfloop/rejected-3.patch || fail "the kept patch does not apply"
git apply .perfloop/rejected-3.patch
[ "$(cat size.txt)" = 6000000 ] || fail "the patch did not bring the change back: $(cat size.txt)"
git checkout -q -- size.txt
check .perfloop/loop.json "[t.get('patch') for t in d['turns']] == [None, '.perfloop/rejected-2.patch', '.perfloop/rejected-3.patch'] and [t['target'] for t in d['turns']] == ['sim_instructions'] * 3"
run "$PERFLOOP" status
expect_rc 0
grep -q "its change: 'git apply .perfloop/rejected-3.patch'" "$T/out" || fail "status does not list the patch: $(cat "$T/out")"
# a new file and a binary one are kept too
printf 'new\n' >added.txt
printf '\000\001\002' >blob.bin
echo 6000000 >size.txt
run "$PERFLOOP" try -m "new files"
expect_rc 1
rm added.txt blob.bin
git apply .perfloop/rejected-4.patch
[ "$(cat added.txt)" = new ] && cmp -s blob.bin "$(printf '\000\001\002' >"$T/b" && echo "$T/b")" || fail "new or binary files not in the patch: $(cat .perfloop/rejected-4.patch)"
rm added.txt blob.bin
git checkout -q -- size.txt

# forced off, the same noise refuses the baseline, and says why; the loop
# stays as it was
run "$PERFLOOP" baseline --bench './app.sh' -n app --sim off --batch 1 --runs 5
expect_rc 1
expect_err "too noisy to compare"
check .perfloop/loop.json "len(d['turns']) == 4"
# a new baseline archives the loop it replaces, patches and all
run "$PERFLOOP" baseline --bench './app.sh' -n app --batch 1 --runs 5
expect_rc 0
prev=$(j .perfloop/loop.json "d['previous_loop']")
case "$prev" in .perfloop/loops/*) ;; *) fail "no previous_loop: $prev" ;; esac
check "$prev/loop.json" "len(d['turns']) == 4"
[ -f "$prev/rejected-3.patch" ] && [ -f "$prev/baseline.json" ] || fail "the archive lacks files: $(ls "$prev")"
[ ! -e .perfloop/rejected-3.patch ] || fail "the old loop's patch is still beside the new loop"
check .perfloop/loop.json "d['turns'] == []"
# report: the new loop's evidence alone (the ledger holds both loops'
# lines: each carries its loop's id), the old one by --loop
run "$PERFLOOP" report
expect_rc 0
expect_err "1 earlier loop archived"
! grep -q "^Ledger" "$T/out" || fail "the old loop's ledger lines are in the new loop's report: $(cat "$T/out")"
[ "$(grep -c '"loop"' docs/perf/baseline_ledger.jsonl)" -eq 4 ] || fail "ledger lines without their loop: $(cat docs/perf/baseline_ledger.jsonl)"
run "$PERFLOOP" report --loop "${prev#.perfloop/loops/}"
expect_rc 0
grep -q "4 verdicts: 1 accepted, " "$T/out" || fail "report --loop: $(cat "$T/out")"
grep -q "rejected-3.verdict.json" "$T/err" || fail "report --loop: not the archived verdicts: $(cat "$T/err")"
# its Verdicts list every turn in order, the accepted one first
sed -n '/^Verdicts/,/^Benchmarks/p' "$T/out" | grep '^\* app: sim_instructions' >verdicts.txt || true
[ "$(wc -l <verdicts.txt)" -eq 4 ] && head -1 verdicts.txt | grep -q ': accept$' ||
	fail "report --loop: the turns are not all in its Verdicts: $(cat "$T/out")"
run "$PERFLOOP" report --loop nope
expect_rc 2
expect_err "no loop 'nope' archived here (archived: "
run "$PERFLOOP" report --loop ../x
expect_rc 2
