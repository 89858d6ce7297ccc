#!/bin/sh
# perfloop scan's cache (.perfloop/cache/scan): a rescan of unchanged files
# reads them from it with the same result; an edited file is rescanned
# alone; other options, another perfloop build and --no-cache never see an
# entry made for something else; damaged entries are misses; two scans at
# once both get the whole, right result; git ignores the cache.
. "$PERFLOOP_SRC/tests/cli/lib.sh"
new_repo proj
mkdir -p pkg
cat >pkg/train.py <<'PY'
import torch
def train(model, loader, opt, device):
    for x, y in loader:
        loss = model(x.to(device), y.to(device))
        loss.backward()
        opt.step()
        print(loss.item())
PY
for i in $(seq 1 40); do
	printf 'def f%d(items):\n    for a in items:\n        for b in items:\n            if a == b:\n                return a\n' "$i" >"pkg/m$i.py"
done
# findings FILE: the findings without the document's creation time
findings() {
	python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); print(json.dumps(d["findings"], sort_keys=True))' "$1"
}
# entries: how many file results the cache holds (all its files)
entries() {
	python3 -c 'import glob,json; print(sum(len(json.load(open(f))["entries"]) for f in glob.glob(".perfloop/cache/scan/*.json")))'
}

run "$PERFLOOP" scan --format json -o cold.json pkg
expect_rc 0
! grep -q "from the cache\|read from" "$T/err" || fail "a first scan read from the cache: $(cat "$T/err")"
[ "$(entries)" -eq 41 ] || fail "expected 41 cache entries, got $(entries)"
! git status --porcelain --untracked-files=all | grep -q perfloop || fail "the cache shows in git status: $(git status --porcelain)"

run "$PERFLOOP" scan --format json -o warm.json pkg
expect_rc 0
expect_err "41 of 41 files unchanged since a scan with these rules and options"
[ "$(findings cold.json)" = "$(findings warm.json)" ] || fail "a cached rescan differs"
j warm.json 'len(d["findings"])' | grep -qx 41 || fail "expected 41 findings: $(j warm.json 'len(d["findings"])')"

# one line edited: that file alone is scanned again, and its new finding shows
sed -i 's/print(loss.item())/print(loss.item(), x.cpu())/' pkg/train.py
echo 'x = 1' >>pkg/m1.py
run "$PERFLOOP" scan --format json -o edit.json pkg
expect_err "39 of 41 files unchanged"
check edit.json '[f["evidence"]["text"] for f in d["findings"] if f["leaf"] == "PY010"] == ["print(loss.item(), x.cpu())"]'
# the edited files' new results replace their old ones: still one per file
[ "$(entries)" -eq 41 ] || fail "edits left superseded entries: $(entries) for 41 files"
# the text output reads its code lines from the files, cached or not
run "$PERFLOOP" scan pkg/m2.py
grep -q "for b in items:" "$T/out" || fail "cached text output lacks the code line: $(cat "$T/out")"

# other options are another key: nothing read for them
run "$PERFLOOP" scan --format json --select PY001 -o sel.json pkg
! grep -q "read from" "$T/err" || fail "--select read another selection's results"
j sel.json 'sorted({f["leaf"] for f in d["findings"]})' | grep -qx "\['PY001'\]" || fail "--select PY001: $(j sel.json 'sorted({f["leaf"] for f in d["findings"]})')"
run "$PERFLOOP" scan --format json --min-severity medium -o high.json pkg
! grep -q "read from" "$T/err" || fail "--min-severity read another's results"
check high.json 'all(f["severity"] == "medium" for f in d["findings"]) and len(d["findings"]) == 40'

# --no-cache: nothing read, nothing written
n=$(find .perfloop/cache/scan -type f | xargs cat | cksum)
echo 'y = 2' >>pkg/m3.py
run "$PERFLOOP" scan --no-cache --format json -o nocache.json pkg
! grep -q "read from" "$T/err" || fail "--no-cache read the cache"
[ "$(find .perfloop/cache/scan -type f | xargs cat | cksum)" = "$n" ] || fail "--no-cache wrote to the cache"

# another perfloop build (its build id changed) never reads this one's entries
python3 - "$PERFLOOP" other-perfloop <<'PY' || skip "no GNU build id in the binary"
import re, subprocess, sys
out = subprocess.run(["readelf", "-n", sys.argv[1]], capture_output=True, text=True).stdout
m = re.search(r"Build ID: ([0-9a-f]+)", out)
if not m:
    sys.exit(1)
data = bytearray(open(sys.argv[1], "rb").read())
bid = bytes.fromhex(m.group(1))
assert data.count(bid) == 1
i = data.index(bid)
data[i] ^= 0xff
open(sys.argv[2], "wb").write(data)
PY
chmod +x other-perfloop
run ./other-perfloop scan --format json -o other.json pkg
expect_rc 0
! grep -q "read from" "$T/err" || fail "another build read this build's cache: $(cat "$T/err")"
[ "$(findings other.json)" = "$(findings nocache.json)" ] || fail "another build's scan differs"

# damaged entries: misses, the same result, no crash
for e in $(find .perfloop/cache/scan -name '*.json'); do printf '{"format": 1, "entries": {"' >"$e"; done
run "$PERFLOOP" scan --format json -o damaged.json pkg
expect_rc 0
! grep -q "read from" "$T/err" || fail "a damaged entry was read: $(cat "$T/err")"
[ "$(findings damaged.json)" = "$(findings nocache.json)" ] || fail "the scan after damage differs"

# two scans at once, from a cold cache: both whole and right
rm -rf .perfloop/cache
"$PERFLOOP" scan --format json -o c1.json pkg 2>c1.err &
p1=$!
"$PERFLOOP" scan --format json -o c2.json pkg 2>c2.err &
p2=$!
wait $p1 || fail "concurrent scan 1 failed: $(cat c1.err)"
wait $p2 || fail "concurrent scan 2 failed: $(cat c2.err)"
for f in c1.json c2.json; do
	[ "$(findings $f)" = "$(findings nocache.json)" ] || fail "$f differs from a scan alone"
done
run "$PERFLOOP" scan --format json -o after.json pkg
expect_err "41 of 41 files unchanged"
[ "$(findings after.json)" = "$(findings nocache.json)" ] || fail "the cache the two scans wrote differs"
[ -z "$(find .perfloop/cache -name '*.json.*')" ] || fail "temporary files left: $(find .perfloop/cache -name '*.json.*')"
# only the whole cache files are there
[ -z "$(find .perfloop/cache/scan -mindepth 1 -not -name '*.json')" ] || fail "stray files in the cache: $(find .perfloop/cache/scan -mindepth 1)"
exit 0
