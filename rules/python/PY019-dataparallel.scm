; id: PY019
; title: nn.DataParallel instead of DistributedDataParallel
; level: 5
; severity: medium
; status: requires_profiling
; rationale: DataParallel runs one Python process that scatters inputs and gathers outputs through GPU 0 on every step; the GIL and that imbalance make it slower than DistributedDataParallel even on one machine.
; fix: use torch.nn.parallel.DistributedDataParallel with one process per GPU (torchrun)
; quiet: DistributedDataParallel
; bad:
;| import torch.nn as nn
;| model = nn.DataParallel(model)
; good:
;| from torch.nn.parallel import DistributedDataParallel as DDP
;| model = DDP(model, device_ids=[local_rank])
((call function: [(identifier) @f (attribute attribute: (identifier) @f)]) @finding (#eq? @f "DataParallel"))
