#!/bin/sh
# checkpoint/revert refusals and messages: no checkpoint, not a repository,
# no commit yet, a merge in progress; what the user sees after a revert.
. "$(dirname "$0")/lib.sh"
set -e
command -v git >/dev/null 2>&1 || skip "git is not installed"
mkdir notrepo
run "$PERFLOOP" checkpoint -C notrepo
expect_rc 2
expect_err "not inside a git work tree"
git init -q empty
run "$PERFLOOP" checkpoint -C empty
expect_rc 2
expect_err "no commit yet"

new_repo repo
echo one >a.txt
git add a.txt
git commit -qm one
run "$PERFLOOP" revert
expect_rc 2
expect_err "no checkpoint"
echo "user edit" >>a.txt
stash_before=$(git rev-parse -q --verify refs/stash || echo none)
run "$PERFLOOP" checkpoint
expect_rc 0
grep -q '1 tracked and 0 untracked' "$T/out" || fail "checkpoint message: $(cat "$T/out")"
[ "$(git rev-parse -q --verify refs/stash || echo none)" = "$stash_before" ] || fail "refs/stash touched"
git rev-parse -q --verify refs/perfloop/checkpoint >/dev/null || fail "no refs/perfloop/checkpoint"
[ -z "$(git status --porcelain --ignored .perfloop | grep -v '^!!')" ] || fail ".perfloop not ignored"
# the change
echo "perf change" >>a.txt
echo "new" >b.txt
run "$PERFLOOP" revert --dry-run
expect_rc 0
grep -q 'perf change' a.txt || fail "--dry-run changed a file"
run "$PERFLOOP" revert
expect_rc 0
[ "$(cat a.txt)" = "$(printf 'one\nuser edit')" ] || fail "user's edit not kept: $(cat a.txt)"
[ -f b.txt ] || fail "a created file was deleted"
grep -q '^created by the change' "$T/out" && grep -q '^  b.txt$' "$T/out" || fail "created file not listed: $(cat "$T/out")"

# a merge in progress is refused
git checkout -qb other
echo theirs >a.txt
git commit -qam theirs
git checkout -q -
git checkout -q -- a.txt 2>/dev/null || true
echo ours >a.txt
git commit -qam ours
git merge other >/dev/null 2>&1 || true
run "$PERFLOOP" checkpoint
expect_rc 2
expect_err "middle of a merge"
run "$PERFLOOP" revert
expect_rc 2
expect_err "middle of a merge"
git merge --abort

# where git's answers need care: a repository whose path has a newline in it
# (each answer then takes more than a line: perfloop asks one at a time), a
# linked work tree (its index lies under the main .git/worktrees), a
# subdirectory given with -C, and a rebase stopped half-way
git worktree add -q "$T/wt" 2>/dev/null
cd "$T/wt"
echo "wt edit" >>a.txt
mkdir -p sub
run "$PERFLOOP" checkpoint -C sub
expect_rc 0
echo "wt change" >>a.txt
git add a.txt
run "$PERFLOOP" revert
expect_rc 0
[ "$(tail -n 1 a.txt)" = "wt edit" ] || fail "linked work tree: not reverted: $(cat a.txt)"
[ -z "$(git diff --cached --name-only)" ] || fail "linked work tree: index not restored"
[ -z "$(git -C "$T/repo" diff --cached --name-only)" ] || fail "the main work tree's index touched"
nl="$T/new
line"
new_repo "$nl"
echo one >a.txt
git add a.txt
git commit -qm one
echo two >>a.txt
run "$PERFLOOP" checkpoint
expect_rc 0
echo three >>a.txt
run "$PERFLOOP" revert
expect_rc 0
[ "$(cat a.txt)" = "$(printf 'one\ntwo')" ] || fail "path with a newline: $(cat a.txt)"
mkdir "$(git rev-parse --git-path rebase-merge)"
run "$PERFLOOP" checkpoint
expect_rc 2
expect_err "middle of a rebase"
cd "$T/repo"
mkdir "$(git rev-parse --git-path rebase-apply)"
run "$PERFLOOP" revert
expect_rc 2
expect_err "middle of a rebase or am"

# a checkpoint is perfloop's own record, never a file's word: a manifest
# whose path leaves the tree or reaches into .git is refused, nothing written
cd "$T"
new_repo hostile
echo one >a.txt
git add a.txt
git commit -qm one
run "$PERFLOOP" checkpoint
expect_rc 0
cp .perfloop/checkpoint.json good.json
mkdir -p "$T/victimhome"
for bad in '../victimhome/.bashrc' '.git/hooks/pre-commit' 'sub/../../victimhome/x' '/tmp/abs' '.GIT/config' 'a/./b' 'x//y'; do
	python3 - "$bad" <<'PY'
import json, sys
d = json.load(open('good.json'))
d['entries'][0]['path'] = sys.argv[1]
d['entries'][0]['mode'] = 0o4755
json.dump(d, open('.perfloop/checkpoint.json', 'w'))
PY
	run "$PERFLOOP" revert
	expect_rc 2
	expect_err "entries\[0\].path"
done
[ -z "$(ls -A "$T/victimhome")" ] || fail "revert wrote outside the tree"
[ ! -e .git/hooks/pre-commit ] || fail "revert installed a hook"
# a checkpoint that came with a clone is not this clone's: refused whole
cp good.json .perfloop/checkpoint.json
git add -f .perfloop/checkpoint.json
git commit -qm "a committed checkpoint"
cd "$T"
git clone -q hostile cloned
cd cloned
echo changed >a.txt
run "$PERFLOOP" revert
expect_rc 2
expect_err "not a checkpoint taken in this repository"
[ "$(cat a.txt)" = changed ] || fail "revert to a cloned checkpoint wrote a file"
# the clone's own checkpoint works as ever
run "$PERFLOOP" checkpoint
expect_rc 0
echo again >a.txt
run "$PERFLOOP" revert
expect_rc 0
[ "$(cat a.txt)" = changed ] || fail "revert to the clone's own checkpoint"
# every revert's snapshot of the tree stays reachable: refs/perfloop/reverted keeps a log
echo twice >a.txt
run "$PERFLOOP" revert
expect_rc 0
[ "$(git reflog show --format=%H refs/perfloop/reverted | wc -l)" -ge 2 ] ||
	fail "refs/perfloop/reverted has no log of earlier snapshots"
git reflog show --format=%H refs/perfloop/reverted | while read -r c; do
	git cat-file -e "$c^{tree}" || fail "a reverted snapshot is gone"
done

# git's index lock left by a perfloop killed mid-revert (SIGKILL, the OOM
# killer, a cancelled tool call): the next revert knows its own stale lock
# by the owner record (pid, start time, the lock's inode) and goes on; a
# live process's lock, or one the record does not name, still stops it
echo staged >a.txt
git add a.txt
run "$PERFLOOP" checkpoint
expect_rc 0
git reset -q a.txt
echo edit >a.txt
start_of() { sed 's/.*) //' "/proc/$1/stat" | awk '{print $20}'; }
sh -c 'exit 0' &
dead=$!
wait $dead
: >.git/index.lock
echo "$dead 1 $(stat -c %i .git/index.lock)" >.perfloop/index.lock.owner
run "$PERFLOOP" revert
expect_rc 0
[ ! -e .git/index.lock ] || fail "a stale lock of a killed perfloop was left"
[ ! -e .perfloop/index.lock.owner ] || fail "the owner record was left"
[ "$(git diff --cached --name-only)" = a.txt ] || fail "the index was not restored after a stale lock"
# a live process's lock: refused, kept
git reset -q a.txt
echo again >a.txt
: >.git/index.lock
echo "$$ $(start_of $$) $(stat -c %i .git/index.lock)" >.perfloop/index.lock.owner
run "$PERFLOOP" revert
expect_rc 2
expect_err "git's index is locked"
[ -e .git/index.lock ] || fail "a live process's lock was removed"
# a lock the record does not name (another inode): refused, kept
echo "$dead 1 1" >.perfloop/index.lock.owner
run "$PERFLOOP" revert
expect_rc 2
[ -e .git/index.lock ] || fail "a lock the record does not name was removed"
rm -f .git/index.lock .perfloop/index.lock.owner
echo ok
