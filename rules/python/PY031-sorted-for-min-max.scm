; id: PY031
; title: sorted(...)[0] or [-1] to get a minimum or maximum
; level: 1
; severity: low
; status: statically_confirmed
; metric: complexity_exponent
; rationale: Sorting is O(n log n) and copies the input to read one element; min() and max() are one O(n) pass.
; fix: min(items, key=...) / max(items, key=...); heapq.nsmallest for the k first
; bad:
;| def cheapest(offers):
;|     return sorted(offers, key=lambda o: o.price)[0]
; good:
;| def cheapest(offers):
;|     return min(offers, key=lambda o: o.price)
((subscript value: (call function: (identifier) @f) subscript: [(integer) @i (unary_operator) @i]) @finding
 (#eq? @f "sorted") (#match? @i "^(0|-1)$"))
