; id: PY003
; title: String built with += in a loop
; level: 2
; severity: medium
; status: requires_profiling
; advisory: on real code (tests/scan-real) none of 46 findings was a real cost: mostly __repr__ and error messages of a few parts, and CPython grows a local string in place
; metric: complexity_exponent
; when: in-loop
; rationale: Strings are immutable: each += may copy everything built so far, O(n^2) in the final length. CPython sometimes resizes in place, but not when another reference exists or for non-local targets.
; fix: collect the pieces in a list and ''.join(pieces) once after the loop (or write to io.StringIO)
; quiet: += of anything but strings; string building outside loops
; bad:
;| def render(rows):
;|     out = ""
;|     for r in rows:
;|         out += f"{r.name},{r.value}\n"
;|     return out
; good:
;| def render(rows):
;|     return "".join(f"{r.name},{r.value}\n" for r in rows)
(augmented_assignment operator: "+=" right: (string)) @finding
(augmented_assignment operator: "+=" right: (call function: (identifier) @f) (#match? @f "^(str|repr|format)$")) @finding
(augmented_assignment operator: "+=" right: (binary_operator [(string) (binary_operator (string))])) @finding
