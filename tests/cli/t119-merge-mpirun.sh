#!/bin/sh
# Under a real Open MPI mpirun (Debian's openmpi-bin; as root with
# --allow-run-as-root's variables, oversubscribed on two cores): a 2-rank
# and a 4-rank job of bench with one rank slower on purpose write one
# summary per rank (%r), recording Open MPI's rank and world size, and
# merge names the slow rank as the only straggler; a real MPI program
# (MPI_Allreduce every step, one rank computing 3x as long) profiled per
# rank in native mode: one profile per rank, the merged sample total the
# ranks' sum, and the fast rank's profile showing its time waiting in the
# all-reduce (the straggler's cost seen from the other side).
. "$PERFLOOP_SRC/tests/cli/lib.sh"
command -v mpirun >/dev/null 2>&1 || skip "no mpirun here (Debian's openmpi-bin)"
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
# shared memory without cross-memory attach (a container may refuse it)
export OMPI_MCA_btl_vader_single_copy_mechanism=none OMPI_MCA_btl=self,vader
mpi() { # NP ARGS...
	np=$1
	shift
	mpirun --oversubscribe --bind-to none -np "$np" "$@"
}
mpi 2 true >"$T/mpi.log" 2>&1 || skip "mpirun cannot start a job here: $(tail -3 "$T/mpi.log")"

cat >app.sh <<'EOF'
#!/bin/sh
if [ "$OMPI_COMM_WORLD_RANK" = "$SLOW" ]; then sleep 0.08; else sleep 0.02; fi
EOF
chmod +x app.sh
for np in 2 4; do
	slow=$((np - 1))
	[ "$np" -eq 4 ] && slow=2
	run env SLOW=$slow mpirun --oversubscribe --bind-to none -np "$np" \
		"$PERFLOOP" bench -r 8 -w 1 --batch 1 -o "b$np.%r.json" -- ./app.sh
	expect_rc 0
	r=0
	while [ "$r" -lt "$np" ]; do
		check "b$np.$r.json" "d['launch']['rank'] == $r and d['launch']['world_size'] == $np and d['launch']['launcher'] == 'openmpi'"
		r=$((r + 1))
	done
	run "$PERFLOOP" merge -o "m$np" b$np.*.json
	expect_rc 0
	grep -q "straggler: rank $slow," "$T/out" || fail "$np ranks: rank $slow not named: $(cat "$T/out")"
	check "m$np.json" "[r['rank'] for r in d['summaries']['benchmarks'][0]['ranks'] if r['straggler']] == [$slow] and d['problems'] == []"
	valid merge-1.schema.json "m$np.json"
done

# a real MPI program, profiled per rank
command -v mpicc >/dev/null 2>&1 || skip "no mpicc here (Debian's libopenmpi-dev) for the profile half"
need_perf_events
mpicc -O1 -g -fno-omit-frame-pointer -o mpi_straggler "$PERFLOOP_SRC/tests/cli/mpi_straggler.c" ||
	fail "mpicc"
run mpi 2 "$PERFLOOP" profile --mode native -o prof.%r -- ./mpi_straggler 1 60
expect_rc 0
for r in 0 1; do
	[ -s "prof.$r.folded" ] || fail "no profile for rank $r: $(ls)"
	check "prof.$r.findings.json" "d['launch']['rank'] == $r and d['launch']['launcher'] == 'openmpi'"
done
run "$PERFLOOP" merge -o mp prof.*
expect_rc 0
grep -q "straggler: rank 1," "$T/out" || fail "the profiles do not name rank 1: $(cat "$T/out")"
check mp.json "[r['straggler'] for r in d['profiles']['ranks']] == [False, True]"
valid merge-1.schema.json mp.json
check mp.json "[r['rank'] for r in d['profiles']['ranks']] == [0, 1] and d['profiles']['samples'] == d['profiles']['ranks_samples'] == sum(r['samples'] for r in d['profiles']['ranks'])"
python3 - mp.folded prof.0.folded prof.1.folded <<'PY' || fail "merged stacks"
import sys
def total(p):
    return sum(int(l.rsplit(" ", 1)[1]) for l in open(p) if l.strip())
assert total(sys.argv[1]) == total(sys.argv[2]) + total(sys.argv[3])
PY
# the slow rank computes; the fast one waits in the all-reduce for it
python3 - prof.0.folded prof.1.folded <<'PY' || fail "the all-reduce's wait is not on the fast rank's profile"
import sys
def shares(p):
    allr = comp = tot = 0
    for l in open(p):
        s, c = l.rsplit(" ", 1)
        c = int(c)
        tot += c
        if "Allreduce" in s:
            allr += c
        elif "compute (" in s:
            comp += c
    return allr / tot, comp / tot
fast, slow = shares(sys.argv[1]), shares(sys.argv[2])
print("fast rank: all-reduce %.2f compute %.2f; slow rank: all-reduce %.2f compute %.2f" % (fast + slow))
assert fast[0] > 0.3 and fast[0] > 2 * slow[0], (fast, slow)
assert slow[1] > 0.4 and slow[1] > 2 * fast[1], (fast, slow)
PY
exit 0
