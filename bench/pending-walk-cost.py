#!/usr/bin/env python3
# SPDX-License-Identifier: LGPL-2.1-or-later
"""What finishing the walks that await a table costs (issue 25, part 3: keep_with_stack() in bpf/vprof.bpf.c,
daemon/unwind-pending.c), against another vprofd (--baseline, a build without it) when given. vprof-dlopen loads
libvprof-dlopen-deep.so (GCC -O2, no frame pointers, a chain of 24 calls) again and again, attached, at 499 Hz;
--spin sets the work of a load (200,000 iterations, about 0.3 ms, by default: a new mapping every fraction of a
millisecond, the worst case, where many samples fall in the window before the table arrives). Rounds interleave
the daemons (a shared machine's load drifts); medians and min-max are printed of: loads per second, vprofd's CPU
time in % of a CPU, the share of the library's samples without _start, and the samples sent with their stack.

Usage (root): pending-walk-cost.py BUILD_DIR [--baseline VPROFD] [--rounds N] [--seconds S] [--spin N]"""
import argparse
import os
import statistics

import bench_env

FREQUENCY = 499
LIBRARY_FUNCTIONS = ("deep_spin", "deep_call", "dlopen_plugin_work")


def cpu_seconds(pid):
    with open(f"/proc/{pid}/stat") as f:
        fields = f.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def one_run(env, build, seconds, spin):
    """loads/s, the daemon's CPU %, % of the library's samples without _start, the status counters' deltas."""
    workloads = f"{build}/tests/workloads"
    before = env.ctl_json("status")
    p = env.spawn_demo("--seconds", seconds, "--spin", spin, f"{workloads}/libvprof-dlopen-deep.so",
                       binary=f"{workloads}/vprof-dlopen")
    r = env.ctl("attach", p.pid)
    if r.returncode != 0:
        raise RuntimeError(f"attach failed: {r.stderr}")
    cpu = cpu_seconds(env.daemon.pid)
    env.go(p)
    out, _ = p.communicate(timeout=seconds + 60)
    daemon_cpu = 100 * (cpu_seconds(env.daemon.pid) - cpu) / seconds
    folded = env.ctl("report", p.pid, "--by", "stack").stdout
    in_library = without_start = 0
    for line in folded.splitlines():
        stack, _, count = line.rpartition(" ")
        frames = stack.split(";")
        if frames[-1].startswith(LIBRARY_FUNCTIONS):
            in_library += int(count)
            without_start += 0 if frames[0].startswith("_start") else int(count)
    env.ctl("detach", p.pid)
    status = env.ctl_json("status")
    deltas = {k: status[k] - before.get(k, 0) for k in status if isinstance(status[k], int) and "pending" in k}
    return int(out.split()[0]) / seconds, daemon_cpu, 100 * without_start / max(in_library, 1), deltas


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("build")
    ap.add_argument("--baseline", help="another vprofd to compare with")
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--seconds", type=float, default=8.0)
    ap.add_argument("--spin", type=int, default=200000)
    args = ap.parse_args()
    build = os.path.abspath(args.build)
    vprof_env = bench_env.setup(build)
    daemons = {"this build": f"{build}/daemon/vprofd"}
    if args.baseline:
        daemons["baseline"] = os.path.abspath(args.baseline)
    env = vprof_env.start_env_or_skip(frequency=FREQUENCY)
    env.daemon.terminate()
    env.daemon.wait()
    env.daemon = None
    results = {}
    try:
        for _ in range(args.rounds):
            for name, vprofd in daemons.items():
                os.environ["VPROFD"] = vprofd
                env.start_daemon()
                try:
                    rate, cpu, share, deltas = one_run(env, build, args.seconds, args.spin)
                finally:
                    env.daemon.terminate()
                    env.daemon.wait()
                    env.daemon = None
                r = results.setdefault(name, {"loads/s": [], "vprofd CPU %": [], "% without _start": [],
                                              "sent with stack": []})
                r["loads/s"].append(rate)
                r["vprofd CPU %"].append(cpu)
                r["% without _start"].append(share)
                r["sent with stack"].append(deltas.get("pending_walks_copied", 0))
                print(f"  {name}: {rate:.0f} loads/s, vprofd {cpu:.1f}% CPU, {share:.2f}% without _start, {deltas}",
                      flush=True)
    finally:
        env.stop()

    print(f"vprof-dlopen --spin {args.spin} with libvprof-dlopen-deep.so at {FREQUENCY} Hz, {args.seconds} s x "
          f"{args.rounds} rounds (median, min-max)")
    for name, r in results.items():
        for key, values in r.items():
            print(f"  {name:<12} {key:<18} {statistics.median(values):10.2f}  ({min(values):.2f} - {max(values):.2f})")


if __name__ == "__main__":
    main()
