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
