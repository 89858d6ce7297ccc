import multiprocessing as mp
import time


def child_work(seconds):
    end = time.monotonic() + seconds
    n = 0
    while time.monotonic() < end:
        n += 1
    return n


if __name__ == "__main__":
    ctx = mp.get_context("fork")
    procs = [ctx.Process(target=child_work, args=(1.5,)) for _ in range(2)]
    for p in procs:
        p.start()
    for p in procs:
        p.join()
