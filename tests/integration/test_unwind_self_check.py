#!/usr/bin/env python3
# SPDX-License-Identifier: LGPL-2.1-or-later
"""The unwind self-check (--unwind-self-check=N): the BPF program copies the user stack of 1 in N samples, and the
daemon unwinds the copy again with its own CFI interpreter and compares it with the BPF walk by unwind tables. On
code without frame pointers (vprof-nofp) and on the system's Python interpreter, many checks and not one
disagreement; each sample still counted once. The counters are read from the bus (UnwindSelfCheck*, `vprofctl
status`) and from the line the daemon logs when it exits; the two agree."""
import os
import re
import subprocess

import vprof_env

PYTHON = "/usr/bin/python3.11"
# A few seconds of Python code calling itself, so that stacks go through the interpreter's C frames many times.
PYTHON_LOOP = """
import time
def work(n):
    return sum(i * i for i in range(n))
def rec(d):
    return work(2000) if d == 0 else rec(d - 1) + 1
end = time.monotonic() + float(__import__("sys").argv[1])
while time.monotonic() < end:
    rec(20)
"""
SUMMARY = re.compile(r"Unwind self-check: (\d+) checked, (\d+) agreed, (\d+) disagreed, (\d+) unchecked, "
                     r"(\d+) steps compared, (\d+) lost\.")
FIELDS = ("checked", "agreed", "disagreed", "unchecked", "steps", "lost")


def stop_and_read_summary(env):
    """Stop the daemon (SIGTERM: it logs the counters on its way out) and return its last summary, or None."""
    env.daemon.terminate()
    env.daemon.wait(30)
    found = SUMMARY.findall(env.log_text())
    return dict(zip(FIELDS, map(int, found[-1]))) if found else None


class SelfCheck(vprof_env.TestCase):
    def check_workload(self, name, start, seconds):
        """Sample the process start(env) gives for its whole life with every sample checked; the counters."""
        env = self.start_env(frequency=999, extra_args=["--unwind-self-check=1", "--ring-size=16", "--verbose"])
        p = start(env)
        r = env.ctl("attach", p.pid)
        self.assertEqual(r.returncode, 0, r.stderr)
        if p.stdin:
            env.go(p)
        p.wait(seconds + 60)
        # The target has exited: its every sample is in its table, once (the copies are not samples).
        report = env.ctl_json("report", p.pid)
        status = env.ctl_json("status")
        text = env.ctl("status").stdout
        counts = stop_and_read_summary(env)
        self.assertIsNotNone(counts, "no self-check summary in the log:\n" + env.log_text())
        self.assertEqual(status["unwind_self_check"], 1)
        for k in ("agreed", "disagreed", "unchecked", "lost"):
            self.assertEqual(status["self_check_" + k], counts[k], k)
        self.assertRegex(text, r"Walk self-check: 1 in 1 samples: \d+ agreed, 0 disagreed, \d+ unchecked, \d+ lost")
        print(f"\nself-check {name}: {counts}; {report['total_samples']} samples", end="")
        disagreements = [line for line in env.log_text().splitlines() if "Unwind self-check of" in line]
        self.assertEqual(counts["disagreed"], 0, "\n".join(disagreements))
        self.assertEqual(status["samples_kept"], report["total_samples"])
        self.assertEqual(counts["checked"], counts["agreed"] + counts["disagreed"] + counts["unchecked"])
        # A copy for every kept sample, but those a full ring buffer lost.
        self.assertEqual(counts["checked"] + counts["lost"], report["total_samples"])
        return counts

    def test_code_without_frame_pointers(self):
        def start(env):
            return env.spawn_demo("--seconds", 4, binary=os.environ["VPROF_NOFP"])

        counts = self.check_workload("vprof-nofp", start, 4)
        self.assertGreater(counts["checked"], 500)
        # Unchecked: the first samples, before the tables are loaded, and the vDSO's clock reads.
        self.assertGreater(counts["agreed"], counts["checked"] * 0.6)
        # Down to _start: the leaf, its library caller, nofp_recurse, nofp_run, main, libc's two, _start.
        self.assertGreater(counts["steps"], counts["agreed"] * 5)

    def test_python(self):
        if not os.path.exists(PYTHON):
            vprof_env.skip_or_fail(f"needs {PYTHON}")

        def start(env):
            p = subprocess.Popen([PYTHON, "-c", PYTHON_LOOP, "4"], stdout=subprocess.DEVNULL)
            env.children.append(p)
            return p

        counts = self.check_workload("python3.11", start, 4)
        self.assertGreater(counts["checked"], 500)
        # Unchecked: the first samples, and epilogues that restore rbp from below the stack pointer.
        self.assertGreater(counts["agreed"], counts["checked"] * 0.6)
        self.assertGreater(counts["steps"], counts["agreed"] * 5)

    def test_off_by_default_and_without_tables(self):
        for args, notice in (([], None), (["--unwind-self-check=1", "--unwind-table-size=0"],
                                          "UnwindSelfCheck= needs the unwind tables")):
            env = self.start_env(frequency=999, extra_args=args)
            p = env.spawn_demo("--seconds", 1, binary=os.environ["VPROF_NOFP"])
            self.assertEqual(env.ctl("attach", p.pid).returncode, 0)
            env.go(p)
            p.wait(60)
            self.assertGreater(env.ctl_json("report", p.pid)["total_samples"], 0)
            status = env.ctl_json("status")
            self.assertEqual(status["unwind_self_check"], 0)
            self.assertIn("Walk self-check: off\n", env.ctl("status").stdout)
            self.assertIsNone(stop_and_read_summary(env), args)
            if notice:
                self.assertIn(notice, env.log_text())


def setUpModule():
    vprof_env.probe_module()


if __name__ == "__main__":
    vprof_env.main()
