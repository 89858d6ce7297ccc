#!/bin/sh
# Under a real Slurm srun: a one-node cluster started here (Debian's
# slurm-wlm and munge, as root: our own munged on its own socket and key,
# slurmctld and slurmd on ports of their own, all stopped at the end), one
# `srun -n 2` job of bench with rank 1 slower on purpose: one summary per
# rank recording Slurm's rank (SLURM_PROCID) and world size, and merge
# names rank 1 as the straggler; and `srun -n 2 perfloop profile` writes
# one profile per rank that merge takes together.
. "$PERFLOOP_SRC/tests/cli/lib.sh"
for c in srun slurmctld slurmd munged sinfo; do
	command -v "$c" >/dev/null 2>&1 || skip "no $c here (Debian's slurm-wlm and munge)"
done
[ "$(id -u)" -eq 0 ] || skip "a test cluster's slurmd runs as root here"
D=$T/slurm
mkdir -p "$D/state" "$D/spool"
head -c 1024 /dev/urandom >"$D/munge.key"
chmod 600 "$D/munge.key"
munged --force --key-file="$D/munge.key" --socket="$D/munge.sock" --pid-file="$D/munged.pid" \
	--log-file="$D/munged.log" --seed-file="$D/munged.seed" 2>"$D/munged.err" ||
	skip "munged does not start here: $(tail -2 "$D/munged.err")"
stop() {
	for p in slurmd slurmctld; do
		[ -f "$D/$p.pid" ] && kill "$(cat "$D/$p.pid")" 2>/dev/null
	done
	munged --stop --socket="$D/munge.sock" >/dev/null 2>&1 || true
}
trap stop EXIT
host=$(hostname -s)
port=$((30000 + $$ % 20000))
export SLURM_CONF="$D/slurm.conf"
cat >"$SLURM_CONF" <<EOF
ClusterName=perfloop
SlurmctldHost=$host
AuthType=auth/munge
AuthInfo=socket=$D/munge.sock
CredType=cred/munge
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
SlurmUser=root
SlurmdUser=root
StateSaveLocation=$D/state
SlurmdSpoolDir=$D/spool
SlurmctldPidFile=$D/slurmctld.pid
SlurmdPidFile=$D/slurmd.pid
SlurmctldLogFile=$D/slurmctld.log
SlurmdLogFile=$D/slurmd.log
SlurmctldPort=$port
SlurmdPort=$((port + 1))
SchedulerType=sched/builtin
SelectType=select/cons_tres
SelectTypeParameters=CR_Core
ReturnToService=2
MpiDefault=none
JobCompType=jobcomp/none
AccountingStorageType=accounting_storage/none
NodeName=$host CPUs=$(nproc) State=UNKNOWN
PartitionName=test Nodes=$host Default=YES MaxTime=INFINITE State=UP OverSubscribe=FORCE
EOF
slurmctld -f "$SLURM_CONF" 2>"$D/ctld.err" || skip "slurmctld does not start: $(tail -2 "$D/ctld.err")"
slurmd -f "$SLURM_CONF" 2>"$D/d.err" || skip "slurmd does not start: $(tail -2 "$D/d.err")"
i=0
until sinfo -h -o %t 2>/dev/null | grep -q "idle\|mix\|alloc"; do
	i=$((i + 1))
	[ "$i" -lt 40 ] || skip "the test cluster's node did not come up: $(sinfo 2>&1 | tail -2); $(tail -3 "$D/slurmd.log")"
	sleep 0.5
done
timeout 60 srun -n 2 true >"$D/first.log" 2>&1 || skip "srun cannot run a job here: $(tail -3 "$D/first.log")"

cat >app.sh <<'EOF'
#!/bin/sh
if [ "$SLURM_PROCID" = 1 ]; then sleep 0.08; else sleep 0.02; fi
EOF
chmod +x app.sh
run timeout 240 srun -n 2 "$PERFLOOP" bench -r 8 -w 1 --batch 1 -o b.%r.json -- ./app.sh
expect_rc 0
for r in 0 1; do
	check "b.$r.json" "d['launch']['rank'] == $r and d['launch']['world_size'] == 2 and d['launch']['launcher'] == 'slurm'"
done
run "$PERFLOOP" merge -o m b.0.json b.1.json
expect_rc 0
grep -q "straggler: rank 1," "$T/out" || fail "rank 1 not named: $(cat "$T/out")"
check m.json "[r['straggler'] for r in d['summaries']['benchmarks'][0]['ranks']] == [False, True]"

py=$(pythons311 | head -1)
[ -n "$py" ] || exit 0
run timeout 120 srun -n 2 "$PERFLOOP" profile -o prof.%r -- "$py" -c 'sum(range(3 * 10**6))'
expect_rc 0
run "$PERFLOOP" merge -o mp prof.*
expect_rc 0
check mp.json "[(r['rank'], r['launcher']) for r in d['profiles']['ranks']] == [(0, 'slurm'), (1, 'slurm')] and d['profiles']['samples'] == d['profiles']['ranks_samples'] > 0"
exit 0
