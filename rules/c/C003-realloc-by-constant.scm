; id: C003
; title: realloc() growing by a constant in a loop
; level: 1
; severity: high
; status: statically_confirmed
; metric: complexity_exponent
; when: in-loop, loop-not-small
; rationale: Growing a buffer by a fixed amount reallocates, and usually copies, on every step: O(n^2) bytes copied for n elements, and heap fragmentation.
; fix: grow geometrically (double the capacity when full) and track the capacity apart from the length
; quiet: realloc() growing by a multiple (doubling) or by a computed size; loops known to run few times
; bad:
;| #include <stdlib.h>
;| int *read_all(int n)
;| {
;| 	int *v = NULL;
;| 	for (int i = 0; i < n; i++) {
;| 		v = realloc(v, (i + 1) * sizeof *v);
;| 		v[i] = i;
;| 	}
;| 	return v;
;| }
; good:
;| #include <stdlib.h>
;| int *read_all(int n)
;| {
;| 	int *v = NULL;
;| 	size_t cap = 0;
;| 	for (int i = 0; i < n; i++) {
;| 		if ((size_t)i == cap) {
;| 			cap = cap ? cap * 2 : 16;
;| 			v = realloc(v, cap * sizeof *v);
;| 		}
;| 		v[i] = i;
;| 	}
;| 	return v;
;| }
((call_expression function: (identifier) @f arguments: (argument_list (_) (binary_expression operator: "+" right: (number_literal)))) @finding (#eq? @f "realloc"))
((call_expression function: (identifier) @f arguments: (argument_list (_) (binary_expression left: (parenthesized_expression (binary_expression operator: "+" right: (number_literal)))))) @finding (#eq? @f "realloc"))
