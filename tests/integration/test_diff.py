#!/usr/bin/env python3
# SPDX-License-Identifier: LGPL-2.1-or-later
"""vprofctl diff end to end (issue 27): what changed between two windows of one target, and between two targets.

vprof-phases burns CPU in phase_one() for 7 s, then in phase_two(), and writes its CPU time against the clock (its
timeline) and the instant of its switch. Five and a half seconds after the switch, `vprofctl diff --window 4s
--base-window 4s@6s` compares the last 4 s (all phase_two) with the 4 s that ended 6 s before them (all
phase_one): phase_one down and phase_two up, each by the points the timeline gives for the two windows' real spans
(the share of the process's CPU time before or after the switch), within 1 point; GONE and NEW; the per-second
rates of CPU time the same at 99 and at 999 Hz within 2%. Each window's span is the one GetWindowTables reports,
the base ending 6 s before the new one's end exactly."""
import os
import re
import shutil
import subprocess
import tempfile
import time

import xml.etree.ElementTree as ET

import chromium
import exporter_env
import vprof_env
from test_windows import cpu_at

ENV = None
SVG = "{http://www.w3.org/2000/svg}"
FIRST, SECOND = 7, 7
WINDOW, BASE, AGO = 4, 4, 6


def phase_share(timeline, switch_usec, start, end, first):
    """The percent of the process's CPU time in [start, end] spent in phase_one (first) or phase_two."""
    c0, cs, c1 = (cpu_at(timeline, t) for t in (start, min(max(switch_usec, start), end), end))
    if c1 <= c0:
        return 0.0
    return 100.0 * ((cs - c0) if first else (c1 - cs)) / (c1 - c0)


def rows(diff, key="function"):
    return {r[key]: r for r in diff["rows"]}


def run_phases(test, env):
    """vprof-phases attached in env, diffed by function (JSON and text), module, thread and stack once its two
    windows are past; with its timeline and switch instant."""
    switch_file, timeline_file = os.path.join(env.tmp, "switch"), os.path.join(env.tmp, "timeline")
    for path in (switch_file, timeline_file):
        if os.path.exists(path):
            os.unlink(path)
    p = env.spawn_demo("--first", FIRST, "--second", SECOND, "--switch-file", switch_file, "--timeline",
                       timeline_file, binary=os.environ["VPROF_PHASES"])
    test.assertEqual(env.ctl("attach", p.pid).returncode, 0)
    env.go(p)
    deadline = time.monotonic() + FIRST + 20
    while not os.path.exists(switch_file) or os.path.getsize(switch_file) == 0:
        test.assertLess(time.monotonic(), deadline, "vprof-phases never switched")
        time.sleep(0.05)
    with open(switch_file) as f:
        switch_usec = int(f.read().split()[0])
    # The new window's 4 s after the switch closed, with a second to spare; the base's 4 s before it.
    time.sleep(max(0.0, switch_usec / 1e6 + WINDOW + 1.5 - time.time()))
    args = ["diff", p.pid, "--window", f"{WINDOW}s", "--base-window", f"{BASE}s@{AGO}s"]
    out = {"function": env.ctl_json(*args)}
    for by in ("module", "thread", "stack"):
        out[by] = env.ctl_json(*args, "--by", by)
    out["text"] = env.ctl(*args)
    # The pair for go tool pprof -diff_base.
    out["pprof"] = (os.path.join(env.tmp, f"new-{env.frequency}.pb.gz"), os.path.join(env.tmp, f"base-{env.frequency}.pb.gz"))
    r = env.ctl(*args, "--format", "pprof", "-o", out["pprof"][0], "--base-output", out["pprof"][1])
    test.assertEqual(r.returncode, 0, r.stderr)
    # The base from that file, written earlier (all phase_one): against the last 4 s, and as a flame graph.
    out["from_file"] = env.ctl_json("diff", p.pid, "--window", f"{WINDOW}s", "--base-pprof", out["pprof"][1])
    out["from_file_svg"] = os.path.join(env.tmp, f"diff-file-{env.frequency}.svg")
    r = env.ctl("report", p.pid, "--window", f"{WINDOW}s", "--base-pprof", out["pprof"][1], "--format", "svg",
                "-o", out["from_file_svg"])
    test.assertEqual(r.returncode, 0, r.stderr)
    # The differential flame graph of the last 8 s (phase_one's end and phase_two) against the 4 s before them (all
    # phase_one).
    out["svg"] = os.path.join(env.tmp, f"diff-{env.frequency}.svg")
    r = env.ctl("diff", p.pid, "--window", "8s", "--base-window", "4s", "--format", "svg", "-o", out["svg"])
    test.assertEqual(r.returncode, 0, r.stderr)
    # The exporter's flame graph page with the same base, and without one.
    exporter = exporter_env.Exporter(env)
    try:
        out["page"] = exporter.get(f"/flamegraph?target={p.pid}&window=8s&base=4s")
        out["page_plain"] = exporter.get(f"/flamegraph?target={p.pid}&window=8s")
        out["page_bad"] = exporter.get(f"/flamegraph?target={p.pid}&window=8s&base=4s@x")
    finally:
        exporter.stop()
    # A base across the switch: 4 s that end 3 s before the new window's end, half a second of phase_one more or
    # less, whose truth only the timeline knows.
    out["across"] = env.ctl_json("diff", p.pid, "--window", f"{WINDOW}s", "--base-window", f"{BASE}s@3s")
    out["pid"] = p.pid
    p.wait(FIRST + SECOND + 30)
    # Exited, its windows stay still: the last 4 s as a table and as a pprof file, then diffed against that file.
    last = os.path.join(env.tmp, f"last-{env.frequency}.pb.gz")
    out["last_report"] = env.ctl_json("report", p.pid, "--window", f"{WINDOW}s")
    r = env.ctl("report", p.pid, "--window", f"{WINDOW}s", "--format", "pprof", "-o", last)
    test.assertEqual(r.returncode, 0, r.stderr)
    out["against_itself"] = env.ctl_json("diff", p.pid, "--window", f"{WINDOW}s", "--base-pprof", last)
    out["against_itself_threads"] = env.ctl_json("diff", p.pid, "--window", f"{WINDOW}s", "--base-pprof", last,
                                                 "--by", "thread")
    # The same file as another tool writes it: go tool pprof -proto decodes it and encodes it again (Go's own
    # profile.proto writer, its own string table and ids).
    go = shutil.which("go")
    if go:
        home = tempfile.mkdtemp(dir=env.tmp)
        genv = dict(os.environ, HOME=home, GOCACHE=os.path.join(home, "gocache"), PPROF_TMPDIR=home)
        by_go = os.path.join(env.tmp, f"last-go-{env.frequency}.pb.gz")
        with open(by_go, "wb") as f:
            r = subprocess.run([go, "tool", "pprof", "-proto", last], env=genv, stdout=f, stderr=subprocess.PIPE,
                               timeout=120)
        test.assertEqual(r.returncode, 0, r.stderr)
        out["against_go"] = env.ctl_json("diff", p.pid, "--window", f"{WINDOW}s", "--base-pprof", by_go)
    with open(timeline_file) as f:
        out["timeline"] = [tuple(map(int, line.split())) for line in f]
    out["switch_usec"] = switch_usec
    env.ctl("detach", p.pid)
    return out


class PhaseDiff(vprof_env.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.runs = {}

    def run_at(self, frequency):
        if frequency not in self.runs:
            env = ENV if frequency == ENV.frequency else self.start_env(frequency=frequency)
            self.runs[frequency] = run_phases(self, env)
        return self.runs[frequency]

    def check_truth(self, frequency):
        out = self.run_at(frequency)
        d = out["function"]
        base, new = d["base"], d["new"]
        # The spans GetWindowTables counted: whole seconds, the base ending AGO s before the new window's end. A
        # second ends when the daemon's timer closes it, late by a scheduling delay on a busy machine (107 ms
        # seen here once, with two daemons and the workload on two CPUs): the spans are what the truth is taken
        # over, so they need not be exact.
        self.assertAlmostEqual(new["seconds"], WINDOW, delta=0.3)
        self.assertAlmostEqual(base["seconds"], BASE, delta=0.3)
        self.assertAlmostEqual((new["end_usec"] - base["end_usec"]) / 1e6, AGO, delta=0.3)
        r = rows(d)
        print(f"diff at {frequency} Hz: base {base['total_samples']} samples in {base['seconds']:.3f} s, new "
              f"{new['total_samples']} in {new['seconds']:.3f} s")
        for name, first in (("phase_one", True), ("phase_two", False)):
            truth_base = phase_share(out["timeline"], out["switch_usec"], base["start_usec"], base["end_usec"], first)
            truth_new = phase_share(out["timeline"], out["switch_usec"], new["start_usec"], new["end_usec"], first)
            row = r[name]
            print(f"  {name}: base {row['base_percent']:.2f}% (truth {truth_base:.2f}), new {row['new_percent']:.2f}% "
                  f"(truth {truth_new:.2f}), diff {row['diff_points']:+.2f} points (truth "
                  f"{truth_new - truth_base:+.2f}), {row['base_ms_per_second']:.1f} -> "
                  f"{row['new_ms_per_second']:.1f} ms/s; new {row['new']}, gone {row['gone']}, noise {row['noise']}")
            self.assertLessEqual(abs(row["diff_points"] - (truth_new - truth_base)), 1.0, name)
            self.assertAlmostEqual(row["diff_points"], row["new_percent"] - row["base_percent"], places=6)
            self.assertFalse(row["noise"], name)
        self.assertTrue(r["phase_one"]["gone"])
        self.assertTrue(r["phase_two"]["new"])
        self.assertLess(r["phase_one"]["diff_points"], -98)
        self.assertGreater(r["phase_two"]["diff_points"], 98)
        # The two phases come first: the largest changes.
        self.assertEqual({d["rows"][0]["function"], d["rows"][1]["function"]}, {"phase_one", "phase_two"})
        # main: in every sample of both windows, no change, no mark.
        self.assertAlmostEqual(r["main"]["diff_points"], 0.0, delta=1.0)
        self.assertFalse(r["main"]["new"] or r["main"]["gone"])
        return out

    def check_across(self, frequency, bound):
        out = self.run_at(frequency)
        d = out["across"]
        base = d["base"]
        truth = phase_share(out["timeline"], out["switch_usec"], base["start_usec"], base["end_usec"], True)
        row = rows(d)["phase_one"]
        print(f"  base across the switch at {frequency} Hz: phase_one {row['base_percent']:.2f}% (truth {truth:.2f}), "
              f"diff {row['diff_points']:+.2f} points (truth {-truth:+.2f})")
        self.assertGreater(truth, 5)
        self.assertLess(truth, 95)
        self.assertLessEqual(abs(row["diff_points"] + truth), bound)

    def test_across_the_switch(self):
        """A base window that holds the switch: phase_one's share of it, as the timeline says, within 1 point at
        999 Hz (2 at 99 Hz, where a sample is a quarter point of 4 s)."""
        self.check_across(999, 1.0)
        self.check_across(99, 2.0)

    def test_truth_99hz(self):
        self.check_truth(99)

    def test_truth_999hz(self):
        self.check_truth(999)

    def rate(self, out, side, name):
        """vprof's CPU milliseconds per second of a row in a window, and the workload's own: its thread's CPU time
        in that function over the window's span, from its timeline."""
        d = out["function"][side]
        cpu = {True: 0.0, False: 0.0}
        c0, cs, c1 = (cpu_at(out["timeline"], t) for t in
                      (d["start_usec"], min(max(out["switch_usec"], d["start_usec"]), d["end_usec"]), d["end_usec"]))
        cpu[True], cpu[False] = cs - c0, c1 - cs
        truth = (cpu[name == "phase_one"] if name != "main" else c1 - c0) / 1e3 / d["seconds"]
        return rows(out["function"])[name][f"{side}_ms_per_second"], truth

    def test_rates_agree_across_frequencies(self):
        """CPU time per second of window, at 99 and at 999 Hz: each within 2% of the workload's own CPU time per
        second in that window (on a busy machine the process gets less than a CPU, and not the same share in two
        runs), so the two agree within 2% of each other once the runs' own rates are set apart."""
        slow, fast = self.run_at(99), self.run_at(999)
        for name, side in (("phase_one", "base"), ("phase_two", "new"), ("main", "base"), ("main", "new")):
            (a, ta), (b, tb) = self.rate(slow, side, name), self.rate(fast, side, name)
            print(f"  {name} {side}: {a:.1f} ms/s at 99 Hz (the workload's {ta:.1f}), {b:.1f} at 999 Hz ({tb:.1f})")
            self.assertGreater(ta, 100)
            self.assertLessEqual(abs(a - ta), 0.02 * ta, name)
            self.assertLessEqual(abs(b - tb), 0.02 * tb, name)
            self.assertLessEqual(abs(a / ta - b / tb), 0.02, name)

    def test_other_tables(self):
        out = self.run_at(ENV.frequency)
        modules = rows(out["module"], "module")
        binary = os.path.basename(os.environ["VPROF_PHASES"])
        self.assertAlmostEqual(modules[binary]["diff_points"], 0.0, delta=1.0)
        threads = out["thread"]["rows"]
        self.assertEqual(threads[0]["tid"], out["pid"])
        stacks = rows(out["stack"], "stack")
        one = [s for s in stacks if s.endswith(";phase_one")]
        two = [s for s in stacks if s.endswith(";phase_two")]
        self.assertTrue(one and two, sorted(stacks)[:10])
        self.assertTrue(all(stacks[s]["gone"] for s in one))
        self.assertTrue(all(stacks[s]["new"] for s in two))
        # The text: a table whose first rows are the two phases, marked.
        lines = out["text"].stdout.splitlines()
        print("\n".join(lines[:5]))
        self.assertEqual(lines[0].split()[:2], ["FUNCTION", "MODULE"])
        marks = {line.split()[0]: line.split()[-1] for line in lines[1:3]}
        self.assertEqual(marks, {"phase_one": "GONE", "phase_two": "NEW"})
        self.assertIn("base:", out["text"].stderr)


    def test_pprof_diff_base(self):
        """go tool pprof -diff_base on the exported pair: phase_two and phase_one first, with vprof's signs and
        counts."""
        go = shutil.which("go")
        if not go:
            vprof_env.skip_or_fail("needs go (Debian's golang-go) for go tool pprof")
        out = self.run_at(ENV.frequency)
        new, base = out["pprof"]
        home = tempfile.mkdtemp(dir=ENV.tmp)
        genv = dict(os.environ, HOME=home, GOCACHE=os.path.join(home, "gocache"), PPROF_TMPDIR=home)
        r = subprocess.run([go, "tool", "pprof", "-top", "-sample_index=samples", "-diff_base", base, new],
                           env=genv, capture_output=True, text=True, timeout=120)
        self.assertEqual(r.returncode, 0, r.stderr)
        print("go tool pprof -top -diff_base:\n" + "\n".join(r.stdout.splitlines()[:10]))
        top = [line.split() for line in r.stdout.splitlines() if line.strip().endswith(("phase_one", "phase_two"))]
        flat = {fields[-1]: int(fields[0]) for fields in top}
        # The pair was written by its own vprofctl diff call, whose windows may be a second later than the table's:
        # within a second's samples of vprof's difference.
        vprof = rows(out["function"])
        for name in ("phase_one", "phase_two"):
            want = vprof[name]["new_exclusive"] - vprof[name]["base_exclusive"]
            self.assertLessEqual(abs(flat[name] - want), 1.05 * ENV.frequency, (name, flat[name], want))
        self.assertGreater(flat["phase_two"], 0)
        self.assertLess(flat["phase_one"], 0)
        # The two first of the top by the size of the change, as in vprof's table.
        names = [fields[-1] for fields in (line.split() for line in r.stdout.splitlines()) if fields and
                 fields[0].lstrip("-").isdigit()]
        self.assertEqual(set(names[:2]), {"phase_one", "phase_two"}, names[:5])


    def test_base_from_pprof(self):
        """--base-pprof: the base window's pprof file, written earlier, against the last 4 s: phase_one GONE and
        phase_two NEW by the points the timeline gives for the file's span and the new window's, within 1 point;
        threads matched by name; the differential flame graph. And a file of the target's last 4 s against those
        same 4 s: every row's counts equal to report's, exactly, and no change."""
        out = self.run_at(ENV.frequency)
        d = out["from_file"]
        base, new = d["base"], d["new"]
        self.assertAlmostEqual(base["seconds"], BASE, delta=0.3)
        self.assertEqual(base["frequency"], ENV.frequency)
        r = rows(d)
        for name, first in (("phase_one", True), ("phase_two", False)):
            truth = (phase_share(out["timeline"], out["switch_usec"], new["start_usec"], new["end_usec"], first) -
                     phase_share(out["timeline"], out["switch_usec"], base["start_usec"], base["end_usec"], first))
            print(f"  base from a pprof file: {name} {r[name]['diff_points']:+.2f} points (truth {truth:+.2f}), "
                  f"{r[name]['base_ms_per_second']:.1f} -> {r[name]['new_ms_per_second']:.1f} ms/s")
            self.assertLessEqual(abs(r[name]["diff_points"] - truth), 1.0, name)
        self.assertTrue(r["phase_one"]["gone"])
        self.assertTrue(r["phase_two"]["new"])
        # main in every sample of both, its module named in the file as the daemon names it.
        self.assertAlmostEqual(r["main"]["diff_points"], 0.0, delta=1.0)
        self.assertFalse(r["main"]["new"] or r["main"]["gone"])
        with open(out["from_file_svg"]) as f:
            svg = f.read()
        self.assertIn("differential flame graph", svg)
        two = re.search(r'data-f="phase_two".*?<rect data-dp="([-+0-9.]+)"', svg, re.S)
        self.assertGreater(float(two.group(1)), 30)
        # The same 4 s from the daemon and from the file: equal, row by row.
        same, report = out["against_itself"], out["last_report"]
        self.assertEqual((same["base"]["start_usec"], same["base"]["end_usec"]),
                         (report["window"]["start_usec"], report["window"]["end_usec"]))
        self.assertEqual((same["new"]["start_usec"], same["new"]["end_usec"]),
                         (report["window"]["start_usec"], report["window"]["end_usec"]))
        self.assertEqual(same["base"]["total_samples"], report["total_samples"])
        want = {(f["function"], f["module"]): (f["inclusive"], f["exclusive"]) for f in report["functions"]}
        got = {(f["function"], f["module"]): (f["base_inclusive"], f["base_exclusive"]) for f in same["rows"]}
        self.assertEqual(got, want)
        self.assertTrue(all(f["diff_points"] == 0 and not f["new"] and not f["gone"] for f in same["rows"]))
        # Threads by name, from the file's labels: the same thread, no change.
        threads = out["against_itself_threads"]["rows"]
        self.assertEqual([t["thread"] for t in threads], ["vprof-phases"])
        self.assertNotIn("tid", threads[0])
        self.assertEqual(threads[0]["base_inclusive"], threads[0]["new_inclusive"])
        print(f"  the last {WINDOW} s against their own pprof file: {len(got)} functions, "
              f"{report['total_samples']} samples, equal")
        # Written again by go tool pprof -proto: the same rows.
        if "against_go" not in out:
            vprof_env.skip_or_fail("needs go (Debian's golang-go) for go tool pprof")
        by_go = {(f["function"], f["module"]): (f["base_inclusive"], f["base_exclusive"])
                 for f in out["against_go"]["rows"]}
        self.assertEqual(by_go, want)
        print(f"  and against that file as go tool pprof -proto writes it: equal")

    def test_flame_graph(self):
        """The differential flame graph: widths from the new window, phase_two red (grew) and phase_one blue
        (shrank) by the points of their change; in headless chromium, its search and zoom work as on any flame
        graph of vprof's (chromium.check_flamegraph_page), screenshot in the test artefacts."""
        out = self.run_at(ENV.frequency)
        with open(out["svg"], "rb") as f:
            svg = f.read()
        root = ET.fromstring(svg)
        total = int(root.get("data-total"))
        frames = {g.get("data-f"): g for g in root.iter(SVG + "g") if "f" in g.get("class", "").split()}
        one, two = frames["phase_one"], frames["phase_two"]
        dp = {name: float(g.find(SVG + "rect").get("data-dp")) for name, g in (("phase_one", one), ("phase_two", two))}
        fill = {name: g.find(SVG + "rect").get("fill") for name, g in (("phase_one", one), ("phase_two", two))}
        share_two = 100.0 * int(two.get("data-n")) / total
        print(f"differential flame graph: phase_one {dp['phase_one']:+.2f} points {fill['phase_one']}, phase_two "
              f"{dp['phase_two']:+.2f} points {fill['phase_two']}, phase_two {share_two:.2f}% of the new window")
        # The base is all phase_one: phase_one lost what phase_two holds now.
        self.assertAlmostEqual(dp["phase_two"], share_two, delta=0.01)
        self.assertAlmostEqual(dp["phase_one"], -share_two, delta=1.0)
        self.assertGreater(share_two, 30)
        self.assertTrue(fill["phase_two"].startswith("hsl(0,"), fill)
        self.assertTrue(fill["phase_one"].startswith("hsl(220,"), fill)
        self.assertIn("differential flame graph", svg.decode())
        if not chromium.chromium_path():
            vprof_env.skip_or_fail("needs chromium (Debian's chromium) for the page's checks")
        shot = os.path.join(os.environ.get("VPROF_ARTIFACTS") or ENV.tmp, "flamegraph-diff.png")
        os.makedirs(os.path.dirname(shot), exist_ok=True)
        result = chromium.check_flamegraph_page("file://" + out["svg"], "phase_two", share_two, screenshot=shot,
                                                test=self)
        print(f"in chromium: {result['matched']}; screenshot {shot}")


    def test_exporter_page(self):
        """The exporter's flame graph page takes a base window (base=4s: the 4 s before the window) and draws the
        differential graph, phase_two grown; its header offers the bases; a bad base is a 400."""
        out = self.run_at(ENV.frequency)
        status, headers, body = out["page"]
        self.assertEqual(status, 200, body[:300])
        page = body.decode()
        self.assertIn("differential flame graph", page)
        two = re.search(r'data-f="phase_two".*?<rect data-dp="([-+0-9.]+)"', page, re.S)
        self.assertIsNotNone(two)
        self.assertGreater(float(two.group(1)), 30)
        self.assertIn('<p id="compare">Compare with:', page)
        self.assertIn(f"/flamegraph?target={out['pid']}&amp;window=8s&amp;base=60s", page)
        status, _, plain = out["page_plain"]
        self.assertEqual(status, 200)
        self.assertNotIn("data-dp", plain.decode())
        self.assertIn("Compare with:", plain.decode())
        status, _, bad = out["page_bad"]
        self.assertEqual(status, 400, bad[:200])


class TwoTargets(vprof_env.TestCase):
    def test_base_target(self):
        """--base-target: two vprof-phases side by side, one in phase_one and one already in phase_two, over the
        same seconds: phase_one GONE and phase_two NEW against the other process, threads matched by name."""
        procs = []
        for first in (30, 0):
            p = ENV.spawn_demo("--first", first, "--second", 30, binary=os.environ["VPROF_PHASES"])
            self.assertEqual(ENV.ctl("attach", p.pid).returncode, 0)
            procs.append(p)
        for p in procs:
            ENV.go(p)
        time.sleep(4.5)
        one, two = procs
        d = ENV.ctl_json("diff", two.pid, "--base-target", one.pid, "--window", "3s")
        t = ENV.ctl_json("diff", two.pid, "--base-target", one.pid, "--window", "3s", "--by", "thread")
        for p in procs:
            ENV.ctl("detach", p.pid)
            p.kill()
        r = rows(d)
        print(f"two targets: base {d['base']['total_samples']} samples in {d['base']['seconds']:.3f} s, new "
              f"{d['new']['total_samples']} in {d['new']['seconds']:.3f} s; phase_one {r['phase_one']['diff_points']:+.2f}, "
              f"phase_two {r['phase_two']['diff_points']:+.2f} points")
        # The same seconds: every target's second closes on the daemon's one timer.
        self.assertEqual(d["base"]["end_usec"], d["new"]["end_usec"])
        self.assertEqual(d["base"]["start_usec"], d["new"]["start_usec"])
        self.assertTrue(r["phase_one"]["gone"])
        self.assertTrue(r["phase_two"]["new"])
        self.assertLess(r["phase_one"]["diff_points"], -95)
        # The main threads of two processes: one row by name, no TID.
        names = [row["thread"] for row in t["rows"]]
        self.assertEqual(names.count("vprof-phases"), 1, names)
        self.assertNotIn("tid", t["rows"][0])


class Errors(vprof_env.TestCase):
    def test_bad_arguments(self):
        """One line, a non-zero exit: a window of all, a malformed base, a target not attached, --by process."""
        cases = [
            (["diff", "1", "--window", "all"], "needs a --window"),
            (["diff", "1", "--base-window", "4s@x"], "Invalid --base-window"),
            (["diff", "1", "--base-window", "all"], "Invalid --base-window"),
            (["diff", "1", "--by", "process"], "--by process"),
            (["diff", "4194304"], "not"),
            (["diff", "1", "--sort", "inclusive"], "does not apply"),
            (["report", "1", "--base-window", "4s"], "differential flame graph"),
            (["report", "1", "--base-pprof", "/tmp/x.pb.gz", "--format", "pprof", "-o", "/tmp/y"],
             "differential flame graph"),
            (["diff", "1", "--format", "pprof", "-o", "/tmp/x.pb.gz"], "--base-output"),
            (["diff", "1", "--format", "svg", "-o", "/tmp/x", "--base-output", "/tmp/y"], "one file"),
            (["diff", "1", "--format", "pprof", "-o", "-", "--base-output", "/tmp/y"], "--base-output"),
            (["diff", "1", "--base-pprof", "/nonexistent/base.pb.gz"], "No such file"),
            (["diff", "1", "--base-pprof", "/etc/passwd"], "not a pprof profile"),
            (["diff", "1", "--base-pprof", "/"], "not a regular file"),
            (["diff", "1", "--base-pprof", "/tmp/x.pb.gz", "--base-target", "2"], "no --base-target"),
            (["diff", "1", "--base-pprof", "/tmp/x.pb.gz", "--format", "pprof", "-o", "/tmp/n.pb.gz"],
             "-diff_base"),
            (["diff", "1", "--base-pprof", ""], "Invalid --base-pprof"),
        ]
        for args, message in cases:
            r = ENV.ctl(*args)
            self.assertNotEqual(r.returncode, 0, args)
            self.assertIn(message, r.stderr, args)
            self.assertEqual(len(r.stderr.strip().splitlines()), 1, r.stderr)


def setUpModule():
    global ENV
    ENV = vprof_env.start_module_env(frequency=99)


if __name__ == "__main__":
    vprof_env.main()
