#!/bin/sh
# The deterministic measure past a command's wrappers: a pyenv-like shim
# (a chain of shell scripts that run small tools, then exec the program)
# is simulated as the program it ends as, so its count equals the
# program's own and the wrappers' processes are not simulated; a wrapper
# that does work of its own, or PERFLOOP_SIM_WRAPPERS=keep, keeps the
# command as given (its count then includes the wrappers).
. "$(dirname "$0")/lib.sh"
set -e
command -v valgrind >/dev/null 2>&1 || skip "valgrind is not installed (Debian: apt-get install valgrind)"
mkdir shims libexec
cat >shims/busy <<SH
#!/bin/sh
# a shim as pyenv writes one: find out what to run, then exec it
here=\$(dirname "\$0")
name=\$(basename "\$0")
exec "\$here/../libexec/run-\$name" "\$@"
SH
cat >libexec/run-busy <<SH
#!/bin/bash
v=\$(uname -s | tr A-Z a-z)
[ "\$v" = linux ] || exit 3
exec env PL_SHIMMED=1 "$BUSY" "\$@"
SH
cat >worker <<SH
#!/bin/sh
"$BUSY" 100000
exec "$BUSY" "\$@"
SH
chmod +x shims/busy libexec/run-busy worker
bench() { # name json args...
	n=$1 j=$2
	shift 2
	run "$PERFLOOP" bench --no-history -w 0 -r 3 --batch 1 --sim instructions --sim-runs 3 -n "$n" -o "$j" -- "$@"
	expect_rc 0
}
bench direct direct.json "$BUSY" 3000000
bench shim shim.json ./shims/busy 3000000
check shim.json "d['benchmarks'][0]['sim']['simulated_as'] == '$BUSY 3000000'"
check shim.json "d['benchmarks'][0]['sim']['wrappers_skipped'] >= 5"
grep -q "as $BUSY 3000000 (past [0-9]* wrapper processes: not counted)" out || fail "the table does not say what was simulated: $(cat out)"
valid bench-1.schema.json shim.json
check direct.json "'simulated_as' not in d['benchmarks'][0]['sim']"
# the same program, so the same count, to within what the environment's
# size moves (the shim added a variable): 0.1%
python3 - direct.json shim.json <<'PY' || fail "the shim's count is not the program's"
import json, sys
a, b = (json.load(open(f))['benchmarks'][0]['sim']['instructions']['p50'] for f in sys.argv[1:])
sys.exit(0 if abs(a - b) / a < 0.001 else 1)
PY
# the wrapper did work of its own: simulated as given, and says why not
bench worker worker.json ./worker 3000000
check worker.json "'simulated_as' not in d['benchmarks'][0]['sim']"
check worker.json "d['benchmarks'][0]['sim']['instructions']['p50'] > 1.02 * json.load(open('direct.json'))['benchmarks'][0]['sim']['instructions']['p50']"
# asked to keep the wrappers: the shims' shells are counted
PERFLOOP_SIM_WRAPPERS=keep run "$PERFLOOP" bench --no-history -w 0 -r 3 --batch 1 --sim instructions --sim-runs 3 -n kept -o kept.json -- ./shims/busy 3000000
expect_rc 0
check kept.json "'simulated_as' not in d['benchmarks'][0]['sim'] and d['benchmarks'][0]['sim']['instructions']['p50'] > 1.05 * json.load(open('direct.json'))['benchmarks'][0]['sim']['instructions']['p50']"
# a baseline simulated past the wrappers is not compared with counts that
# were not: they count different programs
PERFLOOP_SIM_WRAPPERS=keep run "$PERFLOOP" bench --no-history -w 0 -r 3 --batch 1 --sim instructions --sim-runs 3 -n shim --baseline shim.json -o k2.json -- ./shims/busy 3000000
expect_rc 0
check k2.json "all(c.get('dimension') not in ('sim_instructions', 'sim_cycles') for c in d['baseline']['comparisons'])"
