def pairs(items):
    found = []
    for a in items:
        for b in items:
            if a < b:
                found.append((a, b))
    return found


def drain(queue, other):
    while queue:
        queue.pop(0)  # perfloop: ignore[PY005]
        # perfloop: ignore[PY005]
        other.pop(0)
    while other:
        other.pop(0)
