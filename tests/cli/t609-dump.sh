#!/bin/sh
# perfloop dump: a running CPython's stacks, once (py-spy dump), with each
# CPython 3.11 here: the busy main thread marked active and named
# MainThread, a sleeping thread marked idle, frames leaf first with file
# and line; --json; --native (the C frames beside the Python ones);
# --locals (each frame's variables); and
# bad input refused in one line with exit 2.
# perfloop top: the live table, redrawn every second, then the last one;
# no files written.
. "$PERFLOOP_SRC/tests/cli/lib.sh"

run "$PERFLOOP" dump
expect_rc 2
expect_err "which process"
run "$PERFLOOP" dump -p notapid
expect_rc 2
expect_err "expected a process id"
run "$PERFLOOP" dump 4194000
expect_rc 2
expect_err "no process with PID 4194000"
[ "$(wc -l <err)" -eq 1 ] || fail "more than one line: $(cat err)"
sleep 5 &
s=$!
started $s sleep
run "$PERFLOOP" dump -p $s
kill $s
expect_rc 2
expect_err "process $s (sleep 5) is not a CPython process"

pys=$(pythons311)
[ -n "$pys" ] || skip "no CPython 3.11 on this machine"
# (it ends by itself: a failed check never leaves it spinning)
cat >stuck.py <<'PY'
import threading, time
def waiter():
    time.sleep(20)
def spin(n):
    x = 0
    end = time.monotonic() + 20
    while time.monotonic() < end:
        x += n
def main():
    t = threading.Thread(target=waiter, daemon=True)
    t.start()
    time.sleep(0.2)
    spin(3)
main()
PY
for py in $pys; do
	"$py" stuck.py &
	p=$!
	sleep 1
	run "$PERFLOOP" dump -p $p
	r1=$rc
	cp out text.txt
	cp err text.err
	run "$PERFLOOP" dump --json $p
	kill $p
	wait $p 2>/dev/null || true
	if [ "$r1" -eq 2 ] && grep -q "permission\|ptrace" text.err; then
		skip "cannot read another process here: $(cat text.err)"
	fi
	[ "$r1" -eq 0 ] || fail "$py: dump exited $r1: $(cat text.err)"
	grep -q "^Process $p: .*stuck.py" text.txt || fail "$py: no process line: $(cat text.txt)"
	grep -q "^Python 3\.11\." text.txt || fail "$py: no version line: $(cat text.txt)"
	# the spinning main thread holds the GIL (the other sleeps without it)
	grep -q "^Thread $p (active+gil): \"MainThread\"" text.txt || fail "$py: main thread: $(cat text.txt)"
	# the main thread's stack, leaf first, right after its header
	sed -n "/^Thread $p /,/^\$/p" text.txt | sed -n 2,4p | sed 's/ (.*:[0-9]*)$//' >main.txt
	printf '    spin\n    main\n    <module>\n' | diff -u - main.txt || fail "$py: main stack"
	grep -q "    spin (.*stuck.py:[78])" text.txt || fail "$py: no file:line: $(cat text.txt)"
	grep -A1 "(idle)" text.txt | grep -q "    waiter (.*stuck.py:3)" ||
		fail "$py: the sleeping thread is not idle in waiter: $(cat text.txt)"
	expect_rc 0
	check out "d['pid'] == $p and d['python'].startswith('3.11.') and len(d['threads']) == 2"
	check out "[t['name'] for t in d['threads'] if t['tid'] == $p] == ['MainThread'] and [f['function'] for t in d['threads'] if t['active'] for f in t['frames']] == ['spin', 'main', '<module>']"
	check out "[t['frames'][0]['function'] for t in d['threads'] if not t['active']] == ['waiter']"
	check out "sorted((t['tid'] == $p, t['gil']) for t in d['threads']) == [(False, False), (True, True)]"
	# top: a table a second (into a file: one after another), spin on top
	"$py" stuck.py &
	p=$!
	sleep 0.5
	run "$PERFLOOP" top -d 2.6 -p $p
	kill $p
	wait $p 2>/dev/null || true
	expect_rc 0
	[ "$(grep -c '^perfloop top: pid' out)" -ge 2 ] || fail "$py: top: not redrawn: $(cat out)"
	grep -A4 '^perfloop top: pid' out | grep -q "spin .*stuck.py" || fail "$py: top: spin not in the table: $(cat out)"
	tail -5 out | grep -q "^ *[0-9.]*% .*spin " || fail "$py: top: no last table: $(tail -5 out)"
	# the last table is top's, named so (it said "perfloop profile:")
	if grep -q "^perfloop profile:" out; then fail "$py: top's final table titled as profile's: $(cat out)"; fi
	[ -z "$(ls profile.* 2>/dev/null)" ] || fail "$py: top wrote files: $(ls profile.*)"
done
# --locals (CPython 3.11 to 3.13; 3.11 here): each frame's variables by value, containers by
# size, a long string cut, an unbound one left out; --locals with
# --native refused in one line
py=$(echo "$pys" | head -1)
cat >loc.py <<'PY'
import time
def work(n, name, ratio, items, table, flag, nothing, neg):
    total = 0
    s = "x" * 500
    end = time.monotonic() + 20
    while time.monotonic() < end:
        total += 1
        time.sleep(0.001)
    later = 1
def outer():
    data = [1, 2, 3]
    cfg = {"a": 1}
    work(42, "hello", 0.1, data, cfg, True, None, -7)
outer()
PY
"$py" loc.py &
p=$!
sleep 1
run "$PERFLOOP" dump --locals --json $p
cp out loc.json
run "$PERFLOOP" dump --locals $p
kill $p
wait $p 2>/dev/null || true
expect_rc 0
check loc.json "(lambda f: [(l['name'], l['value']) for l in f[0]['locals'] if l['name'] != 'total' and l['name'] != 's' and l['name'] != 'end'] == [('n', '42'), ('name', \"'hello'\"), ('ratio', '0.1'), ('items', '<list of 3>'), ('table', '<dict of 1>'), ('flag', 'True'), ('nothing', 'None'), ('neg', '-7')] and f[0]['function'] == 'work')([t for t in d['threads'] if t['name'] == 'MainThread'][0]['frames'])"
check loc.json "(lambda f: int([l['value'] for l in f[0]['locals'] if l['name'] == 'total'][0]) > 0 and not [l for l in f[0]['locals'] if l['name'] == 'later'] and [l['value'] for l in f[0]['locals'] if l['name'] == 's'][0].endswith('...') and len([l['value'] for l in f[0]['locals'] if l['name'] == 's'][0]) <= 120)([t for t in d['threads'] if t['name'] == 'MainThread'][0]['frames'])"
check loc.json "[(l['name'], l['type']) for l in [t for t in d['threads'] if t['name'] == 'MainThread'][0]['frames'][1]['locals']] == [('data', 'list'), ('cfg', 'dict')]"
grep -q "^        name = 'hello'$" out || fail "--locals: text: $(cat out)"
run "$PERFLOOP" dump --locals --native 1
expect_rc 2
expect_err "--locals with --native"
# --native (x86-64): the C frames with the Python ones where the
# interpreter ran them (py-spy dump --native): the compressing thread in
# libz under work(), the main thread in the C library's sleep under
# <module>; the threads stopped for the reading only (no tracer left,
# the program runs on)
if [ "$(uname -m)" = x86_64 ]; then
	py=$(echo "$pys" | head -1)
	cat >nat.py <<'PY'
import os, threading, time, zlib
data = os.urandom(1 << 20)
def work():
    end = time.monotonic() + 20
    while time.monotonic() < end:
        zlib.compress(data, 9)
threading.Thread(target=work, name="compressor", daemon=True).start()
time.sleep(20)
PY
	"$py" nat.py &
	p=$!
	sleep 1
	# (the compressing thread is in libz but for microseconds a round: a
	# reading that caught it between two calls is taken again)
	for try in 1 2 3; do
		run "$PERFLOOP" dump --native --json $p
		r1=$rc
		cp out nat.json
		cp err nat.err
		[ "$r1" -eq 0 ] && grep -q 'libz' nat.json && break
	done
	run "$PERFLOOP" dump --native $p
	tracer=$(awk '/^TracerPid/ {print $2}' /proc/$p/status)
	state=$(sed 's/.*) //' /proc/$p/stat | cut -c1)
	kill $p
	wait $p 2>/dev/null || true
	if [ "$r1" -eq 2 ] && grep -q "ptrace" nat.err; then
		echo "dump --native: cannot stop another process here: $(cat nat.err)"
	else
		[ "$r1" -eq 0 ] || fail "dump --native exited $r1: $(cat nat.err)"
		[ "$tracer" = 0 ] || fail "dump --native left the program traced (TracerPid $tracer)"
		[ "$state" != t ] && [ "$state" != T ] || fail "dump --native left the program stopped ($state)"
		check nat.json "[t['name'] for t in d['threads'] if t['active']] == ['compressor']"
		# leaf first: native frames in libz, then work() and the threading frames
		check nat.json "(lambda f: f[0]['native'] and any('libz' in x['function'] + x['file'] or 'deflate' in x['function'] for x in f if x['native']) and [x['function'] for x in f if not x['native']][0] == 'work')([t for t in d['threads'] if t['name'] == 'compressor'][0]['frames'])"
		check nat.json "(lambda f: f[0]['native'] and 'sleep' in f[0]['function'] and [x['function'] for x in f if not x['native']] == ['<module>'])([t for t in d['threads'] if t['name'] == 'MainThread'][0]['frames'])"
		expect_rc 0
		grep -A3 '"compressor"' out | grep -q "work (.*nat.py:6)" || grep -A6 '"compressor"' out | grep -q "work (.*nat.py:6)" ||
			fail "dump --native: text: $(cat out)"
	fi
fi
# --gil: only the thread holding the GIL. One thread spins in Python, the
# other hashes in C with the GIL released (running all the same): without
# --gil both are in the profile, with it the hashing thread nearly leaves
py=$(echo "$pys" | head -1)
cat >gil.py <<'PY'
import hashlib, threading, time
data = b"x" * (32 << 20)
def hasher():
    end = time.monotonic() + 20
    while time.monotonic() < end:
        hashlib.sha256(data).digest()
def spin():
    x = 0
    end = time.monotonic() + 20
    while time.monotonic() < end:
        x += 1
threading.Thread(target=hasher, daemon=True).start()
spin()
PY
for g in "" --gil; do
	run "$PERFLOOP" profile $g --threads -d 2 --format folded -o "g$g" -- "$py" gil.py
	expect_rc 0
done
python3 - g.folded g--gil.folded <<'PY' || fail "--gil: $(cat out)"
import sys
def share(path):
    total = hashing = 0
    for line in open(path):
        stack, n = line.rsplit(" ", 1)
        total += int(n)
        hashing += int(n) if "hasher" in stack else 0
    return hashing / total
a, b = share(sys.argv[1]), share(sys.argv[2])
print("hashing thread: %.0f%% of samples, %.0f%% with --gil" % (100 * a, 100 * b))
assert a > 0.25 and b < 0.10, (a, b)
PY
grep -q "samples of threads without the GIL left out" out || fail "--gil: no count: $(cat out)"
# two threads spinning in Python take turns with the GIL: --gil follows it
# from one to the other (each has a fair share of the samples)
sed 's/^threading.Thread(target=hasher/threading.Thread(target=spin/' gil.py >gil2.py
run "$PERFLOOP" profile --gil --threads -d 2 --format folded -o g2 -- "$py" gil2.py
expect_rc 0
python3 - g2.folded <<'PY' || fail "--gil did not follow the GIL: $(cat g2.folded)"
import collections, sys
per = collections.Counter()
for line in open(sys.argv[1]):
    stack, n = line.rsplit(" ", 1)
    per[stack.split(";")[0]] += int(n)
total = sum(per.values())
print("--gil, two spinning threads:", dict(per))
assert len(per) == 2 and min(per.values()) > 0.2 * total, per
PY
run "$PERFLOOP" profile --gil --mode native -d 1 -- sleep 0.3
expect_rc 2
expect_err "--gil: python mode only"
run "$PERFLOOP" top -d 1 -- sleep 0.3
expect_rc 2
expect_err "top: reads CPython programs' stacks"
run "$PERFLOOP" top --help
expect_rc 0
grep -q "^usage: perfloop top" out || fail "top --help: $(head -2 out)"
exit 0
