; id: PY013
; title: Loss tensor accumulated across steps (keeps every graph alive)
; level: 4
; severity: critical
; status: statically_confirmed
; metric: memory_growth
; when: in-training-loop
; rationale: total += loss adds the tensor, not its value: the sum references every step's autograd graph, so memory grows with every step until the process runs out of memory.
; fix: accumulate a detached value: total += loss.detach() (or loss.item() once per logging interval)
; quiet: accumulating loss.item() or a detached value; += outside a training loop
; bad:
;| def train(model, loader, opt, loss_fn):
;|     total = 0
;|     for x, y in loader:
;|         loss = loss_fn(model(x), y)
;|         opt.zero_grad()
;|         loss.backward()
;|         opt.step()
;|         total += loss
;|     return total
; good:
;| def train(model, loader, opt, loss_fn):
;|     total = 0
;|     for x, y in loader:
;|         loss = loss_fn(model(x), y)
;|         opt.zero_grad()
;|         loss.backward()
;|         opt.step()
;|         total += loss.detach()
;|     return total
((augmented_assignment operator: "+=" right: (identifier) @r) @finding (#match? @r "(^|_)loss(es)?$"))
