def slow(items):
    for a in items:
        for b in items:
            if a == b and a is not b:
                pass
