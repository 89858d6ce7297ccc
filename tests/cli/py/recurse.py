import sys
import time

sys.setrecursionlimit(20000)


def deep(n):
    if n == 0:
        end = time.monotonic() + 1.0
        while time.monotonic() < end:
            pass
        return 0
    return deep(n - 1) + 1


deep(5000)
