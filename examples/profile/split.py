"""A CPU-bound program whose true split between two functions is known
from its own timing: heavy() does 7 units of work for every 3 of light().
It prints the split it measured itself (thread CPU time) on stderr, so a
profiler's attribution can be checked against it.

    python3 split.py [SECONDS]        run for SECONDS (default 3)
    python3 split.py --rounds N       run N rounds; print the wall time
"""
import sys
import time


def heavy():
    s = 0
    for i in range(7000):
        s += i * i
    return s


def light():
    s = 0
    for i in range(3000):
        s += i * i
    return s


def main(seconds=None, rounds=None):
    spent = {"heavy": 0.0, "light": 0.0}
    clock = time.thread_time
    start = time.monotonic()
    end = start + (seconds or 0)
    done = 0
    while (time.monotonic() < end) if rounds is None else done < rounds:
        t0 = clock()
        heavy()
        t1 = clock()
        light()
        t2 = clock()
        spent["heavy"] += t1 - t0
        spent["light"] += t2 - t1
        done += 1
    total = spent["heavy"] + spent["light"]
    print(f"split: heavy {100 * spent['heavy'] / total:.1f}% "
          f"light {100 * spent['light'] / total:.1f}% "
          f"wall {time.monotonic() - start:.4f}", file=sys.stderr)


if __name__ == "__main__":
    if len(sys.argv) > 2 and sys.argv[1] == "--rounds":
        main(rounds=int(sys.argv[2]))
    else:
        main(seconds=float(sys.argv[1]) if len(sys.argv) > 1 else 3.0)
