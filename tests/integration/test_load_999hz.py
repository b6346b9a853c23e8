#!/usr/bin/env python3
# SPDX-License-Identifier: LGPL-2.1-or-later
"""The acceptance run: vprofd at 999 Hz, a two-thread target keeping both CPUs busy for 30 s. Nothing may be
lost, the samples seen must be within 5% of 999 x CPUs x 30, and the samples kept within 5% of 999 x the CPU
time the target really got (its rusage: on a machine busy with other work it gets less than 30 s a CPU).
Prints the daemon's CPU time and peak RSS. The run of 30 s is the plain build's (suite 'plain'), whose figures
these are; under the sanitizers the same checks run for 10 s, for the memory errors only."""
import os
import signal
import sys
import time

import vprof_env

ENV = None
SECONDS = int(os.environ.get("VPROF_LOAD_SECONDS", "10" if vprof_env.sanitized(os.environ["VPROFD"]) else "30"))
FREQUENCY = 999


def wait_cpu_seconds(p):
    """Wait for the child p to exit; the CPU time (user and system, all its threads) it used."""
    _, status, usage = os.wait4(p.pid, 0)
    p.returncode = os.waitstatus_to_exitcode(status)
    assert p.returncode == 0, f"vprof-demo exited with {p.returncode}"
    return usage.ru_utime + usage.ru_stime


class FullLoad(vprof_env.TestCase):
    def test_no_sample_lost_at_999hz(self):
        cpus = os.cpu_count()
        cpu0, _ = vprof_env.daemon_usage(ENV.daemon.pid)
        before = ENV.ctl_json("status")
        demo = ENV.spawn_demo("--threads", cpus, "--seconds", SECONDS)
        self.assertEqual(ENV.ctl("attach", demo.pid).returncode, 0)
        ENV.go(demo)
        target_cpu = wait_cpu_seconds(demo)
        after = ENV.ctl_json("status")
        cpu1, rss = vprof_env.daemon_usage(ENV.daemon.pid)
        report = ENV.ctl_json("report", demo.pid, "-n", "5")

        kept = after["samples_kept"] - before["samples_kept"]
        seen = after["samples_seen"] - before["samples_seen"]
        expected = FREQUENCY * cpus * SECONDS
        expected_kept = round(FREQUENCY * target_cpu)
        print(f"\nload: {SECONDS} s, {cpus} threads at {FREQUENCY} Hz: kept {kept} (expected {expected_kept} for "
              f"{target_cpu:.2f} CPU s, {100.0 * (kept - expected_kept) / expected_kept:+.2f}%), seen {seen} "
              f"(expected {expected}), counted {report['total_samples']}, "
              f"lost {after['samples_lost']}, stack errors {after['stack_errors']}, "
              f"truncated {after['stacks_truncated']}; vprofd CPU {cpu1 - cpu0:.3f} s "
              f"({100.0 * (cpu1 - cpu0) / SECONDS:.2f}% of one CPU), peak RSS {rss} KiB", file=sys.stderr)

        self.assertEqual(after["samples_lost"], 0)
        # Every CPU was busy, so the sampler saw about FREQUENCY ticks a second on each: none escaped counting.
        self.assertLess(abs(seen - expected) / expected, 0.05, f"seen {seen}, expected {expected}")
        self.assertLess(abs(kept - expected_kept) / expected_kept, 0.05)
        self.assertEqual(report["total_samples"], kept)
        self.assertEqual(report["functions"][0]["function"], "work_alpha")


class ManyClients(vprof_env.TestCase):
    """Several vprofctl loops query at once while a busy target is sampled at 999 Hz: every call answers, no
    sample is lost. Latency is measured per command, process start included; `vprofctl --version`, which
    does not touch the bus, gives that start-up cost."""

    CLIENTS = 4
    SECONDS = 10

    def test_concurrent_queries(self):
        import statistics
        import threading

        demo = ENV.spawn_demo("--threads", os.cpu_count(), "--seconds", self.SECONDS)
        self.assertEqual(ENV.ctl("attach", demo.pid, "--off-cpu").returncode, 0)
        before = ENV.ctl_json("status")
        ENV.go(demo)
        queries = [["report", demo.pid, "-n", "20"], ["report", demo.pid, "--values", "all", "-n", "20"],
                   ["report", demo.pid, "--by", "thread"], ["report", "--by", "process"], ["list"], ["status"],
                   ["--json", "report", demo.pid, "--by", "module"]]
        latencies, failures = [], []
        lock = threading.Lock()

        def loop(index):
            deadline = time.monotonic() + self.SECONDS - 1
            i = index
            while time.monotonic() < deadline:
                args = queries[i % len(queries)]
                i += 1
                start = time.monotonic()
                r = ENV.ctl(*args)
                elapsed = time.monotonic() - start
                with lock:
                    latencies.append(elapsed)
                    if r.returncode != 0:
                        failures.append((args, r.stderr))

        threads = [threading.Thread(target=loop, args=(i,)) for i in range(self.CLIENTS)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        demo.wait(60)
        after = ENV.ctl_json("status")
        startup = []
        for _ in range(20):
            start = time.monotonic()
            ENV.ctl("--version")
            startup.append(time.monotonic() - start)

        ms = sorted(1000 * x for x in latencies)
        p99 = ms[min(len(ms) - 1, int(0.99 * len(ms)))]
        print(f"\nclients: {self.CLIENTS} concurrent vprofctl loops for {self.SECONDS} s at {FREQUENCY} Hz: "
              f"{len(ms)} commands, {len(failures)} failed; latency per command median {statistics.median(ms):.1f} ms, "
              f"p99 {p99:.1f} ms, max {ms[-1]:.1f} ms (vprofctl start-up alone: median "
              f"{1000 * statistics.median(startup):.1f} ms); lost {after['samples_lost'] - before['samples_lost']}",
              file=sys.stderr)
        self.assertEqual(failures, [])
        self.assertGreater(len(ms), 50)
        self.assertEqual(after["samples_lost"], before["samples_lost"])
        self.assertEqual(after["off_cpu_lost"], before["off_cpu_lost"])


class RingOverflow(vprof_env.TestCase):
    """Samples that find the ring buffer full are lost, and counted: never lost silently."""

    def test_full_ring_is_counted(self):
        # 10 kHz: a usual record is ~100 bytes, so it takes this rate to overflow 1 MiB within a second.
        env = vprof_env.VprofEnv(frequency=10000, extra_args=["--ring-size", "1"]).start()
        try:
            demo = env.spawn_demo("--threads", os.cpu_count(), "--seconds", 4)
            self.assertEqual(env.ctl("attach", demo.pid).returncode, 0)
            env.go(demo)
            time.sleep(0.5)
            # A stopped daemon drains nothing.
            os.kill(env.daemon.pid, signal.SIGSTOP)
            time.sleep(2)
            os.kill(env.daemon.pid, signal.SIGCONT)
            demo.wait(60)
            s = env.ctl_json("status")
            report = env.ctl_json("report", demo.pid)
            print(f"\noverflow: seen {s['samples_seen']}, kept {s['samples_kept']}, discarded "
                  f"{s['samples_discarded']}, lost {s['samples_lost']}", file=sys.stderr)
            self.assertGreater(s["samples_lost"], 1000)
            # Nothing else went missing: every sample that made it through the ring is in the tables.
            self.assertEqual(report["total_samples"], s["samples_kept"])
            self.assertEqual(s["samples_unclaimed"], 0)
        finally:
            problems = env.stop()
        self.assertEqual(problems, [])


def setUpModule():
    global ENV
    ENV = vprof_env.start_module_env(frequency=FREQUENCY)


if __name__ == "__main__":
    vprof_env.main()
