#!/bin/sh
# Under a launcher (mpirun, srun, torchrun), one output per rank: %r, %l,
# %h, %p and %% in output names, the rank read from each launcher's
# variables (set here by hand, without the launcher) in the documented
# order, and the summary's "launch" record; without a launcher rank 0 of 1.
. "$(dirname "$0")/lib.sh"
set -e
b() { # OUT-NAME ENV...: a 3-run bench of true
	out=$1
	shift
	env "$@" "$PERFLOOP" bench -r 3 -w 0 --batch 1 -o "$out" true >/dev/null 2>"$T/err" ||
		fail "bench -o $out: $(cat "$T/err")"
}
b 'none.%r.%l.json'
check none.0.0.json "d['launch'] == dict(d['launch'], rank=0, local_rank=0, world_size=1, launcher='none')"
b 'ompi.%r.%l.json' OMPI_COMM_WORLD_RANK=3 OMPI_COMM_WORLD_LOCAL_RANK=1 OMPI_COMM_WORLD_SIZE=4
check ompi.3.1.json "(d['launch']['rank'], d['launch']['world_size'], d['launch']['launcher']) == (3, 4, 'openmpi')"
b 'pmi.%r.%l.json' PMI_RANK=5 MPI_LOCALRANKID=2 PMI_SIZE=8
check pmi.5.2.json "(d['launch']['rank'], d['launch']['world_size'], d['launch']['launcher']) == (5, 8, 'pmi')"
b 'slurm.%r.%l.json' SLURM_PROCID=7 SLURM_LOCALID=3 SLURM_NTASKS=16
check slurm.7.3.json "(d['launch']['rank'], d['launch']['world_size'], d['launch']['launcher']) == (7, 16, 'slurm')"
b 'torch.%r.%l.json' RANK=1 LOCAL_RANK=1 WORLD_SIZE=2
check torch.1.1.json "(d['launch']['rank'], d['launch']['world_size'], d['launch']['launcher']) == (1, 2, 'torchrun')"
# the order: Open MPI's variables before Slurm's before torchrun's (an
# mpirun inside an allocation sees both)
b 'both.%r.json' SLURM_PROCID=9 OMPI_COMM_WORLD_RANK=2 RANK=4
check both.2.json "d['launch']['launcher'] == 'openmpi'"
# the host, the pid (a number), %% and an unknown % kept
b 'h.%h.%%.%x.json'
[ -f "h.$(hostname).%.%x.json" ] || fail "%h/%%/%x: $(ls h.*)"
b 'p.%p.json'
ls p.[0-9]*.json >/dev/null 2>&1 || fail "%p: $(ls p.*)"
valid bench-1.schema.json ompi.3.1.json
# bad: a name too long once expanded, one line
long=$(python3 -c "print('%h' * 5000)")
run "$PERFLOOP" bench -r 3 --batch 1 -o "$long" true
expect_rc 2
expect_err "option '--out': "
[ "$(wc -l <"$T/err")" -eq 1 ] || fail "$(cat "$T/err")"
# profile's prefix too
py=$(pythons311 | head -1)
if [ -n "$py" ]; then
	printf 'x = sum(range(2000000))\n' >p.py
	RANK=1 run "$PERFLOOP" profile --format folded -o 'prof.%r' -- "$py" p.py
	expect_rc 0
	[ -s prof.1.folded ] || fail "profile -o prof.%r: $(ls prof*)"
	# without -o, each rank gets its own default name
	RANK=1 WORLD_SIZE=2 run "$PERFLOOP" profile --format folded -- "$py" p.py
	expect_rc 0
	[ -s profile.1.folded ] || fail "profile under a launcher, no -o: $(ls profile*)"
fi
# one file named for several ranks: refused before anything runs (the last
# rank to finish silently overwrote the others'); one rank alone may
RANK=1 WORLD_SIZE=2 run "$PERFLOOP" bench -o shared.json -- true
expect_rc 2
expect_err "'shared.json' is one file for every rank (rank 1 under torchrun): put %r"
[ ! -e shared.json ] || fail "a shared name was written"
RANK=1 WORLD_SIZE=2 run "$PERFLOOP" bench --export-csv 'x.%h.csv' -- true
expect_rc 2
expect_err "option '--export-csv'"
RANK=1 WORLD_SIZE=2 run "$PERFLOOP" profile --format folded -o shared -- true
expect_rc 2
expect_err "'shared' is one file for every rank"
RANK=1 WORLD_SIZE=1 run "$PERFLOOP" bench -w 0 -r 3 --sim off -o alone.json -- true
expect_rc 0
echo ok
