#!/usr/bin/env python3
# SPDX-License-Identifier: LGPL-2.1-or-later
"""User stacks through code built without frame pointers (vprof-nofp): vprofd compiles the unwind tables of the
files a target's samples fall back in, and the BPF program walks the whole stack with them, down to _start.
With --unwind-table-size=0 the kernel's frame-pointer walk gives the leaf's few callers the stack window holds,
and never main. A stack deeper than the walk's 128 frames is cut and counted."""
import os
import subprocess
import time

import vprof_env

ENV = None
CHAIN = ["nofp_lib_spin", "nofp_lib_work", "nofp_recurse", "nofp_run", "main", "_start"]


def functions(pid):
    return {row["function"]: row for row in ENV.ctl_json("report", pid)["functions"]}


def profile_nofp(env, *args, warmup=1.5, seconds=3.0):
    """vprof-nofp attached, its tables cleared after warmup seconds (the time the daemon takes to compile the
    tables of the files the first samples fell back in), then sampled for seconds more; its functions, and the
    status at the reset and at the end."""
    p = env.spawn_demo("--seconds", warmup + seconds + 30, *args, binary=os.environ["VPROF_NOFP"])
    r = env.ctl("attach", p.pid)
    assert r.returncode == 0, r.stderr
    env.go(p)
    time.sleep(warmup)
    r = env.ctl("reset", p.pid)
    assert r.returncode == 0, r.stderr
    at_reset = env.ctl_json("status")
    time.sleep(seconds)
    rows = {row["function"]: row for row in env.ctl_json("report", p.pid)["functions"]}
    status = env.ctl_json("status")
    env.ctl("detach", p.pid)
    p.kill()
    p.wait(30)
    return rows, at_reset, status


class Tables(vprof_env.TestCase):
    def test_whole_stack_through_code_without_frame_pointers(self):
        rows, _, _ = profile_nofp(ENV)
        for f in CHAIN:
            pct = rows.get(f, {}).get("inclusive_percent", 0.0)
            print(f"\nunwind: {f} inclusive {pct:.2f}%", end="")
            # Every sample is in the chain (a few in nofp_run's clock reads between calls).
            self.assertGreater(pct, 97.0 if f != "nofp_lib_spin" else 90.0, f)

    def test_status_counts_tables_and_walks(self):
        # From the reset on: before it, the first samples fell back in files not compiled yet, and frame-pointer
        # steps in code without frame pointers end without progress (walks_bad).
        _, before, after = profile_nofp(ENV)
        delta = {k: after[k] - before[k] for k in after if k.startswith("walks_")}
        ended = sum(delta[k] for k in ("walks_complete", "walks_ended_at_frame_pointer", "walks_at_depth_limit",
                                       "walks_faulted", "walks_bad"))
        print(f"\nunwind: walks {delta}", end="")
        # Every kept sample's user stack was walked once and ended one way; nearly all reached _start. Both
        # statuses are read while the target runs, so a sample in flight may be in one count and not yet in the
        # other; once in CI 3,135 walks ended against 3,136 kept, not explained (a walk that fell back for a
        # table, walks_fell_back, is not among the ended ones either): at most one a CPU at each read.
        kept = after["samples_kept"] - before["samples_kept"]
        self.assertLessEqual(abs(ended - kept), 2 * os.cpu_count(), (ended, kept))
        self.assertGreater(delta["walks_complete"], 0.97 * ended)
        self.assertGreaterEqual(after["unwind_tables_loaded"], 2)  # vprof-nofp's and its library's
        self.assertGreater(after["unwind_table_used"], 0)
        self.assertLessEqual(after["unwind_table_used"], after["unwind_table_size"])
        self.assertEqual(after["unwind_tables_failed"], 0)
        self.assertEqual(after["unwind_tables_too_big"], 0)
        text = ENV.ctl("status").stdout
        self.assertRegex(text, r"Unwind tables: \d+ loaded, [0-9.]+ of 32 MiB; \d+ compiled in [0-9.]+ ms")
        self.assertRegex(text, r"Stack walks: \d+ complete, \d+ ended at a frame pointer, \d+ at the depth limit")

    def test_deeper_than_the_walk(self):
        rows, before, after = profile_nofp(ENV, "--depth", "200", warmup=1.5, seconds=1.5)
        # 128 frames: the leaf, its library caller, then nofp_recurse; main only from samples between two
        # recursions (nofp_run reading the clock).
        self.assertGreater(rows["nofp_recurse"]["inclusive_percent"], 90.0)
        self.assertLess(rows.get("main", {}).get("inclusive_percent", 0.0), 5.0)
        self.assertGreater(after["stacks_truncated"], before["stacks_truncated"])
        self.assertGreater(after["walks_at_depth_limit"], before["walks_at_depth_limit"])


class FramePointersOnly(vprof_env.TestCase):
    def test_kernel_walk_loses_the_callers(self):
        env = vprof_env.VprofEnv(frequency=999, extra_args=["--unwind-table-size=0"]).start()
        try:
            rows, _, _ = profile_nofp(env, warmup=0.2, seconds=1.5)
            self.assertGreater(rows["nofp_lib_spin"]["exclusive_percent"], 90.0)
            # The stack window puts back a few callers of the leaf; main is far beyond it (but for a sample in
            # nofp_run between two calls).
            self.assertLess(rows.get("main", {}).get("inclusive_percent", 0.0), 5.0)
            status = env.ctl_json("status")
            self.assertEqual(status["unwind_table_size"], 0)
            self.assertEqual(status["walks_complete"] + status["walks_ended_at_frame_pointer"], 0)
            self.assertIn("Unwind: frame pointers (UnwindTableMiB=0)", env.ctl("status").stdout)
            self.assertEqual(status["unwind_walk"], "frame pointers (UnwindTableMiB=0)")
        finally:
            problems = env.stop()
        self.assertEqual(problems, [])


class SmallArena(vprof_env.TestCase):
    """UnwindTableMiB=1: libcrypto's table (566 KiB) takes more than half of it, and python3.11's, libc's,
    perl's and bash's (479 + 193 + 238 + 143 KiB) do not fit together, so tables are evicted: each counted, the
    daemon and the walks go on, and the arena never holds more than its size."""

    def test_eviction_and_too_big_are_counted(self):
        env = vprof_env.VprofEnv(frequency=999, extra_args=["--unwind-table-size=1"]).start()
        programs = [
            ["/usr/bin/python3.11", "-c",
             "import hashlib\nd = b'x' * 65536\nwhile True:\n    hashlib.sha256(d).digest(); sum(range(3000))"],
            ["/usr/bin/perl", "-e", "my $x = 0; while (1) { $x += $_ for 1 .. 1000 }"],
            ["/usr/bin/bash", "-c", "while :; do x=$((x + 1)); done"],
        ]
        procs = []
        try:
            for cmd in programs:
                p = subprocess.Popen(cmd)
                env.children.append(p)
                procs.append(p)
                r = env.ctl("attach", p.pid)
                self.assertEqual(r.returncode, 0, r.stderr)
            # The first samples fall back in each file; its table is compiled, loaded, or evicted for another.
            deadline = time.monotonic() + 20
            while time.monotonic() < deadline:
                status = env.ctl_json("status")
                if status["unwind_tables_evicted"] > 0 and status["unwind_tables_too_big"] > 0:
                    break
                time.sleep(0.5)
            print(f"\nunwind: small arena {({k: v for k, v in status.items() if k.startswith('unwind_')})}", end="")
            self.assertEqual(status["unwind_table_size"], 1 << 20)
            self.assertGreaterEqual(status["unwind_tables_too_big"], 1)  # libcrypto
            self.assertGreaterEqual(status["unwind_tables_evicted"], 1)
            self.assertGreaterEqual(status["unwind_tables_loaded"], 1)
            self.assertLessEqual(status["unwind_table_used"], status["unwind_table_size"])
            self.assertEqual(status["unwind_tables_failed"], 0)
            self.assertIn("would take more than half of UnwindTableMiB=", env.log_text())
            self.assertIn("Evicting the unwind table of", env.log_text())
            for p in procs:
                rows = env.ctl_json("report", p.pid)["functions"]
                self.assertGreater(len(rows), 0)
            ended = sum(status[k] for k in ("walks_complete", "walks_ended_at_frame_pointer",
                                            "walks_at_depth_limit", "walks_faulted", "walks_bad"))
            self.assertGreater(ended, 0)
            for p in procs:
                self.assertEqual(env.ctl("detach", p.pid).returncode, 0)
            self.assertEqual(env.ctl_json("status")["targets"], 0)
        finally:
            problems = env.stop()
        self.assertEqual(problems, [])


def setUpModule():
    global ENV
    ENV = vprof_env.start_module_env(frequency=999)


if __name__ == "__main__":
    vprof_env.main()
