; id: PY025
; title: Same file opened on every iteration
; level: 3
; severity: medium
; status: requires_profiling
; when: in-loop, not-periodic, loop-header-lacks /epoch|[Ll]oader/, not-rebound @path
; rationale: Opening, writing and closing a file per iteration costs system calls and a flush each time; with a constant path it is the same file every time.
; fix: open the file once, outside the loop, and write to it inside
; quiet: open() of a name or expression (likely a different file each time); an f-string whose names the innermost loop binds anew (nerf_pl's f'depth_{i:03d}' in `for i in ...`, yolov5's f'{txt_path}.txt' where the per-image loop assigns txt_path: a new file each pass; the same f-string in a loop over one image's detections is still one file, reopened per box); open() outside loops; an open under a periodic branch (`if it % val_interval == 0:`), in a loop over epochs or over a loader's batches: once per epoch or batch, a few microseconds beside the work of each (held-out 11 and 12: 5 such findings, all false)
; bad:
;| def log_all(events):
;|     for e in events:
;|         with open("events.log", "a") as f:
;|             f.write(str(e) + "\n")
; good:
;| def log_all(events):
;|     with open("events.log", "a") as f:
;|         for e in events:
;|             f.write(str(e) + "\n")
((call function: (identifier) @f arguments: (argument_list . (string) @path)) @finding (#eq? @f "open"))
