#!/usr/bin/env python3
"""Scan the labelled real-code corpus (corpus.json) with perfloop and score
the findings against labels.jsonl: per rule, findings, true positives,
precision, and findings rated above their fair severity (--json: the same,
and the hand-listed problems no finding reported, as "missed").

usage: score.py PERFLOOP DEPS_DIR [--advisory] [--split tuning|held-out|held-out-N (N = 2..11)] [--json OUT]

--split held-out scores the corpora under heldout/ instead (never tuned on:
see README.md), and adds recall: of the real problems listed by hand in
heldout/*.problems.jsonl, those with a reported finding within 2 lines.
Exit: 0 scored; 1 a finding has no label (label it: a new finding must be
judged before its precision can be claimed); 77 no corpus here.
"""
import glob
import json
import os
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
SEV = {"critical": 0, "high": 1, "medium": 2, "low": 3, "none": 4}


def installed_version(pkg):
    r = subprocess.run(["dpkg-query", "-W", "-f=${Version}", pkg],
                       capture_output=True, text=True)
    return r.stdout.strip() if r.returncode == 0 else None


def corpus_root(c, deps):
    if c["package"].startswith(("source:", "github:")):
        return os.path.join(deps, os.path.basename(c["root"]))
    if c["package"].startswith("deb:"):  # a .deb unpacked under DEPS_DIR
        rel = c["root"].split("/scan-real/", 1)[-1]
        return os.path.join(deps, rel)
    return c["root"]


def load(split):
    """the corpora, labels and hand-listed problems of a split"""
    if split == "tuning":
        corpora = json.load(open(os.path.join(HERE, "corpus.json")))["corpora"]
        files, problems = [os.path.join(HERE, "labels.jsonl")], []
    else:
        # held-out -> heldout/, held-out-N -> heldoutN/
        d = os.path.join(HERE, split.replace("-", "", 2).replace("-", ""))
        if not split.startswith("held-out") or not os.path.isdir(d):
            sys.exit("--split: tuning, held-out or held-out-N with a heldoutN/ (not %s)" % split)
        corpora = [json.load(open(f)) for f in sorted(glob.glob(os.path.join(d, "*.corpus.json")))]
        files = sorted(glob.glob(os.path.join(d, "*.labels.jsonl")))
        problems = [json.loads(l) for f in sorted(glob.glob(os.path.join(d, "*.problems.jsonl")))
                    for l in open(f) if l.strip()]
    labels = {}
    for f in files:
        for line in open(f):
            if line.strip():
                x = json.loads(line)
                labels[(x["corpus"], x["path"], x["line"], x["rule"])] = x
    return corpora, labels, problems


def main():
    perfloop, deps = os.path.abspath(sys.argv[1]), os.path.abspath(sys.argv[2])
    advisory = "--advisory" in sys.argv
    out_json = sys.argv[sys.argv.index("--json") + 1] if "--json" in sys.argv else None
    split = sys.argv[sys.argv.index("--split") + 1] if "--split" in sys.argv else "tuning"
    corpora, labels, problems = load(split)
    used, missing, findings, seen = [], [], [], set()
    reported = []  # (corpus, path, line) of every finding, for recall
    for c in corpora:
        root = corpus_root(c, deps)
        if c["package"].startswith(("source:", "deb:", "github:")):
            present = os.path.isdir(root)
        else:
            present = installed_version(c["package"]) == c["version"]
        if not present:
            print("skipped %s: %s %s not here" % (c["name"], c["package"], c["version"]),
                  file=sys.stderr)
            continue
        used.append(c["name"])
        cmd = [perfloop, "scan", "-j", "1", "--no-config", "--format", "json"]
        if c.get("no_gitignore"):
            cmd.append("--no-ignore")
        if advisory:
            cmd.append("--advisory")
        cmd += c["paths"]
        for g in c["exclude"]:
            cmd += ["--exclude", g]
        r = subprocess.run(cmd, cwd=root, capture_output=True, text=True,
                           env=dict(os.environ, GIT_CEILING_DIRECTORIES=os.path.dirname(root)))
        if r.returncode != 0:
            sys.exit("%s: perfloop scan exited %d: %s" % (c["name"], r.returncode, r.stderr))
        for f in json.loads(r.stdout)["findings"]:
            path = f["path"][2:] if f["path"].startswith("./") else f["path"]
            key = (c["name"], path, f["location"]["line"], f["leaf"])
            reported.append((c["name"], path, f["location"]["line"]))
            # the lines a grouped finding names besides its own (a step's
            # other syncs): reported, one finding for them all
            reported.extend((c["name"], path, x) for x in f["location"].get("also_lines", []))
            lab = labels.get(key)
            seen.add(key)
            if lab is None:
                missing.append(key)
                continue
            findings.append((f["leaf"], f["severity"], lab))
    if not used:
        print("no corpus installed (scripts/install-deps installs it)", file=sys.stderr)
        sys.exit(77)
    rules = {}
    for rule, sev, lab in findings:
        r = rules.setdefault(rule, {"findings": 0, "tp": 0, "above_fair": 0})
        r["findings"] += 1
        r["tp"] += lab["verdict"] == "TP"
        # a true finding rated above what SPEC.md's severity policy allows
        # (a false one has no fair severity: it counts against precision)
        r["above_fair"] += lab["verdict"] == "TP" and SEV[sev] < SEV[lab["fair_severity"]]
    n = sum(r["findings"] for r in rules.values())
    tp = sum(r["tp"] for r in rules.values())
    above = sum(r["above_fair"] for r in rules.values())
    print("corpora: %s (%s rules)" % (", ".join(used), "advisory included" if advisory else "default"))
    print("| rule | findings | true | precision | true, rated above fair severity |")
    print("|---|---:|---:|---:|---:|")
    for rule in sorted(rules, key=lambda k: (-rules[k]["findings"], k)):
        r = rules[rule]
        print("| %s | %d | %d | %.0f%% | %d |" % (rule, r["findings"], r["tp"],
                                                 100.0 * r["tp"] / r["findings"], r["above_fair"]))
    print("| all | %d | %d | %s | %d |" % (
        n, tp, "%.0f%%" % (100.0 * tp / n) if n else "n/a", above))
    # every finding rated above its fair severity (a false one's is none)
    over = sum(SEV[sev] < SEV[lab["fair_severity"]] for _, sev, lab in findings)
    print("rated above the fair severity, false findings included: %d of %d" % (over, n))
    recall, missed = None, []
    if problems:
        mine = [p for p in problems if p["corpus"] in used]
        found = [p for p in mine if any(c == p["corpus"] and path == p["path"] and abs(line - p["line"]) <= 2
                                       for c, path, line in reported)]
        recall = (len(found), len(mine))
        missed = [p for p in mine if p not in found]
        print("real problems listed by hand: %d, reported: %d (recall %s)" % (
            len(mine), len(found), "%.0f%%" % (100.0 * len(found) / len(mine)) if mine else "n/a"))
    gone = [k for k, x in labels.items() if k[0] in used and k not in seen]
    if advisory:  # (by default the advisory rules' findings are not reported either)
        print("labelled findings no longer reported: %d (%d of them false: misfires fixed)" % (
            len(gone), sum(labels[k]["verdict"] == "FP" for k in gone)))
    if out_json:
        json.dump({"corpora": used, "split": split, "advisory": advisory, "rules": rules,
                   "findings": n, "true": tp, "above_fair": above, "over_rated": over,
                   "recall": recall, "missed": missed,
                   "unlabelled": [list(k) for k in missing]}, open(out_json, "w"), indent=1)
    if missing:
        for k in missing:
            print("unlabelled finding: %s %s:%d %s" % k, file=sys.stderr)
        sys.exit(1)


main()
