; id: C009
; title: A lock taken for every element
; level: 5
; severity: medium
; status: requires_profiling
; when: in-loop, loop-not-small, unconditional
; rationale: Locking and unlocking per element costs two atomic operations each time and, under contention, a context switch; the critical section is smaller than the locking.
; fix: take the lock once around the batch, or accumulate locally and merge under one lock at the end
; quiet: a lock taken under a condition (a rare branch); loops known to run few times
; bad:
;| #include <pthread.h>
;| void add_all(pthread_mutex_t *m, long *total, const long *v, int n)
;| {
;| 	for (int i = 0; i < n; i++) {
;| 		pthread_mutex_lock(m);
;| 		*total += v[i];
;| 		pthread_mutex_unlock(m);
;| 	}
;| }
; good:
;| #include <pthread.h>
;| void add_all(pthread_mutex_t *m, long *total, const long *v, int n)
;| {
;| 	long local = 0;
;| 	for (int i = 0; i < n; i++)
;| 		local += v[i];
;| 	pthread_mutex_lock(m);
;| 	*total += local;
;| 	pthread_mutex_unlock(m);
;| }
((call_expression function: (identifier) @f) @finding (#match? @f "^(pthread_mutex_lock|pthread_spin_lock|pthread_rwlock_wrlock|pthread_rwlock_rdlock|mtx_lock)$"))
