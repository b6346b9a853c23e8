#!/usr/bin/env python3
# SPDX-License-Identifier: LGPL-2.1-or-later
"""vprofd's life as systemd sees it, without systemd: the test plays the service manager with a datagram socket
at NOTIFY_SOCKET, the way systemd's own, and checks READY=1 (only once the bus name is owned), STATUS=,
STOPPING=1, the watchdog pings and the idle exit (--exit-idle-time)."""
import os
import re
import select
import shutil
import signal
import socket
import struct
import subprocess
import sys
import time

import vprof_env

STATUS_RE = r"^Sampling with (cycles|cpu-clock) at 99 Hz on \d+ CPUs; %s\.$"


class Notify:
    """The receiving end of NOTIFY_SOCKET. SO_PASSCRED makes the kernel attach the sender's PID to every
    datagram, as systemd has it, so that the test knows who sent what."""

    def __init__(self, path):
        self.path = path
        self.sock = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
        self.sock.bind(path)
        self.sock.setsockopt(socket.SOL_SOCKET, socket.SO_PASSCRED, 1)
        self.received = []  # (monotonic time, sender PID, {field: value})

    def close(self):
        self.sock.close()

    def recv(self, timeout):
        """The next message as (time, pid, fields), or None after timeout seconds."""
        if not select.select([self.sock], [], [], max(timeout, 0))[0]:
            return None
        data, ancdata, _, _ = self.sock.recvmsg(4096, socket.CMSG_SPACE(struct.calcsize("3i")))
        pid = None
        for level, kind, payload in ancdata:
            if level == socket.SOL_SOCKET and kind == socket.SCM_CREDENTIALS:
                pid = struct.unpack("3i", payload[:struct.calcsize("3i")])[0]
        fields = dict(line.split("=", 1) for line in data.decode().splitlines() if "=" in line)
        msg = (time.monotonic(), pid, fields)
        self.received.append(msg)
        return msg

    def wait_for(self, pred, timeout, daemon, what):
        """Messages up to and including the first one that pred accepts; fails when vprofd exits or time is up."""
        deadline = time.monotonic() + timeout
        seen = []
        while True:
            msg = self.recv(min(0.2, deadline - time.monotonic()))
            if msg:
                seen.append(msg)
                if pred(msg[2]):
                    return seen
            elif daemon.poll() is not None:
                raise AssertionError(f"vprofd exited with {daemon.returncode} before {what}")
            if time.monotonic() >= deadline:
                raise AssertionError(f"no {what} within {timeout} s; got {[m[2] for m in seen]}")

    def collect(self, seconds):
        deadline = time.monotonic() + seconds
        out = []
        while time.monotonic() < deadline:
            msg = self.recv(deadline - time.monotonic())
            if msg:
                out.append(msg)
        return out


class WatchdogPidEnv(vprof_env.VprofEnv):
    """Sets WATCHDOG_PID to vprofd's own PID, as systemd does: the shell execs vprofd and keeps its PID."""

    def daemon_command(self):
        return ["sh", "-c", 'WATCHDOG_PID=$$ exec "$@"', "sh", *super().daemon_command()]


def unit_capabilities():
    """CapabilityBoundingSet= of the unit template, as setpriv names: ["bpf", "perfmon", ...]."""
    unit = os.path.join(os.path.dirname(os.environ["VPROF_POLICY"]), "vprofd.service.in")
    with open(unit) as f:
        caps = re.search(r"^CapabilityBoundingSet=(.*)$", f.read(), re.M).group(1).split()
    return [c.removeprefix("CAP_").lower() for c in caps]


class UnitCapabilitiesEnv(vprof_env.VprofEnv):
    """vprofd as root with no capability beyond the unit's bounding set, and no new privileges: what systemd
    gives it, short of the namespaces and the system call filter."""

    def daemon_command(self):
        caps = ",".join("+" + c for c in unit_capabilities())
        return ["setpriv", "--no-new-privs", "--inh-caps=-all", f"--bounding-set=-all,{caps}",
                *super().daemon_command()]


class Lifecycle(vprof_env.TestCase):
    def start(self, extra_args=(), extra_env=None, env_class=vprof_env.VprofEnv):
        """A private bus and a vprofd that reports to a fresh Notify; returns (env, notify, READY message)."""
        env = env_class(extra_args=extra_args, extra_env=extra_env)
        notify = Notify(os.path.join(env.tmp, "notify"))
        env.daemon_env["NOTIFY_SOCKET"] = notify.path
        # Whatever runs the tests must not leak its own watchdog into the daemon.
        for name in ("WATCHDOG_USEC", "WATCHDOG_PID"):
            if name not in (extra_env or {}):
                env.daemon_env.pop(name, None)
        self.addCleanup(self.stop, env, notify)
        env.start(wait=False)
        seen = notify.wait_for(lambda f: "READY" in f, 30, env.daemon, "READY=1")
        return env, notify, seen[-1]

    def stop(self, env, notify):
        notify.close()
        problems = env.stop()
        for p in [env.bus, *env.children]:
            for f in (p.stdin, p.stdout, p.stderr) if p else ():
                if f:
                    f.close()
        self.assertEqual(problems, [], "\n".join(problems))

    def attach(self, env, pid):
        r = env.ctl("attach", pid)
        self.assertEqual(r.returncode, 0, r.stderr)

    def detach(self, env, pid):
        r = env.ctl("detach", pid)
        self.assertEqual(r.returncode, 0, r.stderr)

    def status_after(self, env, notify, action, pattern):
        """Run action; the daemon's next STATUS= must match pattern."""
        action()
        seen = notify.wait_for(lambda f: "STATUS" in f, 10, env.daemon, "STATUS=")
        self.assertRegex(seen[-1][2]["STATUS"], STATUS_RE % pattern)
        self.assertEqual(seen[-1][1], env.daemon.pid)

    def test_ready_after_name_status_and_stopping(self):
        env, notify, ready = self.start()
        _, pid, fields = ready
        # READY=1 is the first word from vprofd, and comes from vprofd itself.
        self.assertEqual(len(notify.received), 1, notify.received)
        self.assertEqual(fields["READY"], "1")
        self.assertEqual(pid, env.daemon.pid)
        # It comes once the name is owned: a call right now is answered (the private bus activates nothing).
        r = env.ctl("status")
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertRegex(fields["STATUS"], STATUS_RE % r"0 targets \(0 running\)")
        event = fields["STATUS"].split()[2]
        self.assertIn(f"Sampling with {event} at 99 Hz", env.log_text())

        # STATUS= follows the targets.
        demo = env.spawn_demo()
        self.status_after(env, notify, lambda: self.attach(env, demo.pid), r"1 target \(1 running\)")
        self.status_after(env, notify, lambda: (demo.kill(), demo.wait()), r"1 target \(0 running\)")
        self.status_after(env, notify, lambda: self.detach(env, demo.pid), r"0 targets \(0 running\)")

        # SIGTERM: STOPPING=1, then a clean exit.
        env.daemon.send_signal(signal.SIGTERM)
        seen = notify.wait_for(lambda f: "STOPPING" in f, 10, env.daemon, "STOPPING=1")
        self.assertEqual(seen[-1][2]["STOPPING"], "1")
        self.assertEqual(env.daemon.wait(10), 0)

    def test_watchdog_pings(self):
        env, notify, ready = self.start(extra_env={"WATCHDOG_USEC": "1000000"}, env_class=WatchdogPidEnv)
        # sd-event pings between a half and three quarters of the period: at least 3 in 3 s.
        pings = [m for m in notify.collect(3) if m[2].get("WATCHDOG") == "1"]
        print(f"\nlifecycle: {len(pings)} watchdog pings in 3 s at WATCHDOG_USEC=1000000", end="", file=sys.stderr)
        self.assertGreaterEqual(len(pings), 3)
        self.assertEqual({m[1] for m in pings}, {env.daemon.pid})
        gaps = [b[0] - a[0] for a, b in zip(pings, pings[1:])]
        self.assertLess(max(gaps), 1.0, gaps)

    def test_watchdog_of_another_process_is_ignored(self):
        # WATCHDOG_PID names another process (PID 1): the variables are not meant for vprofd.
        env, notify, ready = self.start(extra_env={"WATCHDOG_USEC": "1000000", "WATCHDOG_PID": "1"})
        pings = [m for m in notify.received + notify.collect(2) if m[2].get("WATCHDOG") == "1"]
        self.assertEqual(pings, [])

    def test_idle_exit_waits_for_targets(self):
        env, notify, ready = self.start(extra_args=["--exit-idle-time=1"])
        demo = env.spawn_demo()
        self.attach(env, demo.pid)
        # Neither a running target nor an exited one (its tables would be lost) lets the daemon go.
        time.sleep(2.5)
        self.assertIsNone(env.daemon.poll(), "vprofd exited with a running target attached")
        demo.kill()
        demo.wait()
        time.sleep(2.5)
        self.assertIsNone(env.daemon.poll(), "vprofd exited with an exited target attached")
        self.assertNotIn("STOPPING", {k for m in notify.received for k in m[2]})

        detached = time.monotonic()
        self.detach(env, demo.pid)
        seen = notify.wait_for(lambda f: "STOPPING" in f, 10, env.daemon, "STOPPING=1")
        after = seen[-1][0] - detached
        self.assertEqual(seen[-1][2]["STATUS"], "Exiting after 1 s without targets or calls.")
        self.assertEqual(env.daemon.wait(10), 0)
        print(f"\nlifecycle: idle exit {after:.2f} s after the detach", end="", file=sys.stderr)
        self.assertGreaterEqual(after, 0.9)
        self.assertLess(after, 2.5)
        # The name was released before the exit; nothing owns it now.
        log = env.log_text()
        self.assertLess(log.index("Released org.vprof.Profiler1."), log.index("Exiting."))
        r = subprocess.run(["dbus-send", "--system", "--print-reply", "--dest=org.freedesktop.DBus",
                            "/org/freedesktop/DBus", "org.freedesktop.DBus.NameHasOwner", "string:org.vprof.Profiler1"],
                           env=env.env, capture_output=True, text=True, timeout=30)
        self.assertIn("boolean false", r.stdout, r.stderr)

    def test_calls_postpone_idle_exit(self):
        env, notify, ready = self.start(extra_args=["--exit-idle-time=2"])
        # A client between two calls must not find the daemon gone: every call restarts the idle time.
        end = time.monotonic() + 4
        while True:
            r = env.ctl("status")
            last_call = time.monotonic()
            self.assertEqual(r.returncode, 0, r.stderr)
            if last_call >= end:
                break
            time.sleep(0.5)
        seen = notify.wait_for(lambda f: "STOPPING" in f, 10, env.daemon, "STOPPING=1")
        after = seen[-1][0] - last_call
        self.assertEqual(env.daemon.wait(10), 0)
        print(f"\nlifecycle: idle exit {after:.2f} s after the last call", end="", file=sys.stderr)
        self.assertGreaterEqual(after, 1.9)
        self.assertLess(after, 3.5)

    def test_runs_with_the_units_capabilities(self):
        env, notify, ready = self.start(env_class=UnitCapabilitiesEnv)
        with open(f"/proc/{env.daemon.pid}/status") as f:
            eff = int(re.search(r"^CapEff:\s*([0-9a-f]+)$", f.read(), re.M).group(1), 16)
        names = subprocess.run(["setpriv", "--list-caps"], capture_output=True, text=True, check=True).stdout.split()
        self.assertEqual({n for i, n in enumerate(names) if eff & (1 << i)}, set(unit_capabilities()))
        # A binary deleted while it runs is read through /proc/PID/map_files/ (CAP_CHECKPOINT_RESTORE).
        path = os.path.join(env.tmp, "demo-deleted")
        shutil.copy(os.environ["VPROF_DEMO"], path)
        demo = env.spawn_demo("--seconds", 1, binary=path)
        os.unlink(path)
        self.attach(env, demo.pid)
        env.go(demo)
        demo.wait(60)
        top = env.ctl_json("report", demo.pid)["functions"][0]
        self.assertEqual((top["function"], top["module"]), ("work_alpha", "demo-deleted"))

    def test_units_capabilities_attach_another_users_process(self):
        """Root's vprofd with the unit's capabilities attaches a process of another user, and that user attaches
        its own: the pidfd's liveness is asked without a signal 0, which needs CAP_KILL (not in the unit)."""
        user = "vprof-test-lifecycle"
        uid = vprof_env.add_user(user)
        try:
            env, notify, ready = self.start(env_class=UnitCapabilitiesEnv)
            for attacher in (None, uid):
                demo = env.spawn_demo("--seconds", 1, user=uid)
                r = env.ctl("attach", demo.pid, user=attacher)
                self.assertEqual(r.returncode, 0, f"attach by {attacher or 'root'}: {r.stderr}")
                env.go(demo)
                demo.wait(60)
                top = env.ctl_json("report", demo.pid)["functions"][0]
                self.assertEqual(top["function"], "work_alpha")
        finally:
            vprof_env.remove_user(user)

    def test_exit_idle_time_option(self):
        for bad in ("-1", "1s", "", "4294967296"):
            r = subprocess.run([os.environ["VPROFD"], f"--exit-idle-time={bad}"], capture_output=True, text=True,
                               timeout=30)
            self.assertEqual(r.returncode, 1, bad)
            self.assertRegex(r.stderr, r"^vprofd: Invalid idle time '.*': expected seconds, 0 for never\.\n$")
        r = subprocess.run([os.environ["VPROFD"], "--help"], capture_output=True, text=True, timeout=30)
        self.assertIn("--exit-idle-time=SEC", r.stdout)


def setUpModule():
    vprof_env.probe_module()


if __name__ == "__main__":
    vprof_env.main()
