#!/usr/bin/env python3
# SPDX-License-Identifier: LGPL-2.1-or-later
"""Whether one caller's queries starve the others: `vprofctl status` latency while several callers pipeline
windowed queries over a big target.

The target is vprof-stacks (a new stack nearly every sample) sampled on two threads at --frequency until it has
MaxStacksPerTarget (65,536) stacks, then gone: an exited target, whose window does not move, so that every
answer must be byte for byte the answer of the same query run alone. Then --callers connections (dbus_wire, one
socket each) send --queries GetFunctions(PID, inclusive, 0, --window) between them, all at once, while the main
thread runs `vprofctl status` every 50 ms. Prints the status latencies (median, 90th percentile, worst), the
time the queries took, and whether every answer equalled the lone one.

    bench/query-fairness.py [BUILD_DIR] [--queries 500] [--callers 4] [--window 60] [--frequency 10000]
                            [--distinct-windows]
    (as root, after a build)"""
import argparse
import os
import statistics
import subprocess
import sys
import threading
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import bench_env  # noqa: E402

BUS = ("org.vprof.Profiler1", "/org/vprof/Profiler1", "org.vprof.Profiler1")


def build_target(env, seconds):
    """vprof-stacks attached, run for seconds on two threads, and exited; returns its PID and its stacks."""
    p = env.spawn_demo("--seconds", seconds, "--threads", 2, binary=os.environ["VPROF_STACKS"])
    r = env.ctl("attach", p.pid)
    if r.returncode != 0:
        raise RuntimeError(r.stderr)
    env.go(p)
    p.wait(seconds + 60)
    # Exited, and its last second in its window (closed at the tick after the exit): its answers stay the same.
    for _ in range(400):
        rows = {t["pid"]: t for t in env.ctl_json("list")["targets"]}
        if rows[p.pid]["state"] == "exited" and \
                env.ctl_json("report", p.pid, "--window", "60s")["total_samples"] == rows[p.pid]["samples"]:
            break
        time.sleep(0.05)
    folded = env.ctl("report", p.pid, "--by", "stack", "--limit", 0, timeout=300)
    return p.pid, len(folded.stdout.splitlines())


def lone_query(dbus_wire, env, pid, window_usec):
    c = dbus_wire.Connection(env.socket)
    try:
        start = time.monotonic()
        serial = c.send(*BUS, "GetFunctions", "ssut", str(pid), "inclusive", 0, window_usec)
        reply_serial, error, body = c.receive_raw()
        while reply_serial != serial:
            reply_serial, error, body = c.receive_raw()
        if error:
            raise RuntimeError(f"GetFunctions: {error}")
        return body, time.monotonic() - start
    finally:
        c.close()


def caller(dbus_wire, env, pid, windows, n, expected, result):
    """n pipelined queries on one connection, over the windows in turn: how many answered, how many equal to the
    lone answer of their window (expected), when done."""
    c = dbus_wire.Connection(env.socket)
    c.sock.settimeout(600)
    try:
        serials = {}
        for i in range(n):
            w = windows[i % len(windows)]
            serials[c.send(*BUS, "GetFunctions", "ssut", str(pid), "inclusive", 0, w)] = w
        while serials:
            reply_serial, error, body = c.receive_raw()
            if reply_serial not in serials:
                continue
            w = serials.pop(reply_serial)
            result["answered"] += 1
            result["equal"] += error is None and body == expected[w]
            result["errors"] += error is not None
        result["done"] = time.monotonic()
    finally:
        c.close()


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("build", nargs="?", default="build")
    ap.add_argument("--queries", type=int, default=500)
    ap.add_argument("--callers", type=int, default=4)
    ap.add_argument("--window", type=int, default=60, help="seconds")
    ap.add_argument("--frequency", type=int, default=10000)
    ap.add_argument("--seconds", type=int, default=10, help="of vprof-stacks")
    ap.add_argument("--distinct-windows", action="store_true",
                    help="the queries over windows of 10, 15, ... --window s in turn, more than the daemon keeps "
                         "views of (daemon/query-cache.c): each counts its window, the queue alone keeps status "
                         "answered")
    a = ap.parse_args()

    build = os.path.abspath(a.build)
    vprof_env = bench_env.setup(build)
    os.environ.setdefault("VPROF_STACKS", f"{build}/tests/workloads/vprof-stacks")
    import dbus_wire

    vprof_env.require_bpf_or_skip()
    env = vprof_env.start_env_or_skip(frequency=a.frequency)
    try:
        pid, n_stacks = build_target(env, a.seconds)
        seconds = list(range(10, a.window + 1, 5)) if a.distinct_windows else [a.window]
        windows = [s * 1_000_000 for s in seconds]
        expected, lone = {}, []
        for w in windows:
            expected[w], took = lone_query(dbus_wire, env, pid, w)
            lone.append(took)
        print(f"target: vprof-stacks PID {pid}, {n_stacks} stacks, exited; one GetFunctions over a window of "
              f"{'/'.join(map(str, seconds))} s alone: {max(lone) * 1000:.0f} ms at most, "
              f"{len(expected[windows[0]])} bytes")

        results = [dict(answered=0, equal=0, errors=0, done=None) for _ in range(a.callers)]
        per = [a.queries // a.callers + (i < a.queries % a.callers) for i in range(a.callers)]
        threads = [threading.Thread(target=caller, args=(dbus_wire, env, pid, windows, per[i], expected,
                                                         results[i])) for i in range(a.callers)]
        start = time.monotonic()
        for t in threads:
            t.start()
        latencies, failed = [], []
        time.sleep(0.05)
        while any(t.is_alive() for t in threads):
            t0 = time.monotonic()
            r = env.ctl("status", timeout=120)
            latencies.append(time.monotonic() - t0)
            if r.returncode != 0:
                failed.append(r.stderr.strip())  # vprofctl's call timed out (25 s): a latency of at least that
            time.sleep(0.05)
        for t in threads:
            t.join()
        took = max(r["done"] for r in results) - start
        # A status alone, for the cost of the process itself.
        idle = []
        for _ in range(10):
            t0 = time.monotonic()
            env.ctl("status")
            idle.append(time.monotonic() - t0)

        answered = sum(r["answered"] for r in results)
        equal = sum(r["equal"] for r in results)
        errors = sum(r["errors"] for r in results)
        ms = sorted(x * 1000 for x in latencies)
        over = f"windows of {len(windows)} lengths" if a.distinct_windows else f"the {a.window} s window"
        print(f"load: {a.queries} GetFunctions over {over} from {a.callers} callers, pipelined: "
              f"answered in {took:.1f} s ({answered} answers, {errors} errors)")
        print(f"vprofctl status during the load: {len(ms)} runs, median {statistics.median(ms):.0f} ms, "
              f"90th percentile {ms[int(len(ms) * 0.9)]:.0f} ms, worst {ms[-1]:.0f} ms "
              f"(idle: median {statistics.median(idle) * 1000:.0f} ms); {len(failed)} failed"
              + (f" ({failed[0]})" if failed else ""))
        print(f"answers equal to the lone query's: {equal} of {a.queries}")
        return 0 if equal == a.queries else 1
    finally:
        env.stop()


if __name__ == "__main__":
    sys.exit(main())
