#!/usr/bin/env python3
# SPDX-License-Identifier: LGPL-2.1-or-later
"""Inlined functions as frames (COUNTING.md): vprof-inline, built by GCC -O2 -g without frame pointers, whose
run_batch() holds two always_inline stages (stage_hash, holding mix_round, and stage_sum) and which measures
each stage's share of its CPU time with its thread's clock. After a warm-up, a reset and SIGUSR1 (the workload's
measure starts over), SECONDS of samples; then within TOLERANCE points of the truth:

- stage_hash and stage_sum inclusive; stage_sum exclusive; stage_hash's exclusive plus mix_round's (the clock
  cannot part them, and mix_round, a leaf, has its inclusive equal to its exclusive);
- run_batch, into which they were inlined, keeps only its own share: exclusive at most the workload's rest
  (its own code, main's loop, the clock reads), inclusive at least the two stages together.

Exclusive truths are scaled by the user share of the samples, as test_accuracy.py does: the kernel's share of
the thread's time (interrupts) counts in kernel functions."""
import json
import os
import signal
import sys
import time

import vprof_env

TOLERANCE = 2.0
WARMUP = 2.0
SECONDS = 8.0
USER_PSEUDO_MODULES = {"[vdso]", "[anon]", "[heap]", "[stack]", "[unknown]", "[other]"}


class Inline(vprof_env.TestCase):
    def test_inlined_functions_count_as_frames(self):
        env = ENV
        binary = os.environ["VPROF_INLINE"]
        truth_path = os.path.join(env.tmp, "truth-inline.json")
        p = env.spawn_demo("--seconds", WARMUP + SECONDS, "--truth", truth_path, binary=binary)
        r = env.ctl("attach", p.pid)
        self.assertEqual(r.returncode, 0, r.stderr)
        env.go(p)
        time.sleep(WARMUP)
        r = env.ctl("reset", p.pid)
        self.assertEqual(r.returncode, 0, r.stderr)
        os.kill(p.pid, signal.SIGUSR1)
        self.assertEqual(p.wait(SECONDS + 60), 0)
        report = env.ctl_json("report", p.pid)
        env.ctl("detach", p.pid)
        with open(truth_path) as f:
            truth = json.load(f)

        module = os.path.basename(binary)
        rows = {r["function"]: r for r in report["functions"] if r["module"] == module}
        kernel = sum(r["exclusive_percent"] for r in report["functions"]
                     if r["module"].startswith("[") and r["module"] not in USER_PSEUDO_MODULES)
        user_share = 1.0 - kernel / 100.0
        print(f"\ninline: {report['total_samples']} samples, kernel {kernel:.2f}%, truth {truth}", file=sys.stderr)
        for name in ("mix_round", "stage_hash", "stage_sum", "run_batch", "main"):
            self.assertIn(name, rows, f"{name} missing from {sorted(rows)}")
            r = rows[name]
            print(f"  {name:<12} inclusive {r['inclusive_percent']:6.2f}  exclusive {r['exclusive_percent']:6.2f}",
                  file=sys.stderr)
        errors = []

        def near(what, got, want):
            if abs(got - want) > TOLERANCE:
                errors.append(f"{what}: {got:.2f}% for {want:.2f}%")

        t = truth["functions"]
        near("stage_hash inclusive", rows["stage_hash"]["inclusive_percent"], t["stage_hash"]["inclusive_percent"])
        near("stage_hash + mix_round exclusive",
             rows["stage_hash"]["exclusive_percent"] + rows["mix_round"]["exclusive_percent"],
             t["stage_hash"]["exclusive_percent"] * user_share)
        near("mix_round inclusive = exclusive", rows["mix_round"]["inclusive_percent"],
             rows["mix_round"]["exclusive_percent"])
        near("stage_sum inclusive", rows["stage_sum"]["inclusive_percent"], t["stage_sum"]["inclusive_percent"])
        near("stage_sum exclusive", rows["stage_sum"]["exclusive_percent"],
             t["stage_sum"]["exclusive_percent"] * user_share)
        # mix_round and stage_hash nest: the samples of mix_round count in stage_hash's inclusive too.
        if rows["stage_hash"]["inclusive_percent"] + TOLERANCE < rows["mix_round"]["inclusive_percent"]:
            errors.append("mix_round's samples are not in stage_hash's inclusive count")
        if rows["run_batch"]["exclusive_percent"] > truth["rest_percent"] + TOLERANCE:
            errors.append(f"run_batch keeps {rows['run_batch']['exclusive_percent']:.2f}% exclusive, more than "
                          f"the workload's rest {truth['rest_percent']:.2f}%")
        stages = t["stage_hash"]["inclusive_percent"] + t["stage_sum"]["inclusive_percent"]
        if rows["run_batch"]["inclusive_percent"] < stages - TOLERANCE:
            errors.append(f"run_batch inclusive {rows['run_batch']['inclusive_percent']:.2f}% under its stages' "
                          f"{stages:.2f}%")
        self.assertEqual(errors, [])


def setUpModule():
    global ENV
    ENV = vprof_env.start_module_env(frequency=999)


if __name__ == "__main__":
    vprof_env.main()
