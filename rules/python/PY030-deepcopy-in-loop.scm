; id: PY030
; title: copy.deepcopy inside a loop
; level: 4
; severity: medium
; status: requires_profiling
; advisory: on real code (tests/scan-real) 1 of 19 findings was real: deep copies of small configs and metadata in set-up loops
; when: in-loop
; rationale: deepcopy walks and copies the whole object graph, with a memo dictionary, on every iteration: often the hottest line of a loop that seems to do little.
; fix: copy once outside the loop, copy only what changes (a shallow copy, dataclasses.replace), or avoid mutation
; quiet: copy.copy; deepcopy outside loops
; bad:
;| import copy
;| def variants(base, keys):
;|     out = []
;|     for k in keys:
;|         v = copy.deepcopy(base)
;|         v[k] = 1
;|         out.append(v)
;|     return out
; good:
;| def variants(base, keys):
;|     return [{**base, k: 1} for k in keys]
((call function: [(identifier) @f (attribute attribute: (identifier) @f)]) @finding (#eq? @f "deepcopy"))
