#!/usr/bin/env python3
# SPDX-License-Identifier: LGPL-2.1-or-later
"""Elapsed and application values (seed 003) end to end: real BPF on sched_switch, a real workload that
measures how its wall time splits between computing and waiting, vprofctl's tables and the D-Bus calls."""
import json
import os
import subprocess
import sys

import vprof_env

ENV = None


def rows_by(rows, key):
    return {r[key]: r for r in rows}


def spawn_wait(*args):
    return ENV.spawn_demo(*args, binary=os.environ["VPROF_WAIT"])


def busctl(*args):
    r = subprocess.run(["busctl", "--system", "--json=short", "call", "org.vprof.Profiler1", "/org/vprof/Profiler1",
                        "org.vprof.Profiler1", *map(str, args)], env=ENV.env, capture_output=True, text=True,
                       timeout=30)
    return r.returncode, (json.loads(r.stdout)["data"] if r.stdout.strip() else None), r.stderr


def sched_switch_links():
    """BPF links of vprofd's context-switch program, as bpftool sees them."""
    r = subprocess.run(["bpftool", "--json", "link", "show"], capture_output=True, text=True, timeout=30)
    if r.returncode != 0:
        raise AssertionError(f"bpftool link show failed: {r.stderr}")
    progs = subprocess.run(["bpftool", "--json", "prog", "show"], capture_output=True, text=True, timeout=30)
    names = {p["id"]: p.get("name", "") for p in json.loads(progs.stdout)}
    return [link for link in json.loads(r.stdout) if names.get(link.get("prog_id"), "").startswith("vprof_sched")]


def run_profiled(*args, off_cpu=True, seconds=6):
    """Run vprof-wait attached from before it starts until it exits; returns (truth, pid)."""
    report = os.path.join(ENV.tmp, f"wait-{len(ENV.children)}.json")
    p = spawn_wait("--seconds", seconds, "--report", report, *args)
    r = ENV.ctl("attach", p.pid, *(["--off-cpu"] if off_cpu else []))
    assert r.returncode == 0, r.stderr
    ENV.go(p)
    p.wait(60)
    with open(report) as f:
        return json.load(f), p.pid


class ComputeAndWait(vprof_env.TestCase):
    """A thread that computes 10 ms, sleeps 20 ms in clock_nanosleep() and blocks 10 ms in read(), in a loop."""

    @classmethod
    def setUpClass(cls):
        cls.before = ENV.ctl_json("status")
        cls.truth, cls.pid = run_profiled()
        cls.report = ENV.ctl_json("report", cls.pid, "--values", "all")
        cls.functions = rows_by(cls.report["functions"], "function")
        cls.threads = ENV.ctl_json("report", cls.pid, "--values", "all", "--by", "thread")
        cls.after = ENV.ctl_json("status")

    def share(self, name):
        return self.truth["functions"][name]["percent"]

    def test_application_time_is_the_cpu_bound_function(self):
        hot = self.functions["compute_hot"]
        print(f"\noff-cpu: compute_hot application exclusive {hot['application_exclusive_percent']:.2f}%, "
              f"inclusive {hot['application_inclusive_percent']:.2f}%", end="", file=sys.stderr)
        self.assertGreater(hot["application_exclusive_percent"], 95.0)
        self.assertGreater(hot["application_inclusive_percent"], 95.0)
        # The waits run no user code of their own.
        for name in ("wait_sleep", "wait_read"):
            self.assertLess(self.functions[name]["application_inclusive_percent"], 2.0, name)

    def test_elapsed_time_follows_wall_time(self):
        # The blocking functions are found under libc's wrappers, which have no frame pointers: the daemon
        # unwinds the leaf from its CFI.
        for name in ("compute_hot", "wait_sleep", "wait_read"):
            self.assertTrue(name in self.functions, f"{name} missing from {sorted(self.functions)}")
            measured = self.functions[name]["elapsed_inclusive_percent"]
            print(f"\noff-cpu: {name} elapsed inclusive {measured:.2f}% vs wall {self.share(name):.2f}% "
                  f"({measured - self.share(name):+.2f} points)", end="", file=sys.stderr)
            self.assertLess(abs(measured - self.share(name)), 5.0, name)
        # The waiting is blocked time, not preemption, and sits under the function that waits.
        sleep = self.functions["wait_sleep"]
        self.assertGreater(sleep["blocked"], 0.95 * sleep["elapsed_inclusive"])
        self.assertLess(self.functions["compute_hot"]["blocked"], 0.01 * self.report["elapsed_total"])
        # The system call wrappers are the leaves of the waits: their exclusive elapsed time is the waiting.
        self.assertGreater(self.functions["clock_nanosleep"]["elapsed_exclusive_percent"], self.share("wait_sleep") - 5)
        self.assertEqual(self.functions["clock_nanosleep"]["module"], "libc.so.6")

    def test_thread_elapsed_is_its_wall_time(self):
        (thread,) = self.threads["threads"]
        wall_ms = 1000 * self.truth["wall_seconds"]
        print(f"\noff-cpu: thread elapsed {thread['elapsed_inclusive_ms']:.1f} ms vs wall {wall_ms:.1f} ms "
              f"({100 * (thread['elapsed_inclusive_ms'] / wall_ms - 1):+.2f}%); application "
              f"{thread['application_inclusive_ms']:.1f} ms vs user CPU {1000 * self.truth['user_seconds']:.1f} ms",
              end="", file=sys.stderr)
        self.assertLess(abs(thread["elapsed_inclusive_ms"] / wall_ms - 1), 0.10)
        self.assertLess(abs(thread["application_inclusive_ms"] / (1000 * self.truth["user_seconds"]) - 1), 0.10)

    def test_values_add_up_as_seed_003_defines(self):
        r = self.report
        ei, ai = r["elapsed_total"], r["application_total"]
        # Every interval has exactly one leaf, so the exclusive values add up to the session's.
        self.assertAlmostEqual(sum(f["elapsed_exclusive"] for f in r["functions"]), ei, delta=1e-6 * ei)
        self.assertAlmostEqual(sum(f["application_exclusive"] for f in r["functions"]), ai, delta=1e-6 * ai)
        for f in r["functions"]:
            self.assertAlmostEqual(f["elapsed_inclusive_percent"], 100 * f["elapsed_inclusive"] / ei, places=6)
            self.assertAlmostEqual(f["elapsed_exclusive_percent"], 100 * f["elapsed_exclusive"] / ei, places=6)
            self.assertAlmostEqual(f["application_inclusive_percent"], 100 * f["application_inclusive"] / ai,
                                   places=6)
            self.assertAlmostEqual(f["application_exclusive_percent"], 100 * f["application_exclusive"] / ai,
                                   places=6)
            self.assertLessEqual(f["application_inclusive"], f["elapsed_inclusive"] + 1e-9, f)
            self.assertLessEqual(f["elapsed_exclusive"], f["elapsed_inclusive"] + 1e-9, f)
            self.assertAlmostEqual(f["elapsed_inclusive_ms"], f["elapsed_inclusive"] * 1000 / r["frequency"],
                                   places=6)
        # main holds every interval of the thread.
        self.assertAlmostEqual(self.functions["main"]["elapsed_inclusive_percent"], 100.0, delta=0.5)

    def test_sampling_view_is_unchanged(self):
        samples = ENV.ctl_json("report", self.pid)
        rows = rows_by(samples["functions"], "function")
        # On-CPU samples only: compute_hot is nearly all of it, the waits are only their few on-CPU samples.
        self.assertGreater(rows["compute_hot"]["exclusive_percent"], 90.0)
        for name in ("wait_sleep", "wait_read"):
            self.assertLess(rows.get(name, {"inclusive_percent": 0})["inclusive_percent"], 2.0, name)
        app = self.report["application_total"]
        self.assertLessEqual(app, samples["total_samples"])

    def test_intervals_are_counted_not_lost(self):
        cycles = self.truth["cycles"]
        blocked = self.after["off_cpu_blocked"] - self.before["off_cpu_blocked"]
        preempted = self.after["off_cpu_preempted"] - self.before["off_cpu_preempted"]
        print(f"\noff-cpu: {cycles} cycles, {blocked} blocked and {preempted} preempted intervals, "
              f"{self.after['off_cpu_lost']} lost", end="", file=sys.stderr)
        # A sleep and a read per cycle, nearly all blocking (a timer that fires before the thread is off the
        # CPU leaves it runnable, so an interval may count as preempted, or not happen); nothing lost.
        self.assertGreaterEqual(blocked, 0.95 * 2 * cycles)
        self.assertEqual(self.after["off_cpu_lost"], 0)
        self.assertEqual(self.after["samples_lost"], 0)
        listed = rows_by(ENV.ctl_json("list")["targets"], "pid")[self.pid]
        self.assertTrue(listed["off_cpu"])

    def test_dbus_values_match_the_client(self):
        code, data, err = busctl("GetFunctionValues", "ssut", str(self.pid), "elapsed-inclusive", 5, 0)
        self.assertEqual(code, 0, err)
        # The last argument lists the rows of inlined frames (vprof-wait has none inlined among these).
        elapsed_total, application_total, window, rows, inlined = data
        self.assertTrue(all(0 <= i < len(rows) for i in inlined), inlined)
        self.assertLessEqual(window[0], window[1])
        self.assertAlmostEqual(elapsed_total, self.report["elapsed_total"], places=6)
        self.assertEqual(len(rows), 5)
        eis = [row[2] for row in rows]
        self.assertEqual(eis, sorted(eis, reverse=True))
        name, module, ei, ee, ai, ae, eip, eep, aip, aep, blocked, preempted = rows[0]
        self.assertAlmostEqual(eip, 100 * ei / elapsed_total, places=9)
        self.assertAlmostEqual(aep, 100 * ae / application_total, places=9)
        self.assertAlmostEqual(blocked + preempted, self.functions[name]["blocked"] +
                               self.functions[name]["preempted"], places=6)
        for method in ("GetModuleValues", "GetThreadValues"):
            code, data, err = busctl(method, "st", str(self.pid), 0)
            self.assertEqual(code, 0, err)
            self.assertAlmostEqual(data[0], elapsed_total, places=6)
        code, data, err = busctl("GetProcessValues", "st", "", 0)
        self.assertEqual(code, 0, err)
        self.assertIn(self.pid, [row[0] for row in data[3]])


class DaemonDefault(vprof_env.TestCase):
    """vprofd --off-cpu: a plain Attach tracks off-CPU time."""

    def test_plain_attach_tracks_off_cpu(self):
        env = vprof_env.VprofEnv(frequency=99, extra_args=["--off-cpu"]).start()
        try:
            self.assertIs(env.ctl_json("status")["off_cpu_default"], True)
            p = env.spawn_demo("--seconds", 1, "--cpu-ms", 5, "--sleep-ms", 20, "--read-ms", 0,
                               binary=os.environ["VPROF_WAIT"])
            r = env.ctl("attach", p.pid)
            self.assertEqual(r.returncode, 0, r.stderr)
            self.assertTrue(rows_by(env.ctl_json("list")["targets"], "pid")[p.pid]["off_cpu"])
            env.go(p)
            p.wait(60)
            rows = rows_by(env.ctl_json("report", p.pid, "--values", "elapsed")["functions"], "function")
            # Mostly asleep: the sleeping function holds most of the elapsed time.
            self.assertGreater(rows["wait_sleep"]["elapsed_inclusive_percent"], 60.0)
        finally:
            problems = env.stop()
        self.assertEqual(problems, [])
        self.assertIs(ENV.ctl_json("status")["off_cpu_default"], False)


class SystemCallBound(vprof_env.TestCase):
    """A loop of write() to /dev/null: its time is elapsed time, in the kernel, not application time."""

    @classmethod
    def setUpClass(cls):
        cls.truth, cls.pid = run_profiled("--syscalls", seconds=4)
        cls.report = ENV.ctl_json("report", cls.pid, "--values", "all")
        cls.functions = rows_by(cls.report["functions"], "function")

    def test_kernel_time_is_elapsed_not_application(self):
        r = self.report
        # rusage counts CPU time only: compare with the elapsed time on the CPU, without the intervals off it
        # (on a busy machine the loop is preempted, often in the kernel, and those would count as kernel time).
        threads = ENV.ctl_json("report", self.pid, "--by", "thread", "--values", "all")["threads"]
        off_cpu = sum(t["blocked"] + t["preempted"] for t in threads)
        kernel_share = 100 * (1 - r["application_total"] / (r["elapsed_total"] - off_cpu))
        true_share = 100 * self.truth["system_seconds"] / (self.truth["system_seconds"] + self.truth["user_seconds"])
        print(f"\noff-cpu: write() loop kernel share of elapsed time on the CPU {kernel_share:.1f}% vs system "
              f"time {true_share:.1f}% of CPU time ({100 * off_cpu / r['elapsed_total']:.1f}% of elapsed off it)",
              end="", file=sys.stderr)
        self.assertGreater(kernel_share, 50.0)
        self.assertLess(abs(kernel_share - true_share), 10.0)
        write = self.functions["write"]
        self.assertEqual(write["module"], "libc.so.6")
        # write() entered the kernel: its exclusive elapsed time grows, its application time does not.
        self.assertGreater(write["elapsed_exclusive_percent"], 50.0)
        self.assertLess(write["application_exclusive"], 0.5 * write["elapsed_exclusive"])
        self.assertGreater(self.functions["write_null_loop"]["elapsed_inclusive_percent"], 95.0)

    def test_kernel_stack_stays_in_the_sampling_view(self):
        samples = ENV.ctl_json("report", self.pid)
        kernel = [f for f in samples["functions"] if f["module"].startswith("[")]
        self.assertTrue(kernel, "no kernel frames in the sampling view")
        self.assertGreater(sum(f["exclusive_percent"] for f in kernel), 50.0)
        modules = ENV.ctl_json("report", self.pid, "--values", "elapsed", "--by", "module")
        self.assertNotIn("[kernel]", [m["module"] for m in modules["modules"]])


class OffCpuIsOptIn(vprof_env.TestCase):
    def test_without_the_flag_elapsed_is_on_cpu_only(self):
        truth, pid = run_profiled("--cpu-ms", 5, "--sleep-ms", 20, "--read-ms", 0, off_cpu=False, seconds=2)
        report = ENV.ctl_json("report", pid, "--values", "all")
        self.assertFalse(rows_by(ENV.ctl_json("list")["targets"], "pid")[pid]["off_cpu"])
        self.assertTrue(all(f["blocked"] == 0 and f["preempted"] == 0 for f in report["functions"]))
        # Elapsed is then CPU time: far below the wall time, which is mostly sleep; the table says so.
        self.assertLess(report["elapsed_total_ms"], 0.5 * 1000 * truth["wall_seconds"])
        text = ENV.ctl("report", pid, "--values", "elapsed")
        self.assertIn("on-CPU time only: attached without --off-cpu", text.stdout.splitlines()[0])
        self.assertEqual(sched_switch_links(), [])

    def test_context_switch_program_runs_only_while_needed(self):
        self.assertEqual(sched_switch_links(), [], "attached with no off-CPU target")
        p = spawn_wait("--seconds", 30)
        try:
            r = ENV.ctl("attach", p.pid, "--off-cpu")
            self.assertEqual(r.returncode, 0, r.stderr)
            self.assertEqual(len(sched_switch_links()), 1)
            r = ENV.ctl("detach", p.pid)
            self.assertEqual(r.returncode, 0, r.stderr)
            self.assertEqual(sched_switch_links(), [])
        finally:
            p.kill()
            p.wait()

    def test_unknown_flags_and_sort_keys_are_refused(self):
        p = spawn_wait("--seconds", 30)
        try:
            code, _, err = busctl("Attach", "st", str(p.pid), 4)
            self.assertNotEqual(code, 0)
            self.assertIn("Unknown attach flags", err)
            r = ENV.dbus_send("Attach", f"string:{p.pid}", "uint64:12")
            self.assertIn("org.freedesktop.DBus.Error.InvalidArgs", r.stderr)
            self.assertEqual(ENV.ctl("attach", p.pid).returncode, 0)
            for sort in ("inclusive", "sideways", ""):
                r = ENV.dbus_send("GetFunctionValues", f"string:{p.pid}", f"string:{sort}", "uint32:0", "uint64:0")
                self.assertIn("org.freedesktop.DBus.Error.InvalidArgs", r.stderr, sort)
            # The sampling table sorts by sample counts only.
            for sort in ("elapsed-inclusive", "application-exclusive"):
                r = ENV.dbus_send("GetFunctions", f"string:{p.pid}", f"string:{sort}", "uint32:0", "uint64:0")
                self.assertIn("org.freedesktop.DBus.Error.InvalidArgs", r.stderr, sort)
            r = ENV.ctl("report", p.pid, "--values", "sideways")
            self.assertEqual(r.returncode, 1)
            self.assertEqual(len(r.stderr.strip().splitlines()), 1, r.stderr)
            r = ENV.ctl("report", p.pid, "--unit", "ms")
            self.assertEqual(r.returncode, 1)
            self.assertEqual(len(r.stderr.strip().splitlines()), 1, r.stderr)
            r = ENV.ctl("list", "--off-cpu")
            self.assertEqual(r.returncode, 1)
        finally:
            ENV.ctl("detach", p.pid)
            p.kill()
            p.wait()


def setUpModule():
    global ENV
    ENV = vprof_env.start_module_env(frequency=999)


if __name__ == "__main__":
    vprof_env.main()
