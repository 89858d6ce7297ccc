#!/bin/sh
# perfloop merge, without a launcher (the ranks' variables set by hand;
# t119 and t120 run real mpirun and torchrun jobs): bench summaries give
# the per-rank table and find a slow rank as the straggler, with two ranks
# and with four; equal ranks and a rank 5% slower are not stragglers
# (synthetic samples: deterministic); a rank twice, different commands and
# bad inputs are refused in one line; missing ranks and a summary without
# its rank are reported; profiles merge into one whose samples are the
# ranks' sum (--by-rank: one root per rank, each its rank's samples), their
# rank read from what profile wrote beside them; --rank-filter runs the
# other ranks' program unprofiled; a rank's threads without Python are
# shown apart from the ones that run it.
. "$PERFLOOP_SRC/tests/cli/lib.sh"
cat >app.sh <<'EOF'
#!/bin/sh
# the slow rank sleeps 4x as long
if [ "${RANK:-${OMPI_COMM_WORLD_RANK:-0}}" = "$SLOW" ]; then sleep 0.08; else sleep 0.02; fi
EOF
chmod +x app.sh
b() { # OUT ENV...: 8 runs of app.sh as one rank
	out=$1
	shift
	env "$@" "$PERFLOOP" bench -r 8 -w 1 --batch 1 -o "$out" -- ./app.sh >/dev/null 2>"$T/err" ||
		fail "bench -o $out: $(cat "$T/err")"
}
# four ranks (torchrun's variables), rank 2 slow
for r in 0 1 2 3; do b 'b4.%r.json' RANK=$r LOCAL_RANK=$r WORLD_SIZE=4 SLOW=2; done
run "$PERFLOOP" merge -o m4 b4.0.json b4.1.json b4.2.json b4.3.json
expect_rc 0
grep -q "straggler: rank 2," "$T/out" || fail "rank 2 not named: $(cat "$T/out")"
[ "$(grep -c "  straggler$" "$T/out")" -eq 1 ] || fail "one straggler expected: $(cat "$T/out")"
valid merge-1.schema.json m4.json
check m4.json '[r["rank"] for r in d["summaries"]["benchmarks"][0]["ranks"]] == [0, 1, 2, 3]'
check m4.json '[r["straggler"] for r in d["summaries"]["benchmarks"][0]["ranks"]] == [False, False, True, False]'
check m4.json 'd["summaries"]["benchmarks"][0]["spread"] > 2 and d["problems"] == []'
check m4.json 'all(r["p50_s"] <= r["p90_s"] <= r["p99_s"] <= r["max_s"] for r in d["summaries"]["benchmarks"][0]["ranks"])'
valid findings-1.schema.json m4.findings.json
check m4.findings.json '[(f["leaf"], f["level"], f["evidence"]["numbers"]["rank"]) for f in d["findings"]] == [("distributed.straggler", 5, 2)]'
# the finding goes on through the loop's next step
run "$PERFLOOP" select --findings m4.findings.json
expect_rc 0
grep -q "straggler" "$T/out" || fail "select: $(cat "$T/out")"
# the HTML report's per-rank table marks it
run "$PERFLOOP" report --format html -o r.html m4.json m4.findings.json
expect_rc 0
grep -q '<tr class="straggler"><td>2</td>' r.html || fail "report: no per-rank table marking rank 2"
# two ranks (Open MPI's variables): the slow one against the other
for r in 0 1; do b 'b2.%r.json' OMPI_COMM_WORLD_RANK=$r OMPI_COMM_WORLD_SIZE=2 SLOW=1; done
run "$PERFLOOP" merge --format json b2.*.json
expect_rc 0
cp "$T/out" m2.json
valid merge-1.schema.json m2.json
check m2.json '[r["straggler"] for r in d["summaries"]["benchmarks"][0]["ranks"]] == [False, True]'
check m2.json 'd["summaries"]["benchmarks"][0]["ranks"][0]["launcher"] == "openmpi"'

# synthetic ranks from one summary's samples: equal ranks, and one rank
# 5% slower (under the 1.10 bound), are no stragglers; 30% slower is
python3 - b4.0.json <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
base = [0.010 + 0.0001 * i for i in range(12)]
def write(name, rank, scale):
    d["launch"] = dict(d["launch"], rank=rank, world_size=4)
    d["benchmarks"][0]["samples"] = [dict(d["benchmarks"][0]["samples"][0], wall_s=x * scale,
                                          counted=True, batch=1) for x in base]
    json.dump(d, open(name, "w"))
for r in range(4):
    write(f"aa.{r}.json", r, 1.0)
    write(f"ab.{r}.json", r, 1.05 if r == 3 else 1.0)
    write(f"ac.{r}.json", r, 1.30 if r == 3 else 1.0)
PY
refigure aa.*.json ab.*.json ac.*.json
for k in aa ab; do
	run "$PERFLOOP" merge -o "$k" $k.*.json
	expect_rc 0
	check "$k.json" 'd["summaries"]["benchmarks"][0]["stragglers"] == 0'
	check "$k.findings.json" 'd["findings"] == []'
done
run "$PERFLOOP" merge -o ac ac.*.json
check ac.json '[r["straggler"] for r in d["summaries"]["benchmarks"][0]["ranks"]] == [False, False, False, True]'

# refused: a rank twice (both files named), different commands
cp b4.1.json again.json
run "$PERFLOOP" merge b4.0.json b4.1.json again.json
expect_rc 2
expect_err "b4.1.json and again.json are both rank 1"
[ "$(wc -l <"$T/err")" -eq 1 ] || fail "$(cat "$T/err")"
RANK=1 WORLD_SIZE=4 "$PERFLOOP" bench -r 3 -w 0 --batch 1 -o other.%r.json true >/dev/null 2>&1 ||
	fail "bench true"
run "$PERFLOOP" merge b4.0.json other.1.json
expect_rc 2
expect_err "other.1.json: benchmarks.0. is 'true'"
# reported: a rank missing of the world; a summary that recorded no rank
run "$PERFLOOP" merge -o miss b4.0.json b4.1.json b4.3.json
expect_rc 0
grep -q "rank 2 missing of 0..3" "$T/out" || fail "missing rank: $(cat "$T/out")"
check miss.json 'd["problems"] == ["summaries: rank 2 missing of 0..3"]'
python3 -c "
import json; d = json.load(open('b4.1.json')); del d['launch']; json.dump(d, open('norank.json', 'w'))"
run "$PERFLOOP" merge -o nr b4.0.json norank.json
expect_rc 0
check nr.json 'd["summaries"]["benchmarks"][0]["ranks"][1]["rank_from_order"] is True'
check nr.json 'any("records no rank: taken as rank 1" in p for p in d["problems"])'
# bad inputs: one line, exit 2
run "$PERFLOOP" merge nothing-here.json
expect_rc 2
expect_err "nothing-here.json: not a bench summary"
echo '{"schema": "perfloop.bench/1"}' >broken.json
run "$PERFLOOP" merge broken.json
expect_rc 2
expect_err "broken.json"
printf 'a;b 3\nc;d x\n' >bad.folded
run "$PERFLOOP" merge bad.folded
expect_rc 2
expect_err "bad.folded:2: count"
# counts whose sum would wrap (the fuzzer's): refused, one line
printf 'a;b 18446744073709551615\n' >huge.folded
run "$PERFLOOP" merge huge.folded
expect_rc 2
expect_err "huge.folded:1: count"
run "$PERFLOOP" merge
expect_rc 2

# profiles: hand-made stacks with the rank profile records beside them
launch() { # PREFIX RANK: PREFIX.findings.json as profile writes it under torchrun
	printf '{"schema": "perfloop.findings/1", "tool": "t", "findings": [], "launch": {"rank": %s, "local_rank": %s, "world_size": 2, "host": "h%s", "launcher": "torchrun"}}\n' "$2" "$2" "$2" >"$1.findings.json"
}
printf 'main (t.py:1);step (t.py:5);_BaseDataLoaderIter.__next__ (torch/utils/data/dataloader.py:630);get (q.py:9) 30\nmain (t.py:1);step (t.py:5);forward (m.py:3) 70\n' >p.1.folded
printf 'main (t.py:1);step (t.py:5);forward (m.py:3) 90\nmain (t.py:1);log (t.py:20) 10\n' >p.0.folded
launch p.0 0
launch p.1 1
echo '<svg/>' >p.0.svg
run "$PERFLOOP" merge -o mp p.1.folded p.0.svg p.0.folded
expect_rc 0
valid merge-1.schema.json mp.json
check mp.json '[(r["rank"], r["samples"], r["host"]) for r in d["profiles"]["ranks"]] == [(0, 100, "h0"), (1, 100, "h1")]'
check mp.json 'd["profiles"]["samples"] == 200 == d["profiles"]["ranks_samples"] and d["problems"] == []'
check mp.json 'd["profiles"]["ranks"][1]["data_share"] == 0.3 and d["profiles"]["ranks"][0]["data_share"] is None'
check mp.json 'd["profiles"]["ranks"][0]["top"] == "forward (m.py:3)" and d["profiles"]["ranks"][0]["top_share"] == 0.9'
python3 - mp.folded <<'PY' || fail "merged stacks: $(cat mp.folded)"
import sys
st = {}
for line in open(sys.argv[1]):
    s, c = line.rsplit(" ", 1)
    st[s] = st.get(s, 0) + int(c)
assert st["main (t.py:1);step (t.py:5);forward (m.py:3)"] == 160, st
assert sum(st.values()) == 200, st
PY
[ -s mp.svg ] || fail "no merged flame graph"
run "$PERFLOOP" merge --by-rank -o br p.0 p.1
expect_rc 0
python3 - br.folded <<'PY' || fail "--by-rank: $(cat br.folded)"
import sys
roots = {}
for line in open(sys.argv[1]):
    s, c = line.rsplit(" ", 1)
    roots[s.split(";")[0]] = roots.get(s.split(";")[0], 0) + int(c)
assert roots == {"rank 0": 100, "rank 1": 100}, roots
PY
# the rank the others wait for: they spend 60% of their samples in the
# all-reduce (Python's and MPI's frames), it 5%; equal waits name none
printf 'step (t.py:5);fwd (m.py:3) 40\nstep (t.py:5);all_reduce (torch/distributed/distributed_c10d.py:2050) 60\n' >w.0.folded
printf 'main;compute 40\nmain;PMPI_Allreduce;ompi_coll_tuned_allreduce_intra_dec_fixed;opal_progress 60\n' >w.1.folded
printf 'step (t.py:5);fwd (m.py:3) 95\nstep (t.py:5);all_reduce (torch/distributed/distributed_c10d.py:2050) 5\n' >w.2.folded
run "$PERFLOOP" merge -o w w.0.folded w.1.folded w.2.folded
expect_rc 0
grep -q "straggler: rank 2, 5.0% of its samples in collectives" "$T/out" || fail "wait: $(cat "$T/out")"
check w.json '[(r["wait_share"], r["straggler"]) for r in d["profiles"]["ranks"]] == [(0.6, False), (0.6, False), (0.05, True)]'
check w.findings.json '[(f["leaf"], f["level"], f["evidence"]["numbers"]["rank"]) for f in d["findings"]] == [("distributed.straggler", 5, 2)]'
run "$PERFLOOP" merge -o w2 w.0.folded w.1.folded
check w2.json 'not any(r["straggler"] for r in d["profiles"]["ranks"])'

# mixed mode's helpers: a rank's threads without Python (gloo's, OpenMP's,
# idle) are shown apart under one frame and count in neither the data
# share nor the top function: the training thread waits for data 80% of
# its samples though helpers hold 70% of the rank's (the issue's case
# read 17.8% against the rank's own 88%)
T0='main (t.py:1);_BaseDataLoaderIter.__next__ (torch/utils/data/dataloader.py:630);sleep (ds.py:4) 24
main (t.py:1);step (t.py:5);mm (libtorch_cpu.so) 6
start_thread (libc.so.6);gloo::transport::tcp::Loop::run (libgloo.so);epoll_wait (libc.so.6);(idle) 50
start_thread (libc.so.6);omp_worker (libgomp.so.1);futex_wait_inner (libc.so.6) 20'
printf '%s\n' "$T0" >h.0.folded
printf '%s\n' "$T0" >h.1.folded
run "$PERFLOOP" merge --by-rank -o h h.0.folded h.1.folded
expect_rc 0
valid merge-1.schema.json h.json
check h.json '[(round(r["helper_share"], 3), round(r["data_share"], 3), r["top"]) for r in d["profiles"]["ranks"]] == [(0.7, 0.8, "sleep (ds.py:4)")] * 2'
check h.json 'd["profiles"]["samples"] == 200'
python3 - h.folded <<'PY' || fail "helpers not apart: $(cat h.folded)"
import sys
helpers = {}
for line in open(sys.argv[1]):
    s, c = line.rsplit(" ", 1)
    f = s.split(";")
    if "libgloo" in s or "libgomp" in s:
        assert f[1] == "(threads without Python: the libraries' helpers)", s
        helpers[f[0]] = helpers.get(f[0], 0) + int(c)
    else:
        assert "helpers" not in s, s
assert helpers == {"rank 0": 70, "rank 1": 70}, helpers
PY
grep -q "70.0%   80.0%" "$T/out" || fail "the table: $(cat "$T/out")"

# a real profile records its rank (in every JSON output, the flame
# graph's subtitle); --rank-filter runs the other ranks unprofiled
py=$(pythons311 | head -1)
[ -n "$py" ] || skip "no CPython 3.11 here for the profile half"
run env RANK=1 WORLD_SIZE=2 "$PERFLOOP" profile --rank-filter 0 -o rp.%r -- sh -c 'echo ran; exit 5'
expect_rc 5
grep -q "^ran$" "$T/out" || fail "--rank-filter: the program did not run: $(cat "$T/out")"
[ ! -e rp.1.folded ] || fail "--rank-filter: rank 1 was profiled"
run env RANK=0 WORLD_SIZE=2 "$PERFLOOP" profile --rank-filter 0,3-4 -d 5 -o rp.%r -- "$py" -c 'sum(range(10**7))'
expect_rc 0
check rp.0.findings.json 'd["launch"]["rank"] == 0 and d["launch"]["world_size"] == 2 and d["launch"]["launcher"] == "torchrun"'
valid findings-1.schema.json rp.0.findings.json
grep -q "rank 0 of 2 on" rp.0.svg || fail "the flame graph does not say its rank"
check rp.0.speedscope.json '", rank 0 of 2 on " in d["name"]'
# a launcher that does not say the world's size: "rank 1 on HOST"
run env RANK=1 "$PERFLOOP" profile -d 5 --format speedscope,findings -o 'nw.%r' -- "$py" -c 'sum(range(10**6))'
expect_rc 0
check nw.1.speedscope.json '", rank 1 on " in d["name"]'
check nw.1.findings.json 'd["launch"]["rank"] == 1 and d["launch"]["world_size"] is None'
run "$PERFLOOP" profile --rank-filter 1,,2 -- true
expect_rc 2
expect_err "option '--rank-filter': expected ranks"
exit 0
