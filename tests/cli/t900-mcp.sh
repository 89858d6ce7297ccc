#!/bin/sh
# perfloop mcp: the MCP handshake, tools/list, tools/call of scan and bench
# with their structured results valid against perfloop's own schemas,
# resources and the prompt; and hostile input: bad JSON, unknown methods,
# wrong types, huge ids, batches, a path outside the project, a message
# split across reads, 1 MB of garbage: the right JSON-RPC error, never a
# crash or a hang, the server still answering after.
. "$PERFLOOP_SRC/tests/cli/lib.sh"
new_repo proj
cat >train.py <<'PY'
import torch
from torch.utils.data import DataLoader
def train(model, data, opt, device):
    loader = DataLoader(data, batch_size=32)
    for x, y in loader:
        loss = model(x.to(device), y.to(device))
        loss.backward()
        opt.step()
        print(loss.item())
PY
timeout 120 python3 - "$PERFLOOP" "$PERFLOOP_SRC" "$BUSY" <<'PY' || fail "the MCP session"
import json, os, subprocess, sys, time
perfloop, src, busy = sys.argv[1:4]
p = subprocess.Popen([perfloop, "mcp"], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                     stderr=subprocess.PIPE, text=True, bufsize=1)
def send(obj_or_text):
    p.stdin.write((obj_or_text if isinstance(obj_or_text, str) else json.dumps(obj_or_text)) + "\n")
    p.stdin.flush()
def recv():
    line = p.stdout.readline()
    assert line, "the server closed its output: %s" % p.stderr.read()
    return json.loads(line)
def call(i, method, params=None):
    m = {"jsonrpc": "2.0", "id": i, "method": method}
    if params is not None:
        m["params"] = params
    send(m)
    r = recv()
    assert r.get("id") == i, r
    return r
def err(r, code):
    assert "error" in r and r["error"]["code"] == code, r

r = call(1, "initialize", {"protocolVersion": "2025-06-18", "capabilities": {},
                           "clientInfo": {"name": "t900", "version": "1"}})
res = r["result"]
assert res["protocolVersion"] == "2025-06-18" and res["serverInfo"]["name"] == "perfloop", res
assert set(res["capabilities"]) >= {"tools", "resources", "prompts"}, res
send({"jsonrpc": "2.0", "method": "notifications/initialized"})   # no answer
tools = call(2, "tools/list")["result"]["tools"]
names = [t["name"] for t in tools]
assert {"scan", "bench", "select", "verify", "status", "report"} <= set(names), names
try:
    import jsonschema
except ImportError:
    jsonschema = None
for t in tools:
    assert t["inputSchema"]["type"] == "object" and t["description"], t
    if jsonschema:
        jsonschema.Draft202012Validator.check_schema(t["inputSchema"])

# scan: a findings document, valid against its schema, with PY010 and PY014
r = call(3, "tools/call", {"name": "scan", "arguments": {"paths": ["train.py"]}})["result"]
assert not r["isError"], r
doc = r["structuredContent"]
assert doc["schema"] == "perfloop.findings/1", doc
assert {"PY010", "PY014"} <= {f["leaf"] for f in doc["findings"]}, doc["findings"]
if jsonschema:
    jsonschema.validate(doc, json.load(open(os.path.join(src, "docs/schemas/findings-1.schema.json"))))
# bench: a summary valid against perfloop.bench/1
r = call(4, "tools/call", {"name": "bench", "arguments": {"commands": [busy + " 1000"], "runs": 3}})["result"]
assert not r["isError"], r["content"]
doc = r["structuredContent"]
if jsonschema:
    jsonschema.validate(doc, json.load(open(os.path.join(src, "docs/schemas/bench-1.schema.json"))))
assert doc["schema"] == "perfloop.bench/1" and doc["benchmarks"][0]["status"] == "ok" and doc["benchmarks"][0]["stats"]["wall_s"]["p50"] > 0, doc["benchmarks"][0]
# a tool's own failure is a result with isError, not a protocol error
r = call(5, "tools/call", {"name": "verify", "arguments": {"before": "none.json", "after": "none.json"}})["result"]
assert r["isError"] and "none.json" in r["content"][0]["text"], r
# prompts and resources
assert call(6, "prompts/list")["result"]["prompts"][0]["name"] == "optimize"
msgs = call(7, "prompts/get", {"name": "optimize"})["result"]["messages"]
assert "verify" in msgs[0]["content"]["text"], msgs
assert call(8, "resources/list")["result"]["resources"] == []   # no loop started here
err(call(9, "resources/read", {"uri": "perfloop://loop/../../etc/passwd"}), -32002)

# hostile input
send("{not json")
err(recv(), -32700)
err(call(10, "no/such/method"), -32601)
err(call(11, "tools/call", {"name": "scan", "arguments": {"paths": ["/etc"]}}), -32602)
err(call(12, "tools/call", {"name": "scan", "arguments": {"paths": ["../../etc"]}}), -32602)
err(call(13, "tools/call", {"name": "bench", "arguments": {"commands": [busy], "runs": "many"}}), -32602)
err(call(14, "tools/call", {"name": "nope"}), -32602)
err(call(15, "tools/call", "scan"), -32602)
send({"jsonrpc": "2.0", "id": {"x": 1}, "method": "ping"})
err(recv(), -32600)
send('{"jsonrpc": "2.0", "id": 1e300, "method": "ping"}')
err(recv(), -32600)
send([{"jsonrpc": "2.0", "id": 16, "method": "ping"}])
err(recv(), -32600)
send({"jsonrpc": "1.0", "id": 17, "method": "ping"})
err(recv(), -32600)
# one message split across writes
p.stdin.write('{"jsonrpc": "2.0", "id": 18, ')
p.stdin.flush()
time.sleep(0.2)
p.stdin.write('"method": "ping"}\n')
p.stdin.flush()
assert recv() == {"jsonrpc": "2.0", "id": 18, "result": {}}
# 1 MB of garbage on one line, then it still answers
send("x" * (1 << 20))
err(recv(), -32700)
assert call(19, "ping")["result"] == {}
p.stdin.close()
assert p.wait(timeout=10) == 0, p.returncode
print("ok")
PY
exit 0
