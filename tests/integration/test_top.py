#!/usr/bin/env python3
# SPDX-License-Identifier: LGPL-2.1-or-later
"""vprofctl top in a real terminal: tmux on a private socket runs it in a session of a fixed size, and the test
reads the pane (capture-pane) and types keys (send-keys). It draws the header and the demo's hot function,
redraws in place (the pane's history stays empty, the header is there once), follows a resize, every key does
what it says at once (a refresh delay of a minute leaves the keys alone to change the screen), the pause freezes
the screen, and every way out gives the terminal back (no alternate screen, the cursor shown) with the right exit
status. Then the batch mode line by line, and its JSON per refresh. Every wait polls the pane, bounded."""
import json
import os
import re
import shutil
import signal
import subprocess
import time

import vprof_env

ENV = None
DEMO = None
# The header's lines, then the table's headings (client/top-screen.c).
HEADER_LINES = 5
FUNCTION_HEADINGS = ["FUNCTION", "MODULE", "INCLUSIVE", "EXCLUSIVE", "INCL%", "EXCL%"]
# The span a window covers, in the header: its length, from when to when.
WINDOW_SPAN = r"\d+\.\d s, \d\d:\d\d:\d\d to \d\d:\d\d:\d\d"
# What a daemon without time windows answers (the windows come with issue 16's ring of per-second counts).
NO_WINDOWS = "Time windows and merged tables are not kept"


class Terminal:
    """A tmux server of the test's own, one session running one command."""

    def __init__(self, test, command, width=100, height=30):
        self.test = test
        self.socket = os.path.join(ENV.tmp, f"tmux-{id(self)}")
        # The shell prints the exit status and keeps the pane, so that both stay readable.
        line = " ".join(command) + "; echo EXIT=$?; exec sleep 600"
        self.tmux("new-session", "-d", "-s", "top", "-x", str(width), "-y", str(height), line)
        test.addCleanup(self.tmux, "kill-server", check=False)

    def tmux(self, *args, check=True):
        r = subprocess.run(["tmux", "-S", self.socket, "-f", "/dev/null", *args], env=ENV.env, capture_output=True,
                           text=True, timeout=10)
        if check and r.returncode != 0:
            raise AssertionError(f"tmux {' '.join(args)}: {r.stderr}")
        return r.stdout

    def screen(self):
        return self.tmux("capture-pane", "-p", "-t", "top").rstrip("\n").split("\n")

    def text(self):
        return "\n".join(self.screen())

    def display(self, fmt):
        return self.tmux("display-message", "-p", "-t", "top", fmt).strip()

    def keys(self, *keys):
        self.tmux("send-keys", "-t", "top", *keys)

    def wait(self, what, predicate, timeout=15):
        """Polls the pane until predicate(lines) holds; fails with the last screen otherwise."""
        deadline = time.monotonic() + timeout
        while True:
            lines = self.screen()
            if predicate(lines):
                return lines
            if time.monotonic() > deadline:
                self.test.fail(f"timed out waiting for {what}; the screen:\n" + "\n".join(lines))
            time.sleep(0.05)

    def wait_text(self, needle, timeout=15):
        return self.wait(repr(needle), lambda lines: needle in "\n".join(lines), timeout)

    def vprofctl_pid(self):
        """The PID of the command that the pane's shell runs."""
        shell = self.display("#{pane_pid}")
        with open(f"/proc/{shell}/task/{shell}/children") as f:
            children = f.read().split()
        self.test.assertEqual(len(children), 1, children)
        return int(children[0])

    def exit_status(self):
        lines = self.wait("the exit status", lambda lines: any(l.startswith("EXIT=") for l in lines))
        return int(next(l for l in lines if l.startswith("EXIT="))[5:])

    def assert_restored(self):
        """The terminal as top found it: the main screen, the cursor shown."""
        self.test.assertEqual(self.display("#{alternate_on}"), "0")
        self.test.assertEqual(self.display("#{cursor_flag}"), "1")


def top_command(*args):
    return [os.environ["VPROFCTL"], "top", *map(str, args)]


def table(lines):
    """The rows below the headings, as lists of cells (names hold no spaces in the demo's tables)."""
    if len(lines) <= HEADER_LINES:
        return None
    return [l.split() for l in lines[HEADER_LINES + 1:] if l.strip()]


def header_value(lines, key):
    for line in lines[:HEADER_LINES]:
        m = re.search(rf"{key}: (.*?)(?:   |$)", line)
        if m:
            return m.group(1)
    return None


def samples(lines):
    v = header_value(lines, "Samples")
    return int(v) if v and v.isdigit() else None


class Screen(vprof_env.TestCase):
    def test_draws_and_redraws_in_place(self):
        term = Terminal(self, top_command(DEMO.pid, "--delay", 0.3))
        lines = term.wait_text("work_alpha")
        status = ENV.ctl_json("status")
        self.assertRegex(lines[0], rf"^vprofctl top: PID {DEMO.pid}, {status['event']}, {ENV.frequency} Hz .*h: help$")
        self.assertRegex(lines[1], rf"^Window: all since attach \({WINDOW_SPAN}\)   Samples: \d+$")
        self.assertRegex(lines[2], r"^Lost: \d+ since vprofd started")
        self.assertRegex(lines[3], r"^Table: functions, sorted by exclusive$")
        self.assertEqual(lines[HEADER_LINES].split(), FUNCTION_HEADINGS)
        # The hottest leaf first: the demo's 50% function.
        self.assertEqual(table(lines)[0][:2], ["work_alpha", "vprof-demo"])
        # Refreshes change the counts where they are: nothing scrolls into the history, one header on screen.
        first = samples(lines)
        lines = term.wait("a refresh", lambda l: (samples(l) or 0) > first)
        self.assertEqual(sum(1 for l in lines if l.startswith("vprofctl top:")), 1)
        self.assertEqual(sum(1 for l in lines if l.split() == FUNCTION_HEADINGS), 1)
        self.assertEqual(term.display("#{history_size}"), "0")
        self.assertEqual(term.display("#{alternate_on}"), "1")
        term.keys("q")
        self.assertEqual(term.exit_status(), 0)
        term.assert_restored()

    def test_follows_resize(self):
        term = Terminal(self, top_command(DEMO.pid, "--delay", 60), width=100, height=40)
        # The whole first frame: a capture may catch the pane while vprofctl is still writing it (2 rows of the
        # table seen once), and with a 60 s delay there is no second frame to wait for: two captures alike.
        seen = []

        def whole(l):
            seen.append(l)
            return len(seen) > 1 and seen[-2] == l and len(table(l) or []) > 8

        lines = term.wait("the first frame", whole)
        n_functions = len(table(lines))
        for width, height in ((60, 12), (40, 10), (140, 40)):
            fit = height - HEADER_LINES - 1
            term.tmux("resize-window", "-t", "top", "-x", str(width), "-y", str(height))
            lines = term.wait(f"{width}x{height}",
                              lambda l: len(l) <= height and l[0].startswith("vprofctl top:") and
                              table(l) is not None and len(table(l)) == min(fit, n_functions) and
                              all(len(line) <= width for line in l))
            # Every line fits the width; the number columns stay whole, the names give way.
            self.assertTrue(all(len(l) <= width for l in lines), lines)
            self.assertEqual(lines[HEADER_LINES].split()[-4:], FUNCTION_HEADINGS[-4:])
            for row in table(lines):
                self.assertRegex(" ".join(row[-4:]), r"^\d+ \d+ \d+\.\d\d \d+\.\d\d$", lines)
        term.keys("q")
        self.assertEqual(term.exit_status(), 0)

    def test_window_key(self):
        # A minute between refreshes: whatever changes on the screen within the wait comes from the key.
        term = Terminal(self, top_command(DEMO.pid, "--delay", 60))
        term.wait_text("work_alpha")
        for label in ("1s", "10s", "60s", "all since attach"):
            term.keys("w")
            lines = term.wait(f"the window {label}", lambda l: NO_WINDOWS in "\n".join(l) or
                              re.match(rf"^Window: {label} \({WINDOW_SPAN}\)", l[1]))
            if NO_WINDOWS in "\n".join(lines):
                self.skipTest("this vprofd keeps no time windows")
            # The span is the window's, or shorter where the attach is more recent.
            seconds = float(re.search(r"\((\d+\.\d) s,", lines[1]).group(1))
            if label != "all since attach":
                self.assertLessEqual(seconds, int(label[:-1]) + 1.0, lines[1])
        term.keys("q")
        self.assertEqual(term.exit_status(), 0)

    def test_keys_act_at_once(self):
        # A minute between refreshes: whatever changes on the screen within the wait comes from the key.
        term = Terminal(self, top_command(DEMO.pid, "--delay", 60))
        term.wait_text("work_alpha")

        term.keys("s")
        lines = term.wait("sorted by inclusive", lambda l: l[3] == "Table: functions, sorted by inclusive")
        # The rows of the thread's start and main (100% but for a sample taken in the kernel without a user
        # stack) come first now, the others by inclusive percent after them.
        inclusive = [float(row[-2]) for row in table(lines)]
        self.assertGreaterEqual(inclusive[0], 99.0)
        self.assertEqual(inclusive, sorted(inclusive, reverse=True))
        term.keys("s")
        lines = term.wait("sorted by exclusive", lambda l: l[3] == "Table: functions, sorted by exclusive")
        self.assertEqual(table(lines)[0][0], "work_alpha")

        term.keys("m")
        lines = term.wait("the modules", lambda l: l[3].startswith("Table: modules"))
        self.assertEqual(lines[HEADER_LINES].split(), ["MODULE", "INCLUSIVE", "EXCLUSIVE", "INCL%", "EXCL%"])
        modules = [row[0] for row in table(lines)]
        self.assertIn("vprof-demo", modules)
        self.assertIn("libc.so.6", modules)
        term.keys("t")
        lines = term.wait("the threads", lambda l: l[3].startswith("Table: threads"))
        self.assertEqual(lines[HEADER_LINES].split(), ["TID", "NAME", "SAMPLES", "PERCENT"])
        self.assertEqual(table(lines)[0][:2], [str(DEMO.pid), "vprof-demo"])
        term.keys("f")
        lines = term.wait("the functions", lambda l: l[3].startswith("Table: functions"))
        self.assertEqual(table(lines)[0][0], "work_alpha")

        for key in ("h", "?"):
            term.keys(key)
            term.wait_text("vprofctl top: keys")
            # Any key closes the help, and does nothing else: q does not quit here.
            term.keys("q" if key == "h" else "x")
            lines = term.wait("the help closed", lambda l: "vprofctl top: keys" not in "\n".join(l))
            self.assertEqual(table(lines)[0][0], "work_alpha")
        term.keys("q")
        self.assertEqual(term.exit_status(), 0)
        term.assert_restored()

    def test_pause_freezes(self):
        term = Terminal(self, top_command(DEMO.pid, "--delay", 0.2))
        term.wait_text("work_alpha")
        term.keys("p")
        frozen = term.wait("PAUSED", lambda l: l[3].endswith("PAUSED"))
        # Ten refresh delays: the screen stays the same to the character.
        deadline = time.monotonic() + 2
        while time.monotonic() < deadline:
            self.assertEqual(term.screen(), frozen)
            time.sleep(0.1)
        term.keys("p")
        lines = term.wait("resumed", lambda l: not l[3].endswith("PAUSED") and (samples(l) or 0) > samples(frozen))
        self.assertNotIn("PAUSED", "\n".join(lines))
        term.keys("q")
        self.assertEqual(term.exit_status(), 0)

    def test_failed_refresh_keeps_the_screen(self):
        demo = ENV.spawn_demo("--seconds", 60)
        self.assertEqual(ENV.ctl("attach", demo.pid).returncode, 0)
        ENV.go(demo)
        term = Terminal(self, top_command(demo.pid, "--delay", 0.2))
        term.wait_text("work_alpha")
        # Detached under it: the screen stays, with the last table and why the refresh failed, until q.
        self.assertEqual(ENV.ctl("detach", demo.pid).returncode, 0)
        lines = term.wait("the error", lambda l: "is not attached" in l[4])
        self.assertEqual(table(lines)[0][0], "work_alpha")
        term.keys("q")
        self.assertEqual(term.exit_status(), 0)
        term.assert_restored()
        # Nothing more after the screen: the error was shown on it.
        self.assertEqual([l for l in term.screen() if l.strip()], ["EXIT=0"])

    def test_signals_restore_the_terminal(self):
        for how in ("SIGTERM", "C-c"):
            with self.subTest(how):
                term = Terminal(self, top_command(DEMO.pid))
                term.wait_text("work_alpha")
                if how == "C-c":
                    term.keys("C-c")
                else:
                    os.kill(term.vprofctl_pid(), signal.SIGTERM)
                self.assertEqual(term.exit_status(), 0)
                term.assert_restored()

    def test_missing_target_is_one_line(self):
        pid = 4194303
        while os.path.exists(f"/proc/{pid}"):
            pid -= 1
        term = Terminal(self, top_command(pid))
        self.assertEqual(term.exit_status(), 1)
        term.assert_restored()
        lines = [l for l in term.screen() if l.strip()]
        self.assertEqual(len(lines), 2, lines)
        self.assertRegex(lines[0], rf"^vprofctl: .*{pid}")


class Batch(vprof_env.TestCase):
    def test_plain_refreshes(self):
        # Not a terminal: batch without being asked; -b says it anyway.
        for args in ((), ("-b",)):
            r = ENV.ctl("top", DEMO.pid, *args, "-n", 5, "--delay", 0.2, "--iterations", 3)
            self.assertEqual(r.returncode, 0, r.stderr)
            self.assertEqual(r.stderr, "")
            blocks = r.stdout.rstrip("\n").split("\n\n")
            self.assertEqual(len(blocks), 3, r.stdout)
            event = ENV.ctl_json("status")["event"]
            totals = []
            for block in blocks:
                lines = block.split("\n")
                self.assertEqual(lines[0], f"Event: {event}, {ENV.frequency} Hz")
                self.assertEqual(lines[1], f"Target: PID {DEMO.pid}")
                self.assertRegex(lines[2], rf"^Window: all since attach \({WINDOW_SPAN}\)$")
                self.assertRegex(lines[3], r"^Lost: \d+ since vprofd started$")
                m = re.fullmatch(rf"Total samples: (\d+) \(PID {DEMO.pid}\)", lines[4])
                self.assertTrue(m, lines[4])
                totals.append(int(m.group(1)))
                self.assertEqual(lines[5].split(), FUNCTION_HEADINGS)
                rows = [l.split() for l in lines[6:]]
                self.assertEqual(len(rows), 5, block)
                for row in rows:
                    self.assertEqual(len(row), 6, row)
                    incl, excl = int(row[2]), int(row[3])
                    self.assertLessEqual(excl, incl)
                    self.assertAlmostEqual(float(row[5]), 100.0 * excl / totals[-1], delta=0.006)
                self.assertEqual(rows[0][0], "work_alpha")
            self.assertLess(totals[0], totals[-1])

    def test_json_per_refresh(self):
        r = ENV.ctl("top", DEMO.pid, "-b", "--json", "-n", 3, "--delay", 0.2, "--iterations", 2)
        self.assertEqual(r.returncode, 0, r.stderr)
        lines = r.stdout.splitlines()
        self.assertEqual(len(lines), 2, r.stdout)
        status = ENV.ctl_json("status")
        for line in lines:
            doc = json.loads(line)
            self.assertEqual(doc["pid"], DEMO.pid)
            self.assertEqual(doc["target"], str(DEMO.pid))
            self.assertEqual((doc["event"], doc["frequency"]), (status["event"], ENV.frequency))
            self.assertGreaterEqual(doc["samples_lost"], 0)
            self.assertEqual((doc["table"], doc["sort"]), ("functions", "exclusive"))
            self.assertEqual(len(doc["functions"]), 3)
            self.assertEqual(doc["functions"][0]["function"], "work_alpha")
            # Each row says whether it is an inlined frame's: work_alpha is a function of its own (NOINLINE).
            self.assertTrue(all(isinstance(f["inlined"], bool) for f in doc["functions"]), doc["functions"])
            self.assertIs(doc["functions"][0]["inlined"], False)
            w = doc["window"]
            self.assertEqual((w["asked"], w["asked_usec"]), ("all", 0))
            self.assertLess(0, w["start_usec"])
            self.assertLessEqual(w["start_usec"], w["end_usec"])
            self.assertAlmostEqual(w["seconds"], (w["end_usec"] - w["start_usec"]) / 1e6, places=5)

    def test_window(self):
        r = ENV.ctl("top", DEMO.pid, "-b", "--json", "--window", "2s", "--iterations", 1)
        if NO_WINDOWS in r.stderr:
            self.skipTest("this vprofd keeps no time windows")
        self.assertEqual(r.returncode, 0, r.stderr)
        doc = json.loads(r.stdout)
        w = doc["window"]
        self.assertEqual((w["asked"], w["asked_usec"]), ("2s", 2000000))
        # Two seconds of the daemon's buckets: each closes when its timer fires, within the event loop's delay (a
        # few milliseconds; more on a loaded machine), so two of them span 2 s give or take that.
        self.assertLessEqual(w["seconds"], 2.25)
        self.assertGreater(w["seconds"], 1.0)
        # The demo runs one thread: at most a sample per period of the window (how many it gets depends on the
        # CPU it is given), and fewer than the whole run has, which the report since the attach counts.
        self.assertGreater(doc["total_samples"], 0)
        self.assertLessEqual(doc["total_samples"], w["seconds"] * ENV.frequency * 1.05 + 2, doc["total_samples"])
        self.assertLess(doc["total_samples"], ENV.ctl_json("report", DEMO.pid)["total_samples"])

    def test_bad_options(self):
        for args, message in (((DEMO.pid, "--window", "0"), "Invalid --window value '0'"),
                              ((DEMO.pid, "--window", "10x"), "Invalid --window value '10x'"),
                              ((DEMO.pid, "--sort", "elapsed-inclusive"), "applies to report --values only")):
            r = ENV.ctl("top", *args)
            self.assertEqual(r.returncode, 1)
            self.assertEqual(len(r.stderr.splitlines()), 1, r.stderr)
            self.assertIn(message, r.stderr)
        r = ENV.ctl("report", DEMO.pid, "-b")
        self.assertEqual(r.returncode, 1)
        self.assertIn("-b/--batch does not apply to 'report'", r.stderr)


def setUpModule():
    global ENV, DEMO
    if not shutil.which("tmux"):
        vprof_env.skip_or_fail("needs tmux")
    # 999 Hz: in a second, enough samples that the demo's 50% function is reliably above its 30% one.
    ENV = vprof_env.start_module_env(frequency=999)
    DEMO = ENV.spawn_demo("--seconds", 600)
    r = ENV.ctl("attach", DEMO.pid)
    assert r.returncode == 0, r.stderr
    ENV.go(DEMO)
    deadline = time.monotonic() + 30
    while ENV.ctl_json("report", DEMO.pid)["total_samples"] < 2000:
        assert time.monotonic() < deadline, "the demo is not sampled"
        time.sleep(0.1)


if __name__ == "__main__":
    vprof_env.main()
