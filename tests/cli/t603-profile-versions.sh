#!/bin/sh
# The checks of t601 (profile-programs.inc) on every CPython 3.12 and later
# the tests have: Debian sid's 3.13, 3.14, 3.15 that scripts/install-test-pythons
# puts in .deps/pyroots/debian-sid, and any other root there (docs/profile.md:
# Ubuntu's 3.12). They run under chroot(8), as in a container, and perfloop
# profiles them from outside. Skips where there is none (not root, no mirror).
. "$PERFLOOP_SRC/tests/cli/lib.sh"
pys=$(pythons_rooted)
[ -n "$pys" ] || skip "no CPython 3.12+ root in .deps/pyroots (scripts/install-test-pythons needs root and Debian's mirror)"
. "$PERFLOOP_SRC/tests/cli/profile-programs.inc"

# the same interpreters through their shared libpython3.X.so, embedded in a
# program of ours: the interpreter is found in the library, not the
# executable
embedded=0
for py in $pys; do
	root=$(pyroot "$py")
	v=${py##*-python}
	lib=$root/usr/lib/x86_64-linux-gnu/libpython$v.so.1.0
	[ -n "$root" ] && [ -f "$lib" ] && [ -d "$root/usr/include/python$v" ] || continue
	echo "== embedded libpython$v"
	# built here, run in the root: our binary needs only old glibc symbols
	cc -I"$root/usr/include/python$v" -idirafter "$root/usr/include" \
		"$PERFLOOP_SRC/tests/cli/py_embed.c" -o "$root/tmp/perfloop-embed$v" "$lib" \
		-Wl,--allow-shlib-undefined 2>"$T/cc.err" || fail "embed $v: $(cat "$T/cc.err")"
	chroot_runner "$T/embed$v" "$root" "/tmp/perfloop-embed$v"
	# (--mode python: the wrapper names no python, so auto would go native)
	run "$PERFLOOP" profile --mode python -r 500 -o emb -- "$T/embed$v" "$PERFLOOP_SRC/examples/profile/split.py"
	expect_rc 0
	grep -q "CPython $v\." out || fail "embedded $v: $(cat out)"
	has emb '^<module>;main;heavy [0-9]+$'
	has emb '^<module>;main;light [0-9]+$'
	rm -f "$root/tmp/perfloop-embed$v"
	embedded=$((embedded + 1))
done
echo "profiled $embedded embedded libpython(s)"

# 3.13+ stripped of what finds it: a copy with the _PyRuntime and
# Py_Version symbols renamed is found through the .PyRuntime section, its
# version read from the debug offsets; a copy with the section renamed too
# is found by the checked scan of its data for the debug offsets cookie
scanned=0
for py in $pys; do
	root=$(pyroot "$py")
	v=${py##*-python}
	case "$v" in 3.1[3-9]) ;; *) continue ;; esac
	[ -n "$root" ] || continue
	for hide in symbols section; do
		hidden=$root/tmp/perfloop-hidden$v
		python3 - "$root/usr/bin/python$v" "$hidden" "$hide" <<'PY' || fail "cannot hide _PyRuntime in $v"
import os, sys
b = open(sys.argv[1], "rb").read()
assert b.count(b"_PyRuntime\0") >= 1 and b.count(b"Py_Version\0") >= 1
b = b.replace(b"_PyRuntime\0", b"_PyRuntimX\0").replace(b"Py_Version\0", b"Py_VersioX\0")
if sys.argv[3] == "section":
    assert b.count(b".PyRuntime\0") == 1
    b = b.replace(b".PyRuntime\0", b".PyRuntimX\0")
open(sys.argv[2], "wb").write(b)
os.chmod(sys.argv[2], 0o755)
PY
		chroot_runner "$T/hidden$v" "$root" "/tmp/perfloop-hidden$v"
		run "$PERFLOOP" profile --mode python -r 500 -o hid -- "$T/hidden$v" "$PERFLOOP_SRC/examples/profile/split.py" 1
		expect_rc 0
		grep -q "CPython $v\." out || fail "$hide hidden, $v: $(cat out)"
		has hid '^<module>;main;heavy [0-9]+$'
		rm -f "$hidden"
		scanned=$((scanned + 1))
	done
done
echo "found $scanned stripped interpreter copies"
