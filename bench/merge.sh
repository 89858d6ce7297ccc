#!/bin/sh
# perfloop merge at scale: RANKS rank profiles of STACKS distinct stacks
# each (default 1024 x 10,000), as a data-parallel job's would be: most
# stacks shared by every rank (the same model code), a tenth of each
# rank's its own (rank-specific paths, addresses, data). Reports merge's
# wall time and peak RSS (GNU time), three runs, median; beside them
# `cat` of the same files (reading them at all) and, for the memory bound,
# the merged profile's distinct stacks against the inputs' total.
# Usage: sh bench/merge.sh [build/perfloop] [RANKS] [STACKS] [OWN]
# (OWN: each rank's own stacks, per ten; 1 by default, 0 for a job whose
# ranks all run the same stacks)
set -eu
PL=$(cd "$(dirname "${1:-build/perfloop}")" && pwd)/$(basename "${1:-build/perfloop}")
RANKS=${2:-1024}
STACKS=${3:-10000}
OWN=${4:-1}
W=$(mktemp -d)
trap 'rm -rf "$W"' EXIT
cd "$W"
python3 - "$RANKS" "$STACKS" "$OWN" <<'PY'
import random, sys
ranks, stacks, own = int(sys.argv[1]), int(sys.argv[2]), int(sys.argv[3]) * int(sys.argv[2]) // 10
random.seed(11)
def stack(tag, i):
    r = random.Random(i * 7919 + tag)
    st = ["main (train.py:1)", "train (train.py:40)", "step (train.py:52)"]
    for d in range(r.randint(4, 24)):
        k = min(int(r.expovariate(0.6)), 11)
        st.append("fn%d_%d (mod%d.py:%d)" % (d, k, k, d * 10 + k))
    return ";".join(st)
shared = [stack(0, i) for i in range(stacks - own)]
for rank in range(ranks):
    with open("prof.%d.folded" % rank, "w") as f:
        for s in shared:
            f.write("%s %d\n" % (s, random.randint(1, 50)))
        for i in range(own):
            f.write("%s;own_%d_%d (rank.py:%d) %d\n" % (stack(rank + 1, i), rank, i, i, random.randint(1, 5)))
PY
echo "inputs: $RANKS ranks x $STACKS stacks, $(du -sh . | cut -f1) of collapsed stacks"
for i in 1 2 3; do
	/usr/bin/time -f "%e %M" "$PL" merge -o merged prof.*.folded >/dev/null 2>>merge.times
	/usr/bin/time -f "%e %M" sh -c 'cat prof.*.folded >/dev/null' 2>>cat.times
done
python3 - merge.times cat.times merged.json <<'PY'
import json, statistics, sys
def col(path, k):
    return [float(l.split()[k]) for l in open(path) if l.strip() and l.split()[0][0].isdigit()]
mt, mr = col(sys.argv[1], 0), col(sys.argv[1], 1)
ct = col(sys.argv[2], 0)
d = json.load(open(sys.argv[3]))
print("merge: %s s (median %.1f s), peak RSS %.0f MiB; cat of the inputs: median %.2f s"
      % (" ".join("%.1f" % x for x in mt), statistics.median(mt), statistics.median(mr) / 1024,
         statistics.median(ct)))
print("merged samples %d = the ranks' sum %d" % (d["profiles"]["samples"], d["profiles"]["ranks_samples"]))
PY
echo "distinct stacks merged: $(wc -l <merged.folded)"
