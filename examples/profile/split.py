"""A CPU-bound program whose true split between two functions is known
from its own timing: heavy() does 7 units of work for every 3 of light().
It prints the split it measured itself (thread CPU time) on stderr, so a
profiler's attribution can be checked against it.

    python3 split.py [SECONDS]
"""
import sys
import time


def work(n):
    s = 0
    for i in range(n):
        s += i * i
    return s


def heavy():
    return work(7000)


def light():
    return work(3000)


def main(seconds):
    spent = {"heavy": 0.0, "light": 0.0}
    clock = time.thread_time
    end = time.monotonic() + seconds
    while time.monotonic() < end:
        t0 = clock()
        heavy()
        t1 = clock()
        light()
        t2 = clock()
        spent["heavy"] += t1 - t0
        spent["light"] += t2 - t1
    total = spent["heavy"] + spent["light"]
    print(f"split: heavy {100 * spent['heavy'] / total:.1f}% "
          f"light {100 * spent['light'] / total:.1f}%", file=sys.stderr)


if __name__ == "__main__":
    main(float(sys.argv[1]) if len(sys.argv) > 1 else 3.0)
