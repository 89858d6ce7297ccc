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
echo ok
