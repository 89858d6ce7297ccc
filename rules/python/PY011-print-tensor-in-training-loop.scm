; id: PY011
; title: print() of a tensor inside a training loop
; level: 5
; severity: medium
; status: statically_confirmed
; when: in-training-loop, not-periodic, unconditional
; rationale: Printing a CUDA tensor copies it to the host and synchronizes with the GPU on every step, and terminal output is slow.
; fix: log every N steps, or accumulate on the device and print once per epoch
; quiet: printing under a periodic or any other branch (a NaN guard before exiting); prints outside training loops
; bad:
;| def train(model, loader, opt, loss_fn):
;|     for x, y in loader:
;|         loss = loss_fn(model(x), y)
;|         loss.backward()
;|         opt.step()
;|         print(loss)
; good:
;| def train(model, loader, opt, loss_fn):
;|     for step, (x, y) in enumerate(loader):
;|         loss = loss_fn(model(x), y)
;|         loss.backward()
;|         opt.step()
;|         if step % 100 == 0:
;|             print(loss)
((call function: (identifier) @p arguments: (argument_list (identifier) @t)) @finding
 (#eq? @p "print") (#match? @t "(loss|logits|output|outputs|pred|preds|grad|tensor)"))
