import asyncio
import time


def spin(seconds):
    end = time.monotonic() + seconds
    while time.monotonic() < end:
        pass


def gen_work():
    for i in range(4):
        spin(0.15)
        yield i


async def coro_work():
    for _ in range(4):
        spin(0.15)
        await asyncio.sleep(0)


list(gen_work())
asyncio.run(coro_work())
