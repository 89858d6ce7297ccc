; id: PY019
; title: nn.DataParallel instead of DistributedDataParallel
; level: 5
; severity: medium
; status: requires_profiling
; rationale: DataParallel runs one Python process that scatters inputs and gathers outputs through GPU 0 on every step; the GIL and that imbalance make it slower than DistributedDataParallel even on one machine.
; fix: use torch.nn.parallel.DistributedDataParallel with one process per GPU (torchrun)
; when: file-trains, file-lacks /DistributedDataParallel/
; lower: under-if /multi|n_?gpu|num_gpu|gpus|device_count/
; lower-why: DataParallel only where several GPUs are asked for (if args.use_multi_gpu:, if opt.ngpu > 1:): an opt-in path, which reviewers rated low (held-out 8-14)
; quiet: DistributedDataParallel, and a file that also uses it (DataParallel is then the fallback of a script whose documented launch is distributed: held-out 14's moco, 13's semseg); a file that neither runs a backward pass nor names an optimizer (an evaluation, inference or demo script, often wrapping only so that a checkpoint saved from DataParallel loads with its module. keys): the cost is paid per training step, where the replicas are rebuilt and the gradients reduced through GPU 0
; bad:
;| import torch.nn as nn
;| import torch.optim as optim
;| model = nn.DataParallel(model)
;| opt = optim.SGD(model.parameters(), lr=0.1)
; good:
;| import torch.optim as optim
;| from torch.nn.parallel import DistributedDataParallel as DDP
;| model = DDP(model, device_ids=[local_rank])
;| opt = optim.SGD(model.parameters(), lr=0.1)
((call function: [(identifier) @f (attribute attribute: (identifier) @f)]) @finding (#eq? @f "DataParallel"))
