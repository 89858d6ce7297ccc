; id: PY010
; title: .item()/.cpu()/.numpy()/.tolist()/float(loss) inside a training loop
; level: 5
; severity: low
; status: statically_confirmed
; group: loop
; when: in-training-step, uses-device, not-host-made @recv, not-env-input, not-waiting
; rationale: Each call (and PyTorch 0.3's loss.data[0], which returned the number, and float(loss)) copies a tensor to the host and makes the CPU wait for every queued GPU kernel: a synchronization per step that starves the GPU. A helper that does it on every step counts the same: one the step loop calls in the same file, or a function of a module (a method of a class) the training script imports and calls per step (a metric's accuracy(), a model's parse_batch() or get_step()), reported at the helper with where the step calls it.
; fix: keep values on the device (accumulate tensors with .detach()) and read them once per epoch or every N steps
; quiet: a step that waits for the GPU on purpose every time, in a statement of its own body and not under a branch: an explicit torch.cuda.synchronize() (for timing: the read adds no wait of its own) or a divergence check, if not math.isfinite(loss_value) (it needs the value); reads of a tensor the code made on the host (torch.ones(n).cpu(), torch.Tensor([a, b]).cpu(), or a name bound to one in the function: nothing is copied or waited for); syncs outside the training loop (no backward() in the loop), once per epoch (in an epoch loop before or after its step loop; a loop around nested epochs of minibatches, PPO's iteration, counts as one), a value an environment's step takes (envs.step(action.cpu().numpy()), or a name bound to one that a step in the loop is given: a CPU environment needs the policy's action), a loader's batch the code has not copied (sizes[0].item()), under a periodic branch (`if step % log_every == 0:`), in a file that never names a device, or in a loop's once-run part; several syncs in one step are one finding
; bad:
;| def train(model, loader, opt, loss_fn, device):
;|     for x, y in loader:
;|         loss = loss_fn(model(x.to(device)), y.to(device))
;|         opt.zero_grad()
;|         loss.backward()
;|         opt.step()
;|         print_every = loss.item()
; good:
;| def train(model, loader, opt, loss_fn, device, log_every=100):
;|     for step, (x, y) in enumerate(loader):
;|         loss = loss_fn(model(x.to(device)), y.to(device))
;|         opt.zero_grad()
;|         loss.backward()
;|         opt.step()
;|         if step % log_every == 0:
;|             print(step, loss.item())
((call function: (attribute object: (_) @recv attribute: (identifier) @m) arguments: (argument_list)) @finding
 (#match? @m "^(item|cpu|numpy|tolist)$"))
((subscript value: (attribute attribute: (identifier) @d) subscript: (integer) @i) @finding
 (#eq? @d "data") (#eq? @i "0"))
((call function: (identifier) @f arguments: (argument_list . (identifier) @recv .)) @finding
 (#match? @f "^(float|int)$") (#match? @recv "loss"))
