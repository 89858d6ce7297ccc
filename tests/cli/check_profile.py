#!/usr/bin/env python3
"""Checks one profile's outputs against each other and their formats:
    check_profile.py PREFIX
- PREFIX.folded: 'frame;frame count' lines;
- PREFIX.svg: well-formed; one <g class="f"> per node of the tree the
  folded stacks make (plus the root) but those narrower than 0.1 px at the
  graph's full width (1180 px: left out, as flamegraph.pl does), each node's width (data-w) its
  samples, children within their parent and summing to at most it, the
  root holding every sample, rect widths proportional to data-w;
- PREFIX.speedscope.json: valid against docs/schemas/speedscope.schema.json
  (when the jsonschema module is here), every index a frame, weights
  summing to endValue, the same stacks as the folded file.
Prints the number of frames checked; exits 1 with a reason otherwise."""
import json
import os
import sys
import xml.etree.ElementTree as ET

prefix = sys.argv[1]
src = os.environ.get("PERFLOOP_SRC", ".")


def die(msg):
    print("check_profile: " + msg, file=sys.stderr)
    sys.exit(1)


stacks = {}
for line in open(prefix + ".folded"):
    body, _, n = line.rstrip("\n").rpartition(" ")
    if not body or not n.isdigit():
        die("bad folded line: " + line)
    stacks[tuple(body.split(";"))] = stacks.get(tuple(body.split(";")), 0) + int(n)
total = sum(stacks.values())

# the tree the stacks make
tree = {(): total}
for st, n in stacks.items():
    for d in range(1, len(st) + 1):
        tree[st[:d]] = tree.get(st[:d], 0) + n

# what the graph draws: nodes of 0.1 px or more at 1180 px for the root
minw = int(total * 0.1 / 1180)
tree = {k: v for k, v in tree.items() if v >= minw}

ns = {"s": "http://www.w3.org/2000/svg"}
root = ET.parse(prefix + ".svg").getroot()
gs = root.findall(".//s:g[@class='f']", ns)
if len(gs) != len(tree):
    die(f"svg has {len(gs)} frames, the stacks make {len(tree)} nodes")
nodes = []
for g in gs:
    x, w, d = (int(g.get("data-" + k)) for k in "xwd")
    title = g.find("s:title", ns).text
    rect = g.find("s:rect", ns)
    nodes.append((d, x, w, title, float(rect.get("width"))))
root_nodes = [n for n in nodes if n[0] == 0]
if len(root_nodes) != 1 or root_nodes[0][2] != total:
    die(f"the root must hold all {total} samples: {root_nodes}")
scale = root_nodes[0][4] / total if total else 0
for d, x, w, title, rw in nodes:
    if abs(rw - w * scale) > 0.02:
        die(f"{title}: rect width {rw} for {w} samples")
    kids = [n for n in nodes if n[0] == d + 1 and x <= n[1] and n[1] + n[2] <= x + w]
    if sum(k[2] for k in kids) > w:
        die(f"{title}: children hold more samples than it")
# widths per depth match the tree's
for depth in range(0, max(len(s) for s in tree) + 1):
    want = sorted(v for k, v in tree.items() if len(k) == depth)
    got = sorted(n[2] for n in nodes if n[0] == depth)
    if want != got:
        die(f"depth {depth}: widths {got[:8]} but the stacks make {want[:8]}")

sc = json.load(open(prefix + ".speedscope.json"))
try:
    import jsonschema
    schema = json.load(open(os.path.join(src, "docs/schemas/speedscope.schema.json")))
    jsonschema.validate(sc, schema)
except ImportError:
    print("check_profile: jsonschema missing, schema not validated", file=sys.stderr)
frames = sc["shared"]["frames"]
p = sc["profiles"][0]
if len(p["samples"]) != len(p["weights"]) or sum(p["weights"]) != p["endValue"]:
    die("speedscope weights do not match its samples")
if p["endValue"] != total:
    die(f"speedscope holds {p['endValue']} samples, folded {total}")


def label(f):
    return f["name"] if "file" not in f else f"{f['name']} ({f['file']}:{f['line']})"


sstacks = {}
for s, wt in zip(p["samples"], p["weights"]):
    if any(i >= len(frames) for i in s):
        die("speedscope sample indexes a missing frame")
    # as the folded writer makes a label safe in a line
    key = tuple(label(frames[i]).replace(";", ",").replace("\n", " ").replace("\r", " ")
                for i in s)
    sstacks[key] = sstacks.get(key, 0) + wt
if sstacks != stacks:
    only_s = [k for k in sstacks if sstacks[k] != stacks.get(k)]
    only_f = [k for k in stacks if stacks[k] != sstacks.get(k)]
    def show(k, d):
        return f"{d.get(k)} x {len(k)} frames {';'.join(k[:2])} .. {';'.join(k[-2:])}"
    die("speedscope and folded stacks differ: speedscope " +
        " | ".join(show(k, sstacks) for k in only_s[:3]) + "; folded " +
        " | ".join(show(k, stacks) for k in only_f[:3]))
print(f"checked {len(gs)} frames, {total} samples")
