#!/bin/sh
# perfloop mcp driven by the official MCP TypeScript SDK's client
# (@modelcontextprotocol/sdk, installed by scripts/install-deps into
# .deps/mcp-sdk): tools listed with valid schemas, scan and bench results
# the SDK accepts against each tool's output schema and our own schemas
# validate, a long bench cancelled with an AbortController (its command
# gone, the partial summary kept), and a whole loop (baseline, a change,
# try) in a temporary repository.
. "$PERFLOOP_SRC/tests/cli/lib.sh"
command -v node >/dev/null 2>&1 || skip "no node here"
sdk="$PERFLOOP_SRC/.deps/mcp-sdk"
[ -f "$sdk/node_modules/@modelcontextprotocol/sdk/package.json" ] ||
	skip "the MCP SDK is not installed (scripts/install-deps installs it)"
new_repo proj
cat >train.py <<'PY'
import torch
def train(model, loader, opt, device):
    for x, y in loader:
        loss = model(x.to(device), y.to(device))
        loss.backward()
        opt.step()
        print(loss.item())
PY
timeout 240 node "$PERFLOOP_SRC/tests/cli/mcp_sdk_client.cjs" "$sdk" "$PERFLOOP" "$PERFLOOP_SRC" "$PWD" >out 2>err
rc=$?
cat out err
[ "$rc" -eq 77 ] && skip "$(grep SKIP out)"
[ "$rc" -eq 0 ] || fail "the SDK's client session"
exit 0
