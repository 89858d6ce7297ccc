; id: PY028
; title: Needless list() copy of what a for loop iterates
; level: 4
; severity: low
; status: statically_confirmed
; when: not-mutated @name
; rationale: for x in list(items) copies the whole iterable into a new list before the first iteration; iterating the original is enough unless the loop mutates it.
; fix: iterate the object directly (keep the copy only when the loop changes the container)
; quiet: list() of anything but a plain name (a generator, a call, a slice); a loop that changes, or may change, what it iterates, where the copy is needed: a method call on it other than a reader (get, keys, items, copy, count...), del or an assignment to NAME[...], NAME passed to a call, or a yield in the loop (the caller runs between iterations)
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
((for_statement right: (call function: (identifier) @f arguments: (argument_list . (identifier) @name .))) @finding (#eq? @f "list"))
