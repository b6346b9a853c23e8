#!/usr/bin/env python3
# SPDX-License-Identifier: LGPL-2.1-or-later
"""Code in a second executable PT_LOAD segment, at another distance from its file offset than the first
(tests/fixtures/two-text-segments.ld), through the real daemon: fixture-segments spends its time in its own
.text.far and in that of libvprof-segments.so, and the report names both hot functions with their modules."""
import os
import sys

import vprof_env

ENV = None


class SecondTextSegment(vprof_env.TestCase):
    @classmethod
    def setUpClass(cls):
        p = ENV.spawn_demo("--seconds", 4, binary=os.environ["VPROF_FIXTURE_SEGMENTS"])
        r = ENV.ctl("attach", p.pid)
        assert r.returncode == 0, r.stderr
        ENV.go(p)
        assert p.wait(60) == 0
        cls.report = ENV.ctl_json("report", p.pid)
        cls.rows = {r["function"]: r for r in cls.report["functions"]}

    def check_hot(self, function, module):
        self.assertIn(function, self.rows, f"functions: {list(self.rows)[:10]}")
        row = self.rows[function]
        self.assertEqual(row["module"], module)
        # Half of the time each, less what the sampler and the other frames take.
        self.assertGreater(row["exclusive_percent"], 30.0, row)
        print(f"\nsegments: {function} ({module}) {row['exclusive_percent']:.1f}% exclusive",
              end="", file=sys.stderr)

    def test_executable_second_segment(self):
        self.check_hot("seg_prog_far_hot", "fixture-segments")

    def test_library_second_segment(self):
        self.check_hot("seg_lib_far_hot", "libvprof-segments.so")

    def test_no_unnamed_code_in_either_file(self):
        # A wrong bias leaves frames named "module+0x..." or by a wrong name; everything hot is named here.
        unnamed = [r for r in self.report["functions"]
                   if r["module"] in ("fixture-segments", "libvprof-segments.so") and "+0x" in r["function"]]
        self.assertEqual(unnamed, [])
        self.assertGreater(self.rows["main"]["inclusive_percent"], 90.0, self.rows["main"])


def setUpModule():
    global ENV
    ENV = vprof_env.start_module_env()


if __name__ == "__main__":
    vprof_env.main()
