#!/bin/sh
# Steps found from Python stacks against the training script's own timers
# (issue 40): examples/train/train.py at several step lengths and worker
# counts, each profiled by `perfloop profile` (Python mode, or MODE=mixed:
# Python and native stacks, the workers not followed); per row the
# steps the script ran, the steps perfloop found (its warm-up and the
# unfinished last one added back), and the median data and step time of
# each, perfloop's over the steps it found, the script's over its own.
#
#   [MODE=mixed] sh bench/steps.sh [build] [repeats]
set -eu
BUILD=${1:-build}
REP=${2:-1}
PL=$BUILD/perfloop
MODE=${MODE:-python}
case $MODE in
python) HOW=--subprocesses ;;
mixed) HOW="--mode mixed" ;;
*) echo "steps.sh: MODE is python or mixed" >&2; exit 2 ;;
esac
PY=/usr/bin/python3
TRAIN=$(dirname "$0")/../examples/train/train.py
$PY -c 'import torch' 2>/dev/null || { echo "steps.sh: needs Debian's python3-torch" >&2; exit 77; }
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
echo "| workers | batch x wait | script's step p50 | steps run | steps found | found/run | data p50 script / perfloop | step p50 script / perfloop |"
echo "|---|---|---|---|---|---|---|---|"
for cfg in "0 8 4" "0 2 1" "0 1 0.5" "2 8 4" "2 2 1" "2 8 0.2"; do
	set -- $cfg
	r=0
	while [ "$r" -lt "$REP" ]; do
		r=$((r + 1))
		"$PL" profile $HOW -o "$T/p" -- $PY "$TRAIN" --workers "$1" --batch "$2" --wait "$3" --steps 80 --truth "$T/t.json" >/dev/null 2>&1 || { echo "profile failed: $cfg" >&2; continue; }
		$PY - "$T/t.json" "$T/p.steps.json" "$1" "$2" "$3" <<'PY'
import json, statistics, sys
t = json.load(open(sys.argv[1]))
p = json.load(open(sys.argv[2]))
run = t["steps"]
found = p["steps"] + 1  # its warm-up steps are in "steps"; the unfinished last one is not
own = t["per_step"][3:-1]
sd = statistics.median(s["data_time"] for s in own) * 1e3
ss = statistics.median(s["step_time"] for s in own) * 1e3
pd = p["steady"]["data"]["p50_s"] * 1e3
ps = p["steady"]["step"]["p50_s"] * 1e3
print("| %s | %s x %s ms | %.1f ms | %d | %d | %.0f%% | %.2f / %.2f ms | %.1f / %.1f ms |" % (
    sys.argv[3], sys.argv[4], sys.argv[5], ss, run, found, 100.0 * found / run, sd, pd, ss, ps))
PY
	done
done
