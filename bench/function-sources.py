#!/usr/bin/env python3
# SPDX-License-Identifier: LGPL-2.1-or-later
"""What `vprofctl report --source` costs: the daemon reads the SOURCE column on GetFunctionSources, from the DWARF
line tables of the files the functions' code is in (common/symbols/line-source.c), once per function (kept with
it after). The program is generated: FUNCTIONS functions in one C file, each called in turn, built with -g by
clang (no .debug_aranges: the units' ranges are indexed) and by gcc (with them). A fresh vprofd attaches it;
after a few seconds the report runs plain, with --source (the first call reads the line tables) and with
--source again (the sources are kept); the wall time of each is printed, with how many rows got a source.

    bench/function-sources.py [BUILD_DIR]        (as root, after a build; needs clang and gcc)"""
import os
import statistics
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import bench_env  # noqa: E402

FUNCTIONS = 2000


def generate(path):
    with open(path, "w") as f:
        for i in range(FUNCTIONS):
            f.write(f"__attribute__((noinline)) unsigned f{i}(unsigned x) {{ for (int j = 0; j < 2000; j++) "
                    f"x = x * {i % 13 + 3} + {i}; return x; }}\n")
        f.write("typedef unsigned (*fn)(unsigned);\nstatic fn all[] = {" +
                ", ".join(f"f{i}" for i in range(FUNCTIONS)) + "};\n")
        f.write("int main(void) { unsigned x = 1; for (;;) for (int i = 0; i < %d; i++) x = all[i](x); }\n"
                % FUNCTIONS)


def timed(env, *args):
    start = time.monotonic()
    r = env.ctl(*args)
    if r.returncode != 0:
        raise RuntimeError(r.stderr)
    return time.monotonic() - start, r.stdout


def run(env, binary, seconds):
    p = subprocess.Popen([binary])
    try:
        r = env.ctl("attach", p.pid)
        if r.returncode != 0:
            raise RuntimeError(r.stderr)
        time.sleep(seconds)
        p.kill()  # an exited target's tables stay still: every report counts the same rows
        p.wait()
        plain = [timed(env, "report", p.pid)[0] for _ in range(3)]
        first, _ = timed(env, "report", p.pid, "--source")
        again = [timed(env, "report", p.pid, "--source")[0] for _ in range(3)]
        rows = env.ctl_json("report", p.pid, "--source")["functions"]
    finally:
        p.kill()
        p.wait()
    return plain, first, again, rows


def main():
    build = os.path.abspath(sys.argv[1] if len(sys.argv) > 1 else "build")
    if os.geteuid() != 0:
        sys.exit("function-sources: needs root")
    vprof_env = bench_env.setup(build)
    with tempfile.TemporaryDirectory(prefix="vprof-sources-") as tmp:
        source = os.path.join(tmp, "many.c")
        generate(source)
        binaries = {}
        for cc in ("clang", "gcc"):
            binaries[cc] = os.path.join(tmp, f"many-{cc}")
            subprocess.run([cc, "-O1", "-g", "-fno-omit-frame-pointer", source, "-o", binaries[cc]], check=True)
        for cc, binary in binaries.items():
            env = vprof_env.VprofEnv(frequency=999).start()
            try:
                plain, first, again, rows = run(env, binary, 4)
            finally:
                env.stop()
            named = sum(1 for r in rows if r.get("source"))
            mine = sum(1 for r in rows if r["module"].startswith("many-"))
            print(f"{cc} -g ({FUNCTIONS} functions): {len(rows)} rows, {mine} of the program, {named} with a source")
            print(f"  report          {statistics.median(plain) * 1000:7.1f} ms (median of 3)")
            print(f"  report --source {first * 1000:7.1f} ms (first: reads the line tables)")
            print(f"  report --source {statistics.median(again) * 1000:7.1f} ms (again, median of 3: kept)")


if __name__ == "__main__":
    main()
