#!/bin/sh
# profile as a py-spy user expects it: an output that cannot be written is
# refused before the program runs; -o out.svg writes out.svg (not
# out.svg.svg); on a terminal a live line says what is being collected.
. "$PERFLOOP_SRC/tests/cli/lib.sh"
py=$(pythons311 | head -n 1)
[ -n "$py" ] || skip "no CPython 3.11 on this machine"
cat >prog.py <<'PY'
import time
open("ran.txt", "w").write("ran")
t = time.time()
while time.time() - t < 1.2:
    pass
PY
# an unwritable output: one line, exit 2, and the program never started
run "$PERFLOOP" profile -o /nonexistent/dir/x -- "$py" prog.py
expect_rc 2
expect_err "option '--out': cannot write '/nonexistent/dir/x.svg': No such file or directory"
[ "$(wc -l <"$T/err")" -eq 1 ] || fail "more than one line: $(cat "$T/err")"
[ ! -e ran.txt ] || fail "the program ran although its profile could not be written"
mkdir taken.svg
run "$PERFLOOP" profile -o taken -- "$py" prog.py
expect_rc 2
expect_err "cannot write 'taken.svg': Is a directory"
[ ! -e ran.txt ] || fail "the program ran although its flame graph could not be written"
# -o NAME.svg: the flame graph is NAME.svg, the others beside it
run "$PERFLOOP" profile -d 0.5 -o flame.svg -- "$py" prog.py
expect_rc 0
[ -s flame.svg ] || fail "-o flame.svg did not write flame.svg: $(ls)"
[ ! -e flame.svg.svg ] || fail "-o flame.svg wrote flame.svg.svg"
[ -s flame.folded ] && [ -s flame.findings.json ] || fail "the other outputs are not beside it: $(ls)"
grep -q "wrote flame.folded, flame.svg" out || fail "the outputs named wrongly: $(cat out)"
# the SVG's labels fit their boxes without JavaScript (rsvg-convert, a
# preview): cut as flamegraph.pl does, the whole name kept in <title>
python3 - flame.svg <<'PY' || fail "flame.svg: a label wider than its box"
import html, re, sys
svg = open(sys.argv[1]).read()
frames = re.findall(r'<g class="f"[^>]*><title>([^<]*)</title><rect x="[^"]*" y="[^"]*" width="([^"]*)"[^>]*/><text[^>]*>([^<]*)</text>', svg)
assert frames, "no frames"
for title, width, text in frames:
    text = html.unescape(text)
    assert len(text) * 7 <= float(width) - 6 + 1e-6 or text == "", (title, width, text)
    if text and not text.endswith(".."):
        assert html.unescape(title).startswith(text), (title, text)
PY
# not a terminal: no live line, no escape codes
if grep -q "sampling:" err; then fail "a live line into a file: $(cat err)"; fi
# a terminal (script(1) gives one): the live line, redrawn, then cleared
if command -v script >/dev/null 2>&1; then
	script -qc "'$PERFLOOP' profile -d 1 -o live -- '$py' prog.py" /dev/null >tty.txt 2>&1 </dev/null
	grep -a -q "sampling: [0-9]* samples, [0-9]*/s delivered, [0-9.]* s, [0-9]* errors" tty.txt ||
		fail "no live line on a terminal: $(tr '\r' '\n' <tty.txt | head -5)"
fi
# --idle: a sleeping thread's stack ends in "(idle)" and is never a hot
# function; the busy one still is
cat >idle.py <<'PY'
import threading, time
def waiter():
    time.sleep(1.5)
def busy():
    t = time.time()
    while time.time() - t < 1.0:
        pass
th = threading.Thread(target=waiter)
th.start()
busy()
th.join()
PY
run "$PERFLOOP" profile --idle -o idle -- "$py" idle.py
expect_rc 0
check idle.findings.json "'busy' in [f['location'].get('function') for f in d['findings']]"
check idle.findings.json "not {'waiter', 'Thread._wait_for_tstate_lock', 'Thread.join'} & {f['location'].get('function') for f in d['findings']}"
grep -q 'waiter;(idle) [0-9]' idle.folded || grep -q ';(idle) [0-9]' idle.folded || fail "no (idle) leaf in the folded stacks: $(head -5 idle.folded)"
# ... and its row is in the table, so that the self column adds up (it
# counted in the total and was left out: the rows summed to 57%)
grep -q "^ *[0-9.]*% *[0-9.]*% *[0-9]*  (idle)" out || fail "no (idle) row in the table: $(cat out)"
python3 - "$T/out" <<'PY' || fail "the table's self column does not add up: $(cat "$T/out")"
import re, sys
rows = [float(m.group(1)) for m in re.finditer(r"^ +([0-9.]+)% +[0-9.]+% +[0-9]+  ", open(sys.argv[1]).read(), re.M)]
sys.exit(0 if sum(rows) >= 90 else 1)
PY
# paths as py-spy shows them: the program relative to the directory, the
# standard library from lib/python3.X/; --full-paths as read; and
# --fold-imports ends a stack inside an import in "(import json)"
cat >imp.py <<'PY'
import time
def work():
    import json
    t = time.time()
    while time.time() - t < 0.5:
        json.dumps([1, 2, 3])
work()
PY
run "$PERFLOOP" profile -o imp -- "$py" imp.py
expect_rc 0
grep -q '^<module> (imp.py:[0-9]*);work (imp.py:[0-9]*)' imp.folded || fail "not relative: $(head -3 imp.folded)"
grep -q "(json/__init__.py:[0-9]*)" imp.folded || fail "json not shown from the library: $(grep json imp.folded | head -2)"
! grep -q "$T/imp.py" imp.folded imp.svg imp.speedscope.json || fail "an absolute path in the outputs"
python3 "$PERFLOOP_SRC/tests/cli/check_profile.py" imp || fail "outputs disagree with shortened paths"
run "$PERFLOOP" profile --full-paths -o full -- "$py" imp.py
grep -q "$T/imp.py:" full.folded || fail "--full-paths: $(head -2 full.folded)"
run "$PERFLOOP" profile --fold-imports -o fold -- "$py" imp.py
expect_rc 0
! grep -q "<frozen importlib" fold.folded || fail "--fold-imports left importlib frames: $(grep frozen fold.folded | head -2)"
# start-up's imports (site, encodings) always take samples; each is named
grep -q "(import [a-z_.]*) [0-9]" fold.folded || fail "--fold-imports: no (import NAME) frame: $(cat fold.folded)"

# --threads: the table groups by thread, each with its own top functions
# (it listed every thread's functions in one list)
cat >thr.py <<'PY'
import threading, time
def spin():
    end = time.time() + 1.5
    while time.time() < end:
        sum(range(1000))
def nap():
    for _ in range(30):
        time.sleep(0.05)
u = threading.Thread(target=nap, name="napper")
u.start()
spin()
u.join()
PY
run "$PERFLOOP" profile --threads --idle --format folded -o thr -- "$py" thr.py
expect_rc 0
grep -q "thread: its top functions (self)" "$T/out" || fail "--threads: no table by thread: $(cat "$T/out")"
grep -Eq "^ +[0-9.]+% +[0-9]+  thread [0-9]+ \(MainThread\): spin " "$T/out" || fail "--threads: MainThread's top is not spin: $(cat "$T/out")"
grep -Eq "^ +[0-9.]+% +[0-9]+  thread [0-9]+ \(napper\): \(idle\) " "$T/out" || fail "--threads: napper's top is not its wait: $(cat "$T/out")"
exit 0
