#!/bin/sh
# perfloop history: recording by bench inside a repository, list, show,
# regressions between consecutive commits, CSV export, concurrent writers,
# and a corrupted or foreign database (a clear error, never overwritten).
. "$(dirname "$0")/lib.sh"
set -e
command -v git >/dev/null 2>&1 || skip "git is not installed"
new_repo repo
printf '#!/bin/sh\nsleep 0.02\n' >work.sh
chmod +x work.sh
git add work.sh
git commit -qm one
run "$PERFLOOP" history list
expect_rc 2
expect_err "no history yet"
# (--batch 1: the CSV export below counts runs, and a calibrated batch,
# larger under a sanitizer, would make it 8 samples of several runs)

run "$PERFLOOP" bench --quiet -w 0 -r 8 --batch 1 --contention keep -n app -- ./work.sh
expect_rc 0
[ -f .perfloop/history.db ] || fail "bench did not record"
# the same benchmark, after a commit that makes it slower
printf '#!/bin/sh\nsleep 0.06\n' >work.sh
git commit -qam two
run "$PERFLOOP" bench --quiet -w 0 -r 8 --batch 1 --contention keep -n app -- ./work.sh
expect_rc 0
run "$PERFLOOP" bench --quiet -w 0 -r 3 --no-history -n other -- sleep 0.01
expect_rc 0

run "$PERFLOOP" history list
expect_rc 0
grep -q '^app  *2 ' "$T/out" || fail "list: $(cat "$T/out")"
if grep -q '^other' "$T/out"; then fail "--no-history recorded"; fi
run "$PERFLOOP" history show app
expect_rc 0
[ "$(grep -c "$(git rev-parse --short=12 HEAD)" "$T/out")" -eq 1 ] || fail "show lacks the commit"
grep -q '^app  [▁▂▃▄▅▆▇█]\{2\}  ' "$T/out" || fail "no sparkline: $(cat "$T/out")"
run "$PERFLOOP" history show nosuch
expect_rc 2
run "$PERFLOOP" history regressions
expect_rc 1
grep -q "^app .*$(git rev-parse --short=12 HEAD~1) .*$(git rev-parse --short=12 HEAD)" "$T/out" ||
	fail "regression not found: $(cat "$T/out")"
# the HTML report draws the series with the regression marked
run "$PERFLOOP" report --format html -o h.html .perfloop/history.db
expect_rc 0
grep -q '<svg class="strip history"' h.html || fail "no history chart"
[ "$(grep -c '<circle class="point' h.html)" -eq 2 ] || fail "points: $(grep -c '<circle class="point' h.html)"
grep -q "<circle class=\"point regression\"[^>]*><title>$(git rev-parse --short=12 HEAD) .*a regression" h.html ||
	fail "the regression is not marked"
run "$PERFLOOP" report .perfloop/history.db
expect_rc 2
expect_err "--format html only"
run "$PERFLOOP" history export --csv -o h.csv
expect_rc 0
head -1 h.csv | grep -q '^created,commit,benchmark,spec_hash,sample,wall_s' || fail "csv header"
[ "$(grep -c ',"app",' h.csv)" -eq 16 ] || fail "csv rows: $(grep -c ',"app",' h.csv)"
run "$PERFLOOP" history export
expect_rc 2

# a run of uncommitted edits is recorded as such (dirty, with a digest of
# the edits) and never blamed on HEAD; the regression above still is found
printf '#!/bin/sh\nsleep 0.15\n' >work.sh
run "$PERFLOOP" bench --quiet -w 0 -r 5 --batch 1 --contention keep -n app -- ./work.sh
expect_rc 0
git checkout -q work.sh
run "$PERFLOOP" history show app
grep -q "$(git rev-parse --short=12 HEAD)  dirty:[0-9a-f]\{12\} " "$T/out" || fail "show: no dirty run: $(cat "$T/out")"
[ "$(grep -c ' clean ' "$T/out")" -eq 2 ] || fail "show: the committed runs are not clean: $(cat "$T/out")"
grep -q ' ms ' "$T/out" || fail "show: medians without a unit: $(cat "$T/out")"
run "$PERFLOOP" history regressions
expect_rc 1
[ "$(grep -c '^app ' "$T/out")" -eq 1 ] || fail "a dirty run was compared: $(cat "$T/out")"

# two writers at once: both land
"$PERFLOOP" bench --quiet -w 0 -r 5 -n p1 -- sleep 0.01 &
p1=$!
"$PERFLOOP" bench --quiet -w 0 -r 5 -n p2 -- sleep 0.01 &
p2=$!
wait $p1
wait $p2
run "$PERFLOOP" history list
grep -q '^p1 ' "$T/out" && grep -q '^p2 ' "$T/out" || fail "a concurrent write was lost: $(cat "$T/out")"

# a corrupted database: clear error, untouched; bench warns and still works
cp .perfloop/history.db good.db
rm -f .perfloop/history.db-wal .perfloop/history.db-shm
printf 'this is not a database, but somebody cares about it\n' >.perfloop/history.db
cp .perfloop/history.db before.bin
run "$PERFLOOP" history list
expect_rc 2
expect_err "not a perfloop history database"
run "$PERFLOOP" bench --quiet -w 0 -r 3 -- true
expect_rc 0
expect_err "warning: history not recorded"
cmp -s before.bin .perfloop/history.db || fail "a corrupted history was overwritten"
# a foreign SQLite database
rm -f .perfloop/history.db
python3 -c "
import sqlite3; c = sqlite3.connect('.perfloop/history.db'); c.execute('create table mine (x)'); c.commit()"
cp .perfloop/history.db before.db
run "$PERFLOOP" history list
expect_rc 2
expect_err "another application"
cmp -s before.db .perfloop/history.db || fail "a foreign database was changed"
echo ok
