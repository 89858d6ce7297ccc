#!/bin/sh
# perfloop profile --mode native: the C program with a known split, built
# with and without frame pointers, unwound with DWARF and with frame
# pointers; the expected call chains, the split, attaching with -p, forked
# children, a stripped and a deleted executable, a program that fails, a
# Debian library without frame pointers (zlib under Python), and the errors.
. "$(dirname "$0")/lib.sh"
set -e
B=$PERFLOOP_BUILD/bench
need_perf_events

# DWARF: the whole chain, from the entry point to the leaf
CHAIN_A='_start;__libc_start_main_impl;__libc_start_call_main;main;run;phase_a;middle_a;deep_a;leaf_a '
CHAIN_B='_start;__libc_start_main_impl;__libc_start_call_main;main;run;phase_b;middle_b;deep_b;leaf_b '
# frame pointers: GCC gives the leaves no frame of their own, so their
# callers (deep_X) are skipped, and Debian's libc has none, so the chain
# stops above main's caller: what frame-pointer unwinding can see
FP_A=';main;run;phase_a;middle_a;leaf_a '
FP_B=';main;run;phase_b;middle_b;leaf_b '
# names only: "leaf_a (file:line)" -> "leaf_a"; a sample taken while the
# leaf was in the kernel (an interrupt, a page fault) ends in [kernel]: the
# chain is the same
names() { sed -e 's/ ([^;]*)//g' -e 's/;\[kernel\] / /' "$1"; }
# share STACK FOLDED: the share of samples whose stack is exactly STACK
# (a root-first prefix for the whole chain, or a tail starting with ';')
share() { names "$2" | awk -v p="$1" '{n=$NF; t+=n; i=index($0, p); if (i == 1 || (i > 1 && substr(p, 1, 1) == ";" && i + length(p) - 1 == length($0) - length(n))) s+=n} END {printf "%.1f", t ? 100*s/t : 0}'; }

for build in nofp fp; do
	for unwind in dwarf fp; do
		run "$PERFLOOP" profile --mode native --unwind $unwind -o p -- "$B/nativesplit_$build" 0.7 2
		expect_rc 0
		grep -q "native, $unwind unwinding" out || fail "$build/$unwind: $(head -3 out)"
		truth=$(python3 -c 'import json,sys; d=json.loads(open(sys.argv[1]).readline()); print("%.1f" % (100*d["a_s"]/(d["a_s"]+d["b_s"])))' out)
		if [ $unwind = dwarf ] || [ $build = fp ]; then
			# complete chains, and the split within 4 points of the program's clock
			if [ $unwind = dwarf ]; then
				a=$(share "$CHAIN_A" p.folded)
				b=$(share "$CHAIN_B" p.folded)
			else
				a=$(share "$FP_A" p.folded)
				b=$(share "$FP_B" p.folded)
			fi
			python3 -c "import sys; a,b,t=$a,$b,$truth; sys.exit(0 if a+b >= 97 and abs(a-t) <= 4 else 1)" ||
				fail "$build/$unwind: chain A $a%, chain B $b% (truth A $truth%): $(names p.folded | sort -t' ' -k2 -n | tail -4)"
		else
			# frame pointers where there are none: chains cut short, and said so
			grep -q "% of stacks complete" out || fail "no completeness line"
			c=$(sed -n 's/.* \([0-9.]*\)% of stacks complete.*/\1/p' out)
			python3 -c "import sys; sys.exit(0 if $c < 50 else 1)" || fail "nofp/fp: $c% complete?"
		fi
	done
done
# file:line from DWARF, functions grouped by their first line
grep -q 'leaf_a (.*bench/nativesplit.c:[0-9]*)' p.folded || fail "no file:line: $(head -2 p.folded)"
check p.findings.json "any(f['location']['function'] == 'leaf_a' for f in d['findings'])"
# --lines: the executed lines of leaf_a are apart
run "$PERFLOOP" profile --mode native --lines --format folded -o l -- "$B/nativesplit_fp" 0.7 1
expect_rc 0
[ "$(names l.folded | grep -c ';leaf_a ')" -ge 1 ] || fail "--lines: $(head -3 l.folded)"

# auto: a compiled program is profiled natively, never refused
run "$PERFLOOP" profile --format none -- "$B/nativesplit_fp" 0.5 0.5
expect_rc 0
grep -q "(native, dwarf unwinding)" out || fail "auto did not choose native: $(head -2 out)"

# children: a shell starting 50 short processes, then the program
run "$PERFLOOP" profile --format folded -o c -- sh -c "for i in \$(seq 50); do /bin/true; done; $B/nativesplit_fp 0.7 1"
expect_rc 0
grep -q "of 5[0-9] processes" out || fail "children: $(head -2 out)"
names c.folded | grep -q "$CHAIN_A" || fail "the grandchild's stacks are missing"

# -p: attach to a running program for a second
"$B/nativesplit_fp" 0.7 4 >/dev/null &
bg=$!
sleep 0.3
run "$PERFLOOP" profile --mode native -p $bg -d 1 --format folded -o a
kill $bg 2>/dev/null || true
wait $bg 2>/dev/null || true
expect_rc 0
names a.folded | grep -q "main;run;phase_a;middle_a;deep_a;leaf_a" || fail "-p: $(names a.folded | head -3)"

# a stripped copy: module+offset frames, no crash
cp "$B/nativesplit_fp" stripped
strip stripped
run "$PERFLOOP" profile --mode native --format folded -o s -- ./stripped 0.7 0.5
expect_rc 0
grep -q 'stripped+0x' s.folded || fail "stripped: $(head -3 s.folded)"
# a deleted executable, attached to while it runs
cp "$B/nativesplit_fp" gone
./gone 0.7 3 >/dev/null &
bg=$!
sleep 0.3
rm gone
run "$PERFLOOP" profile --mode native -p $bg -d 0.5 --format folded -o g
kill $bg 2>/dev/null || true
wait $bg 2>/dev/null || true
expect_rc 0
[ -s g.folded ] || fail "deleted executable: nothing sampled"
# a 10,000-deep recursion: the stacks are cut at the copied stack's end,
# counted as incomplete, never a crash
cat >deep.c <<'C'
#include <stdlib.h>
__attribute__((noinline)) long rec(long n) { if (n == 0) { volatile long s = 0; for (long i = 0; i < 1000000000; i++) s += i; return s; } return rec(n - 1) + 1; }
int main(int c, char **v) { (void)c; return rec(atol(v[1])) == 0; }
C
if cc -O1 -g -o deep deep.c 2>/dev/null; then
	run "$PERFLOOP" profile --mode native --format folded -o d -- ./deep 10000
	expect_rc 0
	c=$(sed -n 's/.* \([0-9.]*\)% of stacks complete.*/\1/p' out)
	python3 -c "import sys; sys.exit(0 if $c < 10 else 1)" || fail "deep recursion: $(head -2 out)"
	names d.folded | grep -q "rec;rec;rec" || fail "deep recursion: $(head -c 300 d.folded)"
fi

# a program that fails: exit 3, the profile still written
run "$PERFLOOP" profile --mode native --format folded -o f -- sh -c "$B/nativesplit_fp 0.7 0.3; exit 4"
expect_rc 3
expect_err "exited with status 4"
[ -s f.folded ] || fail "no profile for a failing program"

# Debian's zlib has no frame pointers: DWARF still unwinds through it
if [ -x /usr/bin/python3 ]; then
	run "$PERFLOOP" profile --mode native --format folded -o z -- /usr/bin/python3 -c '
import zlib, os
data = os.urandom(1 << 16) * 16
for _ in range(30): zlib.compress(data, 9)'
	expect_rc 0
	names z.folded | grep -q '_PyEval_EvalFrameDefault;.*;deflate' ||
		fail "zlib: no deflate below the interpreter: $(names z.folded | sort -t' ' -k2 -n | tail -3)"
fi

# A library built by clang and linked by lld (rustc's default linker):
# lld starts the code a page above its file offset, inside the file page
# that ends the read-only segment (a bias read from that segment put every
# address a page off: wrong names), and clang writes no .debug_aranges,
# where Debian's libdw finds no compile unit for an address (no lines, no
# inlined frames) unless perfloop indexes the units itself.
if command -v clang >/dev/null 2>&1; then
	cat >spin.c <<'EOF'
#include <time.h>
static double now(void)
{
	struct timespec t;
	clock_gettime(CLOCK_MONOTONIC, &t);
	return t.tv_sec + t.tv_nsec / 1e9;
}
double lld_spin(double secs)
{
	double s = 0, t0 = now();
	while (now() - t0 < secs)
		for (int i = 0; i < 10000; i++)
			s += i * 0.5;
	return s;
}
EOF
	cat >lldmain.c <<'EOF'
#include <stdio.h>
#include <stdlib.h>
double lld_spin(double secs);
int main(int argc, char **argv)
{
	printf("%.0f\n", lld_spin(atof(argv[1])));
	return 0;
}
EOF
	lld=-fuse-ld=lld
	clang -O1 -g -fPIC -shared $lld -o liblldspin.so spin.c 2>/dev/null || lld=
	[ -n "$lld" ] || echo "no lld here: the library linked by GNU ld"
	clang -O1 -g -fPIC -shared $lld -o liblldspin.so spin.c || fail "clang"
	gcc -O1 -g -o lldmain lldmain.c -L. -llldspin -Wl,-rpath,"$T" || fail "gcc"
	run "$PERFLOOP" profile --mode native --format folded -o lld -- ./lldmain 0.6
	expect_rc 0
	grep -q ';lld_spin ([^)]*spin\.c:[0-9]*) [0-9]*$' lld.folded ||
		fail "lld/clang library: lld_spin not named with its line: $(sort -t' ' -k2 -n lld.folded | tail -2)"
	names lld.folded | grep -q '^_start;__libc_start_main_impl;__libc_start_call_main;main;lld_spin' ||
		fail "lld/clang library: not unwound from the entry: $(names lld.folded | sort -t' ' -k2 -n | tail -2)"
fi

# --event: page faults land where memory is first touched
run "$PERFLOOP" profile --mode native --event page-faults --format folded -o pf -- "$PERFLOOP_BUILD/examples/distinct_sorted" 300000
expect_rc 0
grep -q "event page-faults" out || fail "--event: $(head -2 out)"
names pf.folded | grep -q ';main' || fail "--event page-faults: $(head -3 pf.folded)"
# a hardware counter: sampled where the machine has one, else one clear line
run "$PERFLOOP" profile --mode native --event cycles --format none -- "$B/nativesplit_fp" 0.7 0.2
if [ "$rc" -ne 0 ]; then
	expect_rc 2
	expect_err "cannot sample that event"
fi

# --kernel: the kernel's chain above the system call, named from kallsyms,
# where perf_event_paranoid allows it; one clear line where not
run "$PERFLOOP" profile --mode native --kernel --format folded -o k -- dd if=/dev/zero of=/dev/null bs=64k count=50000
if [ "$rc" -eq 0 ]; then
	names k.folded | grep -q '__libc_read;[^ ]*\[kernel\];.*read_zero \[kernel\]' ||
		names k.folded | grep -q '\[kernel\]' || fail "--kernel: no kernel frames: $(names k.folded | sort -t' ' -k2 -n | tail -2)"
else
	expect_rc 2
	expect_err "kernel call chains need kernel.perf_event_paranoid"
fi

# errors: one line, exit 2
for bad in "--mode x" "--unwind x" "--event x"; do
	# shellcheck disable=SC2086
	run "$PERFLOOP" profile $bad -- /bin/true
	expect_rc 2
	[ "$(wc -l <err)" -eq 1 ] || fail "$bad: $(cat err)"
done
run "$PERFLOOP" profile --mode native -- ./no-such-program
expect_rc 2
expect_err "cannot run './no-such-program'"
run "$PERFLOOP" profile --mode native -p 999999999
expect_rc 2
# another user's process, as that user: the message says what would allow it
if [ "$(id -u)" -eq 0 ] && command -v runuser >/dev/null 2>&1; then
	sleep 5 &
	bg=$!
	run runuser -u nobody -- "$PERFLOOP" profile --mode native -p $bg -d 0.2 --format none
	kill $bg 2>/dev/null || true
	expect_rc 2
	expect_err "perf_event_paranoid"
fi
exit 0
