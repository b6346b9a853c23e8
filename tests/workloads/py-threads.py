# SPDX-License-Identifier: LGPL-2.1-or-later
"""A multi-threaded Python program for integration-python (issue 26): a concurrent.futures.ThreadPoolExecutor of
three workers running tasks of this file and of the standard library's pure-Python modules (fractions, textwrap),
fed by the main thread, and a fourth thread that works a little and sleeps, so that the threads' CPU shares differ.
The truth of the thread split is the kernel's (/proc/PID/task/TID/stat), read by the test.

Usage: /usr/bin/python3.11 py-threads.py; prints "ready" once every thread runs, stops when stdin gives a line
(or closes)."""
import concurrent.futures
import fractions
import sys
import textwrap
import threading
import time

TEXT = " ".join(f"word{i} lorem ipsum dolor sit amet" for i in range(300))
stop = threading.Event()


def checksum(n):
    x = 0
    for i in range(n):
        x = (x * 31 + i) & 0xFFFFFFFF
    return x


def harmonic(n):
    return sum(fractions.Fraction(1, k) for k in range(1, n))


def wrap(width):
    return len(textwrap.fill(TEXT, width))


def task(kind):
    if kind == 0:
        return checksum(30000)
    if kind == 1:
        return harmonic(60)
    return wrap(40 + kind)


def ticker():
    """Works about a third of the time: a thread with a smaller share than the workers'."""
    while not stop.is_set():
        t0 = time.monotonic()
        while time.monotonic() - t0 < 0.005:
            checksum(2000)
        time.sleep(0.010)


threading.Thread(target=ticker, name="ticker").start()
threading.Thread(target=lambda: (sys.stdin.readline(), stop.set()), daemon=True).start()
with concurrent.futures.ThreadPoolExecutor(max_workers=3, thread_name_prefix="worker") as pool:
    first = True
    while not stop.is_set():
        futures = [pool.submit(task, i % 4) for i in range(24)]
        concurrent.futures.wait(futures)
        if first:
            print("ready", flush=True)
            first = False
