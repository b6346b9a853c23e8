#!/usr/bin/env python3
# SPDX-License-Identifier: LGPL-2.1-or-later
"""The first samples of a dlopen()ed library without frame pointers (issue 25, part 3): vprof-dlopen loads
libvprof-dlopen-deep.so again and again (tests/workloads/vprof-dlopen-deep.c), each time a new mapping, and spins
at the bottom of a chain of 24 calls in it. A sample taken before the library's unwind table reaches the BPF walk
would be walked by frame pointers, which lose the chain's callers; the BPF program sends such a sample with a copy
of the top of its stack instead, and the daemon finishes its walk with its own CFI interpreter. At most 1% of the
library's samples may lack _start (or main) in their stack, and the counters of those walks move."""
import os

import vprof_env

ENV = None
SECONDS = 20.0
# About 30 ms a load: many loads, each with its first samples.
SPIN = 20000000
# Low enough that a daemon short of CPU time on a loaded machine for a quarter of a second leaves fewer samples
# awaiting a table than the rate bound lets through at once (128 on each CPU).
FREQUENCY = 199
LIBRARY_FUNCTIONS = ("deep_spin", "deep_call", "dlopen_plugin_work")


class DlopenFirstSamples(vprof_env.TestCase):
    def test_first_samples_walked_whole(self):
        workloads = os.path.dirname(os.environ["VPROF_DLOPEN"])
        lib = os.path.join(workloads, "libvprof-dlopen-deep.so")
        before = ENV.ctl_json("status")
        p = ENV.spawn_demo("--seconds", SECONDS, "--spin", SPIN, lib, binary=os.environ["VPROF_DLOPEN"])
        r = ENV.ctl("attach", p.pid)
        self.assertEqual(r.returncode, 0, r.stderr)
        ENV.go(p)  # the first dlopen() comes after the attach
        self.assertEqual(p.wait(SECONDS + 60), 0)
        loads = int(p.stdout.read().split()[0])

        folded = ENV.ctl("report", p.pid, "--by", "stack")
        self.assertEqual(folded.returncode, 0, folded.stderr)
        in_library = without_start = without_main = 0
        for line in folded.stdout.splitlines():
            stack, _, count = line.rpartition(" ")
            frames = stack.split(";")
            n = int(count)
            if not frames[-1].startswith(LIBRARY_FUNCTIONS):
                continue
            in_library += n
            if not frames[0].startswith("_start"):
                without_start += n
            if not any(f.startswith("main") for f in frames):
                without_main += n
        status = ENV.ctl_json("status")
        d = {k: status[k] - before[k] for k in status if isinstance(status[k], int)}
        share = without_start / max(in_library, 1)
        print(f"\ndlopen-first-samples: {loads} loads, {in_library} samples in the library, "
              f"{without_start} without _start ({100 * share:.2f}%), {without_main} without main; walks copied "
              f"{d.get('pending_walks_copied')}, finished {d.get('pending_walks_finished')}, kept as walked "
              f"{d.get('pending_walks_unfinished')}, over the rate {d.get('pending_walks_over_rate')}, no room "
              f"{d.get('pending_walks_no_room')}; fell back {d.get('walks_fell_back')}, unknown pc "
              f"{d.get('walks_unknown_pc')}", flush=True)
        self.assertGreater(loads, 50)
        self.assertGreater(in_library, 800)
        self.assertLessEqual(without_start, 0.01 * in_library)
        self.assertLessEqual(without_main, 0.01 * in_library)
        # The first samples after the loads went the new way, and the daemon finished their walks.
        self.assertGreater(d["pending_walks_copied"], 0)
        self.assertGreater(d["pending_walks_finished"], 0)
        self.assertLessEqual(d["pending_walks_finished"] + d["pending_walks_unfinished"], d["pending_walks_copied"])
        # Each sample counted once, those sent with their stack included: the target's tables hold every kept one.
        total = ENV.ctl_json("report", p.pid)["total_samples"]
        self.assertEqual(total + d["samples_unclaimed"], d["samples_kept"])


def setUpModule():
    global ENV
    ENV = vprof_env.start_module_env(frequency=FREQUENCY)


if __name__ == "__main__":
    vprof_env.main()
