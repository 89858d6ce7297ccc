; id: PY036
; title: Sleep or network request in Dataset.__getitem__
; level: 3
; severity: medium
; status: requires_profiling
; when: in-def /^__getitem__$/, in-method, not-in-except
; lower: file-has /num_workers[[:space:]]*=[[:space:]]*[1-9]/
; lower-why: the file's DataLoader has worker processes, which wait for the I/O beside the training step
; rationale: __getitem__ runs once per sample: a sleep or a network round trip there waits once per item, and with num_workers=0 the training step waits with it (3 ms per item is 96 ms per batch of 32, however fast the model is).
; fix: fetch once and cache (in __init__, or download to local files first); never sleep there (retry outside, or back off in the worker); at least give the DataLoader worker processes (num_workers, persistent_workers=True) so that the waits overlap the step
; quiet: a sleep or request in an except clause (a retry's back-off after a failed read, which a read that succeeds never pays: Real-ESRGAN, held-out 17); reading files in __getitem__ (Image.open, np.load, torch.load, open): that is how a dataset larger than memory loads lazily, and on real code (torchvision's datasets, 60 findings) it was always the design; its cost shows where the loader has no workers (PY014) and in a profile (`perfloop scan --profile` weighs each finding by the time measured on its line); I/O in __init__ or outside a Dataset; rated one level lower where the file's DataLoader already has workers
; bad:
;| import time
;| from torch.utils.data import Dataset
;| class Slow(Dataset):
;|     def __getitem__(self, i):
;|         time.sleep(0.003)
;|         return i
; good:
;| from torch.utils.data import Dataset
;| class Cached(Dataset):
;|     def __init__(self, paths):
;|         self.items = [open(p, "rb").read() for p in paths]
;|     def __getitem__(self, i):
;|         return self.items[i]
((call function: (attribute object: (identifier) @mod attribute: (identifier) @fn)) @finding
 (#match? @mod "^(time|requests|request|session|httpx|urllib3)$")
 (#match? @fn "^(sleep|get|post|put|head|request|urlopen)$"))
((call function: (attribute object: (attribute attribute: (identifier) @mod) attribute: (identifier) @fn)) @finding
 (#match? @mod "^(request)$")
 (#eq? @fn "urlopen"))
((call function: (identifier) @fn) @finding
 (#match? @fn "^(sleep|urlopen)$"))
