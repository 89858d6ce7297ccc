; id: PY027
; title: torch.cuda.synchronize() inside a training loop
; level: 5
; severity: medium
; needs: torch
; status: statically_confirmed
; when: in-training-loop, not-periodic, loop-lacks /time\.(time|perf_counter|monotonic)[A-Za-z_]*\(|elapsed_time\(/
; rationale: An explicit synchronize makes the CPU wait for all queued GPU work every step, removing the overlap between Python and the GPU.
; fix: remove it, or keep it only around timing code that runs every N steps
; quiet: synchronize() under a periodic branch, or in a loop that times itself (time.perf_counter, elapsed_time): a timing needs it
; bad:
;| import torch
;| def train(model, loader, opt):
;|     for x, y in loader:
;|         loss = model(x, y)
;|         loss.backward()
;|         opt.step()
;|         torch.cuda.synchronize()
; good:
;| import torch
;| def train(model, loader, opt, args):
;|     for step, (x, y) in enumerate(loader):
;|         loss = model(x, y)
;|         loss.backward()
;|         opt.step()
;|         if step % args.print_freq == 0:
;|             torch.cuda.synchronize()
((call function: (attribute object: (attribute object: (identifier) @t attribute: (identifier) @c) attribute: (identifier) @s)) @finding
 (#torch? @t) (#eq? @c "cuda") (#eq? @s "synchronize"))
