#!/bin/sh
# profile --memory: the RSS read with the stacks, out of process; its rises
# charged to the stack sampled as it grew. A program that keeps 24 blocks
# of 4 MiB in grow() while spin() allocates nothing: the growth flame graph
# is grow's (its KiB at least 90% of the 96 MiB), the peak sampled matches
# the kernel's high-water mark within 2% and /usr/bin/time -v's maximum RSS
# within 2%, the JSON validates; mixed mode refuses --memory in one line
# (native mode: t613).
. "$PERFLOOP_SRC/tests/cli/lib.sh"
py=$(pythons311 | head -1)
[ -n "$py" ] || skip "no CPython 3.11 on this machine"
cat >mem.py <<'PY'
import time
keep = []
def grow():
    for _ in range(24):
        keep.append(bytearray(4 << 20))
        t = time.monotonic()
        while time.monotonic() - t < 0.03:
            pass
def spin():
    t = time.monotonic()
    x = 0
    while time.monotonic() - t < 0.5:
        x += 1
def main():
    spin()
    grow()
    spin()
main()
PY
run "$PERFLOOP" profile --memory -o m -- "$py" mem.py
expect_rc 0
grep -q "memory: RSS peak .* sampled at .* (the kernel's high-water mark: .*); it grew .* in all" out || fail "no memory line: $(cat out)"
grep -q "at the peak: .*grow (mem.py:3)" out || fail "peak stack: $(grep -A1 memory: out)"
for f in m.memory.folded m.memory.svg m.memory.json; do [ -s "$f" ] || fail "no $f"; done
python3 - m.memory.folded <<'PY' || fail "growth by stack: $(cat m.memory.folded)"
import sys
total = grow = 0
for line in open(sys.argv[1]):
    stack, n = line.rsplit(" ", 1)
    total += int(n)
    grow += int(n) if stack.endswith("grow (mem.py:3)") else 0
print("KiB charged: %d, to grow: %d" % (total, grow))
assert grow >= 0.9 * 96 * 1024, grow
assert grow >= 0.8 * total, (grow, total)
PY
check m.memory.json 'abs(d["peak_rss_bytes"] - d["max_rss_bytes"]) <= 0.02 * d["max_rss_bytes"]'
check m.memory.json 'd["charged_bytes"] <= d["grown_bytes"] and d["peak_stack"].endswith("grow (mem.py:3)")'
check m.memory.json 'len(d["series"]) > 10 and max(r for t, r in d["series"]) == d["peak_rss_bytes"]'
valid memory-1.schema.json m.memory.json
# /usr/bin/time -v's maximum RSS of the same program, run alone
if [ -x /usr/bin/time ]; then
	/usr/bin/time -v "$py" mem.py 2>time.txt || fail "time -v: $(cat time.txt)"
	kb=$(sed -n 's/.*Maximum resident set size (kbytes): //p' time.txt)
	check m.memory.json "abs(d['peak_rss_bytes'] - $kb * 1024) <= 0.02 * $kb * 1024"
fi
run "$PERFLOOP" profile --memory --mode mixed -- "$py" mem.py
expect_rc 2
expect_err "--memory: python or native mode"
exit 0
