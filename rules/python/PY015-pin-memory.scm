; id: PY015
; title: DataLoader without pin_memory=True where CUDA is used
; level: 3
; severity: low
; status: requires_profiling
; advisory: on held-out real code (tests/scan-real, sets 3 and 4) none of 61 findings was a real cost: batches of a few megabytes copied synchronously, where pinning saves a fraction of a millisecond next to the step; PY037 reports the case that is always real, non_blocking copies from pageable memory
; when: call-args-lack /pin_memory["']?[[:space:]]*[=:][[:space:]]*[^F[:space:]]/, uses-cuda, large-batches, blocking-copies, not-eval-loader-beside-pinned, node-lacks /batch_size[[:space:]]*=[[:space:]]*1[^0-9.]/, file-lacks /(^|[[:space:]])(import|from)[[:space:]]+(unittest|pytest)[^[:alnum:]_]/, not-demo-main
; rationale: Copies from pageable host memory to the GPU go through a staging buffer and cannot overlap with compute; pinned memory allows asynchronous, faster transfers.
; fix: DataLoader(..., pin_memory=True) and tensor.to(device, non_blocking=True)
; quiet: batches the code does not show to be large: pinning saves microseconds on MNIST's or CIFAR's megabyte (reported where items are images read from files, resized to 128 pixels or more, a file that copies with non_blocking=True is PY037's); an evaluation loader (bound to a name for a test, val or eval split) in a file that pins another loader: the author pins where the step waits for the copies; pin_memory set to anything but False, also through a `**kwargs` dict the function builds; files that never mention cuda; batch_size=1 loaders; unit tests; a loader in the `if __name__ == "__main__":` block of a file that neither runs a backward pass nor names an optimizer (a dataset module's demo)
; bad:
;| import torch
;| from torch.utils.data import DataLoader
;| from torchvision import datasets
;| device = torch.device("cuda")
;| dataset = datasets.ImageFolder(traindir, transform=train_transform)
;| loader = DataLoader(dataset, batch_size=64, num_workers=8)
; good:
;| import torch
;| from torch.utils.data import DataLoader
;| device = torch.device("cuda")
;| loader = DataLoader(dataset, batch_size=64, num_workers=8, pin_memory=True)
;| kwargs = dict(num_workers=4, pin_memory=True)
;| val_loader = DataLoader(val_set, batch_size=64, **kwargs)
((call function: [(identifier) @f (attribute attribute: (identifier) @f)]) @finding
 (#eq? @f "DataLoader"))
