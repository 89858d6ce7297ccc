; id: PY024
; title: lru_cache(maxsize=None) or @cache on a method: a cache that never evicts
; level: 8
; severity: critical
; status: statically_confirmed
; metric: memory_growth
; when: in-method
; rationale: The cache is global to the class and keyed by self: it keeps every instance alive and grows with every distinct call, without bound, until the process runs out of memory.
; fix: give it a maxsize, cache per instance (functools.cached_property or a dict attribute), or cache a module-level function of the values only
; quiet: lru_cache with a maxsize; caches on plain functions
; bad:
;| from functools import lru_cache
;| class Model:
;|     @lru_cache(maxsize=None)
;|     def features(self, key):
;|         return expensive(key)
; good:
;| from functools import lru_cache
;| class Model:
;|     @lru_cache(maxsize=1024)
;|     def features(self, key):
;|         return expensive(key)
((decorator (call function: [(identifier) @f (attribute attribute: (identifier) @f)]
   arguments: (argument_list (keyword_argument name: (identifier) @k value: (none))))) @finding
 (#eq? @f "lru_cache") (#eq? @k "maxsize"))
((decorator [(identifier) @f (attribute attribute: (identifier) @f)]) @finding (#eq? @f "cache"))
