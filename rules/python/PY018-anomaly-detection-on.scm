; id: PY018
; title: Autograd anomaly detection left on
; level: 7
; severity: medium
; status: statically_confirmed
; rationale: detect_anomaly records a traceback for every operation and checks every backward for NaN: a debugging aid that slows training several times over.
; fix: remove it, or enable it only behind a debug flag
; quiet: set_detect_anomaly(False)
; bad:
;| import torch
;| torch.autograd.set_detect_anomaly(True)
; good:
;| import torch
;| torch.autograd.set_detect_anomaly(args.debug)
((call function: (attribute attribute: (identifier) @f) arguments: (argument_list . (true))) @finding (#eq? @f "set_detect_anomaly"))
((call function: (attribute attribute: (identifier) @f)) @finding (#eq? @f "detect_anomaly"))
