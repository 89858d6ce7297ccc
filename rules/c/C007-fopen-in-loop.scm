; id: C007
; title: fopen() on every iteration
; level: 3
; severity: medium
; status: requires_profiling
; when: in-loop, loop-not-small, loop-lacks /{@path}[[:space:]]*=[^=]|(printf|strcpy|strcat|strncpy|memcpy)[[:space:]]*\([[:space:]]*{@path}[[:space:]]*,/
; rationale: Opening a file per iteration costs path lookup, an open and a close (with a flush) each time, and defeats stdio buffering.
; fix: open the file once before the loop and keep the FILE * for the loop
; quiet: opening a different file each iteration (a path the loop sets or formats: what such a loop is for); loops known to run few times
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
;| void split(const int *v, int n, int parts)
;| {
;| 	char name[64];
;| 	for (int p = 0; p < parts; p++) {
;| 		snprintf(name, sizeof name, "part%d.log", p);
;| 		FILE *g = fopen(name, "w");
;| 		fprintf(g, "%d\n", v[p % n]);
;| 		fclose(g);
;| 	}
;| }
;| int main(int argc, char **argv)
;| {
;| 	for (int i = 1; i < argc; i++) {
;| 		FILE *h = fopen(argv[i], "r");
;| 		if (h)
;| 			fclose(h);
;| 	}
;| 	return 0;
;| }
;; the same path every time: a literal, or a name the loop does not set
;; (opening each of many files in turn is what such a loop is for)
((call_expression function: (identifier) @f arguments: (argument_list . [(string_literal) (identifier)] @path)) @finding
 (#match? @f "^(fopen|open|creat)$"))
