def slow(items):
    for a in items:
        for b in items:
            pass
