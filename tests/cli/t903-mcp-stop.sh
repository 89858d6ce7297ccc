#!/bin/sh
# perfloop mcp, stopped and fed a FIFO (#38, the second review): a path
# argument naming a FIFO is refused as invalid params (verify on one hung
# the tool and the server behind it); SIGTERM to the server while a tool
# runs stops the tool's processes and ends the server (it caught the
# signal and went on waiting, the tool left running).
. "$PERFLOOP_SRC/tests/cli/lib.sh"
command -v python3 >/dev/null || skip "no python3"
new_repo proj
echo x >a.txt
git add a.txt
git commit -qm start
mkfifo ff.json
rc=0
timeout 120 python3 - "$PERFLOOP" >session.txt 2>&1 <<'PY' || rc=$?
import json, os, select, signal, subprocess, sys, time
perfloop = sys.argv[1]
p = subprocess.Popen([perfloop, "mcp"], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                     stderr=subprocess.DEVNULL)
buf = b""
def send(m):
    p.stdin.write(json.dumps(m).encode() + b"\n"); p.stdin.flush()
def recv(i, timeout=30):
    global buf
    end = time.time() + timeout
    while True:
        while b"\n" not in buf:
            left = end - time.time()
            assert left > 0, "no answer to %d within %d s" % (i, timeout)
            r, _, _ = select.select([p.stdout], [], [], left)
            if r:
                c = os.read(p.stdout.fileno(), 65536)
                assert c, "the server closed its output"
                buf += c
        line, buf = buf.split(b"\n", 1)
        m = json.loads(line)
        if m.get("id") == i:
            return m
send({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "t903", "version": "1"}}})
recv(0)
send({"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {"name": "verify", "arguments": {"before": "ff.json", "after": "ff.json"}}})
r = recv(1)
assert "error" in r and r["error"]["code"] == -32602 and "FIFO" in r["error"]["message"], r
# a tool that runs: bench of a long sleep, then SIGTERM to the server
send({"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": {"name": "bench", "arguments": {"commands": ["sleep 30.5"], "runs": 3}}})
sleeper = None
for _ in range(100):
    out = subprocess.run(["pgrep", "-f", "sleep 30.5"], capture_output=True, text=True).stdout.split()
    if out:
        sleeper = int(out[0]); break
    time.sleep(0.1)
assert sleeper, "the bench never started its command"
t0 = time.time()
p.send_signal(signal.SIGTERM)
try:
    p.wait(timeout=20)
except subprocess.TimeoutExpired:
    p.kill()
    raise AssertionError("the server did not end within 20 s of SIGTERM")
for _ in range(100):
    try:
        os.kill(sleeper, 0)
    except ProcessLookupError:
        break
    time.sleep(0.1)
else:
    os.kill(sleeper, signal.SIGKILL)
    raise AssertionError("the tool's command was left running after the server ended")
print("ok")
PY
cat session.txt
[ "$rc" -eq 0 ] || fail "the session (exit $rc)"
