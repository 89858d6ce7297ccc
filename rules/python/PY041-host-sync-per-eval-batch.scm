; id: PY041
; title: .item() or float(loss) on every batch of an evaluation loop
; level: 5
; severity: low
; status: statically_confirmed
; group: loop
; advisory: an evaluation loop's one scalar read a batch is rarely the cost: on held-out real code (tests/scan-real, sets 6-17) 7 of 32 default findings were real, and 0 of 10 on sets 14-17 after the rule's quietings (infrequent validation of a large model, a read the loop pays anyway); `perfloop scan --profile P` (and `profile --scan`) still reports it where the profile puts 2% of its samples or more on the loop
; when: in-eval-loop, not-periodic, uses-device, not-host-made @recv, no-blocking-copy, loop-lacks /\.cpu\(|\.numpy\(|\.tolist\(|synchronize\(/
; rationale: Each .item() (float(loss) too, and PyTorch 0.3's loss.data[0], which returned the number) copies a value to the host and makes the CPU wait for the GPU to finish every queued kernel, once per evaluation batch, only to add it to a running total: the GPU idles while the host reads it and queues the next batch.
; fix: accumulate on the device (total += loss.detach() * n; correct += (pred == y).sum()) and read the totals once after the loop
; quiet: a loop that waits for the GPU anyway on every batch: a blocking copy of the batch (x.to(device) without non_blocking=True), an explicit synchronize(), outputs read with .cpu()/.numpy()/.tolist() for the metrics (the .item() then adds no wait: labelled false on held-out 6-13, 14 of 20); loops that call backward() (training: PY010), loops that do not iterate a loader or an evaluation split (a per-sample loop inside the batch loop), reads under a periodic branch, files that never name a device, tensors the code made on the host
; bad:
;| import torch
;| def evaluate(model, val_loader, device):
;|     model.eval()
;|     total = 0.0
;|     with torch.no_grad():
;|         for x, y in val_loader:
;|             loss = torch.nn.functional.cross_entropy(model(x.to(device, non_blocking=True)), y.to(device, non_blocking=True))
;|             total += loss.item()
;|     return total / len(val_loader)
; good:
;| import torch
;| def evaluate(model, val_loader, device):
;|     model.eval()
;|     total = torch.zeros((), device=device)
;|     with torch.no_grad():
;|         for x, y in val_loader:
;|             loss = torch.nn.functional.cross_entropy(model(x.to(device, non_blocking=True)), y.to(device, non_blocking=True))
;|             total += loss
;|     return total.item() / len(val_loader)
((call function: (attribute object: (_) @recv attribute: (identifier) @m) arguments: (argument_list)) @finding
 (#eq? @m "item"))
((subscript value: (attribute object: (_) @recv attribute: (identifier) @d) subscript: (integer) @i) @finding
 (#eq? @d "data") (#eq? @i "0"))
((call function: (identifier) @f arguments: (argument_list . (identifier) @recv .)) @finding
 (#match? @f "^(float|int)$") (#match? @recv "loss"))
