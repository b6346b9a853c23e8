# SPDX-License-Identifier: LGPL-2.1-or-later
"""Pure-Python functions with a known split of CPU time, for integration-python (issue 26): each measures its own
inclusive time with its thread's CPU clock (time.thread_time()), so the profile can be checked against the truth.

The main thread runs, at module level, outer() (which loops, then calls inner()) and recursive(DEPTH) (each level
loops, then calls the next); a second thread, side(), calls inner() too. Everything is bytecode but range()'s
iteration (a C callee). Prints nothing until its stdin gives a line (or closes): then one line of JSON, the truth,
{"functions": {name: inclusive CPU seconds over all threads (recursion counted once, at its outermost level)},
"threads": {"main"|"side": CPU seconds}, "lines": {name: its def's line}}, and exits."""
import json
import sys
import threading
import time

DEPTH = 4
TRUTH = {"outer": 0.0, "inner": 0.0, "recursive": 0.0, "side": 0.0}
SIDE_INNER = [0.0]  # the side thread's inner(): its own sum, no update of TRUTH lost to a thread switch
LINES = {}
stop = threading.Event()


def inner(truth=TRUTH, key="inner"):
    t0 = time.thread_time()
    x = 0
    for i in range(20000):
        x += i * i
    truth[key] += time.thread_time() - t0
    return x


def outer():
    t0 = time.thread_time()
    x = 0
    for i in range(10000):
        x += i ^ 3
    inner()
    TRUTH["outer"] += time.thread_time() - t0
    return x


def recursive(n):
    t0 = time.thread_time() if n == DEPTH else 0.0
    x = 0
    for i in range(5000):
        x += i
    if n > 0:
        recursive(n - 1)
    if n == DEPTH:
        TRUTH["recursive"] += time.thread_time() - t0
    return x


def side():
    while not stop.is_set():
        t0 = time.thread_time()
        for _ in range(5):
            inner(SIDE_INNER, 0)
        TRUTH["side"] += time.thread_time() - t0
    THREADS["side"] = time.thread_time()


THREADS = {}
for name, fn in (("inner", inner), ("outer", outer), ("recursive", recursive), ("side", side)):
    LINES[name] = fn.__code__.co_firstlineno
threading.Thread(target=side, name="side").start()
threading.Thread(target=lambda: (sys.stdin.readline(), stop.set()), daemon=True).start()
while not stop.is_set():
    outer()
    recursive(DEPTH)
THREADS["main"] = time.thread_time()
while "side" not in THREADS:
    time.sleep(0.01)
TRUTH["inner"] += SIDE_INNER[0]
print(json.dumps({"functions": TRUTH, "threads": THREADS, "lines": LINES}), flush=True)
