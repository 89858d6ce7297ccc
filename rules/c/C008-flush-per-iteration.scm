; id: C008
; title: fflush()/fsync() on every iteration
; level: 3
; severity: medium
; status: requires_profiling
; when: in-loop, loop-not-small, unconditional, node-lacks /^fflush[[:space:]]*\([[:space:]]*(stdout|stderr)[[:space:]]*\)/
; rationale: Flushing per item turns buffered output into one write system call (or one disk sync) per item.
; fix: flush once after the loop, or every N items when progress must be visible
; quiet: a flush under a condition (a --unbuffered flag, every N items); fflush(stdout)/fflush(stderr), a progress display whose output must be seen; loops known to run few times
; bad:
;| #include <stdio.h>
;| void dump(FILE *f, const int *v, int n)
;| {
;| 	for (int i = 0; i < n; i++) {
;| 		fprintf(f, "%d\n", v[i]);
;| 		fflush(f);
;| 	}
;| }
; good:
;| #include <stdio.h>
;| void dump(FILE *f, const int *v, int n)
;| {
;| 	for (int i = 0; i < n; i++)
;| 		fprintf(f, "%d\n", v[i]);
;| 	fflush(f);
;| }
((call_expression function: (identifier) @f) @finding (#match? @f "^(fflush|fsync|fdatasync|sync)$"))
