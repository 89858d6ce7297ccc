#!/bin/sh
# --version, --help, help CMD, unknown commands.
. "$(dirname "$0")/lib.sh"
set -e
run "$PERFLOOP" --version
expect_rc 0
grep -Eq '^perfloop [0-9]+\.[0-9]+\.[0-9]+$' out || fail "version: $(cat out)"
run "$PERFLOOP" --help
expect_rc 0
grep -q 'bench' out || fail "--help lists no bench"
run "$PERFLOOP" help bench
expect_rc 0
cp out help1
run "$PERFLOOP" bench --help
expect_rc 0
cmp -s out help1 || fail "'help bench' and 'bench --help' differ"
grep -q 'Examples:' out || fail "bench --help has no examples"
run "$PERFLOOP" frobnicate
expect_rc 2
expect_err "unknown command 'frobnicate'"
run "$PERFLOOP"
expect_rc 2
run "$PERFLOOP" help nosuch
expect_rc 2
echo ok
