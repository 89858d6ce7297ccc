; id: C002
; title: strcat() onto the same buffer in a loop
; level: 1
; severity: high
; status: statically_confirmed
; metric: complexity_exponent
; when: in-loop, loop-not-small, loop-lacks /(^|[^[:alnum:]_])(strcpy|strncpy|sprintf|snprintf|memset)[[:space:]]*\(/
; rationale: strcat finds the end of the destination by scanning it from the start every call: appending n pieces costs O(n^2) in the final length.
; fix: keep a pointer (or offset) to the end and memcpy each piece there, or use a string builder with a length
; quiet: strcat() in a loop that also resets the buffer (strcpy, sprintf, memset: the string does not grow across iterations); loops known to run few times (argc, a literal bound under 100)
; bad:
;| #include <string.h>
;| void join(char *out, char **parts, int n)
;| {
;| 	out[0] = '\0';
;| 	for (int i = 0; i < n; i++)
;| 		strcat(out, parts[i]);
;| }
; good:
;| #include <string.h>
;| void join(char *out, char **parts, int n)
;| {
;| 	char *end = out;
;| 	for (int i = 0; i < n; i++)
;| 		end = stpcpy(end, parts[i]);
;| }
((call_expression function: (identifier) @f) @finding (#match? @f "^(strcat|strncat|wcscat)$"))
