; id: PY042
; title: EMA or target-network update one parameter at a time in a Python loop
; level: 4
; severity: low
; needs: param
; status: statically_confirmed
; when: blend-update, not-demo-main, function-lacks /_foreach_/
; rationale: An EMA of a model's weights or a Polyak (soft) target-network update written as a Python loop over the parameters launches two to four small kernels per tensor, with out-of-place temporaries (tau * p + (1 - tau) * t), on every step it runs: for a few hundred tensors that is a thousand launches, and for the small networks of reinforcement learning the loop costs more than the arithmetic.
; fix: update every tensor in one call: torch._foreach_mul_(targets, 1 - tau) then torch._foreach_add_(targets, sources, alpha=tau) (torch._foreach_lerp_(targets, sources, tau) on PyTorch 2), with the two parameter lists built once; at least in place, t.lerp_(p, tau), without temporaries
; quiet: a plain copy of one model into the other (t.data.copy_(p.data): a hard update, usually periodic) or a sum (g.add_(p.grad)); a loop that writes tensors from only one of its variables, or zips three or more lists (an optimizer's step); a loop over anything but parameters, buffers or a state_dict; the fallback of a function that also has a torch._foreach_ path
; bad:
;| import torch
;| def soft_update(target, source, tau):
;|     for t, p in zip(target.parameters(), source.parameters()):
;|         t.data.copy_(tau * p.data + (1 - tau) * t.data)
; good:
;| import torch
;| def soft_update(target, source, tau):
;|     t = [x.data for x in target.parameters()]
;|     torch._foreach_mul_(t, 1 - tau)
;|     torch._foreach_add_(t, [x.data for x in source.parameters()], alpha=tau)
((for_statement left: (_) right: (_) @it) @finding
 (#match? @it "param|state_dict|buffers"))
