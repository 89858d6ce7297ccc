; id: C012
; title: qsort() inside a loop
; level: 1
; severity: medium
; status: requires_profiling
; metric: complexity_exponent
; when: in-loop, loop-not-small
; rationale: Sorting again on every iteration costs O(n log n) each time; keeping the data sorted (insertion into place, a heap) costs O(log n) or O(n) per update.
; fix: sort once after the loop, or maintain order incrementally (binary-search insertion, a heap, a balanced tree)
; quiet: qsort() outside loops; loops known to run few times
; bad:
;| #include <stdlib.h>
;| int cmp(const void *a, const void *b);
;| void add_sorted(int *v, int *n, const int *in, int m)
;| {
;| 	for (int i = 0; i < m; i++) {
;| 		v[(*n)++] = in[i];
;| 		qsort(v, (size_t)*n, sizeof *v, cmp);
;| 	}
;| }
; good:
;| #include <stdlib.h>
;| int cmp(const void *a, const void *b);
;| void add_sorted(int *v, int *n, const int *in, int m)
;| {
;| 	for (int i = 0; i < m; i++)
;| 		v[(*n)++] = in[i];
;| 	qsort(v, (size_t)*n, sizeof *v, cmp);
;| }
((call_expression function: (identifier) @f) @finding (#eq? @f "qsort"))
