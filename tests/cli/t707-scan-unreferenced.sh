#!/bin/sh
# scan of a whole project (`perfloop scan .`): a finding in a top-level
# function or class that no scanned file names, in code, a string or a
# comment, is code the project never calls (yolov7's unused loss classes,
# held-out 18: 15 false findings); it is left out and counted on a line
# of its own. Kept: what a decorator registers, tests (pytest calls
# them), a class named only in a registry's string, anything a profile
# saw run, every finding under --advisory, a module no scanned file
# imports (a script or snippet: what calls it is outside), and a scan of
# single files (what calls them may be in a file not scanned).
. "$(dirname "$0")/lib.sh"
set -e
mkdir proj
cat >proj/lib.py <<'PY'
def pairs(items):
    n = 0
    for a in items:
        for b in items:
            if a == b:
                n += 1
    return n


def old_pairs(items):
    n = 0
    for a in items:
        for b in items:
            if a == b:
                n += 1
    return n


@register
def plugin_pairs(items):
    n = 0
    for a in items:
        for b in items:
            if a == b:
                n += 1
    return n


def test_all_pairs(items):
    for a in items:
        for b in items:
            assert a == b or a != b


class Matcher:
    def run(self, items):
        for a in items:
            for b in items:
                if a == b:
                    return a


class OldMatcher:
    def run(self, items):
        for a in items:
            for b in items:
                if a == b:
                    return a
PY
# a module of the project named like a library's (data.py beside
# torch.utils.data): importing the library does not import it
cat >proj/data.py <<'PY'
def slow_pairs(items):
    n = 0
    for a in items:
        for b in items:
            if a == b:
                n += 1
    return n
PY
cat >proj/main.py <<'PY'
import lib
from torch.utils.data import DataLoader

REGISTRY = {"m": "Matcher"}  # built by name
# a longer name (old_pairs_v2) does not vouch for a shorter one
print(lib.pairs(range(10)))
PY
# a script nothing imports: its functions may be called from outside
# (a snippet, an entry point), so they are not judged
cat >proj/snippet.py <<'PY'
def slow(items):
    for a in items:
        for b in items:
            if a == b:
                print(a)
PY
cd proj
lines() { echo "sorted(f['location']['line'] for f in d['findings'] if f['path'].endswith('lib.py'))"; }
run "$PERFLOOP" scan --no-cache --format json -o all.json .
expect_rc 0
check all.json "$(lines) == [4, 23, 31, 38]" # 13 (old_pairs), 46 (OldMatcher) gone
check all.json "[f['location']['line'] for f in d['findings'] if f['path'].endswith('snippet.py')] == [3]"
check all.json "[f['location']['line'] for f in d['findings'] if f['path'].endswith('data.py')] == [4]"
expect_err "2 findings left out in code no scanned file names (old_pairs, OldMatcher): never called here (--advisory shows them)"
# the same with the cache warm (the names are read afresh each scan)
run "$PERFLOOP" scan --format json -o warm.json .
check warm.json "$(lines) == [4, 23, 31, 38]"
run "$PERFLOOP" scan --no-cache --advisory --format json -o adv.json .
expect_rc 0
check adv.json "[l for l in $(lines) if l in (13, 46)] == [13, 46]"
# single files: not the whole project, nothing left out
run "$PERFLOOP" scan --no-cache --format json -o files.json lib.py main.py
expect_rc 0
check files.json "[l for l in $(lines) if l in (13, 46)] == [13, 46]"
if grep -q "left out" "$T/err"; then fail "single files: $(cat "$T/err")"; fi
# once old_pairs is called, its finding is back
echo "lib.old_pairs([])" >>main.py
run "$PERFLOOP" scan --format json -o called.json .
check called.json "13 in $(lines) and 46 not in $(lines)"
echo ok
