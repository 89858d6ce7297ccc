; id: PY034
; title: for loop that copies items one by one into a list
; level: 7
; severity: low
; status: statically_confirmed
; advisory: on real code (tests/scan-real) none of 8 findings was a real cost: list copies at set-up of a few items, and 4 misread an nn.Sequential's or a ParameterList's append (now left alone: the target must be a list the function creates)
; when: function-has /(^|[^.[:alnum:]_]){@out}[[:space:]]*=[[:space:]]*(\[\]|list\(\))/
; rationale: A loop whose body only appends the loop variable pays an attribute lookup and a method call per item to do what list(items) or out.extend(items) does in C (ruff's PERF402).
; fix: out = list(items), or out.extend(items) onto an existing list
; quiet: appends of anything but the loop variable itself (PY029 is the comprehension rule); loops with more than the append; appends to attributes, items, self, or anything the function does not create as [] or list() (an nn.Sequential's append registers a module)
; bad:
;| def names(rows):
;|     out = []
;|     for r in rows:
;|         out.append(r)
;|     return out
; good:
;| def names(rows):
;|     return list(rows)
;| def keep(rows, seen):
;|     out = []
;|     for r in rows:
;|         out.append(r)
;|         seen.add(r)
;|     return out
((for_statement left: (identifier) @var
   body: (block . (expression_statement (call function: (attribute object: (identifier) @out attribute: (identifier) @m) arguments: (argument_list . (identifier) @arg .))) .)) @finding
 (#eq? @m "append") (#eq? @arg @var))
