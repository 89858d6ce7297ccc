#!/bin/sh
# profile --mode native on a program whose samples fall in tens of
# thousands of distinct stacks (bench/manystacks.c: every path of a 16-deep
# binary tree of calls; #18's limit case at a size a test can run; the
# million is bench/manystacks.sh): every sample counted once (the folded
# total is the count perfloop reports, and the speedscope file holds the
# same stacks), every stack a real path of the program (main, then go_a or
# go_b at each level), most paths seen, the SVG whole with the
# root holding every sample (narrow frames left out, as flamegraph.pl
# does), perfloop's own memory bounded.
. "$PERFLOOP_SRC/tests/cli/lib.sh"
need_perf_events
prog=$PERFLOOP_BUILD/bench/manystacks
[ -x "$prog" ] || fail "no $prog"
if [ -x /usr/bin/time ]; then
	run /usr/bin/time -f "%M" -o rss.txt "$PERFLOOP" profile --mode native --unwind fp --rate 20000 -o ms -- "$prog" 16 150000
else
	run "$PERFLOOP" profile --mode native --unwind fp --rate 20000 -o ms -- "$prog" 16 150000
fi
expect_rc 0
python3 - "$T/out" <<'PY' || fail "many stacks: $(head -3 "$T/out")"
import json, re, sys
import xml.etree.ElementTree as ET
said = int(re.search(r"(\d+) samples in", open(sys.argv[1]).read()).group(1))
stacks = {}
for line in open("ms.folded"):
    body, _, n = line.rstrip("\n").rpartition(" ")
    stacks[body] = stacks.get(body, 0) + int(n)
total = sum(stacks.values())
# walk is inlined into main and each go_X: its frames say nothing here;
# a sample taken in the kernel (an interrupt, a fault) ends in [kernel]
names = lambda body: [f.split(" (")[0] for f in body.split(";")
                      if not f.startswith("walk [inlined]") and not f.startswith("[kernel]")]
shape = re.compile(r"^((_start;)?(__libc_start_main_impl;)?__libc_start_call_main;)?main(;go_[ab]){0,16}$")
full = set()
odd = 0
odds = []
for body, n in stacks.items():
    ns = names(body)
    if not shape.match(";".join(ns)):
        odd += n
        odds.append((n, ";".join(ns)))
    elif len([f for f in ns if f.startswith("go_")]) == 16:
        full.add(tuple(ns))
print("%d samples (said %d), %d distinct stacks, %d full paths, %d samples off the program's shape"
      % (total, said, len(stacks), len(full), odd))
assert total == said, "folded total differs from the count said"
assert said > 30000, "too few samples to fill the paths"
assert len(full) > 15000, "too few distinct paths"
# a stack off the shape: a sample in the libc start-up or exit, or one the
# frame-pointer walk read wrong; a few at most
assert odd < total / 100, "stacks that are not the program's paths: %s" % sorted(odds)[-3:]
svg = ET.parse("ms.svg").getroot()
ns = {"s": "http://www.w3.org/2000/svg"}
root = [g for g in svg.findall(".//s:g[@class='f']", ns) if g.get("data-d") == "0"]
assert len(root) == 1 and int(root[0].get("data-w")) == total, "the SVG's root does not hold every sample"
sc = json.load(open("ms.speedscope.json"))
p = sc["profiles"][0]
assert p["endValue"] == total == sum(p["weights"]), "speedscope total"
fr = sc["shared"]["frames"]
label = lambda f: f["name"] if "file" not in f else "%s (%s:%s)" % (f["name"], f["file"], f["line"])
ss = {}
for s, w in zip(p["samples"], p["weights"]):
    k = ";".join(label(fr[i]).replace(";", ",") for i in s)
    ss[k] = ss.get(k, 0) + w
assert ss == stacks, "speedscope and folded stacks differ"
PY
# 190 MiB seen; AddressSanitizer's shadow and quarantine take 3x that
limit=409600
ldd "$PERFLOOP" 2>/dev/null | grep -q libasan && limit=1228800
if [ -f rss.txt ]; then
	[ "$(tail -1 rss.txt)" -lt "$limit" ] || fail "perfloop grew to $(tail -1 rss.txt) KiB"
	echo "perfloop peak RSS $(tail -1 rss.txt) KiB"
fi
exit 0
