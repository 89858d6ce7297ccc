#!/bin/bash
# perfloop profile's bad input and faults: one clear line and exit 2 for a
# process that does not exist, is not Python or cannot be read; Ctrl-C and
# --duration write what was gathered and stop the launched program.
. "$PERFLOOP_SRC/tests/cli/lib.sh"

run "$PERFLOOP" profile
expect_rc 2
expect_err "nothing to profile"
run "$PERFLOOP" profile -p 1 -- python3 -c pass
expect_rc 2
expect_err "either -p PID or a command"
run "$PERFLOOP" profile -r 0 -- true
expect_rc 2
expect_err "rate"
run "$PERFLOOP" profile --format svg,pdf -- true
expect_rc 2
expect_err "format"
run "$PERFLOOP" profile -p notapid
expect_rc 2
expect_err "pid"

# a PID that does not exist
run "$PERFLOOP" profile -p 4194000
expect_rc 2
expect_err "no process with PID 4194000"
[ "$(wc -l <err)" -eq 1 ] || fail "more than one line: $(cat err)"

# not Python, with --mode python: attached, and launched
sleep 5 &
s=$!
started $s sleep
run "$PERFLOOP" profile --mode python -p $s
kill $s
expect_rc 2
expect_err "process $s (sleep 5) is not a CPython process"
run "$PERFLOOP" profile --mode python -- sleep 0.2
expect_rc 2
expect_err "'sleep' exited before a CPython interpreter could be read"
# by default (--mode auto) a program that is not Python is profiled
# natively, never refused (where perf events are allowed)
run "$PERFLOOP" profile --format none -- sleep 0.2
if ! grep -q "perf_event_open" err; then
	expect_rc 0
	grep -q "(native, " out || fail "auto did not profile sleep natively: $(cat out)"
fi
run "$PERFLOOP" profile -- /nonexistent/python3
expect_rc 2
expect_err "cannot run '/nonexistent/python3'"
[ ! -e profile.svg ] || fail "outputs written for a failed start"

# CPythons it cannot read are refused by name, never sampled: stand-ins
# with CPython's symbols (fake_python.c) for a future version, an old one,
# a free-threaded build and debug offsets without their cookie
fake() { # NAME COOKIE VERSION FREE_THREADED
	cc -O0 -o "$T/$1" -DFAKE_COOKIE="\"$2\"" -DFAKE_VERSION="$3" -DFAKE_FT="$4" \
		"$PERFLOOP_SRC/tests/cli/fake_python.c" || fail "cannot build $1"
}
fake python3.16 xdebugpy 0x031000f0 0
run "$PERFLOOP" profile -- "$T/python3.16"
expect_rc 2
expect_err "runs Python 3.16.0, which perfloop profile does not know (it reads CPython 3.11 to 3.15)"
[ "$(wc -l <err)" -eq 1 ] || fail "more than one line: $(cat err)"
fake python3.10 xxxxxxxx 0x030a08f0 0
run "$PERFLOOP" profile -- "$T/python3.10"
expect_rc 2
expect_err "runs Python 3.10.8, which perfloop profile cannot read (it reads CPython 3.11 to 3.15)"
fake python3.14t xdebugpy 0x030e0af0 1
run "$PERFLOOP" profile -- "$T/python3.14t"
expect_rc 2
expect_err "free-threaded (no-GIL) build of Python 3.14.10"
fake python3.13 notdebug 0x030d12f0 0
run "$PERFLOOP" profile -- "$T/python3.13"
expect_rc 2
expect_err "does not start with the _Py_DebugOffsets cookie"
[ ! -e profile.folded ] || fail "outputs written for a refused interpreter"

py=$(pythons311 | head -1)
[ -n "$py" ] || skip "no CPython 3.11 here for the rest"
spin='import time
def forever():
    while True: sum(range(100))
forever()'

# --duration stops a launched program and writes the profile
run "$PERFLOOP" profile -d 0.5 -r 200 -o dur -- "$py" -c "$spin"
expect_rc 0
expect_err "stopped '$py' after"
grep -q 'forever' dur.folded || fail "duration: $(cat dur.folded)"
for f in dur.svg dur.speedscope.json dur.findings.json; do [ -s $f ] || fail "$f missing"; done

# --top, --min-share and --format choose what is shown and written. The
# program splits its time between two functions, so no function can hold
# every sample: with one, --min-share 100 is reached (share >= PCT) and the
# check below flaked about one run in twenty.
split='def a():
    sum(range(200))
def b():
    sum(range(200))
while True:
    a()
    b()'
run "$PERFLOOP" profile -d 0.5 -r 200 --top 1 --min-share 100 --format folded,findings -o sel -- "$py" -c "$split"
expect_rc 0
[ "$(sed -n '/self   total/,/^$/p' "$T/out" | grep -c '%')" -eq 1 ] || fail "--top 1: $(cat "$T/out")"
[ -s sel.folded ] && [ ! -e sel.svg ] && [ ! -e sel.speedscope.json ] || fail "--format folded,findings wrote: $(ls sel.*)"
check sel.findings.json 'd["findings"] == []'

# SIGINT to perfloop alone: 130, what was gathered is written, child stopped
"$PERFLOOP" profile -r 200 -o intr -- "$py" -c "$spin" >out 2>err &
p=$!
sleep 1.5
kill -INT $p
set +e
wait $p
rc=$?
set -e
expect_rc 130
expect_err "interrupted"
grep -q 'forever' intr.folded || fail "interrupt: nothing gathered"
! pgrep -f "def forever" >/dev/null || fail "the launched program was left running"

# permission: another user cannot read our process (needs root to test)
if [ "$(id -u)" -eq 0 ] && command -v setpriv >/dev/null; then
	"$py" -c "$spin" &
	v=$!
	sleep 0.3
	chmod 755 "$T"
	set +e
	# (outputs where that user may write: the attach is what is refused)
	(cd / && setpriv --reuid=65534 --regid=65534 --clear-groups "$PERFLOOP" profile -p $v -o "/tmp/perfloop-perm-$$") >out 2>err
	rc=$?
	set -e
	kill $v
	rm -f "/tmp/perfloop-perm-$$".*
	expect_rc 2
	expect_err "CAP_SYS_PTRACE"
else
	echo "permission case not run: needs root and setpriv" >&2
fi
