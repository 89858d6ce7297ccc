; id: PY038
; title: Tensor built on the CPU and copied to the device every step
; level: 4
; severity: low
; needs: torch
; status: statically_confirmed
; when: cpu-factory @o, per-step, uses-device, not-recovery
; rationale: torch.zeros(...).to(device) allocates and fills the tensor in host memory, then copies it from pageable memory, a copy the host waits for, on every step (an RNN's initial state in forward(), a GAN's real/fake labels, noise drawn on the CPU; also through one method, torch.arange(n).unsqueeze(0).to(device), and torch.from_numpy of a numpy mask or constant, torch.LongTensor(range(n)), np.triu(...), np.ones(...); a name bound to such a tensor earlier in the function, y_real = torch.ones(n), then y_real.cuda(); legacy code's Variable(torch.ones(n)).cuda() and torch.zeros(n).type(torch.cuda.FloatTensor); torch under the name the file imports it as, import torch as th; through arithmetic and torch functions, (torch.ones(n) * i).to(x.device), torch.exp(torch.arange(half) * -c); a function given device tensors that copies to their device on every call, .to(timesteps.device), as a sampling loop's step or a timestep embedding does; a table its class built on the host in __init__, self.betas.to(x.device)[t], or copied whole to read a few entries, torch.from_numpy(table).to(t.device)[t]): made on the device it is one kernel, and a constant one can be made once.
; fix: create it where it is used: torch.zeros(..., device=device) (or torch.zeros_like(x)); a tensor that never changes, once before the loop (register_buffer in a module)
; quiet: factories given device=; an empty one (torch.empty(0): nothing is filled or copied); tensors built outside the training step, outside a module's forward() and outside a function that copies them to the device of a tensor it is given (and in an __init__, or one decorated with @torch.no_grad(): a sampling or debugging utility whose callers show no step); in a branch that tests for NaN or infinity (a recovery path); a table registered as a buffer (it moves with the module); torch.tensor() of anything but a literal (a batch's own data must be copied); files that never name a device
; bad:
;| import torch
;| def train(model, loader, opt, device):
;|     for x, y in loader:
;|         labels = torch.ones(x.size(0), 1).to(device)
;|         loss = model(x.to(device), labels)
;|         loss.backward()
;|         opt.step()
; good:
;| import torch
;| def train(model, loader, opt, device):
;|     for x, y in loader:
;|         labels = torch.ones(x.size(0), 1, device=device)
;|         loss = model(x.to(device), labels)
;|         loss.backward()
;|         opt.step()
((call function: (attribute object: (_) @o attribute: (identifier) @m)) @finding
 (#match? @m "^(to|cuda|type)$"))
