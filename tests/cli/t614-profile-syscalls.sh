#!/bin/sh
# profile --syscalls: every system call of a launched program and its
# children through the raw_syscalls tracepoints (no ptrace). A program of
# known calls (syscalls_known.c): the counts equal strace -c -f's for every
# call strace lists, the child's getppid counted, bytes and files right,
# the four I/O findings, the program's exit status passed on, the schema;
# a Python program's slowest calls with its Python frames;
# no tracepoints (not root, no tracefs): skipped.
. "$PERFLOOP_SRC/tests/cli/lib.sh"
set -e
cc -O1 -o known "$PERFLOOP_SRC/tests/cli/syscalls_known.c" || skip "no C compiler"
mkdir scratch
run "$PERFLOOP" profile --syscalls --top 40 -o s -- ./known scratch
if [ "$rc" -eq 2 ] && grep -q "tracepoints\|perf_event_open" "$T/err"; then
	skip "no syscall tracepoints here: $(cat "$T/err")"
fi
expect_rc 0
[ -s s.syscalls.json ] || fail "no s.syscalls.json: $(cat "$T/out")"
calls() { echo "sum(c['calls'] for c in d['syscalls'] if c['name'] == '$1')"; }
# nothing lost first (a lost burst leaves every count low: said as such)
check s.syscalls.json "d['lost'] == 0"
check s.syscalls.json "$(calls getppid) == 11000"
check s.syscalls.json "$(calls write) == 7120 and $(calls fsync) == 120 and $(calls clone) == 1"
check s.syscalls.json "$(calls read) >= 2000"
check s.syscalls.json "[c for c in d['syscalls'] if c['name'] == 'getppid'][0]['timed'] == 11000"
check s.syscalls.json "[f for f in d['files'] if f['path'] == '/dev/null'][0]['writes'] == 5000"
check s.syscalls.json "[f for f in d['files'] if f['path'].endswith('scratch/data')][0]['read_bytes'] == 2000"
check s.syscalls.json "[o for o in d['opened'] if o['path'].endswith('scratch/data')][0]['opens'] == 151"
for f in "many small writes: 5000 writes of 1 bytes on average to /dev/null" \
	"many small reads: 2000 reads of 1 bytes on average from .*scratch/data" \
	"an fsync per write: 120 fsync/fdatasync for 120 writes to .*scratch/log" \
	"the same file opened 151 times: .*scratch/data"; do
	grep -q "finding (I/O): $f" "$T/out" || fail "no finding '$f': $(cat "$T/out")"
done
check s.syscalls.json "len(d['findings']) == 5"
# the slowest call is nap()'s sleep, with the stack where it waited: the
# program's functions found by unwinding the copy the switch tracepoint
# took (where the kernel has one: stacks.enabled)
if [ "$(j s.syscalls.json "d['stacks']['enabled']")" = True ]; then
	check s.syscalls.json "d['slowest'][0]['name'] in ('nanosleep', 'clock_nanosleep') and d['slowest'][0]['seconds'] >= 0.06"
	check s.syscalls.json "[f['function'] for f in d['slowest'][0]['stack'] if f['function'] in ('nap', 'main')] == ['nap', 'main']"
	check s.syscalls.json "len(d['slowest']) == 10 and d['slowest'][0]['pid'] > 0"
	grep -q "slowest calls, and where each waited:" "$T/out" || fail "no slowest calls: $(cat "$T/out")"
	grep -q "at .*nap (.*) < main (" "$T/out" || fail "no stack through nap and main: $(cat "$T/out")"
fi
valid syscalls-1.schema.json s.syscalls.json
# a Python program: the slowest calls' stacks hold its Python frames at
# the lines that waited, where the interpreter ran them (the C stack the
# kernel copies has none: they are read while the call waits)
pys=$(pythons311 | head -n 1)
if [ -n "$pys" ] && [ "$(j s.syscalls.json "d['stacks']['enabled']")" = True ]; then
	cat >waits.py <<'PY'
import os, time
def nap():
    time.sleep(0.15)
def main():
    for _ in range(3):
        nap()
    r, w = os.pipe()
    if os.fork() == 0:
        time.sleep(0.4)
        os.write(w, b"x")
        os._exit(0)
    os.read(r, 1)
    os.wait()
main()
PY
	run "$PERFLOOP" profile --syscalls -o py -- "$pys" waits.py
	expect_rc 0
	# the parent's read of the pipe (0.4 s): under main at its line
	check py.syscalls.json "[(c['name'], [(f['function'], f['line']) for f in c['stack'] if f['file'].endswith('waits.py')]) for c in d['slowest'] if c['name'] == 'read' and c['seconds'] > 0.3] == [('read', [('main', 12), ('<module>', 14)])]"
	# each nap: time.sleep's line in nap, under main's loop
	check py.syscalls.json "sum(1 for c in d['slowest'] if [(f['function'], f['line']) for f in c['stack'] if f['file'].endswith('waits.py')] == [('nap', 3), ('main', 6), ('<module>', 14)]) == 3"
	grep -q "at .*nap (waits.py:3) < main (waits.py:6) < <module> (waits.py:14)" "$T/out" ||
		fail "no Python frames in the slowest calls: $(cat "$T/out")"
	valid syscalls-1.schema.json py.syscalls.json
fi
# every call strace -c -f lists, counted the same (exit_group, which never
# returns, is one strace leaves out)
if command -v strace >/dev/null 2>&1; then
	rm -rf scratch && mkdir scratch
	strace -f -c -o strace.txt ./known scratch || fail "strace: $(cat strace.txt)"
	python3 - s.syscalls.json strace.txt <<'PY' || fail "counts differ from strace's"
import json, re, sys
d = json.load(open(sys.argv[1]))
ours = {c["name"]: c["calls"] for c in d["syscalls"]}
bad = []
for line in open(sys.argv[2]):
    m = re.match(r"\s*[\d.]+\s+[\d.]+\s+\d+\s+(\d+)\s+(?:\d+\s+)?(\w+)\s*$", line)
    if m and m.group(2) != "total" and ours.get(m.group(2)) != int(m.group(1)):
        bad.append((m.group(2), int(m.group(1)), ours.get(m.group(2))))
print(bad)
sys.exit(1 if bad else 0)
PY
fi
# the program's exit status is passed on
run "$PERFLOOP" profile --syscalls --format none -- ./known scratch 3
expect_rc 3
expect_err "exited with status 3"
# -p PID: a running program with two threads, traced for 1 s (its threads
# and calls from then on), left running; a pid that is no process refused
cat >pair.c <<'C'
#include <pthread.h>
#include <sys/syscall.h>
#include <unistd.h>
static void *other(void *a)
{
	for (;;) {
		syscall(SYS_getppid);
		usleep(2000);
	}
	return a;
}
int main(void)
{
	pthread_t t;
	pthread_create(&t, 0, other, 0);
	for (;;) {
		syscall(SYS_getpid);
		usleep(2000);
	}
}
C
cc -O1 -pthread -o pair pair.c
./pair </dev/null >/dev/null 2>&1 &
pair=$!
started "$pair" pair
_i=0
until [ "$(ls "/proc/$pair/task" | wc -l)" -eq 2 ]; do
	_i=$((_i + 1))
	[ $_i -lt 200 ] || fail "pair's second thread never started"
	sleep 0.05
done
run "$PERFLOOP" profile --syscalls -p "$pair" --duration 1 -o p
kill -0 "$pair" || fail "-p: the process did not go on"
kill "$pair"
expect_rc 0
expect_err "stopped after 1 s (--duration); the process goes on"
# each thread sleeps 2 ms a round: about 400 rounds each, at least 100
check p.syscalls.json "[c['calls'] for c in d['syscalls'] if c['name'] == 'getpid'][0] >= 100"
check p.syscalls.json "[c['calls'] for c in d['syscalls'] if c['name'] == 'getppid'][0] >= 100"
valid syscalls-1.schema.json p.syscalls.json
run "$PERFLOOP" profile --syscalls -p 999999999
expect_rc 2
[ "$(wc -l <"$T/err")" -eq 1 ] || fail "-p: $(cat "$T/err")"
run "$PERFLOOP" profile --syscalls --alloc -- ./known scratch
expect_rc 2
expect_err "one at a time"
# a tracefs perfloop had to mount is unmounted again (it stayed, and
# 'system reset' did not undo it): in a mount namespace of its own, where
# this machine lets root make one
if [ "$(id -u)" -eq 0 ] && unshare -m --propagation private true 2>/dev/null; then
	cat >"$T/ns.sh" <<SH
umount /sys/kernel/tracing 2>/dev/null
umount /sys/kernel/debug/tracing 2>/dev/null
grep -q ' /sys/kernel/tracing ' /proc/self/mounts && exit 3
"$PERFLOOP" profile --syscalls -o "$T/nsprof" -- ./known scratch >/dev/null || exit 4
grep -q ' /sys/kernel/tracing ' /proc/self/mounts && exit 5
exit 0
SH
	set +e
	unshare -m --propagation private sh "$T/ns.sh" 2>"$T/err"
	nsrc=$?
	set -e
	case $nsrc in
	0) grep -q "mounted tracefs at /sys/kernel/tracing .*and unmounted it" "$T/err" || fail "not said: $(cat "$T/err")" ;;
	3) echo "tracefs could not be unmounted in a namespace: that part not checked" ;;
	5) fail "profile --syscalls left tracefs mounted: $(cat "$T/err")" ;;
	*) fail "profile --syscalls in a mount namespace: exit $nsrc: $(cat "$T/err")" ;;
	esac
fi
echo ok
