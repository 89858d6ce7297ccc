; id: C001
; title: strlen() in a loop condition
; level: 1
; severity: high
; status: statically_confirmed
; metric: complexity_exponent
; rationale: The condition is evaluated on every iteration and strlen walks the whole string each time: a loop over a string of length n costs O(n^2). Compilers hoist it only when they can prove the string is not modified.
; fix: compute the length once before the loop (size_t n = strlen(s);) or loop until s[i] == '\0'
; quiet: strlen() outside a loop condition, or in the body (it may be needed there); a length kept in a variable
; bad:
;| #include <ctype.h>
;| #include <string.h>
;| void upper(char *s)
;| {
;| 	for (size_t i = 0; i < strlen(s); i++)
;| 		s[i] = (char)toupper((unsigned char)s[i]);
;| }
; good:
;| #include <ctype.h>
;| #include <string.h>
;| void upper(char *s)
;| {
;| 	size_t n = strlen(s);
;| 	for (size_t i = 0; i < n; i++)
;| 		s[i] = (char)toupper((unsigned char)s[i]);
;| }
(for_statement condition: (binary_expression right: (call_expression function: (identifier) @f) @finding) (#eq? @f "strlen"))
(for_statement condition: (binary_expression left: (call_expression function: (identifier) @f) @finding) (#eq? @f "strlen"))
(while_statement condition: (parenthesized_expression (binary_expression right: (call_expression function: (identifier) @f) @finding)) (#eq? @f "strlen"))
(while_statement condition: (parenthesized_expression (binary_expression left: (call_expression function: (identifier) @f) @finding)) (#eq? @f "strlen"))
