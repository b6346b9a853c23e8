#!/usr/bin/env python3
# SPDX-License-Identifier: LGPL-2.1-or-later
"""Targets whose files the daemon cannot reach by their path. A target that calls exec(): its tables stay, and from
the exec on its frames are named from the new image (the BPF program counts the target's execs and every record
carries the count, so each record is resolved with the image it was taken in). A target in another mount
namespace, whose binary lives on a tmpfs mounted only there: found through /proc/PID/map_files."""
import tempfile
import os
import subprocess
import time

import vprof_env

ENV = None


class Exec(vprof_env.TestCase):
    def test_exec_switches_images_and_keeps_tables(self):
        demo = ENV.public_copy(os.environ["VPROF_DEMO"])
        # The shell spins in a loop of its own builtins first (so it has samples of its own), then becomes
        # vprof-demo in place: same PID.
        script = ('read go; i=0; end=$(($(date +%s) + 2)); '
                  'while [ "$(date +%s)" -lt "$end" ]; do i=$((i + 1)); done; '
                  f'exec "{demo}" --seconds 3')
        p = subprocess.Popen(["sh", "-c", script], stdin=subprocess.PIPE, text=True)
        ENV.children.append(p)
        r = ENV.ctl("attach", p.pid)
        self.assertEqual(r.returncode, 0, r.stderr)
        p.stdin.write("go\n")
        p.stdin.flush()
        p.wait(30)
        report = ENV.ctl_json("report", p.pid)
        modules = {row["module"] for row in report["functions"]}
        functions = {row["function"]: row for row in report["functions"]}
        print(f"exec: {report['total_samples']} samples; modules {sorted(modules)}")
        self.assertIn("exec()ed", ENV.log_text())
        # Before the exec: the shell's own frames stay in the tables.
        self.assertTrue({"dash", "bash", "busybox"} & modules, modules)
        # After: the demo's, named, with its leaves in proportion.
        self.assertIn("work_alpha", functions)
        self.assertEqual(functions["work_alpha"]["module"], "public-vprof-demo")
        # In proportion, not by count: how much CPU the 3 s get depends on the machine's load. work_alpha does 50
        # of the demo's 95 units of work (tests/workloads/vprof-demo.c).
        demo_rows = [row for row in report["functions"] if row["module"] == "public-vprof-demo"]
        demo_samples = sum(row["exclusive"] for row in demo_rows)
        alpha = functions["work_alpha"]["exclusive"]
        print(f"exec: work_alpha {alpha} of the demo's {demo_samples} exclusive samples")
        self.assertGreaterEqual(demo_samples, 30)
        self.assertEqual(max(demo_rows, key=lambda row: row["exclusive"])["function"], "work_alpha")
        self.assertGreater(alpha / demo_samples, 0.35)
        ENV.ctl("detach", p.pid)


class MountNamespace(vprof_env.TestCase):
    def test_binary_only_in_the_targets_mount_namespace(self):
        mountpoint = tempfile.mkdtemp(prefix="vprof-mntns-")
        try:
            # In a new mount namespace: a private tmpfs over the (empty, on the host) directory, the demo copied
            # onto it and run from there. The daemon's own view of that path is an empty directory.
            script = (f'mount -t tmpfs vprof-test "{mountpoint}" && cp "{os.environ["VPROF_DEMO"]}" '
                      f'"{mountpoint}/vprof-demo-mntns" && read go && exec "{mountpoint}/vprof-demo-mntns" '
                      '--seconds 3')
            p = subprocess.Popen(["unshare", "-m", "--propagation", "private", "sh", "-c", script],
                                 stdin=subprocess.PIPE, text=True)
            ENV.children.append(p)
            # unshare execs sh in place: p.pid is the target. Attach once the copy is there.
            for _ in range(100):
                if os.path.exists(f"/proc/{p.pid}/root{mountpoint}/vprof-demo-mntns"):
                    break
                time.sleep(0.05)
            self.assertFalse(os.path.exists(f"{mountpoint}/vprof-demo-mntns"))  # not on the host
            self.assertEqual(ENV.ctl("attach", p.pid).returncode, 0)
            p.stdin.write("go\n")
            p.stdin.flush()
            p.wait(30)
            report = ENV.ctl_json("report", p.pid)
            functions = {row["function"]: row for row in report["functions"]}
            print(f"exec: mount namespace: {report['total_samples']} samples, work_alpha "
                  f"{functions.get('work_alpha', {}).get('exclusive_percent')}% in "
                  f"{functions.get('work_alpha', {}).get('module')}")
            self.assertIn("work_alpha", functions)
            self.assertEqual(functions["work_alpha"]["module"], "vprof-demo-mntns")
            self.assertGreater(functions["work_alpha"]["exclusive_percent"], 30)
            ENV.ctl("detach", p.pid)
        finally:
            os.rmdir(mountpoint)


def setUpModule():
    global ENV
    ENV = vprof_env.start_module_env()


if __name__ == "__main__":
    vprof_env.main()
