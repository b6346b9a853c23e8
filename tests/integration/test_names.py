#!/usr/bin/env python3
# SPDX-License-Identifier: LGPL-2.1-or-later
"""Names that hold on real hosts: a C++ method and Rust (v0) functions demangled (with their mangled names in the JSON), JIT code named by
its perf map file, and the vDSO named from the target's own image; kernel frames carry their module."""
import os
import subprocess
import sys
import tempfile
import unittest

import vprof_env

ENV = None
SECONDS = 4


def profile(binary, seconds=SECONDS):
    """Attach to a fresh run of binary, let it work, and return its function report (JSON)."""
    p = ENV.spawn_demo("--seconds", seconds, binary=os.environ[binary])
    r = ENV.ctl("attach", p.pid)
    assert r.returncode == 0, r.stderr
    ENV.go(p)
    rc = p.wait(60)
    if rc == 77:
        raise unittest.SkipTest(f"{binary} does not run on this machine")
    assert rc == 0, f"{binary} exited with {rc}"
    report = ENV.ctl_json("report", p.pid)
    ENV.ctl("detach", p.pid)
    return report


def hottest(report):
    return max(report["functions"], key=lambda r: r["exclusive"])


def vdso_functions():
    """(name, start, size) of the functions this kernel's vDSO exports, from this process's own image of it."""
    with open("/proc/self/maps") as f:
        start, end = next(tuple(int(x, 16) for x in line.split()[0].split("-"))
                          for line in f if line.rstrip().endswith("[vdso]"))
    with open("/proc/self/mem", "rb") as f:
        f.seek(start)
        image = f.read(end - start)
    with tempfile.NamedTemporaryFile(suffix=".so") as f:
        f.write(image)
        f.flush()
        out = subprocess.run(["readelf", "-W", "--dyn-syms", f.name], capture_output=True, text=True,
                             check=True).stdout
    functions = []
    for line in out.splitlines():
        fields = line.split()
        if len(fields) >= 8 and fields[3] == "FUNC":
            functions.append((fields[7].split("@")[0], int(fields[1], 16), int(fields[2], 0)))
    return functions


class Names(vprof_env.TestCase):
    def test_cxx_method_demangled_with_mangled_name_in_json(self):
        report = profile("VPROF_CXX")
        rows = {r["function"]: r for r in report["functions"]}
        name = "vprof_names::Spinner<int>::spin(int)"
        self.assertIn(name, rows, f"functions: {list(rows)[:10]}")
        row = rows[name]
        self.assertEqual(row["module"], "vprof-cxx")
        self.assertEqual(row["mangled"], "_ZN11vprof_names7SpinnerIiE4spinEi")
        self.assertGreater(row["exclusive_percent"], 80.0, row)
        # C names are not mangled and carry no such key.
        self.assertNotIn("mangled", rows["main"])
        print(f"\nnames: {name} {row['exclusive_percent']:.1f}% exclusive, mangled {row['mangled']}",
              end="", file=sys.stderr)
        # The table shows the demangled name too.
        self.assertNotIn("_ZN11vprof_names", ENV.ctl("report", "--by", "module").stdout)

    def test_rust_v0_names_demangled(self):
        if "VPROF_RUST" not in os.environ:
            self.skipTest("rustc was not found at configure time (tools/install-deps.sh installs it)")
        report = profile("VPROF_RUST")
        rows = {r["function"]: r for r in report["functions"]}
        spin = "<vprof_rust::work::Worker>::spin"
        churn = "vprof_rust::work::churn::<u32>"
        self.assertIn(spin, rows, f"functions: {list(rows)[:10]}")
        self.assertEqual(rows[spin]["module"], "vprof-rust")
        self.assertTrue(rows[spin]["mangled"].startswith("_RNv"), rows[spin])
        # Inclusive: the core functions rustc inlined into it (wrapping arithmetic) are frames of their own
        # (COUNTING.md), with some of its exclusive samples.
        self.assertGreater(rows[spin]["inclusive_percent"], 80.0, rows[spin])
        # The generic caller is on every one of those stacks.
        self.assertIn(churn, rows, f"functions: {list(rows)[:10]}")
        self.assertGreaterEqual(rows[churn]["inclusive"], rows[spin]["inclusive"])
        print(f"\nnames: {spin} {rows[spin]['inclusive_percent']:.1f}% inclusive, mangled {rows[spin]['mangled']}",
              end="", file=sys.stderr)

    def test_jit_code_named_by_perf_map(self):
        report = profile("VPROF_JIT")
        rows = {r["function"]: r for r in report["functions"]}
        self.assertIn("jit_hot_loop", rows, f"functions: {list(rows)[:10]}")
        self.assertEqual(rows["jit_hot_loop"]["module"], "[anon]")
        self.assertGreater(rows["jit_hot_loop"]["exclusive_percent"], 80.0, rows["jit_hot_loop"])
        print(f"\nnames: jit_hot_loop {rows['jit_hot_loop']['exclusive_percent']:.1f}% exclusive",
              end="", file=sys.stderr)

    def test_vdso_named_from_its_image(self):
        # The truth is this kernel's vDSO itself: the same image is mapped into this process. Its exported functions
        # must name every sample inside them, and only those: code outside them (a local helper that newer
        # kernels call from clock_gettime, such as the TSC read) keeps its offset, as in perf.
        exported = vdso_functions()
        report = profile("VPROF_VDSO")
        vdso = [r for r in report["functions"] if r["module"] == "[vdso]"]
        self.assertTrue(vdso, f"no [vdso] frames in {report['functions'][:10]}")
        names = {name for name, _, _ in exported}
        named = [r for r in vdso if not r["function"].startswith("[vdso]+")]
        self.assertTrue(any("clock_gettime" in r["function"] for r in named), vdso)
        for r in named:
            self.assertIn(r["function"], names, r)
        for r in vdso:
            if r in named:
                continue
            offset = int(r["function"][len("[vdso]+"):], 16)
            inside = [name for name, start, size in exported if start <= offset < start + size]
            self.assertFalse(inside, f"{r['function']} is in {inside} but was not named")
        share = sum(r["exclusive"] for r in named) / max(1, sum(r["exclusive"] for r in vdso))
        print(f"\nnames: vDSO {[(r['function'], round(r['exclusive_percent'], 1)) for r in named]}, "
              f"{100 * share:.1f}% of its samples in exported functions", end="", file=sys.stderr)

    def test_kernel_frames_have_module(self):
        # Whatever the workloads did in the kernel: every kernel frame is in [kernel] or a [module].
        report = profile("VPROF_VDSO", seconds=1)
        for r in report["functions"]:
            if r["module"].startswith("["):
                self.assertTrue(r["module"].endswith("]"), r)


def setUpModule():
    global ENV
    ENV = vprof_env.start_module_env()


if __name__ == "__main__":
    vprof_env.main()
