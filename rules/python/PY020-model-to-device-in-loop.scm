; id: PY020
; title: Model moved to the device inside a loop
; level: 4
; severity: medium
; status: statically_confirmed
; when: in-loop, not-rebound @o, loop-header-lacks /children|modules|named_|layers|partitions|devices/
; rationale: model.to(device) or model.cuda() walks every parameter and buffer; after the first iteration it does nothing useful but still costs a traversal (and a copy if the device differs).
; fix: move the model once, before the loop; move only the batch inside it
; quiet: a name the loop binds anew on each pass (its loop variable, or assigned in the loop: `net = getattr(self, "net" + name)` moves each network once); moving child modules or layers in turn (a loop over children(), modules(), layers, devices), and names other than model/net/module/network/encoder/decoder
; bad:
;| def train(model, loader, device):
;|     for x, y in loader:
;|         model.to(device)
;|         model(x.to(device))
; good:
;| def train(model, loader, device):
;|     model.to(device)
;|     for x, y in loader:
;|         model(x.to(device))
((call function: (attribute object: (identifier) @o attribute: (identifier) @m)) @finding
 (#match? @o "^(model|net|module|network|encoder|decoder)$") (#match? @m "^(to|cuda)$"))
