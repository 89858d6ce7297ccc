#!/bin/bash
# perfloop profile on real Python programs, with each CPython 3.11 here
# (Debian's, statically linked, and the PATH's, with a shared libpython):
# the stacks each program must show, with their callers, not just files.
. "$PERFLOOP_SRC/tests/cli/lib.sh"
PY=$PERFLOOP_SRC/tests/cli/py
SPLIT=$PERFLOOP_SRC/examples/profile/split.py
CHECK=$PERFLOOP_SRC/tests/cli/check_profile.py

# names PREFIX: the folded stacks without locations, "a;b;c count" lines
names() {
	sed -E 's/ \([^;]*:[0-9]+\)//g' "$1.folded"
}
# has PREFIX REGEX: some stack (without locations) matches
has() {
	names "$1" | grep -Eq -- "$2" || fail "$1: no stack matches '$2': $(names "$1" | sort -k2 -n -r | head -5)"
}
# share PREFIX WORD: percent of samples (rounded down) in stacks naming WORD
share() {
	names "$1" | awk -v w="$2" '{n = $NF; t += n; if (index($0, w)) m += n} END {print int(100 * m / (t ? t : 1))}'
}
hasnt() {
	! names "$1" | grep -Eq -- "$2" || fail "$1: a stack matches '$2'"
}

pys=$(pythons311)
[ -n "$pys" ] || skip "no CPython 3.11 on this machine"
for py in $pys; do
	echo "== $py"
	# a known split: heavy 70%, light 30%, under main and <module>
	run "$PERFLOOP" profile -r 500 -o split -- "$py" "$SPLIT" 1.5
	expect_rc 0
	grep -q "CPython 3.11" out || fail "no version in: $(cat out)"
	has split '^<module>;main;heavy [0-9]+$'
	has split '^<module>;main;light [0-9]+$'
	python3 "$CHECK" split || fail "split outputs inconsistent"
	python3 - split <<'PY' || fail "heavy/light split wrong: $(names split)"
import sys
c = {}
for l in open(sys.argv[1] + ".folded"):
    for f in ("heavy", "light"):
        if f + " (" in l:
            c[f] = c.get(f, 0) + int(l.split()[-1])
share = c["heavy"] / (c["heavy"] + c["light"])
sys.exit(0 if 0.55 < share < 0.85 else 1)
PY
	# the table, by self time: heavy above light. (Not necessarily first: on
	# a loaded machine the program is preempted at its clock system calls,
	# and runnable time shows in main, the caller.)
	awk '$4 == "heavy" {h = NR} $4 == "light" {l = NR} END {exit !(h && l && h < l)}' out ||
		fail "table: $(cat out)"
	# findings: valid for select, measured, heavy ranked above light
	"$PERFLOOP" select --findings split.findings.json >/dev/null || fail "select refused the findings"
	check split.findings.json '[f["location"]["function"] for f in d["findings"] if f["location"]["function"] in ("heavy", "light")] == ["heavy", "light"] and all(f["status"] == "measured" for f in d["findings"])'

	# --lines: the loop of heavy() (lines 15-16) is where its time goes
	run "$PERFLOOP" profile --lines -r 500 --format folded -o lines -- "$py" "$SPLIT" 1
	expect_rc 0
	grep -Eq '^<module> \([^)]*split.py:[0-9]+\);main \([^)]*split.py:3[0-9]\);heavy \([^)]*split.py:1[56]\) [0-9]+$' lines.folded ||
		fail "--lines: $(head -3 lines.folded)"

	# threads: two running threads apart, the sleeping one left out
	run "$PERFLOOP" profile --threads -r 500 --format folded -o thr -- "$py" "$PY/threads.py"
	expect_rc 0
	has thr '^thread [0-9]+ \([^)]*\);<module>;spin_main;spin [0-9]+$'
	has thr '^thread [0-9]+ \([^)]*\);Thread._bootstrap;Thread._bootstrap_inner;Thread.run;spin_worker;spin [0-9]+$'
	# the sleeping thread is left out: it runs Python only for the moments
	# around its sleep call, so at most a sample or two
	[ "$(share thr nap)" -le 2 ] || fail "idle thread sampled: $(share thr nap)% of samples"
	m=$(names thr | grep 'spin_main' | cut -d';' -f1 | sort -u | wc -l)
	w=$(names thr | grep 'spin_worker' | cut -d';' -f1 | sort -u)
	[ "$m" -eq 1 ] && ! names thr | grep 'spin_main' | grep -qF "$w" || fail "threads mixed"
	run "$PERFLOOP" profile --idle -r 200 --format folded -o idle -- "$py" "$PY/threads.py"
	expect_rc 0
	has idle ';nap'
	[ "$(share idle nap)" -ge 20 ] || fail "--idle: the sleeping thread has $(share idle nap)%"

	# subprocesses: forked children followed, a root frame per process
	run "$PERFLOOP" profile --subprocesses -r 300 --format folded -o sub -- "$py" "$PY/subprocs.py"
	expect_rc 0
	n=$(names sub | grep -E '^process [0-9]+: [^;]*;.*child_work [0-9]+$' | cut -d: -f1 | sort -u | wc -l)
	[ "$n" -eq 2 ] || fail "--subprocesses: $n processes ran child_work: $(names sub | head)"
	run "$PERFLOOP" profile -r 300 --format folded -o nosub -- "$py" "$PY/subprocs.py"
	expect_rc 0
	hasnt nosub 'child_work'

	# 5,000 frames deep: whole stacks, root first
	run "$PERFLOOP" profile -r 200 -o deep -- "$py" "$PY/recurse.py"
	expect_rc 0
	python3 - deep <<'PY' || fail "deep stacks wrong"
import sys
best = max((l for l in open(sys.argv[1] + ".folded")), key=lambda l: int(l.split()[-1]))
frames = best.rsplit(" ", 1)[0].split(";")
assert frames[0].startswith("<module> ("), frames[0]
assert len(frames) == 5002 and all(f.startswith("deep (") for f in frames[1:]), len(frames)
PY
	python3 "$CHECK" deep >/dev/null || fail "deep outputs inconsistent"

	# generators and coroutines keep their callers
	run "$PERFLOOP" profile -r 500 --format folded -o gens -- "$py" "$PY/gens.py"
	expect_rc 0
	has gens '^<module>;gen_work;spin [0-9]+$'
	has gens '^<module>;run;Runner.run;BaseEventLoop.run_until_complete;BaseEventLoop.run_forever;BaseEventLoop._run_once;Handle._run;coro_work;spin [0-9]+$'

	# threads starting and ending all the time, sampled fast: no crash, the
	# spawning thread's stack intact
	run "$PERFLOOP" profile -r 5000 --format folded -o churn -- "$py" "$PY/churn.py"
	expect_rc 0
	has churn '^<module>;spawn_many(;Thread.(start|join|__init__).*)? [0-9]+$'

	# a program that exits early with a status: profile written, exit 3
	run "$PERFLOOP" profile -r 500 --format folded -o early -- "$py" "$PY/early.py"
	expect_rc 3
	expect_err "exited with status 3"
	has early '^<module>;busy_then_exit [0-9]+$'

	# a crash
	run "$PERFLOOP" profile -r 500 --format folded -o crash -- "$py" -c 'import os, time
t = time.monotonic()
while time.monotonic() - t < 0.3: pass
os.abort()'
	expect_rc 3
	expect_err "killed by SIGABRT"
	has crash '^<module> [0-9]+$'

	# attach to a running process, which goes on running afterwards
	"$py" -c 'import time
def serve():
    while True: pass
serve()' &
	victim=$!
	sleep 0.3
	run "$PERFLOOP" profile -p "$victim" -d 0.5 -r 500 --format folded -o att
	kill -0 "$victim" || fail "the attached process did not survive"
	kill "$victim"
	wait "$victim" 2>/dev/null || true
	expect_rc 0
	has att '^<module>;serve [0-9]+$'
	grep -q "pid $victim" out || fail "attach: $(cat out)"
done
