; id: PY029
; title: for loop that only appends: a list comprehension is faster
; level: 7
; severity: low
; status: statically_confirmed
; rationale: A loop whose body is a single .append call pays an attribute lookup and a method call per item; a comprehension builds the list with a dedicated bytecode.
; fix: out = [f(x) for x in items] (or out.extend(...) when appending to an existing list)
; bad:
;| def squares(items):
;|     out = []
;|     for x in items:
;|         out.append(x * x)
;|     return out
; good:
;| def squares(items):
;|     return [x * x for x in items]
((for_statement body: (block . (expression_statement (call function: (attribute attribute: (identifier) @m))) .)) @finding (#eq? @m "append"))
