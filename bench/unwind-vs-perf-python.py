# SPDX-License-Identifier: LGPL-2.1-or-later
"""The Python workload of bench/unwind-vs-perf.py, for Debian's /usr/bin/python3.11 as it is: rounds of JSON
encoding and decoding (the _json accelerator, in C), regular expressions (_sre, in C) and a pure-Python
algorithm (shortest paths with heapq over a generated graph, in the interpreter's loop), for SECONDS seconds.

    python3.11 bench/unwind-vs-perf-python.py [SECONDS]"""
import heapq
import json
import random
import re
import sys
import time

WORDS = ["alpha", "beta", "gamma", "delta", "epsilon", "zeta", "eta", "theta", "iota", "kappa", "lambda", "mu"]


def make_records(rng, n):
    return [{"id": i, "name": " ".join(rng.choice(WORDS) for _ in range(4)), "score": rng.random() * 100,
             "tags": [rng.choice(WORDS) for _ in range(rng.randrange(1, 6))],
             "point": {"x": rng.randrange(-1000, 1000), "y": rng.randrange(-1000, 1000)}} for i in range(n)]


def json_round(records):
    text = json.dumps(records, sort_keys=True)
    back = json.loads(text)
    return len(text) + len(back)


LINE = re.compile(r"(?P<key>[a-z]+)=(?P<value>\d+(?:\.\d+)?)|(?P<word>\b[a-z]{4,}\b)")


def re_round(text):
    found = 0
    for m in LINE.finditer(text):
        found += 1 if m.group("key") else 2
    return found + len(re.sub(r"\b(\w)(\w*)\b", r"\2\1", text[:20000]))


def make_graph(rng, nodes, degree):
    return [[(rng.randrange(nodes), rng.randrange(1, 100)) for _ in range(degree)] for _ in range(nodes)]


def shortest_paths(graph, source):
    dist = [None] * len(graph)
    queue = [(0, source)]
    while queue:
        d, node = heapq.heappop(queue)
        if dist[node] is not None:
            continue
        dist[node] = d
        for to, weight in graph[node]:
            if dist[to] is None:
                heapq.heappush(queue, (d + weight, to))
    return sum(x for x in dist if x is not None)


def main():
    seconds = float(sys.argv[1]) if len(sys.argv) > 1 else 10.0
    rng = random.Random(15)
    records = make_records(rng, 2000)
    text = " ".join(f"{rng.choice(WORDS)}={rng.randrange(1000)}.{rng.randrange(100)}" if rng.random() < 0.3
                    else rng.choice(WORDS) for _ in range(40000))
    graph = make_graph(rng, 5000, 6)
    end = time.monotonic() + seconds
    sink = rounds = 0
    while time.monotonic() < end:
        sink += json_round(records)
        sink += re_round(text)
        sink += shortest_paths(graph, rounds % len(graph))
        rounds += 1
    print(f"{rounds} rounds, {sink % 1000}")


if __name__ == "__main__":
    main()
