#!/bin/sh
# A real PyTorch DDP job on the CPU (Debian's python3-torch, gloo, two
# ranks started by torchrun, `python3 -m torch.distributed.run`) with rank 1
# slowed on purpose, each rank profiled in mixed mode (--idle: the wall
# clock, waits included) by a perfloop that torchrun starts (--no_python):
# one profile per rank recording torchrun's rank, merge names rank 1 as the
# straggler, and the fast rank's profile shows its time waiting in DDP's
# gradient all-reduce (c10d's Reducer at the end of backward: the
# straggler's cost seen from the other side), more than the slow rank's.
# Also bench under torchrun: one summary per rank, merged.
. "$PERFLOOP_SRC/tests/cli/lib.sh"
/usr/bin/python3 -c 'import torch, torch.distributed' 2>/dev/null || skip "no torch for /usr/bin/python3"
/usr/bin/python3 -c 'import torch.distributed as d; assert d.is_gloo_available()' 2>/dev/null ||
	skip "torch without gloo"
[ "$(uname -m)" = x86_64 ] || skip "mixed mode is x86-64 only"
# Debian's torchrun (torch 1.13) on Python 3.11: --redirects/--tee 0 (the
# default) crash in Std.from_str (3.11's Flag enums leave NONE out of
# iteration); 1 (stdout) works, teed to the console
torchrun() {
	/usr/bin/python3 -m torch.distributed.run --redirects 1 --tee 1 --nproc_per_node=2 \
		--master_port "$((20000 + $$ % 20000))" "$@"
}
run torchrun --no_python "$PERFLOOP" profile --mode mixed --idle -o prof.%r -- \
	/usr/bin/python3 "$PERFLOOP_SRC/tests/cli/ddp_straggler.py" 80
if [ "$rc" -ne 0 ] && grep -q "ptrace\|not permitted\|Operation not permitted" "$T/out" "$T/err"; then
	skip "mixed mode cannot stop threads here: $(grep -h "error" "$T/out" "$T/err" | head -2)"
fi
expect_rc 0
for r in 0 1; do
	[ -s "prof.$r.folded" ] || fail "no profile for rank $r: $(ls); $(tail -5 "$T/out")"
	check "prof.$r.findings.json" "d['launch']['rank'] == $r and d['launch']['world_size'] == 2 and d['launch']['launcher'] == 'torchrun'"
done
run "$PERFLOOP" merge -o m prof.*
expect_rc 0
grep -q "straggler: rank 1," "$T/out" || fail "rank 1 not named: $(cat "$T/out")"
valid merge-1.schema.json m.json
check m.json "[r['straggler'] for r in d['profiles']['ranks']] == [False, True] and d['profiles']['samples'] == d['profiles']['ranks_samples']"
check m.findings.json "[(f['leaf'], f['evidence']['numbers']['rank']) for f in d['findings']] == [('distributed.straggler', 1)]"
python3 - prof.0.folded prof.1.folded <<'PY' || fail "the all-reduce's wait is not on the fast rank's profile"
import sys
def share(p):
    wait = slow = tot = 0
    for l in open(p):
        s, c = l.rsplit(" ", 1)
        c = int(c)
        if ".py:" not in s:
            continue  # the library's own threads (idle workers)
        tot += c
        wait += c if "Reducer::finalize_backward" in s or "allreduce" in s.lower() else 0
        slow += c if "slow_down (" in s else 0
    return wait / tot, slow / tot
fast, slow = share(sys.argv[1]), share(sys.argv[2])
print("rank 0: all-reduce %.2f slow_down %.2f; rank 1: all-reduce %.2f slow_down %.2f" % (fast + slow))
assert fast[0] > 0.25 and fast[0] > 2 * slow[0], (fast, slow)
assert slow[1] > 0.25 and fast[1] == 0, (fast, slow)
PY

# Python mode (--idle): no native frame names the all-reduce, but the fast
# rank's training thread sleeps inside autograd's backward while DDP waits
# for the slow rank; merge counts that as the wait (it found no straggler),
# and each rank's top function is one to act on, never "(idle)" nor
# the import machinery
run torchrun --no_python "$PERFLOOP" profile --idle -o py.%r -- \
	/usr/bin/python3 "$PERFLOOP_SRC/tests/cli/ddp_straggler.py" 80
expect_rc 0
run "$PERFLOOP" merge -o pm py.0.folded py.1.folded
expect_rc 0
grep -q "straggler: rank 1," "$T/out" || fail "python mode: rank 1 not named: $(cat "$T/out")"
check pm.json "[r['straggler'] for r in d['profiles']['ranks']] == [False, True]"
check pm.json "d['profiles']['ranks'][0]['wait_share'] > 0.25 and d['profiles']['ranks'][1]['wait_share'] < 0.1"
! grep -E '^ +0 .*(\(idle\)|_call_with_frames_removed)' "$T/out" || fail "rank 0's top function is not one to act on: $(cat "$T/out")"

# bench under torchrun: a summary per rank (the straggler found by merge).
# Rank 1 sleeps 0.3 s, rank 0 0.02 s: with 0.08 s, a loaded CI machine's
# shell starts (tens of ms each) made the two ranks' runs overlap and the
# U test could not tell them apart
cat >step.sh <<'EOF'
#!/bin/sh
if [ "$RANK" = 1 ]; then sleep 0.3; else sleep 0.02; fi
EOF
chmod +x step.sh
run torchrun --no_python "$PERFLOOP" bench -r 8 -w 1 --batch 1 -o b.%r.json -- ./step.sh
expect_rc 0
check b.1.json "d['launch']['rank'] == 1 and d['launch']['launcher'] == 'torchrun'"
run "$PERFLOOP" merge b.0.json b.1.json
expect_rc 0
grep -q "straggler: rank 1," "$T/out" || fail "bench: rank 1 not named: $(cat "$T/out")"
exit 0
