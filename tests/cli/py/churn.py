import threading
import time


def short_life():
    s = 0
    for i in range(2000):
        s += i


def spawn_many():
    end = time.monotonic() + 1.0
    n = 0
    while time.monotonic() < end:
        ts = [threading.Thread(target=short_life) for _ in range(8)]
        for t in ts:
            t.start()
        for t in ts:
            t.join()
        n += len(ts)
    return n


spawn_many()
