#!/usr/bin/env python3
# SPDX-License-Identifier: LGPL-2.1-or-later
"""The cost of tables before samples at an attach: for python3 running a loop, and for python3 with 50 generated
libraries without frame pointers loaded (ctypes), each attached 0.3 s after it starts to a fresh vprofd (no table
known yet), --rounds times. Prints, median and worst:
  - attach: the wall time of `vprofctl attach` (the daemon asks for the table of every file of code the process
    maps before it replies, reading and hashing each file's CFI; the compile itself runs after, in slices);
  - tables: from the attach to the moment every file asked for has its table loaded, or is known to have none
    (UnwindTablesCompiled + UnwindFilesWithoutCFI + UnwindTablesFailed + UnwindTablesTooBig reach
    UnwindFilesPrefetched; each generated library has its own CFI, so no two files share a table);
  - files: how many files were asked for.

    bench/attach-tables.py [BUILD_DIR] [--rounds 5] [--libraries 50]
    (as root, after a build; needs gcc)"""
import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import bench_env  # noqa: E402

LOOP = "while True:\n    sum(range(3000))"
SETTLED = ("unwind_tables_compiled", "unwind_files_without_cfi", "unwind_tables_failed", "unwind_tables_too_big")


def generate_libraries(tmp, n):
    """n shared libraries without frame pointers, each with its own functions (its own CFI)."""
    paths = []
    for i in range(n):
        src, lib = os.path.join(tmp, f"gen{i}.c"), os.path.join(tmp, f"libgen{i}.so")
        with open(src, "w") as f:
            for j in range(20 + i):
                f.write(f"long gen{i}_f{j}(long x) {{ long s = 0; for (long k = 0; k < x; k++) s += k * {j + 1}; "
                        f"return s + {i}; }}\n")
        subprocess.run(["gcc", "-O2", "-fomit-frame-pointer", "-shared", "-fPIC", src, "-o", lib], check=True)
        paths.append(lib)
    return paths


def one_round(vprof_env, cmd):
    env = vprof_env.VprofEnv(frequency=999).start()
    try:
        p = subprocess.Popen(cmd)
        env.children.append(p)
        time.sleep(0.3)
        start = time.monotonic()
        r = env.ctl("attach", p.pid)
        attached = time.monotonic()
        if r.returncode != 0:
            raise RuntimeError(r.stderr)
        while time.monotonic() - start < 5:  # a daemon without the counters (an older build): 5 s
            s = env.ctl_json("status")
            if s["unwind_files_prefetched"] > 0 and sum(s[k] for k in SETTLED) >= s["unwind_files_prefetched"]:
                break
        ready = time.monotonic()
        p.kill()
        p.wait(30)
        return attached - start, ready - start, s["unwind_files_prefetched"]
    finally:
        env.stop()


def report(name, rounds):
    attach = [r[0] * 1000 for r in rounds]
    tables = [r[1] * 1000 for r in rounds]
    print(f"{name:<28} attach {statistics.median(attach):7.1f} ms median, {max(attach):7.1f} worst; "
          f"tables {statistics.median(tables):7.1f} ms median, {max(tables):7.1f} worst; "
          f"{rounds[0][2]} files", flush=True)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("build", nargs="?", default="build")
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--libraries", type=int, default=50)
    args = ap.parse_args()
    if os.geteuid() != 0:
        sys.exit("attach-tables: needs root")
    vprof_env = bench_env.setup(os.path.abspath(args.build))
    print("(tables: until status shows every file asked for settled; each status read is a vprofctl run, so the "
          "figure is an upper bound by a few ms)")
    report("python3", [one_round(vprof_env, ["/usr/bin/python3", "-c", LOOP]) for _ in range(args.rounds)])
    with tempfile.TemporaryDirectory(prefix="vprof-attach-tables-") as tmp:
        libs = generate_libraries(tmp, args.libraries)
        code = f"import ctypes\nlibs = [ctypes.CDLL(p) for p in {libs!r}]\n{LOOP}"
        report(f"python3 + {args.libraries} libraries",
               [one_round(vprof_env, ["/usr/bin/python3", "-c", code]) for _ in range(args.rounds)])


if __name__ == "__main__":
    main()
