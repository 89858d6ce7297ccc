#!/bin/bash
# perfloop scan on a small project with planted problems: the exact finding
# list (ids, lines, severities), suppression, selection, exclusion,
# .gitignore, exit codes, every output format (SARIF against its schema),
# and inputs that must not crash or hang it.
. "$PERFLOOP_SRC/tests/cli/lib.sh"
cp -R "$PERFLOOP_SRC/tests/cli/scan-project" proj
new_repo proj
mkdir ignored
cp vendor/lib.py ignored/lib.py
printf 'ignored/\n' >.gitignore

# findings FILE: "path:line id severity" lines from a findings document
findings() {
	python3 -c 'import json,sys
for f in json.load(open(sys.argv[1]))["findings"]:
    print("%s:%d %s %s" % (f["path"], f["location"]["line"], f["leaf"], f["severity"]))' "$1"
}

run "$PERFLOOP" scan --advisory --format json -o all.json --exclude 'vendor/*'
expect_rc 0
expect_err "broken.py: 1 parse error; scanned what parsed"
findings all.json >got.txt
cat >want.txt <<'W'
broken.py:4 PY003 medium
fast.c:6 C001 high
train.py:6 PY014 medium
train.py:13 PY013 critical
train.py:14 PY010 low
util.py:4 PY001 medium
util.py:16 PY005 medium
W
diff -u want.txt got.txt || fail "finding list differs"
# by default the advisory rules (PY003, PY005 here) are off
run "$PERFLOOP" scan --format json --exclude 'vendor/*'
findings "$T/out" >got.txt
grep -v -E 'PY003|PY005' want.txt | diff -u - got.txt || fail "default finding list differs"
"$PERFLOOP" select --findings all.json >/dev/null || fail "select refused scan's findings"
check all.json 'all(f["status"] in ("statically_confirmed", "requires_profiling") and f["evidence"]["text"] and f["suggested_action"] for f in d["findings"])'
check all.json '[f["location"]["function"] for f in d["findings"]][:4] == ["ok", "count_spaces", "train", "train"]'

# without --exclude, vendor/ is scanned; ignored/ never (git ignores it)
run "$PERFLOOP" scan --format json
expect_rc 0
# (its nested loops compare the collection's elements: PY001)
findings "$T/out" | grep -q '^vendor/lib.py:3 PY001 medium$' || fail "vendor/ not scanned"
! findings "$T/out" | grep -q '^ignored/' || fail "a git-ignored file was scanned"
run "$PERFLOOP" scan --format json --no-gitignore
findings "$T/out" | grep -q '^ignored/lib.py:3 PY001' || fail "--no-gitignore did not scan ignored/"

# selection and severity
run "$PERFLOOP" scan --advisory --format json --select PY00 --ignore PY005 --exclude 'vendor/*'
[ "$(findings "$T/out" | cut -d' ' -f2 | tr '\n' ' ')" = "PY003 PY001 " ] || fail "--select/--ignore: $(findings "$T/out")"
run "$PERFLOOP" scan --format json --min-severity high --exclude 'vendor/*'
[ "$(findings "$T/out" | cut -d' ' -f3 | sort -u | tr '\n' ' ')" = "critical high " ] || fail "--min-severity: $(findings "$T/out")"

# --fail-on: exit 1 only when something at or above is found
run "$PERFLOOP" scan --fail-on critical util.py
expect_rc 0
run "$PERFLOOP" scan --fail-on critical train.py
expect_rc 1
run "$PERFLOOP" scan --fail-on high fast.c
expect_rc 1

# text: grouped by file, the code line and a caret under the column
run "$PERFLOOP" scan fast.c
expect_rc 0
grep -q '^fast.c:6:25: high C001 strlen() in a loop condition \[statically_confirmed\]$' "$T/out" || fail "text: $(cat "$T/out")"
grep -q '^     6 | 	for (size_t i = 0; i < strlen(s); i++)$' "$T/out" || fail "code line: $(cat "$T/out")"
grep -q '^       | 	                       \^$' "$T/out" || fail "caret: $(cat "$T/out")"

# Markdown
run "$PERFLOOP" scan --format md train.py
grep -q '^| `train.py:13` | critical | PY013 |' "$T/out" || fail "md: $(cat "$T/out")"

# SARIF 2.1.0, validated against the official schema (from npm, install-deps)
schema=$PERFLOOP_SRC/.deps/sarif/sarif-2.1.0.json
[ -f "$schema" ] || fail "no SARIF schema: run scripts/install-deps"
run "$PERFLOOP" scan --advisory --format sarif -o scan.sarif --exclude 'vendor/*'
expect_rc 0
/usr/bin/python3 - "$schema" scan.sarif <<'PY' || fail "SARIF invalid"
import json, sys
import jsonschema
schema = json.load(open(sys.argv[1]))
doc = json.load(open(sys.argv[2]))
v = jsonschema.Draft202012Validator(schema)
errors = list(v.iter_errors(doc))
for e in errors[:5]:
    print("SARIF:", e.message[:200], list(e.path), file=sys.stderr)
assert not errors
res = doc["runs"][0]["results"]
assert len(res) == 7, len(res)
rules = doc["runs"][0]["tool"]["driver"]["rules"]
assert all(rules[r["ruleIndex"]]["id"] == r["ruleId"] for r in res)
assert {r["level"] for r in res} == {"error", "warning", "note"}
# the validator does reject a broken document
doc["version"] = "2.0"
assert list(v.iter_errors(doc)), "validator accepted a wrong version"
PY

# a finding keeps its SARIF fingerprint when lines above it move (what
# code-scanning services key a finding's identity on across commits)
cp train.py train.py.orig
{ printf '# a header\n# grown by two lines\n'; cat train.py.orig; } >train.py
"$PERFLOOP" scan --advisory --format sarif -o moved.sarif --exclude 'vendor/*' 2>/dev/null
mv train.py.orig train.py
python3 - scan.sarif moved.sarif <<'PY' || fail "SARIF fingerprints moved with the lines"
import json, sys
def index(path):
    out = {}
    for r in json.load(open(path))["runs"][0]["results"]:
        loc = r["locations"][0]["physicalLocation"]
        if loc["artifactLocation"]["uri"].endswith("train.py"):
            out[r["partialFingerprints"]["perfloopFindingId/v1"]] = loc["region"]["startLine"]
    return out
a, b = index(sys.argv[1]), index(sys.argv[2])
assert a and set(a) == set(b), (a, b)
assert all(b[k] == a[k] + 2 for k in a), (a, b)
PY

# the same findings whatever the number of threads
"$PERFLOOP" scan --format json -j 1 --exclude 'vendor/*' 2>/dev/null | grep -v '"created"' >j1.json
"$PERFLOOP" scan --format json -j 2 --exclude 'vendor/*' 2>/dev/null | grep -v '"created"' >j2.json
cmp -s j1.json j2.json || fail "-j 1 and -j 2 differ"

# --explain: the rule's rationale, fix and both examples
run "$PERFLOOP" scan --explain py013
expect_rc 0
grep -q '^PY013: Loss tensor accumulated' "$T/out" && grep -q '^Fix: accumulate a detached value' "$T/out" &&
	grep -q '^        total += loss.detach()$' "$T/out" || fail "--explain: $(cat "$T/out")"

# bad usage: one line, exit 2
run "$PERFLOOP" scan --jobs 0
expect_rc 2
expect_err "jobs"
run "$PERFLOOP" scan --min-severity urgent
expect_rc 2
expect_err "min-severity"

run "$PERFLOOP" scan --format xml
expect_rc 2
expect_err "format"
run "$PERFLOOP" scan --select ZZ9
expect_rc 2
expect_err "no rule is or starts with 'ZZ9'"
run "$PERFLOOP" scan nowhere.py
expect_rc 2
expect_err "nowhere.py"
run "$PERFLOOP" scan .gitignore
expect_rc 2
expect_err "not a Python"
run "$PERFLOOP" scan --explain NOPE
expect_rc 2

# a 10 MB file and a 2,000-level nested expression: no crash, no hang
python3 - <<'PY'
body = "".join(f"def f{i}(items):\n    out = ''\n    for x in items:\n        out += str(x)\n    return out\n\n" for i in range(150000))
open("big.py", "w").write(body)
open("deep.py", "w").write("x = " + "(" * 2000 + "1" + ")" * 2000 + "\n" + "y = " + "[" * 2000 + "]" * 2000 + "\n")
open("deep.c", "w").write("int x = " + "(" * 2000 + "1" + ")" * 2000 + ";\n")
PY
[ "$(stat -c %s big.py)" -gt 10000000 ] || fail "big.py is not 10 MB"
run timeout 120 "$PERFLOOP" scan --format json --select PY003 big.py
expect_rc 0
[ "$(findings "$T/out" | wc -l)" -eq 150000 ] || fail "big.py: $(findings "$T/out" | wc -l) findings"
run timeout 60 "$PERFLOOP" scan deep.py deep.c
[ "$rc" -eq 0 ] || fail "deep nesting: exit $rc: $(cat err)"

# suppressions: perfloop's tag in any case, a bare ignore, ruff's noqa with
# perfloop's ids (others' codes left alone); unknown ids and suppressions
# that hid nothing are warned about, never silently accepted
mkdir sup && cat >sup/t.py <<'PY'
import torch
dev = torch.device("cuda")
def train(model, loader, opt):
    for x, y in loader:
        loss = model(x).sum()
        loss.backward()
        print(loss.item())  # noqa: PY010, E501
        print(loss.item())  # NOQA:py010
        print(loss.item())  # PerfLoop: Ignore
        # perfloop: ignore[py010]
        print(loss.item())
        print(loss.item())  # perfloop: ignore[PY999]
        a = 1  # perfloop: ignore[PY010]
        b = 2  # noqa: PY010
        c = 3  # perfloop: ignore
        d = 4  # noqa: C901, E501
PY
run "$PERFLOOP" scan --format json sup
expect_rc 0
check "$T/out" "[(f['leaf'], f['location']['line']) for f in d['findings']] == [('PY010', 12)]"
expect_err "sup/t.py:12: unknown rule 'PY999' in 'perfloop: ignore\[...\]'"
expect_err "sup/t.py:13: unused suppression of PY010 (no PY010 finding on this line or the next)"
expect_err "sup/t.py:14: unused suppression of PY010 (no PY010 finding on this line)"
expect_err "sup/t.py:15: unused 'perfloop: ignore'"
[ "$(grep -c warning "$T/err")" -eq 4 ] || fail "expected 4 warnings (not for lines 7-11 nor C901/E501): $(cat "$T/err")"
# a bare '# noqa' hides every rule on its line, as ruff reads it, and says
# which of ours it hid; a bare one that hid nothing of ours is other tools'
mkdir bare && cat >bare/t.py <<'PY'
import torch
dev = torch.device("cuda")
def train(model, loader, opt):
    for x, y in loader:
        loss = model(x).sum()
        loss.backward()
        print(loss.item())  # noqa
        z = 1  # noqa
PY
run "$PERFLOOP" scan --format json bare
expect_rc 0
check "$T/out" "d['findings'] == []"
expect_err "bare/t.py:7: a bare '# noqa' suppressed PY010 (as ruff reads it: every rule on the line; '# noqa: PY010' names it)"
[ "$(grep -c "bare/t.py:8" "$T/err")" -eq 0 ] || fail "a bare noqa that hid nothing of ours was warned about: $(cat "$T/err")"
# a rule not selected this run: its suppressions are not called unused
run "$PERFLOOP" scan --select PY003 sup
expect_rc 0
[ "$(grep -c "unused suppression" "$T/err")" -eq 0 ] || fail "unused warned for an unselected rule: $(cat "$T/err")"

# outside git: virtualenvs and ruff's default excludes are skipped, and the
# summary says so; --no-ignore (or the old --no-gitignore) scans them
back=$(pwd)
cd "$T"
mkdir -p plain/src plain/venv/lib plain/build plain/myenv plain/node_modules/m
printf 'def f(items):\n    out = []\n    for x in items:\n        out.append(x * 2)\n    return out\n' >plain/src/a.py
for d in venv/lib build myenv node_modules/m; do cp plain/src/a.py plain/$d/; done
touch plain/myenv/pyvenv.cfg
export GIT_CEILING_DIRECTORIES="$T" # outside any work tree, wherever $T is
run "$PERFLOOP" scan --advisory --format json plain
expect_rc 0
check "$T/out" "sorted({f['path'] for f in d['findings']}) == ['plain/src/a.py']"
expect_err "skipped 4 directories of installed or generated code"
expect_err "--no-ignore scans them"
run "$PERFLOOP" scan --advisory --format json --no-ignore plain
check "$T/out" "len({f['path'] for f in d['findings']}) == 5"
run "$PERFLOOP" scan --advisory --format json --no-gitignore plain
check "$T/out" "len({f['path'] for f in d['findings']}) == 5"
unset GIT_CEILING_DIRECTORIES
cd "$back"
# inside git too, with no .gitignore: .venv, venv, build and a virtualenv
# by its pyvenv.cfg are skipped, as ruff skips them whatever git says
mkdir gitvenv && git -C gitvenv init -q
mkdir -p gitvenv/src gitvenv/.venv/lib gitvenv/venv gitvenv/build gitvenv/env2 gitvenv/.github/x
for d in src .venv/lib venv build env2 .github/x; do cp "$T/plain/src/a.py" gitvenv/$d/; done
touch gitvenv/env2/pyvenv.cfg
run "$PERFLOOP" scan --advisory --format json gitvenv
expect_rc 0
check "$T/out" "sorted({f['path'] for f in d['findings']}) == ['gitvenv/.github/x/a.py', 'gitvenv/src/a.py']"
expect_err "skipped 4 directories of installed or generated code"
# --no-ignore: the excluded ones too (hidden directories stay out, as
# they do outside git)
run "$PERFLOOP" scan --advisory --format json --no-ignore gitvenv
check "$T/out" "sorted({f['path'] for f in d['findings']}) == ['gitvenv/build/a.py', 'gitvenv/env2/a.py', 'gitvenv/src/a.py', 'gitvenv/venv/a.py']"
# a folder git ignores: "0 files" comes with the reason
mkdir gitproj && git -C gitproj init -q && echo "gen/" >gitproj/.gitignore
mkdir gitproj/gen && cp "$T/plain/src/a.py" gitproj/gen/
run "$PERFLOOP" scan gitproj/gen
expect_rc 0
expect_err "in 0 files"
expect_err "skipped 1 path git ignores (--no-ignore scans them)"
run "$PERFLOOP" scan --advisory --format json --no-ignore gitproj/gen
check "$T/out" "[f['path'] for f in d['findings']] == ['gitproj/gen/a.py']"

# ruff's --output-format github (annotations) and --statistics
cd "$back"
run "$PERFLOOP" scan --advisory --output-format github broken.py fast.c train.py util.py
expect_rc 0
grep -q '^::error title=perfloop C001 (high),file=fast.c,line=6,col=[0-9]*::strlen() in a loop condition: ' "$T/out" ||
	fail "github: no C001 annotation: $(cat "$T/out")"
grep -q '^::notice \|^::warning title=perfloop PY003 (medium),file=broken.py,line=4,' "$T/out" ||
	fail "github: no PY003 annotation: $(cat "$T/out")"
[ "$(grep -c '^::' "$T/out")" -eq "$(wc -l <"$T/out")" ] || fail "github: lines that are not annotations: $(cat "$T/out")"
[ "$(wc -l <"$T/out")" -eq 7 ] || fail "github: expected 7 annotations: $(cat "$T/out")"
run "$PERFLOOP" scan --advisory --statistics broken.py fast.c train.py util.py
expect_rc 0
[ "$(wc -l <"$T/out")" -eq 7 ] && grep -q "^ *1  PY013  critical" "$T/out" || fail "--statistics: $(cat "$T/out")"
[ "$(awk '{s += $1} END {print s}' "$T/out")" -eq 7 ] || fail "--statistics: counts do not add up to 7: $(cat "$T/out")"

# settings in pyproject.toml's [tool.perfloop.scan] (ruff's layout): select,
# ignore, exclude (a directory name excludes it), per-file-ignores; found
# from the PATH upward, named in the summary; --no-config and --config;
# a bad value is one line naming file, line and key, exit 2
mkdir -p "$T/cfg/src" "$T/cfg/tests" "$T/cfg/vendor"
cp fast.c "$T/cfg/src/a.c"
cp fast.c "$T/cfg/tests/t.c"
cp fast.c "$T/cfg/vendor/v.c"
printf 'def f(xs):\n    s = ""\n    for x in xs:\n        s += str(x)\n    return s\n' >"$T/cfg/src/b.py"
cat >"$T/cfg/pyproject.toml" <<'TOML'
[project]
name = "demo"   # other tools' tables are left alone
[tool.ruff]
line-length = 100

[tool.perfloop.scan]
select = [
  "C",        # every C rule
  'PY003',    # an advisory rule, named
]
exclude = ["vendor"]

[tool.perfloop.scan.per-file-ignores]
"tests/*" = ["C001"]
TOML
export GIT_CEILING_DIRECTORIES="$T"
run "$PERFLOOP" scan --format json "$T/cfg/src/.."
expect_rc 0
check "$T/out" "sorted((f['path'].split('/')[-1], f['leaf']) for f in d['findings']) == [('a.c', 'C001'), ('b.py', 'PY003')]"
expect_err "settings from .*cfg/pyproject.toml \[tool.perfloop.scan\]"
run "$PERFLOOP" scan --format json --no-config "$T/cfg"
check "$T/out" "sorted((f['path'].split('/')[-1], f['leaf']) for f in d['findings']) == [('a.c', 'C001'), ('t.c', 'C001'), ('v.c', 'C001')]"
# the command line wins: --select replaces the file's
run "$PERFLOOP" scan --format json --select PY003 "$T/cfg"
check "$T/out" "[f['leaf'] for f in d['findings']] == ['PY003']"
printf '[tool.perfloop.scan]\nselect = ["C"]\nignore = "C001"\n' >"$T/bad.toml"
run "$PERFLOOP" scan --config "$T/bad.toml" "$T/cfg"
expect_rc 2
expect_err "bad.toml:3: 'ignore': expected an array of strings"
[ "$(wc -l <"$T/err")" -eq 1 ] || fail "more than one line: $(cat "$T/err")"
printf '[tool.perfloop.scan]\nselekt = ["C"]\n' >"$T/bad2.toml"
run "$PERFLOOP" scan --config "$T/bad2.toml" "$T/cfg"
expect_rc 2
expect_err "bad2.toml:2: 'selekt': unknown key in \[tool.perfloop.scan\]"
printf '[tool.other]\nx = 1\n' >"$T/none.toml"
run "$PERFLOOP" scan --config "$T/none.toml" "$T/cfg"
expect_rc 2
expect_err "has no \[tool.perfloop.scan\] table"
# an id no rule has, in the file: refused as --select refuses it (it
# silently gave 0 findings), naming the file and the key
printf '[tool.perfloop.scan]\nselect = ["NOPE"]\n' >"$T/nope.toml"
run "$PERFLOOP" scan --config "$T/nope.toml" "$T/cfg"
expect_rc 2
expect_err "nope.toml: \[tool.perfloop.scan\] select: no rule is or starts with 'NOPE'"
printf '[tool.perfloop.scan]\n[tool.perfloop.scan.per-file-ignores]\n"a/*" = ["PY9999"]\n' >"$T/nope2.toml"
run "$PERFLOOP" scan --config "$T/nope2.toml" "$T/cfg"
expect_rc 2
expect_err "per-file-ignores: no rule is or starts with 'PY9999'"
# a settings file above the project is not the project's: a git work tree
# stops the search at its top; outside git, the nearest pyproject.toml does
mkdir -p "$T/outer/proj" "$T/outer2/inner"
printf '[tool.perfloop.scan]\nselect = ["C"]\n' >"$T/outer/pyproject.toml"
cp "$T/outer/pyproject.toml" "$T/outer2/pyproject.toml"
cp "$T/cfg/src/b.py" "$T/outer/proj/b.py"
cp "$T/cfg/src/b.py" "$T/outer2/inner/b.py"
printf '[project]\nname = "inner"\n' >"$T/outer2/inner/pyproject.toml"
git init -q "$T/outer/proj"
export GIT_CEILING_DIRECTORIES="$T/outer:$T/outer2"
for d in "$T/outer/proj" "$T/outer2/inner"; do
	run "$PERFLOOP" scan --advisory --format json "$d"
	expect_rc 0
	check "$T/out" "[f['leaf'] for f in d['findings']] == ['PY003']"
	! grep -q "settings from" "$T/err" || fail "a settings file above $d applied: $(cat "$T/err")"
done
# a tracked symlink is not followed out of the project (a directory walk
# never followed one; git's list did): a file outside is never read
mkdir -p "$T/linked"
cp "$T/cfg/src/b.py" "$T/outside-secret.py"
git init -q "$T/linked"
ln -s "$T/outside-secret.py" "$T/linked/link.py"
git -C "$T/linked" add link.py
run "$PERFLOOP" scan --advisory --format json "$T/linked"
expect_rc 0
check "$T/out" "d['findings'] == []"
unset GIT_CEILING_DIRECTORIES
