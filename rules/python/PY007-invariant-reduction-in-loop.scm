; id: PY007
; title: .mean()/.std()/.var() of data the loop does not change
; level: 8
; severity: medium
; status: statically_confirmed
; advisory: on real code (tests/scan-real) none of 23 findings was a real cost: the reduced data was the loop variable or changed every iteration
; when: in-loop, loop-lacks /(^|[^.[:alnum:]_]){@data}[[:space:]]*([-+*\/]?=[^=]|\[)/, loop-lacks /for[[:space:]]+{@data}[[:space:]]/, loop-lacks /{@data}\.[a-z_]+_\(/
; rationale: The reduction walks the whole array on every iteration although the array does not change inside the loop: O(n) wasted per iteration.
; fix: compute it once before the loop and reuse the value
; quiet: reductions of data the loop assigns, iterates or modifies in place
; bad:
;| def normalize(values, rows):
;|     out = []
;|     for r in rows:
;|         z = (r - values.mean()) / 2
;|         out.append(z)
;|     return out
; good:
;| def normalize(values, rows):
;|     mu, sigma = values.mean(), values.std()
;|     return [(r - mu) / sigma for r in rows]
((call function: (attribute object: (identifier) @data attribute: (identifier) @m) arguments: (argument_list)) @finding
 (#match? @m "^(mean|std|var|median|nanmean|nanstd)$"))
