#!/usr/bin/env python3
# SPDX-License-Identifier: LGPL-2.1-or-later
"""Exact stacks from the first samples after an attach: vprofd compiles the unwind tables of every file of code
a target maps when it attaches, before its first sample is kept, instead of waiting for a sample to fall back in
the file, so that the stacks of code without frame pointers reach their outermost frame (_start) from the start. A program without frame
pointers (vprof-nofp) and Debian's python3 are each attached 0.3 s after they start and read 2 s later; the
exporter's flame graph of vprof-nofp, attached the same way, has one root (_start) holding every sample."""
import os
import subprocess
import time
import xml.etree.ElementTree as ET

import vprof_env
from exporter_env import Exporter

ENV = None
# The outermost frame of a whole user stack: the process's first thread's, or another thread's.
ROOTS = {"_start", "clone3", "start_thread"}
# At most this share of the samples without their outermost frame (issue 25): before the attach asked for the
# tables, 18-27% here; with the tables asked for but compiled in the background, 1-5% (the samples taken while
# they compiled); compiled before the first sample is kept, 0.00% in every run seen.
MAX_CUT_PERCENT = 1.0


def cut_share(pid):
    """The samples of pid, and the percentage of them whose stack lacks its outermost frame."""
    stacks = ENV.ctl_json("report", pid, "--by", "stack")["stacks"]
    total = sum(s["samples"] for s in stacks)
    cut_stacks = sorted((s for s in stacks if not any(f["function"] in ROOTS and not f["kernel"]
                                                      for f in s["frames"])), key=lambda s: -s["samples"])
    for s in cut_stacks[:3]:  # what they are, for the log
        print(f"\nfirst-samples: cut: {s['samples']} x {';'.join(f['function'] for f in s['frames'])}", end="")
    return total, 100.0 * sum(s["samples"] for s in cut_stacks) / max(total, 1)


def attach_late_and_read(p):
    """p attached 0.3 s after it started, read 2 s later: (samples, percentage cut), the status before and
    after."""
    time.sleep(0.3)
    before = ENV.ctl_json("status")
    r = ENV.ctl("attach", p.pid)
    assert r.returncode == 0, r.stderr
    time.sleep(2.0)
    total, cut = cut_share(p.pid)
    after = ENV.ctl_json("status")
    ENV.ctl("detach", p.pid)
    p.kill()
    p.wait(30)
    return total, cut, before, after


class FirstSamples(vprof_env.TestCase):
    def check(self, name, p):
        total, cut, before, after = attach_late_and_read(p)
        prefetched = after["unwind_files_prefetched"] - before["unwind_files_prefetched"]
        compile_ms = (after["unwind_compile_usec"] - before["unwind_compile_usec"]) / 1000
        print(f"\nfirst-samples: {name}: {total} samples, {cut:.2f}% without their outermost frame, "
              f"{prefetched} files' tables asked for at the attach, compiled in {compile_ms:.1f} ms", end="")
        self.assertGreater(total, 200)  # about 2,000 at 999 Hz, fewer on a loaded machine
        self.assertLessEqual(cut, MAX_CUT_PERCENT)
        # Its tables compiled within the attach's budget: none left to the background.
        self.assertEqual(after["unwind_attaches_unfinished"], before["unwind_attaches_unfinished"])
        self.assertRegex(ENV.ctl("status").stdout,
                         rf"files without CFI; {after['unwind_files_prefetched']} asked for before any fallback")
        return prefetched

    def test_program_without_frame_pointers(self):
        p = ENV.spawn_demo("--seconds", 30, binary=os.environ["VPROF_NOFP"])
        ENV.go(p)
        prefetched = self.check("vprof-nofp", p)
        # vprof-nofp, its library, libc, ld.so: asked for at the attach, but those another target mapped first
        # (their tables known already); no other test maps the first two.
        self.assertGreaterEqual(prefetched, 2)

    def test_python(self):
        p = subprocess.Popen(["/usr/bin/python3", "-c", "while True:\n    sum(range(3000))"])
        ENV.children.append(p)
        # python3.11 at least; libc and ld.so are known from vprof-nofp's test when it ran first.
        self.assertGreaterEqual(self.check("python3", p), 1)


SVG = "{http://www.w3.org/2000/svg}"


def flame_roots(page):
    """The root frames of the exporter's flame graph page (its inline SVG) and the total it draws: [(function,
    samples)] of the frames at the top, under the node that stands for the whole."""
    text = page.decode()
    svg = ET.fromstring(text[text.index("<svg"):text.index("</svg>") + len("</svg>")])
    frames = [g for g in svg.iter(SVG + "g") if "f" in g.get("class", "").split()]
    # Depth 0 is the whole (all samples); the stacks' outermost frames are at depth 1.
    roots = [(g.get("data-f"), int(g.get("data-n"))) for g in frames if g.get("data-d") == "1"]
    return roots, int(svg.get("data-total"))


class FlameGraphRoot(vprof_env.TestCase):
    def test_one_root_after_a_late_attach(self):
        exporter = Exporter(ENV)
        try:
            p = ENV.spawn_demo("--seconds", 30, binary=os.environ["VPROF_NOFP"])
            ENV.go(p)
            time.sleep(0.3)
            self.assertEqual(ENV.ctl("attach", p.pid).returncode, 0)
            time.sleep(2.0)
            status, _, page = exporter.get(f"/flamegraph?target={p.pid}&window=all")
            self.assertEqual(status, 200, page[:300])
            roots, total = flame_roots(page)
            print(f"\nfirst-samples: flame graph: {total} samples, roots {roots}", end="")
            self.assertGreater(total, 200)
            # One root, the process's first frame, with every sample under it: a walk cut short would be a
            # second root beside it (frames under 0.1% are not drawn, so count what _start holds, not the roots).
            self.assertEqual([name for name, _ in roots], ["_start"])
            self.assertEqual(roots[0][1], total)
            ENV.ctl("detach", p.pid)
            p.kill()
            p.wait(30)
        finally:
            problems = exporter.stop()
        self.assertEqual(problems, [])


class SteadyState(vprof_env.TestCase):
    def test_python_after_a_reset(self):
        # For comparison: the share cut once every table is loaded (the tables reset 2 s after the attach).
        p = subprocess.Popen(["/usr/bin/python3", "-c", "while True:\n    sum(range(3000))"])
        ENV.children.append(p)
        time.sleep(0.3)
        self.assertEqual(ENV.ctl("attach", p.pid).returncode, 0)
        time.sleep(2.0)
        self.assertEqual(ENV.ctl("reset", p.pid).returncode, 0)
        time.sleep(2.0)
        total, cut = cut_share(p.pid)
        print(f"\nfirst-samples: python3 steady: {total} samples, {cut:.2f}% without their outermost frame", end="")
        ENV.ctl("detach", p.pid)
        p.kill()
        p.wait(30)


def setUpModule():
    global ENV
    ENV = vprof_env.start_module_env(frequency=999)


if __name__ == "__main__":
    vprof_env.main()
