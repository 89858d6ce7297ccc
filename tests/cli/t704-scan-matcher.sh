#!/bin/sh
# scan's own matcher (src/scan/scanmatch.c) against tree-sitter's query
# cursor: every rule (--advisory), on the rules' own examples, the scan
# test project and real code from this machine (the real-code corpus of
# t702 where installed, Debian's Python standard library, sklearn and
# torch where installed), must give the same findings, byte for byte;
# and the shipped rules must be read by the own matcher (no silent
# fallback to the slower cursor).
. "$PERFLOOP_SRC/tests/cli/lib.sh"
mkdir examples
python3 - "$PERFLOOP_SRC/rules" examples <<'PY'
import glob, os, sys
for path in sorted(glob.glob(os.path.join(sys.argv[1], "*", "*.scm"))):
    rule = os.path.basename(path).split("-")[0]
    ext = ".c" if os.path.basename(os.path.dirname(path)) == "c" else ".py"
    part, parts = None, {}
    for line in open(path):
        if line.startswith("; bad:") or line.startswith("; good:"):
            part = line[2:line.index(":")]
            parts[part] = []
        elif line.startswith(";|") and part:
            parts[part].append(line[3:] if line.startswith(";| ") else line[2:])
        elif not line.startswith(";|"):
            part = None
    for name, lines in parts.items():
        with open(os.path.join(sys.argv[2], rule + "_" + name + ext), "w") as f:
            f.write("".join(lines))
PY
[ "$(ls examples | wc -l)" -gt 40 ] || fail "the rules' examples were not found"
set -- examples "$PERFLOOP_SRC/tests/cli/scan-project"
[ -d "$PERFLOOP_SRC/.deps/scan-real" ] && set -- "$@" "$PERFLOOP_SRC/.deps/scan-real"
for d in /usr/lib/python3.11 /usr/lib/python3/dist-packages/sklearn \
	/usr/lib/python3/dist-packages/torch/nn /usr/lib/python3/dist-packages/torch/optim; do
	[ -d "$d" ] && set -- "$@" "$d"
done
# findings FILE: the document without its creation time and duration
findings() {
	python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); d.pop("created",None); d.pop("duration_s",None); print(json.dumps(d, sort_keys=True, indent=1))' "$1"
}
PERFLOOP_SCAN_MATCHER=own "$PERFLOOP" scan --no-cache --no-gitignore --advisory -j 2 \
	--format json -o own.json "$@" 2>own.err || fail "own matcher: $(cat own.err)"
PERFLOOP_SCAN_MATCHER=tree-sitter "$PERFLOOP" scan --no-cache --no-gitignore --advisory -j 2 \
	--format json -o ts.json "$@" 2>ts.err || fail "tree-sitter's cursor: $(cat ts.err)"
findings own.json >own.txt
findings ts.json >ts.txt
n=$(j own.json 'len(d["findings"])')
[ "$n" -gt 20 ] || fail "only $n findings: the corpus was not scanned"
diff ts.txt own.txt >diff.txt || fail "the matchers disagree: $(head -40 diff.txt)"
# the default rules too (the query of fewer rules is another query)
PERFLOOP_SCAN_MATCHER=own "$PERFLOOP" scan --no-cache --no-gitignore --format json -o own2.json \
	"$@" 2>/dev/null || fail "own matcher, default rules"
PERFLOOP_SCAN_MATCHER=tree-sitter "$PERFLOOP" scan --no-cache --no-gitignore --format json \
	-o ts2.json "$@" 2>/dev/null || fail "tree-sitter's cursor, default rules"
findings own2.json >own2.txt
findings ts2.json >ts2.txt
diff ts2.txt own2.txt >diff2.txt || fail "the matchers disagree (default rules): $(head -40 diff2.txt)"
exit 0
