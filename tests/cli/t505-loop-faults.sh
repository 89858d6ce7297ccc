#!/bin/sh
# A turn killed at every step (SIGKILL, as a power cut would) leaves the
# state before the turn or, once `try --finish` (or the next try) has run,
# the state after it: never a half. Also SIGHUP and SIGTERM in the turn's
# last steps, which wait until the turn is whole. The user's unrelated
# uncommitted edit survives everything.
. "$(dirname "$0")/lib.sh"
set -e
command -v git >/dev/null 2>&1 || skip "git is not installed"
# Each turn's verdict must come out as planned: the work (work_sh) sleeps
# and computes in proportion, so where the three runs' wall time is over
# the noise gate the simulated instructions decide (it skipped 3 of 5
# times on a quiet machine when it slept alone): the base 0.3 s, the win
# 0.15 s, the slowdown 0.6 s.
loop_template tmpl 0.3

# before: the change is in the tree, HEAD and the ledger as they were
state_before() {
	[ "$(git rev-parse HEAD)" = "$base" ] || fail "$1: HEAD moved"
	grep -q "$2" work.sh || fail "$1: the change was lost: $(cat work.sh)"
	[ ! -e docs/perf/baseline_ledger.jsonl ] || fail "$1: ledger written"
	[ -z "$(git diff --cached --name-only)" ] || fail "$1: files staged"
	check .perfloop/loop.json 'd["iteration"] == 0'
}
# after an accept: committed, ledger as committed, index following HEAD
accepted() {
	[ "$(git rev-parse HEAD^)" = "$base" ] || fail "$1: no commit on HEAD"
	git log -1 --format=%B | grep -q 'Perfloop-Turn:' || fail "$1: not the turn's commit"
	git show HEAD:work.sh | grep -q 'sleep 0.15' || fail "$1: the change is not committed"
	git show HEAD:docs/perf/baseline_ledger.jsonl | cmp -s - docs/perf/baseline_ledger.jsonl ||
		fail "$1: the ledger differs from the committed one"
	[ "$(wc -l <docs/perf/baseline_ledger.jsonl)" -eq 1 ] || fail "$1: ledger lines"
	[ -z "$(git status --porcelain -- work.sh docs)" ] || fail "$1: $(git status --porcelain)"
	[ ! -e .perfloop/try-1.json ] && [ -s .perfloop/baseline.json ] || fail "$1: baseline not moved"
	check .perfloop/loop.json 'd["iteration"] == 1 and d["turns"][0]["verdict"] == "accept" and len(d["turns"][0].get("commit", "")) == 40'
}
# after a reject: change undone, one ledger line, checkpoint holds it
rejected() {
	[ "$(git rev-parse HEAD)" = "$base" ] || fail "$1: HEAD moved"
	grep -q 'sleep 0.3$' work.sh || fail "$1: not reverted: $(cat work.sh)"
	[ "$(wc -l <docs/perf/baseline_ledger.jsonl)" -eq 1 ] || fail "$1: ledger lines: $(cat docs/perf/baseline_ledger.jsonl)"
	grep -q '"reject"' docs/perf/baseline_ledger.jsonl || fail "$1: not a reject line"
	check .perfloop/loop.json 'd["iteration"] == 1 and d["turns"][0]["verdict"] == "reject"'
	"$PERFLOOP" revert --dry-run --json >dry.json
	check dry.json 'd["restored"] == []'
}
common() {
	grep -q "user's work in progress" notes.txt || fail "$1: the user's edit was lost"
	[ ! -e .perfloop/turn.json ] || fail "$1: the journal is left"
	[ -z "$(ls .perfloop | grep -E '\.(index|paths|msg)\.')" ] || fail "$1: scratch files left: $(ls .perfloop)"
}

turn() { # STEP SLEEP: a copy of the template, the change, a try killed at STEP
	cd "$T"
	rm -rf case
	cp -a tmpl case
	cd case
	work_sh "$2"
	set +e
	PERFLOOP_FAULT_KILL=$1 "$PERFLOOP" try -m faster >"$T/out" 2>"$T/err"
	rc=$?
	set -e
}

for step in accept-journal accept-commit accept-ledger accept-reset accept-baseline accept-checkpoint state; do
	turn $step 0.15
	if [ "$rc" -ne 137 ]; then
		grep -q 'verdict: accept' "$T/out" || skip "the win was not accepted on this machine: $(cat "$T/out")"
		fail "$step: not killed (exit $rc)"
	fi
	[ -e .perfloop/turn.json ] || fail "$step: no journal after the kill"
	# 'state' is both verdicts' last step: a noisy machine's reject is
	# killed there too (the CI's run failed so), and finished as one
	if [ "$(j .perfloop/turn.json "d['kind']")" = reject ]; then
		[ $step = state ] || fail "$step: a reject killed at an accept's step"
		run "$PERFLOOP" try --finish
		expect_rc 0
		rejected "$step (a reject)"
		common $step
		continue
	fi
	"$PERFLOOP" status >st.txt
	grep -q 'interrupted' st.txt || fail "$step: status does not say: $(cat st.txt)"
	if [ $step = accept-journal ]; then
		state_before $step 'sleep 0.15'
	fi
	run "$PERFLOOP" try --finish
	expect_rc 0
	if [ $step = accept-journal ]; then
		state_before $step 'sleep 0.15'
		grep -q 'before its commit' "$T/out" || fail "$step: $(cat "$T/out")"
	else
		accepted $step
	fi
	common $step
done

for step in reject-journal reject-revert reject-ledger reject-checkpoint state; do
	turn $step 0.6
	if [ "$rc" -ne 137 ]; then
		grep -q 'verdict: reject' "$T/out" || skip "the slowdown was not rejected on this machine: $(cat "$T/out")"
		fail "$step: not killed (exit $rc)"
	fi
	[ "$(j .perfloop/turn.json "d['kind']")" = reject ] ||
		skip "the slowdown was not rejected on this machine: $(j .perfloop/turn.json "d['kind']")"
	run "$PERFLOOP" try --finish
	expect_rc 0
	rejected $step
	common $step
	# and a second finish has nothing to do
	run "$PERFLOOP" try --finish
	grep -q 'no interrupted turn' "$T/out" || fail "$step: finished twice"
done

# SIGHUP and SIGTERM wait for the turn's last steps: the turn is whole
for sig in HUP TERM; do
	cd "$T"
	rm -rf case
	cp -a tmpl case
	cd case
	work_sh 0.6
	"$PERFLOOP" try >"$T/out" 2>"$T/err" &
	p=$!
	# wait until the turn's journal appears, then signal at once
	i=0
	while [ ! -e .perfloop/turn.json ] && kill -0 $p 2>/dev/null && [ $i -lt 300 ]; do
		sleep 0.01
		i=$((i + 1))
	done
	kill -$sig $p 2>/dev/null || true
	set +e
	wait $p
	set -e
	[ -e .perfloop/turn.json ] && fail "SIG$sig: the turn was cut: journal left"
	if grep -q 'verdict: reject' "$T/out"; then
		rejected SIG$sig
		common SIG$sig
	fi
done
echo ok
