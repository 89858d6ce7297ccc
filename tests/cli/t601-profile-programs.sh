#!/bin/sh
# perfloop profile on real Python programs with each CPython 3.11 here:
# Debian's /usr/bin/python3 (the interpreter in the executable) and the
# python3 on the PATH (a shared libpython). The checks are in
# profile-programs.inc; t603 runs them on CPython 3.12 and later.
. "$PERFLOOP_SRC/tests/cli/lib.sh"
pys=$(pythons311)
[ -n "$pys" ] || skip "no CPython 3.11 on this machine"
. "$PERFLOOP_SRC/tests/cli/profile-programs.inc"
