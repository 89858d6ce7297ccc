; id: PY004
; title: Array or list regrown by concatenation in a loop (torch.cat, np.append, list + [...])
; level: 2
; severity: medium
; status: statically_confirmed
; metric: complexity_exponent
; when: in-loop, only-grown @acc, loop-not-small
; rationale: torch.cat, np.append, np.concatenate, np.vstack and list + [...] build a new array or list and copy both inputs: a result regrown this way on every iteration copies O(n^2) elements and allocates n times.
; fix: append the pieces to a Python list and concatenate once after the loop (torch.cat(parts) / np.concatenate(parts)), list.append / list.extend for lists, or preallocate and fill
; quiet: a sequence the loop also reads (generation's ids = torch.cat([ids, next_id]) feeds ids back to the model, which needs it whole each step); growth that appends to a Python list and concatenates once; loops known to run a few times; (until 2026-12-07 the rule was advisory, its evidence a regular expression over the loop's text: 1 of 11 findings real on tests/scan-real)
; bad:
;| import torch
;| def predict(model, loader):
;|     outputs = torch.empty(0)
;|     for x, _ in loader:
;|         outputs = torch.cat([outputs, model(x)])
;|     return outputs
; good:
;| import torch
;| def predict(model, loader):
;|     parts = [model(x) for x, _ in loader]
;|     return torch.cat(parts)
;| import torch
;| def generate(model, ids, steps):
;|     for _ in range(steps):
;|         logits = model(ids)
;|         ids = torch.cat([ids, logits.argmax(-1, keepdim=True)], dim=-1)
;|     return ids
;| def pairs(a, b):
;|     out = []
;|     for x in (a, b):
;|         out = out + [x]
;|     return out
((assignment left: (identifier) @acc
   right: (call function: (attribute object: (identifier) @mod attribute: (identifier) @fn)
                arguments: (argument_list . [(list . (identifier) @first) (tuple . (identifier) @first) (identifier) @first]))) @finding
 (#eq? @acc @first)
 (#match? @mod "^(torch|np|numpy|pd|pandas)$")
 (#match? @fn "^(cat|concat|concatenate|append|vstack|hstack|stack|row_stack)$"))
((assignment left: (identifier) @acc
   right: (binary_operator left: (identifier) @first operator: "+" right: [(list) (list_comprehension)])) @finding
 (#eq? @acc @first))
