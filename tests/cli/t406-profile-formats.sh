#!/bin/sh
# Profiles other tools wrote, read by content (profread.c): py-spy's or
# perfloop's speedscope file, Austin's collapsed samples, perf script's
# text, a Chrome trace (torch.profiler's export_chrome_trace) and
# cProfile's pstats file, by
# report --diff, the HTML page and scan --profile. Each input here is
# written out with known numbers, so the shares are exact.
. "$(dirname "$0")/lib.sh"
set -e
P=$PERFLOOP
# Austin: P<pid>;T<iid>:<tid>;file:function:line;... METRIC (microseconds)
cat >a.austin <<'EOF2'
# austin: 3.5.0
# mode: wall

P4242;T0:4242;work.py:<module>:10;work.py:slow:5 600
P4242;T0:4242;work.py:<module>:11;work.py:fast:8 300
P4242;T0:4242;work.py:<module>:10 100
EOF2
run "$P" report --diff a.austin a.austin
expect_rc 0
grep -Eq "60.00% +60.00% +\+0.00  slow \(work.py:5\)" "$T/out" || fail "austin: $(cat "$T/out")"
grep -Eq "30.00% +30.00% +\+0.00  fast \(work.py:8\)" "$T/out" || fail "austin: $(cat "$T/out")"
grep -q "(1000 samples)" "$T/out" || fail "austin: the metric is not the count: $(cat "$T/out")"

# perf script: a header per sample, its frames leaf first, a blank line
cat >b.perf <<'EOF2'
prog  101 100.000001:     250000 cpu-clock:pppH: 
	    1234 inner+0x12 (/usr/bin/prog)
	    1300 outer+0x3 (/usr/bin/prog)
	    1400 main+0x1f (/usr/bin/prog)

prog  101 100.000251:     250000 cpu-clock:pppH: 
	    1234 inner+0x15 (/usr/bin/prog)
	    1300 outer+0x3 (/usr/bin/prog)
	    1400 main+0x1f (/usr/bin/prog)

prog  101 100.000501:     250000 cpu-clock:pppH: 
	    1500 other+0x2 (/usr/lib/libc.so.6)
	    1400 main+0x1f (/usr/bin/prog)
EOF2
run "$P" report --diff b.perf b.perf
expect_rc 0
grep -Eq "66.67% +66.67% .*inner \(/usr/bin/prog" "$T/out" || fail "perf script: $(cat "$T/out")"
grep -Eq "33.33% +33.33% .*other \(/usr/lib/libc.so.6" "$T/out" || fail "perf script: $(cat "$T/out")"

# a Chrome trace: nested complete events; each stack weighs its self time
cat >c.trace.json <<'EOF2'
{"traceEvents": [
 {"ph": "X", "name": "step", "pid": 1, "tid": 1, "ts": 0, "dur": 100},
 {"ph": "X", "name": "aten::mm", "pid": 1, "tid": 1, "ts": 10, "dur": 30},
 {"ph": "X", "name": "aten::relu", "pid": 1, "tid": 1, "ts": 50, "dur": 10},
 {"ph": "B", "name": "loader", "pid": 1, "tid": 2, "ts": 0},
 {"ph": "E", "pid": 1, "tid": 2, "ts": 100},
 {"ph": "M", "name": "thread_name", "pid": 1, "tid": 1, "args": {"name": "main"}}
]}
EOF2
run "$P" report --diff c.trace.json c.trace.json
expect_rc 0
grep -q "(200 samples)" "$T/out" || fail "trace: $(cat "$T/out")"
grep -Eq "30.00% +30.00% +\+0.00  step$" "$T/out" || fail "trace: step's self time: $(cat "$T/out")"
grep -Eq "15.00% +15.00% +\+0.00  aten::mm$" "$T/out" || fail "trace: $(cat "$T/out")"
grep -Eq "50.00% +50.00% +\+0.00  loader$" "$T/out" || fail "trace: B/E: $(cat "$T/out")"

# speedscope: the same profile as its folded stacks, share for share
pys=$(pythons311 | head -n 1)
if [ -n "$pys" ]; then
	printf 'def work():\n    s = ""\n    for i in range(300000):\n        s += str(i)\n    return s\nfor _ in range(4):\n    work()\n' >w.py
	run "$P" profile --lines -o w -- "$pys" w.py
	expect_rc 0
	run "$P" report --diff w.folded w.speedscope.json
	expect_rc 0
	! grep -Eq " [+-]0\.[0-9][1-9] | [+-][1-9]" "$T/out" || fail "speedscope differs from folded: $(cat "$T/out")"
	# scan --profile weighs by another tool's profile: the += line is hot
	run "$P" scan --advisory --profile w.speedscope.json --format json -o s.json w.py
	expect_rc 0
	check s.json "[f for f in d['findings'] if f['status'] == 'measured' and f['location']['line'] == 4]"
fi
# Austin into scan --profile: slow() runs in 600 of its 1000 us
printf 'import time\ndef slow():\n    s = ""\n    for i in range(10):\n        s += str(i)\n    return s\n' >work.py
run "$P" scan --advisory --profile a.austin --format json -o sa.json work.py
expect_rc 0
check sa.json "[(f['status'], f['evidence']['numbers']['function_share']) for f in d['findings'] if f['location']['line'] == 5] == [('measured', 0.6)]"
# cProfile's saved statistics (pstats, marshal): the stacks rebuilt from
# the call graph's edges, a callee's self time split over its callers by
# the edges' cumulative time, a builtin ('~', 0) named alone; exact
# numbers, written by marshal as cProfile writes them (Python 3.11)
python3 - <<'PY'
import marshal
main = ("work.py", 1, "main")
slow = ("work.py", 5, "slow")
fast = ("work.py", 8, "fast")
sleep = ("~", 0, "<built-in method time.sleep>")
stats = {
    main: (1, 1, 0.10, 0.95, {}),
    slow: (1, 1, 0.50, 0.55, {main: (1, 1, 0.50, 0.55)}),
    fast: (2, 2, 0.15, 0.30, {main: (2, 2, 0.15, 0.30)}),
    sleep: (3, 3, 0.20, 0.20, {slow: (1, 1, 0.05, 0.05), fast: (2, 2, 0.15, 0.15)}),
}
with open("e.prof", "wb") as f:
    marshal.dump(stats, f)
PY
run "$P" report --diff e.prof e.prof -o e.svg
expect_rc 0
grep -q "(950000 samples)" "$T/out" || fail "pstats: not in microseconds: $(cat "$T/out")"
grep -Eq "52.63% +52.63% +\+0.00  slow \(work.py:5\)" "$T/out" || fail "pstats: $(cat "$T/out")"
grep -Eq "21.05% +21.05% +\+0.00  <built-in method time.sleep>$" "$T/out" || fail "pstats: $(cat "$T/out")"
grep -Eq "10.53% +10.53% +\+0.00  main \(work.py:1\)" "$T/out" || fail "pstats: $(cat "$T/out")"
# the sleep under each caller: 50 ms under slow, 150 ms under fast
grep -o "<title>&lt;built-in method time.sleep&gt; (after [0-9]* samples" e.svg | sort >sl.txt
printf '%s\n' "<title>&lt;built-in method time.sleep&gt; (after 150000 samples" \
	"<title>&lt;built-in method time.sleep&gt; (after 50000 samples" | diff - sl.txt ||
	fail "pstats: the builtin's time not split by caller"
run "$P" report --format html -o e.html e.prof
expect_rc 0
grep -q "slow" e.html || fail "pstats: no flame graph in the HTML page"
# a real cProfile run: its hot function is the one the profile names
if [ -n "$pys" ]; then
	printf 'def hot():\n    s = ""\n    for i in range(20000):\n        s += str(i)\n    return s\ndef cold():\n    return sum(range(1000))\nfor _ in range(3):\n    hot()\n    cold()\n' >c.py
	"$pys" -m cProfile -o c.prof c.py || fail "cProfile did not run"
	run "$P" report --diff c.prof c.prof
	expect_rc 0
	grep -Eq "^ +([5-9][0-9]|100)\.[0-9]+% .* hot \(c.py:1\)$" "$T/out" ||
		fail "cProfile: hot() has not the most time: $(cat "$T/out")"
	run "$P" scan --advisory --profile c.prof --format json -o sc.json c.py
	expect_rc 0
	check sc.json "[f for f in d['findings'] if f['status'] == 'measured' and f['location']['line'] == 4 and f['evidence']['numbers']['function_share'] > 0.5]"
fi
# cut short: one line naming the file and the byte
head -c 60 e.prof >cut.prof
run "$P" report --diff cut.prof cut.prof
expect_rc 2
expect_err "cut.prof: byte [0-9]*: not a pstats file"

# not a profile: one line naming the file
echo '{"hello": 1}' >x.json
run "$P" report --diff x.json x.json
expect_rc 2
expect_err "x.json: a JSON document, but neither a speedscope file"
# collapsed stacks whose first frame is a bracket (native profiles'
# "[unknown]") are still collapsed stacks, not JSON
printf '[unknown];main 3\nmain 1\n' >n.folded
run "$P" report --diff n.folded n.folded
expect_rc 0
grep -Eq "100.00% +100.00% +\+0.00  main$" "$T/out" || fail "bracketed folded: $(cat "$T/out")"
