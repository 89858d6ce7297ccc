; id: PY031
; title: sorted(...)[0] or [-1] in a loop to get a minimum or maximum
; level: 1
; severity: low
; status: statically_confirmed
; metric: complexity_exponent
; when: in-loop
; rationale: Sorting is O(n log n) and copies the input to read one element; min() and max() are one O(n) pass. Done once, the difference is rarely worth a look (sorted(names)[0] over a few dozen names); done on every iteration it adds up, so only that is flagged.
; fix: min(items, key=...) / max(items, key=...); heapq.nsmallest for the k first
; quiet: sorted()[0] outside loops (a log factor and a copy, once); heapq
; bad:
;| def cheapest(shops):
;|     return [sorted(s.offers, key=lambda o: o.price)[0] for s in shops]
; good:
;| def cheapest(shops):
;|     return [min(s.offers, key=lambda o: o.price) for s in shops]
((subscript value: (call function: (identifier) @f) subscript: [(integer) @i (unary_operator) @i]) @finding
 (#eq? @f "sorted") (#match? @i "^(0|-1)$"))
