; id: PY035
; title: for loop that only fills a dict: a dict comprehension is faster
; level: 7
; severity: low
; status: statically_confirmed
; advisory: on real code (tests/scan-real) none of 18 findings was a real cost: dicts of a few options or parameter groups filled at set-up; 6 filled a dict that earlier loops or an outer loop also fill (now left alone: the empty dict must be made on the line before the loop)
; when: function-has /(^|[^.[:alnum:]_]){@d}[[:space:]]*=[[:space:]]*(\{\}|dict\(\))[[:space:]]*{@finding}/
; rationale: A loop whose body is one d[k] = v store runs the loop and the store as separate bytecodes per item; a dict comprehension (or dict(pairs)) builds it in one (ruff's PERF403).
; fix: d = {k: v for k, v in pairs} (or d.update(...) for an existing dict)
; quiet: stores into anything but a dict made empty ({} or dict()) on the line before the loop (one that earlier code or an outer loop also fills cannot become a comprehension): a list filled by index, a dict passed in or kept on self; loops with more than the one store (a condition with an else, a second statement); stores into attributes or nested items (d[a][b] = v)
; bad:
;| def index(rows):
;|     by_id = {}
;|     for r in rows:
;|         by_id[r.id] = r
;|     return by_id
; good:
;| def index(rows):
;|     return {r.id: r for r in rows}
;| def index2(rows, seen):
;|     by_id = {}
;|     for r in rows:
;|         by_id[r.id] = r
;|         seen.add(r.id)
;|     return by_id
((for_statement
  body: (block . (expression_statement (assignment left: (subscript value: (identifier) @d) right: (_))) .)) @finding)
