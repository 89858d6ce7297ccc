; id: PY021
; title: torch.load inside a loop
; level: 3
; severity: medium
; needs: torch
; status: requires_profiling
; when: in-loop, loop-lacks /(for|as|,)[[:space:]]+{@arg}[^[:alnum:]_]|{@arg}[[:space:]]*=[^=]/
; rationale: torch.load reads and unpickles a whole file; inside a loop the same checkpoint or shard is deserialized again on every iteration.
; fix: load once before the loop (or cache what was loaded by path)
; quiet: loading a different file each iteration (the path is the loop variable or set in the loop)
; bad:
;| import torch
;| def score(batches, path):
;|     out = []
;|     for b in batches:
;|         weights = torch.load(path)
;|         out.append(b @ weights)
;|     return out
; good:
;| import torch
;| def score(batches, path):
;|     weights = torch.load(path)
;|     return [b @ weights for b in batches]
((call function: (attribute object: (identifier) @t attribute: (identifier) @f)
       arguments: (argument_list . [(string) (identifier) (attribute)] @arg)) @finding
 (#torch? @t) (#eq? @f "load"))
