; id: C005
; title: Column-major traversal of a row-major array
; level: 4
; severity: medium
; status: requires_profiling
; metric: l1_miss_rate
; when: loop-header-has /\([[:space:]]*([[:alpha:]_]+[[:space:]]+)?{@first}[[:space:]]*=/
; rationale: C stores a[i][j] row by row; an inner loop that varies the first index jumps a whole row per step, so every access misses the cache line the previous one loaded.
; fix: swap the loops so the inner loop varies the last index (a[i][j] with j innermost), or transpose the data
; quiet: traversals whose inner subscript is the outer loop's variable (row-major order); subscripts that are not plain loop variables
; bad:
;| double sum(double a[512][512])
;| {
;| 	double s = 0;
;| 	for (int col = 0; col < 512; col++)
;| 		for (int row = 0; row < 512; row++)
;| 			s += a[row][col];
;| 	return s;
;| }
; good:
;| double sum(double a[512][512])
;| {
;| 	double s = 0;
;| 	for (int row = 0; row < 512; row++)
;| 		for (int col = 0; col < 512; col++)
;| 			s += a[row][col];
;| 	return s;
;| }
((subscript_expression argument: (subscript_expression argument: (identifier) index: (identifier) @first) index: (identifier) @second) @finding
 (#not-eq? @first @second))
