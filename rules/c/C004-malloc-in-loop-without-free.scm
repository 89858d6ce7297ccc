; id: C004
; title: malloc() in a loop without a matching free() in it
; level: 4
; severity: medium
; status: requires_profiling
; metric: allocation_churn
; when: in-loop, loop-lacks /free[[:space:]]*\([[:space:]]*{@v}[[:space:]]*\)/, loop-not-small
; rationale: A fresh allocation per iteration costs allocator time and, when the pointer is overwritten without free, leaks memory every iteration.
; fix: allocate once before the loop and reuse the buffer, or free it in the same iteration
; quiet: an allocation freed in the same loop; loops known to run few times
; bad:
;| #include <stdlib.h>
;| #include <string.h>
;| void each(const char **rows, int n, void (*fn)(char *))
;| {
;| 	for (int i = 0; i < n; i++) {
;| 		char *copy = malloc(strlen(rows[i]) + 1);
;| 		strcpy(copy, rows[i]);
;| 		fn(copy);
;| 	}
;| }
; good:
;| #include <stdlib.h>
;| #include <string.h>
;| void each(const char **rows, int n, void (*fn)(char *))
;| {
;| 	for (int i = 0; i < n; i++) {
;| 		char *copy = strdup(rows[i]);
;| 		fn(copy);
;| 		free(copy);
;| 	}
;| }
((assignment_expression left: (identifier) @v right: (call_expression function: (identifier) @f)) @finding (#match? @f "^(malloc|calloc)$"))
((init_declarator declarator: (pointer_declarator declarator: (identifier) @v) value: (call_expression function: (identifier) @f)) @finding (#match? @f "^(malloc|calloc)$"))
