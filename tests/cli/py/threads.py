import threading
import time


def spin(seconds):
    end = time.monotonic() + seconds
    while time.monotonic() < end:
        pass


def spin_worker():
    spin(1.5)


def nap():
    time.sleep(1.5)


def spin_main():
    spin(1.5)


workers = [threading.Thread(target=spin_worker), threading.Thread(target=nap)]
for w in workers:
    w.start()
spin_main()
for w in workers:
    w.join()
