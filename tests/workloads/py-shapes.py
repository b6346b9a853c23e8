# SPDX-License-Identifier: LGPL-2.1-or-later
"""The shapes of Python stacks that are not plain calls, for integration-python (issue 26): a generator resumed by
its consumer (consume -> numbers), a coroutine awaited by another under asyncio (outer_task -> inner_task), and a C
function calling back into Python (sort_by_key -> the C sort -> sort_key). Each burns CPU in its innermost
function; the main thread turns between the three until its stdin gives a line (or closes), then exits."""
import asyncio
import sys
import threading

stop = threading.Event()


def burn(n):
    x = 0
    for i in range(n):
        x += i * i
    return x


def numbers(n):
    for i in range(n):
        burn(300)
        yield i


def consume():
    return sum(numbers(200))


async def inner_task():
    await asyncio.sleep(0)
    return burn(60000)


async def outer_task():
    return await inner_task()


def sort_key(v):
    burn(300)
    return -v


def sort_by_key():
    return sorted(range(200), key=sort_key)


def main():
    threading.Thread(target=lambda: (sys.stdin.readline(), stop.set()), daemon=True).start()
    while not stop.is_set():
        consume()
        asyncio.run(outer_task())
        sort_by_key()


if __name__ == "__main__":
    main()
