#!/bin/sh
# perfloop system show|tune|reset. show reads the real machine; tune and
# reset write a fake /sys and /proc (PERFLOOP_SYSROOT), never the real one.
. "$(dirname "$0")/lib.sh"
set -e
run "$PERFLOOP" system show --json --window 0.2
expect_rc 0
check out "d['schema'] == 'perfloop.system/1'"
check out "all(set(i) >= {'name', 'value', 'status', 'effect', 'advice', 'tunable'} for i in d['items'])"
check out "all(i['status'] in ('ok', 'warn', 'info') for i in d['items'])"
check out "{'cpus', 'load', 'cpu busy', 'busy processes'} <= {i['name'] for i in d['items']}"
run "$PERFLOOP" system show --window 0.2
expect_rc 0
grep -q "What can disturb a measurement" out || fail "no text: $(cat out)"
# a busy process is named
sh -c 'while :; do :; done' &
spin=$!
sleep 0.2
run "$PERFLOOP" system show --json --window 0.5
kill $spin
# (named among the five busiest, unless five others were busier still: a
# loaded machine, as under a parallel test run)
check out "[i for i in d['items'] if i['name'] == 'busy processes'][0]['status'] == 'warn'"
check out "any(p['pid'] == $spin for i in d['items'] if i['name'] == 'busy processes' for p in i['value']) or len([i for i in d['items'] if i['name'] == 'busy processes'][0]['value']) == 5"

# a fake machine: two CPUs on powersave, boost on, the NMI watchdog on
R=$T/root
for c in 0 1; do
	mkdir -p "$R/sys/devices/system/cpu/cpu$c/cpufreq"
	echo powersave >"$R/sys/devices/system/cpu/cpu$c/cpufreq/scaling_governor"
	echo "performance powersave" >"$R/sys/devices/system/cpu/cpu$c/cpufreq/scaling_available_governors"
	echo 1200000 >"$R/sys/devices/system/cpu/cpu$c/cpufreq/scaling_cur_freq"
done
echo 2900000 >"$R/sys/devices/system/cpu/cpu1/cpufreq/scaling_cur_freq"
mkdir -p "$R/sys/devices/system/cpu/cpufreq"
echo 1 >"$R/sys/devices/system/cpu/cpufreq/boost"
mkdir -p "$R/proc/sys/kernel"
echo 1 >"$R/proc/sys/kernel/nmi_watchdog"
echo 2 >"$R/proc/sys/kernel/randomize_va_space"
export PERFLOOP_SYSROOT=$R
run "$PERFLOOP" system show --json --window 0.05
expect_rc 0
status() { j out "[i['status'] for i in d['items'] if i['name'] == '$1'][0]"; }
[ "$(status governor)" = warn ] || fail "powersave not flagged"
[ "$(status turbo)" = warn ] || fail "boost not flagged"
[ "$(status 'nmi watchdog')" = warn ] || fail "watchdog not flagged"
[ "$(status 'clock spread')" = warn ] || fail "1.2 vs 2.9 GHz not flagged"
run "$PERFLOOP" system tune --json
expect_rc 0
check out "sorted(c['path'] for c in d['changed']) == ['/proc/sys/kernel/nmi_watchdog', '/sys/devices/system/cpu/cpu0/cpufreq/scaling_governor', '/sys/devices/system/cpu/cpu1/cpufreq/scaling_governor', '/sys/devices/system/cpu/cpufreq/boost']"
[ "$(cat "$R/sys/devices/system/cpu/cpu1/cpufreq/scaling_governor")" = performance ] || fail "governor not set"
[ "$(cat "$R/sys/devices/system/cpu/cpufreq/boost")" = 0 ] || fail "boost not off"
[ "$(cat "$R/proc/sys/kernel/nmi_watchdog")" = 0 ] || fail "watchdog not off"
check "$R/var/lib/perfloop/system-tune.json" "d['files']['/sys/devices/system/cpu/cpufreq/boost'] == '1'"
run "$PERFLOOP" system show --json --window 0.05
[ "$(status governor)" = ok ] || fail "tuned governor still flagged"
# a second tune changes nothing and keeps the first record
run "$PERFLOOP" system tune
expect_rc 0
grep -q "nothing to change" out || fail "second tune: $(cat out)"
check "$R/var/lib/perfloop/system-tune.json" "d['files']['/sys/devices/system/cpu/cpu0/cpufreq/scaling_governor'] == 'powersave'"
run "$PERFLOOP" system reset
expect_rc 0
[ "$(cat "$R/sys/devices/system/cpu/cpu0/cpufreq/scaling_governor")" = powersave ] || fail "governor not restored"
[ "$(cat "$R/sys/devices/system/cpu/cpufreq/boost")" = 1 ] || fail "boost not restored"
[ "$(cat "$R/proc/sys/kernel/nmi_watchdog")" = 1 ] || fail "watchdog not restored"
[ ! -e "$R/var/lib/perfloop/system-tune.json" ] || fail "the record outlived reset"
run "$PERFLOOP" system reset
expect_rc 2
expect_err "no record of a 'perfloop system tune' to undo"
# a damaged record: one line naming the file, nothing written
mkdir -p "$R/var/lib/perfloop"
echo '{"schema": "perfloop.tune/1", "files": [' >"$R/var/lib/perfloop/system-tune.json"
run "$PERFLOOP" system reset
expect_rc 2
expect_err "system-tune.json:"
[ "$(cat "$R/sys/devices/system/cpu/cpu0/cpufreq/scaling_governor")" = powersave ] || fail "a damaged record changed a setting"
# a recorded value too long to be a setting: refused, not written
python3 -c 'import json; print(json.dumps({"schema": "perfloop.tune/1", "files": {"/proc/sys/kernel/nmi_watchdog": "9" * 400}}))' >"$R/var/lib/perfloop/system-tune.json"
run "$PERFLOOP" system reset
expect_rc 2
expect_err "not a setting 'system tune' makes"
[ "$(cat "$R/proc/sys/kernel/nmi_watchdog")" = 1 ] || fail "a 400-byte value was written"
# a record that names a path outside /sys and /proc/sys is refused
echo '{"schema": "perfloop.tune/1", "files": {"/etc/passwd": "x"}}' >"$R/var/lib/perfloop/system-tune.json"
run "$PERFLOOP" system reset
expect_rc 2
expect_err "not a setting 'system tune' makes"
# (root) only the settings tune makes, with values they can hold: a record
# naming another /proc/sys file (a core_pattern that runs a program) or a
# governor file with a command in it is refused, the setting untouched and
# the record kept
echo '|/bin/true' >"$R/proc/sys/kernel/core_pattern"
for rec in '{"/proc/sys/kernel/core_pattern": "|/tmp/evil %p"}' \
	'{"/sys/devices/system/cpu/cpu0/cpufreq/scaling_governor": "|/tmp/evil"}' \
	'{"/sys/devices/system/cpu/cpu0/../../../../proc/sys/kernel/core_pattern": "x"}' \
	'{"/proc/sys/kernel/nmi_watchdog": "2"}'; do
	echo "{\"schema\": \"perfloop.tune/1\", \"files\": $rec}" >"$R/var/lib/perfloop/system-tune.json"
	run "$PERFLOOP" system reset
	expect_rc 2
	expect_err "not a setting 'system tune' makes"
	[ -e "$R/var/lib/perfloop/system-tune.json" ] || fail "a refused record was deleted"
done
[ "$(cat "$R/proc/sys/kernel/core_pattern")" = '|/bin/true' ] || fail "reset wrote core_pattern"
[ "$(cat "$R/sys/devices/system/cpu/cpu0/cpufreq/scaling_governor")" = powersave ] || fail "reset wrote a governor it was not told"
[ "$(cat "$R/proc/sys/kernel/nmi_watchdog")" = 1 ] || fail "reset wrote a watchdog value tune never records"
# usage
for bad in "" "frob" "show extra" "show --window 0" "show --bogus"; do
	# shellcheck disable=SC2086
	run "$PERFLOOP" system $bad
	expect_rc 2
	[ "$(wc -l <err)" -eq 1 ] || fail "'system $bad': $(cat err)"
done
exit 0
