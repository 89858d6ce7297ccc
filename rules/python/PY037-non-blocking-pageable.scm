; id: PY037
; title: non_blocking copies from a DataLoader without pin_memory=True
; level: 4
; severity: medium
; status: statically_confirmed
; when: call-args-lack /pin_memory["']?[[:space:]]*[=:][[:space:]]*[^F[:space:]]/, uses-cuda, non-blocking-copies, not-eval-loader-beside-pinned, node-lacks /batch_size[[:space:]]*=[[:space:]]*1[^0-9.]/, file-lacks /(^|[[:space:]])(import|from)[[:space:]]+(unittest|pytest)[^[:alnum:]_]/, not-demo-main
; rationale: tensor.to(device, non_blocking=True) overlaps the copy with compute only from pinned (page-locked) memory; from a loader's pageable batches the copy is staged and synchronous, so the overlap the code asks for never happens.
; fix: DataLoader(..., pin_memory=True) (with workers, a background thread pins each batch)
; quiet: pin_memory set to anything but False, also through a `**kwargs` dict the function builds; files that never copy with non_blocking=True or never mention cuda (PY015, advisory, covers large batches copied synchronously); an evaluation loader in a file that pins another loader; batch_size=1 loaders; unit tests; a loader in the `if __name__ == "__main__":` block of a file that neither runs a backward pass nor names an optimizer (a dataset module's demo)
; bad:
;| import torch
;| from torch.utils.data import DataLoader
;| def train(model, dataset, opt):
;|     loader = DataLoader(dataset, batch_size=256, num_workers=8)
;|     for x, y in loader:
;|         loss = model(x.cuda(non_blocking=True), y.cuda(non_blocking=True))
;|         loss.backward()
;|         opt.step()
; good:
;| import torch
;| from torch.utils.data import DataLoader
;| def train(model, dataset, opt):
;|     loader = DataLoader(dataset, batch_size=256, num_workers=8, pin_memory=True)
;|     for x, y in loader:
;|         loss = model(x.cuda(non_blocking=True), y.cuda(non_blocking=True))
;|         loss.backward()
;|         opt.step()
((call function: [(identifier) @f (attribute attribute: (identifier) @f)]) @finding
 (#eq? @f "DataLoader"))
