#!/usr/bin/env python3
# SPDX-License-Identifier: LGPL-2.1-or-later
"""The D-Bus API under fuzzing: vprof-bus-fuzz calls every method of vprofd with boundary and random arguments
and with random signatures, as root and as an unprivileged user. vprofd must answer every call, keep nothing
of what was detached, still profile afterwards and exit cleanly: in the sanitizer build (tools/test.sh),
VprofEnv.stop() fails on any ASan or UBSan report and on the leaks LeakSanitizer finds at exit."""
import collections
import os
import random
import subprocess
import sys

import vprof_env

ENV = None
FIXED_SEED = 20240229
CALLS = 4000
SECONDS = 20
NOBODY = 65534


def daemon_fds():
    """vprofd's open descriptors by kind: "file", "socket", "anon_inode:[pidfd]", "anon_inode:bpf-map"..."""
    kinds = collections.Counter()
    fd_dir = f"/proc/{ENV.daemon.pid}/fd"
    for fd in os.listdir(fd_dir):
        try:
            target = os.readlink(os.path.join(fd_dir, fd))
        except FileNotFoundError:
            continue
        if target.startswith("/"):
            target = "file"
        elif target.startswith(("socket:", "pipe:")):
            target = target.split(":")[0]
        kinds[target] += 1
    return kinds


def run_fuzz(seed, user=None):
    """One run of the driver; its output goes to the test log, with the command that replays it."""
    cmd = [os.environ["VPROF_BUS_FUZZ"], f"--calls={CALLS}", f"--seconds={SECONDS}", f"--seed={seed}"]
    who = f"as UID {user}: " if user is not None else ""
    print(f"\nfuzz: {who}{' '.join(cmd)}", end="", file=sys.stderr)
    if user is not None:
        cmd = ENV.as_user(user, cmd)
    r = subprocess.run(cmd, env=ENV.env, capture_output=True, text=True, errors="replace", timeout=SECONDS + 120)
    for line in r.stdout.splitlines():
        print(f"\n{line}", end="", file=sys.stderr)
    return r


class BusFuzz(vprof_env.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.fds_before = daemon_fds()
        rng = random.SystemRandom()
        # A fixed seed, then random ones (printed, to replay a failure), the last one as an unprivileged caller.
        cls.runs = [(seed, user, run_fuzz(seed, user))
                    for seed, user in ((FIXED_SEED, None), (rng.getrandbits(63), None), (rng.getrandbits(63), NOBODY))]
        print(file=sys.stderr)
        cls.fds_after = daemon_fds() if ENV.daemon.poll() is None else None

    def test_every_call_is_answered(self):
        for seed, user, r in self.runs:
            with self.subTest(seed=seed, user=user):
                self.assertEqual(r.returncode, 0, f"vprof-bus-fuzz --seed={seed} failed ({r.returncode}):\n"
                                 f"{r.stdout}{r.stderr[-20000:]}\nvprofd's log:\n{ENV.log_text()[-5000:]}")
                self.assertRegex(r.stdout, r"fuzz: \d+ calls in .*, 0 without reply; replies: .*ok \d+")

    def test_daemon_survives(self):
        self.assertIsNone(ENV.daemon.poll(), f"vprofd exited:\n{ENV.log_text()[-5000:]}")

    def test_nothing_left_behind(self):
        # Each run detaches what it attached: no target, and no pidfd or other descriptor, is left.
        self.assertEqual(ENV.ctl_json("list")["targets"], [])
        self.assertEqual(self.fds_after, self.fds_before)

    def test_profiles_after_fuzzing(self):
        demo = ENV.spawn_demo("--seconds", 1)
        r = ENV.ctl("attach", demo.pid)
        self.assertEqual(r.returncode, 0, r.stderr)
        ENV.go(demo)
        demo.wait(30)
        report = ENV.ctl_json("report", demo.pid)
        self.assertGreater(report["total_samples"], 0)
        self.assertIn("work_alpha", [f["function"] for f in report["functions"]])
        r = ENV.ctl("detach", demo.pid)
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertEqual(ENV.ctl_json("list")["targets"], [])


def setUpModule():
    global ENV
    ENV = vprof_env.start_module_env()


if __name__ == "__main__":
    vprof_env.main()
