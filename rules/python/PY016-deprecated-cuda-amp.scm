; id: PY016
; title: Deprecated torch.cuda.amp API
; level: 7
; severity: low
; needs: torch
; status: statically_confirmed
; advisory: on real code (tests/scan-real) none of 5 findings was a real cost: torch.cuda.amp is not deprecated in the torch most users have (1.13), and the name has no runtime cost
; rationale: torch.cuda.amp.autocast and GradScaler are deprecated since PyTorch 2.4 in favour of the device-generic torch.amp API; they warn on every use and will be removed.
; fix: use torch.amp.autocast('cuda', ...) and torch.amp.GradScaler('cuda')
; quiet: torch.amp; anything outside torch.cuda.amp
; bad:
;| import torch
;| scaler = torch.cuda.amp.GradScaler()
; good:
;| import torch
;| scaler = torch.amp.GradScaler("cuda")
((attribute object: (attribute object: (identifier) @t attribute: (identifier) @c) attribute: (identifier) @a) @finding
 (#torch? @t) (#eq? @c "cuda") (#eq? @a "amp"))
((import_from_statement module_name: (dotted_name) @m) @finding (#eq? @m "torch.cuda.amp"))
