// Lint every file named in LIST (one path per line) with ruff's WebAssembly
// build, PERF rules only, single-threaded; print "path:row code" per
// diagnostic and, on stderr, the seconds spent and lines read.
//     node bench/ruff-check.js MODULE_DIR LIST
const fs = require("fs");
const ruff = require(process.argv[2]);
const files = fs.readFileSync(process.argv[3], "utf8").split("\n").filter(Boolean);
const ws = new ruff.Workspace({ lint: { select: ["PERF"] } }, ruff.PositionEncoding.Utf16);
const t0 = process.hrtime.bigint();
let lines = 0;
const out = [];
for (const f of files) {
	const src = fs.readFileSync(f, "utf8");
	lines += src.split("\n").length - 1;
	for (const d of ws.check(src))
		if (d.code) out.push(`${f}:${d.start_location.row} ${d.code}`);
}
const secs = Number(process.hrtime.bigint() - t0) / 1e9;
process.stdout.write(out.join("\n") + (out.length ? "\n" : ""));
process.stderr.write(`ruff ${ruff.Workspace.version()}: ${secs.toFixed(3)} s ${lines} lines\n`);
