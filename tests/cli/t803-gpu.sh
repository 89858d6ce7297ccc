#!/bin/sh
# bench --gpu and profile --gpu with a stand-in NVML (tests/cli/fake_nvml.c)
# answering scripted values: the sampler's readings and statistics, the
# JSON series, fields a driver does not support, a driver that fails mid-run
# or at start, no GPU at all, and no NVML: one line, the rest unaffected.
. "$(dirname "$0")/lib.sh"
set -e
# no NVML: one line, the benchmark as always
PERFLOOP_NVML_LIB=$T/none/libnvidia-ml.so.1 run "$PERFLOOP" bench --gpu -w 0 -r 3 --batch 1 -o none.json -- true
expect_rc 0
[ "$(grep -c 'no GPU section' out)" -eq 1 ] || fail "no one line about the GPU: $(cat out)"
grep -q "could not be loaded" out || fail "the line does not say why: $(cat out)"
check none.json "d['gpu']['available'] is False and 'could not be loaded' in d['gpu']['status']"
check none.json "len([s for s in d['benchmarks'][0]['samples'] if s['counted']]) == 3"

fake_nvml
# scripted readings at 20 Hz for about 1 s
FAKE_NVML="util=10,50;mem=2048;total=8192;clock=1500;power=120" \
	run "$PERFLOOP" bench --gpu-hz 20 -w 0 -r 3 --batch 1 -o g.json -- sleep 0.3
expect_rc 0
grep -q "GPU 0 (Stand-in GPU 0)" out || fail "no GPU section: $(cat out)"
check g.json "d['gpu']['available'] and d['gpu']['hz'] == 20 and len(d['gpu']['devices']) == 1"
check g.json "d['gpu']['devices'][0]['samples'] >= 10 and d['gpu']['devices'][0]['error'] is None"
check g.json "abs(d['gpu']['devices'][0]['util']['mean'] - 30) <= 3 and d['gpu']['devices'][0]['util']['min'] == 10"
check g.json "d['gpu']['devices'][0]['memory']['peak_bytes'] == 2048 << 20 and d['gpu']['devices'][0]['memory']['total_bytes'] == 8192 << 20"
check g.json "d['gpu']['devices'][0]['sm_clock_mhz_p50'] == 1500 and d['gpu']['devices'][0]['power_w_mean'] == 120"
check g.json "len(d['gpu']['devices'][0]['series']['t']) == len(d['gpu']['devices'][0]['series']['util']) == d['gpu']['devices'][0]['samples']"
check g.json "all(b > a for a, b in zip(d['gpu']['devices'][0]['series']['t'], d['gpu']['devices'][0]['series']['t'][1:]))"
check g.json "d['gpu']['devices'][0]['series']['util'][:4] == [10, 50, 10, 50]"

# fields the driver does not give: left out, the rest kept
FAKE_NVML="util=40;notsup=power,clock,processes" run "$PERFLOOP" bench --gpu -w 0 -r 2 --batch 1 -o ns.json -- sleep 0.2
expect_rc 0
check ns.json "d['gpu']['devices'][0]['power_w_mean'] is None and d['gpu']['devices'][0]['sm_clock_mhz_p50'] is None"
check ns.json "d['gpu']['devices'][0]['util']['mean'] == 40 and d['gpu']['devices'][0]['error'] is None"
FAKE_NVML="notsup=util" run "$PERFLOOP" bench --gpu -w 0 -r 2 --batch 1 -o nu.json -- sleep 0.2
expect_rc 0
check nu.json "d['gpu']['devices'][0]['util']['mean'] is None and d['gpu']['devices'][0]['memory']['peak_bytes'] > 0"
grep -q "utilization not given" out || fail "unsupported utilization not said: $(cat out)"

# a driver that fails mid-run: the samples until then, the error, the run unaffected
FAKE_NVML="util=70;fail_after=3" run "$PERFLOOP" bench --gpu -w 0 -r 3 --batch 1 -o lost.json -- sleep 0.3
expect_rc 0
check lost.json "d['gpu']['devices'][0]['samples'] == 3 and 'GPU is lost' in d['gpu']['devices'][0]['error']"
grep -q "sampling stopped after 3 samples: utilization: GPU is lost" out || fail "mid-run failure not said: $(cat out)"
check lost.json "len([s for s in d['benchmarks'][0]['samples'] if s['counted']]) == 3"

# NVML that cannot start, or sees no GPU
FAKE_NVML="init=FAIL" run "$PERFLOOP" bench --gpu -w 0 -r 2 --batch 1 -- true
expect_rc 0
grep -q "could not start: Driver Not Loaded" out || fail "init failure: $(cat out)"
FAKE_NVML="devices=0" run "$PERFLOOP" bench --gpu -w 0 -r 2 --batch 1 -o zero.json -- true
expect_rc 0
check zero.json "d['gpu']['available'] is False and 'sees no GPU' in d['gpu']['status']"

# profile --gpu: the section and PREFIX.gpu.json; no training loop, no GPU finding
PY=$(pythons311 | head -1)
if [ -n "$PY" ]; then
	FAKE_NVML="util=15" run "$PERFLOOP" profile --gpu -o p -- "$PY" -c 'import time; t = time.time()
while time.time() - t < 0.5: pass'
	expect_rc 0
	grep -q "GPU 0 (Stand-in GPU 0)" out || fail "profile: no GPU section: $(cat out)"
	check p.gpu.json "d['schema'] == 'perfloop.gpu/1' and d['devices'][0]['util']['mean'] == 15"
	check p.findings.json "'gpu.underutilized' not in [f['leaf'] for f in d['findings']]"
fi

# bad usage: one line, exit 2
run "$PERFLOOP" bench --gpu-hz 0 -- true
expect_rc 2
expect_err "--gpu-hz"
run "$PERFLOOP" profile --gpu --mode native -- true
expect_rc 2
expect_err "--gpu"
echo ok
