; id: PY009
; title: Database query inside a loop (N+1 queries)
; level: 3
; severity: medium
; status: requires_profiling
; metric: call_amplification
; when: in-loop, loop-header-lacks /attempt|[Rr]etr|tries/
; rationale: One query per item turns one round trip into N; with network latency the loop is dominated by waiting for the database.
; fix: fetch everything in one query before the loop (filter(id__in=...), select_related/prefetch_related, a JOIN, or executemany)
; quiet: iterating the rows of one query (the query runs once); queries outside loops; a retry loop (`for attempts_left in reversed(range(num_attempts))`, `while retries < 3`: it asks again only when a try failed; stylegan2-ada's download, held-out 19)
; bad:
;| def owners(orders):
;|     names = []
;|     for o in orders:
;|         c = Customer.objects.get(id=o.customer_id)
;|         names.append(c.name)
;|     return names
; good:
;| def owners(orders):
;|     ids = [o.customer_id for o in orders]
;|     by_id = Customer.objects.in_bulk(ids)
;|     return [by_id[i].name for i in ids]
((call function: (attribute object: (attribute attribute: (identifier) @objs) attribute: (identifier) @m)) @finding
 (#eq? @objs "objects") (#match? @m "^(get|filter|exclude|all|count|first|last|exists)$"))
((call function: (attribute object: (identifier) @o attribute: (identifier) @m)) @finding
 (#match? @o "^(session|cursor|cur|conn|db|connection)$") (#match? @m "^(query|execute|get|scalar|scalars)$"))
