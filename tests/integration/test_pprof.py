#!/usr/bin/env python3
# SPDX-License-Identifier: LGPL-2.1-or-later
"""pprof files end to end: vprofctl report --format pprof, read by Debian's go tool pprof.

A workload with known hot functions is profiled until it exits, so that its tables are frozen and every call
reads the same counts. Then go tool pprof agrees with vprofctl exactly: -top names the same hottest function and
the same total sample count as report --json; -raw shows the mappings with the build-ids that readelf -n reads in
the files; -traces shows the stacks of report --by stack (as multisets of frames and counts), also over a
window, where every stack is per thread and the threads' counts add up to the stacks'. A target attached with
--off-cpu has the third sample type, off-cpu/nanoseconds."""
import collections
import os
import re
import shutil
import subprocess
import tempfile
import time

import vprof_env

ENV = None
GO = shutil.which("go")


def go_env():
    """go tool pprof writes its cache and its copies of remote profiles under HOME: temp dirs of the test's."""
    home = tempfile.mkdtemp(prefix="vprof-pprof-home-", dir=ENV.tmp)
    return dict(os.environ, HOME=home, GOCACHE=os.path.join(home, "gocache"), PPROF_TMPDIR=os.path.join(home, "pprof"))


def pprof(*args):
    r = subprocess.run([GO, "tool", "pprof", *args], env=go_env(), capture_output=True, text=True, timeout=120)
    if r.returncode != 0:
        raise AssertionError(f"go tool pprof {' '.join(args)} failed ({r.returncode}): {r.stderr}")
    return r.stdout


def write_pprof(target, *args):
    path = os.path.join(tempfile.mkdtemp(dir=ENV.tmp), "profile.pb.gz")
    r = ENV.ctl("report", target, "--format", "pprof", "-o", path, *args)
    if r.returncode != 0:
        raise AssertionError(f"report --format pprof failed ({r.returncode}): {r.stderr}")
    return path


def traces(path, keep_inline=False):
    """go tool pprof -traces, by sample count: a list of (frames outermost first, labels, count), one per sample.
    An inlined frame (a Line of a Location before its last) is marked NAME (inline): the mark is dropped unless
    keep_inline."""
    out = pprof("-traces", "-sample_index=samples", path)
    result = []
    for block in out.split("-----------+-------------------------------------------------------")[1:]:
        labels, frames, count = {}, [], None
        for line in block.splitlines():
            if not line.strip():
                continue
            m = re.match(r"^\s*(\w+):\s+(.*)$", line)
            if m and count is None:
                labels[m.group(1)] = m.group(2).strip()
                continue
            m = re.match(r"^\s+(\d+)\s+(.*)$", line)
            if count is None and m:
                count = int(m.group(1))
                frames.append(m.group(2).strip())
            else:
                frames.append(line.strip())
        if count is not None:
            if not keep_inline:
                frames = [f.removesuffix(" (inline)") for f in frames]
            result.append((tuple(reversed(frames)), labels, count))
    return result


def folded(target, *args):
    """report --by stack as a multiset: frames outermost first (kernel frames without their _[k], inlined ones
    without their _[i]) -> count."""
    r = ENV.ctl("report", target, "--by", "stack", *args)
    assert r.returncode == 0, r.stderr
    stacks = collections.Counter()
    for line in r.stdout.splitlines():
        frames, count = line.rsplit(" ", 1)
        stacks[tuple(f[:-4] if f.endswith(("_[k]", "_[i]")) else f for f in frames.split(";"))] += int(count)
    return stacks


def by_frames(samples):
    stacks = collections.Counter()
    for frames, _, count in samples:
        stacks[frames] += count
    return stacks


def build_id(path):
    out = subprocess.run(["readelf", "-n", path], capture_output=True, text=True, check=True).stdout
    m = re.search(r"Build ID: ([0-9a-f]+)", out)
    return m.group(1) if m else None


class ExitedWorkload(vprof_env.TestCase):
    @classmethod
    def setUpClass(cls):
        if not GO:
            vprof_env.skip_or_fail("needs go (Debian's golang-go) for go tool pprof")
        p = ENV.spawn_demo("--threads", 2, "--seconds", 4)
        cls.pid = str(p.pid)
        r = ENV.ctl("attach", p.pid)
        assert r.returncode == 0, r.stderr
        ENV.go(p)
        p.wait(60)
        # Its last samples are drained and its last second closed (a second at most).
        time.sleep(2)
        cls.json = ENV.ctl_json("report", cls.pid)
        cls.path = write_pprof(cls.pid)

    def test_top_names_the_same_hottest_function_and_total(self):
        out = pprof("-top", "-sample_index=samples", self.path)
        total = int(re.search(r"Total samples = (\d+)", out).group(1))
        self.assertEqual(total, self.json["total_samples"])
        rows = [line.split() for line in out.splitlines() if re.match(r"^\s+\d+\s+[\d.]+%", line)]
        by_exclusive = sorted(self.json["functions"], key=lambda f: -f["exclusive"])
        # A tie for the first place would make either answer right: the workload's is far ahead.
        self.assertGreater(by_exclusive[0]["exclusive"], by_exclusive[1]["exclusive"])
        self.assertEqual(rows[0][5], by_exclusive[0]["function"])
        self.assertEqual(int(rows[0][0]), by_exclusive[0]["exclusive"])

    def test_raw_mappings_have_the_build_ids(self):
        out = pprof("-raw", self.path)
        mappings = out[out.index("Mappings"):].splitlines()[1:]
        seen = {}
        for line in mappings:
            fields = line.split()
            if len(fields) >= 3 and fields[2].startswith("/"):
                seen[fields[2]] = fields[3] if len(fields) > 3 and fields[3] != "[FN]" else None
        demo = os.path.realpath(os.environ["VPROF_DEMO"])
        self.assertIn(demo, seen)
        for path, got in seen.items():
            self.assertEqual(got, build_id(path), path)
        self.assertIn("[kernel.kallsyms]", out)
        self.assertIn("Comment: vprof ", out)

    def test_traces_are_the_folded_stacks(self):
        samples = traces(self.path)
        self.assertEqual(by_frames(samples), folded(self.pid))
        self.assertEqual(sum(c for _, _, c in samples), self.json["total_samples"])
        for _, labels, _ in samples:
            self.assertEqual(labels["pid"], self.pid)
            self.assertIn("comm", labels)

    def test_standard_output_and_errors(self):
        # The tables are frozen: "-o -" writes the very bytes of the file.
        r = subprocess.run([os.environ["VPROFCTL"], "report", self.pid, "--format", "pprof", "-o", "-"], env=ENV.env,
                           capture_output=True, timeout=30)
        self.assertEqual(r.returncode, 0, r.stderr)
        with open(self.path, "rb") as f:
            self.assertEqual(r.stdout, f.read())
        # One line each, and no file left behind.
        for args, message in [((), "needs -o FILE"), (("-o", "x", "--by", "stack"), "takes no --by"),
                              (("-o", "x", "--json"), "takes no --by"),
                              (("-o", os.path.join(ENV.tmp, "no", "such", "dir", "f")), "No such file")]:
            r = ENV.ctl("report", self.pid, "--format", "pprof", *args)
            self.assertNotEqual(r.returncode, 0)
            self.assertEqual(len(r.stderr.splitlines()), 1, r.stderr)
            self.assertIn(message, r.stderr)
        r = ENV.ctl("report", "999999999", "--format", "pprof", "-o", os.path.join(ENV.tmp, "none.pb.gz"))
        self.assertNotEqual(r.returncode, 0)
        self.assertEqual(len(r.stderr.splitlines()), 1, r.stderr)
        self.assertFalse(os.path.exists(os.path.join(ENV.tmp, "none.pb.gz")))

    def test_window_traces_per_thread(self):
        path = write_pprof(self.pid, "--window", "2s")
        samples = traces(path)
        self.assertEqual(by_frames(samples), folded(self.pid, "--window", "2s"))
        self.assertEqual(sum(c for _, _, c in samples), ENV.ctl_json("report", self.pid, "--window", "2s")["total_samples"])
        # Within a window every sample's thread is known, and the threads of the two workers are there.
        tids = {labels.get("tid") for _, labels, _ in samples}
        self.assertNotIn(None, tids)
        self.assertGreaterEqual(len(tids), 2)
        threads = {str(r["tid"]) for r in ENV.ctl_json("report", self.pid, "--by", "thread", "--window", "2s")["threads"]}
        self.assertLessEqual(tids, threads)


def raw_locations(path):
    """go tool pprof -raw's Locations: {id: [function names of its lines, in their order]}."""
    out = pprof("-raw", path)
    section = out[out.index("Locations"):out.index("Mappings")].splitlines()[1:]
    locations, current = {}, None
    for line in section:
        m = re.match(r"^\s+(\d+): 0x[0-9a-f]+ M=\d+ (\S+)", line)
        if m:
            current = locations.setdefault(int(m.group(1)), [])
            current.append(m.group(2))
        elif current is not None and line.strip():
            current.append(line.split()[0])
    return locations


class InlinedFunctions(vprof_env.TestCase):
    """vprof-inline (GCC -O2 -g, always_inline stages in run_batch): an address in inlined code is one Location whose
    Lines are the inlined functions, innermost first, then run_batch, which they were inlined into; report --by
    stack --json says the same of each frame."""

    def test_one_location_with_several_lines(self):
        if not GO:
            vprof_env.skip_or_fail("needs go (Debian's golang-go) for go tool pprof")
        p = ENV.spawn_demo("--seconds", 3, binary=os.environ["VPROF_INLINE"])
        r = ENV.ctl("attach", p.pid)
        self.assertEqual(r.returncode, 0, r.stderr)
        ENV.go(p)
        self.assertEqual(p.wait(60), 0)
        time.sleep(2)
        target = str(p.pid)
        path = write_pprof(target)

        locations = raw_locations(path)
        chains = collections.Counter(tuple(lines) for lines in locations.values() if len(lines) > 1)
        print(f"\npprof: {len(locations)} locations, those with several lines: {dict(chains)}", end="")
        # stage_hash, with mix_round inlined in it, and stage_sum are inlined into run_batch: their locations end
        # with it, innermost first.
        self.assertIn(("stage_sum", "run_batch"), chains)
        self.assertIn(("mix_round", "stage_hash", "run_batch"), chains)
        for lines in chains:
            self.assertNotIn("main", lines[:-1])
            self.assertEqual(len(set(lines)), len(lines), lines)
        # -traces unfolds the lines into frames again, the inlined ones marked: the stacks of report --by stack,
        # counts included, and the frames the JSON says are inlined.
        samples = traces(path, keep_inline=True)
        self.assertEqual(by_frames([(tuple(f.removesuffix(" (inline)") for f in frames), labels, count)
                                    for frames, labels, count in samples]), folded(target))
        json_stacks = collections.Counter()

        # The JSON frames: the inlined ones say so, outermost first, each inlined into the frame before it.
        stacks = ENV.ctl_json("report", target, "--by", "stack")["stacks"]
        inlined = collections.Counter()
        for s in stacks:
            frames = s["frames"]
            json_stacks[tuple(f["function"] + (" (inline)" if f["inlined"] else "") for f in frames)] += s["samples"]
            for i, f in enumerate(frames):
                self.assertIsInstance(f["inlined"], bool)
                inlined[(f["function"], f["inlined"])] += s["samples"]
                if f["inlined"]:
                    self.assertFalse(f["kernel"])
                    self.assertGreater(i, 0)
        for name in ("mix_round", "stage_hash", "stage_sum"):
            self.assertGreater(inlined[(name, True)], 0, name)
            self.assertEqual(inlined[(name, False)], 0, name)
        for name in ("run_batch", "main"):
            self.assertEqual(inlined[(name, True)], 0, name)
        # pprof marks as inlined exactly the frames the JSON does.
        self.assertEqual(by_frames(samples), json_stacks)
        ENV.ctl("detach", p.pid)


class Children(vprof_env.TestCase):
    def test_processes_of_a_group(self):
        """A process followed with its children: each process apart in the file, the pid labels telling them
        apart, and the whole the group's tables of report."""
        if not GO:
            vprof_env.skip_or_fail("needs go (Debian's golang-go) for go tool pprof")
        p = ENV.spawn_demo("storm", "--children", 12, "--per-second", 12, "--child-ms", 30,
                           binary=os.environ["VPROF_FORK"])
        r = ENV.ctl("attach", "--children", p.pid)
        self.assertEqual(r.returncode, 0, r.stderr)
        ENV.go(p)
        p.wait(60)
        time.sleep(2)
        target = str(p.pid)
        path = write_pprof(target)
        samples = traces(path)
        self.assertEqual(by_frames(samples), folded(target))
        self.assertEqual(sum(c for _, _, c in samples), ENV.ctl_json("report", target)["total_samples"])
        self.assertGreater(len({labels["pid"] for _, labels, _ in samples}), 1)


class OffCpu(vprof_env.TestCase):
    def test_third_sample_type(self):
        if not GO:
            vprof_env.skip_or_fail("needs go (Debian's golang-go) for go tool pprof")
        p = ENV.spawn_demo("--seconds", 2, "--cpu-ms", 5, "--sleep-ms", 20, "--read-ms", 0,
                           binary=os.environ["VPROF_WAIT"])
        r = ENV.ctl("attach", p.pid, "--off-cpu")
        self.assertEqual(r.returncode, 0, r.stderr)
        ENV.go(p)
        p.wait(60)
        time.sleep(2)
        path = write_pprof(str(p.pid))
        out = pprof("-raw", path)
        self.assertRegex(out, r"samples/count cpu/nanoseconds\[dflt\] off-cpu/nanoseconds")
        top = pprof("-top", "-sample_index=off-cpu", path)
        self.assertIn("wait_sleep", top)


def setUpModule():
    global ENV
    ENV = vprof_env.start_module_env(frequency=499)


if __name__ == "__main__":
    vprof_env.main()
