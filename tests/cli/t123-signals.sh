#!/bin/sh
# SIGINT, SIGTERM and SIGHUP (a closed terminal) at random moments, 50 times each for bench (inside a
# git repository, so the history database is written too), profile, and
# verify's ledger: whatever the moment, every file left is whole (JSON
# that parses, an SVG that ends, ledger lines that parse, a database that
# passes SQLite's integrity check), no temporary file is left behind, the
# measured program is not left running, and the exit status is 0 or
# 130 (129, 143 or 130 when the signal came before perfloop could catch it).
# The seed is printed on failure: the same moments can be replayed.
. "$(dirname "$0")/lib.sh"
set -e
command -v git >/dev/null 2>&1 || skip "git is not installed"
SEED=${PERFLOOP_SIGNAL_SEED:-$$}
N=${PERFLOOP_SIGNAL_RUNS:-50}
new_repo repo
marker="sig$$"
# ~10-20 ms a run; the marker in its name tells it from anything else
W=./work-$marker.sh
printf '#!/bin/sh\ni=0\nwhile [ $i -lt 3000 ]; do i=$((i + 1)); done\n' >$W
chmod +x $W
git add $W
git commit -qm base

rand() { # I MAX: a delay in [0, MAX) seconds, from the seed and I
	awk -v s="$((SEED * 1000 + $1))" -v m="$2" 'BEGIN { srand(s); printf "%.3f", rand() * m }'
}
sig_of() { case $(($1 % 3)) in 0) echo INT ;; 1) echo TERM ;; *) echo HUP ;; esac; }

# start CMD... in the background (exit statuses allowed besides 130 and
# 143: $OK_RC), signal it after a random delay, wait;
# sets rc, and says what happened for the failure messages
signalled() {
	i=$1
	max=$2
	shift 2
	d=$(rand "$i" "$max")
	s=$(sig_of "$i")
	"$@" >"$T/out" 2>"$T/err" &
	p=$!
	sleep "$d"
	kill -"$s" $p 2>/dev/null || true
	set +e
	wait $p
	rc=$?
	set -e
	what="run $i (seed $SEED): SIG$s after ${d}s, exit $rc"
	case " 129 130 143 $OK_RC " in
	*" $rc "*) ;;
	*) fail "$what: $(cat "$T/err")" ;;
	esac
}

# (one Python per check: pyenv's shim takes a second to start under load)
PY=python3
[ -x /usr/bin/python3 ] && PY=/usr/bin/python3
cat >"$T/whole.py" <<'PY'
# whole.py KIND:FILE...: each file that exists is whole; prints what is not
import json, os, sqlite3, sys
for arg in sys.argv[1:]:
    kind, path = arg.split(":", 1)
    if not os.path.exists(path):
        continue
    try:
        if kind == "json":
            json.load(open(path))
        elif kind == "lines":
            for n, line in enumerate(open(path), 1):
                assert line.endswith("\n"), "line %d has no end" % n
                json.loads(line)
        elif kind == "end":  # an SVG or HTML page: ends with its closing tag
            tail = open(path, "rb").read()[-64:].decode("utf-8", "replace")
            assert "</svg>" in tail or "</html>" in tail, "cut: " + tail
        elif kind == "db":
            ok = sqlite3.connect(path).execute("PRAGMA integrity_check").fetchone()[0]
            assert ok == "ok", ok
    except Exception as e:
        print("%s: %s" % (path, e))
PY
whole() {
	bad=$($PY "$T/whole.py" "$@" 2>&1)
	[ -z "$bad" ] || fail "$what: not whole: $bad"
}

no_tmp() { # DIR: nothing half-written left in it
	[ -d "$1" ] || return 0
	left=$(ls -a "$1" | grep -E '\.tmp\.|\.tmp$' || true)
	[ -z "$left" ] || fail "$what: temporary files left in $1: $left"
}

not_running() {
	sleep 0.05
	if pgrep -f "$marker" >/dev/null; then
		sleep 0.5
		pgrep -f "$marker" >/dev/null && fail "$what: the measured program was left running"
	fi
	return 0
}

# --- bench: the summary and the history ---
# (with few runs, as make test's quick mode, no delay may fall inside a
# run: the loop goes on, up to 4N, until one has: the subject is what a
# cut leaves, not how often a random delay cuts)
OK_RC=0
cut=0
i=0
while [ $i -lt "$N" ] || { [ "$cut" -eq 0 ] && [ $i -lt $((4 * N)) ]; }; do
	rm -f s.json
	# (--sim off: under load the simulated counts that follow a noisy
	# wall time outlast every delay, and no run would ever complete)
	signalled $i 0.8 "$PERFLOOP" bench -w 1 -r 12 --batch 1 --wait-quiet 0 --sim off --contention keep \
		-o s.json -- $W
	whole json:s.json db:.perfloop/history.db
	if [ -e s.json ] && [ "$rc" -ne 0 ]; then
		grep -q '"interrupted": *true' s.json || fail "$what: a summary not marked interrupted"
		cut=$((cut + 1))
	fi
	no_tmp .
	no_tmp .perfloop
	if [ -e .perfloop/history.db ]; then
		"$PERFLOOP" history list >/dev/null 2>"$T/herr" ||
			fail "$what: history list: $(cat "$T/herr")"
	fi
	not_running
	i=$((i + 1))
done
# the interrupted runs went somewhere: at least some summaries and
# recordings were made (else the delays were all too short to test)
runs=$($PY -c "
import sqlite3; print(sqlite3.connect('.perfloop/history.db').execute('select count(*) from runs').fetchone()[0])" 2>/dev/null || echo 0)
[ "$runs" -gt 0 ] || fail "no bench run was ever recorded: the delays never reached a run"
[ "$cut" -gt 0 ] || fail "no bench was cut mid-run: the delays never fell inside the runs"

# --- verify's ledger: each line whole ---
"$PERFLOOP" bench -w 0 -r 5 --batch 1 -o a.json -- $W >/dev/null 2>&1 || true
cp a.json b.json
OK_RC="0 1" # an A/A comparison is no win: exit 1
i=0
while [ $i -lt "$N" ]; do
	signalled $i 0.05 "$PERFLOOP" verify --before a.json --after b.json --suite-exit-code 0 \
		--ledger l.jsonl
	whole lines:l.jsonl
	no_tmp .
	i=$((i + 1))
done

# --- profile: every output whole ---
cat >spin-$marker.py <<PY
import time
def leaf(n):
    s = 0
    for i in range(n):
        s += i * i
    return s
end = time.time() + 3
while time.time() < end:
    leaf(20000)
PY
OK_RC=0
cut=0
i=0
while [ $i -lt "$N" ] || { [ "$cut" -eq 0 ] && [ $i -lt $((4 * N)) ]; }; do
	rm -rf prof
	mkdir prof
	signalled $i 1.2 "$PERFLOOP" profile -o prof/p --format folded,svg,speedscope,findings,html -- $PY spin-$marker.py
	whole json:prof/p.speedscope.json json:prof/p.findings.json end:prof/p.svg end:prof/p.html
	[ "$rc" -eq 0 ] || [ ! -e prof/p.svg ] || cut=$((cut + 1))
	no_tmp prof
	not_running
	i=$((i + 1))
done
[ "$cut" -gt 0 ] || fail "no profile was cut and written: the delays never fell inside the profiles"

# --- a closed terminal (SIGHUP) mid-run: the program stopped, the summary
# written and marked, exit 130 as for ^C; under nohup it runs on ---
printf '#!/bin/sh\nexec sleep 37\n' >hup-$marker.sh
chmod +x hup-$marker.sh
"$PERFLOOP" bench -w 0 -r 3 --batch 1 --sim off -o hup.json -- ./hup-$marker.sh >"$T/out" 2>"$T/err" &
p=$!
started_any() { pgrep -f "sleep 37" >/dev/null; }
i=0
until started_any || [ $i -ge 100 ]; do sleep 0.05; i=$((i + 1)); done
kill -HUP $p
set +e
wait $p
rc=$?
set -e
what="SIGHUP"
[ "$rc" -eq 130 ] || fail "SIGHUP: exit $rc, not 130: $(cat "$T/err")"
pgrep -f "sleep 37" >/dev/null && fail "SIGHUP left the measured program running"
grep -q '"interrupted": *true' hup.json || fail "SIGHUP: no summary marked interrupted"
echo ok
