#!/usr/bin/env python3
# SPDX-License-Identifier: LGPL-2.1-or-later
"""Names that are not UTF-8, from an unprivileged user: a command name with the bytes 0xff 0xfe, one with CR/LF,
and a hot function whose name holds 0xff 0xfe and a newline. Root's list, merged report, report --by process,
the target's report and its JSON, and the exporter's /targets all answer, with the names escaped (\\xNN, \\r,
\\n), before and after a restart of vprofd on the same state directory; the command name with CR/LF makes one
log line. A caller's own strings are the bus's to check. And a storm of 10,000 short-lived children attached
with --children by that user leaves a few dozen log lines, not one per child."""
import json
import os
import re
import subprocess
import time
import unittest

import dbus_wire
import vprof_env
from exporter_env import Exporter

ENV = None
USER = "vprof-utf8-test"
UID = None

BAD = b"x\xff\xfey"            # the command's file name: 0xff 0xfe are no UTF-8
CRLF = b"a\r\nb"                # a file name with CR/LF
FUNCTION = b"work_\xff\xfe\nalpha"  # vprof-demo's work_alpha renamed in its .symtab (objcopy)

# As vprofd shows them: the copy that as_user() makes is named "public-" + the file name.
BAD_SHOWN = "public-x\\xff\\xfey"
CRLF_SHOWN = "public-a\\r\\nb"
FUNCTION_SHOWN = "work_\\xff\\xfe\\nalpha"


def make_binary(name, function=None):
    """A copy of vprof-demo named name (bytes), in the environment's directory, its work_alpha renamed to
    function; returned as a str path (surrogate-escaped), as subprocess and shutil take it."""
    d = os.path.join(ENV.tmp, "bin")
    os.makedirs(d, mode=0o755, exist_ok=True)
    path = os.path.join(os.fsencode(d), name)
    cmd = [b"objcopy"]
    if function:
        cmd += [b"--redefine-sym", b"work_alpha=" + function]
    subprocess.run(cmd + [os.fsencode(os.environ["VPROF_DEMO"]), path], check=True)
    os.chmod(path, 0o755)
    return os.fsdecode(path)


def ok(*args):
    r = ENV.ctl(*args)
    if r.returncode != 0:
        raise AssertionError(f"vprofctl {' '.join(map(str, args))} failed ({r.returncode}): {r.stderr}")
    return r.stdout


class NamesNotUtf8(vprof_env.TestCase):
    def check_answers(self, bad_pid, crlf_pid, when):
        """Every way out answers, with the names escaped."""
        listing = ok("list")
        self.assertIn(BAD_SHOWN, listing, when)
        self.assertIn(CRLF_SHOWN, listing, when)
        merged = ok("report")
        self.assertIn(FUNCTION_SHOWN, merged, when)
        by_process = ok("report", "--by", "process")
        self.assertIn(BAD_SHOWN, by_process, when)
        self.assertIn(CRLF_SHOWN, by_process, when)
        functions = ok("report", bad_pid, "--by", "function")
        self.assertIn(FUNCTION_SHOWN, functions, when)
        report = ENV.ctl_json("report", bad_pid)
        names = [f["function"] for f in report["functions"]]
        self.assertIn(FUNCTION_SHOWN, names, when)
        self.assertEqual(max(report["functions"], key=lambda f: f["exclusive"])["function"], FUNCTION_SHOWN, when)
        rows = {t["pid"]: t for t in ENV.ctl_json("list")["targets"]}
        self.assertEqual(rows[bad_pid]["command"], BAD_SHOWN, when)
        self.assertEqual(rows[crlf_pid]["command"], CRLF_SHOWN, when)
        processes = ENV.ctl_json("report", "--by", "process")
        print(f"{when}: list, report, report --by process, report {bad_pid} (--json) answered; "
              f"{len(processes.get('processes', processes.get('rows', [])))} process rows")
        for line in by_process.splitlines():
            self.assertNotIn("\r", line)

        e = Exporter(ENV)
        try:
            status, _, body = e.get("/targets")
            self.assertEqual(status, 200, (when, body[:200]))
            comms = {entry["labels"].get("comm") for entry in json.loads(body)}
            self.assertIn(BAD_SHOWN, comms, when)
            self.assertIn(CRLF_SHOWN, comms, when)
            for path in ("/metrics", "/"):
                status, _, body = e.get(path)
                self.assertEqual(status, 200, (when, path, body[:200]))
        finally:
            e.stop()

    def test_names_escaped_before_and_after_restart(self):
        bad = ENV.spawn_demo("--seconds", 4, user=USER, binary=make_binary(BAD, FUNCTION))
        crlf = ENV.spawn_demo("--seconds", 4, user=USER, binary=make_binary(CRLF))
        for p in (bad, crlf):
            r = ENV.ctl("attach", p.pid, user=USER)
            self.assertEqual(r.returncode, 0, r.stderr)
            ENV.go(p)
        for p in (bad, crlf):
            self.assertEqual(p.wait(60), 0)
        time.sleep(1)  # the last samples drained, the exits seen
        self.check_answers(bad.pid, crlf.pid, "before the restart")

        # One line for each message that names the command with CR/LF, which shows escaped.
        lines = ENV.log_text().split("\n")
        self.assertNotIn("\r", ENV.log_text())
        attached = [line for line in lines if f"({CRLF_SHOWN})" in line and "Attached to" in line]
        self.assertEqual(len(attached), 1, lines)
        self.assertFalse([line for line in lines if line.startswith("b)")], lines)
        print(f"log: {attached[0]!r}")

        # Saved as exited, restored by a new vprofd on the same state directory: the same answers.
        ENV.daemon.terminate()
        self.assertEqual(ENV.daemon.wait(30), 0)
        ENV.start_daemon()
        self.check_answers(bad.pid, crlf.pid, "after the restart")
        for p in (bad, crlf):
            ENV.ctl("detach", p.pid)


class CallerStrings(vprof_env.TestCase):
    def test_invalid_utf8_never_reaches_vprofd(self):
        """A caller's strings need no escape: the bus refuses a message with a string that is not UTF-8 before
        vprofd reads it (dbus-daemon checks every message it routes; sd-bus would refuse it too)."""
        c = dbus_wire.Connection(ENV.socket)
        try:
            error, _ = c.call("org.vprof.Profiler1", "/org/vprof/Profiler1", "org.vprof.Profiler1", "Attach", "st",
                              b"x\xff\xfey", 0)
            outcome = f"answered {error}"
            self.assertIsNotNone(error)
        except (RuntimeError, OSError) as e:
            outcome = f"the bus hung up on the caller ({e})"
        finally:
            c.close()
        print(f"Attach with a target of bytes 0xff 0xfe: {outcome}")
        self.assertEqual(ENV.ctl("status").returncode, 0)
        self.assertNotIn("\ufffd", ENV.log_text())


class Storm(vprof_env.TestCase):
    def test_storm_log_bounded(self):
        """5,000 children of one user, attached with --children by that user: the limits (64 targets a user)
        evict the exited children one after the other for the new ones, thousands of times; the log says so once,
        then counts. (10,000 until issue 28: twice the time, the same check.)"""
        env = self.start_env()
        cmd = env.as_user(UID, [os.environ["VPROF_FORK"], "storm", "--wait-stdin", "--children", 5000,
                                "--per-second", 1000, "--child-ms", 1])
        p = subprocess.Popen(list(map(str, cmd)), stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
        env.children.append(p)
        self.assertTrue(p.stdout.readline().startswith("ready "))
        before = len(env.log_text().splitlines())
        r = env.ctl("attach", "--children", p.pid, user=USER)
        self.assertEqual(r.returncode, 0, r.stderr)
        start = time.monotonic()
        p.stdin.write("go\n")
        p.stdin.flush()
        out = p.stdout.read()
        self.assertEqual(p.wait(300), 0)
        elapsed = time.monotonic() - start
        time.sleep(1)
        done = next(line for line in out.splitlines() if line.startswith("done "))
        group = next(g for g in env.ctl_json("list")["groups"] if g["group"] == str(p.pid))
        r = env.ctl("detach", p.pid, user=USER)
        self.assertEqual(r.returncode, 0, r.stderr)
        lines = env.log_text().splitlines()[before:]
        print(f"storm: {done} (at 1000 a second), {elapsed:.1f} s; {len(lines)} log lines of vprofd; group {group}")
        for line in lines:
            print(f"  {line}")
        self.assertLessEqual(len(lines), 36)
        summary = [line for line in lines if "Detached from" in line]
        self.assertEqual(len(summary), 1, lines)
        m = re.search(r"(\d+) evicted for newer members", summary[0])
        self.assertTrue(m, summary[0])
        self.assertEqual(int(m.group(1)), group["evicted"])
        print(f"storm: {m.group(1)} evictions counted, not logged")


def setUpModule():
    global ENV, UID
    UID = vprof_env.add_user(USER)
    unittest.addModuleCleanup(vprof_env.remove_user, USER)
    ENV = vprof_env.start_module_env()


if __name__ == "__main__":
    vprof_env.main()
