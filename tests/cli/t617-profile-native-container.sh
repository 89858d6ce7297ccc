#!/bin/sh
# profile --mode native of a program in another mount namespace (as in a
# container) whose library has the same path as a different file on this
# host: the namespace bind-mounts its own build of $T/lib/libpl.so (its
# leaf is ns_only_leaf) over the host's (host_only_leaf, the same code at
# the same offsets). Its frames must come from the file it mapped, reached
# through /proc/PID/root, launched (perf's MMAP2 records) and attached with
# -p (/proc/PID/maps). Before, the launched profile showed no name there
# (the host's file refused by its inode) and the attached one the host's:
# host_only_leaf, wrong. Needs root, unshare and perf events.
. "$PERFLOOP_SRC/tests/cli/lib.sh"
set -e
[ "$(id -u)" = 0 ] || skip "needs root (mount namespaces)"
command -v unshare >/dev/null || skip "no unshare"
need_perf_events
mkdir -p ns host lib
cat >pl.c <<'C'
#include <time.h>
#ifdef NS
#define LEAF ns_only_leaf
#else
#define LEAF host_only_leaf
#endif
__attribute__((noinline)) double LEAF(long n)
{
	volatile double x = 0;
	for (long i = 0; i < n; i++)
		x += i * 0.5;
	return x;
}
double work(double seconds)
{
	struct timespec a, b;
	double x = 0;
	clock_gettime(CLOCK_MONOTONIC, &a);
	do {
		x += LEAF(200000);
		clock_gettime(CLOCK_MONOTONIC, &b);
	} while (b.tv_sec - a.tv_sec + (b.tv_nsec - a.tv_nsec) / 1e9 < seconds);
	return x;
}
C
printf '#include <stdlib.h>\ndouble work(double);\nint main(int c, char **v) { return work(atof(v[1])) < 0; }\n' >main.c
# (the namespace's build without -g: its frames are named from its symbol
# table and shown with its file's path, which must be the process's own)
cc -O1 -fPIC -shared -DNS -o ns/libpl.so pl.c || skip "no C compiler"
cc -O1 -g -fPIC -shared -o host/libpl.so pl.c
cp host/libpl.so lib/libpl.so
cc -O1 -g -o prog main.c -Llib -lpl -Wl,-rpath,"$T/lib"
nm -D lib/libpl.so | grep -q host_only_leaf || fail "the host's library: $(nm -D lib/libpl.so)"
# the namespace's own view: its file over the host's, seen only inside it
inns() { # SECONDS: run prog in a private mount namespace
	unshare --mount --propagation private sh -c "mount --bind '$T/ns/libpl.so' '$T/lib/libpl.so' && exec '$T/prog' $1"
}
(inns 0.1) 2>ns.err || skip "cannot bind-mount in a private mount namespace: $(cat ns.err)"
leaf_share() { # FOLDED NAME: the share of samples whose stack has NAME
	awk -v f="$2" '{n=$NF; t+=n} index($0, f) {s+=n} END {printf "%d", t ? 100*s/t : 0}' "$1"
}

# launched: the namespace's process maps the namespace's file
run "$PERFLOOP" profile --mode native --format folded -o l -- sh -c "$(command -v unshare) --mount --propagation private sh -c \"mount --bind '$T/ns/libpl.so' '$T/lib/libpl.so' && exec '$T/prog' 1\""
expect_rc 0
! grep -q host_only_leaf l.folded || fail "launched: the host's library read: $(grep host_only_leaf l.folded | head -3)"
[ "$(leaf_share l.folded 'work (')" -ge 50 ] || fail "launched: work: $(sort -t' ' -k2 -n l.folded | tail -3)"
[ "$(leaf_share l.folded "work (lib/libpl.so")" -ge 50 ] || fail "launched: work's file: $(sort -t' ' -k2 -n l.folded | tail -3)"
[ "$(leaf_share l.folded ';ns_only_leaf (')" -ge 50 ] || fail "launched: ns_only_leaf: $(sort -t' ' -k2 -n l.folded | tail -3)"

# attached with -p: /proc/PID/maps names the path, the file is the namespace's
inns 3 &
bg=$!
victim=$(wait_mapped "$T/prog 3" "$T/lib/libpl.so")
[ -n "$victim" ] || { kill $bg 2>/dev/null; fail "the program in the namespace did not start"; }
run "$PERFLOOP" profile --mode native -p "$victim" -d 0.7 --format folded -o a
kill "$victim" 2>/dev/null || true
wait $bg 2>/dev/null || true
expect_rc 0
! grep -q host_only_leaf a.folded || fail "attached: the host's library read: $(grep host_only_leaf a.folded | head -3)"
[ "$(leaf_share a.folded ';ns_only_leaf (')" -ge 50 ] || fail "attached: ns_only_leaf: $(sort -t' ' -k2 -n a.folded | tail -3)"
# files the namespace shares with the host (libc, the program) are read
# once for all its processes, not once per process: perfloop's peak RSS
# for 20 such processes is about that for one (reading each process's
# copy took 3.3x, 168 MB against 50 MB, and 3.4 s against 1.3 s)
# (under ASan a small quarantine: its 256 MiB of freed memory held back
# made 20 processes' peak 1.5x one's while live memory stayed 1.04x)
peak() { # N: perfloop's peak RSS (KiB) profiling N programs in a namespace
	ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}quarantine_size_mb=4" python3 -c 'import resource, subprocess, sys
subprocess.run(sys.argv[1:], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
print(resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss)' \
		"$PERFLOOP" profile --mode native --format none -- "$(command -v unshare)" --mount --propagation private \
		sh -c "for i in \$(seq $1); do '$T/prog' 0.02; done"
}
one=$(peak 1)
many=$(peak 20)
[ "$many" -lt $((one * 3 / 2)) ] || fail "20 processes: peak RSS $many KiB against $one KiB for one"

# shown by the process's own paths, never /proc/PID/root/...
! grep -q "/proc/[0-9]*/root" l.folded a.folded || fail "a /proc path shown: $(grep -h "/proc/[0-9]*/root" l.folded a.folded | head -2)"
echo "read a library in another mount namespace, not the host's file of its name"
