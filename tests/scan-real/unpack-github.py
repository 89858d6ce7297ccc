#!/usr/bin/env python3
"""Unpack the GitHub corpora of the held-out sets (heldout*/NAME.corpus.json,
"package": "github:OWNER/NAME") under DEPS_DIR: the .py files of each
corpus's commit, from a local git mirror where one is given, else from the
corpus's archive url. A corpus already unpacked is left as it is.

usage: unpack-github.py DEPS_DIR [--mirror DIR]
  --mirror DIR: DIR/OWNER+NAME/repo (or repo/.git) is a git directory
  holding the commit (what the session tool `fetch` brings).
Exit 0; a corpus that could not be unpacked is named on stderr.
"""
import glob
import io
import json
import os
import subprocess
import sys
import tarfile
import urllib.request

HERE = os.path.dirname(os.path.abspath(__file__))


def safe(name):
    """a member path that stays under the directory it is unpacked in"""
    return name and not os.path.isabs(name) and ".." not in name.split("/")


def extract(t, members, dest):
    for m in members:
        if (m.isfile() or m.isdir()) and safe(m.name):
            t.extract(m, dest)
        elif m.isfile():
            print("skipped %s: outside the corpus" % m.name, file=sys.stderr)


def from_mirror(gitdir, commit, dest):
    ls = subprocess.run(["git", "--git-dir", gitdir, "ls-tree", "-r", "--name-only", commit],
                        capture_output=True, text=True)
    if ls.returncode:
        return False
    py = [p for p in ls.stdout.split("\n") if p.endswith(".py")]
    arc = subprocess.run(["git", "--git-dir", gitdir, "archive", commit] + py, capture_output=True)
    if arc.returncode:
        return False
    with tarfile.open(fileobj=io.BytesIO(arc.stdout)) as t:
        extract(t, t.getmembers(), dest)
    return True


def from_url(url, dest):
    with urllib.request.urlopen(url, timeout=60) as r:
        data = r.read()
    with tarfile.open(fileobj=io.BytesIO(data)) as t:
        keep = []
        for m in t.getmembers():
            parts = m.name.split("/", 1)  # OWNER-NAME-COMMIT/path
            if m.isfile() and len(parts) == 2 and parts[1].endswith(".py"):
                m.name = parts[1]
                keep.append(m)
        extract(t, keep, dest)
    return True


def main():
    deps = os.path.abspath(sys.argv[1])
    mirror = sys.argv[sys.argv.index("--mirror") + 1] if "--mirror" in sys.argv else None
    for f in sorted(glob.glob(os.path.join(HERE, "heldout*", "*.corpus.json"))):
        c = json.load(open(f))
        if not c["package"].startswith("github:"):
            continue
        dest = os.path.join(deps, os.path.basename(c["root"]))
        if os.path.isdir(dest):
            continue
        repo = c["package"][len("github:"):]
        os.makedirs(dest)
        ok = False
        try:
            if mirror:
                g = os.path.join(mirror, repo.replace("/", "+"), "repo")
                g = os.path.join(g, ".git") if os.path.isdir(os.path.join(g, ".git")) else g
                ok = os.path.isdir(g) and from_mirror(g, c["version"], dest)
            if not ok:
                ok = from_url(c["url"], dest)
        except (OSError, tarfile.TarError, subprocess.SubprocessError) as e:
            print("%s: %s" % (c["name"], e), file=sys.stderr)
        if ok:
            print("unpacked %s at %s" % (c["name"], c["version"][:12]))
        else:
            if not os.listdir(dest):
                os.rmdir(dest)
            print("not unpacked: %s (%s)" % (c["name"], repo), file=sys.stderr)


main()
