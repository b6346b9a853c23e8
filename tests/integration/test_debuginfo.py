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

import vprof_env

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


def profile(binary, by="function"):
    """Run binary (vprof-demo) attached for a few seconds; its report by function (or by module)."""
    demo = ENV.spawn_demo("--seconds", 3, binary=binary)
    r = ENV.ctl("attach", demo.pid)
    assert r.returncode == 0, r.stderr
    ENV.go(demo)
    demo.wait(60)
    return ENV.ctl_json("report", demo.pid, "--by", by)


class StrippedBinary(vprof_env.TestCase):
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

    def test_symbol_quality_by_module(self):
        """report --by module says where each module's names come from and how much of it stayed unnamed."""
        named = {m["module"]: m for m in profile(os.environ["VPROF_DEMO_STRIPPED"], "module")["modules"]}
        quality = named["vprof-demo-stripped"]["symbols"]
        self.assertEqual(quality["source"], "build-id")
        self.assertTrue(quality["debug_file"].startswith(DEBUG_DIR), quality)
        self.assertEqual(quality["unnamed_samples"], 0)
        self.assertGreater(quality["symbols"], 5)
        self.assertEqual(named["libc.so.6"]["symbols"]["build_id"], build_id(libc_path()))

        # Stripped, and no build-id to find a debug file by.
        work = os.path.join(ENV.tmp, "quality")
        os.makedirs(work)
        bare = os.path.join(work, "vprof-demo-nodebug")
        subprocess.run(["objcopy", "--remove-section", ".note.gnu.build-id", os.environ["VPROF_DEMO_STRIPPED"],
                        bare], check=True)
        os.chmod(bare, 0o755)
        demo = ENV.spawn_demo("--seconds", 3, binary=bare)
        self.assertEqual(ENV.ctl("attach", demo.pid).returncode, 0)
        ENV.go(demo)
        demo.wait(60)
        modules = {m["module"]: m for m in ENV.ctl_json("report", demo.pid, "--by", "module")["modules"]}
        text = ENV.ctl("report", demo.pid, "--by", "module").stdout
        row = modules["vprof-demo-nodebug"]
        self.assertEqual(row["symbols"]["source"], "none")
        self.assertIsNone(row["symbols"]["build_id"])
        self.assertEqual(row["symbols"]["unnamed_samples"], row["exclusive"])
        self.assertIn("SYMBOLS", text)
        self.assertIn("vprof-demo-nodebug: 100.0% of its own samples in unnamed code", text)
        print(f"\ndebuginfo: by module: {quality['source']}, {quality['symbols']} symbols from "
              f"{quality['debug_file']}; without a debug file: {row['symbols']['source']}, "
              f"{row['symbols']['unnamed_samples']} of {row['exclusive']} own samples unnamed",
              end="", file=sys.stderr)


def libc_path():
    with open("/proc/self/maps") as f:
        return next(line.split()[-1] for line in f if "/libc.so" in line)


def setUpModule():
    global ENV
    unittest.addModuleCleanup(shutil.rmtree, DEBUG_DIR, ignore_errors=True)
    install_debug_file()
    ENV = vprof_env.start_module_env(extra_args=[f"--debug-directory={DEBUG_DIR}"])


if __name__ == "__main__":
    vprof_env.main()
