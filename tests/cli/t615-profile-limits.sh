#!/bin/sh
# profile at its limits (#18): a Python program of 200 threads, sampled
# with --idle --threads (every thread's stack each tick): every thread
# seen, the outputs consistent (check_profile.py), perfloop's own memory
# bounded; a target killed by SIGKILL mid-profile: the profile of what ran
# is written and the kill reported; a full disk, a missing output
# directory and an output that is a directory: one line, exit 2, nothing
# half-written.
. "$PERFLOOP_SRC/tests/cli/lib.sh"
py=$(pythons311 | head -1)
[ -n "$py" ] || skip "no CPython 3.11 here"
cat >many.py <<'EOF'
import threading, time
stop = time.time() + 2.0
def worker(i):
    while time.time() < stop:
        time.sleep(0.01)
ts = [threading.Thread(target=worker, args=(i,)) for i in range(200)]
for t in ts:
    t.start()
for t in ts:
    t.join()
EOF
if [ -x /usr/bin/time ]; then
	run /usr/bin/time -f "%M" -o rss.txt "$PERFLOOP" profile --idle --threads --rate 100 -o many -- "$py" many.py
else
	run "$PERFLOOP" profile --idle --threads --rate 100 -o many -- "$py" many.py
fi
expect_rc 0
python3 "$PERFLOOP_SRC/tests/cli/check_profile.py" many >/dev/null || fail "outputs disagree"
threads=$(cut -d';' -f1 many.folded | sort -u | grep -c "^thread\|Thread" || true)
[ "$threads" -ge 200 ] || fail "$threads threads seen of 201"
if [ -f rss.txt ]; then
	[ "$(tail -1 rss.txt)" -lt 204800 ] || fail "perfloop grew to $(tail -1 rss.txt) KiB"
fi

# the target killed (SIGKILL) while profiled: what ran is written
cat >spin.py <<'EOF'
import os, time
t = time.time()
while time.time() - t < 0.5:
    sum(range(1000))
os.kill(os.getpid(), 9)
EOF
run "$PERFLOOP" profile -o killed -- "$py" spin.py
expect_rc 3
expect_err "SIGKILL"
[ -s killed.folded ] || fail "no profile of the killed program"
python3 "$PERFLOOP_SRC/tests/cli/check_profile.py" killed >/dev/null || fail "killed: outputs disagree"

# a full disk (a file-size limit of 4 blocks: every output is larger):
# one line naming the file, exit 2, no output and no temporary file left
# (40 distinct stacks up to 40 frames deep: a folded file of tens of KiB
# however few samples a slowed perfloop takes; one of 8 lines fitted in
# the limit under ASan, and the next output failed instead)
cat >full.py <<'EOF'
def rec(d, n):
    if d == 0:
        return sum(i * i for i in range(n))
    return rec(d - 1, n)
for k in range(300):
    rec(k % 40, 20000)
EOF
run sh -c 'ulimit -f 4; exec "$0" profile -o full -- "$1" full.py' "$PERFLOOP" "$py"
expect_rc 2
expect_err "cannot write 'full\.[a-z.]*': File too large"
[ "$(grep -c . "$T/err")" -eq 1 ] || fail "more than one line: $(cat "$T/err")"
[ -z "$(ls -a | grep -E '^full\.(folded|svg|html|speedscope|findings)|\.tmp\.')" ] ||
	fail "left after a full disk: $(ls -a)"
# an output directory that does not exist, an output that is a directory:
# refused before the program runs
run "$PERFLOOP" profile -o "$T/none/p" -- "$py" full.py
expect_rc 2
expect_err "cannot write '$T/none/p.svg': No such file or directory"
mkdir d.svg
run "$PERFLOOP" profile -o d -- "$py" full.py
expect_rc 2
expect_err "cannot write 'd.svg': Is a directory"
[ ! -s "$T/out" ] || fail "the program ran: $(cat "$T/out")"
exit 0
