#!/usr/bin/env python3
# SPDX-License-Identifier: LGPL-2.1-or-later
"""vprofd in its own PID namespace, as in a container: BPF sees host PIDs, the daemon and its clients see the
namespace's. vprofd and two workloads run under `unshare --pid --fork --mount-proc`; the workloads are attached
by the PIDs the namespace gives them, and their samples and off-CPU intervals must arrive."""
import os
import signal
import subprocess
import time

import vprof_env

ENV = None


def host_pid_of(ns_pid, exe):
    """The host PID of the process that its own namespace (one level down) calls ns_pid and that runs exe."""
    for name in os.listdir("/proc"):
        if not name.isdigit():
            continue
        try:
            with open(f"/proc/{name}/status") as f:
                nspid = next((line.split()[1:] for line in f if line.startswith("NSpid:")), [])
            if len(nspid) == 2 and int(nspid[1]) == ns_pid and os.readlink(f"/proc/{name}/exe") == exe:
                return int(name)
        except (OSError, ValueError):
            continue
    return None


class NamespacedEnv(vprof_env.VprofEnv):
    """vprofd as PID 1 of a new PID namespace, started after the two workloads it will profile."""

    def daemon_command(self):
        self.pid_file = os.path.join(self.tmp, "workload-pids")
        demo, wait = os.environ["VPROF_DEMO"], os.environ["VPROF_WAIT"]
        script = (f'"{demo}" --seconds 60 >/dev/null & d=$!; "{wait}" --seconds 60 >/dev/null & w=$!; '
                  f'echo "$d $w" > "{self.pid_file}"; exec "$@"')
        return ["unshare", "--pid", "--fork", "--mount-proc", "sh", "-c", script, "sh", *super().daemon_command()]

    def host_daemon_pid(self):
        return host_pid_of(1, os.path.realpath(os.environ["VPROFD"]))

    def stop(self):
        # SIGTERM to unshare would not reach vprofd: stop vprofd itself, its namespace ends with it.
        pid = self.host_daemon_pid()
        if pid:
            os.kill(pid, signal.SIGTERM)
            try:
                self.daemon.wait(10)
            except subprocess.TimeoutExpired:
                pass
        return super().stop()


class PidNamespace(vprof_env.TestCase):
    @classmethod
    def setUpClass(cls):
        with open(ENV.pid_file) as f:
            cls.demo, cls.wait = map(int, f.read().split())
        cls.demo_host = host_pid_of(cls.demo, os.path.realpath(os.environ["VPROF_DEMO"]))

    def test_namespace_ids_differ_from_the_host_ones(self):
        self.assertIsNotNone(self.demo_host)
        self.assertNotEqual(self.demo, self.demo_host)
        self.assertIn("Running in a PID namespace", ENV.log_text())

    def test_attach_by_namespace_pid_and_samples_arrive(self):
        r = ENV.ctl("attach", self.demo)
        self.assertEqual(r.returncode, 0, r.stderr)
        time.sleep(3)
        report = ENV.ctl_json("report", self.demo)
        functions = {row["function"]: row for row in report["functions"]}
        print(f"pidns: demo is PID {self.demo} in the namespace, {self.demo_host} on the host; "
              f"{report['total_samples']} samples in 3 s")
        self.assertGreater(report["total_samples"], 30)  # 99 Hz, one busy thread on a shared machine
        self.assertIn("work_alpha", functions)
        self.assertGreater(functions["work_alpha"]["exclusive_percent"], 30)
        listed = {t["pid"] for t in ENV.ctl_json("list")["targets"]}
        self.assertIn(self.demo, listed)
        self.assertEqual(ENV.ctl("detach", self.demo).returncode, 0)

    def test_off_cpu_intervals_arrive(self):
        r = ENV.ctl("attach", self.wait, "--off-cpu")
        self.assertEqual(r.returncode, 0, r.stderr)
        time.sleep(3)
        report = ENV.ctl_json("report", self.wait, "--values", "all")
        functions = {row["function"]: row for row in report["functions"]}
        print(f"pidns: vprof-wait (PID {self.wait} in the namespace): wait_sleep elapsed inclusive "
              f"{functions.get('wait_sleep', {}).get('elapsed_inclusive_percent')}%")
        self.assertIn("wait_sleep", functions)
        self.assertGreater(functions["wait_sleep"]["elapsed_inclusive_percent"], 30)
        status = ENV.ctl_json("status")
        self.assertGreater(status["off_cpu_blocked"], 0)
        self.assertEqual(ENV.ctl("detach", self.wait).returncode, 0)

    def test_host_pid_is_not_a_process_here(self):
        # The host PID of the demo names nothing (or another process) in the namespace: never the demo.
        r = ENV.ctl("attach", os.getpid())
        self.assertNotEqual(r.returncode, 0)
        self.assertIn(f"No process with PID {os.getpid()}", r.stderr)


class ContainerTargetOfHostDaemon(vprof_env.TestCase):
    """The other way round: a daemon on the host, a target in a PID namespace of its own. It is attached by its
    host PID; list shows the PID it has in its namespace (NStgid) too."""

    def test_list_shows_the_namespace_pid(self):
        env = vprof_env.start_env_or_skip()
        try:
            demo = os.environ["VPROF_DEMO"]
            p = subprocess.Popen(["unshare", "--pid", "--fork", "--mount-proc", demo, "--seconds", "4"],
                                 stdout=subprocess.DEVNULL)
            env.children.append(p)
            host_pid = None
            for _ in range(100):
                host_pid = host_pid_of(1, os.path.realpath(demo))
                if host_pid:
                    break
                time.sleep(0.05)
            self.assertIsNotNone(host_pid)
            self.assertEqual(env.ctl("attach", host_pid).returncode, 0)
            time.sleep(2)
            listed = {t["pid"]: t for t in env.ctl_json("list")["targets"]}
            self.assertEqual(listed[host_pid]["ns_pid"], 1)
            table = env.ctl("list").stdout
            self.assertIn("NSPID", table)
            self.assertGreater(env.ctl_json("report", host_pid)["total_samples"], 30)
            plain = env.ctl("list", "--no-headings").stdout.split()
            print(f"pidns: host daemon, target PID {host_pid} on the host and 1 in its namespace: {plain[:3]}")
            self.assertEqual(plain[:2], [str(host_pid), "1"])
        finally:
            problems = env.stop()
        self.assertEqual(problems, [])


def setUpModule():
    global ENV
    ENV = vprof_env.start_module_env(cls=NamespacedEnv)


if __name__ == "__main__":
    vprof_env.main()
