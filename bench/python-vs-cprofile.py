#!/usr/bin/env python3
# SPDX-License-Identifier: LGPL-2.1-or-later
"""vprof's top Python functions against the interpreter's own cProfile on a real program (issue 26's closing
note): Debian's /usr/bin/python3.11 -m compileall -f -q (mostly C: the compiler, marshal, system calls) or -m
tabnanny (pure Python: tokenize) over a copy of the standard library's json, email, http and xml packages, PASSES
times. Once attached by vprof (999 Hz, the program running; `vprofctl --json report PID
--source` after SECONDS, then detached and killed), once whole under `python3.11 -m cProfile -o FILE`, read with
pstats (the figures `-s tottime` prints). A function is the same in both by its file and first line (vprof's
SOURCE column, cProfile's key), so the names may differ (vprof shows co_qualname, cProfile co_name). Prints a
table of the top N Python functions of either by exclusive samples (vprof) and tottime (cProfile), with their
ranks among the Python functions of each. cProfile's built-ins (C functions) are left out: in vprof they are
native callee frames with exclusive time of their own, so a Python function's exclusive is its bytecode's time in
both. cProfile counts every call and slows small functions most; only the ranking of the top few is expected
to agree.

Usage (root): python-vs-cprofile.py BUILD_DIR [--program compileall|tabnanny] [--passes N] [--seconds S] [--top N]"""
import argparse
import os
import pstats
import shutil
import subprocess
import tempfile
import time

import bench_env

PYTHON = "/usr/bin/python3.11"
PACKAGES = ("json", "email", "http", "xml")
STDLIB = "/usr/lib/python3.11"
# Each program's options, and its passes over the packages by default (some 13 to 20 s on this machine, unprofiled).
PROGRAMS = {"compileall": (["-m", "compileall", "-f", "-q"], 100), "tabnanny": (["-m", "tabnanny"], 100)}


def real_file(module):
    """The file of a code object's co_filename; a frozen module (<frozen posixpath>) is the stdlib file it was
    frozen from."""
    if module.startswith("<frozen ") and module.endswith(">"):
        return os.path.join(STDLIB, *module[8:-1].split(".")) + ".py"
    return os.path.normpath(module)


def vprof_run(vprof_env, argv, seconds):
    """{(file, line): (name, exclusive samples)} of the program's Python functions, and the total samples."""
    env = vprof_env.start_env_or_skip(frequency=999)
    try:
        p = subprocess.Popen(argv, stdout=subprocess.DEVNULL)
        env.children.append(p)
        time.sleep(0.5)
        assert env.ctl("attach", p.pid).returncode == 0
        time.sleep(seconds)
        report = env.ctl_json("report", p.pid, "--source")
        assert p.poll() is None, "the program ended before the report: give it more --passes"
        env.ctl("detach", p.pid)  # before it ends: no record drained after its code objects are gone
        p.kill()
        p.wait()
    finally:
        env.stop()
    rows = {}
    for r in report["functions"]:
        source = r.get("source") or ""
        if not (r["module"].endswith(".py") or r["module"].startswith("<")) or ":" not in source:
            continue
        file, _, line = source.rpartition(":")
        rows[(real_file(file), int(line))] = (r["function"], r["exclusive"])
    return rows, report["total_samples"]


def cprofile_run(argv, out):
    """{(file, line): (name, tottime seconds, calls)} of the program's Python functions, and the total time."""
    subprocess.run([PYTHON, "-m", "cProfile", "-o", out] + argv[1:], stdout=subprocess.DEVNULL, check=True)
    stats = pstats.Stats(out).stats
    rows = {}
    for (file, line, name), (_, calls, tottime, _, _) in stats.items():
        if file == "~":  # a built-in: a C function
            continue
        rows[(real_file(file), line)] = (name, tottime, calls)
    return rows, sum(v[2] for v in stats.values())


def ranks(rows, key):
    return {k: i + 1 for i, k in enumerate(sorted(rows, key=lambda k: -key(rows[k])))}


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("build")
    parser.add_argument("--program", choices=sorted(PROGRAMS), default="compileall")
    parser.add_argument("--passes", type=int)
    parser.add_argument("--seconds", type=float, default=10)
    parser.add_argument("--top", type=int, default=10)
    a = parser.parse_args()
    vprof_env = bench_env.setup(os.path.abspath(a.build))
    vprof_env.require_bpf_or_skip()
    tmp = tempfile.mkdtemp(prefix="vprof-cprofile-")
    try:
        lib = os.path.join(tmp, "lib")
        for name in PACKAGES:
            shutil.copytree(os.path.join(STDLIB, name), os.path.join(lib, name))
        options, passes = PROGRAMS[a.program]
        passes = a.passes or passes
        argv = [PYTHON] + options + [lib] * passes
        shown = f"{PYTHON} {' '.join(options)} {lib} (x{passes})"
        vp, vp_total = vprof_run(vprof_env, argv, a.seconds)
        cp, cp_total = cprofile_run(argv, os.path.join(tmp, "compileall.prof"))
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    vp_rank = ranks(vp, lambda v: v[1])
    cp_rank = ranks(cp, lambda v: v[1])
    print(f"program: {shown}; copies of {', '.join(PACKAGES)}")
    print(f"vprof: attached once running, 999 Hz, `vprofctl --json report PID --source` after {a.seconds:g} s: "
          f"{vp_total} samples, {len(vp)} Python functions, {sum(v[1] for v in vp.values())} samples exclusive in "
          "them (the rest in their C callees)")
    print(f"cProfile: `{PYTHON} -m cProfile -o FILE {' '.join(options)} ...` (the -s tottime figures, by pstats): "
          f"{cp_total:.2f} s of tottime in all, {len(cp)} Python functions, "
          f"{sum(v[1] for v in cp.values()):.2f} s in them")
    top = [k for k in sorted(vp_rank, key=vp_rank.get)[:a.top]]
    top += [k for k in sorted(cp_rank, key=cp_rank.get)[:a.top] if k not in top]
    vp_python = sum(v[1] for v in vp.values())
    cp_python = sum(v[1] for v in cp.values())
    print()
    print("| function (vprof's name) | file:line | vprof rank | vprof exclusive % of Python | cProfile rank | "
          "tottime % of Python | calls |")
    print("| --- | --- | --- | --- | --- | --- | --- |")
    for k in top:
        name = vp[k][0] if k in vp else cp[k][0]
        where = f"{os.path.relpath(k[0], STDLIB) if k[0].startswith(STDLIB) else os.path.basename(k[0])}:{k[1]}"
        v = f"{vp_rank[k]} | {100 * vp[k][1] / vp_python:.1f}" if k in vp else "- | -"
        c = f"{cp_rank[k]} | {100 * cp[k][1] / cp_python:.1f} | {cp[k][2]}" if k in cp else "- | - | -"
        print(f"| `{name}` | {where} | {v} | {c} |")
    both = [k for k in sorted(vp_rank, key=vp_rank.get)[:a.top] if cp_rank.get(k, a.top + 1) <= a.top]
    print(f"\n{len(both)} of vprof's top {a.top} are in cProfile's top {a.top}; "
          f"vprof's first 3 at cProfile's ranks {[cp_rank.get(k) for k in sorted(vp_rank, key=vp_rank.get)[:3]]}")


if __name__ == "__main__":
    main()
