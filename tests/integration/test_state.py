#!/usr/bin/env python3
# SPDX-License-Identifier: LGPL-2.1-or-later
"""Restarts lose nothing: vprofd saves its targets under the state directory when stopped and every
--snapshot-interval seconds, and the next daemon on that directory attaches again the targets that still run
(the same process: PID, start time, boot), with their counts continuing, and keeps the others as exited.
Figures print as lines beginning "state:"."""
import errno
import os
import re
import signal
import struct
import subprocess
import sys
import time
import zlib
from concurrent.futures import ThreadPoolExecutor

import vprof_env

STATE_FILE = "targets.state"
JOURNAL_FILE = "targets.journal"
HEADER = struct.Struct("<8sIIQII")  # magic, version, flags, payload size, CRC-32, reserved
SECTION = struct.Struct("<IIQ")  # tag, flags, size


def figure(text):
    print(f"state: {text}", file=sys.stderr)


def sections(buf, start, end):
    """(tag, contents offset, contents size) of the list of sections in buf[start:end]."""
    out = []
    while start < end:
        tag, _, size = SECTION.unpack_from(buf, start)
        out.append((struct.pack("<I", tag).decode(), start + SECTION.size, size))
        start += SECTION.size + size
    return out


def fix_crc(buf):
    magic, version, flags, payload, _, reserved = HEADER.unpack_from(buf, 0)
    crc = zlib.crc32(bytes(buf[HEADER.size:]), zlib.crc32(bytes(buf[:24])))
    HEADER.pack_into(buf, 0, magic, version, flags, payload, crc, reserved)


def journal_records(path):
    """The journal's bytes and its whole records, as (offset, size)."""
    with open(path, "rb") as f:
        buf = f.read()
    assert buf[:8] == b"VPROFJNL", buf[:8]
    records, offset = [], 32
    while offset + 8 <= len(buf):
        size = 8 + struct.unpack_from("<I", buf, offset)[0]
        if offset + size > len(buf):
            break
        records.append((offset, size))
        offset += size
    return buf, records


# A process of the test user that waits; on a line on stdin it makes itself non-dumpable.
SLEEPER = ("import ctypes, os, sys, time\n"
           "print('ready', os.getpid(), flush=True)\n"
           "sys.stdin.readline()\n"
           "ctypes.CDLL(None).prctl(4, 0, 0, 0, 0)\n"
           "print('done', flush=True)\n"
           "time.sleep(120)\n")
TEST_USER = "vprof-test-state"


def function_counts(report):
    return {(f["function"], f["module"]): (f["inclusive"], f["exclusive"]) for f in report["functions"]}


class State(vprof_env.TestCase):
    def env(self, *args, frequency=99):
        env = vprof_env.VprofEnv(frequency=frequency, extra_args=["--verbose", *args])
        self.addCleanup(self.stop, env)
        env.start()
        return env

    def stop(self, env):
        for p in env.children:
            for f in (p.stdin, p.stdout):
                if f:
                    f.close()
        problems = env.stop()
        self.assertEqual(problems, [], "\n".join(problems))

    def busy_demo(self, env, seconds=120):
        demo = env.spawn_demo("--seconds", seconds, "--threads", 2)
        r = env.ctl("attach", demo.pid)
        self.assertEqual(r.returncode, 0, r.stderr)
        env.go(demo)
        return demo

    def report(self, env, pid):
        return env.ctl_json("report", pid)

    def report_beyond(self, env, pid, total, what):
        """The first report of pid with more than total samples (polled, rather than a sleep long enough for the
        slowest machine)."""
        def grown():
            r = self.report(env, pid)
            return r if r["total_samples"] > total else None
        return vprof_env.wait_for(what, grown)

    def wait_saved(self, env, mark, targets):
        """Until the log after offset mark says a snapshot of that many targets was written."""
        pattern = rf"Saved {targets} targets? to "
        vprof_env.wait_for(f"a snapshot of {targets} targets", lambda: re.search(pattern, env.log_text()[mark:]))

    def targets(self, env):
        return {t["pid"]: t for t in env.ctl_json("list")["targets"]}

    def restart(self, env, sig=signal.SIGTERM, extra_args=None):
        if sig == signal.SIGTERM:
            env.daemon.send_signal(sig)
            self.assertEqual(env.daemon.wait(15), 0, env.log_text())
        else:
            env.daemon.kill()
            env.daemon.wait(15)
        if extra_args is not None:
            env.extra_args = ["--verbose", *extra_args]
        started = time.monotonic()
        env.start_daemon()
        return time.monotonic() - started

    def assert_grown(self, before, after, what):
        self.assertGreaterEqual(after["total_samples"], before["total_samples"], what)
        counts = function_counts(after)
        for key, (inclusive, exclusive) in function_counts(before).items():
            self.assertIn(key, counts, f"{what}: {key} is gone")
            self.assertGreaterEqual(counts[key][0], inclusive, f"{what}: inclusive of {key}")
            self.assertGreaterEqual(counts[key][1], exclusive, f"{what}: exclusive of {key}")

    def save_times(self, env):
        return [float(ms) for ms in re.findall(r"Saved \d+ targets? to \S+: \d+ bytes in ([0-9.]+) ms", env.log_text())]

    def test_sigterm_restart_counts_only_grow(self):
        env = self.env()
        demo = self.busy_demo(env)
        # Counts of every function the demo runs (what 3 s of sleep gave before: about 600 samples).
        before = self.report_beyond(env, demo.pid, 299, "300 samples")
        self.assertGreater(before["total_samples"], 0)
        took = self.restart(env)
        size = os.path.getsize(os.path.join(env.state_directory, STATE_FILE))
        self.assertIn("Restored the saved state", env.log_text())

        target = self.targets(env)[demo.pid]
        self.assertEqual(target["state"], "running")
        after = self.report(env, demo.pid)
        self.assert_grown(before, after, "after the restart")
        later = self.report_beyond(env, demo.pid, after["total_samples"], "samples after the restart")
        self.assert_grown(after, later, "sampling after the restart")
        self.assertGreater(later["total_samples"], after["total_samples"], "no samples after the restart")
        top = max(function_counts(before).items(), key=lambda kv: kv[1][1])
        figure(f"SIGTERM restart: total {before['total_samples']} before, {after['total_samples']} after the "
               f"restart, {later['total_samples']} later; {top[0][0]} exclusive {top[1][1]} -> "
               f"{function_counts(later)[top[0]][1]}; file {size} bytes; restart {took:.2f} s")
        times = self.save_times(env)
        figure(f"save times: {len(times)} saves, max {max(times):.1f} ms, median {sorted(times)[len(times) // 2]:.1f} ms")

    def test_snapshots_lose_no_samples(self):
        # A snapshot every second, each written (the counts change): the event loop still drains in time.
        env = self.env("--snapshot-interval=1")
        demo = self.busy_demo(env)
        time.sleep(6)
        status = env.ctl_json("status")
        self.assertEqual(status["samples_lost"], 0, status)
        times = self.save_times(env)
        self.assertGreaterEqual(len(times), 4)
        size = os.path.getsize(os.path.join(env.state_directory, STATE_FILE))
        figure(f"snapshots every 1 s for 6 s: {len(times)} written ({size} bytes), max {max(times):.1f} ms, median "
               f"{sorted(times)[len(times) // 2]:.1f} ms; {status['samples_kept']} samples kept, "
               f"{status['samples_lost']} lost")
        r = env.ctl("detach", demo.pid)
        self.assertEqual(r.returncode, 0, r.stderr)

    def test_kill9_keeps_last_snapshot(self):
        env = self.env("--snapshot-interval=1")
        demo = self.busy_demo(env)
        before = self.report_beyond(env, demo.pid, 299, "300 samples")
        # At least one snapshot after the read (one a second): written after the read's answer, as its log line
        # after the read shows (one event loop).
        self.wait_saved(env, len(env.log_text()), 1)
        last = self.report(env, demo.pid)
        self.assertTrue(os.path.exists(os.path.join(env.state_directory, STATE_FILE)))
        self.restart(env, signal.SIGKILL)
        self.assertEqual(self.targets(env)[demo.pid]["state"], "running")
        after = self.report(env, demo.pid)
        self.assert_grown(before, after, "after kill -9")
        figure(f"kill -9: total {before['total_samples']} read before the last snapshot before the kill, "
               f"{last['total_samples']} at the "
               f"kill, {after['total_samples']} after the restart (at most the last second lost)")

    def test_kill9_loses_at_most_a_second(self):
        # At 999 Hz with two busy targets and snapshots every 30 s: after kill -9 the journal gives back at least
        # the counts read 1.5 s before the kill.
        env = self.env(frequency=999)
        mark = len(env.log_text())
        demos = [self.busy_demo(env), self.busy_demo(env)]
        self.wait_saved(env, mark, 2)  # past the snapshot that follows the attaches
        before = {d.pid: self.report(env, d.pid) for d in demos}
        time.sleep(1.5)
        snapshot = self.saved_totals(env)
        _, records = journal_records(os.path.join(env.state_directory, JOURNAL_FILE))
        self.restart(env, signal.SIGKILL)
        log = env.log_text()
        self.assertIn("The previous vprofd did not stop cleanly", log)
        self.assertRegex(log, r"Replayed \d+ records? of the journal")
        figures = []
        for d in demos:
            self.assertEqual(self.targets(env)[d.pid]["state"], "running")
            # The restored total exactly (the log), then every count (a report, which may have grown since).
            restored = int(re.search(rf"Restored {d.pid} \(vprof-demo\): attached again, counting on from (\d+) "
                                     r"samples", log).group(1))
            self.assertGreaterEqual(restored, before[d.pid]["total_samples"])
            self.assert_grown(before[d.pid], self.report(env, d.pid), f"{d.pid} after kill -9")
            figures.append(f"{d.pid}: snapshot {snapshot[d.pid]}, read 1.5 s before the kill "
                           f"{before[d.pid]['total_samples']}, restored {restored}")
        figure(f"kill -9 at 999 Hz, {len(records)} journal records since the snapshot: " + "; ".join(figures))

    def test_torn_journal_tail(self):
        # The daemon killed in the middle of a journal write: the whole records before it replay, the rest is
        # logged and ignored.
        env = self.env("--snapshot-interval=0", frequency=999)
        mark = len(env.log_text())
        demo = self.busy_demo(env)
        self.wait_saved(env, mark, 1)  # the snapshot the attach asks for starts a new journal
        path = os.path.join(env.state_directory, JOURNAL_FILE)
        vprof_env.wait_for("3 journal records", lambda: os.path.exists(path) and len(journal_records(path)[1]) >= 3)
        self.restart_killed_with_journal_cut(env, demo)

    def restart_killed_with_journal_cut(self, env, demo):
        env.daemon.kill()
        env.daemon.wait(15)
        snapshot = self.saved_totals(env)[demo.pid]
        path = os.path.join(env.state_directory, JOURNAL_FILE)
        buf, records = journal_records(path)
        self.assertGreaterEqual(len(records), 3, "a journal record a second")
        offset, size = records[-1]
        cut = offset + size // 2
        with open(path, "r+b") as f:
            f.truncate(cut)
        env.start_daemon()
        log = env.log_text()
        self.assertRegex(log, rf"Replayed {len(records) - 1} records of the journal")
        self.assertRegex(log, rf"ends in a record cut short at the end \(a write that did not finish\) at byte "
                              rf"{offset}: its last {cut - offset} bytes are ignored")
        restored = int(re.search(rf"Restored {demo.pid} \(vprof-demo\): attached again, counting on from (\d+) "
                                 r"samples", log).group(1))
        self.assertGreater(restored, snapshot)
        figure(f"journal cut in its record {len(records)}: snapshot {snapshot} samples, {len(records) - 1} records "
               f"replayed: {restored} samples")

    def test_reset_and_detach_reach_the_journal(self):
        # Killed right after a reset and a detach, before the snapshot they request (due 1 s later): the journal
        # has both, so the reset target comes back with its new tables only and the detached one does not come
        # back. Both calls go out at once and the kill follows at once; on a loaded machine (the sanitizer run)
        # the requested snapshot may still come first, which the daemon's log shows: then the premise failed,
        # not vprofd, and the scenario is tried again.
        env = self.env("--snapshot-interval=0")
        kept, gone = self.busy_demo(env), self.busy_demo(env)
        for attempt in range(3):
            time.sleep(3)
            old = self.report(env, kept.pid)["total_samples"]
            saves = env.log_text().count("Saved ")
            calls = [subprocess.Popen([os.environ["VPROFCTL"], verb, str(pid)], env=env.env,
                                      stdout=subprocess.DEVNULL)
                     for verb, pid in (("reset", kept.pid), ("detach", gone.pid))]
            for c in calls:
                self.assertEqual(c.wait(60), 0)
            env.daemon.kill()
            env.daemon.wait(15)
            if env.log_text().count("Saved ") == saves:
                break
            print(f"\nstate: attempt {attempt + 1}: the requested snapshot came before the kill; again",
                  file=sys.stderr)
            env.start_daemon()
            self.assertEqual(env.ctl("attach", gone.pid).returncode, 0)
        else:
            self.fail("the snapshot requested by the reset came before the kill three times")
        env.start_daemon()
        log = env.log_text()
        self.assertIn(f"Not restoring {gone.pid} (vprof-demo): it was detached after the snapshot, the journal says.",
                      log)
        self.assertNotIn(gone.pid, self.targets(env))
        restored = int(re.search(rf"Restored {kept.pid} \(vprof-demo\): attached again, counting on from (\d+) "
                                 r"samples", log).group(1))
        self.assertLess(restored, old // 2)
        figure(f"reset at {old} samples and killed at once: restored with {restored}")

    def test_full_file_system_at_stop(self):
        # The state directory on a file system that is full when the daemon stops: a failure exit that says the
        # tables were not saved; the next start says the previous daemon did not stop cleanly and how old the
        # snapshot is.
        env = vprof_env.VprofEnv(extra_args=["--verbose"])
        self.addCleanup(self.stop, env)
        os.makedirs(env.state_directory, mode=0o700)
        subprocess.run(["mount", "-t", "tmpfs", "-o", "size=4m,mode=0700", "vprof-test-state", env.state_directory],
                       check=True)
        self.addCleanup(subprocess.run, ["umount", "-l", env.state_directory])
        env.start()
        mark = len(env.log_text())
        demo = self.busy_demo(env)
        self.wait_saved(env, mark, 1)  # a snapshot before the file system fills
        filler = os.path.join(env.state_directory, "filler")
        with open(filler, "wb") as f:
            try:
                while True:
                    f.write(b"\0" * 65536)
                    f.flush()
            except OSError as e:
                self.assertEqual(e.errno, errno.ENOSPC)
        env.daemon.send_signal(signal.SIGTERM)
        status = env.daemon.wait(15)
        log = env.log_text()
        self.assertNotEqual(status, 0, log)
        self.assertRegex(log, r"Failed to save the targets' tables to \S+/targets.state: No space left on device")
        self.assertIn("The tables were not saved when stopping", log)
        self.assertIn("Exiting with failure: the tables were not saved.", log)
        line = re.search(r".*The tables were not saved when stopping.*", log).group(0)
        os.remove(filler)
        mark = len(log)
        env.start_daemon()
        log = env.log_text()[mark:]
        self.assertRegex(log, r"The previous vprofd did not stop cleanly \(.*\): its last snapshot, \S+, is "
                              r"[0-9.]+ s old")
        self.assertEqual(self.targets(env)[demo.pid]["state"], "running")
        figure(f"full state file system at SIGTERM: exit status {status}, \"{line.strip()}\"; next start: "
               f"\"{re.search(r'The previous vprofd.*', log).group(0)}\"")

    def test_bus_going_away(self):
        # dbus-daemon gone: the daemon says why, saves, and exits with failure for Restart=on-failure.
        env = self.env()
        demo = self.busy_demo(env)
        self.report_beyond(env, demo.pid, 49, "50 samples")
        env.bus.kill()
        env.bus.wait()
        status = env.daemon.wait(15)
        log = env.log_text()
        self.assertNotEqual(status, 0, log)
        self.assertIn("Lost the connection to the system bus", log)
        self.assertIn("Exiting with failure: the system bus connection is gone.", log)
        self.assertRegex(log.split("Lost the connection", 1)[1], r"Saved 1 target to ")
        # A new bus and a new daemon, as the service manager would start them: the tables are back.
        if os.path.exists(env.socket):
            os.unlink(env.socket)
        mark = len(log)
        env.start()
        self.assertIn("The previous vprofd stopped cleanly", env.log_text()[mark:])
        self.assertEqual(self.targets(env)[demo.pid]["state"], "running")
        figure(f"bus killed: vprofd exit status {status}: {re.search(r'Lost the connection.*', log).group(0)}")

    def test_reused_pid_is_not_attached(self):
        env = self.env()
        demo = self.busy_demo(env)
        self.report_beyond(env, demo.pid, 0, "samples")
        env.daemon.send_signal(signal.SIGTERM)
        self.assertEqual(env.daemon.wait(15), 0)
        saved = self.report_of_file_edit(env, demo.pid)

        env.start_daemon()
        log = env.log_text()
        self.assertIn("its PID is another process's now", log)
        target = self.targets(env)[demo.pid]
        self.assertEqual(target["state"], "exited")
        # Its tables are kept as they were, and nothing samples the process that holds the PID now.
        first = self.report(env, demo.pid)["total_samples"]
        self.assertEqual(first, saved)
        time.sleep(1.5)
        self.assertEqual(self.report(env, demo.pid)["total_samples"], first)
        self.assertIsNone(demo.poll())
        figure(f"start time changed in the file: PID {demo.pid} kept as exited with {first} samples, not attached")

    def saved_totals(self, env):
        """The sample total of every target in the state file, by PID."""
        with open(os.path.join(env.state_directory, STATE_FILE), "rb") as f:
            buf = f.read()
        totals = {}
        for tag, start, size in sections(buf, HEADER.size, len(buf)):
            if tag != "TARG":
                continue
            inner = dict((t, (s, n)) for t, s, n in sections(buf, start, start + size))
            pid = struct.unpack_from("<I", buf, inner["TINF"][0])[0]
            prof_start, prof_size = inner["PROF"]
            prof = dict((t, (s, n)) for t, s, n in sections(buf, prof_start, prof_start + prof_size))
            totals[pid] = struct.unpack_from("<Q", buf, prof["PHDR"][0] + 8)[0]
        return totals

    def report_of_file_edit(self, env, pid):
        """Add one to the saved start time of pid, as if the PID now named a younger process; returns the saved
        sample total."""
        path = os.path.join(env.state_directory, STATE_FILE)
        with open(path, "rb") as f:
            buf = bytearray(f.read())
        self.assertEqual(HEADER.unpack_from(buf, 0)[0], b"VPROFDST")
        total = None
        for tag, start, size in sections(buf, HEADER.size, len(buf)):
            if tag != "TARG":
                continue
            inner = dict((t, (s, n)) for t, s, n in sections(buf, start, start + size))
            info = inner["TINF"][0]
            if struct.unpack_from("<I", buf, info)[0] != pid:
                continue
            start_time = struct.unpack_from("<Q", buf, info + 4)[0]
            struct.pack_into("<Q", buf, info + 4, start_time + 1)
            prof_start, prof_size = inner["PROF"]
            prof = dict((t, (s, n)) for t, s, n in sections(buf, prof_start, prof_start + prof_size))
            total = struct.unpack_from("<Q", buf, prof["PHDR"][0] + 8)[0]
        self.assertIsNotNone(total, f"PID {pid} is not in the saved state")
        fix_crc(buf)
        with open(path, "wb") as f:
            f.write(buf)
        return total

    def test_exited_target_stays_exited(self):
        env = self.env()
        demo = self.busy_demo(env, seconds=1)
        demo.wait(30)
        vprof_env.wait_for("the exit", lambda: self.targets(env)[demo.pid]["state"] == "exited", 10)
        before = self.report(env, demo.pid)
        self.restart(env)
        self.assertEqual(self.targets(env)[demo.pid]["state"], "exited")
        self.assertEqual(function_counts(self.report(env, demo.pid)), function_counts(before))
        # And again: the restored exited target is saved in its turn, until it is detached.
        self.restart(env)
        self.assertEqual(self.targets(env)[demo.pid]["state"], "exited")
        self.assertEqual(env.ctl("detach", demo.pid).returncode, 0)
        self.restart(env)
        self.assertNotIn(demo.pid, self.targets(env))

    def test_mangled_names_survive_a_restart(self):
        env = self.env()
        cxx = env.spawn_demo("--seconds", 1, binary=os.environ["VPROF_CXX"])
        self.assertEqual(env.ctl("attach", cxx.pid).returncode, 0)
        env.go(cxx)
        cxx.wait(30)
        before = {r["function"]: r.get("mangled") for r in self.report(env, cxx.pid)["functions"]}
        self.assertEqual(before.get("vprof_names::Spinner<int>::spin(int)"), "_ZN11vprof_names7SpinnerIiE4spinEi")
        self.restart(env)
        after = {r["function"]: r.get("mangled") for r in self.report(env, cxx.pid)["functions"]}
        self.assertEqual(after, before)

    def test_detach_reaches_the_file_before_a_crash(self):
        env = self.env("--snapshot-interval=0")
        mark = len(env.log_text())
        demo = self.busy_demo(env)
        self.wait_saved(env, mark, 1)  # the attach is saved within two seconds
        self.restart(env, signal.SIGKILL)
        self.assertEqual(self.targets(env)[demo.pid]["state"], "running")
        mark = len(env.log_text())
        self.assertEqual(env.ctl("detach", demo.pid).returncode, 0)
        self.wait_saved(env, mark, 0)  # so is the detach
        self.restart(env, signal.SIGKILL)
        self.assertNotIn(demo.pid, self.targets(env))

    def test_frequency_change_converts(self):
        # A running target goes on counting at the new frequency: its saved counts are converted, rounded down so
        # that every part stays within its whole, and it is never dropped for it.
        env = self.env()
        demo = self.busy_demo(env)
        totals = []
        counted = 0
        for hz in (199, 999, 99, 7, 99):
            # Counting on at this frequency: ten samples more than the restart restored (or than none).
            self.report_beyond(env, demo.pid, counted + 9, f"10 samples at {env.frequency} Hz")
            env.daemon.send_signal(signal.SIGTERM)
            self.assertEqual(env.daemon.wait(15), 0)
            before = self.saved_totals(env)[demo.pid]
            old = env.frequency
            env.frequency = hz
            mark = len(env.log_text())
            env.start_daemon()
            log = env.log_text()[mark:]
            self.assertNotIn("Dropping", log)
            self.assertRegex(log, rf"The tables of {demo.pid} \(vprof-demo\) were counted at {old} Hz and vprofd "
                                  rf"samples at {hz} Hz now: its sample counts are converted to {hz} Hz \(times "
                                  rf"{hz}/{old}, rounded down\)")
            saved = int(re.search(r"counting on from (\d+) samples", log).group(1))
            self.assertEqual(saved, before * hz // old)
            target = self.targets(env)[demo.pid]
            self.assertEqual((target["state"], target["frequency"]), ("running", hz))
            after = self.report(env, demo.pid)
            self.assertGreaterEqual(after["total_samples"], saved)
            counted = saved
            totals.append(f"{old}->{hz} Hz: {before} -> {saved}")
        figure("running target across frequencies: " + "; ".join(totals))

    def tables(self, env, pid):
        """Every table of a target, as vprofctl --json prints them; values in milliseconds apart, rounded."""
        out = {by: env.ctl_json("report", pid, "--by", by) for by in ("function", "module", "thread", "stack")}
        # Where a module's names came from is the symbolizer's, of this daemon, not saved: not a count.
        for row in out["module"]["modules"]:
            row.pop("symbols", None)
        # The values: in periods of the daemon's frequency, so only their milliseconds and percents stay.
        def times(v):
            if isinstance(v, dict):
                return {k: times(x) for k, x in v.items()
                        if isinstance(x, (dict, list, str)) or k.endswith("_ms") or "percent" in k or k == "tid"}
            if isinstance(v, list):
                return [times(x) for x in v]
            return round(v, 6) if isinstance(v, float) else v
        out["values"] = times(env.ctl_json("report", pid, "--values", "all", "--unit", "ms"))
        return out

    def all_tables(self, env, pids):
        """tables() of every PID, four vprofctl at a time (their starts overlap; the daemon answers in turn)."""
        with ThreadPoolExecutor(4) as pool:
            return dict(zip(pids, pool.map(lambda pid: self.tables(env, pid), pids)))

    def test_exited_targets_keep_exact_counts_across_frequencies(self):
        # Ten exited targets, counted at 99 Hz, through restarts at 999 and 99 Hz twice: every table identical,
        # byte for byte of vprofctl's JSON, each target still at its 99 Hz (a third round trip, until issue 28,
        # added 9 s and no other check).
        env = self.env(frequency=99)
        demos = []
        for _ in range(10):
            demo = env.spawn_demo("--seconds", 1, "--threads", 2)
            r = env.ctl("attach", demo.pid)
            self.assertEqual(r.returncode, 0, r.stderr)
            env.go(demo)
            demos.append(demo)
        for demo in demos:
            demo.wait(30)
        vprof_env.wait_for("the exits", lambda: all(t["state"] == "exited" for t in self.targets(env).values()), 10)
        before = self.all_tables(env, [d.pid for d in demos])
        self.assertTrue(all(t["function"]["total_samples"] > 0 for t in before.values()))
        self.assertTrue(any(k.endswith("_ms") for k in before[demos[0].pid]["values"]["functions"][0]))
        for hz in (999, 99, 999, 99):
            env.daemon.send_signal(signal.SIGTERM)
            self.assertEqual(env.daemon.wait(15), 0)
            env.frequency = hz
            mark = len(env.log_text())
            env.start_daemon()
            log = env.log_text()[mark:]
            self.assertNotIn("Dropping", log)
            self.assertRegex(log, r"10 kept as exited, 0 dropped")
            targets = self.targets(env)
            tables = self.all_tables(env, [d.pid for d in demos])
            for demo in demos:
                self.assertEqual((targets[demo.pid]["state"], targets[demo.pid]["frequency"]), ("exited", 99))
                self.assertEqual(tables[demo.pid], before[demo.pid], f"{demo.pid} at {hz} Hz")
        total = sum(t["function"]["total_samples"] for t in before.values())
        figure(f"10 exited targets ({total} samples) through 99 <-> 999 Hz twice: every table identical")

    def test_bad_files_are_set_aside(self):
        env = self.env()
        path = os.path.join(env.state_directory, STATE_FILE)
        demo = self.busy_demo(env)
        self.report_beyond(env, demo.pid, 0, "samples")
        env.daemon.send_signal(signal.SIGTERM)
        self.assertEqual(env.daemon.wait(15), 0)
        with open(path, "rb") as f:
            good = f.read()

        newer = bytearray(good)
        struct.pack_into("<I", newer, 8, 2)
        fix_crc(newer)
        cases = [("truncated", good[:len(good) // 2], "truncated"),
                 ("flipped byte", good[:100] + bytes([good[100] ^ 0xff]) + good[101:], "checksum mismatch"),
                 ("newer version", bytes(newer), "newer vprof"),
                 ("garbage", os.urandom(4096), "not a vprof state file")]
        # Each rejected file kept beside the others, never over one (names: the UTC time it was set aside, and a
        # counter within a second); at most five, the oldest removed first.
        kept = []
        for name, data, message in cases + cases[:2]:
            with open(path, "wb") as f:
                f.write(data)
            mark = len(env.log_text())
            env.start_daemon()
            log = env.log_text()[mark:]
            self.assertIn(message, log, name)
            self.assertNotIn(demo.pid, self.targets(env), name)
            new = re.search(r"kept as (targets\.state\.rejected-\d{8}T\d{6}Z(\.\d+)?)\.", log).group(1)
            self.assertNotIn(new, [k for k, _ in kept])
            kept.append((new, data))
            with open(os.path.join(env.state_directory, new), "rb") as f:
                self.assertEqual(f.read(), data, name)
            env.daemon.send_signal(signal.SIGTERM)
            self.assertEqual(env.daemon.wait(15), 0)
        left = sorted(n for n in os.listdir(env.state_directory) if n.startswith("targets.state.rejected-"))
        self.assertEqual(len(left), 5, left)
        self.assertEqual(set(left), set(k for k, _ in kept[1:]))
        for name, data in kept[1:]:
            with open(os.path.join(env.state_directory, name), "rb") as f:
                self.assertEqual(f.read(), data, name)
        self.assertRegex(env.log_text(), rf"Removed the oldest rejected file \S+/{re.escape(kept[0][0])}: 5 are kept\.")
        figure(f"{len(kept)} rejected files: {', '.join(k for k, _ in kept)}; the first removed")

    def test_damaged_record_is_named(self):
        # A record whose counts cannot be (its total set to 0 in the file) costs only itself, and the log names it
        # by PID and command, with the reason, in a whole sentence.
        env = self.env()
        damaged, kept = self.busy_demo(env), self.busy_demo(env)
        for demo in (damaged, kept):
            self.report_beyond(env, demo.pid, 49, "50 samples")
        env.daemon.send_signal(signal.SIGTERM)
        self.assertEqual(env.daemon.wait(15), 0)
        path = os.path.join(env.state_directory, STATE_FILE)
        with open(path, "rb") as f:
            buf = bytearray(f.read())
        for tag, start, size in sections(buf, HEADER.size, len(buf)):
            inner = dict((t, (s, n)) for t, s, n in sections(buf, start, start + size)) if tag == "TARG" else {}
            if inner and struct.unpack_from("<I", buf, inner["TINF"][0])[0] == damaged.pid:
                prof = dict((t, (s, n)) for t, s, n in sections(buf, inner["PROF"][0], sum(inner["PROF"])))
                struct.pack_into("<Q", buf, prof["PHDR"][0] + 8, 0)
        fix_crc(buf)
        with open(path, "wb") as f:
            f.write(buf)
        env.start_daemon()
        self.assertRegex(env.log_text(), rf"Dropping the saved tables of {damaged.pid} \(vprof-demo\) in \S+: its "
                                         r"record is damaged \(function counts that no sampling gives \(exclusive "
                                         r"above inclusive, or above the total\)\)\.")
        targets = self.targets(env)
        self.assertNotIn(damaged.pid, targets)
        self.assertEqual(targets[kept.pid]["state"], "running")

    def test_attached_again_as_the_user_who_attached(self):
        if subprocess.run(["id", "-u", TEST_USER], capture_output=True).returncode != 0:
            subprocess.run(["useradd", "--system", "--no-create-home", "--shell", "/usr/sbin/nologin", TEST_USER],
                           check=True)
            self.addCleanup(subprocess.run, ["userdel", TEST_USER], capture_output=True)
        uid = int(subprocess.run(["id", "-u", TEST_USER], capture_output=True, text=True, check=True).stdout)
        env = self.env()
        kept, turned = [], []
        for group in (kept, turned):
            p = subprocess.Popen(["setpriv", f"--reuid={uid}", f"--regid={vprof_env.primary_gid(uid)}", "--clear-groups",
                                  "/usr/bin/python3", "-c", SLEEPER], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                 text=True)
            env.children.append(p)
            self.assertTrue(p.stdout.readline().startswith("ready "))
            r = env.ctl("attach", p.pid, user=uid)
            self.assertEqual(r.returncode, 0, r.stderr)
            group.append(p)
        env.daemon.send_signal(signal.SIGTERM)
        self.assertEqual(env.daemon.wait(15), 0)
        # While no daemon runs, one of them turns non-dumpable: its user may no longer profile it.
        env.go(turned[0])
        self.assertEqual(turned[0].stdout.readline().strip(), "done")
        env.start_daemon()

        listed = {t["pid"]: t for t in env.ctl_json("list", user=uid)["targets"]}
        self.assertEqual(listed[kept[0].pid]["state"], "running")
        self.assertNotIn(turned[0].pid, self.targets(env))
        self.assertRegex(env.log_text(), rf"Not attaching {turned[0].pid} .*: UID {uid} may no longer profile it")
        figure(f"UID {uid}'s own process attached again as that user; the one that turned non-dumpable not")

    def test_options(self):
        env = self.env("--state-directory=")
        self.assertIn("No state directory", env.log_text())
        env.daemon.send_signal(signal.SIGTERM)
        self.assertEqual(env.daemon.wait(15), 0)
        # $STATE_DIRECTORY (systemd's StateDirectory=) when the option is not given; its first entry.
        state_dir = os.path.join(env.tmp, "from-systemd")
        env.daemon_env["STATE_DIRECTORY"] = f"{state_dir}:/nonexistent"
        env.extra_args = ["--verbose"]
        env.state_directory = None
        env.daemon_command = lambda: [os.environ["VPROFD"], "--verbose"]
        env.start_daemon()
        self.assertIn(f"State directory {state_dir}: snapshots every 30 s", env.log_text())
        self.assertEqual(os.stat(state_dir).st_mode & 0o777, 0o700)
        # A second daemon on the same directory goes without it (and here stops at the bus name, which is taken).
        r = subprocess.run([os.environ["VPROFD"], f"--state-directory={state_dir}"], env=env.env,
                                     capture_output=True, text=True, timeout=60)
        self.assertIn("another vprofd uses it", r.stderr)
        for bad in ("-1", "1s", "86401"):
            r = subprocess.run([os.environ["VPROFD"], f"--snapshot-interval={bad}"], capture_output=True,
                                         text=True, timeout=30)
            self.assertEqual(r.returncode, 1, bad)
            self.assertIn("Invalid snapshot interval", r.stderr)
        for bad in ("-1", "1s", "3601"):
            r = subprocess.run([os.environ["VPROFD"], f"--journal-interval={bad}"], capture_output=True, text=True,
                               timeout=30)
            self.assertEqual(r.returncode, 1, bad)
            self.assertIn("Invalid journal interval", r.stderr)

    def test_without_journal(self):
        env = self.env("--journal-interval=0")
        demo = self.busy_demo(env)
        time.sleep(2.5)
        self.assertFalse(os.path.exists(os.path.join(env.state_directory, JOURNAL_FILE)))
        self.assertNotIn("journal record", env.log_text())
        self.restart(env)
        self.assertEqual(self.targets(env)[demo.pid]["state"], "running")


def setUpModule():
    vprof_env.probe_module()


if __name__ == "__main__":
    vprof_env.main()
