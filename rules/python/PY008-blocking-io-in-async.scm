; id: PY008
; title: Blocking call inside async def (requests, time.sleep, open, subprocess)
; level: 5
; severity: medium
; status: statically_confirmed
; when: in-async-def
; rationale: A blocking call inside a coroutine stops the event loop: every other task waits until it returns, so concurrency collapses to one request at a time.
; fix: use the async equivalent (aiohttp/httpx.AsyncClient, asyncio.sleep, aiofiles) or run it in a thread with await asyncio.to_thread(...)
; quiet: blocking calls outside async def; asyncio and aiohttp calls
; bad:
;| import requests
;| async def fetch(url):
;|     r = requests.get(url)
;|     return r.json()
; good:
;| import httpx
;| async def fetch(url):
;|     async with httpx.AsyncClient() as c:
;|         r = await c.get(url)
;|     return r.json()
((call function: (attribute object: (identifier) @mod attribute: (identifier) @fn)) @finding
 (#match? @mod "^(requests|time|subprocess|urllib)$")
 (#match? @fn "^(get|post|put|delete|patch|head|request|sleep|run|call|check_output|check_call|urlopen)$"))
((call function: (identifier) @fn) @finding (#match? @fn "^(open|input)$"))
