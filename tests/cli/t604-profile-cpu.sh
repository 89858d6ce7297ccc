#!/bin/sh
# perfloop profile keeps itself off the CPU the sampled program runs on (a
# program sharing its CPU with the profiler gains samples on the lines that
# make system calls: docs/profile.md), and leaves its affinity alone when
# told to share (PERFLOOP_PROFILE_SHARE_CPU=1).
. "$PERFLOOP_SRC/tests/cli/lib.sh"
[ "$(nproc)" -ge 2 ] || skip "one CPU: nothing to keep off"
py=$(pythons311 | head -1)
[ -n "$py" ] || skip "no CPython 3.11 here"
spin='def forever():
    while True: sum(range(100))
forever()'

# observe PERFLOOP_PID: 10 looks at perfloop's allowed CPUs and the CPU its
# child runs on; prints "apart full" counts
observe() {
	python3 - "$1" <<'PY'
import os, sys, time
p = int(sys.argv[1])
def cpus(s):
    out = set()
    for part in s.split(","):
        a, _, b = part.partition("-")
        out.update(range(int(a), int(b or a) + 1))
    return out
apart = full = 0
ncpu = len(os.sched_getaffinity(0))
for _ in range(10):
    time.sleep(0.1)
    child = open(f"/proc/{p}/task/{p}/children").read().split()[0]
    stat = open(f"/proc/{child}/stat").read()
    cpu = int(stat[stat.rindex(")") + 2:].split()[36])
    allowed = cpus(next(l.split(":")[1].strip() for l in open(f"/proc/{p}/status") if l.startswith("Cpus_allowed_list")))
    apart += cpu not in allowed and len(allowed) == ncpu - 1
    full += len(allowed) == ncpu
print(apart, full)
PY
}

# profile_observe [ENV=VALUE]: profile the spinning program (until told to
# stop, so that a slow machine cannot end it before the looks are done),
# look, then stop perfloop with SIGINT; sets $1 $2 to the counts
profile_observe() {
	env "$@" "$PERFLOOP" profile -d 120 -r 1000 --format none -- "$py" -c "$spin" >out 2>err &
	p=$!
	sleep 1
	counts=$(observe $p) || { kill $p; fail "cannot observe: $(cat err)"; }
	kill -INT $p
	set +e
	wait $p
	rc=$?
	set -e
	[ "$rc" -eq 130 ] || fail "profile: exit $rc: $(cat err)"
}

profile_observe
set -- $counts
[ "$1" -ge 8 ] || fail "perfloop shared the program's CPU: apart in $1 of 10 looks"

profile_observe PERFLOOP_PROFILE_SHARE_CPU=1
set -- $counts
[ "$2" -eq 10 ] || fail "PERFLOOP_PROFILE_SHARE_CPU=1: affinity changed ($2 of 10 looks full)"
echo "kept off the program's CPU; left alone when told to share"
