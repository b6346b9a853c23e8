#!/usr/bin/env python3
# SPDX-License-Identifier: LGPL-2.1-or-later
"""What following the changes of executable mappings costs (issue 25, part 2: bpf/maps-change.bpf.h,
daemon/maps-change.c). Two workloads, timed in rounds that interleave the conditions (a shared machine's load
drifts); medians and min-max are printed:

- vprof-dlopen loading and unloading two libraries as fast as it can (--spin 1000: a microsecond of work a
  load), in loads per second: every load is an mmap() of code and a munmap() of it, each a record and a change
  of the daemon's address space, besides the dozen other system calls of dlopen() and dlclose();
- pipe-pingpong (bench/pipe-pingpong.c), in ns per round trip of four system calls (and two context switches): the
  cost of the raw system-call tracepoints to every other process of the machine.

Conditions: "alone" (no vprofd), "idle" (vprofd running, nothing attached), "attached" (vprof-dlopen attached;
the ping-pong, never a target, is timed alone and idle only), and with --baseline the same two for
another vprofd (a build without the maps-change programs). The daemon runs at 99 Hz.

Usage (root): maps-change-cost.py BUILD_DIR [--baseline VPROFD] [--rounds N] [--seconds S]"""
import argparse
import os
import statistics
import subprocess
import sys
import tempfile

import bench_env


def dlopen_rate(env, build, seconds, attach):
    workloads = f"{build}/tests/workloads"
    libs = [f"{workloads}/libvprof-dlopen-pair-{s}.so" for s in ("a", "b")]
    p = env.spawn_demo("--seconds", seconds, "--spin", 1000, *libs, binary=f"{workloads}/vprof-dlopen")
    if attach:
        r = env.ctl("attach", p.pid)
        if r.returncode != 0:
            raise RuntimeError(f"attach failed: {r.stderr}")
    env.go(p)
    out, _ = p.communicate(timeout=seconds + 60)
    if attach:
        env.ctl("detach", p.pid)
    loads = int(out.split()[0])
    return loads / seconds


def cpu_seconds(pid):
    with open(f"/proc/{pid}/stat") as f:
        fields = f.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def pingpong_ns(binary, rounds):
    out = subprocess.run([binary, str(rounds)], capture_output=True, text=True, check=True).stdout
    return float(out.split()[0])


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("build")
    ap.add_argument("--baseline", help="another vprofd to compare with")
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--seconds", type=float, default=4.0)
    ap.add_argument("--pingpong-rounds", type=int, default=200000)
    args = ap.parse_args()
    build = os.path.abspath(args.build)
    vprof_env = bench_env.setup(build)
    top = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    tmp = tempfile.mkdtemp(prefix="vprof-maps-bench-")
    pingpong = os.path.join(tmp, "pipe-pingpong")
    subprocess.run(["cc", "-O2", "-o", pingpong, f"{top}/bench/pipe-pingpong.c"], check=True)

    daemons = {"": f"{build}/daemon/vprofd"}
    if args.baseline:
        daemons["baseline "] = os.path.abspath(args.baseline)
    env = vprof_env.start_env_or_skip()
    env.daemon.terminate()
    env.daemon.wait()
    env.daemon = None
    rate, ns, daemon_cpu = {}, {}, {}
    try:
        for _ in range(args.rounds):
            conditions = [("alone", None, False)]
            for prefix, vprofd in daemons.items():
                conditions += [(prefix + "idle", vprofd, False), (prefix + "attached", vprofd, True)]
            for name, vprofd, attach in conditions:
                if vprofd:
                    os.environ["VPROFD"] = vprofd
                    env.start_daemon()
                try:
                    cpu = cpu_seconds(env.daemon.pid) if env.daemon else 0.0
                    rate.setdefault(name, []).append(dlopen_rate(env, build, args.seconds, attach))
                    if env.daemon:
                        daemon_cpu.setdefault(name, []).append(
                            100 * (cpu_seconds(env.daemon.pid) - cpu) / args.seconds)
                    if not attach:
                        ns.setdefault(name, []).append(pingpong_ns(pingpong, args.pingpong_rounds))
                    if attach:
                        status = env.ctl_json("status")
                        print(f"  {name}: mapping changes {status.get('mapping_changes')}, lost "
                              f"{status.get('mapping_changes_lost')}, read late {status.get('mapping_changes_stale')}",
                              file=sys.stderr)
                finally:
                    if env.daemon:
                        env.daemon.terminate()
                        env.daemon.wait()
                        env.daemon = None
    finally:
        env.stop()

    def row(label, values, unit, base):
        med = statistics.median(values)
        ratio = f"  x{med / base:.3f}" if base else ""
        print(f"  {label:<20} {med:12.1f} {unit}  (min {min(values):.1f}, max {max(values):.1f}){ratio}")

    print(f"vprof-dlopen --spin 1000, {args.seconds} s x {args.rounds} rounds: loads per second (median)")
    base = statistics.median(rate["alone"])
    for name, values in rate.items():
        row(name, values, "loads/s", base)
    print("vprofd's CPU time while vprof-dlopen runs, % of a CPU (median)")
    for name, values in daemon_cpu.items():
        row(name, values, "%", None)
    print(f"pipe-pingpong, {args.pingpong_rounds} round trips x {args.rounds} rounds: ns per round trip (median)")
    base = statistics.median(ns["alone"])
    for name, values in ns.items():
        row(name, values, "ns", base)


if __name__ == "__main__":
    main()
