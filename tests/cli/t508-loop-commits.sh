#!/bin/sh
# What an accepted turn commits: exactly the paths the change touched before
# it was measured, never what the benchmark wrote while measured, never a
# path ignored at the checkpoint (a change that empties .gitignore does not
# let a .env in); a turn refuses, using no iteration, when the checkpoint
# was retaken in the middle of a change or when the change reaches into a
# submodule perfloop cannot commit. Decided on the simulated counts (a
# random wait makes the wall time too noisy to decide, as in t507), so
# that neither a busy machine nor a quiet one changes the verdicts.
. "$(dirname "$0")/lib.sh"
set -e
command -v git >/dev/null 2>&1 || skip "git is not installed"
command -v valgrind >/dev/null 2>&1 || skip "valgrind is not installed (Debian: apt-get install valgrind)"
new_repo repo
cat >app.sh <<SH
#!/bin/sh
"$BUSY" \$(cat size.txt)
sleep 0.0\$(( \$(od -An -N1 -tu1 /dev/urandom) % 9 ))
echo run >>runs.log
echo "\$(cat size.txt)" >"out-\$(cat size.txt).txt"
SH
chmod +x app.sh
echo 4000000 >size.txt
printf '.env\n' >.gitignore
git add -A
git commit -qm base
run "$PERFLOOP" baseline --bench './app.sh' -n app --max-iterations 6 --batch 1 --runs 3
expect_rc 0

# the benchmark's own files, made or changed while measuring, stay out
echo 3000000 >size.txt
run "$PERFLOOP" try -m "less work"
expect_rc 0
grep -q 'verdict: accept' "$T/out" || fail "no accept: $(cat "$T/out")"
[ "$(git show --name-only --format= HEAD | sort | tr '\n' ' ')" = "docs/perf/baseline_ledger.jsonl size.txt " ] ||
	fail "the turn committed more than the change: $(git show --name-only --format= HEAD | tr '\n' ' ')"
grep -q 'made or changed while measuring.*out-3000000.txt' "$T/out" || fail "the benchmark's files not named: $(cat "$T/out")"

# a change that empties .gitignore does not let an ignored .env in
echo 2000000 >size.txt
: >.gitignore
echo "API_KEY=secret" >.env
run "$PERFLOOP" try -m "less again, and a gitignore edit"
expect_rc 0
grep -q 'verdict: accept' "$T/out" || fail "no accept: $(cat "$T/out")"
! git cat-file -e HEAD:.env 2>/dev/null || fail "a .env ignored at the checkpoint was committed"
git cat-file -e HEAD:.gitignore || fail "the .gitignore edit (the change's) was not committed"
grep -q 'ignored by git now or at the checkpoint.*\.env' "$T/out" || fail ".env not named as left out: $(cat "$T/out")"
[ "$(cat .env)" = "API_KEY=secret" ] || fail "the .env was touched"

# a checkpoint retaken in the middle of a change: refused, no iteration used
it=$(python3 -c "import json; print(json.load(open('.perfloop/loop.json'))['iteration'])")
echo 1500000 >size.txt
run "$PERFLOOP" checkpoint
expect_rc 0
run "$PERFLOOP" try -m "after a checkpoint"
expect_rc 2
expect_err "checkpoint was taken again"
[ "$(python3 -c "import json; print(json.load(open('.perfloop/loop.json'))['iteration'])")" = "$it" ] ||
	fail "a refused turn used an iteration"
[ "$(cat size.txt)" = 1500000 ] || fail "a refused turn touched the change"

# a change inside a submodule: refused by name, nothing committed or reverted
git checkout -q size.txt
run "$PERFLOOP" baseline --bench './app.sh' -n app --max-iterations 6 --batch 1 --runs 3
expect_rc 0

# a rejected turn that made a file whose name is not UTF-8: named quoted,
# never as raw bytes, and recorded as left over (a revert after the user
# removes it does not bring it back)
odd=$(printf 'odd-\377.txt')
echo 8000000 >size.txt
echo x >"$odd"
run "$PERFLOOP" try -m "twice the work"
expect_rc 1
grep -q 'verdict: reject' "$T/out" || fail "no reject: $(cat "$T/out")"
grep -qF '"odd-\377.txt"' "$T/out" || fail "the odd name not quoted: $(cat "$T/out" | od -c | head)"
! grep -q "$(printf '\377')" "$T/out" || fail "a raw byte printed"
check .perfloop/checkpoint.json "any(e.get('path_hex') == '6f64642dff2e747874' and e.get('leftover') for e in d['entries'])"
rm "$odd"
run "$PERFLOOP" revert
expect_rc 0
[ ! -e "$odd" ] || fail "revert brought back a leftover the user removed"
cd "$T"
new_repo lib
echo v1 >lib.txt
git add -A
git commit -qm lib
cd "$T/repo"
git -c protocol.file.allow=always submodule -q add "$T/lib" lib
git commit -qm "a submodule"
run "$PERFLOOP" baseline --bench './app.sh' -n app --max-iterations 6 --batch 1 --runs 3
expect_rc 0
head=$(git rev-parse HEAD)
echo v2 >lib/lib.txt
run "$PERFLOOP" try -m "inside the submodule"
expect_rc 2
expect_err "reaches into lib: a submodule or nested repository"
[ "$(git rev-parse HEAD)" = "$head" ] || fail "a commit was made"
[ "$(cat lib/lib.txt)" = v2 ] || fail "the change inside the submodule was touched"
echo ok
