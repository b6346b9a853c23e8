#!/usr/bin/env python3
# SPDX-License-Identifier: LGPL-2.1-or-later
"""What the crash journal costs: vprofd's CPU time and bytes written per second, with and without it.

    bench/persistence.py [BUILD_DIR] [--rounds N] [--seconds S] [--distinct N] [--json FILE] [--smoke]
    (as root, after a build; about (2 x rounds x (seconds + 10) + warm-up) seconds)

One target, tests/workloads/vprof-stacks with --distinct (default 100,000 stacks) on two threads, is profiled
at 999 Hz on every CPU, by a vprofd on a private bus whose state directory is on /var/tmp (a real disk, for
write_bytes). A warm-up of --warmup seconds at 10 kHz first fills the target's tables with its distinct stacks
(--max-stacks 200000; a sample lands anywhere along one of the N paths, so there are more stacks than paths and
the tables may reach that limit, past which stacks count in the "other" stack); then, in rounds, the
daemon is restarted on that state directory with the journal (--journal-interval=1, the default) and without it
(--journal-interval=0), the order alternating from round to round, both with the default 30 s snapshots. Each
run measures, after 6 s to settle (the restore and its snapshot), over --seconds: the daemon's CPU time
(/proc/PID/schedstat, as a share of one core), its bytes written (/proc/PID/io: write_bytes, what reached the
block layer, and wchar, what it passed to write()), the journal's growth (its size polled every 250 ms), the
time the daemon spent writing journal records (its debug log times each one) and the target's samples per
second. It prints each run, then the medians and the difference; the aim is less than 1% of one core for the
journal. The stacks in the target's tables are counted in the state file after each run."""
import argparse
import json
import os
import re
import shutil
import signal
import statistics
import struct
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import bench_env  # noqa: E402

JOURNAL = "targets.journal"


def schedstat_ns(pid):
    with open(f"/proc/{pid}/schedstat") as f:
        return int(f.read().split()[0])


def proc_io(pid):
    with open(f"/proc/{pid}/io") as f:
        return {k: int(v) for k, v in (line.split(":") for line in f)}


def target_samples(env, pid):
    return next(t["samples"] for t in env.ctl_json("list")["targets"] if t["pid"] == pid)


def saved_stacks(state):
    """The number of stacks in the (one) target's tables, from the state file (daemon/state-store.h,
    common/profile/profile-serialize.h)."""
    with open(os.path.join(state, "targets.state"), "rb") as f:
        buf = f.read()

    def sections(start, end):
        out = {}
        while start < end:
            tag, _, size = struct.unpack_from("<IIQ", buf, start)
            out[struct.pack("<I", tag).decode()] = (start + 16, size)
            start += 16 + size
        return out

    target = sections(32, len(buf))["TARG"]
    prof = sections(target[0], target[0] + target[1])["PROF"]
    stck = sections(prof[0], prof[0] + prof[1])["STCK"]
    return struct.unpack_from("<I", buf, stck[0] + 8 + 32)[0]


def run(env, journal, frequency, pid, seconds, settle):
    """Start vprofd with or without the journal on env's state directory, measure, stop it."""
    env.frequency = frequency
    env.extra_args = ["--verbose", "--max-stacks=200000", f"--journal-interval={1 if journal else 0}"]
    mark = len(env.log_text()) if os.path.exists(env.daemon_log) else 0
    env.start_daemon()
    time.sleep(settle)
    path = os.path.join(env.state_directory, JOURNAL)
    dpid = env.daemon.pid
    samples0 = target_samples(env, pid)
    log0 = len(env.log_text())
    cpu0, io0, t0 = schedstat_ns(dpid), proc_io(dpid), time.monotonic()
    last = os.path.getsize(path) if os.path.exists(path) else 0
    growth = 0
    while time.monotonic() - t0 < seconds:
        time.sleep(0.25)
        size = os.path.getsize(path) if os.path.exists(path) else 0
        # A smaller file is a new journal (after a snapshot): all of it is new.
        growth += size - last if size >= last else size
        last = size
    cpu1, io1, t1 = schedstat_ns(dpid), proc_io(dpid), time.monotonic()
    window = env.log_text()[log0:]
    samples1 = target_samples(env, pid)
    elapsed = t1 - t0
    records = [float(ms) for ms in re.findall(r"Journal record \d+: .* bytes in ([0-9.]+) ms", window)]
    env.daemon.send_signal(signal.SIGTERM)
    status = env.daemon.wait(60)
    log = env.log_text()[mark:]
    if status != 0:
        raise RuntimeError(f"vprofd exited with {status}:\n{log[-3000:]}")
    return {
        "journal": journal,
        "seconds": elapsed,
        "cpu_percent": 100.0 * (cpu1 - cpu0) / 1e9 / elapsed,
        "write_bytes_per_sec": (io1["write_bytes"] - io0["write_bytes"]) / elapsed,
        "wchar_per_sec": (io1["wchar"] - io0["wchar"]) / elapsed,
        "journal_bytes_per_sec": growth / elapsed,
        "samples_per_sec": (samples1 - samples0) / elapsed,
        "journal_records": len(records),
        "journal_ms_per_sec": sum(records) / elapsed,
        "stacks": saved_stacks(env.state_directory),
        # Periodic ones: not the one after the restore, nor the one at the stop.
        "snapshots": len(re.findall(r"Saved \d+ targets? to ", log)) - 2,
    }


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("build", nargs="?", default="build")
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--seconds", type=float, default=60)
    ap.add_argument("--distinct", type=int, default=100000)
    ap.add_argument("--warmup", type=float, default=60, help="seconds at 10 kHz to fill the tables")
    ap.add_argument("--json", metavar="FILE")
    ap.add_argument("--smoke", action="store_true", help="tiny: only checks that every figure is printed")
    a = ap.parse_args()
    if a.smoke:
        a.rounds, a.seconds, a.distinct, a.warmup = 1, 3, 2000, 2
    build = os.path.abspath(a.build)
    vprof_env = bench_env.setup(build)
    vprof_env.require_bpf_or_skip()

    state = tempfile.mkdtemp(prefix="vprof-bench-state-", dir="/var/tmp")
    env = vprof_env.VprofEnv(frequency=10000, extra_args=["--verbose", "--max-stacks=200000",
                                                          "--journal-interval=0"])
    env.state_directory = state
    workload = None
    try:
        env.start()
        workload = subprocess.Popen([f"{build}/tests/workloads/vprof-stacks", "--distinct", str(a.distinct),
                                     "--threads", "2", "--seconds", "100000", "--wait-stdin"],
                                    stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
        pid = int(workload.stdout.readline().split()[1])
        r = env.ctl("attach", pid)
        if r.returncode != 0:
            raise RuntimeError(r.stderr)
        env.go(workload)
        print(f"warm-up: {a.warmup:.0f} s at 10 kHz of vprof-stacks --distinct {a.distinct} (PID {pid})", flush=True)
        time.sleep(a.warmup)
        env.daemon.send_signal(signal.SIGTERM)
        if env.daemon.wait(60) != 0:
            raise RuntimeError(env.log_text()[-3000:])

        runs = []
        for i in range(a.rounds):
            for journal in ((True, False) if i % 2 == 0 else (False, True)):
                res = run(env, journal, 999, pid, a.seconds, 1 if a.smoke else 6)
                res["round"] = i + 1
                runs.append(res)
                print(f"round {i + 1}, {'with' if journal else 'without'} the journal: "
                      f"CPU {res['cpu_percent']:.2f}% of a core, write_bytes {res['write_bytes_per_sec'] / 1024:.1f} "
                      f"KiB/s, wchar {res['wchar_per_sec'] / 1024:.1f} KiB/s, journal "
                      f"{res['journal_bytes_per_sec'] / 1024:.1f} KiB/s ({res['journal_records']} records, "
                      f"{res['journal_ms_per_sec']:.3f} ms/s writing them), {res['samples_per_sec']:.0f} samples/s, "
                      f"{res['snapshots']} snapshots, {res['stacks']} stacks", flush=True)
        stacks = min(r["stacks"] for r in runs)
    finally:
        if workload:
            workload.kill()
            workload.wait()
        env.stop()
        shutil.rmtree(state, ignore_errors=True)

    def median(journal, key):
        return statistics.median(r[key] for r in runs if r["journal"] == journal)

    keys = [("cpu_percent", "vprofd CPU, % of one core", "{:.2f}"),
            ("write_bytes_per_sec", "bytes to the disk (write_bytes), KiB/s", "{:.1f}"),
            ("wchar_per_sec", "bytes written (wchar), KiB/s", "{:.1f}"),
            ("journal_bytes_per_sec", "journal growth, KiB/s", "{:.1f}"),
            ("journal_ms_per_sec", "time writing journal records, ms/s", "{:.3f}"),
            ("samples_per_sec", "target samples/s", "{:.0f}")]
    print(f"\n{a.rounds} rounds of {a.seconds:.0f} s at 999 Hz, vprof-stacks --distinct {a.distinct} on 2 threads, "
          f"at least {stacks} stacks in its tables; medians:")
    print(f"{'':<42} {'journal':>12} {'no journal':>12} {'difference':>12}")
    summary = {}
    for key, name, fmt in keys:
        scale = 1024 if key.endswith("bytes_per_sec") or key == "wchar_per_sec" else 1
        with_j, without = median(True, key) / scale, median(False, key) / scale
        summary[key] = {"journal": with_j * scale, "no_journal": without * scale}
        print(f"{name:<42} {fmt.format(with_j):>12} {fmt.format(without):>12} {fmt.format(with_j - without):>12}")
    extra = summary["cpu_percent"]["journal"] - summary["cpu_percent"]["no_journal"]
    writing = summary["journal_ms_per_sec"]["journal"] / 10
    print(f"extra CPU of the journal: {extra:.2f} percentage points of one core by schedstat (aim: < 1), of which "
          f"writing its records {writing:.3f} points by the daemon's own timing")
    if a.json:
        with open(a.json, "w") as f:
            json.dump({"runs": runs, "medians": summary, "stacks": stacks, "distinct": a.distinct,
                       "seconds": a.seconds, "rounds": a.rounds}, f, indent=2)


if __name__ == "__main__":
    main()
