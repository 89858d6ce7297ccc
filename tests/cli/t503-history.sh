#!/bin/sh
# perfloop history: recording by bench inside a repository, list, show,
# regressions between consecutive commits, CSV export, concurrent writers,
# and a corrupted or foreign database (a clear error, never overwritten).
. "$(dirname "$0")/lib.sh"
set -e
# (--sim off throughout: history compares recordings by their wall and CPU
# time; the simulated counts that bench compares on a noisy machine are
# t124's)
command -v git >/dev/null 2>&1 || skip "git is not installed"
new_repo repo
# (a command whose slowdown is more work: in doubt, below, a slowdown
# stands only on its CPU time)
printf '#!/bin/sh\nexec %s 2000000\n' "$BUSY" >work.sh
chmod +x work.sh
git add work.sh
git commit -qm one
run "$PERFLOOP" history list
expect_rc 2
expect_err "no history yet"
# (--batch 1: the CSV export below counts runs, and a calibrated batch,
# larger under a sanitizer, would make it 8 samples of several runs)

run "$PERFLOOP" bench --sim off --quiet -w 0 -r 8 --batch 1 --contention keep -n app -- ./work.sh
expect_rc 0
[ -f .perfloop/history.db ] || fail "bench did not record"
# the same benchmark, after a commit that makes it slower (sixteen times
# the work: in doubt, its CPU time's interval must lie past twice, scaled
# by the speed probe's slowdown, which reached +70% beside one other test;
# with eight times the work the CPU time grew 4.4-4.9x, start-up included)
printf '#!/bin/sh\nexec %s 32000000\n' "$BUSY" >work.sh
git commit -qam two
run "$PERFLOOP" bench --sim off --quiet -w 0 -r 8 --batch 1 --contention keep -n app -- ./work.sh
expect_rc 0
run "$PERFLOOP" bench --sim off --quiet -w 0 -r 3 --no-history -n other -- sleep 0.01
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
printf '#!/bin/sh\nexec %s 128000000\n' "$BUSY" >work.sh
run "$PERFLOOP" bench --sim off --quiet -w 0 -r 5 --batch 1 --contention keep -n app -- ./work.sh
expect_rc 0
git checkout -q work.sh
run "$PERFLOOP" history show app
grep -q "$(git rev-parse --short=12 HEAD)  dirty:[0-9a-f]\{12\} " "$T/out" || fail "show: no dirty run: $(cat "$T/out")"
[ "$(grep -c ' clean ' "$T/out")" -eq 2 ] || fail "show: the committed runs are not clean: $(cat "$T/out")"
grep -q ' ms ' "$T/out" || fail "show: medians without a unit: $(cat "$T/out")"
run "$PERFLOOP" history regressions
expect_rc 1
[ "$(grep -c '^app ' "$T/out")" -eq 1 ] || fail "a dirty run was compared: $(cat "$T/out")"

# two recordings in doubt (a timing over the noise gate, or a slower speed
# probe: the machine may have run slower through one of them) differ only
# where the CPU time says so, as bench --baseline judges. Deterministic
# noise: scripts that alternate between two lengths of work or wait.
swing() { printf '#!/bin/sh\nif [ -e %s/flag ]; then rm %s/flag; %s; else touch %s/flag; %s; fi\n' "$T" "$T" "$1" "$T" "$2"; }
rm h.html h.csv # (untracked files: the recordings would be of a dirty tree)
swing "$BUSY 2000000" "$BUSY 2000000" >spin.sh
swing "sleep 0.01" "sleep 0.01" >nap.sh
printf '#!/bin/sh\nexec %s 1000000\n' "$BUSY" >batched.sh
chmod +x spin.sh nap.sh batched.sh
git add spin.sh nap.sh batched.sh
git commit -qm three
run "$PERFLOOP" bench --sim off --quiet -w 0 -r 6 --batch 1 --contention keep -n spin -- ./spin.sh
expect_rc 0
run "$PERFLOOP" bench --sim off --quiet -w 0 -r 6 --batch 1 --contention keep -n nap -- ./nap.sh
expect_rc 0
# samples of 3 runs each (bench compares the batches' means; so must the
# history, not the 18 runs as if each were independent)
run "$PERFLOOP" bench --sim off --quiet -w 0 -r 6 --batch 3 --contention keep -n batched -o "$T/b1.json" -- ./batched.sh
expect_rc 0
# thirty-two to sixty-four times the work: a regression, though in doubt; ten
# to twenty times the wait: its CPU time cannot tell, so in doubt, listed
# apart and not called a regression
swing "$BUSY 64000000" "$BUSY 128000000" >spin.sh
swing "sleep 0.1" "sleep 0.2" >nap.sh
printf '#!/bin/sh\nexec %s 8000000\n' "$BUSY" >batched.sh
git commit -qam four
run "$PERFLOOP" bench --sim off --quiet -w 0 -r 6 --batch 1 --contention keep -n spin -- ./spin.sh
expect_rc 0
run "$PERFLOOP" bench --sim off --quiet -w 0 -r 6 --batch 3 --contention keep -n batched -o "$T/b2.json" --baseline "$T/b1.json" -- ./batched.sh
expect_rc 0
run "$PERFLOOP" bench --sim off --quiet -w 0 -r 6 --batch 1 --contention keep -n nap -- ./nap.sh
expect_rc 0
run "$PERFLOOP" history regressions
expect_rc 1
from=$(git rev-parse --short=12 HEAD~1)
to=$(git rev-parse --short=12 HEAD)
sed '/^$/q' "$T/out" >"$T/called"
sed '1,/^$/d' "$T/out" >"$T/held"
grep -q "^spin  *$from  *$to  .*; $to's timing is N/A (CV .*, but its CPU time grew .*x (95% CI .*x-.*x)$" "$T/called" ||
	fail "the CPU regression in doubt was not called: $(cat "$T/out")"
if grep -q '^nap ' "$T/called"; then fail "a slower wait in doubt was called a regression: $(cat "$T/out")"; fi
head -1 "$T/held" | grep -q '^slower but in doubt, not called regressions' || fail "no doubt section: $(cat "$T/out")"
grep -q "^nap  *$from  *$to  .*; $to's timing is N/A (CV .*), and its CPU time changed .*% (95% CI .*x-.*x), not wholly past the .*x that would tell$" "$T/held" ||
	fail "the slower wait is not listed in doubt: $(cat "$T/out")"
[ "$(grep -c '^app ' "$T/called")" -eq 1 ] || fail "app's regression was lost: $(cat "$T/out")"
# the batched pair's test is bench's own: 6 batch means against 6 (the
# Mann-Whitney p of 18 runs against 18 is far smaller)
p=$(sed -n 's/^batched .*, p=\([^;]*\).*/\1/p' "$T/out")
[ -n "$p" ] || fail "the batched pair is not listed: $(cat "$T/out")"
check "$T/b2.json" "'%.2g' % d['baseline']['comparisons'][0]['p_value'] == '$p'"
run "$PERFLOOP" report --format html -o "$T/h2.html" .perfloop/history.db
expect_rc 0
grep -q "<circle class=\"point doubt\"[^>]*><title>$to .*slower but in doubt, not called a regression: .*timing is N/A" "$T/h2.html" ||
	fail "the slowdown in doubt is not marked: $(grep -c 'point doubt' "$T/h2.html")"

# two writers at once: both land
"$PERFLOOP" bench --sim off --quiet -w 0 -r 5 -n p1 -- sleep 0.01 &
p1=$!
"$PERFLOOP" bench --sim off --quiet -w 0 -r 5 -n p2 -- sleep 0.01 &
p2=$!
wait $p1
wait $p2
run "$PERFLOOP" history list
grep -q '^p1 ' "$T/out" && grep -q '^p2 ' "$T/out" || fail "a concurrent write was lost: $(cat "$T/out")"

# a database of schema 1 (before the tree's state and the batch): migrated
# in place to the current schema, its recordings compared run by run
python3 - "$T/old.db" <<'PY'
import sqlite3, sys
c = sqlite3.connect(sys.argv[1])
c.executescript("""
CREATE TABLE runs (id INTEGER PRIMARY KEY, created TEXT NOT NULL, commit_id TEXT,
 tool_version TEXT, fingerprint TEXT NOT NULL);
CREATE TABLE benchmarks (id INTEGER PRIMARY KEY, run_id INTEGER NOT NULL REFERENCES runs(id),
 name TEXT NOT NULL, command TEXT NOT NULL, spec_hash TEXT NOT NULL, p50 REAL, n INTEGER, cv REAL);
CREATE TABLE samples (bench_id INTEGER NOT NULL REFERENCES benchmarks(id), idx INTEGER NOT NULL,
 wall_s REAL NOT NULL, user_s REAL, sys_s REAL, max_rss_bytes INTEGER, exit_code INTEGER,
 counted INTEGER NOT NULL);
CREATE INDEX benchmarks_by_name ON benchmarks(name, run_id);
PRAGMA application_id=1885760624; PRAGMA user_version=1;
""")
for r, (commit, base) in enumerate([("a" * 40, 0.010), ("b" * 40, 0.020)], 1):
    c.execute("INSERT INTO runs VALUES (?, ?, ?, '0.1', '{}')", (r, "2026-01-0%dT00:00:00Z" % r, commit))
    c.execute("INSERT INTO benchmarks VALUES (?, ?, 'legacy', './x', 'h', ?, 6, 0.01)", (r, r, base))
    for i in range(6):
        c.execute("INSERT INTO samples VALUES (?, ?, ?, ?, 0, 0, 0, 1)", (r, i, base * (1 + i / 1000), base))
c.commit()
PY
run "$PERFLOOP" history --db "$T/old.db" regressions
expect_rc 1
grep -q "^legacy  *aaaaaaaaaaaa  *bbbbbbbbbbbb  *2\.0" "$T/out" || fail "schema 1: $(cat "$T/out")"
python3 - "$T/old.db" <<'PY' || fail "schema 1 was not migrated"
import sqlite3, sys
c = sqlite3.connect(sys.argv[1])
assert c.execute("PRAGMA user_version").fetchone()[0] == 3
assert "batch" in [r[1] for r in c.execute("PRAGMA table_info(benchmarks)")]
assert "tree" in [r[1] for r in c.execute("PRAGMA table_info(runs)")]
PY

# a corrupted database: clear error, untouched; bench warns and still works
cp .perfloop/history.db good.db
rm -f .perfloop/history.db-wal .perfloop/history.db-shm
printf 'this is not a database, but somebody cares about it\n' >.perfloop/history.db
cp .perfloop/history.db before.bin
run "$PERFLOOP" history list
expect_rc 2
expect_err "not a perfloop history database"
run "$PERFLOOP" bench --sim off --quiet -w 0 -r 3 -- true
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
# a damaged page in a real history: an error, never an empty history or
# "no regressions" with exit 0
python3 - <<'PY'
data = bytearray(open('good.db', 'rb').read())
size = int.from_bytes(data[16:18], 'big') or 65536
pages = len(data) // size
assert pages >= 3, pages
# every page past the schema's: garbage where the b-trees were
for p in range(1, pages):
    data[p * size:(p + 1) * size] = bytes([0xA5]) * size
open('.perfloop/history.db', 'wb').write(data)
PY
for req in list regressions "show t"; do
	# shellcheck disable=SC2086
	run "$PERFLOOP" history $req
	expect_rc 2
	expect_err "damaged"
	[ ! -s "$T/out" ] || fail "history $req printed a table over a damaged database: $(cat "$T/out")"
done
run "$PERFLOOP" report --format html -o damaged.html .perfloop/history.db
expect_rc 2
expect_err "damaged"
[ ! -e damaged.html ] || fail "a report was drawn from a damaged database"
echo ok
