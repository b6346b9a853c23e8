#!/usr/bin/env python3
# SPDX-License-Identifier: LGPL-2.1-or-later
"""Who may do what, with real users: the test adds two unprivileged users, runs vprofctl as them on the
private bus (which has no polkit), and checks every method against processes of root, of the caller, of the
other user, and of the caller but not dumpable. Prints the matrix as 'authz:' lines."""
import os
import re
import subprocess
import sys
import time
import unittest

import vprof_env

ENV = None
USERS = ("vprof-test-a", "vprof-test-b")
DENIED = re.compile(r"^vprofctl: Access denied")


def add_user(name):
    if subprocess.run(["id", "-u", name], capture_output=True).returncode != 0:
        subprocess.run(["useradd", "--system", "--no-create-home", "--shell", "/usr/sbin/nologin", name],
                       check=True)
    return int(subprocess.run(["id", "-u", name], capture_output=True, text=True, check=True).stdout)


def spawn_as(uid, *cmd):
    """A process of user uid (root when None) that lives until the test kills it."""
    full = list(cmd)
    if uid is not None:
        full = ["setpriv", f"--reuid={uid}", f"--regid={vprof_env.primary_gid(uid)}", "--clear-groups", *cmd]
    p = subprocess.Popen(full, stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    ENV.children.append(p)
    line = p.stdout.readline()
    assert line.startswith("ready "), line
    return p


# A sleeper that says when it is ready; optionally not dumpable (prctl(PR_SET_DUMPABLE, 0)).
SLEEPER = ("import ctypes, os, sys, time\n"
           "if sys.argv[1] == 'undumpable':\n"
           "    ctypes.CDLL(None).prctl(4, 0, 0, 0, 0)\n"
           "print('ready', os.getpid(), flush=True)\n"
           "time.sleep(120)\n")


def sleeper(uid, kind="dumpable"):
    return spawn_as(uid, "/usr/bin/python3", "-c", SLEEPER, kind)


def unused_pid():
    """A PID that names no process (one just reaped; the kernel hands PIDs out in order)."""
    p = subprocess.Popen(["true"])
    p.wait()
    assert not os.path.exists(f"/proc/{p.pid}")
    return p.pid


def wait_exited(env, pid):
    for _ in range(200):
        if any(t["pid"] == pid and t["state"] == "exited" for t in env.ctl_json("list")["targets"]):
            return
        time.sleep(0.05)
    raise AssertionError(f"PID {pid} did not show as exited")


# Every method that names a PID, as vprofctl calls it.
PID_METHODS = (("attach", lambda pid: ["attach", pid]), ("report", lambda pid: ["report", pid]),
               ("report values", lambda pid: ["report", pid, "--values", "all"]),
               ("report module", lambda pid: ["report", pid, "--by", "module"]),
               ("report thread", lambda pid: ["report", pid, "--by", "thread"]),
               ("report stack", lambda pid: ["report", pid, "--by", "stack"]),
               ("reset", lambda pid: ["reset", pid]), ("detach", lambda pid: ["detach", pid]))


class Matrix(vprof_env.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.a, cls.b = (add_user(u) for u in USERS)
        cls.rows = []

    @classmethod
    def tearDownClass(cls):
        for line in cls.rows:
            print(f"\nauthz: {line}", end="", file=sys.stderr)
        for p in ENV.children:
            if p.poll() is None:
                p.kill()
                p.wait()
        for u in USERS:
            subprocess.run(["userdel", u], capture_output=True)

    def record(self, caller, target, method, r):
        result = "ok" if r.returncode == 0 else r.stderr.strip()
        self.rows.append(f"{caller:>6} x {target:<22} x {method:<14} -> {result}")
        return r

    def ctl(self, caller_name, caller_uid, target_name, method, *args):
        return self.record(caller_name, target_name, method, ENV.ctl(*args, user=caller_uid))

    def assert_denied(self, r):
        self.assertEqual(r.returncode, 1, r.stdout)
        self.assertRegex(r.stderr, DENIED)
        self.assertEqual(len(r.stderr.strip().splitlines()), 1, r.stderr)
        # Without polkit on the bus the message says why nobody could allow it.
        self.assertIn("polkit is not running", r.stderr)

    def test_own_process_every_method(self):
        own = sleeper(self.a)
        for method, args in (("attach", ["attach", own.pid]), ("report", ["report", own.pid]),
                             ("report values", ["report", own.pid, "--values", "all"]),
                             ("report thread", ["report", own.pid, "--by", "thread"]),
                             ("reset", ["reset", own.pid]), ("detach", ["detach", own.pid])):
            r = self.ctl("user a", self.a, "own process", method, *args)
            self.assertEqual(r.returncode, 0, r.stderr)

    def test_foreign_processes_are_refused(self):
        root_proc, other, undumpable = sleeper(None), sleeper(self.b), sleeper(self.a, "undumpable")
        for name, p in (("root's process", root_proc), ("user b's process", other),
                        ("own, not dumpable", undumpable)):
            self.assert_denied(self.ctl("user a", self.a, name, "attach", "attach", p.pid))
            self.assert_denied(self.ctl("user a", self.a, name, "attach --off-cpu", "attach", p.pid, "--off-cpu"))
        # Root may attach all of them.
        for name, p in (("root's process", root_proc), ("own, not dumpable", undumpable)):
            r = self.ctl("root", None, name, "attach", "attach", p.pid)
            self.assertEqual(r.returncode, 0, r.stderr)

        # What root attached, user a may neither read, reset nor detach, nor learn is attached.
        for name, p in (("root's process", root_proc), ("own, not dumpable", undumpable)):
            for method, args in (("report", ["report", p.pid]),
                                 ("report values", ["report", p.pid, "--values", "elapsed"]),
                                 ("report module", ["report", p.pid, "--by", "module"]),
                                 ("diff", ["diff", p.pid, "--window", "1s", "--base-window", "1s@1s"]),
                                 ("reset", ["reset", p.pid]), ("detach", ["detach", p.pid]),
                                 ("attach again", ["attach", p.pid])):
                self.assert_denied(self.ctl("user a", self.a, f"{name} (attached)", method, *args))
        listed = [t["pid"] for t in ENV.ctl_json("list", user=self.a)["targets"]]
        self.record("user a", "root's targets", "list", subprocess.CompletedProcess([], 0, "", ""))
        self.assertNotIn(root_proc.pid, listed)
        self.assertNotIn(undumpable.pid, listed)
        processes = ENV.ctl_json("report", "--by", "process", user=self.a)["processes"]
        self.assertNotIn(root_proc.pid, [p["pid"] for p in processes])
        # The daemon's aggregate counters stay visible to everyone.
        status = ENV.ctl_json("status", user=self.a)
        self.assertEqual(status["targets"], ENV.ctl_json("status")["targets"])
        self.assertGreaterEqual(status["targets"], 2)
        for p in (root_proc, undumpable):
            self.assertEqual(ENV.ctl("detach", p.pid).returncode, 0)

    def test_process_that_stops_being_dumpable_is_no_longer_readable(self):
        # Attached while dumpable, then it turns itself non-dumpable: the owner loses access to it.
        p = spawn_as(self.a, "/usr/bin/python3", "-c",
                     "import ctypes, os, sys, time\n"
                     "print('ready', os.getpid(), flush=True)\n"
                     "sys.stdin.readline()\n"
                     "ctypes.CDLL(None).prctl(4, 0, 0, 0, 0)\n"
                     "print('done', flush=True)\n"
                     "time.sleep(120)\n")
        r = self.ctl("user a", self.a, "own process", "attach", "attach", p.pid)
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertEqual(ENV.ctl("report", p.pid, user=self.a).returncode, 0)
        ENV.go(p)
        self.assertEqual(p.stdout.readline().strip(), "done")
        self.assert_denied(self.ctl("user a", self.a, "own, turned undumpable", "report", "report", p.pid))
        self.assertNotIn(p.pid, [t["pid"] for t in ENV.ctl_json("list", user=self.a)["targets"]])
        self.assertEqual(ENV.ctl("detach", p.pid).returncode, 0)

    def test_foreign_pids_answer_alike(self):
        # Whether another user's process is profiled is never told: for a live process user a may not trace, the
        # answer is the same AccessDenied whether root attached it or nobody did; for a PID of no process, the
        # same "not attached" whether another user's exited target had it or nothing ever did (whether a PID is
        # live, /proc tells every user anyway).
        attached, unattached, b_target = sleeper(None), sleeper(None), sleeper(self.b)
        self.assertEqual(ENV.ctl("attach", attached.pid).returncode, 0)
        self.assertEqual(ENV.ctl("attach", b_target.pid, user=self.b).returncode, 0)
        b_target.kill()
        b_target.wait()
        wait_exited(ENV, b_target.pid)
        live = {"root's target": attached.pid, "root's process, not attached": unattached.pid}
        gone = {"user b's exited target": b_target.pid, "no process": unused_pid()}
        for method, args in PID_METHODS:
            for group, denied in ((live, True), (gone, False)):
                answers = {}
                for name, pid in group.items():
                    r = self.ctl("user a", self.a, name, method, *args(pid))
                    if denied:
                        self.assert_denied(r)
                    else:
                        self.assertEqual(r.returncode, 1, r.stdout)
                        self.assertRegex(r.stderr, "No process with PID|is not attached")
                        self.assertEqual(len(r.stderr.strip().splitlines()), 1, r.stderr)
                    answers[name] = r.stderr.replace(str(pid), "PID")
                self.assertEqual(len(set(answers.values())), 1, f"{method}: {answers}")
        for name, pid in {**live, **gone}.items():
            r = subprocess.run(["setpriv", f"--reuid={self.a}", f"--regid={vprof_env.primary_gid(self.a)}", "--clear-groups",
                                "dbus-send", "--system", "--print-reply", "--dest=org.vprof.Profiler1",
                                "/org/vprof/Profiler1", "org.vprof.Profiler1.GetModules", f"string:{pid}", "uint64:0"],
                               env=ENV.env, capture_output=True, text=True, timeout=30)
            expected = ("org.freedesktop.DBus.Error.AccessDenied" if name in live
                        else "org.vprof.Profiler1.Error.NotAttached")
            self.assertIn(expected, r.stderr, name)
        # Whoever may see a target is told the truth: root, and user b for its own exited one.
        own = sleeper(self.a)
        for caller, pid, message in ((self.a, own.pid, "is not attached"), (None, unattached.pid, "is not attached"),
                                     (None, gone["no process"], "is not attached")):
            r = self.ctl("root" if caller is None else "user a", caller, "own/any", "report", "report", pid)
            self.assertIn(message, r.stderr)
        self.assertEqual(ENV.ctl("report", b_target.pid, user=self.b).returncode, 0)
        r = ENV.ctl("attach", gone["no process"])
        self.assertIn("No process with PID", r.stderr)
        for pid in (attached.pid, b_target.pid):
            self.assertEqual(ENV.ctl("detach", pid).returncode, 0)

    def test_dbus_error_name(self):
        root_proc = sleeper(None)
        r = subprocess.run(["setpriv", f"--reuid={self.a}", f"--regid={vprof_env.primary_gid(self.a)}", "--clear-groups",
                            "dbus-send", "--system", "--print-reply", "--dest=org.vprof.Profiler1",
                            "/org/vprof/Profiler1", "org.vprof.Profiler1.Attach", f"string:{root_proc.pid}",
                            "uint64:0"],
                           env=ENV.env, capture_output=True, text=True, timeout=30)
        self.assertIn("org.freedesktop.DBus.Error.AccessDenied", r.stderr)
        self.assertIn("Access denied", r.stderr)


POLKITD = "/usr/lib/polkit-1/polkitd"
POLKIT_BUS_POLICY = "/usr/share/dbus-1/system.d/org.freedesktop.PolicyKit1.conf"
ACTIONS_DIR = "/usr/share/polkit-1/actions"
RULES = "/etc/polkit-1/rules.d/49-vprof-test.rules"


class WithPolkit(vprof_env.TestCase):
    """A real polkitd on a private bus of its own, with the shipped action and a rule that allows user a and
    refuses user b: the call parked while polkit is asked comes back with the verdict."""

    @classmethod
    def setUpClass(cls):
        if not os.path.exists(POLKITD):
            if os.environ.get("CI") == "true":
                raise AssertionError("polkitd is not installed (tools/install-deps.sh installs it)")
            raise unittest.SkipTest("polkitd is not installed")
        cls.a, cls.b = (add_user(u) for u in USERS)
        cls.installed = []
        action = os.path.join(ACTIONS_DIR, "org.vprof.Profiler1.policy")
        if not os.path.exists(action):
            subprocess.run(["install", "-D", "-m", "0644", os.environ["VPROF_POLKIT_ACTION"], action], check=True)
            cls.installed.append(action)
        with open(RULES, "w") as f:
            f.write('polkit.addRule(function(action, subject) {\n'
                    '    if (action.id != "org.vprof.Profiler1.profile") return polkit.Result.NOT_HANDLED;\n'
                    f'    if (subject.user == "{USERS[0]}") return polkit.Result.YES;\n'
                    f'    if (subject.user == "{USERS[1]}") return polkit.Result.NO;\n'
                    '    return polkit.Result.NOT_HANDLED;\n'
                    '});\n')
        cls.installed.append(RULES)
        cls.env = None
        try:
            cls.start_bus_and_polkit()
        except BaseException:
            cls.tearDownClass()  # unittest does not call it when setUpClass fails: leave no file behind
            raise

    @classmethod
    def start_bus_and_polkit(cls):
        cls.env = vprof_env.VprofEnv(frequency=99, extra_bus_policies=[POLKIT_BUS_POLICY]).start()
        # Started as root, polkitd changes to its own user itself.
        cls.polkitd = subprocess.Popen([POLKITD, "--no-debug"], env=cls.env.env, stdout=subprocess.DEVNULL,
                                       stderr=subprocess.DEVNULL)
        cls.env.children.append(cls.polkitd)
        cls.env._wait_for(lambda: subprocess.run(
            ["busctl", "--system", "status", "org.freedesktop.PolicyKit1"], env=cls.env.env,
            capture_output=True).returncode == 0, 20, "polkitd on the bus")

    @classmethod
    def tearDownClass(cls):
        problems = cls.env.stop() if cls.env else []
        for path in cls.installed:
            os.unlink(path)
        for u in USERS:
            subprocess.run(["userdel", u], capture_output=True)
        assert not problems, problems

    def test_polkit_decides_for_foreign_processes(self):
        root_proc = spawn_as(None, "/usr/bin/python3", "-c", SLEEPER, "dumpable")
        self.env.children.append(root_proc)
        # Allowed by the rule: attach, read, reset and detach root's process.
        for args in (["attach", root_proc.pid], ["report", root_proc.pid], ["report", root_proc.pid, "--values", "all"],
                     ["reset", root_proc.pid]):
            r = self.env.ctl(*args, user=self.a)
            print(f"\nauthz: user a (polkit yes) x root's process x {args[0]} -> "
                  f"{'ok' if r.returncode == 0 else r.stderr.strip()}", end="", file=sys.stderr)
            self.assertEqual(r.returncode, 0, r.stderr)
        # Refused by the rule.
        for args in (["report", root_proc.pid], ["detach", root_proc.pid]):
            r = self.env.ctl(*args, user=self.b)
            print(f"\nauthz: user b (polkit no) x root's process x {args[0]} -> {r.stderr.strip()}", end="",
                  file=sys.stderr)
            self.assertEqual(r.returncode, 1)
            self.assertIn("polkit did not allow it", r.stderr)
        # A PID of no process asks polkit nothing: both are told it is not attached.
        nothing = unused_pid()
        for user, expected in ((self.b, "is not attached"), (self.a, "is not attached")):
            r = self.env.ctl("report", nothing, user=user)
            print(f"\nauthz: {'user a (polkit yes)' if user == self.a else 'user b (polkit no)'} x no process x "
                  f"report -> {r.stderr.strip()}", end="", file=sys.stderr)
            self.assertEqual(r.returncode, 1)
            self.assertIn(expected, r.stderr)
        self.assertEqual(self.env.ctl("detach", root_proc.pid, user=self.a).returncode, 0)
        # The daemon did not wait on polkit: it answered others meanwhile, and nothing is left parked.
        self.assertEqual(self.env.ctl("status").returncode, 0)


def setUpModule():
    global ENV
    ENV = vprof_env.start_module_env(frequency=99)


if __name__ == "__main__":
    vprof_env.main()
