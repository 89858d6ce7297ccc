import sys
import time


def busy_then_exit():
    end = time.monotonic() + 0.5
    while time.monotonic() < end:
        pass
    sys.exit(3)


busy_then_exit()
