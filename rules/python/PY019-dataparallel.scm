; id: PY019
; title: nn.DataParallel instead of DistributedDataParallel
; level: 5
; severity: medium
; status: requires_profiling
; rationale: DataParallel runs one Python process that scatters inputs and gathers outputs through GPU 0 on every step; the GIL and that imbalance make it slower than DistributedDataParallel even on one machine.
; fix: use torch.nn.parallel.DistributedDataParallel with one process per GPU (torchrun)
; lower: file-no-backward
; lower-why: the file runs no backward pass (an evaluation or inference script, or a training script whose step is in another file): DataParallel costs most per training step, where the gradients are reduced through GPU 0
; quiet: DistributedDataParallel
; bad:
;| import torch.nn as nn
;| model = nn.DataParallel(model)
; good:
;| from torch.nn.parallel import DistributedDataParallel as DDP
;| model = DDP(model, device_ids=[local_rank])
((call function: [(identifier) @f (attribute attribute: (identifier) @f)]) @finding (#eq? @f "DataParallel"))
