; id: PY038
; title: Tensor built on the CPU and copied to the device every step
; level: 4
; severity: low
; status: statically_confirmed
; when: per-step, uses-device, cpu-factory @o, node-lacks /device[[:space:]]*=/, node-lacks /^torch\.[a-z]+\([[:space:]]*0[[:space:]]*[,)]/
; rationale: torch.zeros(...).to(device) allocates and fills the tensor in host memory, then copies it from pageable memory, a copy the host waits for, on every step (an RNN's initial state in forward(), a GAN's real/fake labels, noise drawn on the CPU; also through one method, torch.arange(n).unsqueeze(0).to(device), and torch.from_numpy of a numpy mask or constant, torch.LongTensor(range(n)), np.triu(...), np.ones(...); a name bound to such a tensor earlier in the function, y_real = torch.ones(n), then y_real.cuda(); legacy code's Variable(torch.ones(n)).cuda() and torch.zeros(n).type(torch.cuda.FloatTensor); torch under the name the file imports it as, import torch as th): made on the device it is one kernel, and a constant one can be made once.
; fix: create it where it is used: torch.zeros(..., device=device) (or torch.zeros_like(x)); a tensor that never changes, once before the loop (register_buffer in a module)
; quiet: factories given device=; an empty one (torch.empty(0): nothing is filled or copied); tensors built outside the training step and outside a module's forward(); torch.tensor() of anything but a literal (a batch's own data must be copied); files that never name a device
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
((call function: (attribute object: (call function: (attribute object: (identifier) @mod attribute: (identifier) @fac)) attribute: (identifier) @m)) @finding
 (#torch? @mod)
 (#match? @fac "^(zeros|ones|full|empty|eye|arange|linspace|rand|randn|randint|randperm|normal)$")
 (#match? @m "^(to|cuda)$"))
((call function: (attribute object: (call function: (attribute object: (identifier) @mod attribute: (identifier) @fac) arguments: (argument_list . [(integer) (float) (list) (tuple)])) attribute: (identifier) @m)) @finding
 (#torch? @mod)
 (#match? @fac "^(tensor|as_tensor|Tensor|FloatTensor|LongTensor)$")
 (#match? @m "^(to|cuda)$"))
((call function: (attribute object: (call function: (attribute object: (identifier) @mod attribute: (identifier) @fac) arguments: (argument_list . (call function: (identifier) @rg))) attribute: (identifier) @m)) @finding
 (#torch? @mod)
 (#match? @fac "^(tensor|as_tensor|Tensor|FloatTensor|LongTensor|IntTensor)$") (#eq? @rg "range")
 (#match? @m "^(to|cuda)$"))
((call function: (attribute object: (call function: (attribute object: (identifier) @mod attribute: (identifier) @fac) arguments: (argument_list . (call function: (attribute object: (attribute object: (identifier) @np attribute: (identifier) @rnd)))))  attribute: (identifier) @m)) @finding
 (#torch? @mod) (#eq? @fac "from_numpy") (#match? @np "^(np|numpy)$") (#eq? @rnd "random")
 (#match? @m "^(to|cuda)$"))
((call function: (attribute object: (call function: (attribute object: (call function: (attribute object: (identifier) @mod attribute: (identifier) @fac)) attribute: (identifier) @mid)) attribute: (identifier) @m)) @finding
 (#torch? @mod)
 (#match? @fac "^(zeros|ones|full|empty|eye|arange|linspace|rand|randn|randint|randperm|normal|tril|triu)$")
 (#match? @mid "^(unsqueeze|view|reshape|expand|repeat|float|long|int|bool|half|t|contiguous|tril|triu)$")
 (#match? @m "^(to|cuda)$"))
((call function: (attribute object: (call function: (attribute object: (identifier) @mod attribute: (identifier) @fac) arguments: (argument_list . (call function: (attribute object: (identifier) @np attribute: (identifier) @npf)))) attribute: (identifier) @m)) @finding
 (#torch? @mod) (#eq? @fac "from_numpy") (#match? @np "^(np|numpy)$")
 (#match? @npf "^(triu|tril|ones|zeros|eye|full|arange|ones_like|zeros_like|full_like)$")
 (#match? @m "^(to|cuda)$"))
((call function: (attribute object: (identifier) @o attribute: (identifier) @m)) @finding
 (#match? @m "^(to|cuda)$"))
((call function: (attribute object: (call function: (identifier) @v arguments: (argument_list . (call function: (attribute object: (identifier) @mod attribute: (identifier) @fac)))) attribute: (identifier) @m)) @finding
 (#eq? @v "Variable") (#torch? @mod)
 (#match? @fac "^(zeros|ones|full|empty|eye|arange|linspace|rand|randn|randint|randperm|normal)$")
 (#match? @m "^(to|cuda)$"))
((call function: (attribute object: (call function: (attribute object: (identifier) @mod attribute: (identifier) @fac)) attribute: (identifier) @m) arguments: (argument_list . (attribute) @ty)) @finding
 (#torch? @mod)
 (#match? @fac "^(zeros|ones|full|empty|eye|arange|linspace|rand|randn|randint|randperm|normal)$")
 (#eq? @m "type") (#match? @ty "cuda"))
