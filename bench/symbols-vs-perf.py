#!/usr/bin/env python3
# SPDX-License-Identifier: LGPL-2.1-or-later
"""Does vprof name every function that perf names? Each workload runs once, profiled at the same time by a real
vprofd (private bus, attached with vprofctl) and by `perf record -g -p PID` (Debian's linux-perf). perf's top 20
functions by self time and its top 20 by time with children are compared with every function vprof names for
the same process; frames that perf only shows as a bare address do not count, and a symbol version suffix
(`clock_gettime@@GLIBC_2.17`) is not part of the name. Both sample at 999 Hz, but at their own moments: a
function perf saw in fewer than RARE samples may simply not have been sampled by vprof, so it is listed as
rare and does not count as missing.

    bench/symbols-vs-perf.py [BUILD_DIR] [SECONDS]      (as root; BUILD_DIR defaults to build)

Prints, per workload, perf's named functions and whether vprof names each; exits 1 when vprof misses one."""
import json
import os
import re
import subprocess
import sys
import tempfile
import time

TOP = 20
RARE = 3
FREQUENCY = 999


def setup_env(build):
    top = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    os.environ.update(
        VPROFD=f"{build}/daemon/vprofd", VPROFCTL=f"{build}/client/vprofctl",
        VPROF_POLICY=f"{top}/systemd/org.vprof.Profiler1.conf",
        VPROF_BUS_CONF_IN=f"{top}/tests/integration/private-bus.conf.in")
    sys.path.insert(0, f"{top}/tests/integration")


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
    ]
    for extra in sorted(os.environ.get("SYMBOLS_VS_PERF_EXTRA", "").split(":")):
        if extra:
            found.append((os.path.basename(extra.split()[0]), extra.split()))
    return found


def perf_top(data, children):
    """perf's top functions, named ones only, as (kernel?, name, samples)."""
    cmd = ["perf", "report", "--stdio", "--sort", "sym", "-i", data, "--children" if children else "--no-children"]
    out = subprocess.run(cmd, capture_output=True, text=True, timeout=120).stdout
    total = int(re.search(r"^# Samples: (\d+)", out, re.M).group(1))
    names = []
    for line in out.splitlines():
        m = re.match(r"^\s+([\d.]+)%(?:\s+[\d.]+%)?\s+\[([.k])\]\s+(.+?)\s*$", line)
        if not m:
            continue
        name = m.group(3).split("@")[0]
        if re.fullmatch(r"0x[0-9a-f]+", name):  # perf could not name it either
            continue
        names.append((m.group(2) == "k", name, max(1, round(float(m.group(1)) * total / 100))))
        if len(names) == TOP:
            break
    return names


def profile(env, name, cmd, seconds, tmp):
    p = subprocess.Popen(cmd, stdout=subprocess.DEVNULL)
    try:
        time.sleep(0.3)
        r = env.ctl("attach", p.pid)
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
    ours = {row["function"] for row in report["functions"]}
    theirs = {}
    for kernel, fn, samples in perf_top(data, False) + perf_top(data, True):
        theirs[(kernel, fn)] = max(samples, theirs.get((kernel, fn), 0))
    return report["total_samples"], theirs, ours


def main():
    build = os.path.abspath(sys.argv[1] if len(sys.argv) > 1 else "build")
    seconds = int(sys.argv[2]) if len(sys.argv) > 2 else 4
    if os.geteuid() != 0:
        sys.exit("symbols-vs-perf: needs root (BPF, perf -p on any process)")
    setup_env(build)
    import vprof_env
    env = vprof_env.VprofEnv(frequency=FREQUENCY).start()
    missing_total = 0
    results = []
    try:
        with tempfile.TemporaryDirectory(prefix="vprof-perf-") as tmp:
            for name, cmd in workloads(build, seconds):
                total, theirs, ours = profile(env, name, cmd, seconds, tmp)
                missing = [fn for (_, fn), n in theirs.items() if fn not in ours and n >= RARE]
                rare = [fn for (_, fn), n in theirs.items() if fn not in ours and n < RARE]
                missing_total += len(missing)
                results.append({"workload": name, "vprof_samples": total,
                                "perf_named": [fn for _, fn in theirs], "missing_in_vprof": missing,
                                "rare_not_in_vprof": rare})
                print(f"\n{name}: vprof {total} samples; perf's top {TOP} (self and children), named: "
                      f"{len(theirs)}, vprof names {len(theirs) - len(missing) - len(rare)}, missing "
                      f"{len(missing)}, rare {len(rare)}")
                for (kernel, fn), n in theirs.items():
                    verdict = "yes" if fn in ours else "MISSING" if n >= RARE else f"rare ({n} in perf)"
                    print(f"  {'k' if kernel else 'u'} {fn:<40} {n:>6} {verdict}")
    finally:
        env.stop()
    print(f"\nsymbols-vs-perf: {sum(len(r['perf_named']) for r in results)} functions named by perf, "
          f"{missing_total} not named by vprof")
    if os.environ.get("SYMBOLS_VS_PERF_JSON"):
        with open(os.environ["SYMBOLS_VS_PERF_JSON"], "w") as f:
            json.dump(results, f, indent=2)
    sys.exit(1 if missing_total else 0)


if __name__ == "__main__":
    main()
