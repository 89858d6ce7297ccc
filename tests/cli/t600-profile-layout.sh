#!/bin/sh
# The layout perfloop profile reads equals each CPython's own headers, for
# every interpreter the tests have (pythons in lib.sh): Debian's 3.11
# (python3-dev), the python3 on the PATH, and those in .deps/pyroots.
# 3.11/3.12: offsetof() of every field (py311.h, py312.h), a mismatch fails
# to compile; 3.13+: where perfloop looks in _Py_DebugOffsets (pydebug.h).
. "$PERFLOOP_SRC/tests/cli/lib.sh"
checked=0
for py in $(pythons); do
	root=$(pyroot "$py")
	inc=$root$("$py" -c 'import sysconfig; print(sysconfig.get_paths()["include"])')
	if [ ! -f "$inc/internal/pycore_frame.h" ]; then
		echo "no internal headers for $py in $inc" >&2
		continue
	fi
	sysinc=/usr/include
	[ -n "$root" ] && sysinc=$root/usr/include # its pyconfig.h, after our libc
	cc -std=c11 -I"$inc" -idirafter "$sysinc" -I"$PERFLOOP_SRC/src/profile/python" \
		"$PERFLOOP_SRC/tests/cli/py_layout.c" -o "$T/layout" 2>"$T/cc.err" ||
		fail "$py: $(cat "$T/cc.err")"
	"$T/layout" || fail "$py: layout program failed"
	checked=$((checked + 1))
done
[ "$checked" -gt 0 ] || skip "no CPython with its internal headers (python3-dev)"
echo "checked $checked interpreter(s)"
