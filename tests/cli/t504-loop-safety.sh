#!/bin/bash
# The loop never loses or leaks a user's work: one regression check for each
# defect found on review (issue #20), numbered as there. Each failed on the
# build before the fix.
. "$PERFLOOP_SRC/tests/cli/lib.sh"
command -v git >/dev/null 2>&1 || skip "git is not installed"
P=$PERFLOOP
mkrepo() {
	cd "$T"
	rm -rf "$1"
	new_repo "$1"
	echo base >a.txt
	git add -A
	git commit -qm base
}

# 1. a held index.lock (an editor's git) is not taken for a clean tree, and
# a revert that must put the index back refuses while it is held
mkrepo r1
echo mine >>a.txt
touch .git/index.lock
run "$P" checkpoint
expect_rc 0
echo change >a.txt
rm -f .git/index.lock
run "$P" revert
expect_rc 0
[ "$(cat a.txt)" = "$(printf 'base\nmine')" ] || fail "1: the uncommitted edit was lost: $(cat a.txt)"
# ... and the refusal itself: the index differs from the checkpoint's copy
git add a.txt
echo again >>a.txt
touch .git/index.lock
run "$P" revert
expect_rc 2
expect_err "index is locked"
[ "$(tail -1 a.txt)" = again ] || fail "1: a refused revert changed the tree"
rm -f .git/index.lock
# intent-to-add files keep their bytes and their intent
mkrepo r1b
echo ita >n.txt
git add -N n.txt
run "$P" checkpoint
expect_rc 0
echo changed >n.txt
run "$P" revert
expect_rc 0
[ "$(cat n.txt)" = ita ] || fail "1: intent-to-add file lost its bytes"
git status --porcelain | grep -q '^ A n.txt' || fail "1: intent-to-add lost: $(git status --porcelain)"

# 2. a file replaced by a directory: the directory is moved aside, not deleted
mkrepo r2
run "$P" checkpoint
rm a.txt
mkdir a.txt
echo w >a.txt/new.c
run "$P" revert
expect_rc 0
[ "$(cat a.txt)" = base ] || fail "2: a.txt not restored"
f=$(find .perfloop/displaced -name new.c)
[ -n "$f" ] && [ "$(cat "$f")" = w ] || fail "2: new.c was lost"
grep -q 'moved out of the way' "$T/out" || fail "2: the move is not said: $(cat "$T/out")"

# 3. untracked files whose names are not UTF-8
mkrepo r3
bad=$(printf 'bad\377name.txt')
echo data >"$bad"
run "$P" checkpoint
expect_rc 0
echo changed >"$bad"
run "$P" revert --json
expect_rc 0
[ "$(cat "$bad")" = data ] || fail "3: non-UTF-8 name not restored"
check "$T/out" 'd["created"] == [] and len(d["restored"]) == 1'

# 4. untracked symlinks stay symlinks; dangling ones, ones to directories
# and nested repositories are recorded
mkrepo r4
mkdir d
echo x >d/f
ln -s a.txt link
ln -s nowhere dangling
ln -s d dirlink
git init -q nested
run "$P" checkpoint
expect_rc 0
rm link
echo junk >link
rm dangling
run "$P" revert
expect_rc 0
[ -L link ] && [ "$(readlink link)" = a.txt ] || fail "4: link is not a symlink to a.txt"
[ -L dangling ] && [ "$(readlink dangling)" = nowhere ] || fail "4: dangling symlink not restored"
[ -L dirlink ] || fail "4: dirlink changed"

# 5. a directory of untracked files replaced by a symlink to outside:
# nothing written outside
mkrepo r5
mkdir -p d "$T/outside"
echo inside >d/f
run "$P" checkpoint
rm -rf d
ln -s "$T/outside" d
run "$P" revert
expect_rc 0
[ -z "$(ls -A "$T/outside")" ] || fail "5: written outside the repository: $(ls "$T/outside")"
[ -d d ] && [ ! -L d ] && [ "$(cat d/f)" = inside ] || fail "5: d/f not restored in a real directory"

# 6. with '* text=auto', an uncommitted CRLF edit comes back as CRLF
mkrepo r6
printf '* text=auto\n' >.gitattributes
printf 'l1\nl2\n' >c.txt
git add -A
git commit -qm crlf
printf 'l1\r\nl2\r\nmine\r\n' >c.txt
run "$P" checkpoint
echo edit >c.txt
run "$P" revert
expect_rc 0
[ "$(od -An -c c.txt | tr -d ' \n')" = 'l1\r\nl2\r\nmine\r\n' ] || fail "6: CRLF rewritten: $(od -c c.txt)"

# 7. (revert half) an emptied .gitignore does not make ignored files "created"
mkrepo r7
echo config.local >.gitignore
git add -A
git commit -qm ign
echo secret >config.local
run "$P" checkpoint
: >.gitignore
run "$P" revert --json
expect_rc 0
check "$T/out" '"config.local" not in d["created"]'
[ "$(cat .gitignore)" = config.local ] || fail "7: .gitignore not restored"

# 8. a changed submodule is listed as not restored (exit 3), never "restored"
cd "$T"
new_repo subsrc
echo s >s.txt
git add -A
git commit -qm s
mkrepo r8
git -c protocol.file.allow=always submodule add -q "$T/subsrc" sub >/dev/null 2>&1 || skip "git submodule add failed"
git commit -qm sub
run "$P" checkpoint
expect_rc 0
echo edit >>sub/s.txt
echo x >>a.txt
run "$P" revert --json
expect_rc 3
check "$T/out" '"sub" not in d["restored"] and d["not_restored"][0].startswith("sub:")'
[ "$(cat a.txt)" = base ] || fail "8: a.txt not restored beside the submodule"

# 12. a measured program stopped by SIGTTOU is killed and reported
cd "$T"
run timeout 60 "$P" bench --runs 1 "sh -c 'kill -TTOU \$\$'"
[ "$rc" -ne 124 ] || fail "12: bench hung on a stopped program"
expect_rc 3
grep -q SIGTTOU "$T/out" "$T/err" || fail "12: the stop is not named: $(cat "$T/out" "$T/err")"

# 13. SIGXFSZ (ulimit -f) makes a ledger write fail cleanly
cd "$T"
"$P" bench --runs 3 -o s.json true >/dev/null 2>&1 || fail "bench true"
python3 -c "
import json
for i in range(40): print(json.dumps({'pad': 'x' * 200, 'i': i}))" >big.jsonl
cp big.jsonl big.before
run bash -c "ulimit -f 8; exec \"$P\" verify --before s.json --after s.json --suite-exit-code 0 --ledger big.jsonl -o v.json"
expect_rc 2
cmp -s big.jsonl big.before || fail "13: the ledger changed"
[ -z "$(ls | grep '\.tmp')" ] || fail "13: temporary files left: $(ls)"

# 14. verify writes no -o file when it fails; outputs keep the umask and
# write through a symlink
run "$P" verify --before s.json --after s.json --suite-exit-code 0 --ledger /nonexistent/l.jsonl -o v2.json
expect_rc 2
[ ! -e v2.json ] || fail "14: -o written by a failing verify"
(umask 077 && "$P" bench --runs 3 -o private.json true >/dev/null 2>&1)
[ "$(stat -c %a private.json)" = 600 ] || fail "14: umask 077 gave $(stat -c %a private.json)"
mkdir real
ln -s real/target.json viasym.json
"$P" bench --runs 3 -o viasym.json true >/dev/null 2>&1
[ -L viasym.json ] && [ -s real/target.json ] || fail "14: the symlink was replaced"

# one lock for the loop's state
mkrepo rl
mkdir -p .perfloop
flock .perfloop/lock sleep 5 &
sleep 0.5
run "$P" checkpoint
expect_rc 2
expect_err "another perfloop"
wait

# revert of a tree that was never touched: nothing restored
mkrepo rq
run "$P" checkpoint
run "$P" revert --json
expect_rc 0
check "$T/out" 'd["restored"] == [] and d["created"] == []'

# (#38) an untracked file over the limit is recorded by hash, not copied
# into .git at each checkpoint (a 300 MB data file added 287 MB each time);
# a revert lists it as changed and leaves it
mkrepo big
head -c 3000000 /dev/urandom >data.bin
objs() { du -sk .git/objects | cut -f1; }
o0=$(objs)
PERFLOOP_CHECKPOINT_MAX_FILE=1M run "$P" checkpoint
expect_rc 0
grep -q "1 untracked file larger than 1 MiB recorded by hash only" "$T/out" || fail "big: $(cat "$T/out")"
check .perfloop/checkpoint.json '[e.get("stored") for e in d["entries"] if e["path"] == "data.bin"] == [False]'
[ $(($(objs) - o0)) -lt 1000 ] || fail "big: the checkpoint stored data.bin ($o0 -> $(objs) KiB)"
head -c 100 /dev/urandom >>data.bin
sum=$(md5sum <data.bin)
echo changed >a.txt
PERFLOOP_CHECKPOINT_MAX_FILE=1M run "$P" revert --json
expect_rc 0
check "$T/out" 'd["restored"] == ["a.txt"] and d["not_kept"] == ["data.bin"]'
[ "$(cat a.txt)" = base ] || fail "big: a.txt not restored"
[ "$(md5sum <data.bin)" = "$sum" ] || fail "big: data.bin was touched"
[ $(($(objs) - o0)) -lt 1000 ] || fail "big: the revert stored data.bin ($o0 -> $(objs) KiB)"
# under the limit, the same file is kept and restored as before
run "$P" checkpoint
head -c 100 /dev/urandom >>data.bin
run "$P" revert --json
check "$T/out" '"data.bin" in d["restored"] and d["not_kept"] == []'
[ "$(md5sum <data.bin)" = "$sum" ] || fail "big: data.bin not restored under the default limit"

# ---- the loop: 7 (try half), 9, 10, 11 -------------------------------------
export PERFLOOP_CHECKPOINT_MAX_FILE=1M
mkrepo loop
head -c 2000000 /dev/urandom >model.bin
# (waits long enough that a host's hiccup of a few ms in one of the three
# runs keeps the CV under the noise gate: with 0.1 s and 0.04 s, 8 of 20
# runs beside two other tests skipped; see t505)
printf '#!/bin/sh\nsleep 0.3\n' >work.sh
chmod +x work.sh
printf 'config.local\n' >.gitignore
echo old >gone.txt
git add work.sh .gitignore
git commit -qm work
echo secret >config.local
run "$P" baseline --bench ./work.sh -n work --runs 3 --ledger "$T/loop/docs/l.jsonl"
[ "$rc" -eq 1 ] && skip "too noisy for the loop part: $(cat "$T/err")"
expect_rc 0
check .perfloop/loop.json 'd["ledger"] == "docs/l.jsonl"'
base_sum=$(md5sum <.perfloop/baseline.json)

# 9. a second baseline refused as too noisy leaves the first as it was
printf '#!/bin/sh\nif [ -e /tmp/.pl-t504-$$ ]; then :; fi\nc=$(cat %s/n 2>/dev/null || echo 0); echo $((c+1)) >%s/n\nif [ $((c %% 2)) = 0 ]; then sleep 0.02; else sleep 0.3; fi\n' "$T" "$T" >"$T/noisy.sh"
chmod +x "$T/noisy.sh"
# (--sim off: with the counts, a wall time this noisy no longer refuses: t507)
run "$P" baseline --bench "$T/noisy.sh" --runs 5 --batch 1 --sim off
expect_rc 1
[ "$(md5sum <.perfloop/baseline.json)" = "$base_sum" ] || fail "9: a refused baseline replaced baseline.json"
check .perfloop/loop.json '"work.sh" in d["benchmarks"][0]["command"]'

# 11. a failing pre-commit hook: exit 3, nothing staged, no ledger line
printf '#!/bin/sh\nsleep 0.15\n' >work.sh
: >.gitignore
rm gone.txt
head=$(git rev-parse HEAD)
printf '#!/bin/sh\necho "hook says no" >&2\nexit 1\n' >.git/hooks/pre-commit
chmod +x .git/hooks/pre-commit
run "$P" try -m faster
if [ "$rc" -eq 1 ]; then skip "the turn was not accepted on this machine: $(cat "$T/out")"; fi
expect_rc 3
expect_err "hook says no"
[ "$(git rev-parse HEAD)" = "$head" ] || fail "11: a commit was made"
[ -z "$(git diff --cached --name-only)" ] || fail "11: files left staged: $(git diff --cached --name-only)"
[ ! -e docs/l.jsonl ] || fail "11: a ledger line was written: $(cat docs/l.jsonl)"
grep -q 'sleep 0.15' work.sh || fail "11: the change was lost"
rm .git/hooks/pre-commit

# 10. try -C from another directory records the repository's own commit
head -c 100 /dev/urandom >>model.bin
cd "$T"
run "$P" try -C loop -m faster
[ "$rc" -eq 1 ] && skip "the turn was not accepted on this machine: $(cat "$T/out")"
expect_rc 0
cd loop
[ "$(git rev-parse HEAD^)" = "$head" ] || fail "10/11: the commit is not on HEAD"
line=$(tail -1 docs/l.jsonl)
echo "$line" | python3 -c "import json,sys; d=json.load(sys.stdin); sys.exit(0 if d['commit']=='$head' else 1)" ||
	fail "10: ledger commit is not the repository's HEAD: $line"
# 7. the ignored file, exposed by the emptied .gitignore, is not committed
! git cat-file -e HEAD:config.local 2>/dev/null || fail "7: config.local was committed"
# (#38) the untracked file too large to keep is neither committed nor reverted
! git cat-file -e HEAD:model.bin 2>/dev/null || fail "model.bin (over the limit) was committed"
grep -q "neither committed nor reverted .*: model.bin" "$T/out" || fail "model.bin not listed: $(cat "$T/out")"
# 11. the deleted untracked file did not stop the accept; the ledger is committed
git cat-file -e HEAD:docs/l.jsonl || fail "11: the ledger is not in the commit"
[ -z "$(git status --porcelain -- docs work.sh)" ] || fail "11: the committed files differ: $(git status --porcelain)"
[ ! -e .perfloop/turn.json ] || fail "the journal was left behind"
echo ok
