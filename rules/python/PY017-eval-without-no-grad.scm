; id: PY017
; title: Evaluation without torch.no_grad() or torch.inference_mode()
; level: 4
; severity: medium
; status: statically_confirmed
; advisory: on real code (tests/scan-real) none of 11 findings was a real cost: eval() before quantization, tracing or export, where no forward pass follows
; when: not-in-no-grad, function-lacks /no_grad|inference_mode|set_grad_enabled/
; rationale: model.eval() changes layers' behaviour but does not stop autograd: every forward pass still records a graph and keeps activations, costing memory and time.
; fix: wrap evaluation in with torch.inference_mode(): (or torch.no_grad()), or decorate the function with @torch.inference_mode()
; quiet: eval() under no_grad/inference_mode (or in a function that uses them)
; bad:
;| def evaluate(model, loader):
;|     model.eval()
;|     return sum(model(x).argmax(1).eq(y).sum() for x, y in loader)
; good:
;| import torch
;| @torch.inference_mode()
;| def evaluate(model, loader):
;|     model.eval()
;|     return sum(model(x).argmax(1).eq(y).sum() for x, y in loader)
((call function: (attribute attribute: (identifier) @m) arguments: (argument_list)) @finding (#eq? @m "eval"))
