; id: PY029
; title: for loop that only appends: a list comprehension is faster
; level: 7
; severity: low
; status: statically_confirmed
; advisory: on real code (tests/scan-real) none of 54 findings was a real cost: loops of a few items that build a model, a repr or a table once; the append is rarely what the loop spends time on
; when: function-lacks /^(async +)?def +__init__\(/
; rationale: A loop whose body is a single .append call pays an attribute lookup and a method call per item; a comprehension builds the list with a dedicated bytecode.
; fix: out = [f(x) for x in items] (or out.extend(...) when appending to an existing list)
; quiet: appends of the loop variable itself (PY034: a copy); loops in __init__ (run once), loops with more than the append, appends to attributes or items, appends of constructors, tensor ops or RPCs (their cost dwarfs the append)
; bad:
;| def squares(items):
;|     out = []
;|     for x in items:
;|         out.append(x * x)
;|     return out
; good:
;| def squares(items):
;|     return [x * x for x in items]
;| class Net:
;|     def __init__(self, sizes):
;|         self.layers = []
;|         for n in sizes:
;|             self.layers.append(n * 2)
;| def launch(workers, rpc, Job):
;|     futures = []
;|     for w in workers:
;|         futures.append(rpc.rpc_async(w, Job))
;|     jobs = []
;|     for w in workers:
;|         jobs.append(Job(w))
;|     buckets = [[], []]
;|     for i, w in enumerate(workers):
;|         buckets[i % 2].append(w)
;|     return futures, jobs, buckets
;; one list (out.append, not a[i].append or obj.x.append: no comprehension
;; builds those), and not a constructor, an RPC or a tensor op appended:
;; its cost dwarfs the append's
;; the loop variable itself appended is PY034's (a copy: list(items))
((for_statement left: (identifier) @var body: (block . (expression_statement (call function: (attribute object: (identifier) attribute: (identifier) @m) arguments: (argument_list . (_) @arg .))) .)) @finding
 (#eq? @m "append")
 (#not-match? @arg "^([A-Z][A-Za-z0-9_]*|[A-Za-z0-9_.]*\\.[A-Z][A-Za-z0-9_]*|(torch|np|numpy|rpc|tf|jax)\\.[A-Za-z0-9_.]*|[A-Za-z0-9_.]*(rpc_sync|rpc_async|remote|submit|apply_async))[(]") (#not-eq? @arg @var))
((for_statement left: [(pattern_list) (tuple_pattern)] body: (block . (expression_statement (call function: (attribute object: (identifier) attribute: (identifier) @m) arguments: (argument_list . (_) @arg .))) .)) @finding
 (#eq? @m "append")
 (#not-match? @arg "^([A-Z][A-Za-z0-9_]*|[A-Za-z0-9_.]*\\.[A-Z][A-Za-z0-9_]*|(torch|np|numpy|rpc|tf|jax)\\.[A-Za-z0-9_.]*|[A-Za-z0-9_.]*(rpc_sync|rpc_async|remote|submit|apply_async))[(]"))
