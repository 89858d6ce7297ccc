#!/bin/sh
# One command after --: the summary document, the table, --json, --quiet.
. "$(dirname "$0")/lib.sh"
set -e
run "$PERFLOOP" bench -w 2 -r 5 -o s.json -- "$BUSY" 1000
expect_rc 0
grep -q 'Benchmark 1:' out || fail "no table: $(cat out)"
grep -q 'Time (median ± MAD)' out || fail "no median line"
check s.json "d['schema'] == 'perfloop.bench/1' and d['interrupted'] is False"
# -r 5: five samples, each the mean of `batch` runs; every run is kept
check s.json "len(d['benchmarks']) == 1 and d['benchmarks'][0]['stats']['wall_s']['n'] == 5"
check s.json "len([s for s in d['benchmarks'][0]['samples'] if s['counted']]) == 5 * d['benchmarks'][0]['batch'] and all(s['counted'] or s['contended'] for s in d['benchmarks'][0]['samples'])"
check s.json "d['benchmarks'][0]['argv'] == ['$BUSY', '1000']"
check s.json "d['benchmarks'][0]['stats']['wall_s']['n'] == 5"
check s.json "all(k in d['benchmarks'][0]['stats']['wall_s'] for k in ['min','p50','mean','stdev','cv','mad','p90','p99','max','ci95_median','outliers'])"
check s.json "d['benchmarks'][0]['stats']['wall_s']['min'] <= d['benchmarks'][0]['stats']['wall_s']['p50'] <= d['benchmarks'][0]['stats']['wall_s']['max']"
check s.json "all(s['exit_code'] == 0 and s['wall_s'] > 0 and s['max_rss_bytes'] > 0 for s in d['benchmarks'][0]['samples'])"
check s.json "set(['timing','cpu','memory']) <= set(d['benchmarks'][0]['dimensions'])"
check s.json "d['benchmarks'][0]['dimensions']['timing']['unit'] == 's'"
check s.json "all(k in d['fingerprint'] for k in ['cpu_model','logical_cores','physical_cores','smt','kernel','governor','turbo','loadavg_1m','compiler','python','hostname_hash'])"
# the example is our own C program: its compiler is in .comment
check s.json "'GCC' in (d['fingerprint']['compiler'] or '') or 'clang' in (d['fingerprint']['compiler'] or '')"
check s.json "d['settings']['warmup'] == 2 and d['settings']['runs'] == 5"
check s.json "d['reference'] is None and d['comparisons'] == [] and d['baseline'] is None"

# a Python command records the interpreter version
run "$PERFLOOP" bench --quiet -r 3 -o py.json -- python3 -c pass
expect_rc 0
want=$(python3 -c 'import sys; print("%d.%d.%d" % sys.version_info[:3])')
check py.json "d['fingerprint']['python'] == '$want'"

# --json: the document alone on stdout, the table on stderr
run "$PERFLOOP" bench --json -r 3 -- "$BUSY" 1000
expect_rc 0
check out "d['schema'] == 'perfloop.bench/1'"
grep -q 'Benchmark 1:' err || fail "--json: table not on stderr"

# --quiet, not a terminal: nothing on stdout, no progress on stderr
run "$PERFLOOP" bench --quiet -r 3 -- "$BUSY" 1000
expect_rc 0
[ ! -s out ] || fail "--quiet printed: $(cat out)"
[ ! -s err ] || fail "--quiet wrote to stderr: $(cat err)"
# not a terminal: no progress escape sequences
run "$PERFLOOP" bench -r 3 -- "$BUSY" 1000
if grep -q "$(printf '\r')" err; then fail "progress drawn when not a terminal"; fi
# NO_COLOR is honoured even on stdout tables (never colour when not a tty)
if grep -q "$(printf '\033')" out; then fail "colour codes when not a terminal"; fi
# shell syntax without --shell is refused, never run as something else
# (it timed `echo` with the arguments "a | wc -l")
run "$PERFLOOP" bench -r 1 -w 0 -o never.json 'echo a | wc -l'
expect_rc 2
expect_err "command 'echo a | wc -l': a pipe '|' outside quotes"
[ "$(wc -l <"$T/err")" -eq 1 ] || fail "more than one line: $(cat "$T/err")"
[ ! -e never.json ] || fail "a refused command wrote a summary"
run "$PERFLOOP" bench -r 1 -w 0 'FOO=1 true'
expect_rc 2
expect_err "a variable assignment outside quotes"
# quoted, or with --shell, it runs
run "$PERFLOOP" bench -r 1 -w 0 --batch 1 --shell --output pipe.txt 'echo a | wc -l'
expect_rc 0
[ "$(sort -u pipe.txt)" = 1 ] || fail "--shell did not run the pipe: $(cat pipe.txt)"
run "$PERFLOOP" bench -r 1 -w 0 --batch 1 --output q.txt "echo 'a | b'"
expect_rc 0
[ "$(sort -u q.txt)" = "a | b" ] || fail "the quoted text changed: $(cat q.txt)"
echo ok
