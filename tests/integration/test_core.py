#!/usr/bin/env python3
# SPDX-License-Identifier: LGPL-2.1-or-later
"""End to end with real parts only: a private dbus-daemon with the shipped policy, vprofd with its BPF
sampler, vprofctl, and the vprof-demo workload whose true shares it measures itself."""
import os
import json
import re
import shutil
import subprocess
import sys
import time
import xml.etree.ElementTree as ET

import vprof_env

ENV = None
WORK = ["work_alpha", "work_beta", "work_gamma", "work_delta"]


def rows_by(rows, key):
    return {r[key]: r for r in rows}


def on_cpu_seconds(pid):
    """The time a process's main thread has run, from the scheduler's statistics."""
    with open(f"/proc/{pid}/schedstat") as f:
        return int(f.read().split()[0]) / 1e9


class ProfileOfKnownWorkload(vprof_env.TestCase):
    """One profiled run of vprof-demo next to a busy bystander that is not attached."""

    @classmethod
    def setUpClass(cls):
        cls.report_path = os.path.join(ENV.tmp, "truth.json")
        cls.demo = ENV.spawn_demo("--seconds", 8, "--report", cls.report_path)
        cls.bystander = ENV.spawn_demo("--bystander", "--seconds", 8, wait=False)
        cls.before = ENV.ctl_json("status")
        r = ENV.ctl("attach", cls.demo.pid)
        assert r.returncode == 0, r.stderr
        ENV.go(cls.demo)
        cls.demo.wait(60)
        cls.bystander.wait(60)
        with open(cls.report_path) as f:
            cls.truth = json.load(f)
        cls.functions = ENV.ctl_json("report", cls.demo.pid, "--by", "function")
        cls.status = ENV.ctl_json("status")

    def test_leaf_exclusive_shares_match_truth(self):
        rows = rows_by(self.functions["functions"], "function")
        for name in WORK:
            self.assertIn(name, rows, f"{name} missing from {list(rows)[:10]}")
            measured = rows[name]["exclusive_percent"]
            true = self.truth["functions"][name]["percent"]
            print(f"\naccuracy: {name} exclusive {measured:.2f}% vs true {true:.2f}% "
                  f"({measured - true:+.2f} points)", end="", file=sys.stderr)
            self.assertLess(abs(measured - true), 3.0, f"{name}: vprof {measured:.2f}% vs true {true:.2f}%")

    def test_hot_function_ranks_first(self):
        self.assertEqual(self.functions["functions"][0]["function"], "work_alpha")
        self.assertEqual(self.functions["functions"][0]["module"], "vprof-demo")

    def test_inclusive_counts_call_tree_and_recursion_once(self):
        rows = rows_by(self.functions["functions"], "function")
        total = self.functions["total_samples"]
        # Every sample of the work is under run_round and main.
        self.assertGreater(rows["run_round"]["inclusive_percent"], 95.0)
        self.assertGreater(rows["main"]["inclusive_percent"], 95.0)
        # recurse_down is 6 frames deep on every work_delta sample but counts once per sample.
        rec, delta = rows["recurse_down"], rows["work_delta"]
        self.assertGreaterEqual(rec["inclusive"], delta["inclusive"])
        self.assertLessEqual(rec["inclusive"], total)
        self.assertLess(abs(rec["inclusive_percent"] - self.truth["functions"]["work_delta"]["percent"]), 3.0)
        for r in self.functions["functions"]:
            self.assertLessEqual(r["exclusive"], r["inclusive"], r)
            self.assertLessEqual(r["inclusive"], total, r)
            self.assertAlmostEqual(r["inclusive_percent"], 100.0 * r["inclusive"] / total, places=6)
            self.assertAlmostEqual(r["exclusive_percent"], 100.0 * r["exclusive"] / total, places=6)
        # Exclusive counts add up to the total: every sample has exactly one executing function.
        self.assertEqual(sum(r["exclusive"] for r in self.functions["functions"]), total)

    def test_sample_count_matches_cpu_time(self):
        expected = self.truth["cpu_seconds"] * ENV.frequency
        total = self.functions["total_samples"]
        self.assertLess(abs(total - expected) / expected, 0.15, f"{total} samples for {expected:.0f} expected")

    def test_bystander_contributes_nothing(self):
        for r in self.functions["functions"]:
            self.assertNotEqual(r["function"], "bystander_spin")
        procs = ENV.ctl_json("report", "--by", "process")["processes"]
        self.assertNotIn(self.bystander.pid, [p["pid"] for p in procs])
        threads = ENV.ctl_json("report", self.demo.pid, "--by", "thread")["threads"]
        self.assertEqual([t["tid"] for t in threads], [self.demo.pid])
        # The bystander kept the other CPU busy: its samples were seen and discarded in the kernel.
        discarded = self.status["samples_discarded"] - self.before["samples_discarded"]
        self.assertGreater(discarded, 0.5 * 8 * ENV.frequency)

    def test_accounting_adds_up(self):
        s = self.status
        self.assertEqual(s["samples_seen"], s["samples_kept"] + s["samples_discarded"] + s["samples_lost"])
        self.assertEqual(s["samples_lost"], 0, s)
        counted = sum(p["inclusive"] for p in ENV.ctl_json("report", "--by", "process")["processes"])
        self.assertLessEqual(counted + s["samples_unclaimed"], s["samples_kept"])

    def test_modules_threads_processes(self):
        mods = rows_by(ENV.ctl_json("report", self.demo.pid, "--by", "module")["modules"], "module")
        self.assertGreater(mods["vprof-demo"]["exclusive_percent"], 95.0)
        self.assertGreater(mods["vprof-demo"]["inclusive_percent"], 99.0)
        threads = ENV.ctl_json("report", self.demo.pid, "--by", "thread")
        self.assertEqual(threads["threads"][0]["name"], "vprof-demo")
        self.assertEqual(threads["threads"][0]["inclusive"], threads["total_samples"])
        procs = rows_by(ENV.ctl_json("report", "--by", "process")["processes"], "pid")
        self.assertEqual(procs[self.demo.pid]["command"], "vprof-demo")
        self.assertEqual(procs[self.demo.pid]["inclusive"], self.functions["total_samples"])

    def test_exited_target_stays_queryable(self):
        targets = rows_by(ENV.ctl_json("list")["targets"], "pid")
        self.assertEqual(targets[self.demo.pid]["state"], "exited")
        self.assertEqual(targets[self.demo.pid]["samples"], self.functions["total_samples"])

    def test_table_output(self):
        r = ENV.ctl("report", self.demo.pid, "-n", "5")
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertIn("work_alpha", r.stdout)
        self.assertRegex(r.stdout, r"FUNCTION\s+MODULE\s+INCLUSIVE\s+EXCLUSIVE")

    def test_source_column_is_opt_in(self):
        """--source adds the SOURCE column (the table schema's optional one) through GetFunctionSources on the
        real bus and policy, read from the demo's DWARF line tables after it exited; the JSON rows are the same
        rows with a source key. Other tables refuse it."""
        r = ENV.ctl("report", self.demo.pid, "-n", "5", "--source")
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertRegex(r.stdout, r"FUNCTION\s+MODULE\s+SOURCE\s+INCLUSIVE\s+EXCLUSIVE")
        with_source = ENV.ctl_json("report", self.demo.pid, "--by", "function", "--source")
        sources = {row["function"]: row.pop("source", None) for row in with_source["functions"]}
        self.assertEqual(with_source, self.functions)
        for name in WORK:
            # FILE:LINE, the line one of the function's own (its first, or its first statement's).
            path, _, line = sources[name].rpartition(":")
            self.assertTrue(path.endswith("vprof-demo.c"), sources[name])
            with open(path) as f:
                text = f.read().splitlines()
            self.assertIn(name, text[int(line) - 1] + text[int(line) - 2], sources[name])
        # Code without a file (the kernel's) has none.
        self.assertTrue(all(sources[r["function"]] is None for r in with_source["functions"]
                            if r["module"].startswith("[")))
        r = ENV.ctl("report", self.demo.pid, "--by", "module", "--source")
        self.assertNotEqual(r.returncode, 0, r.stdout)
        self.assertRegex(r.stderr.strip(), r"^[^\n]*--source needs --by function[^\n]*$")


class Client(vprof_env.TestCase):
    def test_top_prints_live_tables(self):
        demo = ENV.spawn_demo("--seconds", 3)
        self.assertEqual(ENV.ctl("attach", demo.pid).returncode, 0)
        ENV.go(demo)
        r = ENV.ctl("--json", "top", demo.pid, "-n", 3, "--delay", 0.5, "--iterations", 3)
        self.assertEqual(r.returncode, 0, r.stderr)
        frames = [json.loads(line) for line in r.stdout.splitlines() if line.strip()]
        self.assertEqual(len(frames), 3)
        self.assertTrue(all(len(f["functions"]) <= 3 for f in frames))
        # Live: the totals grow while the target runs.
        self.assertLess(frames[0]["total_samples"], frames[-1]["total_samples"])
        demo.wait(30)
        # Without a PID, top merges every target; with one target it equals its report.
        merged = json.loads(ENV.ctl("--json", "top", "--iterations", 1, "-n", 0).stdout)
        single = ENV.ctl_json("report", demo.pid)
        alpha = rows_by(single["functions"], "function")["work_alpha"]["exclusive"]
        self.assertGreaterEqual(rows_by(merged["functions"], "function")["work_alpha"]["exclusive"], alpha)
        text = ENV.ctl("top", demo.pid, "--iterations", 1)
        self.assertIn("work_alpha", text.stdout)
        ENV.ctl("detach", demo.pid)

    def test_status_keys(self):
        s = ENV.ctl_json("status")
        self.assertEqual(set(s), {"version", "event", "event_reason", "frequency", "cpus", "targets",
                                  "samples_seen", "samples_kept", "samples_discarded", "samples_lost",
                                  "stack_errors", "stacks_truncated", "samples_unclaimed", "off_cpu_default",
                                  "off_cpu_blocked", "off_cpu_preempted", "off_cpu_lost", "off_cpu_unclaimed",
                                  "max_targets", "max_targets_per_user", "exited_target_retention_sec",
                                  "max_functions_per_target", "max_stacks_per_target", "window_seconds",
                                  "window_memory",
                                  "samples_in_other_functions", "samples_in_other_stacks", "targets_at_limit",
                                  "symbol_cache_size", "symbol_cache_used", "symbol_files_skipped",
                                  "symbol_files_damaged", "inline_expansions", "inline_addresses",
                                  "inline_files_size", "unwind_walk", "python_targets",
                                  "python_unsupported_version", "python_interpreters", "python_not_interpreters",
                                  "python_unsupported", "python_push_failed", "python_detect_usec",
                                  "python_walks_complete", "python_walks_no_tstate", "python_walks_bad_frame",
                                  "python_walks_faulted", "python_walks_at_depth_limit", "python_frames_walked",
                                  "python_frames_recorded", "python_frames_dropped", "python_frames_unknown",
                                  "unwind_table_size", "unwind_table_used",
                                  "unwind_tables_loaded", "unwind_tables_compiled", "unwind_tables_evicted",
                                  "unwind_tables_too_big", "unwind_tables_failed", "unwind_files_without_cfi",
                                  "unwind_compile_usec", "unwind_mappings_dropped", "unwind_files_prefetched",
                                  "unwind_attaches_unfinished", "walks_complete",
                                  "walks_ended_at_frame_pointer", "walks_at_depth_limit", "walks_faulted",
                                  "walks_bad", "walks_fell_back", "walks_outside_cfi", "walks_bad_rule",
                                  "walks_unknown_pc", "walks_no_mappings", "unwind_self_check",
                                  "self_check_agreed", "self_check_disagreed", "self_check_unchecked",
                                  "self_check_lost", "members_refused", "mapping_changes",
                                  "mapping_changes_lost", "mapping_changes_stale", "mapping_changes_missed",
                                  "samples_with_stale_mappings", "pending_walks_copied",
                                  "pending_walks_finished", "pending_walks_unfinished", "pending_walks_over_rate",
                                  "pending_walks_no_room", "memory"})
        self.assertEqual(s["unwind_self_check"], 0)  # off by default
        self.assertEqual(s["window_seconds"], 600)  # the default
        self.assertEqual(s["unwind_table_size"], 32 << 20)  # the default
        self.assertEqual(s["unwind_walk"], "unwind tables")  # this kernel has bpf_loop
        # The demo's samples were walked: its tables (the demo's, libc's) were compiled and loaded.
        self.assertGreater(s["unwind_tables_compiled"], 0)
        self.assertGreater(s["walks_complete"], 0)
        self.assertEqual(s["symbol_cache_size"], 256 << 20)  # the default
        self.assertGreater(s["symbol_cache_used"], 0)
        self.assertEqual(s["symbol_files_skipped"], 0)
        self.assertEqual(s["symbol_files_damaged"], 0)
        r = ENV.ctl("--version")
        self.assertEqual(r.stdout.strip(), f"vprofctl {s['version']}")

    def test_unreachable_daemon_is_one_line(self):
        env = dict(ENV.env, DBUS_SYSTEM_BUS_ADDRESS="unix:path=/nonexistent/socket")
        r = subprocess.run([os.environ["VPROFCTL"], "list"], env=env, capture_output=True, text=True)
        self.assertEqual(r.returncode, 1)
        self.assertEqual(r.stdout, "")
        self.assertEqual(len(r.stderr.strip().splitlines()), 1)
        self.assertTrue(r.stderr.startswith("vprofctl: "))


class Binaries(vprof_env.TestCase):
    """Bad binaries still give a profile: a deleted one keeps its names, a stripped one keeps its frames."""

    def profile(self, binary):
        demo = ENV.spawn_demo("--seconds", 1, binary=binary)
        return demo, self.profile_spawned(demo)

    def profile_spawned(self, demo):
        self.assertEqual(ENV.ctl("attach", demo.pid).returncode, 0)
        ENV.go(demo)
        demo.wait(30)
        report = ENV.ctl_json("report", demo.pid)
        ENV.ctl("detach", demo.pid)
        return report

    def test_deleted_binary_keeps_names(self):
        path = os.path.join(ENV.tmp, "demo-deleted")
        shutil.copy(os.environ["VPROF_DEMO"], path)
        demo = ENV.spawn_demo("--seconds", 1, binary=path)
        os.unlink(path)
        report = self.profile_spawned(demo)
        top = report["functions"][0]
        self.assertEqual((top["function"], top["module"]), ("work_alpha", "demo-deleted"))

    def test_library_loaded_after_attach_is_named(self):
        # The library is mapped only after the attach: its frames fall outside the maps the daemon read then.
        demo = ENV.spawn_demo("--seconds", 1, "--plugin", os.environ["VPROF_PLUGIN"])
        report = self.profile_spawned(demo)
        top = report["functions"][0]
        self.assertEqual((top["function"], top["module"]), ("plugin_hot", "libvprof-plugin.so"))
        self.assertGreater(top["exclusive_percent"], 90.0)

    def test_stripped_binary_keeps_frames(self):
        path = os.path.join(ENV.tmp, "demo-stripped")
        subprocess.run(["objcopy", "--strip-all", os.environ["VPROF_DEMO"], path], check=True)
        _, report = self.profile(path)
        top = report["functions"][0]
        self.assertEqual(top["module"], "demo-stripped")
        self.assertRegex(top["function"], r"^demo-stripped\+0x[0-9a-f]+$")
        # Each unnamed address is its own row; together they hold the work.
        own = sum(r["exclusive_percent"] for r in report["functions"] if r["module"] == "demo-stripped")
        self.assertGreater(own, 95.0)
        self.assertEqual(sum(r["exclusive"] for r in report["functions"]), report["total_samples"])


class TwoThreads(vprof_env.TestCase):
    def test_threads_named_and_counted(self):
        demo = ENV.spawn_demo("--threads", 2, "--seconds", 3)
        self.assertEqual(ENV.ctl("attach", demo.pid).returncode, 0)
        ENV.go(demo)
        demo.wait(30)
        threads = ENV.ctl_json("report", demo.pid, "--by", "thread")
        names = sorted(t["name"] for t in threads["threads"])
        self.assertEqual(names, ["demo-worker-1", "vprof-demo"])
        self.assertEqual(sum(t["inclusive"] for t in threads["threads"]), threads["total_samples"])
        for t in threads["threads"]:
            self.assertGreater(t["inclusive_percent"], 35.0)
        self.assertEqual(ENV.ctl("detach", demo.pid).returncode, 0)


class Errors(vprof_env.TestCase):
    def assert_one_line_error(self, r, pattern):
        self.assertNotEqual(r.returncode, 0, r.stdout)
        lines = r.stderr.strip().splitlines()
        self.assertEqual(len(lines), 1, r.stderr)
        self.assertRegex(lines[0], pattern)

    def test_attach_missing_process(self):
        pid = 4194000
        while os.path.exists(f"/proc/{pid}"):
            pid -= 1
        self.assert_one_line_error(ENV.ctl("attach", pid), r"^vprofctl: .*No process with PID")
        r = ENV.dbus_send("Attach", f"string:{pid}", "uint64:0")
        self.assertIn("org.vprof.Profiler1.Error.NoSuchProcess", r.stderr)

    def test_attach_twice_and_detach_unattached(self):
        sleeper = subprocess.Popen(["sleep", "30"])
        ENV.children.append(sleeper)
        self.assertEqual(ENV.ctl("attach", sleeper.pid).returncode, 0)
        self.assert_one_line_error(ENV.ctl("attach", sleeper.pid), r"already attached")
        r = ENV.dbus_send("Attach", f"string:{sleeper.pid}", "uint64:0")
        self.assertIn("org.vprof.Profiler1.Error.AlreadyAttached", r.stderr)
        self.assertEqual(ENV.ctl("detach", sleeper.pid).returncode, 0)
        self.assert_one_line_error(ENV.ctl("detach", sleeper.pid), r"is not attached")
        r = ENV.dbus_send("Detach", f"string:{sleeper.pid}")
        self.assertIn("org.vprof.Profiler1.Error.NotAttached", r.stderr)
        self.assert_one_line_error(ENV.ctl("report", sleeper.pid), r"is not attached")

    def test_invalid_arguments(self):
        self.assert_one_line_error(ENV.ctl("attach", "0"), r"^vprofctl: ")
        self.assert_one_line_error(ENV.ctl("attach", "12abc"), r"^vprofctl: ")
        self.assert_one_line_error(ENV.ctl("attach", "2"), r"kernel thread")  # kthreadd
        self.assert_one_line_error(ENV.ctl("attach", ENV.daemon.pid), r"vprofd itself")
        for args in (["string:0", "uint64:0"], ["string:4294967295", "uint64:0"], ["string:1", "uint64:4"],
                     ["string:x.timer", "uint64:0"], ["string:/a/../b", "uint64:0"]):
            r = ENV.dbus_send("Attach", *args)
            self.assertIn("org.freedesktop.DBus.Error.InvalidArgs", r.stderr)
            self.assertRegex(r.stderr, "Invalid target|Unknown attach flags")
        for args in (["string:1"], ["uint32:1"], ["uint32:1", "uint64:0"]):  # wrong signatures: sd-bus answers
            r = ENV.dbus_send("Attach", *args)
            self.assertIn("org.freedesktop.DBus.Error.InvalidArgs", r.stderr)
            self.assertIn("expecting 'st'", r.stderr)
        r = ENV.dbus_send("GetFunctions", "string:1", "string:sideways", "uint32:0", "uint64:0")
        self.assertIn("org.freedesktop.DBus.Error.InvalidArgs", r.stderr)
        self.assertIn("Unknown sort key", r.stderr)
        self.assert_one_line_error(ENV.ctl("report", "1", "--by", "colour"), r"^vprofctl: ")
        self.assert_one_line_error(ENV.ctl("frobnicate"), r"^vprofctl: ")

    def test_attach_thread_id(self):
        demo = ENV.spawn_demo("--threads", 2, "--seconds", 2)
        ENV.go(demo)
        time.sleep(0.3)
        tids = [int(t) for t in os.listdir(f"/proc/{demo.pid}/task") if int(t) != demo.pid]
        self.assertTrue(tids)
        self.assert_one_line_error(ENV.ctl("attach", tids[0]), rf"thread of process {demo.pid}")
        demo.wait(30)

    def test_target_exits_during_run(self):
        demo = ENV.spawn_demo("--seconds", 1)
        self.assertEqual(ENV.ctl("attach", demo.pid).returncode, 0)
        ENV.go(demo)
        demo.wait(30)
        deadline = time.monotonic() + 5
        state = None
        while time.monotonic() < deadline:
            state = rows_by(ENV.ctl_json("list")["targets"], "pid")[demo.pid]["state"]
            if state == "exited":
                break
            time.sleep(0.1)
        self.assertEqual(state, "exited")
        self.assertGreater(ENV.ctl_json("report", demo.pid)["total_samples"], 0)
        self.assert_one_line_error(ENV.ctl("attach", demo.pid), r"already attached and has exited")
        self.assertEqual(ENV.ctl("detach", demo.pid).returncode, 0)
        self.assert_one_line_error(ENV.ctl("report", demo.pid), r"is not attached")

    def test_attach_detach_attach_a_busy_process(self):
        """The program drops other processes' samples by a bitmap of the targets, which attach and detach set and
        clear: a process that the sampler has just seen, busy, as no target has all its samples counted once
        attached, as often as it is attached again, and the counters still add up."""
        busy = ENV.spawn_demo("--bystander", "--seconds", 15, wait=False)
        time.sleep(0.5)  # seen by the sampler as no target, on whichever CPU it runs
        before = ENV.ctl_json("status")
        for _ in range(3):
            cpu_before = on_cpu_seconds(busy.pid)
            self.assertEqual(ENV.ctl("attach", busy.pid).returncode, 0)
            time.sleep(1.5)
            total = ENV.ctl_json("report", busy.pid)["total_samples"]
            expected = (on_cpu_seconds(busy.pid) - cpu_before) * ENV.frequency
            print(f"\nreattach: {total} samples for {expected:.0f} expected", end="", file=sys.stderr)
            self.assertGreater(total, 0.7 * expected, "samples of a process attached after it ran were lost")
            self.assertEqual(ENV.ctl("detach", busy.pid).returncode, 0)
            time.sleep(0.5)  # seen as no target again
        after = ENV.ctl_json("status")
        self.assertGreater(after["samples_discarded"], before["samples_discarded"])
        self.assertEqual(after["samples_seen"],
                         after["samples_kept"] + after["samples_discarded"] + after["samples_lost"])
        busy.kill()
        busy.wait()

    def test_reset_clears_tables(self):
        demo = ENV.spawn_demo("--seconds", 1)
        self.assertEqual(ENV.ctl("attach", demo.pid).returncode, 0)
        ENV.go(demo)
        demo.wait(30)
        self.assertGreater(ENV.ctl_json("report", demo.pid)["total_samples"], 0)
        self.assertEqual(ENV.ctl("reset", demo.pid).returncode, 0)
        after = ENV.ctl_json("report", demo.pid)
        self.assertEqual(after["total_samples"], 0)
        self.assertEqual(after["functions"], [])
        ENV.ctl("detach", demo.pid)

    def test_unprivileged_caller(self):
        nobody = 65534
        root_proc = subprocess.Popen(["sleep", "30"])
        ENV.children.append(root_proc)
        self.assert_one_line_error(ENV.ctl("attach", root_proc.pid, user=nobody), r"Access denied")
        # Its own process may be profiled.
        own = ENV.spawn_demo("--seconds", 1, user=nobody)
        r = ENV.ctl("attach", own.pid, user=nobody)
        self.assertEqual(r.returncode, 0, r.stderr)
        ENV.go(own)
        own.wait(30)
        self.assertGreater(ENV.ctl_json("report", own.pid, user=nobody)["total_samples"], 0)
        # A target attached by root for a root process is not readable by nobody.
        self.assertEqual(ENV.ctl("attach", root_proc.pid).returncode, 0)
        self.assert_one_line_error(ENV.ctl("report", root_proc.pid, user=nobody), r"Access denied")
        self.assertNotIn(root_proc.pid, [t["pid"] for t in ENV.ctl_json("list", user=nobody)["targets"]])
        ENV.ctl("detach", root_proc.pid)
        ENV.ctl("detach", own.pid, user=nobody)


class BusContract(vprof_env.TestCase):
    def test_introspection_matches_interface_xml(self):
        r = ENV.dbus_send("Introspect", interface="org.freedesktop.DBus.Introspectable")
        self.assertEqual(r.returncode, 0, r.stderr)
        live_xml = re.search(r'string "(.*)"', r.stdout, re.S).group(1)

        def members(root):
            iface = [i for i in root.iter("interface") if i.get("name") == "org.vprof.Profiler1"][0]
            methods = {m.get("name"): [(a.get("type"), a.get("name"), a.get("direction", "in"))
                                       for a in m.iter("arg")] for m in iface.iter("method")}
            props = {p.get("name"): (p.get("type"), p.get("access")) for p in iface.iter("property")}
            return methods, props

        live = members(ET.fromstring(live_xml))
        with open(os.environ["VPROF_INTERFACE_XML"]) as f:
            documented = members(ET.fromstring(f.read()))
        self.assertEqual(live, documented)

    def test_status_says_which_event(self):
        s = ENV.ctl_json("status")
        self.assertIn(s["event"], ("cycles", "cpu-clock"))
        self.assertTrue(s["event_reason"])
        self.assertEqual(s["frequency"], ENV.frequency)
        self.assertEqual(s["cpus"], os.cpu_count())
        log = ENV.log_text()
        self.assertIn(f"Sampling with {s['event']} at {ENV.frequency} Hz", log)
        if s["event"] == "cpu-clock":
            self.assertIn("not supported", s["event_reason"])


def setUpModule():
    global ENV
    # 999 Hz: ~8000 samples make the 3-point tolerance several standard deviations of sampling noise.
    ENV = vprof_env.start_module_env(frequency=999)


if __name__ == "__main__":
    vprof_env.main()
