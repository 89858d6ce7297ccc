#!/bin/sh
# perfloop profile --mode mixed: one stack per sample with the Python
# frames in place of the interpreter's, and the C below them: zlib's
# deflate under the Python function that called zlib.compress, torch.mm's
# native frames under the Python line (where Debian's python3-torch is
# importable); attaching with -p and letting the program go on; the errors.
. "$(dirname "$0")/lib.sh"
set -e
[ "$(uname -m)" = x86_64 ] || skip "mixed mode unwinds x86-64 only"
py=$(pythons311 | head -1)
[ -n "$py" ] || skip "no CPython 3.11 here"
names() { sed -e 's/ ([^;]*)//g' "$1"; }
cat >z.py <<'PY'
import zlib, os
data = os.urandom(1 << 16) * 16
def compress_all():
    for _ in range(40):
        zlib.compress(data, 9)
def squares():
    s = 0
    for i in range(2_000_000):
        s += i * i
    return s
compress_all()
squares()
PY
run "$PERFLOOP" profile --mode mixed --format folded,findings -o m -- "$py" z.py
if grep -q "cannot trace" err; then skip "no ptrace here: $(cat err)"; fi
expect_rc 0
grep -q "mixed Python + native stacks" out || fail "header: $(head -2 out)"
# deflate directly below the Python function that called it: the
# interpreter's own frames are left out
names m.folded | grep -q ';<module>;compress_all;deflate' ||
	fail "no deflate under compress_all: $(names m.folded | sort -t' ' -k2 -n | tail -3)"
# pure Python time stays on the Python function
names m.folded | grep -q ';<module>;squares [0-9]' || fail "no squares leaf: $(names m.folded | sort -t' ' -k2 -n | tail -3)"
if names m.folded | grep -q '_PyEval_EvalFrameDefault'; then fail "an interpreter frame was left in"; fi
# most samples are under compress_all (the program's larger half)
c=$(names m.folded | awk '{n=$NF; t+=n; if ($0 ~ /;compress_all;/) s+=n} END {printf "%d", 100*s/t}')
[ "$c" -ge 50 ] || fail "compress_all has $c% of the samples"

# the 3.13+ interpreters of .deps/pyroots, run under chroot as in a
# container: files are read through the process's root; their
# _PyEval_EvalFrameDefault has no symbol, so the Python frames go at the
# interpreter's innermost frame, and perfloop says so
for rpy in $(pythons_rooted); do
	root=$(pyroot "$rpy")
	[ -n "$root" ] || continue
	cp z.py "$root/tmp/perfloop-z.py"
	run "$PERFLOOP" profile --mode mixed --format folded -o r -- "$rpy" /tmp/perfloop-z.py
	rm -f "$root/tmp/perfloop-z.py"
	expect_rc 0
	names r.folded | grep -q ';<module>;compress_all;deflate' ||
		fail "$rpy: no deflate under compress_all: $(names r.folded | sort -t' ' -k2 -n | tail -2)"
	if names r.folded | grep -q '_PyEval_EvalFrameDefault'; then
		grep -q "hides _PyEval_EvalFrameDefault" err && fail "$rpy: an eval frame left in"
	fi
done

# -p: attach, profile a second, detach; the program carries on and ends well
cat >long.py <<'PY'
import time, zlib, os
data = os.urandom(1 << 15) * 8
end = time.time() + 3
def work():
    while time.time() < end:
        zlib.compress(data, 6)
work()
print("finished")
PY
"$py" long.py >long.out &
bg=$!
sleep 0.5
run "$PERFLOOP" profile --mode mixed -p $bg -d 1 --format folded -o p
expect_rc 0
names p.folded | grep -q ';work;deflate' || fail "-p: $(names p.folded | sort -t' ' -k2 -n | tail -2)"
wait $bg || fail "the program did not survive being profiled (exit $?)"
grep -q finished long.out || fail "the program did not finish"

# torch.mm's native frames under the Python line that called it
if /usr/bin/python3 -c 'import torch' 2>/dev/null; then
	cat >t.py <<'PY'
import torch
a = torch.randn(256, 256)
def train_step():
    for _ in range(400):
        b = torch.mm(a, a)
    return b
train_step()
PY
	run "$PERFLOOP" profile --mode mixed --format folded -o t -- /usr/bin/python3 t.py
	expect_rc 0
	names t.folded | grep -q ';train_step;[^ ]*\(mm\|gemm\)' ||
		fail "torch: no mm/gemm frame under train_step: $(names t.folded | sort -t' ' -k2 -n | tail -2)"
fi

# errors
run "$PERFLOOP" profile --mode mixed --subprocesses -- "$py" z.py
expect_rc 2
expect_err "does not follow subprocesses"
run "$PERFLOOP" profile --mode mixed --unwind fp -- "$py" z.py
expect_rc 2
exit 0
