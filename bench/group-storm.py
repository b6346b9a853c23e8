#!/usr/bin/env python3
# SPDX-License-Identifier: LGPL-2.1-or-later
"""What a group's storm costs the daemon: a process forking short-lived children, attached with --children.

tests/workloads/vprof-fork's storm mode forks N children at R a second, each burning MS ms of CPU in
fork_child_spin() and exiting. A fresh vprofd (private bus, 999 Hz by default) attaches the parent with --children; while the
storm runs, `vprofctl status` is run one call after the other. Printed: the children and how many have samples in
the group's tables, the storm's run length, the daemon's CPU time (utime + stime from /proc/PID/stat, from the
attach to the last child's exit and the drain after it) in all, per new member and as a share of one core, and
the status calls' median and worst time. With --perf, `perf record -g` runs on vprofd for the storm and its
report's top entries are printed: where the daemon's time per member goes.

    bench/group-storm.py [BUILD_DIR] [--children N] [--per-second R] [--child-ms MS] [--frequency HZ] [--no-status] [--snapshots]
                         [--perf]
                                                        (as root, after a build)"""
import argparse
import os
import re
import subprocess
import sys
import tempfile
import threading
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import bench_env  # noqa: E402


def cpu_seconds(pid):
    """utime + stime of process pid, in seconds."""
    with open(f"/proc/{pid}/stat") as f:
        fields = f.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("build", nargs="?", default="build")
    parser.add_argument("--workloads", help="the build whose tests/workloads to run (BUILD_DIR's by default): "
                        "to compare the daemon of another build on the same workload")
    parser.add_argument("--children", type=int, default=5000)
    parser.add_argument("--per-second", type=int, default=500)
    parser.add_argument("--child-ms", type=float, default=3)
    parser.add_argument("--frequency", type=int, default=999, help="the daemon's sampling frequency in Hz: a child "
                        "of 1 ms needs about 2000 to be sampled for sure")
    parser.add_argument("--max-targets", type=int, default=8192, help="MaxTargets=: above the children, none evicted")
    parser.add_argument("--no-status", action="store_true", help="no vprofctl status during the storm: the daemon's "
                        "CPU per member alone (each status call walks every target)")
    parser.add_argument("--snapshots", action="store_true", help="vprofd --verbose, and the periodic snapshots "
                        "of the tables (a stop of the event loop each) printed from its log; the debug lines cost "
                        "the daemon CPU of their own")
    parser.add_argument("--perf", action="store_true", help="perf record -g on vprofd during the storm")
    parser.add_argument("--perf-call-graph", default="fp", help="perf record's --call-graph: dwarf walks through "
                        "Debian's libc, which has no frame pointers (the report then shows callers)")
    args = parser.parse_args()
    build = os.path.abspath(args.build)
    if os.geteuid() != 0:
        sys.exit("group-storm: needs root")
    vprof_env = bench_env.setup(build)
    workloads = os.path.abspath(args.workloads or build) + "/tests/workloads"
    fork = f"{workloads}/vprof-fork"
    os.environ["VPROF_DEMO"] = f"{workloads}/vprof-demo"
    env = vprof_env.VprofEnv(frequency=args.frequency, extra_args=[f"--max-targets={args.max_targets}"] +
                                              (["--verbose"] if args.snapshots else [])).start()
    storm = perf = None
    try:
        # As the test does: the daemon above the storm's priority, kallsyms read before the storm.
        for pid in (env.daemon.pid, env.bus.pid):
            os.setpriority(os.PRIO_PROCESS, pid, 0)
        demo = env.spawn_demo("--seconds", "1")
        env.ctl("attach", demo.pid)
        env.go(demo)
        demo.wait(30)
        env.ctl("detach", demo.pid)

        storm = subprocess.Popen(["nice", "-n", "19", fork, "storm", "--wait-stdin", "--children", str(args.children),
                                  "--per-second", str(args.per_second), "--child-ms", str(args.child_ms)],
                                 stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
        assert storm.stdout.readline().startswith("ready ")
        r = env.ctl("attach", "--children", storm.pid)
        if r.returncode != 0:
            sys.exit(f"group-storm: attach failed: {r.stderr}")
        tmp = tempfile.mkdtemp(prefix="vprof-storm-")
        if args.perf:
            perf = subprocess.Popen(["perf", "record", "--call-graph", args.perf_call_graph, "-F", "499", "-o", f"{tmp}/perf.data", "-p",
                                     str(env.daemon.pid)], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
            time.sleep(0.5)
        status, stop = [], threading.Event()

        def poll_status():
            while not stop.is_set():
                t0 = time.monotonic()
                subprocess.run([os.environ["VPROFCTL"], "status"], env=env.env, capture_output=True, timeout=30)
                status.append(time.monotonic() - t0)

        poller = threading.Thread(target=poll_status)
        cpu0, wall0 = cpu_seconds(env.daemon.pid), time.monotonic()
        if not args.no_status:
            poller.start()
        storm.stdin.write("go\n")
        storm.stdin.flush()
        out = storm.stdout.read()
        storm.wait(300)
        env.ctl("status")  # the records of the last children drained
        cpu1, wall1 = cpu_seconds(env.daemon.pid), time.monotonic()
        stop.set()
        if not args.no_status:
            poller.join()
        if perf:
            perf.send_signal(2)
            perf.wait(60)
        children = [int(line.split()[1]) for line in out.splitlines() if line.startswith("child ")]
        done = next(line for line in out.splitlines() if line.startswith("done "))
        rows = {row["pid"]: row["inclusive"]
                for row in env.ctl_json("report", "--by", "process", storm.pid)["processes"]}
        in_tables = sum(1 for c in children if c in rows)
        g = next(g for g in env.ctl_json("list")["groups"] if g["group"] == str(storm.pid))
        with_samples = sum(1 for c in children if rows.get(c, 0) > 0)
        members = g["members"]
        status.sort()
        print(f"storm: {len(children)} children at {args.per_second}/s, {args.child_ms} ms of CPU each ({done})")
        print(f"group: {members} members, {g['refused']} refused; {in_tables} children in the tables, {with_samples} children with samples "
              f"({sum(rows.get(c, 0) for c in children)} samples)")
        print(f"daemon CPU: {cpu1 - cpu0:.2f} s over {wall1 - wall0:.1f} s ({(cpu1 - cpu0) / (wall1 - wall0):.0%} of "
              f"one core), {(cpu1 - cpu0) / max(members, 1) * 1e6:.0f} us per member")
        if status:
            print(f"vprofctl status: {len(status)} calls, median {status[len(status) // 2] * 1000:.0f} ms, worst "
                  f"{status[-1] * 1000:.0f} ms")
        if args.snapshots:
            saves = re.findall(r"Saved (\d+) targets? to \S+: (\d+) bytes in ([\d.]+) ms \(([\d.]+) ms to serialize",
                               env.log_text())
            print(f"snapshots: {len(saves)}" + "".join(f"; {n} targets, {int(b) >> 10} KiB in {ms} ms ({ser} ms to "
                                                       f"serialize)" for n, b, ms, ser in saves))
        if perf:
            report = subprocess.run(["perf", "report", "-i", f"{tmp}/perf.data", "--no-children", "--stdio",
                                     "--percent-limit", "1.5", "-g", "none", "--sort", "symbol"],
                                    capture_output=True, text=True).stdout
            print("perf report (self, over 1.5%):")
            print("\n".join(line for line in report.splitlines() if line.strip() and not line.startswith("#")))
    finally:
        if storm and storm.poll() is None:
            storm.kill()
        env.stop()


if __name__ == "__main__":
    main()
