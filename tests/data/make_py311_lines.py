#!/usr/bin/env python3
"""Writes py311_linetable.json: CPython 3.11 location tables (co_linetable)
with the line of every instruction as CPython itself reports it
(co_lines()), for test_pystack.c. Run with a CPython 3.11:
    python3 tests/data/make_py311_lines.py > tests/data/py311_linetable.json
"""
import json
import sys
import textwrap
import json.decoder as jd

assert sys.version_info[:2] == (3, 11), "needs CPython 3.11"

EDGE = '''
def far_jump(x):
    a = 1
''' + "\n" * 300 + '''
    b = (x +
         2)
    return a + b

def multiline(
        a,
        b):
    return [i
            for i in range(a)
            if i % b]

class K:
    def method(self):
        try:
            return 1 / 0
        except ZeroDivisionError:
            return None
        finally:
            pass

async def coro(x):
    await x
    yield x
'''


def codes(co):
    yield co
    for c in co.co_consts:
        if hasattr(c, "co_linetable"):
            yield from codes(c)


out = []
sources = [compile(EDGE, "edge.py", "exec"),
           compile(open(textwrap.__file__).read(), textwrap.__file__, "exec"),
           compile(open(jd.__file__).read(), jd.__file__, "exec")]
for top in sources:
    for co in codes(top):
        lines = [[s // 2, e // 2, ln if ln is not None else -1] for s, e, ln in co.co_lines()]
        out.append({"name": co.co_qualname, "firstline": co.co_firstlineno,
                    "table": co.co_linetable.hex(), "lines": lines})
json.dump({"codes": out}, sys.stdout, separators=(",", ":"))
sys.stdout.write("\n")
