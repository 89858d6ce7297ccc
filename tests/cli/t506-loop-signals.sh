#!/bin/sh
# SIGINT and SIGTERM at a random moment of a `try`, 50 times (a win and a
# slowdown in turn): whatever the moment, the repository is in one of the
# three whole states — before the turn (HEAD and ledger as they were, the
# change still in the tree), accepted (one commit with the change and the
# ledger) or rejected (the change reverted, one reject line) — no journal
# or scratch file is left, the user's unrelated edit survives, git's
# objects are sound, and `try --finish` has nothing to finish. t505 kills
# turns with SIGKILL at each step; this is the ordinary Ctrl-C or
# `kill`. The seed is printed on failure to replay the same moments.
. "$(dirname "$0")/lib.sh"
set -e
command -v git >/dev/null 2>&1 || skip "git is not installed"
SEED=${PERFLOOP_SIGNAL_SEED:-$$}
N=${PERFLOOP_SIGNAL_RUNS:-50}
PY=python3
[ -x /usr/bin/python3 ] && PY=/usr/bin/python3
# (no waiting for a quiet CPU: a loaded host made each turn wait 5 s, and
# this test is about what a signal leaves, not about the verdicts)
export PERFLOOP_WAIT_QUIET=0
loop_template tmpl

# how long one turn takes here (the slowdown's, the longer): the signals
# fall within it
cd "$T"
cp -a tmpl probe
cd probe
printf '#!/bin/sh\nsleep 0.2\n' >work.sh
t0=$(date +%s.%N)
"$PERFLOOP" try -m slower >/dev/null 2>&1 || true
span=$(awk -v a="$t0" -v b="$(date +%s.%N)" 'BEGIN { printf "%.3f", (b - a) * 1.1 }')

rand() { # I MAX: a delay in [0, MAX) seconds, from the seed and I
	awk -v s="$((SEED * 1000 + $1))" -v m="$2" 'BEGIN { srand(s); printf "%.3f", rand() * m }'
}

states=""
i=0
while [ $i -lt "$N" ]; do
	cd "$T"
	rm -rf case
	cp -a tmpl case
	cd case
	if [ $((i % 2)) -eq 0 ]; then new=0.04; else new=0.2; fi
	printf '#!/bin/sh\nsleep %s\n' $new >work.sh
	sig=INT
	[ $((i % 4)) -lt 2 ] || sig=TERM
	d=$(rand $i "$span")
	"$PERFLOOP" try -m faster >"$T/out" 2>"$T/err" &
	p=$!
	sleep "$d"
	kill -$sig $p 2>/dev/null || true
	set +e
	wait $p
	rc=$?
	set -e
	what="turn $i (seed $SEED, sleep $new): SIG$sig after ${d}s of ${span}s, exit $rc"
	case $rc in 0 | 1 | 130 | 143) ;; *) fail "$what: $(cat "$T/err")" ;; esac
	[ ! -e .perfloop/turn.json ] || fail "$what: the journal is left: $(cat .perfloop/turn.json)"
	[ -z "$(ls -a .perfloop 2>/dev/null | grep -E '\.(index|paths|msg)\.|\.tmp' || true)" ] ||
		fail "$what: scratch files left: $(ls -a .perfloop)"
	grep -q "user's work in progress" notes.txt || fail "$what: the user's edit was lost"
	git fsck --no-dangling >"$T/fsck" 2>&1 || fail "$what: git fsck: $(cat "$T/fsck")"
	ledger=docs/perf/baseline_ledger.jsonl
	if [ -e $ledger ]; then
		$PY -c "
import json, sys
for n, line in enumerate(open(sys.argv[1]), 1):
    assert line.endswith('\n'), 'line %d has no end' % n
    json.loads(line)" $ledger 2>"$T/lerr" || fail "$what: the ledger has a broken line: $(cat "$T/lerr")"
	fi
	if [ "$(git rev-parse HEAD)" != "$base" ]; then
		# accepted: one commit on the base with the change and the ledger
		state=accepted
		[ "$(git rev-parse HEAD^)" = "$base" ] || fail "$what: HEAD is not one commit on the base"
		git log -1 --format=%B | grep -q 'Perfloop-Turn:' || fail "$what: not the turn's commit"
		git show HEAD:work.sh | grep -q "sleep $new" || fail "$what: the change is not committed"
		git show HEAD:$ledger | cmp -s - $ledger || fail "$what: the ledger differs from the committed one"
		[ -z "$(git status --porcelain -- work.sh docs)" ] || fail "$what: $(git status --porcelain)"
	elif grep -q 'sleep 0.1$' work.sh; then
		# rejected: reverted, one reject line left for the next accept
		state=rejected
		[ "$(wc -l <$ledger)" -eq 1 ] && grep -q '"reject"' $ledger ||
			fail "$what: reverted but the ledger says: $(cat $ledger 2>/dev/null)"
		[ -z "$(git diff --cached --name-only)" ] || fail "$what: files staged"
	else
		# before the turn: the change in the tree, nothing else
		state=before
		grep -q "sleep $new" work.sh || fail "$what: work.sh is neither: $(cat work.sh)"
		[ ! -e $ledger ] || fail "$what: a ledger line without its turn: $(cat $ledger)"
		[ -z "$(git diff --cached --name-only)" ] || fail "$what: files staged"
		[ "$rc" -ne 0 ] || fail "$what: exit 0 but nothing accepted"
	fi
	run "$PERFLOOP" try --finish
	expect_rc 0
	grep -q 'no interrupted turn' "$T/out" || fail "$what: try --finish found work: $(cat "$T/out")"
	case " $states " in *" $state "*) ;; *) states="$states $state" ;; esac
	i=$((i + 1))
done
# the moments reached into the turn: some turns ended whole, some were
# cut before (else the delays missed the turn)
case "$states" in *before*) ;; *) fail "no turn was cut before its end (states:$states)" ;; esac
case "$states" in *accepted* | *rejected*) ;; *) fail "no turn reached a verdict (states:$states)" ;; esac
echo "ok:$states"
