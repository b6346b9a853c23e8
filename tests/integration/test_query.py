#!/usr/bin/env python3
# SPDX-License-Identifier: LGPL-2.1-or-later
"""A query without a target: `vprofctl report` asks vprofd once, with the empty spec, and vprofd merges every
target the caller may read. Three vprof-demo processes of root and one of an unprivileged user run for two
seconds and exit, so that their tables stay as they are; then the merged tables must equal the sums of the
per-target ones, a bus monitor must see one method call for the whole report, and the user must get its own
target only."""
import collections
import os
import subprocess
import tempfile
import time
import unittest

import vprof_env

ENV = None
USER = "vprof-test-query"
SECONDS = 2


# The private bus denies BecomeMonitor as the system bus does; this test's bus lets root monitor it.
MONITOR_POLICY = """<!DOCTYPE busconfig PUBLIC "-//freedesktop//DTD D-Bus Bus Configuration 1.0//EN"
 "http://www.freedesktop.org/standards/dbus/1.0/busconfig.dtd">
<busconfig>
  <policy user="root">
    <allow send_destination="org.freedesktop.DBus" send_interface="org.freedesktop.DBus.Monitoring"/>
  </policy>
</busconfig>
"""


def setUpModule():
    global ENV
    policy = tempfile.NamedTemporaryFile("w", prefix="vprof-monitor-", suffix=".conf", delete=False)
    policy.write(MONITOR_POLICY)
    policy.close()
    os.chmod(policy.name, 0o644)
    unittest.addModuleCleanup(os.unlink, policy.name)
    ENV = vprof_env.start_module_env(frequency=199, extra_bus_policies=[policy.name])


def wait_exited(pid):
    for _ in range(200):
        rows = {t["pid"]: t for t in ENV.ctl_json("list")["targets"]}
        if rows.get(pid, {}).get("state") == "exited":
            return
        time.sleep(0.05)
    raise AssertionError(f"target {pid} never exited")


def run_demos(user=None, n=1):
    """n vprof-demo processes of user (root: None), attached by that user, run for SECONDS and gone."""
    procs = [ENV.spawn_demo("--seconds", SECONDS, user=user) for _ in range(n)]
    for p in procs:
        r = ENV.ctl("attach", p.pid, user=user)
        assert r.returncode == 0, r.stderr
    for p in procs:
        ENV.go(p)
    for p in procs:
        p.wait(timeout=30)
        wait_exited(p.pid)
    return [p.pid for p in procs]


def key_of(by, row):
    return {"function": lambda r: (r["function"], r["module"]), "module": lambda r: r["module"],
            "thread": lambda r: r["tid"], "process": lambda r: r["pid"]}[by](row)


ROWS = {"function": "functions", "module": "modules", "thread": "threads", "process": "processes"}


def table(by, *target, user=None, extra=()):
    doc = ENV.ctl_json("report", "--by", by, "--limit", 0, *extra, *map(str, target), user=user)
    return doc, {key_of(by, r): r for r in doc[ROWS[by]]}


MARKER_CALLS = ("ListTargets", "ListGroups")


class BusMonitor:
    """dbus-monitor on the private bus (root may become a monitor), for the method calls sent to vprofd between
    two markers: a `vprofctl list` before and after, each waited for, so that no call is missed or counted
    late."""

    def __init__(self):
        self.p = subprocess.Popen(["dbus-monitor", "--address", ENV.address, "--profile",
                                   "type='method_call',destination='org.vprof.Profiler1'"],
                                  stdout=subprocess.PIPE, env=ENV.env)
        os.set_blocking(self.p.stdout.fileno(), False)
        self.buffer = b""
        self.lines = []
        self.marker()

    def read(self):
        try:
            self.buffer += os.read(self.p.stdout.fileno(), 1 << 20)
        except BlockingIOError:
            return
        *complete, self.buffer = self.buffer.split(b"\n")
        self.lines += [line.decode() for line in complete if line.startswith(b"mc")]

    def marker(self):
        """Sends ListTargets until the monitor has seen one more than before (the first may come before the
        monitor is in place)."""
        self.read()
        seen = sum("ListTargets" in line for line in self.lines)
        for _ in range(20):
            ENV.ctl("list")
            for _ in range(20):
                self.read()
                if sum("ListTargets" in line for line in self.lines) > seen:
                    return len(self.lines)
                time.sleep(0.05)
        raise AssertionError("dbus-monitor never saw the marker call")

    def calls_of(self, fn):
        start = self.marker()
        fn()
        end = self.marker()
        # The members called between the markers, the markers' own calls (vprofctl list) left out.
        return [line.split()[-1] for line in self.lines[start:end] if line.split()[-1] not in MARKER_CALLS]

    def close(self):
        self.p.terminate()
        self.p.wait(timeout=10)
        self.p.stdout.close()


class EmptySpec(vprof_env.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.uid = vprof_env.add_user(USER)
        cls.root_pids = run_demos(n=3)
        cls.user_pids = run_demos(user=USER)

    @classmethod
    def tearDownClass(cls):
        vprof_env.remove_user(USER)

    def test_report_is_one_bus_call(self):
        monitor = BusMonitor()
        try:
            calls = monitor.calls_of(lambda: self.assertEqual(ENV.ctl("report").returncode, 0))
            values = monitor.calls_of(
                lambda: self.assertEqual(ENV.ctl("report", "--by", "thread", "--values", "elapsed").returncode, 0))
        finally:
            monitor.close()
        print(f"\nquery: report without a target made {calls}; --by thread --values elapsed {values}")
        self.assertEqual(calls, ["GetFunctions"])
        # The values' unit (Frequency) comes with the properties, which are no table.
        self.assertEqual([c for c in values if c != "Get"], ["GetThreadValues"])

    def check_sums(self, by, pids, user=None, extra=()):
        merged_doc, merged = table(by, user=user, extra=extra)
        total = 0
        sums = collections.Counter()
        exclusive = collections.Counter()
        for pid in pids:
            doc, rows = table(by, pid, user=user, extra=extra)
            total += doc["total_samples"]
            for k, r in rows.items():
                sums[k] += r["inclusive"]
                exclusive[k] += r["exclusive"]
        self.assertGreater(total, 0)
        self.assertEqual(merged_doc["total_samples"], total, by)
        self.assertEqual({k: r["inclusive"] for k, r in merged.items() if r["inclusive"] or r["exclusive"]},
                         {k: v for k, v in sums.items() if v or exclusive[k]}, by)
        self.assertEqual({k: r["exclusive"] for k, r in merged.items() if r["inclusive"] or r["exclusive"]},
                         {k: v for k, v in exclusive.items() if v or sums[k]}, by)
        return total

    def test_merged_tables_equal_the_sums(self):
        pids = self.root_pids + self.user_pids  # root reads them all
        for by in ("function", "module", "thread", "process"):
            total = self.check_sums(by, pids)
        # A window that holds the whole of their lives counts the same.
        self.check_sums("function", pids, extra=("--window", "60s"))
        print(f"\nquery: {len(pids)} targets, {total} samples: the merged functions, modules, threads and "
              f"processes equal the sums of the per-target tables")

    def test_values_merged(self):
        merged_doc, merged = table("function", extra=("--values", "elapsed"))
        sums = collections.Counter()
        for pid in self.root_pids + self.user_pids:
            _, rows = table("function", pid, extra=("--values", "elapsed"))
            for k, r in rows.items():
                sums[k] += r["elapsed_inclusive"]
        for k, v in sums.items():
            self.assertAlmostEqual(merged[k]["elapsed_inclusive"], v, places=6, msg=k)

    def test_user_merges_its_own_targets_only(self):
        own = self.check_sums("function", self.user_pids, user=USER)
        processes = ENV.ctl_json("report", "--by", "process", user=USER)["processes"]
        self.assertEqual([r["pid"] for r in processes], self.user_pids)
        everything = ENV.ctl_json("report")["total_samples"]
        self.assertLess(own, everything)
        print(f"\nquery: user {USER} merges its {own} samples, root all {everything}")


if __name__ == "__main__":
    vprof_env.main()
