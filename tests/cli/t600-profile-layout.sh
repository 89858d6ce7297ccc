#!/bin/bash
# The offsets perfloop profile reads (src/lib/py311.h) equal offsetof() in
# the headers of each CPython 3.11 installed here: Debian's (python3-dev)
# and the python3 on the PATH. A mismatch fails to compile.
. "$PERFLOOP_SRC/tests/cli/lib.sh"
checked=0
for py in $(pythons311); do
	inc=$("$py" -c 'import sysconfig; print(sysconfig.get_paths()["include"])')
	if [ ! -f "$inc/internal/pycore_frame.h" ]; then
		echo "no internal headers for $py in $inc" >&2
		continue
	fi
	cc -std=c11 -I"$inc" -I"$PERFLOOP_SRC/src/lib" "$PERFLOOP_SRC/tests/cli/py311_layout.c" \
		-o "$T/layout" 2>"$T/cc.err" || fail "$py: $(cat "$T/cc.err")"
	"$T/layout" || fail "$py: layout program failed"
	checked=$((checked + 1))
done
[ "$checked" -gt 0 ] || skip "no CPython 3.11 with its internal headers (python3-dev)"
echo "checked $checked interpreter(s)"
