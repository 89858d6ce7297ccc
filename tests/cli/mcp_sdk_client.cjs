// t901's client: the official MCP TypeScript SDK (its CommonJS build, from
// .deps/mcp-sdk) driving `perfloop mcp` as an agent's client would.
//     node mcp_sdk_client.cjs SDK_DIR PERFLOOP SRC PROJECT_DIR
"use strict";
const { createRequire } = require("module");
const { execFileSync, spawnSync } = require("child_process");
const fs = require("fs");
const path = require("path");

const [sdkDir, perfloop, src, project] = process.argv.slice(2);
const req = createRequire(path.join(sdkDir, "package.json"));
const { Client } = req("@modelcontextprotocol/sdk/client/index.js");
const { StdioClientTransport } = req("@modelcontextprotocol/sdk/client/stdio.js");
const Ajv2020 = req("ajv/dist/2020").default;
const addFormats = req("ajv-formats").default || req("ajv-formats");

function check(cond, what) {
  if (!cond) throw new Error("t901: " + what);
}
function ownSchema(name) {
  const ajv = new Ajv2020({ strict: false, allErrors: true });
  addFormats(ajv);
  return ajv.compile(JSON.parse(fs.readFileSync(path.join(src, "docs/schemas", name), "utf8")));
}
function sleeping(marker) {
  return spawnSync("pgrep", ["-f", marker]).status === 0;
}

async function main() {
  const transport = new StdioClientTransport({ command: perfloop, args: ["mcp"], cwd: project, stderr: "inherit" });
  const client = new Client({ name: "t901", version: "1.0.0" });
  await client.connect(transport);
  check(client.getServerVersion().name === "perfloop", "server name");

  // every tool's schemas are valid JSON Schema (2020-12, as Ajv reads them)
  const { tools } = await client.listTools();
  const names = tools.map((t) => t.name);
  for (const want of ["scan", "bench", "profile", "select", "verify", "baseline", "try", "checkpoint", "revert", "status", "history", "report"])
    check(names.includes(want), "tools/list lacks " + want);
  const ajv = new Ajv2020({ strict: false });
  for (const t of tools) {
    ajv.compile(t.inputSchema);
    if (t.outputSchema) ajv.compile(t.outputSchema);
  }

  // scan and bench: results the SDK accepts (it checks them against each
  // tool's outputSchema) and that our own schemas validate
  let r = await client.callTool({ name: "scan", arguments: { paths: ["train.py"] } }, undefined, { timeout: 200000 });
  check(!r.isError, "scan: " + JSON.stringify(r.content));
  const findings = ownSchema("findings-1.schema.json");
  check(findings(r.structuredContent), "scan: " + JSON.stringify(findings.errors));
  check(r.structuredContent.findings.some((f) => f.leaf === "PY010"), "scan found no PY010");
  r = await client.callTool({ name: "bench", arguments: { commands: ["true"], runs: 3 } }, undefined, { timeout: 200000 });
  check(!r.isError, "bench: " + JSON.stringify(r.content));
  const bench = ownSchema("bench-1.schema.json");
  check(bench(r.structuredContent), "bench: " + JSON.stringify(bench.errors));

  // cancel a long bench: the SDK's AbortController; the command is gone
  const marker = "sleep 0.7373";
  const ac = new AbortController();
  let progressed = 0;
  const long = client.callTool({ name: "bench", arguments: { commands: [marker], runs: 40 } }, undefined, {
    signal: ac.signal,
    timeout: 120000,
    onprogress: () => {
      progressed++;
      if (progressed === 1) ac.abort("t901 cancels");
    },
  });
  let rejected = false;
  try {
    await long;
  } catch (e) {
    rejected = true;
  }
  check(rejected && progressed >= 1, "the cancelled call did not end as cancelled");
  const t0 = Date.now();
  while (sleeping(marker) && Date.now() - t0 < 8000) await new Promise((ok) => setTimeout(ok, 100));
  check(!sleeping(marker), "the cancelled benchmark still runs");
  await client.ping();
  const last = await client.readResource({ uri: "perfloop://last/bench.json" });
  check(JSON.parse(last.contents[0].text).interrupted === true, "no interrupted summary kept");

  // a whole loop: baseline, one change, try
  fs.writeFileSync(path.join(project, "prog.py"), "s = 0\nfor i in range(600000):\n    s += i\n");
  execFileSync("git", ["add", "prog.py", "train.py"], { cwd: project });
  execFileSync("git", ["commit", "-qm", "start"], { cwd: project });
  r = await client.callTool({ name: "baseline", arguments: { benches: ["python3 prog.py"], runs: 5 } }, undefined, { timeout: 200000 });
  if (r.isError && /too noisy/.test(r.content[0].text)) {
    // the host's noise refused the baseline (as it should): the loop part
    // cannot be judged here; everything before it was
    await client.close();
    console.log("SKIP: the loop part: " + r.content[0].text.split("\n")[0]);
    process.exit(77);
  }
  check(!r.isError && bench(r.structuredContent), "baseline: " + JSON.stringify(r.content));
  fs.writeFileSync(path.join(project, "prog.py"), "s = sum(range(600000))\n");
  r = await client.callTool({ name: "try", arguments: { message: "sum() instead of a loop" } }, undefined, { timeout: 200000 });
  const turn = r.structuredContent.turn;
  check(turn && turn.iteration === 1 && ["accept", "reject", "no_feasible_win"].includes(turn.verdict), "try: " + JSON.stringify(r));
  const res = await client.listResources();
  check(res.resources.some((x) => x.uri === "perfloop://loop/ledger.jsonl"), "no ledger resource");
  await client.close();
  console.log("ok: " + tools.length + " tools, loop verdict " + turn.verdict);
}

main().then(
  () => process.exit(0),
  (e) => {
    console.error(e && e.stack ? e.stack : e);
    process.exit(1);
  }
);
