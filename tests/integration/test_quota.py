#!/usr/bin/env python3
# SPDX-License-Identifier: LGPL-2.1-or-later
"""Target slots: one user cannot fill the target table for everyone. With --max-targets=40 a user other than
root holds at most MaxTargetsPerUser= targets (default 64, at most half of MaxTargets=: 20 here), running or
exited; an attach that needs a slot takes the one of the exited target that exited longest ago (logged); exited
targets go after ExitedTargetRetentionSec=, also across restarts; the open-file limit is a LimitExceeded naming
it. Prints what it measured as 'quota:' lines."""
import re
import resource
import signal
import subprocess
import sys
import time

import vprof_env

USERS = ("vprof-quota-a", "vprof-quota-b")
MAX_TARGETS = 40
PER_USER = 20  # the default: half of MaxTargets=, which is below 64


def figure(text):
    print(f"\nquota: {text}", end="", file=sys.stderr)


def sleeper(env, uid=None):
    """A `sleep 600` of user uid (root when None), once it runs sleep (setpriv has exec()ed it)."""
    cmd = ["sleep", "600"]
    if uid is not None:
        cmd = ["setpriv", f"--reuid={uid}", f"--regid={vprof_env.primary_gid(uid)}", "--clear-groups", *cmd]
    p = subprocess.Popen(cmd)
    env.children.append(p)
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline:
        with open(f"/proc/{p.pid}/comm") as f:
            if f.read().strip() == "sleep":
                return p
        time.sleep(0.01)
    raise AssertionError(f"PID {p.pid} did not exec sleep")


def states(env):
    return {t["pid"]: t["state"] for t in env.ctl_json("list")["targets"]}


def wait_for(what, cond, timeout=10):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if cond():
            return
        time.sleep(0.05)
    raise AssertionError(f"timed out waiting for {what}")


def end(env, p):
    """Kill p and wait until the daemon has it as exited: exits happen, and get their times, one at a time."""
    p.kill()
    p.wait()
    wait_for(f"PID {p.pid} to be exited", lambda: states(env).get(p.pid) == "exited")


def attach(env, p, uid=None):
    r = env.ctl("attach", p.pid, user=uid)
    if r.returncode != 0:
        raise AssertionError(f"attach {p.pid} as UID {uid}: {r.stderr}")


def evicted_for(env, newcomer):
    """The PID whose slot newcomer took, from the log line, and the setting that made it."""
    m = re.search(rf"Detached the exited target (\d+) \(sleep\) of UID \d+, which exited \d+ s ago, to make room "
                  rf"for PID {newcomer} of UID \d+ \((\w+)=\d+\)\.", env.log_text())
    return (int(m.group(1)), m.group(2)) if m else (None, None)


class Quota(vprof_env.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.a, cls.b = (vprof_env.add_user(u) for u in USERS)

    @classmethod
    def tearDownClass(cls):
        for u in USERS:
            vprof_env.remove_user(u)

    def env(self, *args, cls=vprof_env.VprofEnv):
        return self.start_env(cls=cls, extra_args=list(args))

    def test_one_user_cannot_fill_the_table(self):
        env = self.env(f"--max-targets={MAX_TARGETS}")
        status = env.ctl_json("status")
        self.assertEqual(status["max_targets"], MAX_TARGETS)
        self.assertEqual(status["max_targets_per_user"], PER_USER)
        self.assertEqual(status["exited_target_retention_sec"], 86400)

        # 45 processes of user a at once: the first 20 attach, the others are refused with one line each.
        t0 = time.monotonic()
        procs = [sleeper(env, self.a) for _ in range(45)]
        results = [env.ctl("attach", p.pid, user=self.a) for p in procs]
        figure(f"45 attaches as UID {self.a}: {time.monotonic() - t0:.2f} s")
        attached = [p for p, r in zip(procs, results) if r.returncode == 0]
        refused = [(p, r) for p, r in zip(procs, results) if r.returncode != 0]
        self.assertEqual(len(attached), PER_USER)
        self.assertEqual(attached, procs[:PER_USER])
        for p, r in refused:
            self.assertEqual(r.stderr, f"vprofctl: Cannot attach PID {p.pid}: UID {self.a} has reached its limit of "
                                       f"{PER_USER} targets, all running (MaxTargetsPerUser=)\n")
        figure(f"refused past the quota: {refused[0][1].stderr.strip()}")
        self.assertEqual(len(env.ctl_json("list", user=self.a)["targets"]), PER_USER)
        self.assertIn(f"Attached to {attached[0].pid} (sleep) for UID {self.a}.", env.log_text())

        # They exit, the highest PID first: the order of the exit times is not the order of the PIDs.
        for p in procs[PER_USER:]:
            p.kill()
            p.wait()
        exit_order = sorted(attached, key=lambda p: -p.pid)
        for p in exit_order:
            end(env, p)

        # Short-lived processes of the same user, one after the other: each takes the slot of the user's exited
        # target that exited longest ago.
        for i in range(5):
            p = sleeper(env, self.a)
            attach(env, p, self.a)
            self.assertEqual(evicted_for(env, p.pid), (exit_order[i].pid, "MaxTargetsPerUser"))
            end(env, p)
            exit_order.append(p)
        exit_order = exit_order[5:]
        self.assertEqual(len(env.ctl_json("list", user=self.a)["targets"]), PER_USER)

        # Root fills the other 20 slots, then needs one more: the oldest exited target of anyone gives way.
        root_procs = [sleeper(env) for _ in range(MAX_TARGETS - PER_USER)]
        for p in root_procs:
            attach(env, p)
        self.assertEqual(len(states(env)), MAX_TARGETS)
        p = sleeper(env)
        attach(env, p)
        root_procs.append(p)
        self.assertEqual(evicted_for(env, p.pid), (exit_order[0].pid, "MaxTargets"))
        # So does a second user.
        b_procs = [sleeper(env, self.b)]
        attach(env, b_procs[0], self.b)
        self.assertEqual(evicted_for(env, b_procs[0].pid), (exit_order[1].pid, "MaxTargets"))
        exit_order = exit_order[2:]
        figure(f"after user a's exits: root and user b attach, taking the slots of a's oldest exited targets")

        # Reset and detach name the caller too.
        self.assertEqual(env.ctl("reset", b_procs[0].pid, user=self.b).returncode, 0)
        self.assertIn(f"Reset the tables of {b_procs[0].pid} (sleep) for UID {self.b}.", env.log_text())

        # A restart keeps every target, the exit times with them: the next slot taken is still the one of the
        # target that exited longest ago, not the lowest PID.
        env.daemon.send_signal(signal.SIGTERM)
        self.assertEqual(env.daemon.wait(30), 0)
        env.start_daemon()
        after = states(env)
        self.assertEqual(len(after), MAX_TARGETS)
        self.assertEqual(sorted(pid for pid, s in after.items() if s == "running"),
                         sorted(p.pid for p in root_procs + b_procs))
        p = sleeper(env)
        attach(env, p)
        self.assertEqual(evicted_for(env, p.pid), (exit_order[0].pid, "MaxTargets"))
        p = sleeper(env, self.b)
        attach(env, p, self.b)
        b_procs.append(p)
        self.assertEqual(evicted_for(env, p.pid), (exit_order[1].pid, "MaxTargets"))
        self.assertEqual(env.ctl("detach", p.pid, user=self.b).returncode, 0)
        self.assertIn(f"Detached from {p.pid} (sleep) for UID {self.b}.", env.log_text())
        figure("after a restart: root and user b still attach, the slots going in order of the saved exit times")

        # With every slot running, root is refused, naming the limit.
        while "exited" in states(env).values():
            attach(env, sleeper(env))
        self.assertEqual(len(states(env)), MAX_TARGETS)
        q = sleeper(env)
        r = env.ctl("attach", q.pid)
        self.assertEqual(r.stderr, f"vprofctl: Cannot attach PID {q.pid}: the limit of {MAX_TARGETS} targets is "
                                   "reached, all of them running (MaxTargets=)\n")

    def test_root_is_exempt_and_zero_means_no_limit(self):
        env = self.env("--max-targets=6", "--max-targets-per-user=2")
        for _ in range(4):
            attach(env, sleeper(env))
        env = self.env("--max-targets=6", "--max-targets-per-user=0")
        for _ in range(6):
            attach(env, sleeper(env, self.a), self.a)
        self.assertEqual(env.ctl_json("status")["max_targets_per_user"], 0)

    def test_retention(self):
        env = self.env("--exited-target-retention=2")
        p = sleeper(env)
        attach(env, p)
        end(env, p)
        t0 = time.monotonic()
        wait_for("the exited target to go", lambda: p.pid not in states(env), timeout=10)
        figure(f"an exited target went {time.monotonic() - t0:.1f} s after its exit (ExitedTargetRetentionSec=2)")
        self.assertRegex(env.log_text(), rf"Detached the exited target {p.pid} \(sleep\) of UID 0: it exited \d s ago "
                                         r"\(ExitedTargetRetentionSec=2\)\.")

    def test_retention_across_restarts(self):
        env = self.env("--exited-target-retention=4")
        gone, back = sleeper(env), sleeper(env)
        for p in (gone, back):
            attach(env, p)
        end(env, gone)
        t_gone = time.monotonic()
        env.daemon.send_signal(signal.SIGTERM)
        self.assertEqual(env.daemon.wait(30), 0)
        end_back = time.monotonic()
        back.kill()
        back.wait()
        # Started again 4.5 s after the first one's exit: its retention is over, the other's is not.
        time.sleep(max(0.0, t_gone + 4.5 - time.monotonic()))
        env.start_daemon()
        self.assertNotIn(gone.pid, states(env))
        self.assertIn(f"Dropping the saved tables of {gone.pid} (sleep), which had exited: its "
                      "ExitedTargetRetentionSec= is over.", env.log_text())
        # The other ran when saved: its exit time is unknown, and the restore counts as its exit.
        self.assertEqual(states(env).get(back.pid), "exited")
        t_restored = time.monotonic()
        wait_for("the restored target to go", lambda: back.pid not in states(env), timeout=15)
        figure(f"restored exited target went {time.monotonic() - t_restored:.1f} s after the restore "
               f"({t_restored - end_back:.1f} s after it was killed)")
        self.assertGreater(time.monotonic() - t_restored, 3)


    def env_with_file_limit(self, soft, hard):
        class LowFileLimit(vprof_env.VprofEnv):
            def daemon_command(self):
                return ["prlimit", f"--nofile={soft}:{hard}", "--"] + super().daemon_command()

        return self.env(cls=LowFileLimit)

    def test_open_file_limit(self):
        limit = 128
        env = self.env_with_file_limit(limit, limit)
        self.assertRegex(env.log_text(), rf"The open file limit \(RLIMIT_NOFILE, LimitNOFILE=\) is {limit}: room "
                                         r"for about \d+ targets, not MaxTargets=1024")
        attached = 0
        while True:
            p = sleeper(env)
            r = env.ctl("attach", p.pid)
            if r.returncode != 0:
                break
            attached += 1
            self.assertLess(attached, limit)
        figure(f"with {limit} open files: {attached} targets, then {r.stderr.strip()}")
        self.assertEqual(r.stderr, f"vprofctl: Cannot attach PID {p.pid}: vprofd has reached its limit of {limit} "
                                   "open files, one for each target (LimitNOFILE=)\n")
        self.assertGreater(attached, 10)
        # The daemon keeps descriptors for itself: it still answers, reads symbols and saves.
        self.assertEqual(env.ctl("status").returncode, 0)
        self.assertEqual(env.ctl("report", "--by", "process").returncode, 0)
        env.daemon.send_signal(signal.SIGTERM)
        self.assertEqual(env.daemon.wait(30), 0)
        self.assertNotIn("Failed to save", env.log_text())

    def test_soft_file_limit_is_raised(self):
        # A shell's usual limits: the soft one below what MaxTargets= needs, the hard one above (as high as this
        # test may set it).
        hard = resource.getrlimit(resource.RLIMIT_NOFILE)[1]
        if hard < 2048:
            self.skipTest(f"the hard open file limit here is {hard}")
        env = self.env_with_file_limit(1024, hard)
        with open(f"/proc/{env.daemon.pid}/limits") as f:
            soft = int(next(line for line in f if line.startswith("Max open files")).split()[3])
        figure(f"soft open file limit 1024, hard {hard}: raised to {soft}")
        self.assertGreater(soft, 1024 + 64)
        self.assertNotIn("open file limit", env.log_text())


def setUpModule():
    vprof_env.probe_module()


if __name__ == "__main__":
    vprof_env.main()
