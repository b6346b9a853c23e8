#!/usr/bin/env python3
# SPDX-License-Identifier: LGPL-2.1-or-later
"""Time windows end to end: a real vprofd keeps each target's last seconds, and a table over the last N seconds
counts those seconds' samples only, exactly.

vprof-phases burns CPU in phase_one() for 6 s, then in phase_two(), and says when it switched (CLOCK_REALTIME),
with a timeline of its CPU time. Three seconds after the switch, the last second is phase_two's alone, the tables
since the attach hold both, and the last ten seconds hold both in the proportion that the switch implies for the
window's real span as the daemon reports it (of the CPU time the process had in it: on a busy machine it does not
get a whole CPU, and samples follow CPU time), within 2 points. Once the process has exited, a window longer than
its life is its whole table."""
import json
import os
import re
import time

import vprof_env

ENV = None
FIRST, SECOND = 6, 8


def cpu_at(timeline, usec):
    """The process's CPU time at a realtime instant, interpolated in its timeline."""
    if usec <= timeline[0][0]:
        return timeline[0][1]
    for (t0, c0), (t1, c1) in zip(timeline, timeline[1:]):
        if usec <= t1:
            return c0 + (c1 - c0) * (usec - t0) / max(t1 - t0, 1)
    return timeline[-1][1]


def functions(report):
    return {r["function"]: r for r in report["functions"]}


def exclusive(report, name):
    row = functions(report).get(name)
    return row["exclusive"] if row else 0


class PhaseSwitch(vprof_env.TestCase):
    @classmethod
    def setUpClass(cls):
        switch_file, timeline_file = os.path.join(ENV.tmp, "switch"), os.path.join(ENV.tmp, "timeline")
        p = ENV.spawn_demo("--first", FIRST, "--second", SECOND, "--switch-file", switch_file, "--timeline",
                           timeline_file, binary=os.environ["VPROF_PHASES"])
        cls.pid = p.pid
        r = ENV.ctl("attach", p.pid)
        assert r.returncode == 0, r.stderr
        ENV.go(p)
        deadline = time.monotonic() + FIRST + 20
        while not os.path.exists(switch_file) or os.path.getsize(switch_file) == 0:
            assert time.monotonic() < deadline, "vprof-phases never switched"
            time.sleep(0.05)
        with open(switch_file) as f:
            cls.switch_usec = int(f.read().split()[0])
        # Three seconds after the switch: the last second closed well after it.
        time.sleep(max(0.0, cls.switch_usec / 1e6 + 3 - time.time()))
        r = ENV.ctl("top", p.pid, "--batch", "--iterations", 1, "--window", "1s", "--json")
        assert r.returncode == 0, r.stderr
        cls.last_second = json.loads(r.stdout)
        cls.ten_seconds = ENV.ctl_json("report", p.pid, "--window", "10s")
        cls.ten_seconds_text = ENV.ctl("report", p.pid, "--window", "10s").stdout
        cls.whole = ENV.ctl_json("report", p.pid)
        p.wait(FIRST + SECOND + 30)
        with open(timeline_file) as f:
            cls.timeline = [tuple(map(int, line.split())) for line in f]
        # Its last samples make its last second, at the next close (a second at most).
        time.sleep(1.5)
        cls.after_exit = ENV.ctl_json("report", p.pid)
        cls.after_exit_window = ENV.ctl_json("report", p.pid, "--window", "600s")
        cls.after_exit_processes = ENV.ctl_json("report", "--by", "process", "--window", "600s")

    def window_seconds(self, report):
        w = report["window"]
        self.assertAlmostEqual(w["seconds"], (w["end_usec"] - w["start_usec"]) / 1e6, places=5)
        return w["seconds"]

    def test_last_second_is_phase_two(self):
        r = self.last_second
        seconds = self.window_seconds(r)
        print(f"last second: {r['total_samples']} samples in {seconds:.3f} s, phase_two "
              f"{functions(r)['phase_two']['exclusive_percent']:.1f}% exclusive")
        # One bucket, about a second long (the timer that closes them is within 50 ms), after the switch.
        self.assertGreater(seconds, 0.8)
        self.assertLess(seconds, 1.3)
        self.assertGreaterEqual(r["window"]["start_usec"], self.switch_usec)
        self.assertGreater(functions(r)["phase_two"]["exclusive_percent"], 90)
        self.assertNotIn("phase_one", functions(r))

    def test_since_attach_has_both(self):
        r = self.whole
        one, two = exclusive(r, "phase_one"), exclusive(r, "phase_two")
        print(f"since the attach: phase_one {one}, phase_two {two} of {r['total_samples']} samples")
        self.assertGreater(functions(r)["phase_one"]["exclusive_percent"], 40)
        self.assertGreater(functions(r)["phase_two"]["exclusive_percent"], 15)
        self.assertLessEqual(r["window"]["start_usec"], self.ten_seconds["window"]["start_usec"])

    def test_ten_seconds_in_proportion(self):
        r = self.ten_seconds
        start, end = r["window"]["start_usec"], r["window"]["end_usec"]
        seconds = self.window_seconds(r)
        # The target is younger than ten seconds: the window covers its closed seconds, and says so.
        self.assertLessEqual(seconds, 10.2)
        self.assertGreater(seconds, FIRST)
        one, two = exclusive(r, "phase_one"), exclusive(r, "phase_two")
        self.assertGreater(one + two, 0.9 * r["total_samples"])
        # Of the CPU time the process had within the window's span, the part before the switch.
        cpu_start, cpu_switch, cpu_end = (cpu_at(self.timeline, t) for t in (start, self.switch_usec, end))
        expected = 100.0 * (cpu_switch - cpu_start) / (cpu_end - cpu_start)
        measured = 100.0 * one / (one + two)
        wall = 100.0 * (self.switch_usec - start) / (end - start)
        print(f"last 10 s: {seconds:.3f} s covered, {(cpu_end - cpu_start) / 1e6:.3f} s of CPU in it; phase_one "
              f"{measured:.2f}% of the two phases' samples, {expected:.2f}% of the CPU time before the switch "
              f"({wall:.2f}% of the wall time)")
        self.assertLess(abs(measured - expected), 2.0)

    def test_text_header_says_the_window(self):
        first = self.ten_seconds_text.splitlines()[0]
        m = re.fullmatch(r"Total samples: (\d+) in the last (\d+\.\d\d) s \(\d\d:\d\d:\d\d to \d\d:\d\d:\d\d\)",
                         first)
        self.assertIsNotNone(m, first)
        self.assertGreater(int(m.group(1)), 0)
        self.assertAlmostEqual(float(m.group(2)), self.ten_seconds["window"]["seconds"], delta=1.5)

    def test_window_over_a_whole_life_is_the_whole_table(self):
        whole, window = self.after_exit, self.after_exit_window
        print(f"after the exit: {whole['total_samples']} samples since the attach, "
              f"{window['total_samples']} in {self.window_seconds(window):.3f} s of windows")
        self.assertEqual(window["total_samples"], whole["total_samples"])
        self.assertEqual(functions(window), functions(whole))
        # The process table's window totals: the same samples.
        rows = {r["pid"]: r for r in self.after_exit_processes["processes"]}
        self.assertEqual(rows[self.pid]["inclusive"], whole["total_samples"])


class Group(vprof_env.TestCase):
    """A process followed with its children: its tables and its windows are its members' merged, by name."""

    def test_windows_of_a_group(self):
        log = os.path.join(ENV.tmp, "workers.log")
        p = ENV.spawn_demo("service", "--workers", 2, "--worker-seconds", 1, "--log", log,
                           binary=os.environ["VPROF_FORK"])
        r = ENV.ctl("attach", "--children", p.pid)
        self.assertEqual(r.returncode, 0, r.stderr)
        ENV.go(p)
        time.sleep(5)
        # Running: the last seconds of the workers alive and gone.
        last = ENV.ctl_json("report", p.pid, "--window", "3s")
        self.assertGreater(last["total_samples"], 0)
        self.assertIn("fork_worker_spin", functions(last))
        self.assertLessEqual(last["window"]["seconds"], 3.25)
        p.terminate()
        p.wait(10)
        # Every member has exited; its last second closes within one.
        time.sleep(1.5)
        whole = ENV.ctl_json("report", p.pid)
        window = ENV.ctl_json("report", p.pid, "--window", "600s")
        rows = {r["pid"]: r for r in ENV.ctl_json("report", "--by", "process", p.pid, "--window", "600s")["processes"]}
        workers = len(rows) - 1
        print(f"group of {p.pid}: {workers} workers, {whole['total_samples']} samples since the attach, "
              f"{window['total_samples']} in its windows")
        self.assertGreaterEqual(workers, 4)
        self.assertEqual(window["total_samples"], whole["total_samples"])
        self.assertEqual(functions(window), functions(whole))
        self.assertEqual(sum(r["inclusive"] for r in rows.values()), whole["total_samples"])
        self.assertEqual(ENV.ctl("detach", p.pid).returncode, 0)


class Errors(vprof_env.TestCase):
    def test_window_arguments(self):
        p = ENV.spawn_demo("--seconds", 30, wait=False)
        self.assertEqual(ENV.ctl("attach", p.pid).returncode, 0)
        r = ENV.ctl("report", p.pid, "--window", "601s")
        self.assertNotEqual(r.returncode, 0)
        self.assertIn("WindowSeconds=600", r.stderr)
        self.assertEqual(len(r.stderr.strip().splitlines()), 1)
        # Parts of a second are whole seconds: 500 ms is the last second.
        self.assertEqual(ENV.ctl_json("report", p.pid, "--window", "500ms")["window"]["asked_usec"], 1000000)
        for bad in ("0", "0s", "-1s", "10x", "1d"):
            r = ENV.ctl("report", p.pid, "--window", bad)
            self.assertNotEqual(r.returncode, 0, bad)
            self.assertIn("Invalid --window value", r.stderr)
        r = ENV.ctl("status", "--window", "1s")
        self.assertIn("does not apply to 'status'", r.stderr)
        # "all" is since the attach, no window.
        self.assertEqual(ENV.ctl("report", p.pid, "--window", "all").returncode, 0)
        self.assertEqual(ENV.ctl("report", p.pid, "--by", "module", "--window", "1m").returncode, 0)
        self.assertEqual(ENV.ctl("report", p.pid, "--by", "stack", "--window", "500ms").returncode, 0)
        self.assertEqual(ENV.ctl("report", p.pid, "--values", "all", "--window", "5s").returncode, 0)
        self.assertEqual(ENV.ctl("detach", p.pid).returncode, 0)
        p.kill()
        p.wait()

    def test_status_shows_windows(self):
        s = ENV.ctl_json("status")
        self.assertEqual(s["window_seconds"], 600)
        text = ENV.ctl("status").stdout
        self.assertIn("Time windows:", text)
        self.assertIn("the last 600 s of each target", text)


class WindowsOff(vprof_env.TestCase):
    def test_off(self):
        env = self.start_env(extra_args=["--window-seconds=0"])
        p = env.spawn_demo("--seconds", 30, wait=False)
        self.assertEqual(env.ctl("attach", p.pid).returncode, 0)
        r = env.ctl("report", p.pid, "--window", "1s")
        self.assertNotEqual(r.returncode, 0)
        self.assertIn("WindowSeconds=0", r.stderr)
        self.assertEqual(env.ctl("report", p.pid).returncode, 0)
        s = env.ctl_json("status")
        self.assertEqual(s["window_seconds"], 0)
        self.assertEqual(s["window_memory"], 0)
        p.kill()
        p.wait()


def setUpModule():
    global ENV
    # 999 Hz: enough samples in ten seconds that, on a busy machine where the process gets part of a CPU and the
    # samples fall on it at random moments, their proportion is within a fraction of a point of its CPU time's.
    ENV = vprof_env.start_module_env(frequency=999)


if __name__ == "__main__":
    vprof_env.main()
