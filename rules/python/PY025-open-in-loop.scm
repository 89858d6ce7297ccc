; id: PY025
; title: Same file opened on every iteration
; level: 3
; severity: medium
; status: requires_profiling
; when: in-loop
; rationale: Opening, writing and closing a file per iteration costs system calls and a flush each time; with a constant path it is the same file every time.
; fix: open the file once, outside the loop, and write to it inside
; quiet: open() of a name or expression (likely a different file each time); open() outside loops
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
((call function: (identifier) @f arguments: (argument_list . (string))) @finding (#eq? @f "open"))
