#!/usr/bin/env python3
# SPDX-License-Identifier: LGPL-2.1-or-later
"""A query without a target: `vprofctl report` asks vprofd once, with the empty spec, and vprofd merges every
target the caller may read. Three vprof-demo processes of root and one of an unprivileged user run for two
seconds and exit, so that their tables stay as they are; then the merged tables must equal the sums of the
per-target ones, a bus monitor must see one method call for the whole report, and the user must get its own
target only.

And no caller starves the others (daemon/query-queue.h): one caller pipelines windowed queries over a target of
many stacks (vprof-stacks, exited, so that every answer must be the same), another sends one, and `vprofctl
status` runs meanwhile: the other caller's answer comes before the first caller's queue is half done, status
answers between two queries, and every answer is the lone query's, byte for byte."""
import collections
import os
import threading
import subprocess
import tempfile
import time
import unittest

import dbus_wire
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
    ENV = vprof_env.start_module_env(frequency=999, extra_bus_policies=[policy.name])


def wait_exited(pid):
    """Until the target has exited and its window holds its last second, closed at the next tick after the exit:
    from then on its tables and its window stay as they are."""
    for _ in range(200):
        rows = {t["pid"]: t for t in ENV.ctl_json("list")["targets"]}
        if rows.get(pid, {}).get("state") == "exited" and \
                ENV.ctl_json("report", pid, "--window", "60s")["total_samples"] == rows[pid]["samples"]:
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


BUS = ("org.vprof.Profiler1", "/org/vprof/Profiler1", "org.vprof.Profiler1")
WINDOW_USEC = 60_000_000
# Below dbus-daemon's max_replies_per_connection (128 on the system bus), past which it refuses more calls.
BIG_CALLER_QUERIES = 120


# The big caller's windows, in turn: more than the daemon keeps views of (daemon/query-cache.c), so that each of
# its queries counts its window again and the queue's turns, not the kept views, are what the test sees.
BIG_WINDOWS_USEC = [s * 1_000_000 for s in range(10, 61, 5)]


def window_query(c, pid, window_usec=WINDOW_USEC):
    return c.send(*BUS, "GetFunctions", "ssut", str(pid), "inclusive", 0, window_usec)


def answer(c, serial):
    """The reply to serial on c: (error, body)."""
    reply, error, body = c.receive_raw()
    while reply != serial:
        reply, error, body = c.receive_raw()
    return error, body


class Fairness(vprof_env.TestCase):
    @classmethod
    def setUpClass(cls):
        p = ENV.spawn_demo("--seconds", 8, "--threads", 2, binary=os.environ["VPROF_STACKS"])
        assert ENV.ctl("attach", p.pid).returncode == 0
        ENV.go(p)
        p.wait(60)
        wait_exited(p.pid)
        cls.pid = p.pid
        c = dbus_wire.Connection(ENV.socket)
        start = time.monotonic()
        error, cls.lone = answer(c, window_query(c, cls.pid))
        cls.lone_seconds = time.monotonic() - start
        assert error is None, error
        cls.lone_by_window = {}
        for w in BIG_WINDOWS_USEC:
            error, cls.lone_by_window[w] = answer(c, window_query(c, cls.pid, w))
            assert error is None, error
        c.close()

    def test_no_caller_starves_the_others(self):
        big = dbus_wire.Connection(ENV.socket)
        small = dbus_wire.Connection(ENV.socket)
        big.sock.settimeout(300)
        small.sock.settimeout(300)
        answers = {"big": [], "small": None}
        serials = {}
        for i in range(BIG_CALLER_QUERIES):
            w = BIG_WINDOWS_USEC[i % len(BIG_WINDOWS_USEC)]
            serials[window_query(big, self.pid, w)] = w

        def read_big():
            pending = dict(serials)
            while pending:
                reply, error, body = big.receive_raw()
                if reply in pending:
                    w = pending.pop(reply)
                    answers["big"].append((time.monotonic(), error, body == self.lone_by_window[w]))

        reader = threading.Thread(target=read_big)
        reader.start()
        time.sleep(0.05)  # the big caller's calls are queued first
        serial = window_query(small, self.pid)
        reply, error, body = small.receive_raw()
        while reply != serial:
            reply, error, body = small.receive_raw()
        answers["small"] = (time.monotonic(), error, body)
        status = []
        while reader.is_alive():
            t0 = time.monotonic()
            r = ENV.ctl("status")
            status.append(time.monotonic() - t0)
            self.assertEqual(r.returncode, 0, r.stderr)
            time.sleep(0.05)
        reader.join()
        big.close()
        small.close()

        before_small = sum(t < answers["small"][0] for t, _, _ in answers["big"])
        print(f"\nquery: a window of {self.lone_seconds * 1000:.0f} ms alone; {BIG_CALLER_QUERIES} of one caller "
              f"queued, another's one answered after {before_small} of them; status {len(status)} times, worst "
              f"{max(status, default=0) * 1000:.0f} ms", end="")
        self.assertIsNone(answers["small"][1])
        self.assertEqual(answers["small"][2], self.lone)
        self.assertEqual([e for _, e, _ in answers["big"]], [None] * BIG_CALLER_QUERIES)
        self.assertTrue(all(same for _, _, same in answers["big"]))
        # Run in turn, the other caller's query waits for a few of the first caller's, not for them all.
        self.assertLess(before_small, BIG_CALLER_QUERIES // 2)
        self.assertGreater(len(status), 0)
        self.assertLess(max(status), 2.0)

    def test_twins_share_one_count(self):
        """Twin windowed queries of several callers, pipelined: the first counts the window, the others borrow
        the view it keeps (daemon/query-cache.c); every answer is byte for byte the lone one's."""
        callers = [dbus_wire.Connection(ENV.socket) for _ in range(3)]
        sent = [[window_query(c, self.pid) for _ in range(40)] for c in callers]
        start = time.monotonic()
        for c, serials in zip(callers, sent):
            for serial in serials:
                error, body = answer(c, serial)
                self.assertIsNone(error)
                self.assertEqual(body, self.lone)
            c.close()
        print(f"\nquery: 120 twin windowed queries of 3 callers answered in {time.monotonic() - start:.2f} s "
              f"(one alone: {self.lone_seconds * 1000:.0f} ms)", end="")


if __name__ == "__main__":
    vprof_env.main()
