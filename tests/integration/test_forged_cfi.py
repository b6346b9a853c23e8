#!/usr/bin/env python3
# SPDX-License-Identifier: LGPL-2.1-or-later
"""No user's file changes how another user's target is walked (issue 24): a table is shared by the digest of the
CFI it is compiled from, not by build-id (docs/UNWINDING.md, "Keys").

An unprivileged user copies vprof-split-nofp (a workload without frame pointers whose every sample has main and
_start on its stack) and its library, garbles the .eh_frame of one of the copies (the program, or the library it
loads from $ORIGIN) with tests/fixtures/damage-eh-frame.py, which keeps the build-id, runs the copy and attaches
it first, long enough for the daemon to compile (or give up on) its tables; then root runs and attaches the
genuine program. The genuine target's share of samples with _start (and main) on the stack must be the share of a
control run, on a daemon that never saw the copy, within TOLERANCE points; the forged copy's target is still
profiled, its own walks going wrong. Keyed by build-id, the genuine target took the copy's table: 0.0% of its
samples reached _start against 92% without the copy.

Then the inode of a forged copy: the user's garbled program runs, is attached, exits and is deleted, and root
copies the genuine program until a copy takes the freed inode (ext4 gives it to the next file of the directory's
group; a file system that does not skips the test). A device and inode stand for a file only while it lives: the
copy of root's must be walked as the control run is, not with the verdict on the deleted file.

Each run on a daemon of its own (the registry keeps its tables for the daemon's life). Prints 'forged-cfi:'
lines."""
import os
import shutil
import subprocess
import sys
import time
import unittest

import vprof_env

USER = "vprof-test-forger"
UID = None
WARMUP = 2.0
# About 3,000 samples of root's target at 999 Hz after the warm-up: enough for shares within TOLERANCE of a
# control run's, which are near 100% (wrongly keyed tables gave 0%).
SECONDS = 3.0
TOLERANCE = 2.0
DAMAGE = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "fixtures", "damage-eh-frame.py")
PROGRAM = "vprof-split-nofp"
LIBRARY = "libvprof-split-nofp.so"


def genuine():
    return os.environ["VPROF_SPLIT_NOFP"]


def build_id(path):
    out = subprocess.run(["readelf", "-n", path], capture_output=True, text=True, check=True).stdout
    return [line.split(":", 1)[1].strip() for line in out.splitlines() if "Build ID" in line][0]


def forge(env, garbled):
    """The user's copies of the program and its library in a directory of theirs, garbled's .eh_frame garbage."""
    directory = os.path.join(env.tmp, "forger")
    os.mkdir(directory, 0o755)
    for name in (PROGRAM, LIBRARY):
        src = os.path.join(os.path.dirname(genuine()), name)
        dst = os.path.join(directory, name)
        if name == garbled:
            subprocess.run([sys.executable, DAMAGE, "objcopy", "garbage", src, dst], check=True)
            assert build_id(dst) == build_id(src), "the forged copy must keep the build-id"
        else:
            shutil.copy(src, dst)
        os.chmod(dst, 0o755)
        os.chown(dst, UID, UID)
    os.chown(directory, UID, UID)
    return os.path.join(directory, PROGRAM)


def spawn_as_user(env, binary, seconds):
    """The program as the user, waiting for go() as spawn_demo()'s are; not through public_copy(), which would
    take it away from its library."""
    cmd = ["setpriv", f"--reuid={UID}", f"--regid={vprof_env.primary_gid(UID)}", "--clear-groups", binary, "--seconds", str(seconds),
           "--wait-stdin"]
    p = subprocess.Popen(cmd, stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    env.children.append(p)
    line = p.stdout.readline()
    assert line.startswith("ready "), f"{binary} said {line!r}"
    return p


def inclusive(report, name):
    return sum(r["inclusive_percent"] for r in report["functions"] if r["function"] == name)


def profile_genuine(env, binary=None):
    """Root's genuine program (or a copy of it) attached, reset after WARMUP, run SECONDS more: its report."""
    p = env.spawn_demo("--seconds", WARMUP + SECONDS, binary=binary or genuine())
    r = env.ctl("attach", p.pid)
    assert r.returncode == 0, r.stderr
    env.go(p)
    time.sleep(WARMUP)
    r = env.ctl("reset", p.pid)
    assert r.returncode == 0, r.stderr
    assert p.wait(SECONDS + 60) == 0
    report = env.ctl_json("report", p.pid)
    env.ctl("detach", p.pid)
    return report


class ForgedCfi(vprof_env.TestCase):
    control = None

    def control_shares(self):
        """_start's and main's shares of the genuine program alone, on a daemon of its own (once)."""
        if ForgedCfi.control is None:
            env = self.start_env(frequency=999)
            report = profile_genuine(env)
            ForgedCfi.control = (inclusive(report, "_start"), inclusive(report, "main"), report["total_samples"])
            print(f"\nforged-cfi: control: _start {ForgedCfi.control[0]:.2f}%, main {ForgedCfi.control[1]:.2f}% "
                  f"of {ForgedCfi.control[2]} samples", file=sys.stderr)
        return ForgedCfi.control

    def check_like_control(self, report, what):
        start_share, main_share, _ = self.control_shares()
        start, main = inclusive(report, "_start"), inclusive(report, "main")
        print(f"\nforged-cfi: {what}: root's genuine target _start {start:.2f}%, main {main:.2f}% of "
              f"{report['total_samples']} samples (control {start_share:.2f}%, {main_share:.2f}%)", file=sys.stderr)
        self.assertGreater(report["total_samples"], 0)
        self.assertLess(abs(start - start_share), TOLERANCE, "_start")
        self.assertLess(abs(main - main_share), TOLERANCE, "main")

    def check_forged_first(self, garbled):
        start_share, main_share, _ = self.control_shares()
        self.assertGreater(start_share, 85.0, "the control run itself walks badly")
        env = self.start_env(frequency=999)
        forged = forge(env, garbled)
        before = env.ctl_json("status")
        # The forger's target first, its tables compiled (or given up on) before root's program starts.
        p = spawn_as_user(env, forged, 3 * WARMUP + SECONDS + 10)
        r = env.ctl("attach", p.pid, user=UID)
        self.assertEqual(r.returncode, 0, r.stderr)
        env.go(p)
        time.sleep(2 * WARMUP)
        report = profile_genuine(env)
        start, main = inclusive(report, "_start"), inclusive(report, "main")
        forged_report = env.ctl_json("report", p.pid, user=UID)
        status = env.ctl_json("status")
        walks = {k.removeprefix("walks_"): status[k] - before[k] for k in status if k.startswith("walks_")}
        print(f"\nforged-cfi: {garbled} garbled, attached first: root's genuine target _start {start:.2f}%, "
              f"main {main:.2f}% of {report['total_samples']} samples (control {start_share:.2f}%, "
              f"{main_share:.2f}%); the forged target {forged_report['total_samples']} samples, _start "
              f"{inclusive(forged_report, '_start'):.2f}%; walks meanwhile: "
              + ", ".join(f"{k} {v}" for k, v in walks.items()), file=sys.stderr)
        self.assertGreater(report["total_samples"], 0)
        self.assertLess(abs(start - start_share), TOLERANCE, "_start")
        self.assertLess(abs(main - main_share), TOLERANCE, "main")
        # The forger's own target is profiled all along, and the daemon still answers.
        self.assertGreater(forged_report["total_samples"], 0)
        self.assertIsNone(env.daemon.poll(), "vprofd exited")
        p.kill()
        p.wait()

    def test_forged_program_first(self):
        self.check_forged_first(PROGRAM)

    def test_forged_library_first(self):
        self.check_forged_first(LIBRARY)

    def test_forged_inode_reused(self):
        self.assertGreater(self.control_shares()[0], 85.0, "the control run itself walks badly")
        env = self.start_env(frequency=999)
        forged = forge(env, PROGRAM)
        mine = os.path.join(env.tmp, "root")
        os.mkdir(mine, 0o700)
        shutil.copy(os.path.join(os.path.dirname(genuine()), LIBRARY), mine)
        p = spawn_as_user(env, forged, 2 * WARMUP + 1)
        r = env.ctl("attach", p.pid, user=UID)
        self.assertEqual(r.returncode, 0, r.stderr)
        env.go(p)
        self.assertEqual(p.wait(2 * WARMUP + 30), 0)
        self.assertGreater(env.ctl_json("report", p.pid, user=UID)["total_samples"], 0)
        st = os.stat(forged)
        os.unlink(forged)
        # Copies of root's until one has the inode; the others stay, so that each copy takes another free inode.
        copy = None
        for i in range(64):
            path = os.path.join(mine, f"copy-{i}")
            shutil.copy(genuine(), path)
            c = os.stat(path)
            if (c.st_dev, c.st_ino) == (st.st_dev, st.st_ino):
                copy = os.path.join(mine, PROGRAM)
                os.rename(path, copy)
                break
        if copy is None:
            self.skipTest("the file system gave the forged copy's inode to none of 64 new files")
        report = profile_genuine(env, copy)
        self.check_like_control(report, f"a copy of the genuine program at the forged copy's inode {st.st_ino}")


def setUpModule():
    global UID
    vprof_env.probe_module()
    UID = vprof_env.add_user(USER)
    unittest.addModuleCleanup(vprof_env.remove_user, USER)


if __name__ == "__main__":
    vprof_env.main()
