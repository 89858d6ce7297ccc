; id: PY033
; title: dict.items() iterated with the key or the value unused
; level: 7
; severity: low
; status: statically_confirmed
; advisory: on real code (tests/scan-real) none of 31 findings was a real cost: every loop ran at set-up or conversion time or over a handful of entries; the saving is one tuple per entry
; when: unused @unused
; rationale: items() builds a (key, value) tuple per entry only for the loop to throw half of it away; keys() or values() hands over the half it uses (ruff's PERF102).
; fix: for k in d.keys(): (or for k in d:) when the value is unused; for v in d.values(): when the key is
; quiet: loops that use both names; items() called with arguments (not a dict's); unpacking into anything but two plain names
; bad:
;| def total(prices):
;|     s = 0
;|     for _, p in prices.items():
;|         s += p
;|     return s
; good:
;| def total(prices):
;|     s = 0
;|     for p in prices.values():
;|         s += p
;|     return s
;| def show(prices):
;|     for name, p in prices.items():
;|         print(name, p)
((for_statement
  left: [(pattern_list . (identifier) @unused . (identifier) .) (tuple_pattern . (identifier) @unused . (identifier) .)]
  right: (call function: (attribute attribute: (identifier) @m) arguments: (argument_list) @args)) @finding
 (#eq? @m "items") (#eq? @args "()"))
((for_statement
  left: [(pattern_list . (identifier) . (identifier) @unused .) (tuple_pattern . (identifier) . (identifier) @unused .)]
  right: (call function: (attribute attribute: (identifier) @m) arguments: (argument_list) @args)) @finding
 (#eq? @m "items") (#eq? @args "()"))
