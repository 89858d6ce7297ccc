#!/usr/bin/env python3
"""Property test for perfloop checkpoint/revert (run by t500-checkpoint-property.sh).

For each seeded case: build a repository with committed files, uncommitted
edits, staged edits, untracked files and ignored files; checkpoint; apply a
random change (edits, new files, deletes, renames, mode changes, staging);
revert; then every file must be byte-for-byte and mode-for-mode as at the
checkpoint, except the files the change created, which must be listed and
left untouched. Ignored files are never touched.

usage: checkpoint_property.py PERFLOOP WORKDIR SEED CASES
"""
import os
import random
import shutil
import stat
import subprocess
import sys

PL, WORK, SEED, CASES = sys.argv[1], sys.argv[2], int(sys.argv[3]), int(sys.argv[4])


def git(repo, *args):
    subprocess.run(["git", "-C", repo, *args], check=True, stdout=subprocess.DEVNULL,
                   stderr=subprocess.DEVNULL)


def snapshot(repo):
    """path -> (bytes, executable) for every file, .git and .perfloop excluded."""
    out = {}
    for root, dirs, files in os.walk(repo):
        dirs[:] = [d for d in dirs if d not in (".git", ".perfloop")]
        for f in files:
            p = os.path.join(root, f)
            rel = os.path.relpath(p, repo)
            with open(p, "rb") as fh:
                out[rel] = (fh.read(), bool(os.stat(p).st_mode & stat.S_IXUSR))
    return out


def index_state(repo):
    r = subprocess.run(["git", "-C", repo, "ls-files", "-s", "-z"], check=True,
                       capture_output=True)
    return sorted(r.stdout.split(b"\0"))


def rand_bytes(rng):
    n = rng.choice([0, 1, 5, 40, 300])
    return bytes(rng.randrange(256) for _ in range(n)) if rng.random() < 0.3 else \
        "".join(rng.choice("abc \n") for _ in range(n)).encode()


def write(repo, rel, data):
    p = os.path.join(repo, rel)
    os.makedirs(os.path.dirname(p), exist_ok=True)
    with open(p, "wb") as fh:
        fh.write(data)


def one_case(case):
    rng = random.Random(SEED * 100003 + case)
    repo = os.path.join(WORK, "case%d" % case)
    os.makedirs(repo)
    git(repo, "init", "-q")
    git(repo, "config", "user.email", "t@example.com")
    git(repo, "config", "user.name", "t")
    names = ["a.txt", "b.py", "dir/c.c", "dir/sub/d.md", "e f.txt", "dir/g.h", "h.bin"]
    committed = rng.sample(names, rng.randint(1, len(names)))
    for n in committed:
        write(repo, n, rand_bytes(rng))
    write(repo, ".gitignore", b"*.log\nbuild/\n")
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", "base")
    # the user's state before the change
    for n in committed:
        r = rng.random()
        if r < 0.25:
            write(repo, n, rand_bytes(rng))  # unstaged edit
        elif r < 0.45:
            write(repo, n, rand_bytes(rng))
            git(repo, "add", "--", n)  # staged edit
            if rng.random() < 0.5:
                write(repo, n, rand_bytes(rng))  # and a further unstaged one
    untracked = ["u%d.txt" % i for i in range(rng.randint(0, 3))]
    for n in untracked:
        write(repo, n, rand_bytes(rng))
    ignored = ["x.log", "build/out.o"]
    for n in ignored:
        write(repo, n, rand_bytes(rng))
    before = snapshot(repo)
    index_before = index_state(repo)

    subprocess.run([PL, "checkpoint", "-C", repo], check=True, stdout=subprocess.DEVNULL)
    if snapshot(repo) != before or index_state(repo) != index_before:
        raise AssertionError("case %d: checkpoint changed the tree or the index" % case)

    # the change
    existing = [p for p in before if p not in ignored and p != ".gitignore"]
    created = set()
    for _ in range(rng.randint(1, 6)):
        op = rng.choice(["edit", "new", "delete", "rename", "chmod", "stage"])
        live = [p for p in existing if os.path.exists(os.path.join(repo, p))]
        if op == "edit" and live:
            write(repo, rng.choice(live), rand_bytes(rng))
        elif op == "new":
            n = rng.choice(["new%d.txt" % rng.randrange(5), "dir/new.c", "nd/x/y.txt"])
            if n not in before:
                write(repo, n, rand_bytes(rng))
                created.add(n)
        elif op == "delete" and live:
            os.remove(os.path.join(repo, rng.choice(live)))
        elif op == "rename" and live:
            src = rng.choice(live)
            dst = "renamed/" + os.path.basename(src)
            if dst not in before and not os.path.exists(os.path.join(repo, dst)):
                os.makedirs(os.path.join(repo, "renamed"), exist_ok=True)
                if rng.random() < 0.5 and src in committed:
                    subprocess.run(["git", "-C", repo, "mv", "--", src, dst],
                                   stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
                else:
                    os.rename(os.path.join(repo, src), os.path.join(repo, dst))
                if os.path.exists(os.path.join(repo, dst)):
                    created.add(dst)
        elif op == "chmod" and live:
            p = os.path.join(repo, rng.choice(live))
            os.chmod(p, os.stat(p).st_mode ^ stat.S_IXUSR)
        elif op == "stage":
            subprocess.run(["git", "-C", repo, "add", "-A"], stdout=subprocess.DEVNULL,
                           stderr=subprocess.DEVNULL)
    created = {c for c in created if os.path.exists(os.path.join(repo, c))}
    created_bytes = {c: open(os.path.join(repo, c), "rb").read() for c in created}

    r = subprocess.run([PL, "revert", "-C", repo, "--json"], capture_output=True, text=True)
    if r.returncode != 0:
        raise AssertionError("case %d: revert failed: %s" % (case, r.stderr))
    import json
    listed = set(json.loads(r.stdout)["created"])
    after = snapshot(repo)
    for p, v in before.items():
        if after.get(p) != v:
            raise AssertionError("case %d: %s is not as at the checkpoint (%r vs %r)"
                                 % (case, p, after.get(p), v))
    extra = set(after) - set(before)
    if extra != created:
        raise AssertionError("case %d: extra files %s, created %s" % (case, extra, created))
    if listed != created:
        raise AssertionError("case %d: listed %s, created %s" % (case, listed, created))
    for c, data in created_bytes.items():
        if after[c][0] != data:
            raise AssertionError("case %d: created file %s was modified" % (case, c))
    # the index is as at the checkpoint for every path that existed then
    idx_after = [e for e in index_state(repo) if not any(e.endswith(b"\t" + c.encode())
                                                         for c in created)]
    if idx_after != index_before:
        raise AssertionError("case %d: index differs:\n%s\n%s" % (case, index_before, idx_after))
    shutil.rmtree(repo)


for case in range(CASES):
    one_case(case)
print("%d cases passed (seed %d)" % (CASES, SEED))
