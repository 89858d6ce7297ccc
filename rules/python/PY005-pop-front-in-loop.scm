; id: PY005
; title: list.pop(0) or list.insert(0, x) in a loop
; level: 2
; severity: medium
; status: statically_confirmed
; advisory: on real code (tests/scan-real) none of 6 findings was a real cost: the lists popped from were short work queues
; metric: complexity_exponent
; when: in-loop
; rationale: Removing or inserting at the front of a list shifts every other element: O(n) per call, O(n^2) for the loop.
; fix: use collections.deque (popleft / appendleft are O(1)), or reverse the order and work at the end of the list
; quiet: pop() from the end; pop(0) outside loops
; bad:
;| def drain(queue):
;|     while queue:
;|         job = queue.pop(0)
;|         job.run()
; good:
;| from collections import deque
;| def drain(jobs):
;|     queue = deque(jobs)
;|     while queue:
;|         job = queue.popleft()
;|         job.run()
((call function: (attribute attribute: (identifier) @m) arguments: (argument_list . (integer) @i)) @finding
 (#match? @m "^(pop|insert)$") (#eq? @i "0"))
