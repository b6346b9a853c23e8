#!/usr/bin/env python3
# SPDX-License-Identifier: LGPL-2.1-or-later
"""Mappings in order with the samples (issue 25, part 2): vprof-dlopen loads two libraries in turn, A and B
(tests/workloads/vprof-dlopen-pair.c), which take the same address: each has its hot function where the other
has a decoy that never runs, so a sample named after the library that was mapped before is named after a decoy.
The changes of the process's executable mappings come to the daemon in the ring buffer, in order with its samples
(struct vprof_maps_change): at least 99% of the samples of the two hot functions and the decoys must be named
after a hot function, and walked with its library's table (main among their callers); the counters of the
changes move."""
import os
import time

import vprof_env

ENV = None
WARMUP = 2.0
SECONDS = 12.0
# About 60 ms a call: each library stays mapped for many samples at the default frequency.
SPIN = 40000000


def exec_starts(pid):
    """The start of each pair library's executable mapping now, by its file name."""
    starts = {}
    try:
        with open(f"/proc/{pid}/maps") as f:
            for line in f:
                fields = line.split()
                if len(fields) >= 6 and "x" in fields[1] and "libvprof-dlopen-pair-" in fields[5]:
                    starts[os.path.basename(fields[5])] = fields[0].split("-")[0]
    except FileNotFoundError:
        pass
    return starts


class MapsChange(vprof_env.TestCase):
    def test_same_address_named_right(self):
        workloads = os.path.dirname(os.environ["VPROF_DLOPEN"])
        libs = [os.path.join(workloads, f"libvprof-dlopen-pair-{s}.so") for s in ("a", "b")]
        before = ENV.ctl_json("status")
        p = ENV.spawn_demo("--seconds", WARMUP + SECONDS, "--spin", SPIN, *libs, binary=os.environ["VPROF_DLOPEN"])
        r = ENV.ctl("attach", p.pid)
        self.assertEqual(r.returncode, 0, r.stderr)
        ENV.go(p)
        seen = {}
        deadline = time.monotonic() + WARMUP
        while time.monotonic() < deadline:
            for name, start in exec_starts(p.pid).items():
                seen.setdefault(name, set()).add(start)
            time.sleep(0.01)
        self.assertEqual(ENV.ctl("reset", p.pid).returncode, 0)
        while p.poll() is None:
            for name, start in exec_starts(p.pid).items():
                seen.setdefault(name, set()).add(start)
            time.sleep(0.05)
        self.assertEqual(p.wait(60), 0)
        # The test means something only if the two took the same address.
        shared = seen.get("libvprof-dlopen-pair-a.so", set()) & seen.get("libvprof-dlopen-pair-b.so", set())
        print(f"\nmaps-change: executable mappings seen {seen}", flush=True)
        self.assertTrue(shared, seen)

        folded = ENV.ctl("report", p.pid, "--by", "stack")
        self.assertEqual(folded.returncode, 0, folded.stderr)
        hot = {"pair_spin_a": 0, "pair_spin_b": 0}
        decoy = {"pair_decoy_a": 0, "pair_decoy_b": 0}
        hot_with_main = hot_whole = 0
        for line in folded.stdout.splitlines():
            stack, _, count = line.rpartition(" ")
            frames = stack.split(";")
            n = int(count)
            leaf = frames[-1]
            for table in (hot, decoy):
                for name in table:
                    if leaf.startswith(name):
                        table[name] += n
                        if table is hot and any(f.startswith("main") for f in frames):
                            hot_with_main += n
                        if table is hot and frames[0].startswith("_start"):
                            hot_whole += n
        named = sum(hot.values()) + sum(decoy.values())
        status = ENV.ctl_json("status")
        d = {k: status[k] - before[k] for k in status if isinstance(status[k], int)}
        print(f"maps-change: hot {hot}, decoys {decoy}, hot with main {hot_with_main}, from _start {hot_whole}; "
              f"changes {d.get('mapping_changes')}, lost {d.get('mapping_changes_lost')}, read late "
              f"{d.get('mapping_changes_stale')}, missed {d.get('mapping_changes_missed')}, samples with stale "
              f"mappings {d.get('samples_with_stale_mappings')}", flush=True)
        self.assertGreater(named, 200)
        self.assertGreater(min(hot.values()), 50, hot)
        self.assertGreaterEqual(sum(hot.values()), 0.99 * named, (hot, decoy))
        # Walked with the table of the library that was there: main among the callers, and most walks complete
        # (a sample taken before the new mappings reached the walk ends at a frame-pointer step, main recovered
        # by the daemon from its CFI).
        self.assertGreaterEqual(hot_with_main, 0.99 * sum(hot.values()))
        self.assertGreaterEqual(hot_whole, 0.95 * sum(hot.values()))
        # At least an mmap() and a munmap() of executable memory for each load, none lost.
        self.assertGreater(d["mapping_changes"], 2 * 50)
        self.assertEqual(d["mapping_changes_lost"], 0)
        self.assertEqual(d["samples_with_stale_mappings"], 0)


def setUpModule():
    global ENV
    ENV = vprof_env.start_module_env()


if __name__ == "__main__":
    vprof_env.main()
