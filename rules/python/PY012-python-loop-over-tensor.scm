; id: PY012
; title: Python loop over the elements of a tensor or array
; level: 6
; severity: medium
; status: requires_profiling
; advisory: on real code (tests/scan-real) 8 of 67 findings were real: most loops run over a few dimensions, targets or a Python list of parameters, or each iteration is itself a vectorized operation
; when: file-has /import (torch|numpy)/, node-has /{@t}\[/
; rationale: Indexing a tensor element by element runs the interpreter (and for tensors a dispatch) per element: orders of magnitude slower than one vectorized operation.
; fix: express the loop as whole-array operations (broadcasting, torch.where, cumsum, indexing with masks)
; quiet: loops over anything but range(len(x)) or range(x.shape[i]) whose body indexes x
; bad:
;| import torch
;| def relu(x):
;|     out = torch.empty_like(x)
;|     for i in range(len(x)):
;|         out[i] = x[i] if x[i] > 0 else 0
;|     return out
; good:
;| import torch
;| def relu(x):
;|     return torch.clamp(x, min=0)
(for_statement right: (call function: (identifier) @r arguments: (argument_list (call function: (identifier) @len arguments: (argument_list (identifier) @t))))
 (#eq? @r "range") (#eq? @len "len")) @finding
(for_statement right: (call function: (identifier) @r arguments: (argument_list (subscript value: (attribute object: (identifier) @t attribute: (identifier) @shape))))
 (#eq? @r "range") (#eq? @shape "shape")) @finding
