; id: C007
; title: fopen() on every iteration
; level: 3
; severity: medium
; status: requires_profiling
; when: in-loop
; rationale: Opening a file per iteration costs path lookup, an open and a close (with a flush) each time, and defeats stdio buffering.
; fix: open the file once before the loop and keep the FILE * for the loop
; bad:
;| #include <stdio.h>
;| void log_all(const int *v, int n)
;| {
;| 	for (int i = 0; i < n; i++) {
;| 		FILE *f = fopen("out.log", "a");
;| 		fprintf(f, "%d\n", v[i]);
;| 		fclose(f);
;| 	}
;| }
; good:
;| #include <stdio.h>
;| void log_all(const int *v, int n)
;| {
;| 	FILE *f = fopen("out.log", "a");
;| 	for (int i = 0; i < n; i++)
;| 		fprintf(f, "%d\n", v[i]);
;| 	fclose(f);
;| }
((call_expression function: (identifier) @f) @finding (#match? @f "^(fopen|open|openat|creat)$"))
