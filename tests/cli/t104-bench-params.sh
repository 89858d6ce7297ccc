#!/bin/sh
# -P lists, ranges with steps, geometric ranges, combinations, bad specs.
. "$(dirname "$0")/lib.sh"
set -e
names() { j "$1" "' '.join(b['name'] for b in d['benchmarks'])"; }
run "$PERFLOOP" bench --quiet -w 0 -r 1 -P n=10,20,30 -o a.json -- "$BUSY" "{n}"
expect_rc 0
[ "$(names a.json)" = "$BUSY 10 $BUSY 20 $BUSY 30" ] || fail "list: $(names a.json)"
check a.json "d['benchmarks'][1]['parameters'] == {'n': '20'} and d['benchmarks'][1]['argv'][1] == '20'"
run "$PERFLOOP" bench --quiet -w 0 -r 1 -P n=0..10:5 -n 'b{n}' -o b.json "$BUSY {n}"
expect_rc 0
[ "$(names b.json)" = "b0 b5 b10" ] || fail "range: $(names b.json)"
run "$PERFLOOP" bench --quiet -w 0 -r 1 -P n=1..1000*10 -n 'g{n}' -o c.json "$BUSY {n}"
expect_rc 0
[ "$(names c.json)" = "g1 g10 g100 g1000" ] || fail "factor: $(names c.json)"
run "$PERFLOOP" bench --quiet -w 0 -r 1 -P a=1,2 -P b=x,y,z -n '{a}{b}' -o d.json "$BUSY {a}"
expect_rc 0
[ "$(names d.json)" = "1x 1y 1z 2x 2y 2z" ] || fail "combinations: $(names d.json)"
run "$PERFLOOP" bench --quiet -w 0 -r 1 -P x=0.5..1.5:0.5 -n 'f{x}' -o e.json "$BUSY 1"
expect_rc 0
[ "$(names e.json)" = "f0.5 f1 f1.5" ] || fail "decimal step: $(names e.json)"
run "$PERFLOOP" bench --export-csv p.csv --quiet -w 0 -r 1 -P n=1,2 -- "$BUSY" "{n}"
expect_rc 0
head -1 p.csv | grep -q 'parameter_n' || fail "csv has no parameter column"

for bad in "n=1.." "n=5..1" "n=1..10:0" "n=1..10*1" "n=0..10*2" "=1,2" "n" "n=1,,2" "n=a..b"; do
	run "$PERFLOOP" bench -P "$bad" -- "$BUSY" 1
	expect_rc 2
	expect_err "option '-P'"
	[ "$(wc -l <err)" -eq 1 ] || fail "-P $bad: more than one line"
done
run "$PERFLOOP" bench -P n=1 -P n=2 -- "$BUSY" 1
expect_rc 2
expect_err "given twice"
# products are bounded, never wrapped: eight sweeps of 256 values made 0
# benchmarks and exit 0; 101 x 100 is refused before anything runs
# shellcheck disable=SC2046
run "$PERFLOOP" bench $(for p in a b c d e f g h; do printf -- '-P %s=1..256 ' $p; done) -- true
expect_rc 2
expect_err "more than 2^64 combinations"
run "$PERFLOOP" bench -P a=1..101 -P b=1..100 -o never.json -- true
expect_rc 2
expect_err "10100 combinations of values: at most 10000 benchmarks"
[ ! -e never.json ] || fail "a refused sweep wrote a summary"
[ "$(wc -l <"$T/err")" -eq 1 ] || fail "more than one line: $(cat "$T/err")"
echo ok
