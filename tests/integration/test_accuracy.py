#!/usr/bin/env python3
# SPDX-License-Identifier: LGPL-2.1-or-later
"""Every function's inclusive and exclusive percent against the truth, on a workload that measures its own
(vprof-split: work split in known shares between a program and its shared library, with recursion through
both), built by GCC -O2 without frame pointers and with them, profiled through the walk by the unwind tables
(the default); the frame-pointer build also through the kernel's frame-pointer walk (--unwind-table-size=0).
Each run has a warm-up (the daemon compiles the unwind tables of the files its first samples fell back in), then
its profile is reset and the workload told to count again (SIGUSR1), and it runs for SECONDS more, so that the
profile and the truth cover the same time.

Every function vprof reports is checked, within TOLERANCE points, inclusive and exclusive:

- the workload's functions against the truth it wrote;
- the callers of its work (main, _start, split_run, libc's __libc_start_*) against 100% inclusive, 0% exclusive;
- every other function in user space (the clock reads: libc's clock_gettime, the vDSO's) against 0%: the
  workload's unmeasured share is under 0.5%.

Kernel functions are the exception. The workload's thread spends some of its CPU time in the kernel while it
runs its functions (the timer interrupts, the scheduler's switches, more on a busy machine: 1-2% of the
samples), which its clock counts in whatever function was running, and vprof in the kernel function of frame 0
(COUNTING.md), so the workload's functions get its exclusive truth less that kernel share (the samples of every
kernel function: interrupts fall at random, in each function in proportion to its time); and the kernel
functions themselves, of which the workload knows nothing, only a bound: each under KERNEL_BOUND.

At 999 Hz for 10 s the sampling error of a share is a few tenths of a point (a periodic sample of a steady
workload), well inside TOLERANCE."""
import json
import os
import signal
import sys
import time

import vprof_env

ENV = None
TOLERANCE = 1.5
KERNEL_BOUND = 5.0
WARMUP = 2.0
SECONDS = 10.0
# Modules in brackets that are not the kernel's.
USER_PSEUDO_MODULES = {"[vdso]", "[anon]", "[heap]", "[stack]", "[unknown]", "[other]"}
# Above the work in every sample: inclusive 100%, exclusive 0%.
CALLERS = {"main", "_start", "split_run", "__libc_start_call_main", "__libc_start_main", "__libc_start_main_impl"}


def profile_split(env, binary):
    """vprof-split attached, reset after WARMUP, run SECONDS more; (its functions' rows, its truth)."""
    truth_path = os.path.join(env.tmp, f"truth-{os.path.basename(binary)}.json")
    p = env.spawn_demo("--seconds", WARMUP + SECONDS, "--truth", truth_path, binary=binary)
    r = env.ctl("attach", p.pid)
    assert r.returncode == 0, r.stderr
    env.go(p)
    time.sleep(WARMUP)
    r = env.ctl("reset", p.pid)
    assert r.returncode == 0, r.stderr
    os.kill(p.pid, signal.SIGUSR1)  # the truth counts from now on too
    assert p.wait(SECONDS + 60) == 0
    report = env.ctl_json("report", p.pid)
    env.ctl("detach", p.pid)
    with open(truth_path) as f:
        return report, json.load(f)


class Accuracy(vprof_env.TestCase):
    def check(self, env, build, callers=("main", "_start")):
        """Every function of a profile of vprof-split-BUILD within TOLERANCE of the truth; callers: the callers
        of the work that must be in every sample."""
        binary = os.environ["VPROF_SPLIT_" + build.upper()]
        report, truth = profile_split(env, binary)
        program, library = os.path.basename(binary), f"libvprof-split-{build}.so"
        rows = {}
        for r in report["functions"]:
            rows.setdefault(r["function"], []).append(r)
        print(f"\naccuracy {build}: {report['total_samples']} samples, truth over {truth['cpu_seconds']:.2f} s of "
              f"CPU, unmeasured {truth['unmeasured_percent']:.2f}%; functions under 0.1% not shown", file=sys.stderr)
        print(f"  {'function':<28} {'module':<26} {'incl':>7} {'true':>7} {'diff':>6}   "
              f"{'excl':>7} {'true':>7} {'diff':>6}", file=sys.stderr)
        errors = []

        def is_kernel(r):
            return r["module"].startswith("[") and r["module"] not in USER_PSEUDO_MODULES

        kernel = sum(r["exclusive_percent"] for r in report["functions"] if is_kernel(r))
        user_share = 1.0 - kernel / 100.0

        def compare(r, true_incl, true_excl):
            di, de = r["inclusive_percent"] - true_incl, r["exclusive_percent"] - true_excl
            if max(r["inclusive_percent"], true_incl) >= 0.1:
                print(f"  {r['function'][:28]:<28} {r['module'][:26]:<26} {r['inclusive_percent']:7.2f} "
                      f"{true_incl:7.2f} {di:+6.2f}   {r['exclusive_percent']:7.2f} {true_excl:7.2f} {de:+6.2f}",
                      file=sys.stderr)
            if abs(di) > TOLERANCE or abs(de) > TOLERANCE:
                errors.append(f"{r['function']} ({r['module']}): inclusive {r['inclusive_percent']:.2f}% for "
                              f"{true_incl:.2f}%, exclusive {r['exclusive_percent']:.2f}% for {true_excl:.2f}%")

        for name, t in truth["functions"].items():
            found = rows.pop(name, [])
            module = library if name.startswith("split_lib_") else program
            self.assertEqual([r["module"] for r in found], [module], f"{name}: {found}")
            compare(found[0], t["inclusive_percent"], t["exclusive_percent"] * user_share)
        for name in callers:
            self.assertIn(name, rows, f"{name} missing")
        for name in sorted(rows, key=lambda n: -max(r["inclusive_percent"] for r in rows[n])):
            for r in rows[name]:
                if name in CALLERS:
                    compare(r, 100.0, 0.0)
                elif not is_kernel(r):
                    compare(r, 0.0, 0.0)
        print(f"  kernel functions: {kernel:.2f}% of the samples in all, each inclusive and exclusive under "
              f"{KERNEL_BOUND:g}%", file=sys.stderr)
        for r in report["functions"]:
            if not is_kernel(r):
                continue
            if r["inclusive_percent"] >= 0.1:
                print(f"  {r['function'][:28]:<28} {r['module'][:26]:<26} {r['inclusive_percent']:7.2f} "
                      f"{'':>7} {'':>6}   {r['exclusive_percent']:7.2f}", file=sys.stderr)
            if max(r["inclusive_percent"], r["exclusive_percent"]) >= KERNEL_BOUND:
                errors.append(f"{r['function']} ({r['module']}): {r['inclusive_percent']:.2f}% inclusive, "
                              f"{r['exclusive_percent']:.2f}% exclusive")
        self.assertEqual(errors, [])

    def test_without_frame_pointers(self):
        self.check(ENV, "nofp")

    def test_with_frame_pointers(self):
        # GCC sets up no frame in a leaf: the walk by the tables, not by rbp, finds the leaf's caller.
        self.check(ENV, "fp")

    def test_with_frame_pointers_kernel_walk(self):
        # The kernel's frame-pointer walk skips a leaf's caller; the daemon puts it back from the leaf's CFI and
        # the record's words of stack (unwinder_step()). The chain ends in Debian's libc, built without frame
        # pointers: __libc_start_call_main is its last frame, without _start and __libc_start_main above it.
        env = self.start_env(frequency=999, extra_args=["--unwind-table-size=0"])
        self.check(env, "fp", callers=("main", "__libc_start_call_main"))


def setUpModule():
    global ENV
    ENV = vprof_env.start_module_env(frequency=999)


if __name__ == "__main__":
    vprof_env.main()
