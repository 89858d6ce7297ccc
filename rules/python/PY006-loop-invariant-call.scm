; id: PY006
; title: Call with loop-invariant (constant) arguments inside a loop
; level: 8
; severity: low
; status: statically_confirmed
; advisory: on real code (tests/scan-real) none of 20 findings was a real cost: calls such as per-parameter state creation must run per iteration
; when: in-loop
; rationale: re.compile, json.loads, np.array and torch.tensor with only constant arguments build the same object on every iteration.
; fix: hoist the call above the loop and reuse its result
; quiet: calls whose arguments are not all literals (they may change per iteration)
; bad:
;| import re
;| def count(lines):
;|     n = 0
;|     for line in lines:
;|         if re.compile(r"ERROR [0-9]+").search(line):
;|             n += 1
;|     return n
; good:
;| import re
;| ERROR = re.compile(r"ERROR [0-9]+")
;| def count(lines):
;|     return sum(1 for line in lines if ERROR.search(line))
((call function: (attribute object: (identifier) @mod attribute: (identifier) @fn) arguments: (argument_list) @args) @finding
 (#match? @mod "^(re|json|np|numpy|torch)$")
 (#match? @fn "^(compile|loads|array|tensor|arange|linspace|eye)$")
 (#match? @args "^[(]([rRbB]?(\"[^\"]*\"|'[^']*')|[-+0-9.eE, ]|\\[|\\]|True|False|None)*[)]$"))
