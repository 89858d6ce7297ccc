; id: C010
; title: pow() with a small integer exponent in a loop
; level: 7
; severity: low
; status: requires_profiling
; when: in-loop, loop-not-small
; rationale: pow is a general library call (exp/log for arbitrary exponents); x*x is one multiplication that the compiler can vectorize.
; fix: write x * x (or x * x * x); keep pow for non-integer exponents
; quiet: pow() with exponents other than 2 or 3, or computed ones; loops known to run few times
; bad:
;| #include <math.h>
;| double energy(const double *v, int n)
;| {
;| 	double e = 0;
;| 	for (int i = 0; i < n; i++)
;| 		e += pow(v[i], 2);
;| 	return e;
;| }
; good:
;| double energy(const double *v, int n)
;| {
;| 	double e = 0;
;| 	for (int i = 0; i < n; i++)
;| 		e += v[i] * v[i];
;| 	return e;
;| }
((call_expression function: (identifier) @f arguments: (argument_list (_) (number_literal) @e .)) @finding
 (#match? @f "^(pow|powf|powl)$") (#match? @e "^(2|3|2\\.0|3\\.0)$"))
