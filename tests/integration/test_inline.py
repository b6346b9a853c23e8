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
import re
import signal
import subprocess
import sys
import time
import unittest

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
        sourced = {r["function"]: r.get("source") for r in env.ctl_json("report", p.pid, "--source")["functions"]}
        text = env.ctl("report", p.pid).stdout
        folded = env.ctl("report", p.pid, "--by", "stack").stdout
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
        # The JSON rows say which are inlined frames; always_inline, the stages are never called.
        for name in ("mix_round", "stage_hash", "stage_sum"):
            self.assertIs(rows[name]["inlined"], True, name)
        for name in ("run_batch", "main"):
            self.assertIs(rows[name]["inlined"], False, name)
        self.assertEqual([r["function"] for r in report["functions"] if r["module"] == module and r["inlined"]
                          and r["function"] in ("run_batch", "main")], [])
        # The text table marks them as perf does, and the folded stacks as flame graph tools read them.
        self.assertRegex(text, r"(?m)^stage_hash \(inlined\) ")
        self.assertRegex(text, r"(?m)^run_batch ")
        self.assertNotIn("run_batch (inlined)", text)
        self.assertRegex(folded, r"(?m)(^|;)run_batch;stage_hash_\[i\];mix_round_\[i\]( |;)")
        # The source of a row is its function's entry: none for the inlined ones, whose code has the entry of
        # the function they were inlined into.
        print(f"  sources: {sourced}", file=sys.stderr)
        self.assertRegex(sourced["run_batch"] or "", r"vprof-inline\.c:\d+$")
        for name in ("mix_round", "stage_hash", "stage_sum"):
            self.assertIsNone(sourced[name], name)
        # vprofctl status counts the lookups: the workload's few addresses, most of them in inlined code.
        status = env.ctl_json("status")
        self.assertGreater(status["inline_addresses"], 0)
        self.assertLessEqual(status["inline_addresses"], status["inline_expansions"])

    def test_python_debug_file(self):
        """Debian's python3.11, stripped, its DWARF in python3.11-dbg's debug file: the exclusive samples of
        functions that are no symbol of it (only inlined, as Py_INCREF or _PyFrame_SetStackPointer) are a good
        share of the samples, as perf --inline shows (about half of the leaf samples here)."""
        python = "/usr/bin/python3.11"
        if not os.path.exists(python):
            raise unittest.SkipTest("no /usr/bin/python3.11")
        m = re.search(r"Build ID: ([0-9a-f]+)", subprocess.run(["eu-readelf", "-n", python], capture_output=True,
                                                                text=True).stdout)
        debug = m and f"/usr/lib/debug/.build-id/{m.group(1)[:2]}/{m.group(1)[2:]}.debug"
        if not debug or not os.path.exists(debug):
            raise unittest.SkipTest("no debug file of python3.11 (python3.11-dbg)")
        symbols = set()
        for line in subprocess.run(["nm", "--defined-only", debug], capture_output=True, text=True).stdout.split("\n"):
            parts = line.split()
            if len(parts) == 3:
                symbols.add(parts[2])
        env = ENV
        p = subprocess.Popen([python, "-c", "import time\nend = time.time() + 8\nd = {}\n"
                              "while time.time() < end:\n    d[len(d) % 1000] = [str(i) for i in range(50)]\n"])
        try:
            r = env.ctl("attach", p.pid)
            self.assertEqual(r.returncode, 0, r.stderr)
            time.sleep(4)
            report = env.ctl_json("report", p.pid)
            # While it runs, the debug file stays open for the next new addresses, and status says so (closed
            # once no target runs).
            files_size = env.ctl_json("status")["inline_files_size"]
        finally:
            p.wait(30)
        rows = [r for r in report["functions"] if r["module"] == "python3.11"]
        inlined = [r for r in rows if r["function"] not in symbols]
        # A function that is no symbol can only be an inlined frame; one that is may be both (two rows).
        self.assertEqual([r["function"] for r in inlined if not r["inlined"]], [])
        both = {r["function"] for r in rows if r["inlined"]} & {r["function"] for r in rows if not r["inlined"]}
        print(f"\npython3.11: {len(both)} functions both inlined and called, as {sorted(both)[:5]}", file=sys.stderr)
        share = sum(r["exclusive_percent"] for r in inlined)
        print(f"\npython3.11: {report['total_samples']} samples, {len(inlined)} inlined functions, "
              f"{share:.1f}% of the samples exclusive in them; top: "
              f"{[(r['function'], r['exclusive_percent']) for r in sorted(inlined, key=lambda r: -r['exclusive_percent'])[:5]]}",
              file=sys.stderr)
        self.assertGreater(len(inlined), 5)
        self.assertGreater(share, 10.0)
        # The DWARF held is the debug sections decompressed: at least their size in the file.
        in_file = 0
        for line in subprocess.run(["readelf", "-S", "-W", debug], capture_output=True, text=True).stdout.split("\n"):
            m = re.match(r"\s*\[\s*\d+\]\s+(\.z?debug_\S+)\s+\S+\s+\S+\s+\S+\s+([0-9a-f]+)", line)
            if m:
                in_file += int(m.group(2), 16)
        print(f"python3.11's debug sections: {in_file / 2**20:.1f} MiB in the file, {files_size / 2**20:.1f} MiB "
              "held by the daemon", file=sys.stderr)
        self.assertGreater(in_file, 0)
        self.assertGreaterEqual(files_size, in_file)


def setUpModule():
    global ENV
    ENV = vprof_env.start_module_env(frequency=999)


if __name__ == "__main__":
    vprof_env.main()
