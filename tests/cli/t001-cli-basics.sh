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
# "did you mean" for a mistyped command or option, nothing for a far one
run "$PERFLOOP" bnech -r 3 true
expect_rc 2
expect_err "unknown command 'bnech' (did you mean 'bench'?)"
run "$PERFLOOP" help scna
expect_err "unknown command 'scna' (did you mean 'scan'?)"
run "$PERFLOOP" bench --presicion 2 true
expect_rc 2
expect_err "unknown option '--presicion' (did you mean '--precision'?)"
run "$PERFLOOP" scan --min-severty high .
expect_err "unknown option '--min-severty' (did you mean '--min-severity'?)"
run "$PERFLOOP" bench --frobnicate true
expect_err "unknown option '--frobnicate' (see 'perfloop bench --help')"
# --color for every command; NO_COLOR and FORCE_COLOR; --color wins
printf '#include <string.h>\nint f(const char *s)\n{\n\tint n = 0;\n\tfor (int i = 0; i < strlen(s); i++)\n\t\tn++;\n\treturn n;\n}\n' >col.c
esc=$(printf '\033')
run "$PERFLOOP" scan col.c
grep -q "C001" out || fail "no finding to colour: $(cat out)"
if grep -q "$esc" out; then fail "colour into a file by default"; fi
run "$PERFLOOP" scan --color always col.c
grep -q "$esc" out || fail "--color always: no colour"
run env FORCE_COLOR=1 "$PERFLOOP" scan col.c
grep -q "$esc" out || fail "FORCE_COLOR=1: no colour"
run env FORCE_COLOR=1 "$PERFLOOP" scan --color=never col.c
if grep -q "$esc" out; then fail "--color=never: colour"; fi
run "$PERFLOOP" scan --color sometimes col.c
expect_rc 2
expect_err "option '--color': expected auto, always or never, got 'sometimes'"
# ... before the command's name too, as the top-level --help says
run "$PERFLOOP" --color always scan col.c
expect_rc 0
grep -q "$esc" out || fail "--color always before the command: no colour"
run env FORCE_COLOR=1 "$PERFLOOP" --color=never scan col.c
expect_rc 0
if grep -q "$esc" out; then fail "--color=never before the command: colour"; fi
run "$PERFLOOP" --color sometimes scan col.c
expect_rc 2
expect_err "option '--color': expected auto, always or never, got 'sometimes'"
run "$PERFLOOP" --help
grep -q -- "--color auto|always|never" out || fail "--color not in perfloop --help: $(cat out)"
echo ok
