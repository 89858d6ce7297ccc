#!/bin/sh
# Markdown, CSV and hyperfine exports; --baseline, and bad baseline files.
. "$(dirname "$0")/lib.sh"
set -e
run "$PERFLOOP" bench --quiet -w 0 -r 4 -n a -n b --export-markdown m.md --export-csv c.csv \
	--export-hyperfine h.json -o s.json "$BUSY 100000" "$BUSY 400000"
expect_rc 0
head -1 m.md | grep -q '| Command | Median' || fail "markdown header: $(head -1 m.md)"
[ "$(grep -c '^| `' m.md)" -eq 2 ] || fail "markdown rows: $(cat m.md)"
head -1 c.csv | grep -q '^command,median,mean,stddev' || fail "csv header"
[ "$(wc -l <c.csv)" -eq 3 ] || fail "csv rows"
check h.json "[r['command'] for r in d['results']] == ['a', 'b']"
# every run is exported (4 samples of `batch` runs)
check h.json "all(len(r['times']) == 4 * $(j s.json "d['benchmarks'][0]['batch']") and len(r['exit_codes']) == len(r['times']) for r in d['results'])"
check h.json "all(k in d['results'][0] for k in ['mean','stddev','median','user','system','min','max'])"

# compare with the saved run
run "$PERFLOOP" bench --quiet -w 0 -r 4 -n a -n b --baseline s.json -o s2.json "$BUSY 100000" "$BUSY 400000"
expect_rc 0
check s2.json "d['baseline']['file'] == 's.json' and len(d['baseline']['comparisons']) == 2"
check s2.json "d['baseline']['comparisons'][0]['verdict'] in ('faster', 'slower', 'no change')"
run "$PERFLOOP" bench -w 0 -r 4 -n a --baseline s.json -- "$BUSY" 100000
expect_rc 0
grep -q 'Against baseline' out || fail "no baseline lines: $(cat out)"

# bad baselines: one line naming the file and the place, exit 2, nothing run
head -c 200 s.json >trunc.json
run "$PERFLOOP" bench -r 3 --baseline trunc.json -o x.json -- "$BUSY" 1
expect_rc 2
expect_err "trunc.json:"
[ ! -e x.json ] || fail "output written despite bad input"
sed 's/perfloop.bench\/1/perfloop.bench\/9/' s.json >schema.json
run "$PERFLOOP" bench -r 3 --baseline schema.json -- "$BUSY" 1
expect_rc 2
expect_err "schema.json: schema: expected \"perfloop.bench/1\""
python3 -c "
import json; d = json.load(open('s.json'))
d['benchmarks'][1]['samples'][2]['wall_s'] = -1
json.dump(d, open('neg.json', 'w'))"
run "$PERFLOOP" bench -r 3 --baseline neg.json -- "$BUSY" 1
expect_rc 2
expect_err "benchmarks\[1\].samples\[2\].wall_s"
run "$PERFLOOP" bench -r 3 --baseline missing.json -- "$BUSY" 1
expect_rc 2
expect_err "missing.json"
# an existing output is never half-overwritten: it stays intact on failure
echo keep >keep.json
chmod -w .
run "$PERFLOOP" bench --quiet -r 2 -o keep.json -- "$BUSY" 1
chmod +w .
if [ "$(id -u)" -ne 0 ]; then
	expect_rc 2
	[ "$(cat keep.json)" = keep ] || fail "output clobbered"
fi
ls keep.json.tmp.* >/dev/null 2>&1 && fail "temporary file left behind"
echo ok
