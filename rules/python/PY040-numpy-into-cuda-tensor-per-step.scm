; id: PY040
; title: numpy array built every step and wrapped in a CUDA tensor type
; level: 4
; severity: low
; status: statically_confirmed
; when: per-step, file-has /Tensor[[:space:]]*=[[:space:]]*torch\.cuda\.[A-Za-z]*Tensor|torch\.cuda\.[A-Za-z]*Tensor[[:space:]]*\(/
; rationale: Tensor(np.random.normal(...)) where Tensor is torch.cuda.FloatTensor draws the numbers in host memory with numpy and copies them to the GPU from pageable memory on every step, a copy the host waits for; drawn on the device it is one kernel.
; fix: torch.randn(shape, device=device) (or torch.ones/zeros(..., device=device) for a constant, made once where it never changes)
; quiet: a file where the tensor type is not CUDA's (Tensor = torch.FloatTensor only); outside the training step and a module's forward()
; bad:
;| import numpy as np
;| import torch
;| Tensor = torch.cuda.FloatTensor if torch.cuda.is_available() else torch.FloatTensor
;| def train(G, D, loader, opt, latent_dim):
;|     for imgs, _ in loader:
;|         z = Tensor(np.random.normal(0, 1, (imgs.shape[0], latent_dim)))
;|         loss = D(G(z)).mean()
;|         loss.backward()
;|         opt.step()
; good:
;| import numpy as np
;| import torch
;| Tensor = torch.cuda.FloatTensor if torch.cuda.is_available() else torch.FloatTensor
;| def train(G, D, loader, opt, latent_dim, device):
;|     for imgs, _ in loader:
;|         z = torch.randn(imgs.shape[0], latent_dim, device=device)
;|         loss = D(G(z)).mean()
;|         loss.backward()
;|         opt.step()
((call function: [(identifier) @T (attribute attribute: (identifier) @T)] arguments: (argument_list . (call function: (attribute object: (attribute object: (identifier) @np attribute: (identifier) @rnd))))) @finding
 (#match? @T "^(Tensor|FloatTensor|LongTensor|DoubleTensor|IntTensor)$") (#match? @np "^(np|numpy)$") (#eq? @rnd "random"))
((call function: [(identifier) @T (attribute attribute: (identifier) @T)] arguments: (argument_list . (call function: (attribute object: (identifier) @np attribute: (identifier) @npf)))) @finding
 (#match? @T "^(Tensor|FloatTensor|LongTensor|DoubleTensor|IntTensor)$") (#match? @np "^(np|numpy)$")
 (#match? @npf "^(ones|zeros|full|eye|arange|array|triu|tril)$"))
