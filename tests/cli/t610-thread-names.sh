#!/bin/sh
# Thread names as threading gives them (py-spy shows them so), on every
# CPython the tests have: 3.11 to 3.13 give the kernel no names and 3.14's
# are cut to 15 bytes and miss a rename from another thread, so perfloop
# reads each Thread's _name from the process (its object's values or its
# dictionary). tests/cli/py/threadnames.py names threads every way
# threading does. dump shows the names; profile --threads labels each
# thread's stacks with its name, the renamed thread's new one included.
. "$PERFLOOP_SRC/tests/cli/lib.sh"
pys=$(pythons)
[ -n "$pys" ] || skip "no CPython 3.11+ on this machine"
prog=$PERFLOOP_SRC/tests/cli/py/threadnames.py
names='["loader-0", "Thread-1 (spin)", "worker-subclass", "with-a-dict", "after-rename", "a-name-longer-than-the-kernel-keeps", "загрузчик-данных"]'
checked=0
for py in $pys; do
	checked=$((checked + 1))
	"$py" "$prog" 30 >"ready$checked.txt" &
	p=$!
	i=0
	until grep -q ready "ready$checked.txt" 2>/dev/null; do
		i=$((i + 1))
		[ $i -lt 300 ] || fail "$py: threadnames.py never ready"
		sleep 0.1
	done
	run "$PERFLOOP" dump --json $p
	kill $p
	wait $p 2>/dev/null || true
	if [ "$rc" -eq 2 ] && grep -q "permission\|ptrace" err; then
		skip "cannot read another process here: $(cat err)"
	fi
	expect_rc 0
	python3 - out "$names" <<'PY' || fail "$py: names: $(cat out)"
import json, sys
d = json.load(open(sys.argv[1]))
want = json.loads(sys.argv[2])
got = sorted(t["name"] for t in d["threads"] if t["tid"] != d["pid"])
main = [t["name"] for t in d["threads"] if t["tid"] == d["pid"]]
print(d["python"], got)
assert main == ["MainThread"], main
assert got == sorted(want), (got, want)
PY
done
echo "checked $checked interpreter(s)"
# profile --threads: each thread's stacks under "thread TID (NAME)"
py=$(echo "$pys" | head -1)
run "$PERFLOOP" profile --threads -d 2 --format folded -o tn -- "$py" "$prog" 1.5
expect_rc 0
python3 - tn.folded "$names" <<'PY' || fail "profile --threads: $(cut -d';' -f1 tn.folded | sort | uniq -c)"
import json, re, sys
want = set(json.loads(sys.argv[2])) | {"MainThread"}
roots = {re.sub(r"^thread [0-9]+ \((.*)\)$", r"\1", l.split(";")[0]) for l in open(sys.argv[1])}
print(sorted(roots))
assert want <= roots, want - roots
PY
exit 0
