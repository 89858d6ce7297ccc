#!/bin/sh
# profile --alloc: a program whose sites allocate known bytes (alloc_sites.c)
# profiled through the preloaded sampler. At one sample per 2 KiB each
# site's estimate has a relative standard error of about 1% (1 KiB and 256 B
# blocks) or less, so +-5% is more than 4.5 standard errors: bytes per
# site, the peak (site_b's 32 MiB), the leak list (leak_c's 16 MiB live at
# exit), exact call and byte counts, threads, a forked child, a crash, the
# growth finding, the schema; a static binary and bad options refused in
# one line.
. "$PERFLOOP_SRC/tests/cli/lib.sh"
set -e
cc -O2 -g -pthread -o sites "$PERFLOOP_SRC/tests/cli/alloc_sites.c" || skip "no C compiler"
MiB=1048576
near() { # FILE EXPR TRUTH: within 5%
	check "$1" "abs(($2) - $3) <= 0.05 * $3"
}
site() { # FUNCTION KEY: a site's value
	echo "[s['$2'] for s in d['sites'] if s['function'] == '$1'][0]"
}

run "$PERFLOOP" profile --alloc --alloc-rate 2K -o a -- ./sites
expect_rc 0
for f in a.alloc.svg a.alloc.folded a.alloc-peak.svg a.alloc-exit.svg a.alloc.json; do
	[ -s "$f" ] || fail "no $f: $(cat "$T/out")"
done
grep -q "site_a (.*alloc_sites.c:" "$T/out" || fail "the table: $(cat "$T/out")"
near a.alloc.json "$(site site_a allocated_bytes)" "64 * $MiB"
near a.alloc.json "$(site site_b allocated_bytes)" "32 * $MiB"
near a.alloc.json "$(site leak_c allocated_bytes)" "16 * $MiB"
# the peak is site_b's blocks all live; the leak is leak_c's
near a.alloc.json "$(site site_b live_at_peak_bytes)" "32 * $MiB"
near a.alloc.json "d['processes'][0]['peak_live_bytes']" "32 * $MiB"
check a.alloc.json "$(site site_a live_at_exit_bytes) == 0 and $(site site_b live_at_exit_bytes) == 0"
near a.alloc.json "$(site leak_c live_at_exit_bytes)" "16 * $MiB"
check a.alloc.json "d['live_at_exit'][0]['site']['function'] == 'leak_c' and d['live_at_exit'][0]['stack'][1]['function'] == 'leak'"
near a.alloc.json "d['live_at_exit'][0]['bytes']" "16 * $MiB"
# exact counts: the program's 131584 calls and 112 MiB (and libc's few)
check a.alloc.json "131584 <= d['allocations'] <= 131584 + 200"
check a.alloc.json "112 * $MiB <= d['allocated_bytes_exact'] <= 112 * $MiB + 65536"
check a.alloc.json "d['findings'] == [] and d['dropped'] == 0 and d['processes'][0]['finished']"
# the flame graphs: KiB by stack, site_a's under main
grep -q "main (.*alloc_sites.c:[0-9]*);churn (.*);site_a (" a.alloc.folded || fail "folded: $(cat a.alloc.folded)"
grep -q "KiB, " a.alloc.svg || fail "the flame graph does not say KiB"
valid alloc-1.schema.json a.alloc.json

# four threads allocating at once: four times site_a's bytes
run "$PERFLOOP" profile --alloc --alloc-rate 2K -o t -- ./sites threads
expect_rc 0
near t.alloc.json "$(site site_a allocated_bytes)" "256 * $MiB"
check t.alloc.json "4 * 65536 <= d['allocations'] <= 4 * 65536 + 200"

# a thread still running at the process's exit: its 200 blocks of 1 KiB
# are in the exact totals (they were lost while a thread's counts waited
# for its exit or its 256th call)
run "$PERFLOOP" profile --alloc --alloc-rate 2K -o l -- ./sites live
expect_rc 0
check l.alloc.json "200 <= d['allocations'] <= 200 + 200"
check l.alloc.json "200 * 1024 <= d['allocated_bytes_exact'] <= 200 * 1024 + 65536"

# fork without exec: the child's leak is its own process's
run "$PERFLOOP" profile --alloc --alloc-rate 2K -o f -- ./sites fork
expect_rc 0
check f.alloc.json "len(d['processes']) == 2 and all(p['finished'] for p in d['processes'])"
check f.alloc.json "[p for p in d['processes'] if p['live_at_exit_bytes'] > 15 * $MiB][0]['pid'] != [p for p in d['processes'] if p['live_at_exit_bytes'] < $MiB][0]['pid']"
near f.alloc.json "$(site leak_c live_at_exit_bytes)" "16 * $MiB"

# growth all through the run: the critical finding names leak_c
run "$PERFLOOP" profile --alloc --alloc-rate 2K -o g -- ./sites grow
expect_rc 0
grep -q "finding (critical): live memory grows through the run.*leak_c" "$T/out" || fail "growth: $(cat "$T/out")"
check g.alloc.json "d['findings'][0]['rule'] == 'memory-growth'"

# a hot site: hot_d's 1,000,000 blocks of 48 B, each freed at once (at one
# sample per 16 KiB about 2,900 samples: the estimate within 10% is 5
# standard errors); the default run's sites (65,536 calls each) are none
run "$PERFLOOP" profile --alloc --alloc-rate 16K -o h -- ./sites hot
expect_rc 0
grep -q "finding (memory): hot allocation site: about .* allocations ([0-9]*% of all) of 4[0-9] B on average in hot_d" "$T/out" ||
	fail "hot site: $(cat "$T/out")"
check h.alloc.json "[f for f in d['findings'] if f['rule'] == 'hot-allocation-site' and 'hot_d' in f['message'] and f['level'] == 4]"
check h.alloc.json "len(d['findings']) == 1"
check h.alloc.json "abs($(site hot_d allocations) - 1e6) <= 1e5"
check a.alloc.json "abs($(site site_a allocations) - 65536) <= 0.05 * 65536"
valid alloc-1.schema.json h.alloc.json

# a crash: reported as such, the samples written before it kept
run "$PERFLOOP" profile --alloc --alloc-rate 2K -o c -- ./sites crash
expect_rc 3
expect_err "was killed by SIGSEGV"
check c.alloc.json "d['samples'] > 0 and not d['processes'][0]['finished']"

# a Python program: CPython run with PYTHONMALLOC=malloc, its 20 MiB of
# bytearrays held at the peak
if [ -x /usr/bin/python3 ]; then
	printf 'keep = [bytearray(4096) for _ in range(5120)]\n' >keep.py
	run "$PERFLOOP" profile --alloc --alloc-rate 4K -o p -- /usr/bin/python3 keep.py
	expect_rc 0
	check p.alloc.json "d['processes'][0]['peak_live_bytes'] >= 0.95 * 20 * $MiB"
fi

# Python frames in the stacks, on each CPython 3.11 here: the sites are
# the Python functions that allocate (the interpreter's own C frames are
# left out, as --mode mixed shows them), bytes per function as the program
# says, in the main thread and in a threading.Thread, and the kept list's
# function holds what is live at the peak and at the end of the program's
# code (its atexit, before the interpreter's teardown frees everything)
cat >pysites.py <<'EOF'
import threading

keep = []


def site_a():  # 64 MiB of 1 MiB blocks, each freed
    for _ in range(64):
        b = bytearray(1 << 20)


def site_b():  # 16 MiB of 4 KiB blocks, each freed
    for _ in range(4096):
        b = bytearray(4096)


def leak_c():  # 8 MiB kept to the end
    for _ in range(8):
        keep.append(bytearray(1 << 20))


def main():
    site_a()
    site_b()
    leak_c()
    t = threading.Thread(target=site_a)  # site_a's other 64 MiB
    t.start()
    t.join()


main()
EOF
for py in $(pythons311); do
	run "$PERFLOOP" profile --alloc --alloc-rate 4K -o py -- "$py" pysites.py
	expect_rc 0
	site() { echo "[s for s in d['sites'] if s['function'] == '$1' and s['file'].endswith('pysites.py')][0]"; }
	check py.alloc.json "$(site site_a)['line'] == 6 and $(site site_b)['line'] == 11 and $(site leak_c)['line'] == 16"
	check py.alloc.json "abs($(site site_a)['allocated_bytes'] / (128 * $MiB) - 1) < 0.05"
	# site_b's truth is its 4096 objects whole, as the interpreter sizes them
	# (header and buffer: 4153 bytes each on 3.11), not 16 MiB: against 16
	# MiB the estimate sat 2% high by design and failed one run in twenty
	b=$("$py" -c 'import sys; print(4096 * sys.getsizeof(bytearray(4096)))')
	check py.alloc.json "abs($(site site_b)['allocated_bytes'] / $b - 1) < 0.05"
	check py.alloc.json "abs($(site leak_c)['live_at_peak_bytes'] / (8 * $MiB) - 1) < 0.05"
	check py.alloc.json "$(site site_a)['live_at_exit_bytes'] == 0"
	check py.alloc.json "d['processes'][0]['python_samples'] > 0.5 * d['processes'][0]['samples']"
	# the exact totals count the thread's few large blocks too
	check py.alloc.json "d['allocated_bytes_exact'] >= 152 * $MiB"
	# the stacks: the module, main, the function; the thread's from threading's bootstrap
	grep -q ';<module> ([^;]*pysites.py:1);main ([^;]*pysites.py:21);site_b ([^;]*pysites.py:11) ' py.alloc.folded ||
		fail "$py: no <module>;main;site_b stack in py.alloc.folded: $(grep site_b py.alloc.folded | head -3)"
	grep -q 'Thread._bootstrap (.*;Thread.run (.*;site_a ([^;]*pysites.py:6) ' py.alloc.folded ||
		fail "$py: no threading stack into site_a: $(grep site_a py.alloc.folded | head -3)"
	# by Python function: the same three, site_a first
	check py.alloc.json "d['python_sites'][0]['function'] == 'site_a' and abs(d['python_sites'][0]['allocated_bytes'] / (128 * $MiB) - 1) < 0.05"
	valid alloc-1.schema.json py.alloc.json
done

# an extension allocating for Python code: numpy's np.empty (C, no Python
# wrapper) called from arrays(); the site is numpy's C code, the Python
# function is arrays, 32 MiB of 1 MiB blocks either way
# what a Python program keeps against what it builds and drops each round
# (memray's peak, leaks and temporaries): 2 MiB kept per round in a
# module-level list, a ~25 MiB temporary list each round. At the end of the
# program's code the kept 40 MiB are live and the temporary's are not; the
# peak and end files agree with the table; the growth finding names the
# keeping function, not the temporary one.
cat >keeper.py <<'EOF'
KEEP = []


def retain():
    KEEP.append(bytearray(2 * 1024 * 1024))


def temporary():
    t = [str(j) * 10 for j in range(200000)]
    return len(t)


def main():
    for _ in range(20):
        retain()
        temporary()


main()
EOF
for py in $(pythons311); do
	run "$PERFLOOP" profile --alloc -o k -- "$py" keeper.py
	expect_rc 0
	grep -q "at the end of the program's code" out || fail "$py: live at the end not taken before the teardown: $(cat out)"
	check k.alloc.json "d['processes'][0]['live_at_exit_taken'] == 'before_teardown'"
	pys() { echo "[s for s in d['python_sites'] if s['function'] == '$1'][0]"; }
	check k.alloc.json "abs($(pys retain)['live_at_exit_bytes'] / (40 * $MiB) - 1) < 0.15"
	check k.alloc.json "[s for s in d['python_sites'] if 'listcomp' in s['function'] or s['function'] == 'temporary'][0]['live_at_exit_bytes'] < 4 * $MiB"
	grep -q "finding (critical): live memory grows through the run: .* allocated in retain (keeper.py:4)" out ||
		fail "$py: no growth finding naming retain: $(cat out)"
	# every file agrees with the table: the folded files' KiB add up to the
	# peak's and the end's live bytes
	for f in peak:peak_live_bytes exit:live_at_exit_bytes; do
		python3 - "k.alloc-${f%%:*}.folded" k.alloc.json "${f#*:}" <<'PY' || fail "$py: k.alloc-${f%%:*}.folded disagrees with the table"
import json, sys
kib = sum(int(l.rsplit(' ', 1)[1]) for l in open(sys.argv[1]) if l.strip())
want = json.load(open(sys.argv[2]))['processes'][0][sys.argv[3]]
sys.exit(0 if want > 0 and abs(kib * 1024 / want - 1) < 0.05 else 1)
PY
	done
done

if /usr/bin/python3 -c 'import numpy' 2>/dev/null; then
	cat >npsites.py <<'EOF'
import numpy as np


def arrays():
    return [np.empty(1 << 17) for _ in range(32)]


keep = arrays()
EOF
	run "$PERFLOOP" profile --alloc --alloc-rate 64K -o np -- /usr/bin/python3 npsites.py
	expect_rc 0
	check np.alloc.json "[s for s in d['python_sites'] if s['function'] == 'arrays.<locals>.<listcomp>' or s['function'] == 'arrays'][0]['allocated_bytes'] >= 32 * $MiB"
	# (the list and the arrays' headers are the interpreter's, charged to
	# arrays: a sample of those stands for about 64 KiB)
	check np.alloc.json "sum(s['allocated_bytes'] for s in d['sites'] if s['function'].startswith('arrays')) < $MiB"
	grep -q 'arrays' out || fail "no 'arrays' row in the python function table: $(cat out)"
fi

# refusals, one line each
if cc -static -O1 -o static "$PERFLOOP_SRC/tests/cli/alloc_sites.c" 2>/dev/null; then
	run "$PERFLOOP" profile --alloc -- ./static
	expect_rc 2
	expect_err "statically linked"
fi
for bad in "--alloc-rate 0" "--alloc-rate x" "--alloc-rate 1Q"; do
	# shellcheck disable=SC2086
	run "$PERFLOOP" profile $bad -- ./sites
	expect_rc 2
	expect_err "option '--alloc-rate'"
	[ "$(wc -l <"$T/err")" -eq 1 ] || fail "$bad: $(cat "$T/err")"
done
run "$PERFLOOP" profile --alloc -p $$
expect_rc 2
expect_err "launch the program"
run "$PERFLOOP" profile --alloc -- ./no-such-program
expect_rc 2
expect_err "cannot run './no-such-program'"
echo ok
