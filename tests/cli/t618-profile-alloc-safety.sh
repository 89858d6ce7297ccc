#!/bin/sh
# profile --alloc must not change the program it measures: a vfork child
# that calls _exit (posix_spawn's and Python's subprocess's way) ran the
# preload's exit path in the parent's memory and stopped its sampling
# (2.15 GiB reported as 200 MiB); a free() in a signal handler deadlocked
# on the lock the interrupted sample held (3 of 3 runs hung).
. "$(dirname "$0")/lib.sh"
set -e
cc -O0 -g -o safety "$PERFLOOP_SRC/tests/cli/alloc_safety.c" || skip "no C compiler"
MiB=1048576
for mode in vfork spawn; do
	run timeout 120 "$PERFLOOP" profile --alloc -o "$mode" -- ./safety "$mode"
	expect_rc 0
	grep -q "^done" "$T/out" || fail "$mode: the program did not finish: $(cat "$T/err")"
	# both halves counted: 128 MiB in 131072 calls (and libc's few)
	check "$mode.alloc.json" "131072 <= d['allocations'] <= 131072 + 400 and 128 * $MiB <= d['allocated_bytes_exact'] <= 128 * $MiB + 262144"
	check "$mode.alloc.json" "d['processes'][0]['finished']"
done
if [ -x /usr/bin/python3 ]; then
	cat >sub.py <<'PY'
import subprocess
keep = []
for i in range(2):
    keep.append(bytearray(8 << 20))
    try:
        subprocess.run(["/nonexistent/program"])
    except OSError:
        pass
print("done", sum(len(b) for b in keep))
PY
	run timeout 120 "$PERFLOOP" profile --alloc -o py -- /usr/bin/python3 sub.py
	expect_rc 0
	check py.alloc.json "d['allocated_bytes_exact'] >= 16 * $MiB and d['processes'][0]['finished']"
fi
# a plugin found by the program's RUNPATH ($ORIGIN/lib), itself needing a
# library beside it by its own $ORIGIN: dlopen resolves as the caller's
# (the preload's dlopen interposer resolved names as its own and failed)
mkdir -p plug/lib
cat >dep.c <<'C'
int dep_value(void) { return 41; }
C
cat >plug.c <<'C'
#include <stdlib.h>
int dep_value(void);
int plug_value(void) { free(malloc(4096)); return dep_value() + 1; }
C
cat >host.c <<'C'
#include <dlfcn.h>
#include <stdio.h>
int main(void)
{
	void *h = dlopen("libplug.so", RTLD_NOW);
	if (!h) {
		printf("dlopen: %s\n", dlerror());
		return 1;
	}
	int (*v)(void) = (int (*)(void))dlsym(h, "plug_value");
	printf("plugin %d\n", v());
	return 0;
}
C
cc -shared -fPIC -o plug/lib/libdep.so dep.c
cc -shared -fPIC -o plug/lib/libplug.so plug.c -Lplug/lib -ldep -Wl,-rpath,'$ORIGIN'
cc -o plug/host host.c -ldl -Wl,--enable-new-dtags,-rpath,'$ORIGIN/lib'
./plug/host | grep -q "plugin 42" || skip "the plugin does not load even without perfloop"
run timeout 60 "$PERFLOOP" profile --alloc --alloc-rate 1K -o plug -- ./plug/host
expect_rc 0
grep -q "plugin 42" "$T/out" || fail "dlopen by RUNPATH failed under --alloc: $(cat "$T/out")"

# a handler's free while the sample holds the lock: ends, every time
for i in 1 2 3; do
	run timeout 60 "$PERFLOOP" profile --alloc --alloc-rate 64 -o sig -- ./safety signal
	[ "$rc" -ne 124 ] || fail "run $i: a free() in a signal handler deadlocked under --alloc"
	expect_rc 0
	grep -q "^done [1-9]" "$T/out" || fail "run $i: $(cat "$T/out")"
done
echo ok
