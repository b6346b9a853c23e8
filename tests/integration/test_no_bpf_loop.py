#!/usr/bin/env python3
# SPDX-License-Identifier: LGPL-2.1-or-later
"""A kernel without bpf_loop() (before 5.17, such as Ubuntu 22.04's 5.15): vprofd loads the kernel's
frame-pointer walk instead of the walk by the unwind tables, which steps with bpf_loop(), and says so in status.
The feature probe is forced with VPROF_FORCE_NO_BPF_LOOP=1 (for tests only): the daemon runs, samples of a
workload built with frame pointers are kept with their stacks, the loaded program has no call to bpf_loop left
(the verifier dropped the walk's branch), and status names the walk and why."""
import json
import os
import subprocess
import time

import vprof_env

ENV = None
WALK = "frame pointers (the kernel has no bpf_loop)"


def setUpModule():
    global ENV
    ENV = vprof_env.start_module_env(frequency=499, extra_env={"VPROF_FORCE_NO_BPF_LOOP": "1"})


def profile(binary, seconds=3.0):
    p = ENV.spawn_demo("--seconds", seconds + 30, binary=binary)
    r = ENV.ctl("attach", p.pid)
    assert r.returncode == 0, r.stderr
    ENV.go(p)
    time.sleep(seconds)
    report = ENV.ctl_json("report", p.pid)
    rows = {row["function"]: row for row in report["functions"]}
    ENV.ctl("detach", p.pid)
    p.kill()
    p.wait(30)
    return rows, report


def inclusive(rows, f):
    return rows.get(f, {}).get("inclusive_percent", 0.0)


class NoBpfLoop(vprof_env.TestCase):
    def test_status_names_the_walk(self):
        status = ENV.ctl_json("status")
        self.assertEqual(status["unwind_walk"], WALK)
        self.assertEqual(status["unwind_table_size"], 0)
        text = ENV.ctl("status").stdout
        self.assertIn(f"Unwind: {WALK}", text)
        self.assertIn("Unwind tables: off", text)
        self.assertIn("VPROF_FORCE_NO_BPF_LOOP=1", ENV.log_text())
        self.assertIn("The kernel has no bpf_loop()", ENV.log_text())
        # The bus property itself, as the interface XML documents it.
        r = ENV.dbus_send("Get", "string:org.vprof.Profiler1", "string:UnwindWalk",
                          interface="org.freedesktop.DBus.Properties")
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertIn(WALK, r.stdout)

    def test_frame_pointer_stacks_are_kept(self):
        before = ENV.ctl_json("status")
        rows, report = profile(os.environ["VPROF_SPLIT_FP"])
        after = ENV.ctl_json("status")
        kept = after["samples_kept"] - before["samples_kept"]
        print(f"\nno-bpf-loop: {kept} samples kept, {report['total_samples']} in the report; split_run "
              f"{inclusive(rows, 'split_run'):.1f}%, main {inclusive(rows, 'main'):.1f}% inclusive", end="")
        self.assertGreater(report["total_samples"], 200)
        # Built with frame pointers (leaves without a frame of their own skip one caller, never main): the
        # kernel's walk gives whole stacks of the program's functions.
        self.assertGreater(inclusive(rows, "split_run"), 95.0)
        self.assertGreater(inclusive(rows, "main"), 95.0)
        # No walk by the tables: none counted, no table compiled.
        for k in ("walks_complete", "walks_ended_at_frame_pointer", "walks_bad", "unwind_tables_compiled"):
            self.assertEqual(after[k], 0, k)

    def test_no_bpf_loop_call_is_loaded(self):
        # The daemon's programs by its descriptors (bpftool may not name the processes holding them).
        fdinfo = f"/proc/{ENV.daemon.pid}/fdinfo"
        ids = set()
        for fd in os.listdir(fdinfo):
            try:
                with open(os.path.join(fdinfo, fd)) as f:
                    ids.update(line.split()[1] for line in f if line.startswith("prog_id:"))
            except OSError:
                pass
        dumps = {}
        for prog in ids:
            r = subprocess.run(["bpftool", "prog", "dump", "xlated", "id", prog], capture_output=True, text=True)
            if r.returncode == 0:
                dumps[prog] = r.stdout
        sample = [d for d in dumps.values() if "vprof_sample" in d.splitlines()[0]]
        self.assertTrue(sample, f"no vprof_sample among the daemon's programs {sorted(ids)}")
        self.assertIn("bpf_get_stack", sample[0])  # the kernel's frame-pointer walk
        # Neither the sampler nor the off-CPU program (which walks with the tables too when they are on).
        # A call, not the source lines the dump quotes (the mapping-change programs' pruned branch names it).
        for xlated in dumps.values():
            self.assertNotIn("call bpf_loop#", xlated, xlated.splitlines()[0])

if __name__ == "__main__":
    vprof_env.main()
