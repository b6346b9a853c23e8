#!/usr/bin/env python3
# SPDX-License-Identifier: LGPL-2.1-or-later
"""Does vprof's walk by the unwind tables give the stacks perf's DWARF unwinding gives? Real Debian programs, run
as they are (built without frame pointers), each profiled at the same time by a real vprofd (private bus,
attached with vprofctl, 999 Hz) and by `perf record -e cpu-clock -F 999 --call-graph dwarf,65528 -p PID` (perf
copies 64 KiB of stack with every sample and unwinds it afterwards with the files' CFI):

  python   /usr/bin/python3.11 running bench/unwind-vs-perf-python.py (JSON, regular expressions, heapq)
  xz       xz -9 -T1 compressing a generated text file: the hot code is in liblzma.so.5

Each program runs for a warm-up with vprofd attached (the daemon compiles the unwind tables of the files the
first samples fell back in), then vprofd's tables are reset and perf records for SECONDS; vprofd's report is
read as soon as perf ends. The same is done again with a vprofd started with --unwind-table-size=0 (the kernel's
frame-pointer walk, the daemon's completion of the leaf's callers from the stack window): the "before".

Both are counted the same way, by COUNTING.md's rules: a function's inclusive percent is the share of samples
with it anywhere on the stack (once a sample, kernel frames included), its exclusive percent the share with it
innermost. vprof's counts are those of its stacks (`vprofctl report PID --by stack --json`), checked against
its own functions table (`vprofctl report PID --json`). perf has no Python frames: vprofd runs with
--python-interpreter-frames (the evaluation loop's native frames stay) and vprof's Python frames are left out of
the stacks compared with perf's (not of those checked against its table). A function is known by where it is, not by its name:
the FDE of its module's .eh_frame that holds the frame's address (perf: the sample's address, one byte before a
return address; vprof: the address of a frame it could not name, `MODULE+0xVADDR`, else the address of its
symbol), so that a function perf calls `[unknown]` (a stripped file's static function: Debian's python3.11 and
liblzma have only their dynamic symbols) and vprof calls `python3.11+0x2a9910` is one row, and so are two
aliases. A name that is several functions in its module's symbols, and code without an FDE, are known by name;
kernel functions by name, aliases at one address in /proc/kallsyms as one.

It prints, per program and walk, a row for every function with at least 2% inclusive in perf or in vprof: both
profilers' inclusive and exclusive percents, vprof's minus perf's, and PASS when both are within 2 points; and
the share of each profiler's stacks whose outermost frame is the program's entry point (_start). Where stacks are
cut, the two differ by design: perf unwinds only the 64 KiB of stack it copied, so a stack deeper than that
loses its outer frames (its callers' inclusive percents fall), while vprof's walk reads the live stack without a
byte limit but stops after 128 frames (counted in stacks_truncated). Neither program comes near either limit.
It exits 1 when a row of the walk by the tables fails.

    bench/unwind-vs-perf.py [BUILD_DIR] [--seconds S] [--warmup S] [--programs python,xz] [--walks tables,fp]

As root, with perf (Debian's linux-perf). Takes about a minute per program and walk, most of it perf script."""
import argparse
import bisect
import json
import os
import random
import re
import signal
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import bench_env  # noqa: E402

FREQUENCY = 999
THRESHOLD = 2.0  # percent inclusive in either profiler, to get a row
TOLERANCE = 2.0  # points between the two
PERF_STACK = 65528  # the most perf can copy with a sample
PERF_BUFFER = "64M"  # its ring buffer: a second of samples at 64 KiB each
# The evaluation loop's native frames kept (--python-interpreter-frames) and vprof's Python frames left out of its
# stacks (vprof_stacks()): the native stacks, as perf sees them.
WALKS = {"tables": ["--python-interpreter-frames"], "fp": ["--unwind-table-size=0", "--python-interpreter-frames"]}
WALK_TITLES = {"tables": "walk by the unwind tables (default)", "fp": "frame pointers (--unwind-table-size=0)"}
HERE = os.path.dirname(os.path.abspath(__file__))


# --- the programs ------------------------------------------------------------------------------------------------
def python_command(tmp, seconds):
    return ["/usr/bin/python3.11", os.path.join(HERE, "unwind-vs-perf-python.py"), str(seconds)]


def xz_command(tmp, seconds):
    """xz compressing text of words drawn from a vocabulary (it never repeats: liblzma's match finder works)."""
    path = os.path.join(tmp, "words.txt")
    if not os.path.exists(path):
        rng = random.Random(15)
        letters = "abcdefghijklmnopqrstuvwxyz"
        vocabulary = ["".join(rng.choice(letters) for _ in range(rng.randrange(2, 11))) for _ in range(4096)]
        with open(path, "w") as f:
            for _ in range(64):  # 64 chunks of about 1 MiB
                f.write(" ".join(rng.choices(vocabulary, k=160000)))
                f.write("\n")
    return ["xz", "-9", "-T1", "-c", path]


PROGRAMS = {"python": ("/usr/bin/python3.11 bench/unwind-vs-perf-python.py", python_command),
            "xz": ("xz -9 -T1 -c words.txt (64 MiB of generated text)", xz_command)}


# --- the files' functions ----------------------------------------------------------------------------------------
def symbol_name(name):
    """A symbol's name without its version (`__libc_start_main@@GLIBC_2.34`); PLT entries keep `@plt`."""
    return name if name.endswith("@plt") else name.split("@")[0]


class ModuleFile:
    """A mapped ELF file: its FDEs, its load segments (perf gives file offsets) and its symbols."""

    def __init__(self, path):
        self.path = path
        out = subprocess.run(["readelf", "--debug-dump=frames", path], capture_output=True, text=True).stdout
        ranges = sorted((int(a, 16), int(b, 16))
                        for a, b in re.findall(r"FDE cie=\w+ pc=([0-9a-f]+)\.\.([0-9a-f]+)", out))
        self.starts = [a for a, _ in ranges]
        self.ends = [b for _, b in ranges]
        out = subprocess.run(["readelf", "-lW", path], capture_output=True, text=True).stdout
        self.loads = [(int(o, 16), int(v, 16), int(s, 16))
                      for o, v, s in re.findall(r"^\s+LOAD\s+0x(\w+) 0x(\w+) 0x\w+ 0x(\w+)", out, re.M)]
        addresses = {}
        for f in [path] + self.debug_files(path):
            for flags in (["--defined-only"], ["-D", "--defined-only"]):
                out = subprocess.run(["nm", *flags, f], capture_output=True, text=True).stdout
                for line in out.splitlines():
                    parts = line.split()
                    if len(parts) == 3 and parts[1] in "tTwWiI":
                        addresses.setdefault(symbol_name(parts[2]), set()).add(int(parts[0], 16))
        self.address_of = {n: next(iter(a)) for n, a in addresses.items() if len(a) == 1}
        self.ambiguous = {n for n, a in addresses.items() if len(a) > 1}

    @staticmethod
    def debug_files(path):
        note = subprocess.run(["readelf", "-n", path], capture_output=True, text=True).stdout
        m = re.search(r"Build ID: ([0-9a-f]{2})([0-9a-f]+)", note)
        debug = m and f"/usr/lib/debug/.build-id/{m.group(1)}/{m.group(2)}.debug"
        return [debug] if debug and os.path.exists(debug) else []

    def vaddr(self, offset):
        for off, vaddr, size in self.loads:
            if off <= offset < off + size:
                return offset - off + vaddr
        return None

    def fde(self, vaddr):
        i = bisect.bisect_right(self.starts, vaddr) - 1
        return self.starts[i] if i >= 0 and vaddr < self.ends[i] else None


class Functions:
    """Keys that name one function the same way from perf's frames and from vprof's."""

    def __init__(self, maps):
        self.files = {}  # module (the file's base name) -> ModuleFile
        for path in sorted(maps):
            base = os.path.basename(path)
            if base not in self.files:
                self.files[base] = ModuleFile(path)
        self.kernel_alias = {}
        with open("/proc/kallsyms") as f:
            by_address = {}
            for line in f:
                parts = line.split()
                if len(parts) >= 3 and parts[1] in "tTwW":
                    by_address.setdefault(parts[0], []).append(parts[2])
        for names in by_address.values():
            if len(names) > 1:
                for n in names:
                    self.kernel_alias[n] = min(names)
        self.names = {}  # key -> {"perf": name, "vprof": name}

    def _key(self, module, name, vaddr):
        f = self.files.get(module)
        if f and (name is None or name not in f.ambiguous):
            if vaddr is None and name is not None:
                vaddr = f.address_of.get(name)
            start = f.fde(vaddr) if vaddr is not None else None
            if start is not None:
                return (module, start)
        return (module, name if name is not None else f"[unknown]+{vaddr:#x}" if vaddr else "[unknown]")

    def _remember(self, key, who, name):
        self.names.setdefault(key, {}).setdefault(who, name)

    def perf_frame(self, sym, dso, ip, leaf):
        if dso == "[kernel.kallsyms]" or (dso.startswith("[") and dso != "[unknown]" and dso not in ("[vdso]",)):
            module = "[kernel]" if dso == "[kernel.kallsyms]" else dso
            key = (module, self.kernel_alias.get(sym, sym))
        else:
            module = os.path.basename(dso)
            name = None if sym == "[unknown]" else symbol_name(sym)
            f = self.files.get(module)
            vaddr = f.vaddr(ip if leaf else ip - 1) if f else None
            key = self._key(module, name, vaddr)
        self._remember(key, "perf", sym)
        return key

    def vprof_frame(self, function, module, kernel):
        if kernel:
            key = (module, self.kernel_alias.get(function, function))
        else:
            m = re.fullmatch(re.escape(module) + r"\+0x([0-9a-f]+)", function)
            key = self._key(module, None if m else function, int(m.group(1), 16) if m else None)
        self._remember(key, "vprof", function)
        return key

    def entry(self, path):
        """The key of a program's entry point."""
        out = subprocess.run(["readelf", "-hW", path], capture_output=True, text=True).stdout
        address = int(re.search(r"Entry point address:\s+0x([0-9a-f]+)", out).group(1), 16)
        return self._key(os.path.basename(path), None, address)

    def display(self, key):
        seen = self.names.get(key, {})
        for who in ("perf", "vprof"):
            name = seen.get(who)
            if name and name != "[unknown]" and not re.search(r"\+0x[0-9a-f]+$", name):
                return symbol_name(name)
        return f"{key[0]}+{key[1]:#x}" if isinstance(key[1], int) else str(key[1])


# --- counting -----------------------------------------------------------------------------------------------------
def count(stacks):
    """stacks: (keys innermost first, samples). Returns (total, inclusive, exclusive) in samples."""
    total, incl, excl = 0, {}, {}
    for keys, n in stacks:
        total += n
        for k in set(keys):
            incl[k] = incl.get(k, 0) + n
        if keys:
            excl[keys[0]] = excl.get(keys[0], 0) + n
    return total, incl, excl


def reach_entry(stacks, entry):
    """The percent of samples whose outermost frame is the program's entry point (_start)."""
    total = sum(n for _, n in stacks)
    return 100.0 * sum(n for keys, n in stacks if keys and keys[-1] == entry) / total if total else 0.0


def parse_perf_script(text, functions):
    """perf script -F tid,ip,sym,dso --no-inline: a header line, then "ADDR SYMBOL (DSO)" lines, innermost first."""
    stacks, frames, in_sample = [], [], False
    for line in text.splitlines() + [""]:
        if not line.strip():
            if in_sample:
                stacks.append((frames, 1))
            frames, in_sample = [], False
            continue
        m = re.match(r"^\s+([0-9a-f]+)\s+(.*?)\s+\((.*)\)$", line)
        if not m:
            in_sample = True  # the sample's header line
            continue
        frames.append(functions.perf_frame(m.group(2), m.group(3), int(m.group(1), 16), not frames))
    return stacks


def vprof_stacks(report, functions, inlined=True, python=True):
    """vprofctl report --by stack --json: frames outermost first, kernel ones last. Without inlined, the frames of
    inlined functions are left out (their samples then count in the function they were inlined into), which is
    perf's view with `perf script --no-inline`; without python, the Python functions' frames (perf has none: with
    --python-interpreter-frames the evaluation loop's native frames stay, the native stack is perf's)."""
    return [([functions.vprof_frame(f["function"], f["module"], f["kernel"]) for f in s["frames"][::-1]
              if (inlined or not f.get("inlined", False)) and (python or not f.get("python", False))],
             s["samples"]) for s in report["stacks"]]


def check_against_report(rows, functions, incl, excl):
    """vprof's functions table against the counts of its stacks, for the keys that hold one of its rows."""
    by_key = {}
    for r in rows:
        key = functions.vprof_frame(r["function"], r["module"], r["module"].startswith("["))
        by_key.setdefault(key, []).append(r)
    differ = [(k, rs) for k, rs in by_key.items() if len(rs) == 1
              and (rs[0]["inclusive"] != incl.get(k, 0) or rs[0]["exclusive"] != excl.get(k, 0))]
    return sum(1 for rs in by_key.values() if len(rs) == 1), differ


# --- one run ------------------------------------------------------------------------------------------------------
def perf_events(pid):
    """How many perf events a process holds."""
    n = 0
    for fd in os.listdir(f"/proc/{pid}/fd"):
        try:
            n += os.readlink(f"/proc/{pid}/fd/{fd}") == "anon_inode:[perf_event]"
        except OSError:
            continue
    return n


def profile(env, name, args, tmp):
    """Runs the program, vprofd attached and perf at the same time; returns what to print."""
    cmd = PROGRAMS[name][1](tmp, args.warmup + args.seconds + 60)
    p = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stdin=subprocess.DEVNULL)
    data = os.path.join(tmp, f"perf-{name}.data")
    perf = None
    try:
        r = env.ctl("attach", p.pid)
        if r.returncode != 0:
            raise RuntimeError(f"vprofctl attach {p.pid}: {r.stderr}")
        time.sleep(args.warmup)
        # Both count the same time: the program stops while perf starts and the tables are reset, runs, and
        # stops again before perf is stopped and vprof read.
        p.send_signal(signal.SIGSTOP)
        perf = subprocess.Popen(["perf", "record", "-e", "cpu-clock", "-F", str(FREQUENCY), "--call-graph",
                                 f"dwarf,{PERF_STACK}", "--mmap-pages", PERF_BUFFER, "-p", str(p.pid), "-o", data],
                                stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
        deadline = time.monotonic() + 30
        while perf_events(perf.pid) < os.cpu_count() and time.monotonic() < deadline:
            time.sleep(0.05)
        status_before = env.ctl_json("status")
        env.ctl("reset", p.pid)
        p.send_signal(signal.SIGCONT)
        time.sleep(args.seconds)
        p.send_signal(signal.SIGSTOP)
        perf.send_signal(signal.SIGINT)
        perf_err = perf.communicate(timeout=600)[1]
        report = env.ctl_json("report", p.pid)
        stacks_report = env.ctl_json("report", p.pid, "--by", "stack")
        status = env.ctl_json("status")
        with open(f"/proc/{p.pid}/maps") as f:
            maps = {line.split()[5] for line in f if len(line.split()) >= 6 and line.split()[5].startswith("/")
                    and "x" in line.split()[1]}
        exe = os.readlink(f"/proc/{p.pid}/exe")
        env.ctl("detach", p.pid)
    finally:
        if perf and perf.poll() is None:
            perf.kill()
            perf.wait()
        p.kill()
        p.wait()
    if perf.returncode not in (0, -signal.SIGINT, 130):
        raise RuntimeError(f"perf record: {perf_err[-2000:]}")
    perf_lost = sum(int(n) for n in re.findall(r"lost (\d+) chunks", perf_err))
    script = subprocess.run(["perf", "script", "-i", data, "--no-inline", "-F", "tid,ip,sym,dso"],
                            capture_output=True, text=True, timeout=1800)
    data_bytes = os.path.getsize(data)
    os.unlink(data)
    if script.returncode != 0:
        raise RuntimeError(f"perf script: {script.stderr[-2000:]}")
    functions = Functions(maps)
    entry = functions.entry(exe)
    p_stacks = parse_perf_script(script.stdout, functions)
    # vprof's own tables have the inlined functions' frames; perf's script here has not (--no-inline): vprof's
    # stacks are checked against its tables whole, and against perf without them.
    _, all_incl, all_excl = count(vprof_stacks(stacks_report, functions))
    checked, differ = check_against_report(report["functions"], functions, all_incl, all_excl)
    v_stacks = vprof_stacks(stacks_report, functions, inlined=False, python=False)
    p_total, p_incl, p_excl = count(p_stacks)
    v_total, v_incl, v_excl = count(v_stacks)
    keys = {k for k, n in p_incl.items() if 100.0 * n / p_total >= THRESHOLD}
    keys |= {k for k, n in v_incl.items() if 100.0 * n / v_total >= THRESHOLD}
    rows = []
    for k in keys:
        pi, pe = 100.0 * p_incl.get(k, 0) / p_total, 100.0 * p_excl.get(k, 0) / p_total
        vi, ve = 100.0 * v_incl.get(k, 0) / v_total, 100.0 * v_excl.get(k, 0) / v_total
        rows.append({"function": functions.display(k), "module": k[0], "perf_inclusive": pi, "perf_exclusive": pe,
                     "vprof_inclusive": vi, "vprof_exclusive": ve,
                     "pass": abs(vi - pi) <= TOLERANCE and abs(ve - pe) <= TOLERANCE})
    rows.sort(key=lambda r: (-r["perf_inclusive"], -r["vprof_inclusive"]))
    return {"program": name, "pid": p.pid, "perf_samples": p_total, "perf_lost_chunks": perf_lost,
            "perf_data_mib": data_bytes / 2**20, "vprof_samples": v_total,
            "vprof_lost": status["samples_lost"] - status_before["samples_lost"],
            "vprof_truncated": status["stacks_truncated"] - status_before["stacks_truncated"],
            "perf_reach_start": reach_entry(p_stacks, entry), "vprof_reach_start": reach_entry(v_stacks, entry),
            "report_checked": checked, "report_differ": [(functions.display(k), rs) for k, rs in differ],
            "rows": rows}


def print_result(walk, res):
    print(f"\n### {res['program']}: {PROGRAMS[res['program']][0]}, {WALK_TITLES[walk]}\n")
    print(f"perf: {res['perf_samples']} samples, {res['perf_lost_chunks']} chunks lost, "
          f"{res['perf_data_mib']:.0f} MiB of data, {res['perf_reach_start']:.1f}% of stacks reach the entry point "
          "(_start); "
          f"vprof: {res['vprof_samples']} samples, {res['vprof_lost']} lost, {res['vprof_truncated']} truncated, "
          f"{res['vprof_reach_start']:.1f}% reach it. vprof's functions table agrees with its stacks on "
          f"{res['report_checked'] - len(res['report_differ'])} of {res['report_checked']} functions.\n")
    print("| function | module | perf incl | perf excl | vprof incl | vprof excl | diff incl | diff excl | |")
    print("| --- | --- | ---: | ---: | ---: | ---: | ---: | ---: | --- |")
    for r in res["rows"]:
        print(f"| {r['function']} | {r['module']} | {r['perf_inclusive']:.2f} | {r['perf_exclusive']:.2f} | "
              f"{r['vprof_inclusive']:.2f} | {r['vprof_exclusive']:.2f} | "
              f"{r['vprof_inclusive'] - r['perf_inclusive']:+.2f} | "
              f"{r['vprof_exclusive'] - r['perf_exclusive']:+.2f} | {'PASS' if r['pass'] else 'FAIL'} |")
    for name, rs in res["report_differ"]:
        print(f"\nvprof's table and stacks differ for {name}: {rs}")
    sys.stdout.flush()


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("build", nargs="?", default="build")
    parser.add_argument("--seconds", type=float, default=10.0)
    parser.add_argument("--warmup", type=float, default=2.0)
    parser.add_argument("--programs", default="python,xz")
    parser.add_argument("--walks", default="tables,fp")
    parser.add_argument("--json", help="write every row there")
    args = parser.parse_args()
    vprof_env = bench_env.setup(os.path.abspath(args.build))
    vprof_env.require_bpf_or_skip()
    if subprocess.run(["perf", "--version"], capture_output=True).returncode != 0:
        sys.exit("unwind-vs-perf: needs perf")
    with open("/proc/sys/kernel/perf_event_max_sample_rate") as f:
        rate_before = f.read().strip()
    print(f"{FREQUENCY} Hz, {args.seconds:g} s after a {args.warmup:g} s warm-up; a row for every function with "
          f"{THRESHOLD:g}% inclusive in perf or vprof, PASS within {TOLERANCE:g} points; MODULE+0xADDR is a "
          "function without a symbol in its file (perf's [unknown]), at the start of its FDE.")
    failed = 0
    results = {}
    with tempfile.TemporaryDirectory(prefix="vprof-unwind-perf-", dir="/var/tmp") as tmp:
        for walk in args.walks.split(","):
            env = vprof_env.start_env_or_skip(frequency=FREQUENCY, extra_args=WALKS[walk])
            try:
                for name in args.programs.split(","):
                    res = profile(env, name, args, tmp)
                    results.setdefault(walk, []).append(res)
                    print_result(walk, res)
                    if walk == "tables":
                        failed += sum(1 for r in res["rows"] if not r["pass"])
            finally:
                problems = env.stop()
            if problems:
                sys.exit("\n".join(problems))
    with open("/proc/sys/kernel/perf_event_max_sample_rate") as f:
        rate_after = f.read().strip()
    print(f"\nkernel.perf_event_max_sample_rate: {rate_before} before, {rate_after} after")
    print(f"unwind-vs-perf: {failed} rows of the walk by the tables beyond {TOLERANCE} points")
    if args.json:
        with open(args.json, "w") as f:
            json.dump(results, f, indent=2)
    sys.exit(1 if failed else 0)


if __name__ == "__main__":
    main()
