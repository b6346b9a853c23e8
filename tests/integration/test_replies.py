#!/usr/bin/env python3
# SPDX-License-Identifier: LGPL-2.1-or-later
"""What vprofd's replies carry. An error message quotes at most a short prefix of what the caller sent (64 bytes,
then "…", cut between characters, controls shown as '?'), whatever its size: the 16 MiB strings go on the wire
from scratch (dbus_wire.py), since no command-line client can carry them. And `report --by module` shows the
share of unnamed code from one snapshot: a target sampled at 999 Hz while the report runs in a loop never shows
a share above 100%, and its rows add up. Prints what it measured as 'replies:' lines."""
import os
import re
import subprocess
import sys
import time

import dbus_wire
import vprof_env

ENV = None
NAME, PATH, INTERFACE = "org.vprof.Profiler1", "/org/vprof/Profiler1", "org.vprof.Profiler1"
PROPERTIES = "org.freedesktop.DBus.Properties"
HUGE = 16 << 20
QUOTE_MAX = 64


def figure(text):
    print(f"\nreplies: {text}", end="", file=sys.stderr)


class BoundedEcho(vprof_env.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.sleeper = subprocess.Popen(["sleep", "600"])
        ENV.children.append(cls.sleeper)
        assert ENV.ctl("attach", cls.sleeper.pid).returncode == 0

    def setUp(self):
        self.bus = dbus_wire.Connection(ENV.socket)
        self.addCleanup(self.bus.close)

    def call(self, *args, path=PATH, interface=INTERFACE):
        error, body = self.bus.call(NAME, path, interface, *args)
        self.assertIsNotNone(error, f"{args[0]} succeeded")
        return error, body[0]

    def assert_quoted(self, message, sent, prefix):
        """message quotes prefix (of sent) and "…", and is short, one line and (decoded already) valid UTF-8."""
        self.assertLess(len(message.encode()), 300, message[:300])
        self.assertIn(f"'{prefix}…'", message)
        self.assertNotIn("\n", message)
        self.assertNotIn(sent[:QUOTE_MAX + 1], message)

    def test_sort_keys(self):
        for method in ("GetFunctions", "GetFunctionValues"):
            key = "x" * HUGE
            error, message = self.call(method, "ssut", str(self.sleeper.pid), key, 0, 0)
            self.assertEqual(error, "org.freedesktop.DBus.Error.InvalidArgs")
            self.assert_quoted(message, key, "x" * QUOTE_MAX)
            figure(f"{method} with a 16 MiB sort key: {error}, {len(message.encode())} bytes: {message[:40]}...")

    def test_cut_between_characters(self):
        # "a" and 31 "é" make 63 bytes: the 32nd "é" does not fit whole and is left out, not cut in two.
        key = "a" + "é" * (HUGE // 2)
        error, message = self.call("GetFunctions", "ssut", str(self.sleeper.pid), key, 0, 0)
        self.assert_quoted(message, key, "a" + "é" * 31)
        # Controls are shown as '?': the message stays one line, and no escape sequence reaches a terminal.
        key = "inclusive\n\x1b[2Jexclusive\t" + "y" * 100
        error, message = self.call("GetFunctions", "ssut", str(self.sleeper.pid), key, 0, 0)
        self.assert_quoted(message, key, ("inclusive??[2Jexclusive?" + "y" * 100)[:QUOTE_MAX])
        short = "bogus\nkey"
        error, message = self.call("GetFunctions", "ssut", str(self.sleeper.pid), short, 0, 0)
        self.assertIn("'bogus?key'", message)

    def test_names_sd_bus_would_echo(self):
        # Answered by sd-bus itself, which quotes the whole name; vprofd's filter answers first, as briefly.
        big = "P" * HUGE
        cases = [(("Get", "ss", INTERFACE, big), "org.freedesktop.DBus.Error.UnknownProperty"),
                 (("Set", "ss", INTERFACE, big), None),  # Set(ssv): without the value, InvalidArgs or the name
                 (("Get", "ss", big, "Version"), "org.freedesktop.DBus.Error.UnknownProperty"),
                 (("GetAll", "s", big), "org.freedesktop.DBus.Error.UnknownInterface")]
        for args, name in cases:
            error, message = self.call(*args, interface=PROPERTIES)
            if name:
                self.assertEqual(error, name, args[0])
                self.assert_quoted(message, big, "P" * QUOTE_MAX)
            self.assertLess(len(message.encode()), 300, f"{args[0]}: {message[:300]}")
        figure(f"Properties.GetAll of a 16 MiB interface name: {len(message.encode())} bytes")
        # An object path has no length limit but the message's: a long one is no object of vprofd's.
        path = "/org/x" + "/a" * 20000
        error, message = self.call("Detach", "s", "1", path=path)
        self.assertEqual(error, "org.freedesktop.DBus.Error.UnknownObject")
        self.assert_quoted(message, path, path[:QUOTE_MAX])
        # Short names are sd-bus's to answer, as before.
        error, message = self.call("Get", "ss", INTERFACE, "NoSuchProperty", interface=PROPERTIES)
        self.assertEqual(error, "org.freedesktop.DBus.Error.UnknownProperty")
        error, _ = self.call("Detach", "s", "1", path="/org/vprof/Profiler2")
        self.assertEqual(error, "org.freedesktop.DBus.Error.UnknownObject")
        self.assertEqual(self.bus.call(NAME, PATH, PROPERTIES, "Get", "ss", INTERFACE, "Version")[0], None)


class ModuleSnapshot(vprof_env.TestCase):
    SECONDS = 8

    def test_unnamed_share_never_above_100(self):
        # A stripped binary: nearly all its samples are in unnamed code, so a share taken against older counts
        # shows above 100% (it did: 100.04, 100.7) while both threads keep it busy.
        demo = ENV.spawn_demo("--seconds", self.SECONDS + 4, "--threads", 2, binary=os.environ["VPROF_DEMO_STRIPPED"])
        self.assertEqual(ENV.ctl("attach", demo.pid).returncode, 0)
        ENV.go(demo)
        time.sleep(0.5)
        runs, worst, totals = 0, 0.0, []
        deadline = time.monotonic() + self.SECONDS
        while time.monotonic() < deadline:
            r = ENV.ctl("report", demo.pid, "--by", "module")
            self.assertEqual(r.returncode, 0, r.stderr)
            # Rows: MODULE INCLUSIVE EXCLUSIVE INCL% EXCL% SYMBOLS UNNAMED%; the hints below them do not match.
            for m in re.finditer(r"^\S+ +\d+ +\d+ +[\d.]+ +[\d.]+ .* ([\d.]+|-)$", r.stdout, re.MULTILINE):
                if m.group(1) != "-":
                    worst = max(worst, float(m.group(1)))
                    self.assertLessEqual(float(m.group(1)), 100.0, r.stdout)
            report = ENV.ctl_json("report", demo.pid, "--by", "module")
            modules = report["modules"]
            self.assertEqual(sum(m["exclusive"] for m in modules), report["total_samples"])
            for m in modules:
                symbols = m.get("symbols") or {}
                self.assertLessEqual(symbols.get("unnamed_samples", 0), symbols.get("samples", 0), m)
            totals.append(report["total_samples"])
            runs += 1
        figure(f"report --by module, {runs} times in {self.SECONDS} s at 999 Hz: largest UNNAMED% {worst:.2f}, "
               f"total samples {totals[0]} -> {totals[-1]}")
        self.assertGreater(totals[-1], totals[0])  # samples kept coming
        self.assertGreater(worst, 90)  # the module is nearly all unnamed: the test could have seen 100.x


def setUpModule():
    global ENV
    ENV = vprof_env.start_module_env(frequency=999)


if __name__ == "__main__":
    vprof_env.main()
