#!/usr/bin/env python3
# SPDX-License-Identifier: LGPL-2.1-or-later
"""Symbols of a stripped binary from its separate debug file, through the real daemon: vprof-demo stripped of
its .symtab, its debug file under a private debug directory (vprofd --debug-directory) by build-id, and by the
.gnu_debuglink next to a copy of the binary."""
import os
import re
import shutil
import subprocess
import sys
import tempfile
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import vprof_env  # noqa: E402

ENV = None
DEBUG_DIR = tempfile.mkdtemp(prefix="vprof-debugdir-")


def build_id(path):
    out = subprocess.run(["readelf", "-n", path], capture_output=True, text=True, check=True).stdout
    return re.search(r"Build ID: ([0-9a-f]+)", out).group(1)


def install_debug_file():
    """DEBUG_DIR/.build-id/xx/rest.debug, as a -dbgsym package lays it out."""
    bid = build_id(os.environ["VPROF_DEMO_STRIPPED"])
    path = os.path.join(DEBUG_DIR, ".build-id", bid[:2], bid[2:] + ".debug")
    os.makedirs(os.path.dirname(path))
    shutil.copy(os.environ["VPROF_DEMO_DEBUG"], path)


def profile(binary):
    """Run binary (vprof-demo) attached for a few seconds; its report by function."""
    demo = ENV.spawn_demo("--seconds", 3, binary=binary)
    r = ENV.ctl("attach", demo.pid)
    assert r.returncode == 0, r.stderr
    ENV.go(demo)
    demo.wait(60)
    return ENV.ctl_json("report", demo.pid, "--by", "function")


class StrippedBinary(unittest.TestCase):
    def check_named(self, report, module):
        functions = report["functions"]
        self.assertGreater(report["total_samples"], 50)
        self.assertEqual(functions[0]["function"], "work_alpha", functions[:5])
        self.assertEqual(functions[0]["module"], module)
        names = {r["function"] for r in functions if r["module"] == module}
        for name in ("work_beta", "work_gamma", "run_round", "main"):
            self.assertIn(name, names)
        print(f"\ndebuginfo: {module}: {functions[0]['function']} "
              f"{functions[0]['exclusive_percent']:.1f}% of {report['total_samples']} samples",
              end="", file=sys.stderr)

    def test_by_build_id(self):
        self.check_named(profile(os.environ["VPROF_DEMO_STRIPPED"]), "vprof-demo-stripped")

    def test_by_debuglink_next_to_the_binary(self):
        work = os.path.join(ENV.tmp, "linked")
        os.makedirs(work)
        debug = os.path.join(work, "vprof-demo.debug")
        shutil.copy(os.environ["VPROF_DEMO_DEBUG"], debug)
        binary = os.path.join(work, "vprof-demo-linked")
        # The link alone would do, but the build-id would find the debug file first: another build-id keeps
        # this case to the debuglink (the CRC is of the debug file, which does not change).
        subprocess.run(["objcopy", "--remove-section", ".note.gnu.build-id", f"--add-gnu-debuglink={debug}",
                        os.environ["VPROF_DEMO_STRIPPED"], binary], check=True)
        os.chmod(binary, 0o755)
        self.check_named(profile(binary), "vprof-demo-linked")

    def test_unnamed_without_debug_file(self):
        work = os.path.join(ENV.tmp, "bare")
        os.makedirs(work)
        binary = os.path.join(work, "vprof-demo-bare")
        subprocess.run(["objcopy", "--remove-section", ".note.gnu.build-id", os.environ["VPROF_DEMO_STRIPPED"],
                        binary], check=True)
        os.chmod(binary, 0o755)
        report = profile(binary)
        names = {r["function"] for r in report["functions"]}
        self.assertNotIn("work_alpha", names)


if __name__ == "__main__":
    install_debug_file()
    try:
        vprof_env.run_tests(sys.modules[__name__], extra_args=[f"--debug-directory={DEBUG_DIR}"])
    finally:
        shutil.rmtree(DEBUG_DIR, ignore_errors=True)
