; id: PY001
; title: Nested loops over the same collection
; level: 1
; severity: medium
; status: requires_profiling
; metric: complexity_exponent
; when: enclosing-loop-iterates @iter, loop-not-small, pairwise-compare
; rationale: An inner loop over the collection the outer loop already walks compares every element with every other: n^2 steps, a second for 1,000 items becomes 17 minutes for 30,000.
; fix: index the collection once outside the loops (a set, a dict keyed by what the inner loop looks for, or a sort), then do one pass
; quiet: nested loops over different collections; an inner loop in the outer loop's else clause (it runs once); an inner loop that compares none of its elements with the outer loop's (all pairs as output, a matrix, a published algorithm such as Floyd-Warshall: nothing a set or a sort would replace; these were rated low until held-out 14, where 7 of 7 were labelled false, filter matrices built at set-up); loops over a collection known to be small (a literal, `[0] * 4`, `range(8)`, a count named n_splits, num_layers, world_size, ndim...); comprehensions
; bad:
;| def duplicates(items):
;|     out = []
;|     for a in items:
;|         for b in items:
;|             if a is not b and a == b:
;|                 out.append(a)
;|     return out
; good:
;| from collections import Counter
;| def duplicates(items):
;|     counts = Counter(items)
;|     return [x for x in items if counts[x] > 1]
(for_statement right: (_) @iter) @finding
