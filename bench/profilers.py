#!/usr/bin/env python3
# SPDX-License-Identifier: LGPL-2.1-or-later
"""What does each profiler cost a CPU-bound process, and how right is it? bench/vprof-bench-work does a fixed
amount of work over a known call tree (leaf_a 50%, mid_b -> leaf_c 30%, leaf_d 20%) with 1 and 2 threads, alone
and under each profiler at 99 and 999 Hz, attached by PID for the whole run:

  vprof        vprofd (one per frequency, on a private bus) attached with vprofctl
  perf-fp      perf record -e cpu-clock -g -F N -p PID
  perf-dwarf   perf record -e cpu-clock --call-graph dwarf -F N -p PID
  bcc          profile-bpfcc -U -F N -p PID (folded output)
  bpftrace     bpftrace -e 'profile:hz:N /pid == PID/ { @[ustack] = count(); }'

plus `alone` and a second `alone-2`, the control: its ratio to `alone` is the noise of the measurement. Each
round runs every condition once, in an order that rotates from round to round; a profiled run's ratio is its
work time (measured by the workload itself, from "go" to the end of the work, so the profiler's start-up is
not in it) over the same round's `alone` time. The table gives the median ratio and min-max over the rounds,
the profiler's CPU time during the work and over its whole life (start-up, writing its output; for vprofd the
work window plus the report query), its BPF programs' run time (kernel.bpf_stats_enabled is on during the
benchmark), peak RSS, bytes of output, lost samples, and the accuracy of its last round: the largest error, in
percentage points, of its exclusive and inclusive percents of leaf_a, mid_b, leaf_c, leaf_d and work_round
against the known shares, all profilers counted the same way from user-space stacks (kernel frames dropped).

    bench/profilers.py [BUILD_DIR] [--rounds N] [--units N] [--threads 1,2] [--frequencies 99,999]
                       [--profilers vprof,perf-fp,...] [--output DIR] [--smoke] [--vprof-before BUILD_DIR]

--vprof-before BUILD_DIR adds the profiler vprof-before: BUILD_DIR's vprofd and vprofctl (an older build of
the tree, say), on a daemon and bus of their own beside vprof's, so that both are measured in the same run.

As root. Writes results.json, overhead.svg (gnuplot) and the raw profiles to DIR (default
BUILD_DIR/bench-results). --smoke: one short round at 999 Hz with one thread, checking only that every profiler
runs and every column is filled; exits 77 (skipped) when a tool is missing, except with CI=true."""
import argparse
import glob
import json
import os
import re
import signal
import statistics
import subprocess
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import bench_env  # noqa: E402

SKIP = 77
PROFILERS = ["vprof", "perf-fp", "perf-dwarf", "bcc", "bpftrace"]
CONTROL = "alone-2"
TOOLS = {"perf-fp": "perf", "perf-dwarf": "perf", "bcc": "profile-bpfcc", "bpftrace": "bpftrace"}
# The workload's call tree, as percents of its samples.
EXPECTED_EXCLUSIVE = {"leaf_a": 50.0, "mid_b": 0.0, "leaf_c": 30.0, "leaf_d": 20.0, "work_round": 0.0}
EXPECTED_INCLUSIVE = {"leaf_a": 50.0, "mid_b": 30.0, "leaf_c": 30.0, "leaf_d": 20.0, "work_round": 100.0}
# vprofd's ring buffer record: struct vprof_sample up to its frames (common/vprof-abi.h), 8 bytes a frame, and the
# ring buffer's own 8-byte header.
VPROF_RECORD_HEADER = 200 + 8
NCPUS = os.cpu_count()


def log(msg):
    print(msg, flush=True)


# --- /proc and BPF statistics --------------------------------------------------------------------------------
def proc_cpu(pid):
    """CPU seconds of a live process, all its live threads: the nanoseconds of /proc/PID/task/*/schedstat (user
    and system; /proc/PID/stat counts in 10 ms ticks, too coarse for a profiler's few milliseconds)."""
    total = 0
    for path in glob.glob(f"/proc/{pid}/task/*/schedstat"):
        try:
            with open(path) as f:
                total += int(f.read().split()[0])
        except (OSError, IndexError, ValueError):
            continue
    return total / 1e9


def proc_hwm_kib(pid):
    with open(f"/proc/{pid}/status") as f:
        for line in f:
            if line.startswith("VmHWM:"):
                return int(line.split()[1])
    return 0


def fd_kinds(pid):
    """How many perf events and BPF programs a process holds."""
    perf = progs = 0
    for fd in glob.glob(f"/proc/{pid}/fd/*"):
        try:
            target = os.readlink(fd)
        except OSError:
            continue
        perf += target == "anon_inode:[perf_event]"
        progs += target == "anon_inode:bpf-prog"
    return perf, progs


def bpf_stats(pid):
    """{prog_id: (run_time_ns, run_cnt)} of the BPF programs process pid holds, from its fdinfo."""
    found = {}
    for path in glob.glob(f"/proc/{pid}/fdinfo/*"):
        try:
            with open(path) as f:
                info = dict(line.split(":", 1) for line in f.read().splitlines() if ":" in line)
        except OSError:
            continue
        if "prog_id" in info and "run_time_ns" in info:
            found[int(info["prog_id"])] = (int(info["run_time_ns"]), int(info["run_cnt"]))
    return found


def bpf_delta(before, after):
    ns = sum(t - before.get(i, (0, 0))[0] for i, (t, _) in after.items())
    cnt = sum(c - before.get(i, (0, 0))[1] for i, (_, c) in after.items())
    return ns, cnt


def wait_for(cond, timeout, what):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if cond():
            return
        time.sleep(0.05)
    raise RuntimeError(f"timed out after {timeout} s waiting for {what}")


# --- stacks and accuracy ---------------------------------------------------------------------------------------
def clean_frame(name):
    """leaf_a+0x1f, leaf_a+31, leaf_a@@GLIBC -> leaf_a."""
    return re.sub(r"\+(0x)?[0-9a-f]+$", "", name.strip()).split("@")[0]


def accuracy(stacks):
    """stacks: [(frames outermost first, user space only, count)] -> percents and the largest error (points)."""
    total = sum(n for _, n in stacks)
    if not total:
        return {"samples": 0, "max_error_points": None}
    excl = dict.fromkeys(EXPECTED_EXCLUSIVE, 0)
    incl = dict.fromkeys(EXPECTED_INCLUSIVE, 0)
    for frames, n in stacks:
        if frames and frames[-1] in excl:
            excl[frames[-1]] += n
        for fn in set(frames) & incl.keys():
            incl[fn] += n
    excl = {fn: 100.0 * n / total for fn, n in excl.items()}
    incl = {fn: 100.0 * n / total for fn, n in incl.items()}
    errors = [abs(excl[fn] - EXPECTED_EXCLUSIVE[fn]) for fn in excl] + \
             [abs(incl[fn] - EXPECTED_INCLUSIVE[fn]) for fn in incl]
    return {"samples": total, "exclusive_percent": excl, "inclusive_percent": incl,
            "max_error_points": max(errors)}


def parse_folded(text, kernel_suffix=None, skip_first=False):
    """Folded stacks, "a;b;c COUNT", outermost first."""
    stacks = []
    for line in text.splitlines():
        m = re.match(r"^(.*) (\d+)$", line.strip())
        if not m:
            continue
        frames = m.group(1).split(";")
        if skip_first:
            frames = frames[1:]  # bcc's first frame is the process name
        if kernel_suffix:
            frames = [f for f in frames if not f.endswith(kernel_suffix)]
        stacks.append(([clean_frame(f) for f in frames], int(m.group(2))))
    return stacks


def parse_bpftrace(text):
    """@[\\n frame\\n frame\\n]: COUNT blocks, innermost frame first."""
    stacks = []
    for block, count in re.findall(r"@\[\n(.*?)\n?\]: (\d+)", text, re.S):
        frames = [clean_frame(line) for line in block.splitlines() if line.strip()]
        stacks.append((frames[::-1], int(count)))
    # A sample without a user stack is "@[]: N".
    stacks += [([], int(n)) for n in re.findall(r"^@\[\]: (\d+)$", text, re.M)]
    return stacks


def parse_perf_script(text):
    """perf script -F ip,sym,dso: a sample is a block of "ADDR SYMBOL (DSO)" lines, innermost frame first,
    blocks apart by blank lines."""
    stacks = []
    frames = []
    for line in text.splitlines() + [""]:
        if not line.strip():
            if frames:
                stacks.append((frames[::-1], 1))
            frames = []
            continue
        m = re.match(r"^\s*[0-9a-f]+\s+(.*?)\s+\((.*)\)$", line)
        if m and "kernel.kallsyms" not in m.group(2) and not m.group(2).startswith("[k"):
            frames.append(clean_frame(m.group(1)))
        elif not m:
            frames.append("?")
    return stacks


# --- the profilers -------------------------------------------------------------------------------------------
class Run:
    """One profiler attached to one workload process; subclasses know how to start, stop and read it."""
    name = None

    def __init__(self, bench, pid, frequency, tag):
        self.bench, self.pid, self.frequency = bench, pid, frequency
        self.path = os.path.join(bench.raw_dir, tag)
        self.proc = None
        self.result = {}

    def start(self):
        pass

    def ready(self):
        return True

    def snapshot(self):
        """(CPU seconds, BPF stats) now."""
        if self.proc is None:
            return 0.0, {}
        return proc_cpu(self.proc.pid), bpf_stats(self.proc.pid)

    def stop(self):
        """Stop the profiler and fill self.result: cpu_total_s, peak_rss_kib, output_bytes, lost, stacks."""

    def _start(self, cmd, stdout):
        self.out_path = stdout
        with open(stdout, "wb") as out, open(self.path + ".err", "wb") as err:
            self.proc = subprocess.Popen(cmd, stdout=out, stderr=err, stdin=subprocess.DEVNULL)

    def _interrupt(self, timeout=120):
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGINT)
        deadline = time.monotonic() + timeout
        while True:
            pid, status, ru = os.wait4(self.proc.pid, os.WNOHANG)
            if pid:
                self.proc.returncode = os.waitstatus_to_exitcode(status)
                break
            if time.monotonic() > deadline:
                self.proc.kill()
                pid, status, ru = os.wait4(self.proc.pid, 0)
                self.proc.returncode = -9
                break
            time.sleep(0.02)
        self.result["cpu_total_s"] = ru.ru_utime + ru.ru_stime
        self.result["peak_rss_kib"] = ru.ru_maxrss
        with open(self.path + ".err", errors="replace") as f:
            self.stderr = f.read()
        if self.proc.returncode not in (0, -signal.SIGINT, 130):
            raise RuntimeError(f"{self.name} exited with {self.proc.returncode}:\n{self.stderr[-2000:]}")


class Alone(Run):
    name = "alone"


class Vprof(Run):
    name = "vprof"

    def start(self):
        env = self.bench.env
        self.status_before = env.ctl_json("status")
        r = env.ctl("attach", self.pid)
        if r.returncode != 0:
            raise RuntimeError(f"vprofctl attach {self.pid}: {r.stderr}")

    def snapshot(self):
        pid = self.bench.env.daemon.pid
        return proc_cpu(pid), bpf_stats(pid)

    def stop(self):
        env = self.bench.env
        status = env.ctl_json("status")
        r = env.ctl("report", "--by=stack", self.pid)
        if r.returncode != 0:
            raise RuntimeError(f"vprofctl report --by=stack: {r.stderr}")
        with open(self.path + ".folded", "w") as f:
            f.write(r.stdout)
        env.ctl("detach", self.pid)
        full = parse_folded(r.stdout)
        # The ring buffer traffic, estimated from the folded stacks: a record per sample of the header and its
        # frames (kernel ones too); frames the stack walk found but the folded stack does not show (none for
        # this workload's frame-pointer stacks) are not counted.
        frames = sum(n * len(f) for f, n in full)
        samples = sum(n for _, n in full)
        self.result.update(
            cpu_total_s=proc_cpu(env.daemon.pid) - self.cpu_at_go,  # the work window and the queries
            peak_rss_kib=proc_hwm_kib(env.daemon.pid),
            output_bytes=samples * VPROF_RECORD_HEADER + 8 * frames,
            lost=status["samples_lost"] - self.status_before["samples_lost"],
            stacks=parse_folded(r.stdout, kernel_suffix="_[k]"))


class VprofBefore(Vprof):
    """vprof of another build (--vprof-before BUILD_DIR), on its own daemon and bus, for a before and after in
    one run."""
    name = "vprof-before"

    def __init__(self, bench, pid, frequency, tag):
        super().__init__(bench, pid, frequency, tag)
        self.bench = BenchView(bench, bench.env_before)


class BenchView:
    """The bench as VprofBefore sees it: the same, but for its environment."""

    def __init__(self, bench, env):
        self._bench, self.env = bench, env

    def __getattr__(self, name):
        return getattr(self._bench, name)


def other_build_env(vprof_env, build):
    """A VprofEnv class that runs BUILD_DIR's vprofd and vprofctl instead of the ones bench_env set up."""
    class OtherBuild(vprof_env.VprofEnv):
        def daemon_command(self):
            return [f"{build}/daemon/vprofd"] + super().daemon_command()[1:]

        def ctl(self, *args, user=None, timeout=30):
            return subprocess.run([f"{build}/client/vprofctl", *map(str, args)], env=self.env, capture_output=True,
                                  text=True, timeout=timeout)
    return OtherBuild


class PerfRecord(Run):
    call_graph = None

    def start(self):
        self.data = self.path + ".data"
        self._start(["perf", "record", "-q", "-e", "cpu-clock", *self.call_graph, "-F", str(self.frequency),
                     "-p", str(self.pid), "-o", self.data], self.path + ".out")

    def ready(self):
        # One event per CPU for the process's one thread, enabled as soon as it is open.
        return fd_kinds(self.proc.pid)[0] >= NCPUS

    def stop(self):
        self._interrupt()
        r = subprocess.run(["perf", "script", "-F", "ip,sym,dso", "-i", self.data], capture_output=True,
                           text=True, timeout=900)
        if r.returncode != 0:
            raise RuntimeError(f"perf script: {r.stderr[-2000:]}")
        lost = sum(int(n) for n in re.findall(r"lost (\d+) chunks", r.stderr + self.stderr))
        lost += sum(int(n) for n in re.findall(r"(\d+) samples? lost", r.stderr + self.stderr))
        self.result.update(output_bytes=os.path.getsize(self.data), lost=lost, stacks=parse_perf_script(r.stdout))
        os.unlink(self.data)  # dwarf data is large; the stacks are what matter


class PerfFp(PerfRecord):
    name = "perf-fp"
    call_graph = ["-g"]


class PerfDwarf(PerfRecord):
    name = "perf-dwarf"
    call_graph = ["--call-graph", "dwarf"]


class Bcc(Run):
    name = "bcc"

    def start(self):
        self._start(["profile-bpfcc", "-U", "-f", "-F", str(self.frequency), "-p", str(self.pid)],
                    self.path + ".folded")

    def ready(self):
        # It compiles its program for seconds, loads it, then opens one perf event per CPU.
        if self.proc.poll() is not None:
            raise RuntimeError(f"profile-bpfcc exited with {self.proc.returncode}")
        return fd_kinds(self.proc.pid)[0] >= NCPUS

    def stop(self):
        self._interrupt()
        with open(self.out_path) as f:
            text = f.read()
        m = re.findall(r"(\d+) (?:stack traces? )?(?:lost|could not be displayed)", self.stderr)
        self.result.update(output_bytes=len(text.encode()), lost=sum(map(int, m)),
                           stacks=parse_folded(text, skip_first=True))


class Bpftrace(Run):
    name = "bpftrace"

    def start(self):
        prog = f"profile:hz:{self.frequency} /pid == {self.pid}/ {{ @[ustack] = count(); }}"
        self._start(["bpftrace", "-e", prog], self.path + ".out")

    def ready(self):
        if self.proc.poll() is not None:
            raise RuntimeError(f"bpftrace exited with {self.proc.returncode}")
        with open(self.out_path) as f:
            said = "Attaching" in f.read()
        return said and fd_kinds(self.proc.pid)[0] >= NCPUS

    def stop(self):
        self._interrupt()
        with open(self.out_path) as f:
            text = f.read()
        m = re.findall(r"Lost (\d+) events", text + self.stderr)
        self.result.update(output_bytes=len(text.encode()), lost=sum(map(int, m)), stacks=parse_bpftrace(text))


RUNS = {"alone": Alone, CONTROL: Alone, "vprof": Vprof, "vprof-before": VprofBefore, "perf-fp": PerfFp, "perf-dwarf": PerfDwarf,
        "bcc": Bcc, "bpftrace": Bpftrace}


# --- the benchmark -------------------------------------------------------------------------------------------
class Bench:
    def __init__(self, args):
        self.args = args
        self.work = os.path.join(args.build, "bench", "vprof-bench-work")
        self.raw_dir = os.path.join(args.output, "raw")
        os.makedirs(self.raw_dir, exist_ok=True)
        self.env = None
        self.env_before = None  # --vprof-before's
        self.runs = []  # one dict per run

    def run_one(self, condition, threads, frequency, rnd):
        tag = f"{condition}-t{threads}-f{frequency}-r{rnd}"
        w = subprocess.Popen([self.work, "--threads", str(threads), "--units", str(self.args.units), "--wait-stdin"],
                             stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
        try:
            line = w.stdout.readline()
            if not line.startswith("ready "):
                raise RuntimeError(f"vprof-bench-work said {line!r}")
            run = RUNS[condition](self, w.pid, frequency, tag)
            run.name = condition
            run.start()
            wait_for(run.ready, 60, f"{condition} to be ready")
            time.sleep(0.2)  # let it settle: its start-up is not what is measured
            run.cpu_at_go, bpf_before = run.snapshot()
            w.stdin.write("go\n")
            w.stdin.flush()
            work = json.loads(w.stdout.readline())
            cpu_after, bpf_after = run.snapshot()
            run.stop()
        finally:
            if w.poll() is None:
                w.stdin.close()
                try:
                    w.wait(10)
                except subprocess.TimeoutExpired:
                    w.kill()
                    w.wait()
        bpf_ns, bpf_cnt = bpf_delta(bpf_before, bpf_after)
        record = {"condition": condition, "threads": threads, "frequency": frequency, "round": rnd,
                  "wall_seconds": work["wall_seconds"], "work_cpu_seconds": work["cpu_seconds"]}
        if condition not in ("alone", CONTROL):
            stacks = run.result.pop("stacks")
            record.update(run.result, cpu_run_s=cpu_after - run.cpu_at_go, bpf_run_time_ns=bpf_ns, bpf_run_cnt=bpf_cnt,
                          accuracy=accuracy(stacks))
        self.runs.append(record)
        return record

    def run(self):
        a = self.args
        conditions = ["alone", CONTROL] + a.profilers
        for frequency in a.frequencies:
            self.env = self.vprof_env.VprofEnv(frequency=frequency).start() if "vprof" in a.profilers else None
            if a.vprof_before:
                self.env_before = other_build_env(self.vprof_env, a.vprof_before)(frequency=frequency).start()
            try:
                for threads in a.threads:
                    for rnd in range(a.rounds):
                        k = rnd % len(conditions)
                        order = conditions[k:] + conditions[:k]
                        times = []
                        for c in order:
                            r = self.run_one(c, threads, frequency, rnd)
                            times.append(f"{c} {r['wall_seconds']:.3f}")
                        log(f"  {frequency} Hz, {threads} thread(s), round {rnd + 1}/{a.rounds}: " + ", ".join(times))
            finally:
                for env in (self.env, self.env_before):
                    if env:
                        for p in env.stop():
                            log(p)
                self.env = self.env_before = None

    def rows(self):
        """One row per profiler x threads x frequency (and the control)."""
        rows = []
        a = self.args
        for threads in a.threads:
            for frequency in a.frequencies:
                base = {r["round"]: r["wall_seconds"] for r in self.runs
                        if (r["condition"], r["threads"], r["frequency"]) == ("alone", threads, frequency)}
                for c in [CONTROL] + a.profilers:
                    mine = [r for r in self.runs if (r["condition"], r["threads"], r["frequency"]) ==
                            (c, threads, frequency)]
                    ratios = [r["wall_seconds"] / base[r["round"]] for r in mine]
                    row = {"profiler": c, "threads": threads, "frequency": frequency, "rounds": len(ratios),
                           "median_ratio": statistics.median(ratios), "min_ratio": min(ratios),
                           "max_ratio": max(ratios), "alone_seconds_median": statistics.median(base.values())}
                    if c != CONTROL:
                        med = lambda key: statistics.median(r[key] for r in mine)  # noqa: E731
                        last = max(mine, key=lambda r: r["round"])
                        ns, cnt = med("bpf_run_time_ns"), med("bpf_run_cnt")
                        row.update(cpu_run_s=med("cpu_run_s"), cpu_total_s=med("cpu_total_s"),
                                   bpf_ns_per_run=(ns / cnt) if cnt else None,
                                   bpf_total_ms=ns / 1e6 if cnt else None,
                                   peak_rss_kib=max(r["peak_rss_kib"] for r in mine),
                                   output_bytes=med("output_bytes"), lost=sum(r["lost"] for r in mine),
                                   samples=last["accuracy"]["samples"],
                                   max_error_points=last["accuracy"]["max_error_points"],
                                   accuracy=last["accuracy"])
                    rows.append(row)
        return rows


COLUMNS = [  # (heading, key, format)
    ("profiler", "profiler", "{}"), ("thr", "threads", "{}"), ("Hz", "frequency", "{}"),
    ("ratio", "median_ratio", "{:.4f}"), ("min-max", None, None), ("CPU run s", "cpu_run_s", "{:.3f}"),
    ("CPU all s", "cpu_total_s", "{:.3f}"), ("BPF ns/run", "bpf_ns_per_run", "{:.0f}"),
    ("BPF ms", "bpf_total_ms", "{:.1f}"), ("RSS MiB", "peak_rss_kib", None), ("out KiB", "output_bytes", None),
    ("lost", "lost", "{}"), ("samples", "samples", "{}"), ("err pp", "max_error_points", "{:.2f}"),
]


def cell(row, key, fmt, heading):
    if heading == "min-max":
        return f"{row['min_ratio']:.3f}-{row['max_ratio']:.3f}"
    if row["profiler"] == CONTROL and key not in ("profiler", "threads", "frequency", "median_ratio"):
        return ""
    v = row.get(key)
    if v is None:
        return "-"  # does not apply: no BPF program (perf)
    if key == "peak_rss_kib":
        return f"{v / 1024:.1f}"
    if key == "output_bytes":
        return f"{v / 1024:.0f}"
    return fmt.format(v)


def table(rows):
    cells = [[h for h, _, _ in COLUMNS]] + [[cell(r, k, f, h) for h, k, f in COLUMNS] for r in rows]
    widths = [max(len(c[i]) for c in cells) for i in range(len(COLUMNS))]
    lines = []
    for c in cells:
        lines.append("  ".join(s.ljust(w) if i == 0 else s.rjust(w) for i, (s, w) in enumerate(zip(c, widths))))
    return "\n".join(lines), cells


def targets(rows, args):
    """The issue's targets, each (description, met or None when not measured, detail)."""
    found = []
    get = {(r["profiler"], r["threads"], r["frequency"]): r for r in rows}
    for t in args.threads:
        c = get.get((CONTROL, t, 99))
        v = get.get(("vprof", t, 99))
        if c and v:
            noise = max(0.005, (c["max_ratio"] - c["min_ratio"]) / 2, abs(c["median_ratio"] - 1))
            found.append((f"99 Hz, {t} thread(s): vprof's slowdown below the noise (max of 0.5% and the control's)",
                          v["median_ratio"] - 1 <= noise,
                          f"{100 * (v['median_ratio'] - 1):+.2f}% vs noise {100 * noise:.2f}%"))
        v, p = get.get(("vprof", t, 999)), get.get(("perf-fp", t, 999))
        if v and p:
            found.append((f"999 Hz, {t} thread(s): vprof's slowdown no more than perf -g's",
                          v["median_ratio"] <= p["median_ratio"],
                          f"{v['median_ratio']:.4f} vs {p['median_ratio']:.4f}"))
    busy = max(args.threads)
    v = get.get(("vprof", busy, 999))
    if v and busy >= NCPUS:
        found.append((f"999 Hz, {busy} threads (every CPU busy): no sample lost", v["lost"] == 0,
                      f"{v['lost']} lost"))
    for t in args.threads:
        v = get.get(("vprof", t, 99))
        if v:
            share = v["cpu_run_s"] / (v["alone_seconds_median"] * v["median_ratio"]) / min(t, NCPUS)
            found.append((f"99 Hz, {t} thread(s): vprofd's CPU under 1% of a CPU per busy CPU", share < 0.01,
                          f"{100 * share:.2f}%"))
    return found


def plot(rows, args, out):
    """overhead.svg: slowdown in percent against frequency, a line per profiler, a panel per thread count."""
    script = [f'set terminal svg size {460 * len(args.threads)},420 dynamic font "sans,11"',
              f'set output "{out}/overhead.svg"',
              f"set multiplot layout 1,{len(args.threads)}", "set logscale x", "set xtics (" +
              ", ".join(f'"{f}" {f}' for f in args.frequencies) + ")",
              f"set xrange [{min(args.frequencies) * 0.7}:{max(args.frequencies) * 1.4}]",
              'set xlabel "sampling frequency (Hz)"', 'set ylabel "slowdown of the workload (%)"',
              "set key top left", "set grid"]
    for t in args.threads:
        plots = []
        names = [CONTROL] + args.profilers
        for i, p in enumerate(names):
            shift = 1 + 0.04 * (i - (len(names) - 1) / 2)  # side by side at each frequency, not on top
            data = f"{out}/overhead-{p}-t{t}.dat"
            with open(data, "w") as f:
                f.write("# frequency median% min% max%\n")
                for r in rows:
                    if (r["profiler"], r["threads"]) == (p, t):
                        f.write(f"{r['frequency']} {100 * (r['median_ratio'] - 1):.4f} "
                                f"{100 * (r['min_ratio'] - 1):.4f} {100 * (r['max_ratio'] - 1):.4f}\n")
            plots.append(f'"{data}" using ($1*{shift:.3f}):2:3:4 with yerrorlines title "{p}"')
        script += [f'set title "{t} thread{"s" if t > 1 else ""}"', "plot " + ", ".join(plots)]
    script.append("unset multiplot")
    with open(f"{out}/overhead.gp", "w") as f:
        f.write("\n".join(script) + "\n")
    r = subprocess.run(["gnuplot", f"{out}/overhead.gp"], capture_output=True, text=True)
    if r.returncode != 0:
        raise RuntimeError(f"gnuplot: {r.stderr}")
    return f"{out}/overhead.svg"


# --- set-up ----------------------------------------------------------------------------------------------------
def skip_or_fail(reason):
    if os.environ.get("CI") == "true":
        sys.exit(f"FAIL: {reason} (a failure in CI)")
    log(f"SKIP: {reason}")
    sys.exit(SKIP)


class KernelHeaders:
    """bcc compiles its program against /lib/modules/$(uname -r)/build. A kernel without a headers package (as
    on this VM) gets links to Debian's own linux-headers-*-amd64 and -common (profile.py reads no kernel
    structure, so another version's headers do); the links this makes are removed at the end."""

    def __init__(self):
        self.created = []

    def setup(self):
        top = f"/lib/modules/{os.uname().release}"
        if os.path.exists(f"{top}/build/include"):
            return
        arch = sorted(glob.glob("/usr/src/linux-headers-*-amd64"))
        if not arch:
            skip_or_fail(f"bcc needs kernel headers: no {top}/build and no linux-headers-amd64 package")
        common = arch[-1].replace("-amd64", "-common")
        log(f"bench: no kernel headers for {os.uname().release}: linking {top}/build -> {arch[-1]} and "
            f"{top}/source -> {common} for bcc (removed at the end)")
        if not os.path.isdir(top):
            os.makedirs(top)
            self.created.append(top)
        for name, target in (("build", arch[-1]), ("source", common)):
            if not os.path.lexists(f"{top}/{name}"):
                os.symlink(target, f"{top}/{name}")
                self.created.insert(0, f"{top}/{name}")

    def cleanup(self):
        for path in self.created:
            if os.path.islink(path):
                os.unlink(path)
            else:
                os.rmdir(path)


def parse_args():
    ap = argparse.ArgumentParser(description="Profiler overhead and accuracy benchmark (see the file's comment).")
    ap.add_argument("build", nargs="?", default="build")
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--units", type=int, default=30000, help="total work units a run (default 30000, ~4 s of CPU)")
    ap.add_argument("--threads", default="1,2")
    ap.add_argument("--frequencies", default="99,999")
    ap.add_argument("--profilers", default=",".join(PROFILERS))
    ap.add_argument("--output")
    ap.add_argument("--smoke", action="store_true", help="one short round, 1 thread, 999 Hz: does it all run?")
    ap.add_argument("--vprof-before", metavar="BUILD_DIR",
                    help="also run this other build's vprofd as the profiler vprof-before (a before and after)")
    a = ap.parse_args()
    a.build = os.path.abspath(a.build)
    if a.vprof_before:
        a.vprof_before = os.path.abspath(a.vprof_before)
    if a.smoke:
        a.rounds, a.units, a.threads, a.frequencies = 1, 2000, "1", "999"
    a.threads = [int(x) for x in a.threads.split(",")]
    a.frequencies = [int(x) for x in a.frequencies.split(",")]
    a.profilers = [p for p in a.profilers.split(",") if p]
    if a.vprof_before and "vprof-before" not in a.profilers:
        a.profilers.insert(a.profilers.index("vprof") + 1 if "vprof" in a.profilers else 0, "vprof-before")
    unknown = set(a.profilers) - set(PROFILERS) - ({"vprof-before"} if a.vprof_before else set())
    if unknown or a.rounds < 1:
        ap.error(f"unknown profiler {', '.join(sorted(unknown))}" if unknown else "--rounds must be at least 1")
    a.output = os.path.abspath(a.output or os.path.join(a.build, "bench-results"))
    return a


def main():
    a = parse_args()
    if os.geteuid() != 0:
        skip_or_fail("needs root (BPF, perf -p on another process, bpf_stats_enabled)")
    vprof_env = bench_env.setup(a.build)
    vprof_env.require_bpf_or_skip()
    missing = sorted({TOOLS[p] for p in a.profilers if p in TOOLS and not shutil_which(TOOLS[p])} |
                     ({"gnuplot"} if not shutil_which("gnuplot") else set()))
    if missing:
        skip_or_fail(f"missing {', '.join(missing)} (tools/install-deps.sh installs linux-perf, bpfcc-tools, "
                     "bpftrace, gnuplot-nox, linux-headers-amd64)")
    bench = Bench(a)
    bench.vprof_env = vprof_env
    headers = KernelHeaders()
    with open("/proc/sys/kernel/bpf_stats_enabled") as f:
        stats_was = f.read().strip()
    started = time.monotonic()
    log(f"bench: {a.units} units a run, threads {a.threads}, {a.frequencies} Hz, {a.rounds} round(s) of "
        f"{', '.join(['alone', CONTROL] + a.profilers)}; results in {a.output}")
    try:
        if "bcc" in a.profilers:
            headers.setup()
        with open("/proc/sys/kernel/bpf_stats_enabled", "w") as f:
            f.write("1")
        bench.run()
    finally:
        with open("/proc/sys/kernel/bpf_stats_enabled", "w") as f:
            f.write(stats_was)
        headers.cleanup()
    rows = bench.rows()
    text, cells = table(rows)
    log("\nratio: the workload's time under the profiler / alone in the same round, median and min-max over rounds;\n"
        "CPU run: the profiler's CPU during the work; CPU all: over its life (vprofd: the work and the queries);\n"
        "BPF: its programs' run time per run and in total during the work; RSS: peak; out: perf.data, printed\n"
        "stacks, or vprofd's ring buffer records; err pp: largest error of the percents, last round\n")
    log(text)
    found = targets(rows, a)
    log("\ntargets (ratios from this one run; absolute times from different runs do not compare):")
    for what, met, detail in found:
        log(f"  [{'met' if met else 'NOT met'}] {what}: {detail}")
    svg = plot(rows, a, a.output)
    with open(os.path.join(a.output, "results.json"), "w") as f:
        json.dump({"settings": {k: v for k, v in vars(a).items()}, "cpus": NCPUS,
                   "kernel": os.uname().release, "rows": rows, "runs": bench.runs,
                   "targets": [{"target": w, "met": m, "detail": d} for w, m, d in found]}, f, indent=1)
    log(f"\nbench: {time.monotonic() - started:.0f} s; wrote {a.output}/results.json and {svg}")
    if a.smoke:
        # Every column of every row filled: "-" only where a column does not apply (no BPF in perf).
        bad = [(r[0], COLUMNS[i][0]) for r in cells[1:] if r[0] != CONTROL
               for i, c in enumerate(r) if c == "" or (c == "-" and not (r[0].startswith("perf") and "BPF" in COLUMNS[i][0]))]
        bad += [(r["profiler"], "samples") for r in rows if r["profiler"] != CONTROL and not r["samples"]]
        if bad:
            sys.exit(f"bench-smoke: FAIL: empty cells: {bad}")
        log("bench-smoke: every profiler ran and every column is filled")


def shutil_which(name):
    import shutil
    return shutil.which(name)


if __name__ == "__main__":
    main()
