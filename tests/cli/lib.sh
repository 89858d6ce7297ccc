# Shared by the CLI tests: sourced, never run. CTest sets PERFLOOP (the
# binary), PERFLOOP_SRC and PERFLOOP_BUILD. Exit 77 means skipped.
set -u
: "${PERFLOOP:?set by ctest}"
: "${PERFLOOP_SRC:?set by ctest}"
: "${PERFLOOP_BUILD:?set by ctest}"
BUSY=$PERFLOOP_BUILD/bench/busy
T=$(mktemp -d "${TMPDIR:-/tmp}/perfloop-test.XXXXXX")
trap 'rm -rf "$T"' EXIT
cd "$T"
# what perfloop remembers per user (notices said once) stays in the test
export XDG_CACHE_HOME="$T/.cache"

fail() {
	echo "FAIL: $*" >&2
	exit 1
}
skip() {
	echo "SKIP: $*" >&2
	exit 77
}

# run CMD...: runs it, keeping stdout in $T/out, stderr in $T/err, status in $rc
run() {
	set +e
	"$@" >"$T/out" 2>"$T/err"
	rc=$?
	set -e
}

expect_rc() {
	[ "$rc" -eq "$1" ] || fail "expected exit $1, got $rc; stderr: $(cat "$T/err"); stdout ends: $(tail -8 "$T/out" 2>/dev/null)"
}

# expect_err PATTERN: stderr has one line and it matches
expect_err() {
	grep -q -- "$1" "$T/err" || fail "stderr lacks '$1': $(cat "$T/err")"
}

# j FILE EXPR: evaluate a Python expression over the JSON document `d`
j() {
	python3 -c "import json,sys; d=json.load(open(sys.argv[1])); print($2)" "$1"
}

# check COND-EXPR FILE: assert a Python expression over `d` is true
check() {
	python3 -c "import json,sys; d=json.load(open(sys.argv[1])); sys.exit(0 if ($2) else 1)" "$1" ||
		fail "$1: expected $2"
}

# refigure FILE...: a summary whose samples a test made up gets the wall-time
# figures perfloop's reader checks against them (stats.wall_s n, p50, cv;
# dimensions.timing value, cv): the median and CV of the means of each
# benchmark's batches of counted runs
refigure() {
	python3 - "$@" <<'PY' || fail "refigure $*"
import json, statistics, sys
for path in sys.argv[1:]:
    d = json.load(open(path))
    for b in d["benchmarks"]:
        k = max(b.get("batch") or 1, 1)
        runs = [s["wall_s"] for s in b["samples"] if s.get("counted", True)]
        x = [sum(runs[i:i + k]) / k for i in range(0, len(runs) - k + 1, k)]
        if not x:
            continue
        mean = statistics.fmean(x)
        cv = statistics.stdev(x) / abs(mean) if len(x) > 1 and mean else 0.0
        w = (b.get("stats") or {}).get("wall_s")
        if w:
            w.update(n=len(x), p50=statistics.median(x), cv=cv)
        t = (b.get("dimensions") or {}).get("timing")
        if t:
            t.update(value=statistics.median(x), cv=cv)
    json.dump(d, open(path, "w"))
PY
}

# new_repo DIR: create an empty git repository with an identity and enter it
new_repo() {
	git init -q "$1"
	cd "$1"
	git config user.email t@example.com
	git config user.name t
}

# work_sh SECONDS: a work.sh that sleeps SECONDS and computes in
# proportion ($BUSY, 20 M iterations a second of sleep), so that its wall
# time and its simulated instructions move together: where the wall time
# is too noisy to decide, the counts decide (bench --sim), and a turn's
# verdict does not depend on a quiet machine
work_sh() {
	printf '#!/bin/sh\nsleep %s\n"%s" %s\n' "$1" "$BUSY" "$(awk -v s="$1" 'BEGIN { printf "%d", s * 20000000 }')" >work.sh
}

# loop_template DIR [SECONDS]: a repository for the loop's fault tests,
# entered: a committed work.sh (work_sh SECONDS, 0.1 unless given) and
# notes.txt, an uncommitted edit of the user's to notes.txt, a baseline of
# work.sh (3 runs; skips where the machine is too noisy for one); base is
# the base commit
loop_template() {
	new_repo "$1"
	work_sh "${2:-0.1}"
	chmod +x work.sh
	echo notes >notes.txt
	git add -A
	git commit -qm base
	echo "user's work in progress" >>notes.txt
	run "$PERFLOOP" baseline --bench ./work.sh -n work --runs 3
	[ "$rc" -eq 1 ] && skip "too noisy for a baseline: $(cat "$T/err")"
	expect_rc 0
	base=$(git rev-parse HEAD)
}

# PIN: a prefix pinning a measured run to one CPU, where taskset exists.
# Shared VMs' vCPUs can differ in speed, which makes unpinned runs bimodal.
if command -v taskset >/dev/null 2>&1; then
	PIN="taskset -c $(($(nproc) - 1))"
else
	PIN=""
fi

# started PID NAME: wait until the background job PID runs NAME (the
# forked shell execs it a moment later; under load a reader could see the
# shell)
started() {
	_i=0
	until [ "$(cat "/proc/$1/comm" 2>/dev/null)" = "$2" ]; do
		_i=$((_i + 1))
		[ $_i -lt 200 ] || fail "$2 (pid $1) never started"
		sleep 0.05
	done
}

# pythons311: the distinct CPython 3.11 interpreters on this machine
# (Debian's /usr/bin/python3 and the python3 on the PATH, which may be a
# different build), one path per line.
pythons311() {
	for p in /usr/bin/python3 "$(command -v python3 || true)"; do
		[ -n "$p" ] && [ -x "$p" ] || continue
		"$p" -c 'import sys; sys.exit(0 if sys.version_info[:2] == (3, 11) and sys.implementation.name == "cpython" else 1); ' 2>/dev/null || continue
		"$p" -c 'import sys; print(sys.executable)'
	done | awk '!seen[$0]++'
}

# pythons: every CPython perfloop profile reads on this machine, one
# runner per line: the 3.11s above, then, as root, a wrapper per
# interpreter in each root under .deps/pyroots (scripts/install-test-pythons
# builds Debian sid's 3.13+; docs/profile.md tells how to add Ubuntu's 3.12)
# that runs it with chroot(8). The test programs are copied into each root
# at the same absolute paths, so every runner takes the same arguments.
pythons() {
	pythons311
	pythons_rooted
}

# pythons_rooted: the chroot runners of pythons() alone
pythons_rooted() {
	[ "$(id -u)" = 0 ] || return 0
	for root in "$PERFLOOP_SRC"/.deps/pyroots/*; do
		[ -f "$root/.ready" ] || continue
		for exe in "$root"/usr/bin/python3.[0-9]*; do
			case "$exe" in *-config | *[!0-9.]) continue ;; esac
			[ -f "$exe" ] && [ ! -L "$exe" ] || continue
			v=${exe##*/python}
			w=$T/pyrun/${root##*/}-python$v
			if [ ! -x "$w" ]; then
				mkdir -p "$T/pyrun" "$root$PERFLOOP_SRC/tests/cli" "$root$PERFLOOP_SRC/examples"
				cp -ru "$PERFLOOP_SRC/tests/cli/py" "$root$PERFLOOP_SRC/tests/cli/"
				cp -ru "$PERFLOOP_SRC/examples/profile" "$root$PERFLOOP_SRC/examples/"
				chroot_runner "$w" "$root" "/usr/bin/python$v"
			fi
			echo "$w"
		done
	done
}

# chroot_runner FILE ROOT PROGRAM: write FILE, an executable that runs
# PROGRAM (a path inside ROOT) under chroot(8) with its arguments, and
# names ROOT for pyroot
chroot_runner() {
	printf '#!/bin/sh\n# root: %s\nexec chroot %s %s "$@"\n' "$2" "$2" "$3" >"$1"
	chmod +x "$1"
}

# pyroot RUNNER: the root a runner from pythons() chroots into; empty for
# the host's interpreters
pyroot() {
	[ "$(head -c 2 "$1" 2>/dev/null)" = "#!" ] || return 0
	sed -n 's/^# root: //p' "$1" 2>/dev/null | head -1
}

# fake_nvml: build the NVML stand-in (tests/cli/fake_nvml.c) as
# $T/nvml/libnvidia-ml.so.1 and point perfloop at it; FAKE_NVML scripts it
fake_nvml() {
	mkdir -p "$T/nvml"
	cc -shared -fPIC -O1 -o "$T/nvml/libnvidia-ml.so.1" "$PERFLOOP_SRC/tests/cli/fake_nvml.c" ||
		fail "cannot build the NVML stand-in"
	PERFLOOP_NVML_LIB=$T/nvml/libnvidia-ml.so.1
	export PERFLOOP_NVML_LIB
}

# torch_python: Debian's /usr/bin/python3 (CPython 3.11) with torch, in
# $PY; skip (77) where it is not there
torch_python() {
	PY=/usr/bin/python3
	[ -x $PY ] && $PY -c 'import sys; sys.exit(0 if sys.version_info[:2] == (3, 11) else 1)' 2>/dev/null ||
		skip "no CPython 3.11 at $PY"
	$PY -c 'import torch' 2>/dev/null || skip "torch is not importable by $PY (apt install python3-torch)"
}

# valid SCHEMA FILE: FILE validates against docs/schemas/SCHEMA (not
# checked where Debian's python3-jsonschema is missing)
valid() {
	/usr/bin/python3 - "$PERFLOOP_SRC/docs/schemas/$1" "$2" <<'PY' || fail "$2 is not valid against $1"
import json, sys
try:
    import jsonschema
except ImportError:
    sys.exit(0)
schema = json.load(open(sys.argv[1]))
schema.pop("$id", None)  # a name, not a URL: local $refs resolve against the document
jsonschema.validate(json.load(open(sys.argv[2])), schema)
PY
}

# wait_mapped PATTERN FILE: the PID of the process whose command line
# matches PATTERN (pgrep -f) once it maps FILE, within 5 s; else empty
wait_mapped() {
	for _ in $(seq 50); do
		_pid=$(pgrep -f "$1" | head -1 || true)
		[ -n "$_pid" ] && grep -q "$2" "/proc/$_pid/maps" 2>/dev/null && { echo "$_pid"; return 0; }
		sleep 0.1
	done
}

# need_perf_events: skip unless this machine lets perf_event_open sample
# (cpu-clock on this process)
need_perf_events() {
	_probe=$(python3 -c '
import ctypes, os, struct
attr = bytearray(128); struct.pack_into("IIQ", attr, 0, 1, 128, 0)
libc = ctypes.CDLL(None, use_errno=True)
fd = libc.syscall(298, bytes(attr), 0, -1, -1, 0)
print("ok" if fd >= 0 else os.strerror(ctypes.get_errno()))' 2>/dev/null || echo "no python")
	[ "$_probe" = ok ] || skip "perf_event_open is not allowed here ($_probe)"
}
