; id: PY043
; title: Host sync for every parameter (a norm summed with .item() one tensor at a time)
; level: 5
; severity: medium
; needs: param
; status: statically_confirmed
; when: loop-header-has /param/, accumulated, not-periodic, not-demo-main
; rationale: A gradient or weight norm summed on the host, total += p.grad.norm().item() ** 2 for each parameter, waits for the GPU once per tensor: a model with hundreds of parameter tensors pays hundreds of synchronizations every time the norm is taken, usually every step for clipping or logging.
; fix: compute the norm on the device and read it once: torch.nn.utils.clip_grad_norm_(params, max_norm) returns it (max_norm=float('inf') only measures), or torch.norm(torch.stack([p.grad.norm() for p in params])).item()
; quiet: a loop over anything but parameters; a value not summed or appended (a print per parameter at the end of training); under a periodic branch (until 2026-12-08 also a file that never names a device: guided-diffusion's and consistency_models' fp16_util.py, whose _compute_norms reads two .item() per master parameter on every step, name none; the trainer that calls it does)
; bad:
;| import torch
;| def grad_norm(parameters, device):
;|     total = 0.0
;|     for p in parameters:
;|         total += p.grad.norm().item() ** 2
;|     return total ** 0.5
; good:
;| import torch
;| def grad_norm(parameters, device):
;|     norms = [p.grad.norm() for p in parameters]
;|     return torch.norm(torch.stack(norms)).item()
((call function: (attribute attribute: (identifier) @m)) @finding
 (#match? @m "^(item|tolist)$"))
