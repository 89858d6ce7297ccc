#!/bin/sh
# profile --alloc must not change the program it measures (alloc_safety.c,
# alloc_plugin.c). A vfork child that called _exit ran the sampler's exit
# path in the parent's memory and stopped the parent's sampling (2.15 GiB
# reported as 200 MiB; Python's subprocess.run of a missing program left
# no totals); one that calls exit() uses up the parent's exit handlers. A
# free() in a signal handler deadlocked on the lock the interrupted sample
# held. The dlopen wrapper was the caller glibc resolved a bare name for,
# so a plugin found through the program's RUNPATH ($ORIGIN/lib) was not.
. "$PERFLOOP_SRC/tests/cli/lib.sh"
set -e
cc -O2 -g -pthread -o safety "$PERFLOOP_SRC/tests/cli/alloc_safety.c" -ldl \
	-Wl,--enable-new-dtags,-rpath,'$ORIGIN/lib' || skip "no C compiler"
MiB=1048576
near() { # FILE EXPR TRUTH: within 5%
	check "$1" "abs(($2) - $3) <= 0.05 * $3"
}

# vfork children: 160 MiB in 163840 calls and leak_c's 16 MiB in 65536,
# all the parent's, whether main returns or calls exit(); leak_c (after
# the children) still sampled
for how in return exit; do
	run timeout 120 "$PERFLOOP" profile --alloc --alloc-rate 2K -o v -- ./safety vfork "$how"
	expect_rc 0
	grep -q '^done$' "$T/out" || fail "vfork $how: the program's output: $(cat "$T/out")"
	check v.alloc.json "len(d['processes']) == 1 and d['processes'][0]['finished']"
	check v.alloc.json "229376 <= d['allocations'] <= 229376 + 400"
	check v.alloc.json "176 * $MiB <= d['allocated_bytes_exact'] <= 176 * $MiB + 262144"
	near v.alloc.json "[s['live_at_exit_bytes'] for s in d['sites'] if s['function'] == 'leak_c'][0]" "16 * $MiB"
done

# Python's subprocess (vfork, then _exit(255) in the child) of a missing
# program between allocations: the totals are there, and whole
if [ -x /usr/bin/python3 ]; then
	cat >sub.py <<'EOF2'
import subprocess
keep = []
for _ in range(3):
    keep.append(bytearray(8 << 20))
    try:
        subprocess.run(["/nonexistent/program"])
    except OSError:
        pass
keep.append(bytearray(64 << 20))
print("done", sum(len(b) for b in keep))
EOF2
	run timeout 120 "$PERFLOOP" profile --alloc -o py -- /usr/bin/python3 sub.py
	expect_rc 0
	grep -q "^done 92274688" "$T/out" || fail "python: $(cat "$T/out")"
	grep -q "no totals" "$T/out" && fail "python: $(cat "$T/out")"
	check py.alloc.json "d['processes'][0]['finished'] and d['allocated_bytes_exact'] >= 88 * $MiB"
	check py.alloc.json "d['processes'][0]['peak_live_bytes'] >= 0.9 * 88 * $MiB"
fi

# a signal handler allocating and freeing, at 10 kHz, while its thread
# samples every allocation (at 64 B): the run ends, and the exact counts
# have every call it made (a count made by a handler between the thread's
# load and store of its counter was lost)
run timeout 30 ./safety signal counts.txt
[ "$rc" -eq 0 ] || skip "the signal program fails alone ($rc): $(cat "$T/err")"
for i in 1 2 3; do
	run timeout 60 "$PERFLOOP" profile --alloc --alloc-rate 64 -o s -- ./safety signal counts.txt
	[ "$rc" -ne 124 ] || fail "run $i: hung (a signal handler's malloc or free under --alloc)"
	expect_rc 0
	read -r calls bytes <counts.txt
	check s.alloc.json "$calls <= d['allocations'] <= $calls + 2000"
	check s.alloc.json "$bytes <= d['allocated_bytes_exact'] <= $bytes + 4 * $MiB"
	check s.alloc.json "d['processes'][0]['finished']"
done

# a plugin found through the program's RUNPATH ($ORIGIN/lib), itself with
# RUNPATH $ORIGIN: its dependency, and a library it loads by bare name;
# its site (mapped after the start) is named
mkdir lib
cc -O1 -g -shared -fPIC -DDEP -o lib/libdep.so "$PERFLOOP_SRC/tests/cli/alloc_plugin.c"
cc -O1 -g -shared -fPIC -DDEP2 -o lib/libdep2.so "$PERFLOOP_SRC/tests/cli/alloc_plugin.c"
cc -O1 -g -shared -fPIC -o lib/libplug.so "$PERFLOOP_SRC/tests/cli/alloc_plugin.c" -Llib -ldep -ldl \
	-Wl,--enable-new-dtags,-rpath,'$ORIGIN'
run ./safety plugin
[ "$rc" -eq 0 ] && grep -q '^plugin 42$' "$T/out" || skip "the plugin program fails alone: $(cat "$T/err")"
run timeout 60 "$PERFLOOP" profile --alloc --alloc-rate 2K -o pl -- ./safety plugin
expect_rc 0
grep -q '^plugin 42$' "$T/out" || fail "plugin: $(cat "$T/out") $(cat "$T/err")"
near pl.alloc.json "[s['allocated_bytes'] for s in d['sites'] if s['function'] == 'plug_site'][0]" "16 * $MiB"

# libpython loaded late (an embedding program): seen at the next sample,
# its Python frames read from then on
lib=$(python3 -c 'import sysconfig as s; print(s.get_config_var("INSTSONAME") or "")' 2>/dev/null || true)
if [ -n "$lib" ] && run ./safety embed "$lib" && [ "$rc" -eq 0 ]; then
	run timeout 60 "$PERFLOOP" profile --alloc --alloc-rate 16K -o em -- ./safety embed "$lib"
	expect_rc 0
	check em.alloc.json "[s for s in d['python_sites'] if s['function'].startswith('grab')][0]['allocated_bytes'] >= 0.9 * 32 * $MiB"
fi
echo ok
