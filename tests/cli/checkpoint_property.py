#!/usr/bin/env python3
"""Property test for perfloop checkpoint/revert (run by t500-checkpoint-property.sh).

For each seeded case: build a repository with committed files, uncommitted
and staged edits, intent-to-add entries, untracked files with odd and
non-UTF-8 names and unusual modes, symlinks (to files, directories, outside
the repository, dangling), ignored files, CRLF files under `* text=auto`,
and sometimes a nested repository or a held index.lock; checkpoint; apply a
random change (edits, new files, deletes, renames, mode changes, staging,
file<->directory swaps, a directory replaced by a symlink to outside,
symlinks retargeted or replaced, .gitignore emptied or extended, a commit
that moves HEAD); revert. Then:

  - every path is byte for byte, mode for mode and link for link as at the
    checkpoint (the index too, entry for entry);
  - every file the change created still exists with its bytes, in place or
    moved under .perfloop/displaced/ (never deleted), and the ones left in
    place are exactly the ones listed as created;
  - ignored files and everything outside the repository are untouched.

A revert refused because another process holds git's index lock must
change nothing; the case then releases the lock and reverts again. One
case in ten first kills a revert at a random moment (SIGKILL), one in ten
asks `perfloop mcp` for the revert (cancelling it at a random moment half
the time): the revert after either must still give all of the above.

usage: checkpoint_property.py PERFLOOP WORKDIR SEED CASES [FIRST]
(cases FIRST..CASES-1: t500 and t500b run the two halves side by side)
"""
import json
import time
import os
import random
import shutil
import stat
import subprocess
import sys

PL, WORK, SEED, CASES = sys.argv[1], sys.argv[2], int(sys.argv[3]), int(sys.argv[4])
FIRST = int(sys.argv[5]) if len(sys.argv) > 5 else 0
SKIP = {b".git", b".perfloop"}


def git(repo, *args, check=True):
    return subprocess.run(["git", "-C", repo, *args], check=check, stdout=subprocess.PIPE,
                          stderr=subprocess.DEVNULL).stdout


def snapshot(root, nested=()):
    """path (bytes) -> ('f', bytes, mode) | ('l', target) for everything
    under root but .git and .perfloop; nested repositories' own .git too."""
    out = {}
    broot = os.fsencode(root)
    for d, dirs, files in os.walk(broot):
        dirs[:] = [x for x in dirs if x not in SKIP]
        for name in files + [x for x in dirs if os.path.islink(os.path.join(d, x))]:
            p = os.path.join(d, name)
            rel = os.path.relpath(p, broot)
            st = os.lstat(p)
            if stat.S_ISLNK(st.st_mode):
                out[rel] = ("l", os.readlink(p))
            else:
                with open(p, "rb") as fh:
                    out[rel] = ("f", fh.read(), stat.S_IMODE(st.st_mode))
    return out


def index_state(repo):
    # --debug would show stat data; the flags that matter (intent-to-add)
    # show in ls-files -s as the empty blob plus `git status`
    return sorted(git(repo, "ls-files", "-s", "-z").split(b"\0"))


def rand_bytes(rng, crlf=False):
    n = rng.choice([0, 1, 5, 40, 300])
    if crlf:
        return b"".join(rng.choice([b"ab", b"c d", b"\r\n", b"x\r\n"]) for _ in range(n // 3 + 1))
    if rng.random() < 0.3:
        return bytes(rng.randrange(256) for _ in range(n))
    return "".join(rng.choice("abc \n") for _ in range(n)).encode()


def write(repo, rel, data, mode=None):
    p = os.path.join(os.fsencode(repo), rel if isinstance(rel, bytes) else os.fsencode(rel))
    parent = os.path.dirname(p)
    if os.path.lexists(parent) and not os.path.isdir(parent) or \
            os.path.isdir(p) and not os.path.islink(p):
        return  # a file stands where a directory would be, or the reverse
    os.makedirs(parent, exist_ok=True)
    if os.path.islink(p):
        os.unlink(p)
    with open(p, "wb") as fh:
        fh.write(data)
    if mode is not None:
        os.chmod(p, mode)


ODD = [b"e f.txt", b"caf\xc3\xa9.txt", b"bad\xff\xfename", b"new\nline", b'"quoted"',
       b"back\\slash", b"-dash", b" lead space", b"tab\tname"]


def mcp_revert(repo, rng, case):
    """A revert asked of `perfloop mcp` as an agent's client would, with a
    notifications/cancelled after a random delay half the time."""
    p = subprocess.Popen([PL, "mcp"], cwd=repo, stdin=subprocess.PIPE,
                         stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)

    def send(m):
        p.stdin.write(json.dumps(m).encode() + b"\n")
        p.stdin.flush()

    send({"jsonrpc": "2.0", "id": 0, "method": "initialize",
          "params": {"protocolVersion": "2025-06-18", "capabilities": {},
                     "clientInfo": {"name": "property", "version": "1"}}})
    send({"jsonrpc": "2.0", "method": "notifications/initialized"})
    send({"jsonrpc": "2.0", "id": 1, "method": "tools/call",
          "params": {"name": "revert", "arguments": {}}})
    if rng.random() < 0.5:
        time.sleep(rng.random() * 0.1)
        send({"jsonrpc": "2.0", "method": "notifications/cancelled",
              "params": {"requestId": 1, "reason": "property test"}})
    # a cancelled request gets no answer: a later one is answered once the
    # revert has ended, since the server runs one tool at a time
    send({"jsonrpc": "2.0", "id": 2, "method": "tools/list"})
    buf = b""
    end = time.time() + 120
    while time.time() < end:
        line = p.stdout.readline()
        if not line:
            break
        m = json.loads(line)
        if m.get("id") == 2:
            break
    else:
        raise AssertionError("case %d: the MCP server did not answer" % case)
    p.stdin.close()
    p.wait(timeout=60)
    if os.path.exists(os.path.join(repo, ".git", "index.lock")):
        raise AssertionError("case %d: the MCP revert left git's index lock" % case)


def one_case(case):
    rng = random.Random(SEED * 100003 + case)
    repo = os.path.join(WORK, "case%d" % case)
    outside = os.path.join(WORK, "outside%d" % case)
    os.makedirs(repo)
    os.makedirs(outside)
    with open(os.path.join(outside, "o.txt"), "wb") as fh:
        fh.write(b"outside")
    git(repo, "init", "-q")
    git(repo, "config", "user.email", "t@example.com")
    git(repo, "config", "user.name", "t")
    crlf = rng.random() < 0.2
    names = ["a.txt", "b.py", "dir/c.c", "dir/sub/d.md", "e f.txt", "dir/g.h", "h.bin"]
    committed = rng.sample(names, rng.randint(1, len(names)))
    for n in committed:
        write(repo, n, rand_bytes(rng, crlf))
    write(repo, ".gitignore", b"*.log\nbuild/\nconfig.local\n")
    if crlf:
        write(repo, ".gitattributes", b"* text=auto\n")
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", "base")
    # the user's state before the change
    for n in committed:
        r = rng.random()
        if r < 0.25:
            write(repo, n, rand_bytes(rng, crlf))  # unstaged edit
        elif r < 0.45:
            write(repo, n, rand_bytes(rng, crlf))
            git(repo, "add", "--", n)  # staged edit
            if rng.random() < 0.5:
                write(repo, n, rand_bytes(rng, crlf))  # and a further unstaged one
    untracked = [os.fsencode("u%d.txt" % i) for i in range(rng.randint(0, 3))]
    untracked += rng.sample(ODD, rng.randint(0, 3))
    for n in untracked:
        write(repo, n, rand_bytes(rng), rng.choice([0o644, 0o600, 0o755, 0o640, 0o700]))
    if rng.random() < 0.3:
        write(repo, "ita.txt", rand_bytes(rng))
        git(repo, "add", "-N", "ita.txt")
    links = []
    brepo = os.fsencode(repo)
    for name, target in [(b"l_file", b"a.txt"), (b"l_dir", b"dir"), (b"l_out", os.fsencode(outside)),
                         (b"l_dangling", b"nowhere"), (b"dir/l_up", b"../b.py")]:
        if rng.random() < 0.4:
            p = os.path.join(brepo, name)
            os.makedirs(os.path.dirname(p), exist_ok=True)
            if not os.path.lexists(p):
                os.symlink(target, p)
                links.append(name)
    nested = None
    if rng.random() < 0.1:
        nested = os.path.join(repo, "nested")
        os.makedirs(nested)
        git(nested, "init", "-q")
        write(nested, "n.txt", b"nested")
    ignored = [b"x.log", b"build/out.o", b"config.local"]
    for n in ignored:
        write(repo, n, rand_bytes(rng))
    before = snapshot(repo)
    index_before = index_state(repo)
    outside_before = snapshot(outside)

    lock = os.path.join(repo, ".git", "index.lock")
    if rng.random() < 0.15:
        open(lock, "w").close()  # an editor's git holds the lock meanwhile
    r = subprocess.run([PL, "checkpoint", "-C", repo], capture_output=True)
    if r.returncode != 0:
        raise AssertionError("case %d: checkpoint failed: %s" % (case, r.stderr))
    if snapshot(repo) != before or index_state(repo) != index_before:
        raise AssertionError("case %d: checkpoint changed the tree or the index" % case)
    if os.path.exists(lock):
        os.unlink(lock)

    # the change
    existing = [p for p in before if p not in ignored and p not in (b".gitignore", b".gitattributes")
                and not p.startswith(b"nested/")]
    created = set()

    def live():
        return [p for p in existing if os.path.lexists(os.path.join(brepo, p))]

    def through_link(rel):
        """Would writing rel go through a symlink the change made? (That
        would be this test writing outside, not perfloop.)"""
        parts = rel.split(b"/")[:-1]
        for i in range(1, len(parts) + 1):
            if os.path.islink(os.path.join(brepo, b"/".join(parts[:i]))):
                return True
        return False

    def make(rel, data):
        if through_link(rel):
            return
        write(repo, rel, data)
        created.add(rel)

    for _ in range(rng.randint(1, 6)):
        op = rng.choice(["edit", "new", "new", "delete", "rename", "chmod", "stage", "file2dir",
                         "dir2file", "dir2link", "relink", "link2file", "ignore", "commit"])
        lv = live()
        lv = [p for p in lv if not through_link(p)]
        if op == "edit" and lv:
            p = rng.choice(lv)
            if not os.path.islink(os.path.join(brepo, p)):
                write(repo, p, rand_bytes(rng, crlf))
        elif op == "new":
            n = rng.choice([b"new%d.txt" % rng.randrange(5), b"dir/new.c", b"nd/x/y.txt",
                            b"new\xffodd", b"new dir/f g"])
            if n not in before and not os.path.lexists(os.path.join(brepo, n)):
                make(n, rand_bytes(rng))
        elif op == "delete" and lv:
            p = os.path.join(brepo, rng.choice(lv))
            if os.path.isdir(p) and not os.path.islink(p):
                shutil.rmtree(p)
            else:
                os.remove(p)
        elif op == "rename" and lv:
            src = rng.choice(lv)
            dst = b"renamed/" + os.path.basename(src)
            if dst not in before and not os.path.lexists(os.path.join(brepo, dst)) \
                    and not through_link(dst):
                os.makedirs(os.path.join(brepo, b"renamed"), exist_ok=True)
                if rng.random() < 0.5 and os.fsdecode(src) in committed:
                    subprocess.run(["git", "-C", repo, "mv", "--", os.fsdecode(src), os.fsdecode(dst)],
                                   stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
                else:
                    os.rename(os.path.join(brepo, src), os.path.join(brepo, dst))
                if os.path.lexists(os.path.join(brepo, dst)):
                    created.add(dst)
        elif op == "chmod" and lv:
            p = os.path.join(brepo, rng.choice(lv))
            if not os.path.islink(p):
                os.chmod(p, rng.choice([0o600, 0o644, 0o755, 0o700, 0o664]))
        elif op == "stage":
            subprocess.run(["git", "-C", repo, "add", "-A"], stdout=subprocess.DEVNULL,
                           stderr=subprocess.DEVNULL)
        elif op == "file2dir" and lv:
            p = rng.choice(lv)
            full = os.path.join(brepo, p)
            if os.path.isdir(full) and not os.path.islink(full):
                continue
            os.remove(full)
            os.makedirs(full)
            write(repo, p + b"/inside.c", rand_bytes(rng))
            created.add(p + b"/inside.c")
        elif op == "dir2file":
            d = rng.choice([b"dir", b"dir/sub"])
            full = os.path.join(brepo, d)
            if os.path.isdir(full) and not os.path.islink(full) and not through_link(d):
                shutil.rmtree(full)
                write(repo, d, rand_bytes(rng))
                created.add(d)
        elif op == "dir2link":
            d = rng.choice([b"dir", b"dir/sub"])
            full = os.path.join(brepo, d)
            if os.path.isdir(full) and not os.path.islink(full) and not through_link(d):
                shutil.rmtree(full)
                os.symlink(os.fsencode(outside), full)
                created.add(d)
        elif op == "relink" and links:
            q = rng.choice(links)
            p = os.path.join(brepo, q)
            if os.path.islink(p) and not through_link(q):
                os.unlink(p)
                os.symlink(rng.choice([b"b.py", b"elsewhere", os.fsencode(outside)]), p)
        elif op == "link2file" and links:
            q = rng.choice(links)
            p = os.path.join(brepo, q)
            if os.path.islink(p) and not through_link(q):
                os.unlink(p)
                with open(p, "wb") as fh:
                    fh.write(b"was a link")
        elif op == "ignore":
            write(repo, ".gitignore", rng.choice([b"", b"*.log\n", b"*\n", b"*.txt\nbuild/\n"]))
        elif op == "commit":
            subprocess.run(["git", "-C", repo, "add", "-A"], stdout=subprocess.DEVNULL,
                           stderr=subprocess.DEVNULL)
            subprocess.run(["git", "-C", repo, "commit", "-q", "-m", "user"],
                           stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    changed = snapshot(repo)
    # what the change created: every path there now that was not before
    # (the bookkeeping above only steers the generator)
    created = set(changed) - set(before)
    created_bytes = {c: changed[c] for c in created}

    if rng.random() < 0.15:
        open(lock, "w").close()
        idx_now = index_state(repo)
        r = subprocess.run([PL, "revert", "-C", repo], capture_output=True)
        if r.returncode == 2:
            if snapshot(repo) != changed or index_state(repo) != idx_now:
                raise AssertionError("case %d: a refused revert changed something" % case)
        elif r.returncode != 0:
            raise AssertionError("case %d: revert with a held lock: %s" % (case, r.stderr))
        os.unlink(lock)

    how = rng.random()
    if how < 0.10:
        # killed at a random moment (SIGKILL, the OOM killer): the next
        # revert must still bring everything back, taking over the stale
        # index lock its predecessor may have left
        k = subprocess.Popen([PL, "revert", "-C", repo], stdout=subprocess.DEVNULL,
                             stderr=subprocess.DEVNULL)
        time.sleep(rng.random() * 0.12)
        k.kill()
        k.wait()
    elif how < 0.20:
        # through the MCP server, cancelled at a random moment or not: a
        # cancelled revert runs to its end (never killed half-way)
        mcp_revert(repo, rng, case)
    r = subprocess.run([PL, "revert", "-C", repo, "--json"], capture_output=True)
    if r.returncode not in (0, 3):
        raise AssertionError("case %d: revert failed: %s" % (case, r.stderr))
    doc = json.loads(r.stdout)
    after = snapshot(repo)
    for p, v in before.items():
        if after.get(p) != v:
            raise AssertionError("case %d: %r is not as at the checkpoint (%r vs %r)"
                                 % (case, p, after.get(p), v))
    # every created file still exists, in place or moved aside
    displaced = snapshot(os.path.join(repo, ".perfloop", "displaced")) \
        if os.path.isdir(os.path.join(repo, ".perfloop", "displaced")) else {}
    aside = {}
    for p, v in displaced.items():
        aside[p.split(b"/", 1)[1]] = v
    in_place = set()
    for c, v in created_bytes.items():
        if after.get(c) == v:
            in_place.add(c)
        elif aside.get(c) != v:
            raise AssertionError("case %d: created %r was lost (%r)" % (case, c, v))
    extra = set(after) - set(before)
    if extra != in_place:
        raise AssertionError("case %d: extra files %s, created in place %s" % (case, extra, in_place))

    def unquote(s):
        if s.startswith('"'):
            b = s[1:-1].encode("latin-1").decode("unicode_escape").encode("latin-1")
            return b
        return s.encode()

    listed = {unquote(x) for x in doc["created"]}
    # a created directory's files: the listing names the files
    if listed != in_place:
        raise AssertionError("case %d: listed %s, created in place %s" % (case, listed, in_place))
    if snapshot(outside) != outside_before:
        raise AssertionError("case %d: written outside the repository" % case)
    idx_after = index_state(repo)
    if idx_after != index_before:
        raise AssertionError("case %d: index differs:\n%s\n%s" % (case, index_before, idx_after))
    shutil.rmtree(repo)
    shutil.rmtree(outside)


for case in range(FIRST, CASES):
    one_case(case)
print("cases %d-%d passed (seed %d)" % (FIRST, CASES - 1, SEED))
