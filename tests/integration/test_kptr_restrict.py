#!/usr/bin/env python3
# SPDX-License-Identifier: LGPL-2.1-or-later
"""kptr_restrict, live: with /proc/sys/kernel/kptr_restrict at 2 even root reads zero addresses from
/proc/kallsyms, so every kernel frame of a system-call loop is [kernel] in module [kernel], no kernel function
is named, and vprofd says so once in its log. Lowered again during the run, kallsyms is read again (on a
kernel address that nothing names, at most every 10 s) and the names come back; a daemon started afterwards
names them from the start. The sysctl is always put back as it was.

The sysctl is machine-wide: another profiler test running at the same moment sees [kernel] too, for the few
seconds it is raised."""
import os
import signal
import sys
import time
import unittest

import vprof_env

SYSCTL = "/proc/sys/kernel/kptr_restrict"
# The symbolizer's interval between two reads of kallsyms (KALLSYMS_REREAD_USEC), and a margin.
REREAD_SECONDS = 10 + 1
LOG_LINE = "hides kernel addresses (kptr_restrict)"
# On the path of write() to /dev/null in any kernel of the last decade.
WRITE_PATH = {"vfs_write", "ksys_write", "__x64_sys_write", "write_null"}

ENV = None
ORIGINAL = None


def set_kptr_restrict(value):
    with open(SYSCTL, "w") as f:
        f.write(f"{value}\n")


def syscall_report(env, seconds=3):
    """Attach to vprof-wait --syscalls (write() of 64 KiB to /dev/null in a loop) for its whole run; its
    function report."""
    p = env.spawn_demo("--seconds", seconds, "--syscalls", binary=os.environ["VPROF_WAIT"])
    r = env.ctl("attach", p.pid)
    assert r.returncode == 0, r.stderr
    env.go(p)
    assert p.wait(60) == 0
    report = env.ctl_json("report", p.pid)
    env.ctl("detach", p.pid)
    return report


# Bracketed modules of user space.
USER_SPECIAL = {"[vdso]", "[vsyscall]", "[unknown]", "[anon]", "[heap]", "[stack]"}


def kernel_rows(report):
    """The rows of kernel code: the core image is [kernel], a module [name]; user files have no brackets."""
    return [r for r in report["functions"]
            if r["module"].startswith("[") and r["module"] not in USER_SPECIAL and not r["module"].startswith("[anon:")]


class KptrRestrict(vprof_env.TestCase):
    """In order: restricted, lowered while the daemon runs, a fresh daemon."""

    def test_1_restricted_kernel_frames_are_kernel(self):
        # Longer than the interval between reads of kallsyms: read again, still restricted, and not logged again.
        report = syscall_report(ENV, seconds=REREAD_SECONDS + 1)
        kernel = kernel_rows(report)
        self.assertTrue(kernel, f"no kernel frames in {report['functions'][:10]}")
        # Time in the kernel: most of a write() loop's.
        self.assertGreater(sum(r["exclusive_percent"] for r in kernel), 30.0, kernel)
        self.assertEqual({(r["function"], r["module"]) for r in kernel}, {("[kernel]", "[kernel]")})
        names = {r["function"] for r in report["functions"]}
        self.assertFalse(names & WRITE_PATH, names)
        # User frames keep their names.
        self.assertIn("write_null_loop", names)
        self.assertEqual(ENV.log_text().count(LOG_LINE), 1, ENV.log_text())
        print(f"\nkptr_restrict=2: [kernel] {kernel[0]['exclusive_percent']:.1f}% exclusive, "
              f"the log line once", end="", file=sys.stderr)

    def test_2_lowered_during_the_run_names_come_back(self):
        set_kptr_restrict(ORIGINAL)
        # The last read of kallsyms was during the first test, at the latest.
        time.sleep(REREAD_SECONDS)
        report = syscall_report(ENV)
        named = {r["function"] for r in kernel_rows(report) if r["function"] != "[kernel]"}
        self.assertTrue(named & WRITE_PATH, f"kernel names after kptr_restrict={ORIGINAL}: {sorted(named)[:10]}")
        # Still said only once.
        self.assertEqual(ENV.log_text().count(LOG_LINE), 1, ENV.log_text())
        print(f"\nkptr_restrict back to {ORIGINAL} during the run: {len(named)} kernel functions named",
              end="", file=sys.stderr)

    def test_3_fresh_daemon_names_kernel_functions_with_module(self):
        env = vprof_env.start_env_or_skip()
        try:
            report = syscall_report(env)
            kernel = kernel_rows(report)
            named = [r for r in kernel if r["function"] != "[kernel]"]
            self.assertTrue(named, kernel)
            self.assertNotIn("[kernel]", {r["function"] for r in kernel})
            write = [r for r in named if r["function"] in WRITE_PATH]
            self.assertTrue(write, [r["function"] for r in named][:20])
            self.assertTrue(all(r["module"] == "[kernel]" for r in write), write)
            self.assertNotIn(LOG_LINE, env.log_text())
            print(f"\nkptr_restrict={ORIGINAL}, new daemon: {[r['function'] for r in write]} in [kernel]",
                  end="", file=sys.stderr)
        finally:
            self.assertEqual(env.stop(), [])


def setUpModule():
    global ENV, ORIGINAL
    vprof_env.require_bpf()
    with open(SYSCTL) as f:
        ORIGINAL = int(f.read())
    if ORIGINAL >= 2:
        raise unittest.SkipTest(f"kptr_restrict is {ORIGINAL} already: no case with kernel names to compare")
    # meson's timeout sends SIGTERM: exit through the module's cleanups, which put the sysctl back.
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(1))
    # Cleanups run last registered first: the daemon stops, then the sysctl is put back.
    unittest.addModuleCleanup(set_kptr_restrict, ORIGINAL)
    set_kptr_restrict(2)
    ENV = vprof_env.start_module_env()


if __name__ == "__main__":
    vprof_env.main()
