; id: PY004
; title: Array grown by concatenation in a loop (torch.cat, np.append, np.concatenate)
; level: 2
; severity: medium
; status: statically_confirmed
; advisory: on real code (tests/scan-real) 1 of 11 findings was real: most growth loops append to a Python list and concatenate once, or are dwarfed by the model call
; metric: complexity_exponent
; when: in-loop, loop-lacks /(model|net|decoder|encoder|forward)[A-Za-z0-9_]*[[:space:]]*\(/
; rationale: torch.cat, np.append, np.concatenate and np.vstack allocate a new array and copy both inputs: growing an array this way copies O(n^2) elements and allocates n times.
; fix: append the pieces to a Python list and concatenate once after the loop (torch.cat(parts) / np.concatenate(parts)), or preallocate and fill
; quiet: growth that appends to a Python list and concatenates once; loops that also run a model (the forward dwarfs the copy)
; bad:
;| import numpy as np
;| def collect(batches):
;|     acc = np.empty((0, 4))
;|     for b in batches:
;|         acc = np.concatenate([acc, b])
;|     return acc
; good:
;| import numpy as np
;| def collect(batches):
;|     parts = list(batches)
;|     return np.concatenate(parts)
;| import torch
;| def generate(model, ids, steps):
;|     for _ in range(steps):
;|         logits = model(ids)
;|         ids = torch.cat([ids, logits.argmax(-1, keepdim=True)], dim=-1)
;|     return ids
((assignment left: (identifier) @acc
   right: (call function: (attribute object: (identifier) @mod attribute: (identifier) @fn)
                arguments: (argument_list . [(list . (identifier) @first) (tuple . (identifier) @first) (identifier) @first]))) @finding
 (#eq? @acc @first)
 (#match? @mod "^(torch|np|numpy|pd|pandas)$")
 (#match? @fn "^(cat|concat|concatenate|append|vstack|hstack|stack|row_stack)$"))
