#!/bin/sh
# profile --memory: the RSS read with the stacks, out of process; its rises
# charged to the stack sampled as it grew. A program that keeps 24 blocks
# of 4 MiB in grow() while spin() allocates nothing: the growth flame graph
# is grow's (its KiB at least 90% of the 96 MiB), the peak sampled matches
# the kernel's high-water mark within 2% and /usr/bin/time -v's maximum RSS
# within 2%, PSS and USS (smaps_rollup) hold the 96 MiB and stay under the
# RSS, the JSON validates; the same in mixed mode (native mode: t613).
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
check m.memory.json 'd["peak_pss_bytes"] >= 96 * 2**20 and d["peak_uss_bytes"] <= d["peak_pss_bytes"] <= 1.01 * d["peak_rss_bytes"]'
check m.memory.json 'len(d["pss_uss_series"]) >= 4 and max(p for t, p, u in d["pss_uss_series"]) == d["peak_pss_bytes"]'
grep -q "PSS peak .*, USS peak " out || fail "no PSS line: $(grep -A2 memory: out)"
valid memory-1.schema.json m.memory.json
# /usr/bin/time -v's maximum RSS of the same program, run alone
if [ -x /usr/bin/time ]; then
	/usr/bin/time -v "$py" mem.py 2>time.txt || fail "time -v: $(cat time.txt)"
	kb=$(sed -n 's/.*Maximum resident set size (kbytes): //p' time.txt)
	check m.memory.json "abs(d['peak_rss_bytes'] - $kb * 1024) <= 0.02 * $kb * 1024"
fi
# mixed mode: the growth charged to grow's Python frame over the native
# frames that touched the pages
run "$PERFLOOP" profile --memory --mode mixed -o x -- "$py" mem.py
if grep -q "only on x86-64\|needs ptrace" err; then
	echo "ok (mixed mode cannot run here)"
	exit 0
fi
expect_rc 0
grep -q "memory: RSS peak .* (the kernel's high-water mark: .*)" out || fail "mixed: $(cat out)"
python3 - x.memory.folded <<'PY' || fail "mixed growth by stack: $(cat x.memory.folded)"
import sys
total = grow = 0
for line in open(sys.argv[1]):
    stack, n = line.rsplit(" ", 1)
    total += int(n)
    grow += int(n) if ";grow (mem.py:3)" in stack else 0
print("KiB charged: %d, under grow: %d" % (total, grow))
assert grow >= 0.8 * 96 * 1024, grow
PY
check x.memory.json 'abs(d["peak_rss_bytes"] - d["max_rss_bytes"]) <= 0.02 * d["max_rss_bytes"]'
check x.memory.json 'd["peak_pss_bytes"] >= 96 * 2**20'
valid memory-1.schema.json x.memory.json
# a program that builds and frees a 60 MiB temporary each round while it
# keeps 2 MiB a round: the rises come back down, and --memory says that
# most of its growth was RSS churn, not memory retained (the growth
# graph alone charged it all to the temporary)
cat >churn.py <<'PY'
import time
keep = []
def temp():
    big = [bytearray(1 << 20) for _ in range(60)]
    return len(big)
for _ in range(8):
    temp()
    keep.append(bytearray(2 << 20))
    time.sleep(0.05)
PY
run "$PERFLOOP" profile --memory -o churn -- "$py" churn.py
expect_rc 0
grep -q "RSS churn: .* of that growth was given back" "$T/out" || fail "no churn said: $(cat "$T/out")"
check churn.memory.json 'd["churn_bytes"] >= 0.5 * d["grown_bytes"] and d["released_bytes"] >= d["churn_bytes"] * 0.5'
valid memory-1.schema.json churn.memory.json
# ... and the retaining program of above has next to none (its falls at
# exit, the interpreter's teardown, are not churn)
check x.memory.json 'd["churn_bytes"] < 0.2 * d["grown_bytes"]'
exit 0
