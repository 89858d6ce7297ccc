#!/bin/sh
# src/ in layers (docs/DESIGN.md): no folder includes a folder above or
# beside it, no module reaches itself through its includes.
. "$(dirname "$0")/lib.sh"
set -e
out=$(python3 "$PERFLOOP_SRC/scripts/check-layers" "$PERFLOOP_SRC/src" 2>&1) || fail "$out"
# and the check can fail: an upward include in a copy of the tree is found
cp -r "$PERFLOOP_SRC/src" "$T/src"
echo '#include "loop.h"' >>"$T/src/util/words.c"
if python3 "$PERFLOOP_SRC/scripts/check-layers" "$T/src" >"$T/check.txt" 2>&1; then
	fail "an upward include passed the check"
fi
grep -q "util/words.c includes loop/loop.h: a higher layer" "$T/check.txt" || fail "$(cat "$T/check.txt")"
echo ok
