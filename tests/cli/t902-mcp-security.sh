#!/bin/sh
# perfloop mcp against a hostile client or repository: a tool call's data
# never becomes perfloop's options (scan's "-o README.md", a directory
# named --out=/abs/x, history's --db=); paths stay in the project (.., an
# absolute path, .git, a symlink out); the annotations tell the truth (no
# tool that runs a command or writes is read-only); resources and the
# loop's documents are never read through a symlink, nor a FIFO; a line
# over 16 MiB gets one error and the next line is served; a cancelled
# revert is never killed half-way (no stale .git/index.lock, the tree
# whole, revert usable after).
. "$PERFLOOP_SRC/tests/cli/lib.sh"
command -v python3 >/dev/null || skip "no python3"
new_repo proj
echo "the original readme" >README.md
cat >train.py <<'PY'
import torch
def train(model, data, opt):
    for x, y in data:
        loss = model(x, y)
        loss.backward()
        opt.step()
        print(loss.item())
PY
git add README.md train.py
git commit -qm start
"$PERFLOOP" scan --format json -o findings.json train.py >/dev/null 2>&1 || true
[ -s findings.json ] || fail "no findings.json to report from"
echo '{"secret": "s3cr3t-outside-the-project"}' >"$T/secret.json"
rc=0
timeout 300 python3 - "$PERFLOOP" "$T" >session.txt 2>&1 <<'PY' || rc=$?
import json, os, select, signal, subprocess, sys, time
perfloop, T = sys.argv[1:3]
SECRET = "s3cr3t-outside-the-project"

class Server:
    def __init__(self, cwd):
        self.p = subprocess.Popen([perfloop, "mcp"], cwd=cwd, stdin=subprocess.PIPE,
                                  stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
        self.buf = b""
        self.call(0, "initialize", {"protocolVersion": "2025-06-18", "capabilities": {},
                                    "clientInfo": {"name": "t902", "version": "1"}})
    def send(self, obj):
        data = obj if isinstance(obj, bytes) else json.dumps(obj).encode()
        self.p.stdin.write(data + b"\n")
        self.p.stdin.flush()
    def recv(self, timeout=60):
        end = time.time() + timeout
        while b"\n" not in self.buf:
            left = end - time.time()
            assert left > 0, "no answer from the server within %d s" % timeout
            r, _, _ = select.select([self.p.stdout], [], [], left)
            if r:
                chunk = os.read(self.p.stdout.fileno(), 1 << 16)
                assert chunk, "the server closed its output"
                self.buf += chunk
        line, self.buf = self.buf.split(b"\n", 1)
        m = json.loads(line)
        assert SECRET not in line.decode(), "a file outside the project was served: %s" % line[:300]
        return m
    def call(self, i, method, params=None, timeout=60):
        m = {"jsonrpc": "2.0", "id": i, "method": method}
        if params is not None:
            m["params"] = params
        self.send(m)
        while True:
            r = self.recv(timeout)
            if r.get("method") == "notifications/progress":
                continue
            assert r.get("id") == i, r
            return r
    def tool(self, i, name, args, timeout=120):
        return self.call(i, "tools/call", {"name": name, "arguments": args}, timeout)
    def close(self):
        self.p.stdin.close()
        assert self.p.wait(timeout=60) == 0, self.p.returncode

def err(r, code):
    assert "error" in r and r["error"]["code"] == code, r

def text(r):
    return "".join(c.get("text", "") for c in r["result"]["content"])

proj = os.path.join(T, "proj")
os.chdir(proj)

# ---- 2. options are never taken from data --------------------------------
s = Server(proj)
readme = open("README.md").read()
r = s.tool(1, "scan", {"paths": ["-o", "README.md"]})
assert open("README.md").read() == readme, "scan's paths overwrote README.md"
# a directory whose name reads as an option, with a path inside it
for n, tool, key, given in ((2, "scan", "paths", "train.py"), (3, "report", "inputs", "findings.json")):
    target = os.path.join(T, "escape-%s" % tool)
    os.makedirs("--out=" + target)
    r = s.tool(n, tool, {key: ["--out=" + target, given]})
    assert not os.path.exists(target), "%s wrote %s (outside the project)" % (tool, target)
r = s.tool(4, "history", {"action": "show", "name": "--db=%s/elsewhere.db" % T})
assert "elsewhere.db'" not in text(r), "history opened a database outside the project: %s" % text(r)
r = s.tool(5, "history", {"action": "show", "name": "-h"})
assert "usage" not in text(r), "history took the name -h as an option: %s" % text(r)
# paths outside the project, inside .git, or through a symlink out of it
os.symlink("/etc", "etc-link")
os.symlink(os.path.join(T, "secret.json"), "secret-link.json")
os.symlink(".git", "git-link")
os.symlink(os.path.join(T, "no-such-file"), "dangling.json")
bad = ["../secret.json", "/etc/passwd", T + "/secret.json", ".git/config", ".git", "sub/../../x",
       "etc-link/passwd", "secret-link.json", "git-link/config", "dangling.json", ".GIT/config", ""]
for k, p in enumerate(bad):
    err(s.tool(10 + k, "scan", {"paths": [p]}), -32602)
    err(s.tool(30 + k, "verify", {"before": p, "after": "x.json"}), -32602)
    err(s.tool(50 + k, "select", {"findings": [p]}), -32602)
    err(s.tool(70 + k, "report", {"inputs": [p]}), -32602)
# an absolute path inside the project is fine
r = s.tool(90, "scan", {"paths": [os.path.join(proj, "train.py")]})
assert not r["result"]["isError"], r

# ---- 3. the annotations tell the truth ------------------------------------
tools = {t["name"]: t for t in s.call(91, "tools/list")["result"]["tools"]}
want = {  # readOnly, destructive, idempotent, openWorld
    "scan": (True, False, True, False), "select": (True, False, True, False),
    "verify": (True, False, True, False), "status": (True, False, True, False),
    "history": (True, False, True, False), "report": (True, False, True, False),
    "bench": (False, True, False, True), "profile": (False, True, False, True),
    "baseline": (False, True, False, True), "try": (False, True, False, True),
    "checkpoint": (False, True, True, False), "revert": (False, True, True, False),
}
assert set(tools) == set(want), sorted(tools)
for name, w in want.items():
    a = tools[name]["annotations"]
    got = (a["readOnlyHint"], a["destructiveHint"], a["idempotentHint"], a["openWorldHint"])
    assert got == w, "%s: annotations %s, expected %s" % (name, got, w)
    # a read-only tool has no argument that is a command to run
    if a["readOnlyHint"]:
        props = set(tools[name]["inputSchema"].get("properties", {}))
        assert not props & {"command", "commands", "benches", "suite"}, (name, props)

# ---- 4. resources and documents: never through a symlink, never a FIFO -----
os.makedirs(".perfloop", exist_ok=True)
os.symlink(os.path.join(T, "secret.json"), ".perfloop/leak.json")
os.symlink(os.path.join(T, "secret.json"), ".perfloop/baseline.json")
os.mkfifo(".perfloop/fifo.json")
res = {x["uri"] for x in s.call(92, "resources/list")["result"]["resources"]}
assert not {"perfloop://loop/leak.json", "perfloop://loop/baseline.json", "perfloop://loop/fifo.json"} & res, res
for k, u in enumerate(("leak", "baseline", "fifo")):
    err(s.call(93 + k, "resources/read", {"uri": "perfloop://loop/%s.json" % u}, timeout=10), -32002)
# a tool refuses to run with a symlink in .perfloop (it would read or write through it)
r = s.tool(96, "status", {})
assert r["result"]["isError"] and "symlink" in text(r), r
os.unlink(".perfloop/leak.json")
os.unlink(".perfloop/baseline.json")
os.unlink(".perfloop/fifo.json")
# the ledger's path in loop.json: out of the project, or through a symlink
for k, ledger in enumerate(("../secret.json", T + "/secret.json", "secret-link.json")):
    json.dump({"schema": "perfloop.loop/1", "ledger": ledger}, open(".perfloop/loop.json", "w"))
    err(s.call(97 + k, "resources/read", {"uri": "perfloop://loop/ledger.jsonl"}, timeout=10), -32002)
os.unlink(".perfloop/loop.json")
s.close()

# a repository whose .perfloop is a symlink out of it: nothing read or
# written there (scan's cache, profile's output, the loop's documents)
other = os.path.join(T, "other")
outside = os.path.join(T, "outside-state")
os.makedirs(other)
os.makedirs(outside)
subprocess.run(["git", "init", "-q", other], check=True)
open(os.path.join(outside, "baseline.json"), "w").write(open(os.path.join(T, "secret.json")).read())
open(os.path.join(other, "a.py"), "w").write("x = 1\n")
os.symlink(outside, os.path.join(other, ".perfloop"))
s = Server(other)
res = {x["uri"] for x in s.call(1, "resources/list")["result"]["resources"]}
assert not [u for u in res if u.startswith("perfloop://loop/")], res
err(s.call(2, "resources/read", {"uri": "perfloop://loop/baseline.json"}), -32002)
for k, (name, args) in enumerate((("scan", {}), ("status", {}),
                                  ("profile", {"command": ["true"], "duration": 1}))):
    r = s.tool(3 + k, name, args)
    assert r["result"]["isError"] and "symlink" in text(r), r
assert sorted(os.listdir(outside)) == ["baseline.json"], os.listdir(outside)
s.close()

# ---- 20. a line over 16 MiB: one error, the next line served -------------
s = Server(proj)
LIM = 16 << 20
s.send(b"x" * (LIM + 70000))   # the limit passed mid-read, the newline reads later
e = s.recv()
assert e.get("error", {}).get("code") == -32700 and e.get("id") is None, e
r = s.call(101, "ping")   # the very next message: no second error
assert r.get("result") == {}, r
# a request itself over the limit is refused, not run
pad = LIM + 100
msg = json.dumps({"jsonrpc": "2.0", "id": 102, "method": "ping", "params": {"pad": "p" * pad}})
s.send(msg.encode())
e = s.recv()
assert e.get("error", {}).get("code") == -32700 and e.get("id") is None, e
assert s.call(103, "ping").get("result") == {}
# one just under the limit is answered
head = json.dumps({"jsonrpc": "2.0", "id": 104, "method": "ping", "params": {"pad": ""}})
msg = head[:-3] + "p" * (LIM - len(head) - 10) + head[-3:]
s.send(msg.encode())
assert s.recv().get("id") == 104
# an over-long line with no newline, its tail in pieces, then EOF: one
# error, nothing more, a clean exit
s.p.stdin.write(b"y" * (LIM + 1))
s.p.stdin.flush()
e = s.recv()
assert e.get("error", {}).get("code") == -32700, e
s.p.stdin.write(b"z" * 100000)
s.p.stdin.close()
assert s.p.wait(timeout=30) == 0
rest = s.buf + s.p.stdout.read()
assert not rest, "more than one error: %r" % rest[:200]

# ---- 9. a cancelled revert is never killed half-way ------------------------
big = os.path.join(T, "big")
subprocess.run(["git", "init", "-q", big], check=True)
os.chdir(big)
subprocess.run(["git", "config", "user.email", "t@example.com"], check=True)
subprocess.run(["git", "config", "user.name", "t"], check=True)
N = 100
for d in range(N):
    os.makedirs("d%d" % d)
    for f in range(200):
        open("d%d/f%d.txt" % (d, f), "w").write("x" * 64)
subprocess.run(["git", "add", "-A"], check=True)
subprocess.run(["git", "commit", "-qm", "big"], check=True)
s = Server(big)
assert not s.tool(1, "checkpoint", {})["result"]["isError"]
for d in range(N):
    for f in range(200):
        open("d%d/f%d.txt" % (d, f), "a").write("y")
subprocess.run(["git", "add", "d0"], check=True)   # the index changed too: revert locks it
s.send({"jsonrpc": "2.0", "id": 2, "method": "tools/call",
        "params": {"name": "revert", "arguments": {}}})
lock = os.path.join(big, ".git", "index.lock")
child, t0 = None, time.time()
while time.time() - t0 < 60 and not os.path.exists(lock):
    if child is None:
        kids = subprocess.run(["pgrep", "-P", str(s.p.pid)], capture_output=True, text=True).stdout.split()
        child = int(kids[0]) if kids else None
    time.sleep(0.002)
if not os.path.exists(lock) or child is None:
    print("SKIP: the revert was over before it could be caught holding git's lock")
    sys.exit(77)
# held mid-revert (a slow disk, a big tree), and cancelled: the server
# must not kill it (the old server sent SIGKILL 5 s after the cancellation)
os.kill(child, signal.SIGSTOP)
s.send({"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {"requestId": 2, "reason": "t902"}})
time.sleep(6.5)
alive = os.path.exists("/proc/%d" % child) and open("/proc/%d/stat" % child).read().split(")")[-1].split()[0] != "Z"
try:
    os.kill(child, signal.SIGCONT)
except ProcessLookupError:
    pass
r = s.call(3, "tools/list", timeout=120)   # answered once the revert has ended; 2 never
assert "result" in r, r
assert alive, "the server killed the cancelled revert"
assert not os.path.exists(lock), "a stale .git/index.lock after the cancelled revert"
changed = [p for d in range(N) for p in ["d%d/f%d.txt" % (d, f) for f in range(200)]
           if open(p).read() != "x" * 64]
assert not changed, "the cancelled revert left %d of %d files unrestored" % (len(changed), N * 200)
s.close()
out = subprocess.run([perfloop, "revert"], capture_output=True, text=True)
assert out.returncode == 0, out.stderr
print("ok")
PY
cat session.txt
[ "$rc" -eq 0 ] || [ "$rc" -eq 77 ] || fail "the hostile MCP session (exit $rc)"

# the over-long line under Valgrind, where there is one (and the build is
# not a sanitizer's, which Valgrind cannot run): no read of memory never
# written, one error, the next line answered
if command -v valgrind >/dev/null && valgrind -q "$PERFLOOP" --version >/dev/null 2>&1; then
	python3 -c '
import sys, time
out = sys.stdout.buffer
out.write(b"x" * ((16 << 20) + 70000)); out.flush(); time.sleep(0.3)
out.write(b"x" * 1000 + b"\n" + b"{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"ping\"}\n")' |
		valgrind -q --error-exitcode=9 "$PERFLOOP" mcp >vg.out 2>vg.err || fail "valgrind: $(head -20 vg.err)"
	[ "$(wc -l <vg.out)" -eq 2 ] && tail -1 vg.out | grep -q '"id":1,"result":{}' ||
		fail "over-long line: $(cut -c1-200 vg.out)"
fi
[ "$rc" -eq 77 ] && skip "$(grep SKIP session.txt)"
exit 0
