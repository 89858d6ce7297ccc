; id: PY002
; title: Membership test against a list inside a loop
; level: 2
; severity: medium
; status: statically_confirmed
; advisory: on real code (tests/scan-real) none of 11 findings was a real cost: the lists searched held a handful of items
; metric: complexity_exponent
; when: in-loop, function-has /(^|[^.[:alnum:]_]){@seq}[[:space:]]*=[[:space:]]*(\[|list\()/
; rationale: `x in some_list` scans the list element by element; inside a loop that is O(n*m). A set or dict answers in constant time.
; fix: build a set once before the loop (`wanted = set(some_list)`) and test membership against it
; quiet: membership in a set, dict or a list not built as a list literal or list() in the same function
; bad:
;| def keep(rows, names):
;|     allowed = [n.lower() for n in names]
;|     return [r for r in rows if r.name in allowed]
; good:
;| def keep(rows, names):
;|     allowed = {n.lower() for n in names}
;|     return [r for r in rows if r.name in allowed]
((comparison_operator (_) (identifier) @seq) @finding
 (#match? @finding "[[:space:]]in[[:space:]]"))
