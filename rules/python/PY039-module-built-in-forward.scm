; id: PY039
; title: nn layer constructed inside forward()
; level: 4
; severity: medium
; status: statically_confirmed
; when: in-def /^forward$/
; lower: node-lacks /^nn\.(Linear|Bilinear|LazyLinear|Conv[123]d|ConvTranspose[123]d|LayerNorm|BatchNorm[123]d|GroupNorm|InstanceNorm[123]d|Embedding|EmbeddingBag|LSTM|GRU|RNN|LSTMCell|GRUCell|MultiheadAttention|Transformer[A-Za-z]*|PReLU)[[:space:]]*\(/
; lower-why: the layer holds no weights: building it every call costs the construction (microseconds), not a new set of untrained parameters
; rationale: A layer built in forward() is a new module on every call: its weights are allocated and randomly initialised each time (so they are never trained, and never moved with the model), and even a weightless one is constructed again for every batch.
; fix: build it once in __init__ (self.proj = nn.Linear(...)) and call self.proj(x) in forward(); for a weightless one use the functional form (F.max_pool2d, F.dropout, F.layer_norm)
; quiet: layers built in __init__ or any other method; torch.nn.functional calls
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
 (#match? @layer "^(Linear|Bilinear|LazyLinear|Conv[123]d|ConvTranspose[123]d|LayerNorm|BatchNorm[123]d|GroupNorm|InstanceNorm[123]d|Embedding|EmbeddingBag|LSTM|GRU|RNN|LSTMCell|GRUCell|MultiheadAttention|Transformer[A-Za-z]*|PReLU|Dropout[123]?d?|MaxPool[123]d|AvgPool[123]d|AdaptiveAvgPool[123]d|AdaptiveMaxPool[123]d|Softmax|LogSoftmax|ReLU|GELU|SiLU|Tanh|Sigmoid|Upsample|Flatten|Sequential|ModuleList)$"))
