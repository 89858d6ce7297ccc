#!/bin/sh
# Faults and limits around bench (#18; t106 has the first ones: exit codes,
# SIGSEGV, timeouts of a process group, commands that cannot start): an
# abort and an exit 255 are reported as such; a program that ignores
# SIGTERM is still ended by --timeout; one that closes its stdout early,
# or leaves children behind, is measured and does not hang bench; a
# bounded fork bomb (300 children) ends at --timeout, all of it; 1 GB
# of output through a pipe leaves perfloop's own memory small; outputs
# that cannot be written (no directory, a directory, a full disk by
# `ulimit -f`) are one line, exit 2, nothing half-written; and edge inputs
# (one run, identical runs, control characters and UTF-8 in names, NaN
# and Infinity in a summary) end in an answer or one line, never a crash.
. "$PERFLOOP_SRC/tests/cli/lib.sh"
b() { "$PERFLOOP" bench --quiet -w 0 --batch 1 "$@"; }

run b -r 2 -o a.json -- sh -c 'kill -ABRT $$'
expect_rc 3
expect_err "SIGABRT"
check a.json "d['benchmarks'][0]['samples'][0]['signal'] == 6 and d['benchmarks'][0]['status'] == 'failed'"
run b -r 2 -o e.json -- sh -c 'exit 255'
expect_rc 3
expect_err "exited with code 255"
check e.json "d['benchmarks'][0]['samples'][0]['exit_code'] == 255"

# SIGTERM ignored: the timeout kills, it does not ask
start=$(date +%s)
run b -r 2 --timeout 0.3 -o t.json --shell -- 'trap "" TERM; sleep 30'
expect_rc 3
expect_err "timed out"
[ $(($(date +%s) - start)) -lt 15 ] || fail "a program ignoring SIGTERM held bench $(($(date +%s) - start)) s"

# stdout closed early; a child left running after the command exits
run b -r 3 -o c.json --shell -- 'exec >&-; echo gone 2>/dev/null; true'
expect_rc 0
check c.json "d['benchmarks'][0]['status'] == 'ok'"
marker="31.$$"
start=$(date +%s)
run b -r 3 -o l.json --shell -- "sleep $marker >/dev/null 2>&1 & exit 0"
expect_rc 0
[ $(($(date +%s) - start)) -lt 20 ] || fail "a child left behind held bench"
pkill -f "sleep $marker" 2>/dev/null || true

# a bounded fork bomb: 300 processes in the run's group, the command
# waiting for them; --timeout ends the run and every one of them
bomb="61.$$"
start=$(date +%s)
run b -r 1 --timeout 1 -o bomb.json --shell -- "for i in \$(seq 300); do sleep $bomb & done; wait"
expect_rc 3
expect_err "timed out"
[ $(($(date +%s) - start)) -lt 30 ] || fail "300 children held bench $(($(date +%s) - start)) s"
sleep 0.5
left=$(pgrep -f "sleep $bomb" | wc -l)
[ "$left" -eq 0 ] || fail "$left of the 300 children survived the timeout"

# 512 MB of output per run through a pipe, 1 GB or more in all
# (--output inherit, perfloop's stdout a pipe): all of it passes,
# perfloop's memory stays small
if [ -x /usr/bin/time ]; then
	/usr/bin/time -f "%M" -o rss.txt "$PERFLOOP" bench --quiet -w 0 --batch 1 -r 2 --output inherit \
		-- head -c 536870912 /dev/zero | wc -c >bytes.txt
	# (runs measured again beside contended ones add whole runs' output)
	n=$(cat bytes.txt)
	[ "$n" -ge 1073741824 ] && [ $((n % 536870912)) -eq 0 ] || fail "output lost: $n bytes"
	[ "$(tail -1 rss.txt)" -lt 102400 ] || fail "perfloop grew to $(tail -1 rss.txt) KiB for 1 GB of output"
fi

# outputs that cannot be written: one line, exit 2, before anything runs
run b -r 2 -o no/such/dir/x.json true
expect_rc 2
[ "$(wc -l <"$T/err")" -eq 1 ] || fail "$(cat "$T/err")"
mkdir adir
run b -r 2 -o adir true
expect_rc 2
[ "$(wc -l <"$T/err")" -eq 1 ] || fail "$(cat "$T/err")"
# a full disk (a file-size limit) while the summary is written: one line,
# no summary, no temporary file left
run sh -c "ulimit -f 1; exec \"\$0\" bench --quiet -w 0 --batch 1 -r 40 -n 'a long name to make the summary longer than one block' -o full.json true" "$PERFLOOP"
expect_rc 2
expect_err "cannot write 'full.json': File too large"
[ ! -e full.json ] || fail "a partial summary was left: $(wc -c <full.json) bytes"
ls .full.json* full.json.* 2>/dev/null && fail "a temporary file was left"

# edges: one run; identical runs; names with control characters and UTF-8
run b -r 1 -o one.json true
expect_rc 0
check one.json "len([s for s in d['benchmarks'][0]['samples'] if s['counted']]) == 1"
run b -r 3 -n "$(printf 'tab\there\001ü')" -o names.json true
expect_rc 0
check names.json "d['benchmarks'][0]['name'] == 'tab\there\x01ü'"
valid bench-1.schema.json names.json
# five runs of wildly varying length: too noisy to score, and where the
# cause given is the batches' one, it says that five are too few to tell
# how the noise behaves (it once said "the runs' noise is independent0.00")
cat >wild.sh <<'EOF'
# sleep 0 to 99 ms, from /dev/urandom
seed=$(od -An -N4 -tu4 /dev/urandom | tr -d ' ')
sleep "$(printf '0.%03d' $((seed % 100)))"
EOF
run b -r 5 -o wild.json -- sh wild.sh
expect_rc 0
check wild.json "d['benchmarks'][0]['dimensions']['timing']['scored'] is False"
# (where that is the cause given: a trend or contended runs come first)
check wild.json "'independent0' not in d['benchmarks'][0]['dimensions']['timing']['cause']"
check wild.json "'batches average' not in d['benchmarks'][0]['dimensions']['timing']['cause'] or 'too few runs (' in d['benchmarks'][0]['dimensions']['timing']['cause']"
# a summary with NaN or Infinity (not JSON): one line naming the file
sed 's/"wall_s": [0-9.e-]*/"wall_s": NaN/' one.json >nan.json
run "$PERFLOOP" report nan.json
expect_rc 2
expect_err "nan.json"
[ "$(wc -l <"$T/err")" -eq 1 ] || fail "$(cat "$T/err")"
sed 's/"wall_s": [0-9.e-]*/"wall_s": Infinity/' one.json >inf.json
run "$PERFLOOP" verify --before inf.json --after one.json
expect_rc 2
expect_err "inf.json"
exit 0
