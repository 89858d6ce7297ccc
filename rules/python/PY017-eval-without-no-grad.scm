; id: PY017
; title: Evaluation without torch.no_grad() or torch.inference_mode()
; level: 4
; severity: low
; status: statically_confirmed
; group: loop
; needs: .eval()
; when: evaluated @model, in-eval-loop, not-in-no-grad, function-lacks /no_grad|inference_mode|set_grad_enabled|volatile/
; rationale: model.eval() changes dropout and batch norm but not autograd: each evaluation batch still records the graph and keeps every activation it would need for a backward pass that never comes, costing memory (smaller batches fit) and time on every batch of every evaluation.
; fix: run the loop under with torch.inference_mode(): (or torch.no_grad()), or decorate the function with @torch.no_grad()
; quiet: (until 2026-12-07 this rule reported every model.eval() outside no_grad and was advisory: none of its 11 findings on real code was a real cost, eval() before quantization, tracing or export) a loop under no_grad/inference_mode (or in a function that names them, or PyTorch 0.3's volatile=True); a model not put in eval() mode in the function before the loop (eval() before export or tracing runs no batches); loops that call backward(); loops that do not iterate a loader or an evaluation split
; bad:
;| def test(net, test_loader):
;|     net.eval()
;|     correct = 0
;|     for data, target in test_loader:
;|         output = net(data.cuda())
;|         correct += (output.argmax(1) == target.cuda()).sum()
;|     return correct
; good:
;| import torch
;| @torch.no_grad()
;| def test(net, test_loader):
;|     net.eval()
;|     correct = 0
;|     for data, target in test_loader:
;|         output = net(data.cuda())
;|         correct += (output.argmax(1) == target.cuda()).sum()
;|     return correct
((call function: [(identifier) (attribute)] @model) @finding)
