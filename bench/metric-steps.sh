#!/bin/sh
# bench --metric steps and steps:cpu: the step time of a PyTorch loop timed
# inside it, against the script's own per-step timer, quiet and beside two
# CPU hogs. Needs Debian's python3-torch. Usage: bench/metric-steps.sh [RUNS]
set -eu
P=${PERFLOOP:-build/perfloop}
RUNS=${1:-5}
PY=/usr/bin/python3
T=$(mktemp -d)
trap 'kill $H1 $H2 2>/dev/null || true; rm -rf "$T"' EXIT
H1= H2=
cat >"$T/train.py" <<'PY'
import time, torch
torch.manual_seed(0)
d = 512
model = torch.nn.Sequential(torch.nn.Linear(d, d), torch.nn.ReLU(), torch.nn.Linear(d, 10))
opt = torch.optim.Adam(model.parameters(), lr=0.01)
x = torch.randn(64, d); y = torch.randint(0, 10, (64,))
last = None
for step in range(60):
    opt.zero_grad()
    torch.nn.functional.cross_entropy(model(x), y).backward()
    opt.step()
    now = time.perf_counter()
    if last is not None:
        print("step_time_ms=%.4f" % ((now - last) * 1e3))
    last = now
PY
row() {
	for m in steps steps:cpu 'step_time_ms=([0-9.]+)'; do
		"$P" bench --no-history --runs "$RUNS" --metric "$m" -n t -o "$T/s.json" -- $PY "$T/train.py" >/dev/null 2>&1 || true
		python3 - "$1" "$m" "$T/s.json" <<'PY'
import json, sys
d = json.load(open(sys.argv[3]))["benchmarks"][0]
dim = d["decides"]["dimension"]
x = d["dimensions"][dim]
print("| %s | %s | %.2f ms | %.1f%% |" % (sys.argv[1], sys.argv[2], x["value"], 100 * x["cv"]))
PY
	done
}
echo "| machine | --metric | median | CV over $RUNS runs |"
echo "|---|---|---|---|"
row quiet
sh -c 'while :; do :; done' & H1=$!
sh -c 'while :; do :; done' & H2=$!
row "two CPU hogs"
