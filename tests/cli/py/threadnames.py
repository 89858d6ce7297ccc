# Threads named every way threading names them, for t610: given names, a
# default one ("Thread-N (target)"), a subclass that sets attributes before
# Thread.__init__ (its _name is not the second slot), one whose __dict__
# was made (its attributes move from the object into a dictionary), one
# renamed after it started, a name past the kernel's 15 bytes and one not
# in ASCII. Prints "ready" once all run, then ends after argv[1] seconds.
import sys
import threading
import time

stop = threading.Event()


def spin():
    x = 0
    while not stop.is_set():
        x += 1


class Worker(threading.Thread):
    def __init__(self):
        self.first = 1
        self.second = 2
        super().__init__(name="worker-subclass")

    def run(self):
        spin()


threads = [
    threading.Thread(target=spin, name="loader-0"),
    threading.Thread(target=spin),
    Worker(),
    threading.Thread(target=spin, name="with-a-dict"),
    threading.Thread(target=spin, name="before-rename"),
    threading.Thread(target=spin, name="a-name-longer-than-the-kernel-keeps"),
    threading.Thread(target=spin, name="загрузчик-данных"),
]
vars(threads[3])["extra"] = 1
for t in threads:
    t.start()
threads[4].name = "after-rename"
print("ready", flush=True)
time.sleep(float(sys.argv[1]))
stop.set()
for t in threads:
    t.join()
