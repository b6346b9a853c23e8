#!/usr/bin/env python3
# SPDX-License-Identifier: LGPL-2.1-or-later
"""The walk by the unwind tables against hostile targets, all attached at once beside a well-behaved one:

- fixture-unwind-garbage and fixture-unwind-truncated: a program whose .eh_frame is garbage, or cut in the
  middle of a record (tests/fixtures/damage-eh-frame.py), so that its table is wrong or partial;
- fixture-unwind-nocfi: a program without CFI for its own code (the C runtime's only);
- vprof-nofp --depth 200: a stack deeper than the walk's 128 frames;
- vprof-dlopen: libraries loaded and unloaded in a loop (dlopen, dlsym, a call, dlclose), without frame
  pointers: one with CFI, a copy of it (another file, the same build-id) and one with no CFI at all, which
  mostly take the same addresses in turn;
- vprof-split-nofp, the well-behaved one: code without frame pointers that measures its own truth
  (test_accuracy.py).

vprofd must not crash and must keep answering; every walk must be counted once by how it ended: the per-CPU
outcome counters of the BPF program (the Walks* properties, `vprofctl status`), where the five ends add up to
the samples of targets, kept or lost; and the well-behaved target's stacks must stay whole
(main and _start in every sample, its functions near their truth). Then two busy targets on both CPUs at 999 Hz
for 20 s lose no sample.

What vprof-dlopen's own profile shows is not checked here: test_maps_change.py checks that a library replaced by
another at the same addresses is named and walked after the one mapped when each sample was taken."""
import json
import os
import shutil
import signal
import sys
import time

import vprof_env

ENV = None
WARMUP = 2.0
SECONDS = 15.0


ENDS = ["walks_complete", "walks_ended_at_frame_pointer", "walks_at_depth_limit", "walks_faulted", "walks_bad"]
QUALIFIERS = ["walks_fell_back", "walks_outside_cfi", "walks_bad_rule", "walks_unknown_pc", "walks_no_mappings"]


def functions(pid):
    return {row["function"]: row for row in ENV.ctl_json("report", pid)["functions"]}


class Hostile(vprof_env.TestCase):
    def test_hostile_targets_at_once(self):
        workloads = os.path.dirname(os.environ["VPROF_DLOPEN"])
        copy = os.path.join(ENV.tmp, "libvprof-dlopen-copy.so")
        shutil.copy(os.path.join(workloads, "libvprof-dlopen-cfi.so"), copy)
        truth_path = os.path.join(ENV.tmp, "truth-robust.json")
        commands = {
            "garbage": [os.environ["VPROF_FIXTURE_UNWIND_GARBAGE"]],
            "truncated": [os.environ["VPROF_FIXTURE_UNWIND_TRUNCATED"]],
            "nocfi": [os.environ["VPROF_FIXTURE_UNWIND_NOCFI"]],
            "deep": [os.environ["VPROF_NOFP"], "--depth", "200"],
            "dlopen": [os.environ["VPROF_DLOPEN"], os.path.join(workloads, "libvprof-dlopen-cfi.so"),
                       os.path.join(workloads, "libvprof-dlopen-nocfi.so"), copy],
            "split": [os.environ["VPROF_SPLIT_NOFP"], "--truth", truth_path],
        }
        status_before = ENV.ctl_json("status")
        procs = {}
        for name, cmd in commands.items():
            procs[name] = ENV.spawn_demo("--seconds", WARMUP + SECONDS, *cmd[1:], binary=cmd[0])
            r = ENV.ctl("attach", procs[name].pid)
            self.assertEqual(r.returncode, 0, r.stderr)
        for p in procs.values():
            ENV.go(p)
        time.sleep(WARMUP)
        for p in procs.values():
            self.assertEqual(ENV.ctl("reset", p.pid).returncode, 0)
        os.kill(procs["split"].pid, signal.SIGUSR1)
        # The daemon answers all along.
        slowest = 0.0
        deadline = time.monotonic() + SECONDS - 1
        while time.monotonic() < deadline:
            t = time.monotonic()
            r = ENV.ctl("status")
            slowest = max(slowest, time.monotonic() - t)
            self.assertEqual(r.returncode, 0, r.stderr)
            self.assertIsNone(ENV.daemon.poll(), "vprofd exited")
            time.sleep(0.5)
        for name, p in procs.items():
            self.assertEqual(p.wait(60), 0, name)
        print(f"\nrobustness: slowest status call {slowest:.3f} s", file=sys.stderr)

        # Every walk counted once by its end: the samples of targets, kept or lost for want of room.
        status = ENV.ctl_json("status")
        d = {k: status[k] - status_before[k] for k in status if isinstance(status[k], int)}
        print("robustness: walks " + ", ".join(f"{k.removeprefix('walks_')} {d[k]}" for k in ENDS + QUALIFIERS),
              file=sys.stderr)
        self.assertEqual(sum(d[k] for k in ENDS), d["samples_kept"] + d["samples_lost"], d)
        for k in QUALIFIERS:
            self.assertLessEqual(d[k], sum(d[k] for k in ENDS), k)
        # What each hostile target brings: walks cut at the depth (each a truncated stack), frame-pointer steps
        # for want of a table (no CFI), at pcs of no pushed mapping (dlopen).
        self.assertLessEqual(d["walks_at_depth_limit"], d["stacks_truncated"])
        for k in ("walks_complete", "walks_at_depth_limit", "walks_fell_back", "walks_unknown_pc"):
            self.assertGreater(d[k], 0, k)
        self.assertEqual(status["samples_seen"],
                         status["samples_kept"] + status["samples_discarded"] + status["samples_lost"])

        # Every target has its profile.
        for name, p in procs.items():
            report = ENV.ctl_json("report", p.pid)
            self.assertGreater(report["total_samples"], 0, name)
            self.assertEqual(sum(r["exclusive"] for r in report["functions"]), report["total_samples"], name)
        rows = functions(procs["deep"].pid)
        self.assertGreater(rows["nofp_recurse"]["inclusive_percent"], 90.0)

        # The well-behaved target's stacks are whole, its shares near the truth (a third of a CPU each: fewer
        # samples than test_accuracy.py's, hence the wider tolerance).
        rows = functions(procs["split"].pid)
        with open(truth_path) as f:
            truth = json.load(f)
        for name in ("main", "_start"):
            print(f"robustness: split {name} inclusive {rows[name]['inclusive_percent']:.2f}%", file=sys.stderr)
            self.assertGreater(rows[name]["inclusive_percent"], 98.5, name)
        for name, t in truth["functions"].items():
            r = rows[name]
            print(f"robustness: split {name} inclusive {r['inclusive_percent']:.2f}% for "
                  f"{t['inclusive_percent']:.2f}%, exclusive {r['exclusive_percent']:.2f}% for "
                  f"{t['exclusive_percent']:.2f}%", file=sys.stderr)
            self.assertLess(abs(r["inclusive_percent"] - t["inclusive_percent"]), 3.0, name)
            self.assertLess(abs(r["exclusive_percent"] - t["exclusive_percent"]), 3.0, name)
        for p in procs.values():
            ENV.ctl("detach", p.pid)

    def test_two_busy_targets_lose_nothing(self):
        seconds = 20
        before = ENV.ctl_json("status")
        procs = [ENV.spawn_demo("--seconds", seconds, binary=os.environ["VPROF_SPLIT_NOFP"]),
                 ENV.spawn_demo("--seconds", seconds, binary=os.environ["VPROF_NOFP"])]
        for p in procs:
            self.assertEqual(ENV.ctl("attach", p.pid).returncode, 0)
        for p in procs:
            ENV.go(p)
        cpu = 0.0
        for p in procs:
            _, status, usage = os.wait4(p.pid, 0)
            p.returncode = os.waitstatus_to_exitcode(status)
            self.assertEqual(p.returncode, 0)
            cpu += usage.ru_utime + usage.ru_stime
        after = ENV.ctl_json("status")
        samples = sum(ENV.ctl_json("report", p.pid)["total_samples"] for p in procs)
        lost = after["samples_lost"] - before["samples_lost"]
        print(f"\nrobustness: two busy targets {seconds} s at {ENV.frequency} Hz: {samples} samples for "
              f"{cpu:.1f} s of CPU ({cpu * ENV.frequency:.0f} expected), {lost} lost", file=sys.stderr)
        self.assertEqual(lost, 0)
        self.assertEqual(after["stack_errors"], before["stack_errors"])
        self.assertEqual(after["samples_seen"], after["samples_kept"] + after["samples_discarded"] +
                         after["samples_lost"])
        self.assertLess(abs(samples - cpu * ENV.frequency) / (cpu * ENV.frequency), 0.1)
        for p in procs:
            # Not reset after a warm-up (the samples are compared with the CPU time): the first samples, taken
            # before the daemon compiled the tables of the files they fell back in, have no main.
            self.assertGreater(functions(p.pid)["main"]["inclusive_percent"], 93.0)
            ENV.ctl("detach", p.pid)


def setUpModule():
    global ENV
    ENV = vprof_env.start_module_env(frequency=999)


if __name__ == "__main__":
    vprof_env.main()
