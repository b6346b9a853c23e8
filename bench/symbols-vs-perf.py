#!/usr/bin/env python3
# SPDX-License-Identifier: LGPL-2.1-or-later
"""Does vprof name every function that perf names? Each workload runs once, profiled at the same time by a real
vprofd (private bus, attached with vprofctl) and by `perf record -g -p PID` (Debian's linux-perf). perf's top 20
functions by self time and its top 20 by time with children are compared with every function vprof names for
the same process; frames that perf only shows as a bare address do not count, and a symbol version suffix
(`clock_gettime@@GLIBC_2.17`) is not part of the name. Both sample at 999 Hz, but at their own moments: a
function perf saw in fewer than RARE samples may simply not have been sampled by vprof, so it is listed as
rare and does not count as missing. Several names for one address (`write`, `__libc_write`, `__GI___libc_write`)
are one function: a name perf chose that vprof shows under another of its aliases counts as named, and is
listed with the alias.

    bench/symbols-vs-perf.py [BUILD_DIR] [SECONDS]      (as root; BUILD_DIR defaults to build)

Prints, per workload, perf's named functions and whether vprof names each; exits 1 when vprof misses one."""
import json
import os
import re
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import bench_env  # noqa: E402

TOP = 20
RARE = 3
FREQUENCY = 999


def workloads(build, seconds):
    """(name, command, perf's symbol filter): processes with user, libc and kernel code."""
    w = f"{build}/tests/workloads"
    run = str(seconds + 2)
    found = [
        ("vprof-demo, 2 threads", [f"{w}/vprof-demo", "--threads", "2", "--seconds", run]),
        ("vprof-wait (sleeps and reads)", [f"{w}/vprof-wait", "--seconds", run]),
        ("vprof-wait --syscalls (kernel)", [f"{w}/vprof-wait", "--syscalls", "--seconds", run]),
        ("vprof-demo with a dlopen()ed plugin", [f"{w}/vprof-demo", "--seconds", run,
                                                 f"--plugin={w}/libvprof-plugin.so"]),
        # Its debug file is where vprofd's --debug-directory points (see main()); perf finds it in its build-id
        # cache, as vprof-demo's own.
        ("vprof-demo, stripped, debug file by build-id", [f"{w}/vprof-demo-stripped", "--seconds", run]),
        ("vprof-cxx (C++ template method)", [f"{w}/vprof-cxx", "--seconds", run]),
        ("vprof-jit (perf map file)", [f"{w}/vprof-jit", "--seconds", run]),
        ("vprof-vdso (clock_gettime)", [f"{w}/vprof-vdso", "--seconds", run]),
        ("fixture-segments (two executable segments, and a library's)",
         [f"{build}/tests/fixtures/fixture-segments", "--seconds", run]),
    ]
    if os.path.exists(f"{w}/vprof-rust"):
        found.append(("vprof-rust (v0 mangling)", [f"{w}/vprof-rust", "--seconds", run]))
    for extra in sorted(os.environ.get("SYMBOLS_VS_PERF_EXTRA", "").split(":")):
        if extra:
            found.append((os.path.basename(extra.split()[0]), extra.split()))
    return found


def perf_top(data, children):
    """perf's top functions, named ones only, as (kernel?, name, samples, dso)."""
    cmd = ["perf", "report", "--stdio", "--sort", "dso,sym", "-i", data,
           "--children" if children else "--no-children"]
    out = subprocess.run(cmd, capture_output=True, text=True, timeout=120).stdout
    m = re.search(r"^# Samples: (\d+)([KM]?)", out, re.M)
    total = int(m.group(1)) * {"": 1, "K": 1000, "M": 1000000}[m.group(2)]
    names = []
    for line in out.splitlines():
        m = re.match(r"^\s+([\d.]+)%(?:\s+[\d.]+%)?\s+(\S+)\s+\[([.k])\]\s+(.+?)\s*$", line)
        if not m:
            continue
        name = m.group(4).split("@")[0]
        if re.fullmatch(r"0x[0-9a-f]+", name):  # perf could not name it either
            continue
        names.append((m.group(3) == "k", name, max(1, round(float(m.group(1)) * total / 100)), m.group(2)))
        if len(names) == TOP:
            break
    return names


def without_parameters(name):
    """ns::Class<int>::method(int) -> ns::Class<int>::method."""
    if not name.endswith(")"):
        return name
    depth = 0
    for i in range(len(name) - 1, -1, -1):
        depth += {")": 1, "(": -1}.get(name[i], 0)
        if depth == 0:
            return name[:i] if i > 0 else name
    return name


def aliases(dso_paths, name):
    """The other names of name's address in the object (its .symtab, from its debug file when stripped)."""
    found = set()
    for path in dso_paths:
        out = subprocess.run(["nm", "--defined-only", path], capture_output=True, text=True).stdout
        table = [line.split() for line in out.splitlines() if len(line.split()) == 3]
        addrs = {a for a, _, n in table if n.split("@")[0] == name}
        found |= {n.split("@")[0] for a, _, n in table if a in addrs}
    return found - {name}


def kernel_aliases(name):
    """The other names of a kernel function's address in /proc/kallsyms."""
    with open("/proc/kallsyms") as f:
        table = [line.split()[:3] for line in f]
    addrs = {a for a, _, n in table if n == name}
    return {n for a, _, n in table if a in addrs} - {name}


def object_files(pid_maps, dso):
    """The mapped file named dso and its debug file by build-id, when there is one."""
    files = sorted({line.split()[-1] for line in pid_maps if line.split()[-1].endswith("/" + dso)})
    for f in list(files):
        note = subprocess.run(["readelf", "-n", f], capture_output=True, text=True).stdout
        m = re.search(r"Build ID: ([0-9a-f]{2})([0-9a-f]+)", note)
        if m and os.path.exists(f"/usr/lib/debug/.build-id/{m.group(1)}/{m.group(2)}.debug"):
            files.append(f"/usr/lib/debug/.build-id/{m.group(1)}/{m.group(2)}.debug")
    return files


def profile(env, name, cmd, seconds, tmp):
    p = subprocess.Popen(cmd, stdout=subprocess.DEVNULL)
    try:
        time.sleep(0.3)
        with open(f"/proc/{p.pid}/maps") as f:
            maps = [line for line in f.read().splitlines() if "/" in line]
        r = env.ctl("attach", p.pid)
        time.sleep(0.5)  # a dlopen()ed plugin is mapped once the workload runs
        with open(f"/proc/{p.pid}/maps") as f:
            maps += [line for line in f.read().splitlines() if "/" in line]
        if r.returncode != 0:
            raise RuntimeError(f"vprofctl attach {p.pid}: {r.stderr}")
        data = os.path.join(tmp, f"perf-{p.pid}.data")
        subprocess.run(["perf", "record", "-q", "-g", "-F", str(FREQUENCY), "-p", str(p.pid), "-o", data, "--", "sleep",
                        str(seconds)], capture_output=True, timeout=seconds + 60, check=True)
        report = env.ctl_json("report", p.pid)
        env.ctl("detach", p.pid)
    finally:
        p.kill()
        p.wait()
    # perf shows C++ names without their parameters: compare without them.
    ours = {without_parameters(row["function"]) for row in report["functions"]}
    theirs, dsos = {}, {}
    for kernel, fn, samples, dso in perf_top(data, False) + perf_top(data, True):
        theirs[(kernel, fn)] = max(samples, theirs.get((kernel, fn), 0))
        dsos[fn] = dso
    # A name perf chose among aliases: vprof names the function if it shows any of them.
    alias_of = {}
    for (kernel, fn) in theirs:
        if fn in ours:
            continue
        if kernel:
            shown = kernel_aliases(fn) & ours
        elif dsos[fn] == "[vdso]":
            # The vDSO exports each function twice, as __vdso_NAME and NAME, at one address.
            shown = {fn.removeprefix("__vdso_"), "__vdso_" + fn} & ours
        else:
            shown = aliases(object_files(maps, dsos[fn]), fn) & ours
        if shown:
            alias_of[fn] = sorted(shown)[0]
    return report["total_samples"], theirs, ours, alias_of


def main():
    build = os.path.abspath(sys.argv[1] if len(sys.argv) > 1 else "build")
    seconds = int(sys.argv[2]) if len(sys.argv) > 2 else 4
    if os.geteuid() != 0:
        sys.exit("symbols-vs-perf: needs root (BPF, perf -p on any process)")
    vprof_env = bench_env.setup(build)
    debug_dir = tempfile.mkdtemp(prefix="vprof-debug-")
    note = subprocess.run(["readelf", "-n", f"{build}/tests/workloads/vprof-demo.debug"], capture_output=True,
                          text=True).stdout
    m = re.search(r"Build ID: ([0-9a-f]{2})([0-9a-f]+)", note)
    os.makedirs(f"{debug_dir}/.build-id/{m.group(1)}")
    os.symlink(f"{build}/tests/workloads/vprof-demo.debug", f"{debug_dir}/.build-id/{m.group(1)}/{m.group(2)}.debug")
    env = vprof_env.VprofEnv(frequency=FREQUENCY, extra_args=["--debug-directory", f"/usr/lib/debug:{debug_dir}"]).start()
    missing_total = 0
    results = []
    try:
        with tempfile.TemporaryDirectory(prefix="vprof-perf-") as tmp:
            for name, cmd in workloads(build, seconds):
                total, theirs, ours, alias_of = profile(env, name, cmd, seconds, tmp)
                named = ours | set(alias_of)
                missing = [fn for (_, fn), n in theirs.items() if fn not in named and n >= RARE]
                rare = [fn for (_, fn), n in theirs.items() if fn not in named and n < RARE]
                missing_total += len(missing)
                results.append({"workload": name, "vprof_samples": total,
                                "perf_named": [fn for _, fn in theirs], "missing_in_vprof": missing,
                                "rare_not_in_vprof": rare, "named_as_alias": alias_of})
                print(f"\n{name}: vprof {total} samples; perf's top {TOP} (self and children), named: "
                      f"{len(theirs)}, vprof names {len(theirs) - len(missing) - len(rare)}, missing "
                      f"{len(missing)}, rare {len(rare)}")
                for (kernel, fn), n in theirs.items():
                    verdict = ("yes" if fn in ours else f"yes, as {alias_of[fn]}" if fn in alias_of
                               else "MISSING" if n >= RARE else f"rare ({n} in perf)")
                    print(f"  {'k' if kernel else 'u'} {fn:<40} {n:>6} {verdict}")
    finally:
        env.stop()
        subprocess.run(["rm", "-rf", debug_dir])
    print(f"\nsymbols-vs-perf: {sum(len(r['perf_named']) for r in results)} functions named by perf, "
          f"{missing_total} not named by vprof")
    if os.environ.get("SYMBOLS_VS_PERF_JSON"):
        with open(os.environ["SYMBOLS_VS_PERF_JSON"], "w") as f:
            json.dump(results, f, indent=2)
    sys.exit(1 if missing_total else 0)


if __name__ == "__main__":
    main()
