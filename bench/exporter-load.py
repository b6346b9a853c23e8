#!/usr/bin/env python3
# SPDX-License-Identifier: LGPL-2.1-or-later
"""vprof-exporter under load: CLIENTS connections asking again and again for a 1-second pprof profile of one
running target, and SLOW clients sending their request a byte a second, for SECONDS; every answer checked (status
200, the gzip and profile.proto intact; 1 in 10 decoded whole: samples/count and cpu/nanoseconds consistent with
the period), the latency of the answers, when the slow ones were cut, the exporter's and vprofd's peak RSS, and
vprofd's status latency (Properties.GetAll, what `vprofctl status` reads) from a separate connection
meanwhile.

Usage: exporter-load.py [BUILD_DIR] [--seconds 60] [--clients 200] [--slow 50] [--timeout 10] [--smoke]"""
import argparse
import asyncio
import gzip
import os
import statistics
import sys
import threading
import time

import bench_env


def percentile(values, p):
    if not values:
        return float("nan")
    values = sorted(values)
    return values[min(len(values) - 1, int(round(p / 100 * (len(values) - 1))))]


class Stats:
    def __init__(self):
        self.latencies, self.bad, self.ok, self.decoded, self.inconsistent = [], [], 0, 0, 0
        self.samples = []
        self.cuts = []  # seconds from the connection to the server's close, bytes sent then
        self.slow_answered = 0


async def fetch(port, path):
    reader, writer = await asyncio.open_connection("127.0.0.1", port)
    try:
        writer.write(f"GET {path} HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n".encode())
        await writer.drain()
        data = await reader.read()
    finally:
        writer.close()
    head, _, body = data.partition(b"\r\n\r\n")
    status = int(head.split(b" ", 2)[1]) if head.startswith(b"HTTP/1.1 ") else 0
    return status, head, body


def check(stats, status, head, body, n, read_profile):
    if status != 200:
        stats.bad.append(f"status {status}: {body[:100]!r}")
        return
    length = [int(line.split(b":", 1)[1]) for line in head.split(b"\r\n") if line.lower().startswith(b"content-length:")]
    if body[:2] != b"\x1f\x8b" or (length and length[0] != len(body)):
        stats.bad.append(f"not gzip or cut: {len(body)} bytes, Content-Length {length}")
        return
    try:
        raw = gzip.decompress(body)
    except Exception as e:  # noqa: BLE001 - any damage counts
        stats.bad.append(f"gzip: {e}")
        return
    if raw[:1] not in (b"\x0a", b"\x12", b""):  # field 1 (sample_type) or 2 (sample) first
        stats.bad.append(f"not a profile.proto: {raw[:8]!r}")
        return
    stats.ok += 1
    if n % 10 == 0:
        extra = {}
        types, totals, _ = read_profile(body, extra)
        stats.decoded += 1
        stats.samples.append(totals[0])
        if types[0] != ("samples", "count") or (len(types) > 1 and types[1] == ("cpu", "nanoseconds") and
                                                 totals[1] != totals[0] * extra.get("period", 0)):
            stats.inconsistent += 1


async def client(port, path, stats, deadline, read_profile):
    n = 0
    while time.monotonic() < deadline:
        start = time.monotonic()
        try:
            status, head, body = await fetch(port, path)
        except OSError as e:
            stats.bad.append(f"connection: {e}")
            await asyncio.sleep(0.1)
            continue
        stats.latencies.append(time.monotonic() - start)
        check(stats, status, head, body, n, read_profile)
        n += 1


async def slow_client(port, path, stats, deadline):
    request = f"GET {path} HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n".encode()
    while time.monotonic() < deadline:
        start = time.monotonic()
        reader, writer = await asyncio.open_connection("127.0.0.1", port)
        sent = 0
        try:
            for i in range(len(request)):
                writer.write(request[i:i + 1])
                await writer.drain()
                sent += 1
                try:
                    data = await asyncio.wait_for(reader.read(65536), 1.0)
                except asyncio.TimeoutError:
                    continue
                if not data:
                    stats.cuts.append((time.monotonic() - start, sent))
                    break
                stats.slow_answered += 1
                break
        except (ConnectionResetError, BrokenPipeError):
            stats.cuts.append((time.monotonic() - start, sent))
        finally:
            writer.close()


def status_prober(env, dbus_wire, stop, latencies, errors):
    conn = dbus_wire.Connection(env.socket)
    while not stop.is_set():
        start = time.monotonic()
        err, _ = conn.call("org.vprof.Profiler1", "/org/vprof/Profiler1", "org.freedesktop.DBus.Properties", "GetAll",
                           "s", "org.vprof.Profiler1")
        latencies.append(time.monotonic() - start)
        if err:
            errors.append(err)
        stop.wait(0.2)
    conn.close()


def loadavg():
    with open("/proc/loadavg") as f:
        return " ".join(f.read().split()[:3])


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("build", nargs="?", default="build")
    ap.add_argument("--seconds", type=float, default=60)
    ap.add_argument("--clients", type=int, default=200)
    ap.add_argument("--slow", type=int, default=50)
    ap.add_argument("--timeout", type=int, default=10)
    ap.add_argument("--frequency", type=int, default=99)
    ap.add_argument("--smoke", action="store_true", help="5 s, 10 clients, 3 slow, timeout 2 s")
    a = ap.parse_args()
    if a.smoke:
        a.seconds, a.clients, a.slow, a.timeout = 5, 10, 3, 2

    build = os.path.abspath(a.build)
    vprof_env = bench_env.setup(build)
    os.environ.setdefault("VPROF_EXPORTER", f"{build}/client/exporter/vprof-exporter")
    os.environ.setdefault("VPROF_DEMO", f"{build}/tests/workloads/vprof-demo")
    import dbus_wire
    from exporter_env import Exporter, read_profile

    vprof_env.require_bpf_or_skip()
    env = vprof_env.start_env_or_skip(frequency=a.frequency)
    exporter = None
    try:
        target = env.spawn_demo("--threads", 2, "--seconds", int(a.seconds) + 60)
        assert env.ctl("attach", target.pid).returncode == 0
        env.go(target)
        time.sleep(2)  # a second or two of history
        exporter = Exporter(env, "--max-connections", a.clients + a.slow + 64, "--request-timeout", a.timeout,
                            "--threads", 4)
        _, vprofd_hwm_before = vprof_env.daemon_usage(env.daemon.pid)
        path = f"/debug/pprof/profile?seconds=1&target={target.pid}"
        print(f"machine: {os.cpu_count()} CPUs, load average before: {loadavg()}")
        print(f"load: {a.clients} clients asking {path} again and again, {a.slow} slow clients sending a byte a "
              f"second, for {a.seconds:.0f} s; exporter --request-timeout={a.timeout} --threads=4; vprofd at "
              f"{a.frequency} Hz, the target 2 busy threads")

        stats = Stats()
        stop = threading.Event()
        status_latencies, status_errors = [], []
        prober = threading.Thread(target=status_prober, args=(env, dbus_wire, stop, status_latencies, status_errors))
        prober.start()

        async def run():
            deadline = time.monotonic() + a.seconds
            tasks = [client(exporter.port, path, stats, deadline, read_profile) for _ in range(a.clients)]
            tasks += [slow_client(exporter.port, "/targets", stats, deadline) for _ in range(a.slow)]
            await asyncio.gather(*tasks)

        start = time.monotonic()
        asyncio.run(run())
        elapsed = time.monotonic() - start
        stop.set()
        prober.join()
        load_after = loadavg()
        _, vprofd_hwm_after = vprof_env.daemon_usage(env.daemon.pid)
        exporter_hwm = exporter.vm_hwm_kib()
        counters = exporter.get("/metrics")[2].decode()

        answered = len(stats.latencies)
        print(f"answered: {answered} requests in {elapsed:.1f} s ({answered / elapsed:.1f}/s): {stats.ok} checked "
              f"good (200, gzip, profile.proto), {len(stats.bad)} bad; {stats.decoded} decoded whole, "
              f"{stats.inconsistent} inconsistent")
        if stats.samples:
            print(f"samples in a decoded 1-s profile: min {min(stats.samples)}, median "
                  f"{statistics.median(stats.samples):.0f}, max {max(stats.samples)}")
        for b in stats.bad[:5]:
            print(f"  bad: {b}")
        ms = [x * 1000 for x in stats.latencies]
        print(f"latency: p50 {percentile(ms, 50):.1f} ms, p99 {percentile(ms, 99):.1f} ms, max {max(ms or [0]):.1f} ms")
        cut_times = [t for t, _ in stats.cuts]
        if cut_times:
            print(f"slow clients: {len(stats.cuts)} connections cut, after {min(cut_times):.2f} to "
                  f"{max(cut_times):.2f} s (median {statistics.median(cut_times):.2f} s) with "
                  f"{min(s for _, s in stats.cuts)} to {max(s for _, s in stats.cuts)} bytes of the request sent; "
                  f"{stats.slow_answered} answered")
        else:
            print(f"slow clients: none cut, {stats.slow_answered} answered")
        for line in counters.splitlines():
            if line.startswith("vprof_exporter_") and not line.startswith("#"):
                print(f"  {line}")
        print(f"exporter peak RSS (VmHWM): {exporter_hwm} KiB")
        print(f"vprofd peak RSS (VmHWM): {vprofd_hwm_before} KiB before, {vprofd_hwm_after} KiB after")
        sl = [x * 1000 for x in status_latencies]
        print(f"vprofd's status (Properties.GetAll, what bus_get_status() and vprofctl status read) from a "
              f"separate client during the load: {len(sl)} calls, p50 "
              f"{percentile(sl, 50):.1f} ms, max {max(sl or [0]):.1f} ms, {len(status_errors)} errors "
              f"{sorted(set(status_errors))[:3]}")
        print(f"load average after: {load_after}")
        failed = stats.bad or stats.inconsistent or status_errors or answered == 0 or \
            (a.slow and not cut_times) or stats.slow_answered
        return 1 if failed else 0
    finally:
        if exporter:
            problems = exporter.stop()
            if problems:
                print("\n".join(problems), file=sys.stderr)
        env.stop()


if __name__ == "__main__":
    sys.exit(main())
