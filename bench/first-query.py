#!/usr/bin/env python3
# SPDX-License-Identifier: LGPL-2.1-or-later
"""How long the first query after attaching to a large program takes, cold and warm, and what the symbols cost.

The program is clang compiling a generated C file: a process linked against libc, libstdc++ and two large
libraries (Debian's libLLVM-14.so.1, 110 MB, and libclang-cpp.so.14, 59 MB), busy in them. A fresh vprofd
(private bus, debug log) attaches it; one second later `vprofctl report PID` runs, and its wall time is the first
query's latency. The daemon's log says how long each file's symbols took to read and how large they are. Then a
second clang is attached while the first is still attached: its files are in the cache (warm).

    bench/first-query.py [BUILD_DIR]        (as root, after a build; needs clang-14)"""
import os
import re
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import bench_env  # noqa: E402

FUNCTIONS = 3000


def generate(path):
    """Enough code to keep clang -O2 busy for several seconds."""
    with open(path, "w") as f:
        for i in range(FUNCTIONS):
            f.write(f"int f{i}(int *a, int n) {{ int s = {i}; for (int j = 0; j < n; j++) {{ s += a[j] * {i % 7 + 1};"
                    f" if (s > {i}) s ^= a[(j + {i}) % n]; }} return s; }}\n")


def rss_kib(pid):
    with open(f"/proc/{pid}/status") as f:
        return next(int(line.split()[1]) for line in f if line.startswith("VmRSS:"))


def attach_and_query(env, source):
    p = subprocess.Popen(["clang", "-O2", "-c", source, "-o", "/dev/null"])
    time.sleep(0.3)
    log_start = len(env.log_text())
    rss_before = rss_kib(env.daemon.pid)
    r = env.ctl("attach", p.pid)
    if r.returncode != 0:
        p.kill()
        raise RuntimeError(r.stderr)
    time.sleep(1)
    start = time.monotonic()
    r = env.ctl("report", p.pid, "-n", "5")
    latency = time.monotonic() - start
    modules = env.ctl_json("report", p.pid, "--by", "module")["modules"]
    rss_after = rss_kib(env.daemon.pid)
    loads = re.findall(r"Symbols of (\S+): (\d+) from (\S+) in ([\d.]+) ms, (\d+) KiB\.", env.log_text()[log_start:])
    return p, latency, r.stdout, modules, loads, rss_before, rss_after


def main():
    build = os.path.abspath(sys.argv[1] if len(sys.argv) > 1 else "build")
    if os.geteuid() != 0:
        sys.exit("first-query: needs root")
    vprof_env = bench_env.setup(build)
    env = vprof_env.VprofEnv(frequency=999, extra_args=["--verbose"]).start()
    procs = []
    try:
        with tempfile.TemporaryDirectory(prefix="vprof-firstq-") as tmp:
            source = os.path.join(tmp, "big.c")
            generate(source)
            for run in ("cold", "warm"):
                p, latency, top, modules, loads, rss0, rss1 = attach_and_query(env, source)
                procs.append(p)
                print(f"\n{run}: first `vprofctl report` 1 s after attaching clang (PID {p.pid}): "
                      f"{latency * 1000:.0f} ms; daemon RSS {rss0} -> {rss1} KiB")
                print("  files read for this query (the daemon's log):" if loads else
                      "  no file read: every one was in the cache")
                for path, n, src, ms, kib in sorted(loads, key=lambda x: -float(x[3])):
                    size = os.path.getsize(path) >> 20 if os.path.exists(path) else 0
                    print(f"    {os.path.basename(path):<24} {size:>4} MiB file: {int(n):>7} symbols from {src:<9}"
                          f" in {float(ms):7.1f} ms, {int(kib):>6} KiB")
                for m in modules[:6]:
                    s = m.get("symbols") or {}
                    print(f"    module {m['module']:<24} {m['inclusive']:>5} samples, names from "
                          f"{s.get('source')}, read in {s.get('load_usec', 0) / 1000:.1f} ms")
                print("  " + "\n  ".join(top.splitlines()[:7]))
            used = env.ctl_json("status")["symbol_cache_used"]
            print(f"\nsymbol cache: {used >> 10} KiB in use")
    finally:
        for p in procs:
            p.kill()
            p.wait()
        env.stop()


if __name__ == "__main__":
    main()
