#!/usr/bin/env python3
# SPDX-License-Identifier: LGPL-2.1-or-later
"""What does vprof's BPF program cost per sample, next to bpftrace's profile probe on the same events at the same
time? The kernel's own BPF statistics (run_time_ns / run_cnt of each program, with kernel.bpf_stats_enabled)
give the nanoseconds per run of vprofd's perf_event program and of bpftrace's, both sampling cpu-clock at 999 Hz
on every CPU, in four phases:

  discard   a target that never runs (blocked on stdin), and one busy process per CPU, pinned, that is not a
            target: every sample is discarded. bpftrace: profile:hz:999 /pid == TARGET/ { @[ustack] = count(); },
            a filter that never matches
  discard-cgroup
            the same with an empty cgroup attached (vprofctl attach --cgroup, at level 2 of the cgroup2 hierarchy,
            as a service's): every discarded sample then also looks its task's ancestor at that level up in the
            attached cgroups' map, and misses. bpftrace as in discard
  walk-20   vprofd (default UnwindTableMiB=) and one vprof-nofp per CPU, pinned, both targets, at a depth that
            gives 20 user frames: the walk by the unwind tables on code without frame pointers. bpftrace:
            profile:hz:999 /pid == A || pid == B/ { @[ustack(64)] = count(); }, which on this code finds a frame
  fp-20     vprofd --unwind-table-size=0 (the kernel's frame-pointer walk, bpf_get_stack()) on vprof-nofp-fp, the
            same code with frame pointers, at a depth that gives that walk 20 frames; bpftrace as in walk-20
  walk-64   vprofd (default) on vprof-nofp-fp at a depth that gives 64 frames, so that the walk by the tables and
            bpftrace's frame-pointer walk unwind the same stack; bpftrace as in walk-20

The kernel's frame-pointer walk (perf_callchain_user(), under bpf_get_stack() and bpftrace's ustack) stops at its
depth limit or at the first read that fails: past the outermost frame it reads the frame record at the last rbp
(0, or whatever a libc without frame pointers left there) and takes a page fault, on every sample whose stack is
shallower than the limit. Its cost is in fp-20's and bpftrace's figures, as in every use of that walk.

Each round runs the phases in that order, each with a vprofd of its own on a private bus and a bpftrace of its
own; each phase waits for the walk's tables (no more fall-backs) and measures a window of --seconds. Between the
two snapshots the program's run count is checked against its own counters (kept + discarded + lost, as the daemon
sums them): every sample is accounted for ("unaccounted" 0). --baseline BUILD_DIR runs that build's vprofd too, on
a bus of its own, in every phase at the same time: before and after on the same samples.

The machine may run other processes during the kept phases, whose samples both programs discard: a kept phase's
figures are the kept samples' cost, (run time - discarded runs x the same round's discard cost) / kept runs,
with vprofd's exact kept and discarded counts and, for bpftrace, the same share of its runs (both sample the
same CPUs at the same rate at the same time). The kept share is printed: near 1, the correction is small.

Requirements (issue 15, "Cost"): discard <= 2x bpftrace's never-matching filter; walk-20 <= 2x fp-20 (vprofd's
walk on code without frame pointers against its frame-pointer program on the twin with them); walk-64 <= 4x
bpftrace's ustack on the same process. Medians over --rounds rounds of each round's ratio. Exits 1 when a
requirement is not met.

    bench/unwind-cost.py [BUILD_DIR] [--rounds N] [--seconds S] [--phases discard,walk-20,...]
                         [--baseline BUILD_DIR] [--json FILE]

As root, with bpftrace and bpftool. kernel.bpf_stats_enabled is held on by a bpf(BPF_ENABLE_STATS) file
descriptor for the run (the same statistics; other users writing the sysctl cannot turn it off under the
benchmark), else by the sysctl, put back at the end."""
import argparse
import ctypes
import glob
import json
import os
import re
import shutil
import signal
import statistics
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import bench_env  # noqa: E402

SKIP = 77
NCPUS = os.cpu_count()
FREQUENCY = 999
BPF_PROG_TYPE_PERF_EVENT = 7
# enum vprof_stat (common/vprof-abi.h): the four outcomes of a sample and the fall-backs of the walk.
STAT_KEPT, STAT_DISCARDED, STAT_RING_FULL, STAT_NO_BUFFER = 0, 1, 2, 3
STAT_UNWIND_FELL_BACK = 19
STATS_READ = (STAT_KEPT, STAT_DISCARDED, STAT_RING_FULL, STAT_NO_BUFFER, STAT_UNWIND_FELL_BACK)
# vprof-nofp's stack: nofp_lib_spin, nofp_lib_work, nofp_recurse x (depth + 1), nofp_run, main, two frames of
# libc and _start: depth + 8 frames, which the walk by the tables finds. A frame-pointer walk of vprof-nofp-fp finds
# depth + 6: it ends after main's caller, in the frames of Debian's libc, built without frame pointers.
# kept: the targets run, one per CPU, at that depth (walk-20: 20 frames; fp-20: 20 by frame pointers; walk-64: 64
# by the walk, 62 by frame pointers); else one busy process per CPU that is not a target.
PHASES = {
    "discard": dict(daemon="walk", kept=False),
    "discard-cgroup": dict(daemon="walk", kept=False, cgroup=True),
    "walk-20": dict(daemon="walk", kept=True, binary="vprof-nofp", depth=12),
    "fp-20": dict(daemon="fp", kept=True, binary="vprof-nofp-fp", depth=14),
    "walk-64": dict(daemon="walk", kept=True, binary="vprof-nofp-fp", depth=56),
}
# (phase, what it is compared with, the limit of the ratio; None: a comparison, no requirement)
REQUIREMENTS = [("discard", "bpftrace", 2.0), ("discard-cgroup", "discard", None), ("walk-20", "fp-20", 2.0),
                ("walk-64", "bpftrace", 4.0)]


def log(msg):
    print(msg, flush=True)


# --- the bpf() system call -------------------------------------------------------------------------------------
_libc = ctypes.CDLL(None, use_errno=True)
SYS_BPF = 321  # x86-64
BPF_MAP_LOOKUP_ELEM, BPF_MAP_GET_FD_BY_ID, BPF_ENABLE_STATS = 1, 14, 32


def bpf(cmd, attr):
    r = _libc.syscall(SYS_BPF, cmd, ctypes.byref(attr), ctypes.sizeof(attr))
    if r < 0:
        e = ctypes.get_errno()
        raise OSError(e, os.strerror(e))
    return r


def possible_cpus():
    """The number of possible CPUs, which per-CPU map values are sized by: 0-N or a list of ranges."""
    with open("/sys/devices/system/cpu/possible") as f:
        return max(int(part.split("-")[-1]) for part in f.read().strip().split(",")) + 1


class Counters:
    """vprofd's counters, read by map id with the bpf() system call as the daemon sums them (sampler_read_stats()):
    "stats", a per-CPU array of u64, and "discards", the samples that the targets' bitmap discarded, one struct
    vprof_cpu_counter per CPU, added to VPROF_STAT_DISCARDED (absent from builds before the bitmap). A read takes
    microseconds, so that it and the program statistics make one snapshot."""

    def __init__(self, maps):
        self.ncpus = possible_cpus()
        self.stats = bpf(BPF_MAP_GET_FD_BY_ID, (ctypes.c_uint32 * 3)(maps["stats"]["id"], 0, 0))
        self.discards = bpf(BPF_MAP_GET_FD_BY_ID, (ctypes.c_uint32 * 3)(maps["discards"]["id"], 0, 0)) \
            if "discards" in maps else None

    def lookup(self, fd, k, value):
        key = ctypes.c_uint32(k)
        bpf(BPF_MAP_LOOKUP_ELEM, (ctypes.c_uint64 * 4)(fd, ctypes.addressof(key), ctypes.addressof(value), 0))

    def read(self, keys):
        """{key: the sum over the CPUs}."""
        values = (ctypes.c_uint64 * self.ncpus)()
        out = {}
        for k in keys:
            self.lookup(self.stats, k, values)
            out[k] = sum(values)
        if STAT_DISCARDED in keys and self.discards is not None:
            counter = (ctypes.c_uint64 * 8)()
            for cpu in range(self.ncpus):
                self.lookup(self.discards, cpu, counter)
                out[STAT_DISCARDED] += counter[0]
        return out

    def close(self):
        os.close(self.stats)
        if self.discards is not None:
            os.close(self.discards)


class StatsEnabled:
    """kernel.bpf_stats_enabled on while held: bpf(BPF_ENABLE_STATS, BPF_STATS_RUN_TIME) returns a file descriptor
    that the kernel counts along with the sysctl; else the sysctl itself, put back by close()."""

    def __init__(self):
        self.fd = None
        self.sysctl_was = None
        try:
            self.fd = bpf(BPF_ENABLE_STATS, (ctypes.c_uint32 * 2)(0, 0))
        except OSError:
            with open("/proc/sys/kernel/bpf_stats_enabled") as f:
                self.sysctl_was = f.read().strip()
            with open("/proc/sys/kernel/bpf_stats_enabled", "w") as f:
                f.write("1")

    def close(self):
        if self.fd is not None:
            os.close(self.fd)
        elif self.sysctl_was is not None:
            with open("/proc/sys/kernel/bpf_stats_enabled", "w") as f:
                f.write(self.sysctl_was)


def fdinfos(pid):
    for path in glob.glob(f"/proc/{pid}/fdinfo/*"):
        try:
            with open(path) as f:
                yield dict((k.strip(), v.strip()) for k, v in
                           (line.split(":", 1) for line in f.read().splitlines() if ":" in line))
        except OSError:
            continue


def perf_prog_fdinfo(pid):
    """The fdinfo file of the perf_event program that process pid holds (one program, by id)."""
    found = {}
    for path in glob.glob(f"/proc/{pid}/fdinfo/*"):
        try:
            with open(path) as f:
                info = dict((k.strip(), v.strip()) for k, v in
                            (line.split(":", 1) for line in f.read().splitlines() if ":" in line))
        except OSError:
            continue
        if info.get("prog_type") == str(BPF_PROG_TYPE_PERF_EVENT) and "run_time_ns" in info:
            found.setdefault(info["prog_id"], path)
    if len(found) != 1:
        raise RuntimeError(f"process {pid} holds {len(found)} perf_event programs, not one")
    return found.popitem()[1]


def prog_stats(fdinfo):
    """(run_time_ns, run_cnt) of a program, from its fdinfo file."""
    with open(fdinfo) as f:
        text = f.read()
    return (int(re.search(r"^run_time_ns:\s*(\d+)", text, re.M).group(1)),
            int(re.search(r"^run_cnt:\s*(\d+)", text, re.M).group(1)))


def perf_prog_insns(pid):
    """{prog_id: verified_insns} of the perf_event programs of process pid."""
    return {int(i["prog_id"]): int(i.get("verified_insns", 0)) for i in fdinfos(pid)
            if i.get("prog_type") == str(BPF_PROG_TYPE_PERF_EVENT) and "prog_id" in i}


def perf_fds(pid):
    n = 0
    for fd in glob.glob(f"/proc/{pid}/fd/*"):
        try:
            n += os.readlink(fd) == "anon_inode:[perf_event]"
        except OSError:
            pass
    return n


def daemon_maps(pid):
    """{name: id} of the maps that process pid holds."""
    ids = {int(i["map_id"]) for i in fdinfos(pid) if "map_id" in i}
    maps = json.loads(subprocess.run(["bpftool", "--json", "map", "show"], capture_output=True, text=True,
                                     check=True).stdout)
    return {m["name"]: m for m in maps if m.get("id") in ids and "name" in m}


# --- stacks ------------------------------------------------------------------------------------------------------
def mean_user_frames_folded(text):
    """Mean user frames a sample in vprofctl's folded stacks (kernel frames end in _[k])."""
    frames = samples = 0
    for line in text.splitlines():
        m = re.match(r"^(.*) (\d+)$", line.strip())
        if m:
            n = int(m.group(2))
            frames += n * sum(1 for f in m.group(1).split(";") if not f.endswith("_[k]"))
            samples += n
    return frames / samples if samples else None


def mean_frames_bpftrace(text):
    frames = samples = 0
    for block, count in re.findall(r"@\[\n(.*?)\n?\]: (\d+)", text, re.S):
        frames += int(count) * sum(1 for line in block.splitlines() if line.strip())
        samples += int(count)
    samples += sum(int(n) for n in re.findall(r"^@\[\]: (\d+)$", text, re.M))
    return frames / samples if samples else None


# --- one phase ---------------------------------------------------------------------------------------------------
class Daemon:
    """A vprofd of the phase: its environment, its counters and its sampling program's statistics."""

    def __init__(self, label, env):
        self.label, self.env = label, env
        self.counters = None

    def open(self):
        self.counters = Counters(daemon_maps(self.env.daemon.pid))
        self.fdinfo = perf_prog_fdinfo(self.env.daemon.pid)

    def snapshot(self):
        """The program's statistics and its counters at one moment: read again until no run ended between the
        two reads of the statistics around the counters (a run counts itself in the map before the kernel adds
        it to run_cnt)."""
        for _ in range(1000):
            before = prog_stats(self.fdinfo)
            counters = self.counters.read(STATS_READ)
            after = prog_stats(self.fdinfo)
            if before == after:
                break
        return after, counters

    def stop(self):
        if self.counters:
            self.counters.close()
        return self.env.stop()


def BuildEnv(build):
    """VprofEnv for another build's vprofd and vprofctl (--baseline), with this tree's bus policy."""
    import vprof_env

    class Env(vprof_env.VprofEnv):
        def daemon_command(self):
            return [f"{build}/daemon/vprofd"] + super().daemon_command()[1:]

        def ctl(self, *args, user=None, timeout=30):
            return subprocess.run([f"{build}/client/vprofctl", *map(str, args)], env=self.env,
                                  capture_output=True, text=True, timeout=timeout)
    return Env


class Phase:

    def __init__(self, bench, name):
        self.bench, self.name, self.spec = bench, name, PHASES[name]
        self.daemons = []
        self.procs = []
        self.bpftrace = None
        self.out = os.path.join(bench.tmp, f"bpftrace-{name}.out")

    def spawn(self, binary, cpu, depth, wait=False):
        cmd = ["taskset", "-c", str(cpu), os.path.join(self.bench.workloads, binary), "--seconds", "100000"]
        if depth is not None:
            cmd += ["--depth", str(depth)]
        if wait:
            cmd.append("--wait-stdin")
        p = subprocess.Popen(cmd, stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
        self.procs.append(p)
        if wait:
            line = p.stdout.readline()
            assert line.startswith("ready "), f"{binary} said {line!r}"
        return p

    def start(self):
        args = ["--event=cpu-clock"] + (["--unwind-table-size=0"] if self.spec["daemon"] == "fp" else [])
        # vprofd, and the baseline's when asked: each on a bus of its own, sampling the same events.
        builds = [("vprof", None)] + ([("base", self.bench.args.baseline)] if self.bench.args.baseline else [])
        for label, build in builds:
            env = (BuildEnv(build) if build else self.bench.vprof_env.VprofEnv)(frequency=FREQUENCY,
                                                                                 extra_args=args)
            self.daemons.append(Daemon(label, env))
            env.start()
        if not self.spec["kept"]:
            # A target that never runs; every CPU busy with a process that is not one.
            self.targets = [self.spawn("vprof-nofp-fp", 0, None, wait=True).pid]
            for cpu in range(NCPUS):
                self.spawn("vprof-nofp", cpu, None)
            prog = f"profile:hz:{FREQUENCY} /pid == {self.targets[0]}/ {{ @[ustack] = count(); }}"
        else:
            self.targets = [self.spawn(self.spec["binary"], cpu, self.spec["depth"]).pid for cpu in range(NCPUS)]
            cond = " || ".join(f"pid == {p}" for p in self.targets)
            prog = f"profile:hz:{FREQUENCY} /{cond}/ {{ @[ustack(64)] = count(); }}"
        for d in self.daemons:
            for pid in self.targets:
                r = d.env.ctl("attach", pid)
                if r.returncode != 0:
                    raise RuntimeError(f"vprofctl attach {pid}: {r.stderr}")
        if self.spec.get("cgroup"):
            # An empty cgroup at level 2 (a unit's in system.slice is at level 2), this tree's vprofd only: a
            # baseline may not know cgroups.
            self.cgroup = self.bench.make_cgroup()
            r = self.daemons[0].env.ctl("attach", "--cgroup", self.cgroup)
            if r.returncode != 0:
                raise RuntimeError(f"vprofctl attach --cgroup {self.cgroup}: {r.stderr}")
        with open(self.out, "w") as out, open(self.out + ".err", "w") as err:
            self.bpftrace = subprocess.Popen(["bpftrace", "-e", prog], stdout=out, stderr=err,
                                             stdin=subprocess.DEVNULL)
        deadline = time.monotonic() + 60
        while True:
            if self.bpftrace.poll() is not None:
                with open(self.out + ".err") as f:
                    raise RuntimeError(f"bpftrace exited with {self.bpftrace.returncode}: {f.read()}")
            with open(self.out) as f:
                if "Attaching" in f.read() and perf_fds(self.bpftrace.pid) >= NCPUS:
                    break
            if time.monotonic() > deadline:
                raise RuntimeError("bpftrace did not attach")
            time.sleep(0.1)
        for d in self.daemons:
            d.open()
        self.peer_fdinfo = perf_prog_fdinfo(self.bpftrace.pid)

    def warm_up(self):
        """The walk falls back to frame pointers until the daemon has compiled and pushed the tables: wait until a
        second goes by without a fall-back in any daemon (at most 30 s)."""
        time.sleep(self.bench.args.warmup)
        if self.spec["daemon"] != "walk" or not self.spec["kept"]:
            return 0
        deadline = time.monotonic() + 30
        before = [d.counters.read([STAT_UNWIND_FELL_BACK])[STAT_UNWIND_FELL_BACK] for d in self.daemons]
        while time.monotonic() < deadline:
            time.sleep(1)
            now = [d.counters.read([STAT_UNWIND_FELL_BACK])[STAT_UNWIND_FELL_BACK] for d in self.daemons]
            if now == before:
                break
            before = now
        return before[0]

    def measure(self, seconds):
        for d in self.daemons:
            for pid in self.targets:
                d.env.ctl("reset", pid)
        a = [d.snapshot() for d in self.daemons], prog_stats(self.peer_fdinfo), time.monotonic()
        time.sleep(seconds)
        b = [d.snapshot() for d in self.daemons], prog_stats(self.peer_fdinfo), time.monotonic()
        m = dict(phase=self.name, seconds=b[2] - a[2], peer_ns=b[1][0] - a[1][0], peer_runs=b[1][1] - a[1][1])
        for d, (sa, ca), (sb, cb) in zip(self.daemons, a[0], b[0]):
            c = {k: cb[k] - ca[k] for k in STATS_READ}
            frames = []
            for pid in self.targets:
                r = d.env.ctl("report", "--by=stack", pid)
                frames.append(mean_user_frames_folded(r.stdout) if r.returncode == 0 else None)
            m.update({f"{d.label}_ns": sb[0] - sa[0], f"{d.label}_runs": sb[1] - sa[1],
                      f"{d.label}_kept": c[STAT_KEPT], f"{d.label}_discarded": c[STAT_DISCARDED],
                      f"{d.label}_lost": c[STAT_RING_FULL] + c[STAT_NO_BUFFER],
                      f"{d.label}_fell_back": c[STAT_UNWIND_FELL_BACK],
                      f"{d.label}_frames": statistics.mean(f for f in frames if f is not None)
                      if any(f is not None for f in frames) else None,
                      f"{d.label}_insns": max(perf_prog_insns(d.env.daemon.pid).values(), default=0)})
        return m

    def stop(self):
        frames = None
        if self.bpftrace and self.bpftrace.poll() is None:
            self.bpftrace.send_signal(signal.SIGINT)
            try:
                self.bpftrace.wait(60)
            except subprocess.TimeoutExpired:
                self.bpftrace.kill()
                self.bpftrace.wait()
            with open(self.out) as f:
                frames = mean_frames_bpftrace(f.read())
        for p in self.procs:
            if p.poll() is None:
                p.kill()
            p.wait()
            for f in (p.stdin, p.stdout):
                f.close()
        problems = []
        for d in self.daemons:
            problems += d.stop()
        if problems:
            raise RuntimeError("\n".join(problems))
        return frames


# --- the benchmark -----------------------------------------------------------------------------------------------
class Bench:
    def __init__(self, args, vprof_env):
        self.args, self.vprof_env = args, vprof_env
        self.workloads = os.path.join(args.build, "tests", "workloads")
        self.tmp = tempfile.mkdtemp(prefix="vprof-unwind-cost-")
        self.labels = ["vprof"] + (["base"] if args.baseline else [])
        self.rounds = []
        self.cgroup = self.cgroup_mount = None

    def make_cgroup(self):
        """An empty cgroup at level 2 below the cgroup2 mount point, made once and removed at the end."""
        if not self.cgroup:
            with open("/proc/self/mountinfo") as f:
                mounts = [fields[4] for fields in map(str.split, f)
                          if fields[fields.index("-") + 1] == "cgroup2" and fields[3] == "/"]
            if not mounts:
                raise RuntimeError("no cgroup2 hierarchy is mounted: phase discard-cgroup cannot run")
            self.cgroup_mount = mounts[0]
            self.cgroup = f"/vprof-bench-{os.getpid()}/empty"
            os.makedirs(self.cgroup_mount + self.cgroup)
        return self.cgroup

    def remove_cgroup(self):
        if self.cgroup:
            for path in (self.cgroup, os.path.dirname(self.cgroup)):
                try:
                    os.rmdir(self.cgroup_mount + path)
                except OSError as e:
                    log(f"bench: cannot remove cgroup {path}: {e}")

    def run_phase(self, name):
        phase = Phase(self, name)
        try:
            phase.start()
            phase.warm_up()
            m = phase.measure(self.args.seconds)
        finally:
            peer_frames = phase.stop()
        m["peer_frames"] = peer_frames
        return m

    def run(self):
        try:
            self.run_rounds()
        finally:
            shutil.rmtree(self.tmp, ignore_errors=True)
            self.remove_cgroup()

    def run_rounds(self):
        for rnd in range(self.args.rounds):
            got = {}
            for name in self.args.phases:
                m = self.run_phase(name)
                got[name] = m
                text = [f"  round {rnd + 1} {name:14}"]
                for label in self.labels:
                    text.append(f"{label} {m[label + '_ns'] / max(m[label + '_runs'], 1):7.1f} ns x "
                                f"{m[label + '_runs']} (kept {m[label + '_kept']}, discarded "
                                f"{m[label + '_discarded']}, lost {m[label + '_lost']}, fell back "
                                f"{m[label + '_fell_back']}, frames {fmt(m[label + '_frames'], '.1f')}),")
                text.append(f"bpftrace {m['peer_ns'] / max(m['peer_runs'], 1):7.1f} ns x {m['peer_runs']} "
                            f"(frames {fmt(m['peer_frames'], '.1f')})")
                log(" ".join(text))
            self.rounds.append(got)


def fmt(v, spec):
    return "-" if v is None else format(v, spec)


def kept_costs(rnd, labels):
    """Each phase's ns per run, for each vprofd and bpftrace: a discard phase's as measured; a kept phase's for its
    kept samples, less its discarded ones at the same round's discard cost (or as measured, without a discard
    phase). bpftrace's kept share is taken to be vprofd's (the same CPUs at the same rate at the same time)."""
    d = rnd.get("discard")
    out = {}
    for name, m in rnd.items():
        kept = m["vprof_kept"] + m["vprof_lost"]
        share = kept / max(kept + m["vprof_discarded"], 1)
        c = dict(share=share)
        for label in labels + ["peer"]:
            ns, runs = m[f"{label}_ns"], m[f"{label}_runs"]
            if not PHASES[name]["kept"]:
                c[label] = ns / runs if runs else None
                continue
            d_ns = d[f"{label}_ns"] / d[f"{label}_runs"] if d and d[f"{label}_runs"] else 0
            if label == "peer":
                k = share * runs
                c[label] = (ns - (runs - k) * d_ns) / k if k else None
            else:
                k = m[f"{label}_kept"] + m[f"{label}_lost"]
                c[label] = (ns - m[f"{label}_discarded"] * d_ns) / k if k else None
        out[name] = c
    return out


def med(xs):
    xs = [x for x in xs if x is not None]
    return statistics.median(xs) if xs else None


def summarize(bench):
    labels = bench.labels
    per_round = [kept_costs(r, labels) for r in bench.rounds]
    phases = bench.args.phases
    rows = []
    for name in phases:
        ms = [r[name] for r in bench.rounds]
        cs = [c[name] for c in per_round]
        row = dict(phase=name, share=med([c["share"] for c in cs]), peer_ns=med([c["peer"] for c in cs]),
                   peer_runs=sum(m["peer_runs"] for m in ms), peer_frames=med([m["peer_frames"] for m in ms]))
        for label in labels:
            row.update({
                f"{label}_ns": med([c[label] for c in cs]),
                f"{label}_frames": med([m[f"{label}_frames"] for m in ms]),
                f"{label}_runs": sum(m[f"{label}_runs"] for m in ms),
                f"{label}_unaccounted": max(abs(m[f"{label}_runs"] - m[f"{label}_kept"] - m[f"{label}_discarded"] -
                                                m[f"{label}_lost"]) for m in ms),
                f"{label}_fell_back": sum(m[f"{label}_fell_back"] for m in ms),
                f"{label}_insns": max(m[f"{label}_insns"] for m in ms)})
        rows.append(row)
    reqs = []
    for name, against, limit in REQUIREMENTS:
        if name not in phases or (against != "bpftrace" and against not in phases):
            continue
        ratios = []
        for c in per_round:
            num = c[name]["vprof"]
            den = c[name]["peer"] if against == "bpftrace" else c[against]["vprof"]
            if num is not None and den:
                ratios.append(num / den)
        row = next(r for r in rows if r["phase"] == name)
        other = row if against == "bpftrace" else next(r for r in rows if r["phase"] == against)
        ratio = statistics.median(ratios) if ratios else None
        reqs.append(dict(phase=name, against="bpftrace" if against == "bpftrace" else f"vprof {against}",
                         vprof_ns=row["vprof_ns"], other_ns=other["peer_ns" if against == "bpftrace" else "vprof_ns"],
                         ratio=ratio, ratios=ratios, limit=limit,
                         met=limit is None or (ratio is not None and ratio <= limit),
                         frames=(row["vprof_frames"],
                                 other["peer_frames" if against == "bpftrace" else "vprof_frames"])))
    return rows, reqs


def print_tables(rows, reqs, args, labels):
    log(f"\nper phase, medians of {args.rounds} round(s) of {args.seconds:g} s; ns per run of the kept samples in "
        "the kept phases (see the header):")
    head = ["phase", "frames vprof", "frames bpftrace", "vprof ns/run"] + \
        (["baseline ns/run"] if "base" in labels else []) + \
        ["bpftrace ns/run", "kept share", "vprof runs", "bpftrace runs", "unaccounted", "fell back", "vprof insns"]
    cells = [head]
    for r in rows:
        cells.append([r["phase"], fmt(r["vprof_frames"], ".1f"), fmt(r["peer_frames"], ".1f"),
                      fmt(r["vprof_ns"], ".1f")] + ([fmt(r["base_ns"], ".1f")] if "base" in labels else []) +
                     [fmt(r["peer_ns"], ".1f"), fmt(r["share"], ".3f"), str(r["vprof_runs"]), str(r["peer_runs"]),
                      str(r["vprof_unaccounted"]), str(r["vprof_fell_back"]), str(r["vprof_insns"])])
    log(grid(cells))
    log("\nrequirements (ratio: median over the rounds of each round's ratio):")
    head = ["phase", "frames", "vprof ns/run", "against", "its ns/run", "ratio", "per round", "requirement",
            "result"]
    cells = [head] + [[q["phase"], "/".join(fmt(f, ".0f") for f in q["frames"]), fmt(q["vprof_ns"], ".1f"),
                       q["against"], fmt(q["other_ns"], ".1f"), fmt(q["ratio"], ".2f"),
                       ",".join(f"{x:.2f}" for x in q["ratios"]),
                       "-" if q["limit"] is None else f"<= {q['limit']:g}x",
                       "-" if q["limit"] is None else "pass" if q["met"] else "FAIL"] for q in reqs]
    log(grid(cells))


def grid(cells):
    widths = [max(len(r[i]) for r in cells) for i in range(len(cells[0]))]
    return "\n".join("  ".join(c.rjust(w) if i else c.ljust(w) for i, (c, w) in enumerate(zip(r, widths)))
                     for r in cells)


def skip_or_fail(reason):
    if os.environ.get("CI") == "true":
        sys.exit(f"FAIL: {reason} (a failure in CI)")
    log(f"SKIP: {reason}")
    sys.exit(SKIP)


def parse_args():
    ap = argparse.ArgumentParser(description="vprof's BPF program against bpftrace's, ns per run "
                                             "(see the file's comment).")
    ap.add_argument("build", nargs="?", default="build")
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--seconds", type=float, default=10)
    ap.add_argument("--warmup", type=float, default=2, help="seconds before the walk's fall-backs are watched")
    ap.add_argument("--phases", default=",".join(PHASES))
    ap.add_argument("--baseline", help="another build directory whose vprofd runs at the same time, for before "
                                       "and after")
    ap.add_argument("--json", help="write every round's figures there")
    a = ap.parse_args()
    a.build = os.path.abspath(a.build)
    if a.baseline:
        a.baseline = os.path.abspath(a.baseline)
    a.phases = [p for p in a.phases.split(",") if p]
    unknown = set(a.phases) - set(PHASES)
    if unknown or a.rounds < 1:
        ap.error(f"unknown phase {', '.join(sorted(unknown))}" if unknown else "--rounds must be at least 1")
    a.phases = [p for p in PHASES if p in a.phases]  # the discard phase first: the kept ones use its cost
    return a


def main():
    a = parse_args()
    if os.geteuid() != 0:
        skip_or_fail("needs root (BPF, bpftrace, the BPF statistics)")
    if os.uname().machine != "x86_64":
        skip_or_fail("the walk by unwind tables is x86-64 only")
    for tool in ("bpftrace", "bpftool", "taskset"):
        if not shutil.which(tool):
            skip_or_fail(f"missing {tool}")
    vprof_env = bench_env.setup(a.build)
    vprof_env.require_bpf_or_skip()
    log(f"bench: {a.rounds} round(s) of {', '.join(a.phases)}, {a.seconds:g} s each, cpu-clock at {FREQUENCY} Hz "
        f"on {NCPUS} CPUs; kernel {os.uname().release}" + (f"; baseline {a.baseline}" if a.baseline else ""))
    stats = StatsEnabled()
    started = time.monotonic()
    bench = Bench(a, vprof_env)
    try:
        bench.run()
    finally:
        stats.close()
    rows, reqs = summarize(bench)
    print_tables(rows, reqs, a, bench.labels)
    if a.json:
        with open(a.json, "w") as f:
            json.dump({"settings": vars(a), "cpus": NCPUS, "kernel": os.uname().release, "rounds": bench.rounds,
                       "phases": rows, "requirements": reqs}, f, indent=1)
    log(f"\nbench: {time.monotonic() - started:.0f} s")
    sys.exit(0 if all(q["met"] for q in reqs) else 1)


if __name__ == "__main__":
    main()
