#!/bin/sh
# docs/cli.md is every option of every command, generated from --help:
# kept current (an option added without regenerating it fails here), and
# no long option has two short letters.
. "$PERFLOOP_SRC/tests/cli/lib.sh"
python3 "$PERFLOOP_SRC/scripts/gen-cli-doc" "$PERFLOOP" >cli.md || fail "gen-cli-doc failed"
diff -u "$PERFLOOP_SRC/docs/cli.md" cli.md ||
	fail "docs/cli.md is stale: scripts/gen-cli-doc build/perfloop > docs/cli.md"
# every option of every command's --help is a row of it, under that command
python3 - "$PERFLOOP" <<'PY' || fail "docs/cli.md lacks options"
import re, subprocess, sys
pl = sys.argv[1]
rows, cur = set(), None
for line in open("cli.md"):
    m = re.match(r"\| (?:`(--[^`]+)`)? \| [^|]* \| ([a-z]+) \|", line)
    if m:
        cur = m.group(1) or cur
        rows.add((cur, m.group(2)))
top = subprocess.run([pl, "--help"], capture_output=True, text=True).stdout
missing = []
for c in re.findall(r"^  ([a-z]+) ", top, re.M):
    h = subprocess.run([pl, c, "--help"], capture_output=True, text=True).stdout
    for o in set(re.findall(r"^ +(?:-[A-Za-z], )?(--[a-z][a-z0-9-]*)", h, re.M)):
        if (o, c) not in rows:
            missing.append("%s %s" % (c, o))
for m in missing:
    print("not in docs/cli.md:", m)
sys.exit(1 if missing else 0)
PY
# a long option with two different short letters would be a new trap
python3 - <<'PY' || fail "a long option has two short letters"
import re
for line in open("cli.md"):
    m = re.match(r"\| `(--[^`]+)` \| (.*?) \|", line)
    if m and m.group(2).count("`-") > 1:
        raise SystemExit("%s: %s" % (m.group(1), m.group(2)))
PY
# and no short letter means two things (#21: one vocabulary)
sed -n '/^## One short letter, several long options/,$p' cli.md | grep -q '^None\.$' ||
	fail "a short letter means two things: $(sed -n '/^## One short letter/,$p' cli.md)"
# the letters' old meanings still work (scripts use them): each is parsed as
# that option (the error is about its value or input, not the option)
mkdir -p empty
for c in "select -f /nonexistent.json" "verify -b /nonexistent.json -a /nonexistent.json" \
	"profile -r notanumber -- true" "top -r notanumber -- true"; do
	run "$PERFLOOP" $c
	[ "$rc" -eq 2 ] || fail "perfloop $c: exit $rc"
	! grep -qi "unknown option\|unrecognized\|did you mean\|invalid option" err ||
		fail "perfloop $c: the old spelling is gone: $(cat err)"
done
(cd empty && git init -q . && "$PERFLOOP" revert -n >../out 2>../err) || true
! grep -qi "unknown option\|unrecognized\|invalid option" err || fail "revert -n is gone: $(cat err)"
# shares: 5% is five per cent in every option; a bare --min-gain 5 is refused
for v in 0.05 5%; do
	run "$PERFLOOP" verify --min-gain "$v" --before /nonexistent.json --after /nonexistent.json
	expect_err "/nonexistent.json"
done
run "$PERFLOOP" verify --min-gain 5 --before /nonexistent.json --after /nonexistent.json
expect_rc 2
expect_err "expected a fraction (0.05) or a percentage (5%)"
run "$PERFLOOP" bench --precision 100% -- true
expect_rc 2
expect_err "option '--precision'"
# the vocabulary page names each short letter that still means two things
for l in $(sed -n 's/^- `\(-[A-Za-z]\)`: .*/\1/p' cli.md); do
	grep -q -- "^- \`$l\` is " "$PERFLOOP_SRC/docs/VOCABULARY.md" ||
		fail "docs/VOCABULARY.md does not list '$l', which means two things (docs/cli.md)"
done
echo ok
