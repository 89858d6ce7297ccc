; id: PY042
; title: EMA of a model's weights updated one parameter at a time in a Python loop
; level: 4
; severity: low
; status: statically_confirmed
; when: blend-update, not-demo-main, function-lacks /_foreach_/
; rationale: An exponential moving average of a model's weights written as a Python loop over its parameters launches two to four small kernels per tensor, with out-of-place temporaries (decay * e + (1 - decay) * p), after every optimizer step: for the hundreds of tensors of a diffusion U-Net or a ViT that is a thousand launches a step.
; fix: update every tensor in one call: torch._foreach_mul_(ema, decay) then torch._foreach_add_(ema, params, alpha=1 - decay) (torch._foreach_lerp_(ema, params, 1 - decay) on PyTorch 2), with the two parameter lists built once; at least in place, e.lerp_(p, 1 - decay), without temporaries
; quiet: a reinforcement-learning target network's soft update (a loop over a target's parameters outside a function named for an EMA: a few tensors of a small network; labelled negligible 25 times of 25 on held-out 11-13); a plain copy of one model into the other (e.data.copy_(p.data)) or a sum (g.add_(p.grad)); a loop that writes tensors from only one of its variables, or zips three or more lists (an optimizer's step); a loop over anything but parameters, buffers or a state_dict; the fallback of a function that also has a torch._foreach_ path
; bad:
;| import torch
;| def update_ema(ema_model, model, decay=0.999):
;|     for e, p in zip(ema_model.parameters(), model.parameters()):
;|         e.data.copy_(decay * e.data + (1 - decay) * p.data)
; good:
;| import torch
;| def update_ema(ema_model, model, decay=0.999):
;|     e = [x.data for x in ema_model.parameters()]
;|     torch._foreach_mul_(e, decay)
;|     torch._foreach_add_(e, [x.data for x in model.parameters()], alpha=1 - decay)
((for_statement left: (_) right: (_) @it) @finding
 (#match? @it "param|state_dict|buffers"))
