#!/bin/sh
# perfloop's own state and the files a project ships, hostile (#38, the
# second review): nothing perfloop writes lands through a symlink a clone
# put in .perfloop (checkpoint.json, the lock, links.PID/0); a loop.json
# no baseline here wrote is refused (it named a suite to run and a ledger
# outside); a ledger is confined whatever its spelling (./.git/x, a
# symlinked directory); report never reads a ledger outside; a scan cache
# shipped with the project is never read (the key is this user's); a
# pyproject.toml or perfloop.yaml that is a FIFO or /dev/zero is refused
# at once; a killed revert's temporaries do not block the next one.
# Each failed on the build before its fix.
. "$PERFLOOP_SRC/tests/cli/lib.sh"
command -v git >/dev/null 2>&1 || skip "git is not installed"
P=$PERFLOOP
mkdir outside
origin() { # origin NAME: a repository with a file, committed
	cd "$T"
	rm -rf "$1" "$1.clone"
	new_repo "$1"
	echo base >a.txt
	printf '#!/bin/sh\n:\n' >work.sh
	chmod +x work.sh
}
clone() { # clone NAME: commit everything (forced past .perfloop/.gitignore), clone it
	git add -A
	git add -f .perfloop 2>/dev/null || true
	git commit -qm shipped
	cd "$T"
	git clone -q "$1" "$1.clone"
	cd "$1.clone"
	git config user.email t@example.com
	git config user.name t
}

# a committed symlink in .perfloop: refused by name, the target untouched
for f in checkpoint.json lock .gitignore; do
	origin s
	mkdir -p .perfloop
	echo keep >"$T/outside/victim-$f"
	ln -s "$T/outside/victim-$f" ".perfloop/$f"
	clone s
	run timeout 60 "$P" checkpoint
	expect_rc 2
	expect_err "'.perfloop/$f' is a symlink"
	[ "$(cat "$T/outside/victim-$f")" = keep ] || fail "$f: written through: $(cat "$T/outside/victim-$f")"
done
# ... and one level down (links.PID/0 took a symlink's target as its bytes)
origin s
mkdir -p .perfloop/links.1
ln -s "$T/outside/victim-links" .perfloop/links.1/0
clone s
run "$P" checkpoint
expect_rc 2
expect_err "'.perfloop/links.1/0' is a symlink"
[ ! -e "$T/outside/victim-links" ] || fail "links: written through"

# a revert killed half-way leaves .perfloop/restore.PID/N, a restored
# symlink among them (CI, case 864 of t500b): the next revert clears it
# and goes on; a restore.PID that is itself a link is removed, never
# followed (the files it points at stay)
origin k
ln -s a.txt link
git add link
git commit -qm link
run "$P" checkpoint
expect_rc 0
ln -sf work.sh link
dead=$(sh -c 'echo $$')
mkdir -p ".perfloop/restore.$dead"
ln -s a.txt ".perfloop/restore.$dead/0"
echo keep >"$T/outside/scratch-victim"
ln -s "$T/outside" ".perfloop/restore.$((dead + 1))"
kill -0 $((dead + 1)) 2>/dev/null && rm ".perfloop/restore.$((dead + 1))"
run "$P" revert
expect_rc 0
[ "$(readlink link)" = a.txt ] || fail "link not restored: $(readlink link)"
[ ! -e ".perfloop/restore.$dead" ] || fail "a dead revert's scratch was left"
[ ! -L ".perfloop/restore.$((dead + 1))" ] || fail "a scratch link was left"
[ "$(cat "$T/outside/scratch-victim")" = keep ] || fail "removed through a scratch link"
rm "$T/outside/scratch-victim"

# a loop.json no baseline here wrote: try refuses, runs no suite, writes no ledger
origin l
mkdir -p .perfloop
cat >.perfloop/loop.json <<JSON
{"schema": "perfloop.loop/1", "workdir": ".", "benchmarks": [{"name": "w", "command": "./work.sh"}],
 "suite": "touch $T/outside/SUITE_RAN", "runs": 3, "max_iterations": 3, "min_gain": 0.05,
 "ledger": "docs/l.jsonl", "timeout_s": 60, "iteration": 0, "turns": []}
JSON
clone l
run "$P" checkpoint
expect_rc 0
echo changed >>a.txt
run "$P" try -m t
expect_rc 2
expect_err "names no checkpoint"
[ ! -e "$T/outside/SUITE_RAN" ] || fail "the cloned loop.json's suite ran"
# ... and one whose ledger or workdir leads out: refused wherever it is read
for kv in '"ledger": "../outside/l.jsonl"' '"workdir": "../outside"' '"ledger": ".git/l.jsonl"'; do
	python3 - "$kv" <<'PY'
import json, sys
d = json.load(open(".perfloop/loop.json"))
k, v = json.loads("{" + sys.argv[1] + "}").popitem()
d[k] = v
json.dump(d, open(".perfloop/loop.json", "w"))
PY
	run "$P" status
	expect_rc 2
	expect_err "refused"
	run "$P" report
	expect_rc 2
done
[ -z "$(ls "$T/outside" | grep -v victim)" ] || fail "written outside: $(ls "$T/outside")"

# --ledger: confined however it is spelled
origin g
mkdir real
ln -s "$T/outside" lnk
git add -A
git commit -qm lnk
for l in ./.git/ledger .GIT/x sub/.git/x lnk/ledger.jsonl "$T/g/./.git/y" .perfloop/x; do
	run "$P" baseline --bench ./work.sh --runs 3 --ledger "$l"
	expect_rc 2
	expect_err "option '--ledger'"
done
[ ! -e .git/ledger ] && [ ! -e .git/y ] && [ ! -e "$T/outside/ledger.jsonl" ] || fail "a ledger outside was made"

# a scan cache shipped with the project is not this user's: never read
origin c
printf 'def g(n):\n    s = ""\n    for i in range(n):\n        s += str(i)\n    return s\n' >m.py
run "$P" scan --advisory m.py
n=$(grep -c 'm.py:' "$T/out" || true)
[ "$n" -ge 1 ] || skip "no finding on m.py to hide: $(cat "$T/out")"
for f in .perfloop/cache/scan/*.json; do
	python3 - "$f" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
for e in d.get("entries", {}).values():
    e["findings"] = []
json.dump(d, open(sys.argv[1], "w"))
PY
done
clone c
XDG_CACHE_HOME=$T/other-user run "$P" scan --advisory m.py
[ "$(grep -c 'm.py:' "$T/out" || true)" -eq "$n" ] || fail "a shipped cache hid findings: $(cat "$T/out")"

# a FIFO or a device where a project file should be: refused at once
origin f
mkfifo pyproject.toml
printf 'x = 1\n' >m.py
run timeout 30 "$P" scan m.py
expect_rc 2
expect_err "not a regular file"
rm pyproject.toml
ln -s /dev/zero pyproject.toml
run timeout 30 "$P" scan m.py
expect_rc 2
expect_err "not a regular file"
rm pyproject.toml
mkfifo perfloop.yaml
run timeout 30 "$P" bench --all
expect_rc 2
expect_err "not a regular file"
rm perfloop.yaml
git add a.txt work.sh
git commit -qm c
mkdir -p .perfloop
mkfifo .perfloop/loop.json
run timeout 30 "$P" status
expect_rc 2
expect_err "not a regular file"
echo ok
