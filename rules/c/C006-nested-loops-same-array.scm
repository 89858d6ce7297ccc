; id: C006
; title: Nested loops over the same array (pairwise comparison)
; level: 1
; severity: high
; status: requires_profiling
; metric: complexity_exponent
; when: enclosing-loop-iterates @bound, node-has /([[:alpha:]_][[:alnum:]_]*)\[[[:space:]]*[[:alpha:]_][[:alnum:]_]*[[:space:]]*\][^;]*[^[:alnum:]_]\1\[/
; rationale: Comparing every element with every other element of the same array is O(n^2): fine for 100 items, minutes for 100,000.
; fix: sort once (O(n log n)) and compare neighbours, or use a hash set of the elements seen
; quiet: nested loops over different bounds, or whose body does not index the same array with both variables
; bad:
;| int has_duplicate(const int *a, int n)
;| {
;| 	for (int i = 0; i < n; i++)
;| 		for (int j = i + 1; j < n; j++)
;| 			if (a[i] == a[j])
;| 				return 1;
;| 	return 0;
;| }
; good:
;| #include <stdlib.h>
;| static int cmp(const void *x, const void *y)
;| {
;| 	return (*(const int *)x > *(const int *)y) - (*(const int *)x < *(const int *)y);
;| }
;| int has_duplicate(int *a, int n)
;| {
;| 	qsort(a, (size_t)n, sizeof *a, cmp);
;| 	for (int i = 1; i < n; i++)
;| 		if (a[i - 1] == a[i])
;| 			return 1;
;| 	return 0;
;| }
(for_statement condition: (binary_expression right: (_) @bound)) @finding
