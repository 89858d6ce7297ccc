#!/bin/sh
# perfloop.yaml: `bench NAME` runs a benchmark as the file gives it (its
# command, sizes, environment, warm-up and runs; options given win), found
# at the git root from a subfolder; the summary records the spec (file,
# name, settings, hash) and validates; `--all` runs each in turn; a
# changed benchmark between a before and an after is refused by verify's
# same_spec, naming the keys; bad files, -P with a name and --all with a
# command are refused in one line (exit 2); a command that is no name runs
# as before.
. "$PERFLOOP_SRC/tests/cli/lib.sh"
new_repo repo
mkdir -p sub
cat >perfloop.yaml <<'Y'
suite: "true"
benchmarks:
  env-check:
    # fails unless the spec's environment reaches the command
    cmd: test "$PL_SPEC_X" = 1 && test {k} -gt 0
    shell: true
    params: {k: [1, 2]}
    env: {PL_SPEC_X: "1"}
    warmup: 0
    min_runs: 3
    target: timing
  plain:
    cmd: "true"
    min_runs: 4
Y
cd sub
run "$PERFLOOP" bench --sim off --batch 1 -o e.json env-check
expect_rc 0
check e.json '[b["name"] for b in d["benchmarks"]] == ["env-check k=1", "env-check k=2"]'
check e.json 'all(len(b["samples"]) >= 3 for b in d["benchmarks"])'
check e.json 'd["spec"]["benchmark"] == "env-check" and d["spec"]["file"].endswith("/perfloop.yaml")'
check e.json 'd["spec"]["settings"] == {"cmd": "test \"$PL_SPEC_X\" = 1 && test {k} -gt 0", "shell": True, "params": {"k": "1,2"}, "env": {"PL_SPEC_X": "1"}, "warmup": 0, "min_runs": 3, "expect": None, "target": "timing"}'
check e.json 'len(d["spec"]["hash"]) == 16'
[ -z "${PL_SPEC_X:-}" ] || fail "the spec's environment leaked"
valid bench-1.schema.json e.json
# without the spec the same command fails: the environment was the spec's
run "$PERFLOOP" bench --sim off -r 2 -w 0 --shell 'test "$PL_SPEC_X" = 1'
expect_rc 3
expect_err "exited with code 1"
# options given here win over the file's
run "$PERFLOOP" bench --sim off --batch 1 --runs 2 -o p.json plain
expect_rc 0
# (the runs asked, as settings say: samples taken while the host slowed the
# CPU are measured again and kept beside, uncounted)
check p.json 'd["settings"]["runs"] == 2 and sum(s["counted"] for s in d["benchmarks"][0]["samples"]) == 2 and d["spec"]["settings"]["min_runs"] == 4'
# --all: each benchmark in turn, in the history
run "$PERFLOOP" bench --sim off --batch 1 -r 2 --all
expect_rc 0
grep -q "^== env-check" "$T/err" && grep -q "^== plain" "$T/err" || fail "--all: $(cat "$T/err")"
[ "$(grep -c "^Benchmark" "$T/out")" -eq 3 ] || fail "--all ran: $(grep "^Benchmark" "$T/out")"
# getopt takes an unambiguous prefix (--al was --all until --alloc came):
# an ambiguous one is refused in one line, never passed on to a benchmark
run "$PERFLOOP" bench --sim off --batch 1 -r 2 --al
expect_rc 2
expect_err "option '--al'"
[ "$(wc -l <"$T/err")" -eq 1 ] || fail "--al: $(cat "$T/err")"
# verify: the same benchmark as the file said then
cd ..
run "$PERFLOOP" bench --sim off --batch 1 -o b.json plain
expect_rc 0
sed 's/min_runs: 4/min_runs: 5/' perfloop.yaml >y && mv y perfloop.yaml
run "$PERFLOOP" bench --sim off --batch 1 -o a.json plain
expect_rc 0
run "$PERFLOOP" verify --before b.json --after a.json --suite-exit-code 0 -o v.json
check v.json '[r for r in d["rules"] if r["name"] == "same_spec"][0]["passed"] is False'
check v.json '[r for r in d["rules"] if r["name"] == "same_spec"][0]["numbers"]["differing"] == ["min_runs"]'
check v.json 'd["verdict"] == "reject" and "same_spec" in d["failed_rules"]'
run "$PERFLOOP" verify --before a.json --after a.json --suite-exit-code 0 -o v2.json
check v2.json '[r for r in d["rules"] if r["name"] == "same_spec"][0]["passed"] is True'
# refused in one line, exit 2
run "$PERFLOOP" bench --sim off -P k=1,2 env-check
expect_rc 2
expect_err "perfloop.yaml sets the parameters of its benchmarks"
run "$PERFLOOP" bench --sim off --all true
expect_rc 2
expect_err "option '--all': runs every benchmark"
printf 'benchmarks:\n  a:\n    cmd: ./x\n    warmup: two\n' >perfloop.yaml
run "$PERFLOOP" bench --sim off a
expect_rc 2
expect_err "perfloop.yaml:4: benchmarks.a.warmup: expected an integer from 0 to 1000000, got 'two'"
[ "$(wc -l <"$T/err")" -eq 1 ] || fail "more than one line: $(cat "$T/err")"
# a command with arguments is no name: the broken file is not read
run "$PERFLOOP" bench --sim off -r 2 -w 0 'sleep 0.001'
expect_rc 0
rm perfloop.yaml
run "$PERFLOOP" bench --sim off --all
expect_rc 2
expect_err "option '--all': no perfloop.yaml here"
# baseline with no --bench: the file's benchmarks (one command per size,
# its environment through env), suite, ledger and policy; try reuses them
cat >perfloop.yaml <<'Y'
suite: "test -f spin.sh"
ledger: perf/ledger.jsonl
benchmarks:
  spin:
    cmd: ./spin.sh {n}
    params: {n: [20000, 40000]}
    env: {PL_X: "it's"}
    warmup: 2
    min_runs: 6
policy: {min_gain: 10%, max_iterations: 2}
Y
printf '#!/bin/sh
test "$PL_X" = "it'"'"'s" || exit 3
i=0; while [ $i -lt $1 ]; do i=$((i+1)); done
' >spin.sh
chmod +x spin.sh
git add -A
git commit -qm spec
run "$PERFLOOP" baseline
if [ "$rc" -eq 1 ] && grep -q "noisy" "$T/err"; then
	skip "baseline refused as too noisy here: $(cat "$T/err")"
fi
expect_rc 0
python3 - .perfloop/loop.json <<'PY' || fail "baseline's commands: $(cat .perfloop/loop.json)"
import json, sys
d = json.load(open(sys.argv[1]))
q = "'PL_X=it'\\''s'"
want = [("spin n=%d" % n, "env %s ./spin.sh %d" % (q, n)) for n in (20000, 40000)]
got = [(b["name"], b["command"]) for b in d["benchmarks"]]
assert got == want, (got, want)
PY
check .perfloop/loop.json 'd["suite"] == "test -f spin.sh" and d["ledger"] == "perf/ledger.jsonl" and d["min_gain"] == 0.1 and d["max_iterations"] == 2'
check .perfloop/loop.json 'd["warmup"] == 2 and d["min_runs"] == 6'
check .perfloop/baseline.json 'all(len(b["samples"]) >= 6 for b in d["benchmarks"]) and d["settings"]["warmup"] == 2'

# limits, each one line naming the file (and the key), at once: a sweep of
# 10^12 combinations (it grew to 24 GB), 200,000 levels of nesting (124 s
# in libyaml), a file of 5 MiB
mkdir "$T/limits" && cd "$T/limits"
printf 'benchmarks:\n  x:\n    cmd: echo {a}{b}{c}{d}\n    params: {a: 1..1000, b: 1..1000, c: 1..1000, d: 1..1000}\n' >perfloop.yaml
run "$PERFLOOP" bench --sim off x
expect_rc 2
expect_err "perfloop.yaml:4: benchmarks.x.params.b: with the parameters before it, over 10000 combinations"
python3 -c "print('benchmarks: ' + '[' * 200000 + ']' * 200000)" >perfloop.yaml
run "$PERFLOOP" bench --sim off x
expect_rc 2
expect_err "perfloop.yaml:1: nested deeper than 64 levels"
python3 -c "print('benchmarks: {}\n' + '#' * (5 << 20))" >perfloop.yaml
run "$PERFLOOP" bench --sim off x
expect_rc 2
expect_err "perfloop.yaml: over 4 MiB"
exit 0
