#!/bin/sh
# profile -p PID follows the process, not its number (#38): program A is
# profiled, perfloop is stopped (SIGSTOP) while A exits, is reaped and its
# pid is given to program B (kernel.ns_last_pid), then perfloop goes on.
# It must end with A, in Python mode without a sample of B (it read B's
# memory and, re-attaching, profiled B) and in --syscalls mode without
# tracing on until B ends (it went by kill(pid, 0)).
# Needs root (ns_last_pid); another program taking the pid first skips.
. "$PERFLOOP_SRC/tests/cli/lib.sh"
set -e
[ "$(id -u)" = 0 ] && [ -w /proc/sys/kernel/ns_last_pid ] || skip "needs root to choose a pid"
PY=/usr/bin/python3
[ -x $PY ] || skip "no $PY"
cat >prog.py <<'EOF'
import sys, time
def first():
    end = time.time() + float(sys.argv[2])
    while time.time() < end:
        sum(range(2000))
def second():
    open("b.ready", "w").close()
    end = time.time() + float(sys.argv[2])
    while time.time() < end:
        sum(range(2000))
{"first": first, "second": second}[sys.argv[1]]()
EOF

# reuse MODE...: profile A with perfloop profile MODE -p A; B takes A's pid
# while perfloop is stopped; leaves perfloop's status in $prc, B's pid in $B
reuse() {
	rm -f b.ready
	$PY prog.py first 1.5 &
	A=$!
	started "$A" python3
	"$PERFLOOP" profile "$@" -p "$A" >"$T/out" 2>"$T/err" &
	P=$!
	sleep 0.8
	kill -STOP "$P"
	wait "$A" || true
	echo $((A - 1)) >/proc/sys/kernel/ns_last_pid
	$PY prog.py second 30 &
	B=$!
	if [ "$B" != "$A" ]; then
		kill "$B" "$P" 2>/dev/null || true
		kill -CONT "$P" 2>/dev/null || true
		wait "$B" "$P" 2>/dev/null || true
		skip "pid $A went to another program first ($B)"
	fi
	i=0
	until [ -e b.ready ]; do
		i=$((i + 1))
		[ $i -lt 200 ] || fail "B never started"
		sleep 0.05
	done
	sleep 0.3
	kill -CONT "$P"
	# perfloop should end at once; B runs 30 s
	i=0
	while kill -0 "$P" 2>/dev/null && [ $i -lt 150 ]; do
		i=$((i + 1))
		sleep 0.1
	done
	if kill -0 "$P" 2>/dev/null; then
		kill -INT "$P"
		wait "$P" || true
		kill "$B"
		wait "$B" || true
		fail "profile $* -p $A went on after $A ended and $B took its number: $(cat "$T/err")"
	fi
	set +e
	wait "$P"
	prc=$?
	set -e
	kill "$B"
	wait "$B" || true
}

reuse --mode python -o py
[ "$prc" -eq 0 ] || [ "$prc" -eq 3 ] || fail "python mode exit $prc: $(cat "$T/err")"
grep -q 'first' py.folded || fail "A's function is not in the profile: $(head -5 py.folded)"
if grep -q 'second' py.folded; then
	fail "B (pid $A after A) was sampled: $(grep second py.folded | head -3)"
fi

# --syscalls: where tracepoints are there to open
run "$PERFLOOP" profile --syscalls --duration 0.2 -o probe -- /bin/true
if [ "$rc" -eq 0 ]; then
	reuse --syscalls -o sc
	[ "$prc" -eq 0 ] || [ "$prc" -eq 3 ] || fail "--syscalls exit $prc: $(cat "$T/err")"
	[ -s sc.syscalls.json ] || fail "no sc.syscalls.json: $(cat "$T/err")"
fi
