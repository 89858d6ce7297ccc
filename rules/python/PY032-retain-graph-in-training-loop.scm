; id: PY032
; title: backward(retain_graph=True) inside a training loop
; level: 4
; severity: medium
; status: statically_confirmed
; when: in-training-loop, loop-lacks /backward[[:space:]]*[(].*backward[[:space:]]*[(]/
; rationale: retain_graph=True keeps every saved activation of the graph after backward; in a loop that is usually a workaround that holds memory per step and hides a bug.
; fix: compute the losses first and call backward once on their sum, or detach what is reused across steps
; quiet: a loop with a second backward (a GAN's discriminator and generator losses share the graph the first keeps: the flag is needed); retain_graph=True outside a training loop; retain_graph=False
; bad:
;| def train(model, loader, opt):
;|     for x, y in loader:
;|         loss = model(x, y)
;|         loss.backward(retain_graph=True)
;|         opt.step()
; good:
;| def train(model, loader, opt):
;|     for x, y in loader:
;|         loss = model(x, y)
;|         loss.backward()
;|         opt.step()
((call function: (attribute attribute: (identifier) @m) arguments: (argument_list (keyword_argument name: (identifier) @k value: (true)))) @finding
 (#eq? @m "backward") (#eq? @k "retain_graph"))
