def ok(rows):
    out = ""
    for r in rows:
        out += str(r)
    return out

def broken(:
    pass
