#!/bin/sh
# Ctrl-C: the finished runs are kept, marked interrupted, exit 130, and the
# running command's process group is killed.
. "$(dirname "$0")/lib.sh"
set -e
marker="0.1$$"
# (no waiting for a quiet or uncontended CPU: 1.5 s must hold runs)
"$PERFLOOP" bench --quiet -w 0 -r 1000 --wait-quiet 0 --contention keep -o i.json -- sleep "$marker" >out 2>err &
pid=$!
sleep 1.5
kill -INT "$pid"
set +e
wait "$pid"
rc=$?
set -e
expect_rc 130
expect_err "interrupted"
check i.json "d['interrupted'] is True"
check i.json "3 <= len([s for s in d['benchmarks'][0]['samples'] if s['counted']]) < 1000"
sleep 0.2
if pgrep -f "sleep $marker" >/dev/null; then fail "the running command survived Ctrl-C"; fi
echo ok
