#!/bin/sh
# --input, --output null|inherit|FILE, quoting and --shell.
. "$(dirname "$0")/lib.sh"
set -e
printf 'hello\n' >in.txt
run "$PERFLOOP" bench --quiet -w 0 -r 3 --batch 1 --contention keep --input in.txt --output o.txt -- cat
expect_rc 0
[ "$(cat o.txt)" = "$(printf 'hello\nhello\nhello')" ] || fail "--input/--output: $(cat o.txt)"
run "$PERFLOOP" bench --quiet -w 0 -r 2 --batch 1 --contention keep --output inherit -- echo visible-output
expect_rc 0
[ "$(grep -c visible-output out)" -eq 2 ] || fail "--output inherit: $(cat out)"
run "$PERFLOOP" bench --quiet -w 0 -r 2 -- echo hidden-output
[ ! -s out ] || fail "default output not discarded"
# quoting: one argument with a space, no shell
run "$PERFLOOP" bench --quiet -w 0 -r 1 --output q.txt "printf '%s|' 'a b' \"c\\\"d\""
expect_rc 0
[ "$(cat q.txt)" = 'a b|c"d|' ] || fail "quoting: $(cat q.txt)"
# no shell: a quoted pipe is an argument, not a pipe (an unquoted one is
# refused: t100)
run "$PERFLOOP" bench --quiet -w 0 -r 1 --output n.txt "echo 'a | tr a b'"
[ "$(cat n.txt)" = "a | tr a b" ] || fail "no-shell: $(cat n.txt)"
run "$PERFLOOP" bench --quiet --shell -w 0 -r 1 --output s.txt "echo a | tr a b"
[ "$(cat s.txt)" = "b" ] || fail "--shell: $(cat s.txt)"
run "$PERFLOOP" bench --quiet -r 1 "echo 'unterminated"
expect_rc 2
expect_err "unterminated"
run "$PERFLOOP" bench --quiet -r 1 --input no/such/file -- cat
expect_rc 2
expect_err "option '--input'"
run "$PERFLOOP" bench --quiet -r 1 -o no/such/dir/s.json -- touch ran
expect_rc 2
expect_err "option '--out': cannot write 'no/such/dir/s.json'"
[ ! -e ran ] || fail "benchmark ran although its output cannot be written"
run "$PERFLOOP" bench --quiet -r 1 --export-csv no/such/x.csv -- true
expect_rc 2
expect_err "option '--export-csv'"
echo ok
