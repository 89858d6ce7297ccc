; id: PY028
; title: Needless list() copy of what a for loop iterates
; level: 4
; severity: low
; status: statically_confirmed
; rationale: for x in list(items) copies the whole iterable into a new list before the first iteration; iterating the original is enough unless the loop mutates it.
; fix: iterate the object directly (keep the copy only when the loop changes the container)
; quiet: list() of anything but a plain name (a generator, a call, a slice). Note: it does flag list(d) in a loop that changes d, where the copy is needed; write d.copy() or list(d.keys()) there to say so
; bad:
;| def total(prices):
;|     s = 0
;|     for p in list(prices):
;|         s += p
;|     return s
; good:
;| def total(prices):
;|     s = 0
;|     for p in prices:
;|         s += p
;|     return s
((for_statement right: (call function: (identifier) @f arguments: (argument_list . (identifier) .))) @finding (#eq? @f "list"))
