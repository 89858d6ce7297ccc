; id: C011
; title: fread()/fwrite() of one byte per call in a loop
; level: 3
; severity: medium
; status: requires_profiling
; when: in-loop, loop-not-small
; rationale: Each stdio call has locking and bookkeeping overhead; moving one byte per call makes that overhead the whole cost.
; fix: read or write blocks (fread(buf, 1, sizeof buf, f)) and loop over the buffer, or use getc_unlocked
; quiet: fread()/fwrite() of more than one byte per call; loops known to run few times
; bad:
;| #include <stdio.h>
;| long count_newlines(FILE *f)
;| {
;| 	long n = 0;
;| 	char c;
;| 	while (fread(&c, 1, 1, f) == 1)
;| 		n += c == '\n';
;| 	return n;
;| }
; good:
;| #include <stdio.h>
;| long count_newlines(FILE *f)
;| {
;| 	long n = 0;
;| 	char buf[65536];
;| 	size_t got;
;| 	while ((got = fread(buf, 1, sizeof buf, f)) > 0)
;| 		for (size_t i = 0; i < got; i++)
;| 			n += buf[i] == '\n';
;| 	return n;
;| }
((call_expression function: (identifier) @f arguments: (argument_list (_) (number_literal) @a (number_literal) @b (_))) @finding
 (#match? @f "^(fread|fwrite)$") (#eq? @a "1") (#eq? @b "1"))
