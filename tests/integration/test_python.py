#!/usr/bin/env python3
# SPDX-License-Identifier: LGPL-2.1-or-later
"""CPython interpreters in targets (issue 26, docs/PYTHON.md): the daemon recognizes Debian's /usr/bin/python3.11 in an
already-running target and pushes what the BPF walk needs into the map python_procs, keyed by the target's PID; a
copy with another build-id is recognized too (its layout from the table and the member table); a program that is no
interpreter but is named python3.11 is counted and gets no entry; an exec() and a detach drop the entry. The BPF walk
of the frames (counted, not yet in the records) follows a thread's whole chain, and counts each damage that
tests/workloads/py-hostile-frames.py makes as its outcome (and a damaged code object as [python: unknown]), a
native target beside them unharmed. The drain names each Python frame by its code object
(tests/workloads/py-known-split.py), in place of the evaluation loop's native frame unless
PythonInterpreterFrames=yes; generators, coroutines and C calling back into Python in caller order
(tests/workloads/py-shapes.py); a ThreadPoolExecutor program (tests/workloads/py-threads.py) is named whole and
split by thread as the kernel counted its threads' CPU time."""
import ast
import json
import math
import os
import re
import shutil
import subprocess
import tempfile
import time

import exporter_env
import vprof_env

ENV = None
PYTHON = "/usr/bin/python3.11"
PYENV_PYTHON = "/root/.pyenv/versions/3.11.7/bin/python3.11"
FIXTURE = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "unit", "python-fixture.py")
# Spins until its stdin says "exec": then becomes a shell that spins (its samples make the daemon read the new
# image's maps), same PID.
SPIN = ("import os, sys, threading\n"
        "def spin():\n"
        "    while True:\n"
        "        sum(range(1000))\n"
        "threading.Thread(target=spin, daemon=True).start()\n"
        "line = sys.stdin.readline()\n"
        "if line.strip() == 'exec':\n"
        "    os.execv('/bin/sh', ['sh', '-c', 'while :; do :; done'])\n")


def python_entries():
    """Every entry of the maps named python_procs, through bpftool (BTF-formatted): tgid -> its fields."""
    maps = json.loads(subprocess.run(["bpftool", "-j", "map", "show"], capture_output=True, text=True,
                                     check=True).stdout)
    entries = {}
    for m in maps:
        if m.get("name") != "python_procs":
            continue
        dump = json.loads(subprocess.run(["bpftool", "-j", "map", "dump", "id", str(m["id"])],
                                         capture_output=True, text=True, check=True).stdout)
        for entry in dump:
            entries[entry["formatted"]["key"]] = entry["formatted"]["value"]
    return entries


def eval_loop_symbol(path):
    """_PyEval_EvalFrameDefault's ELF address in path, by readelf (not through the code under test)."""
    out = subprocess.run(["readelf", "-Ws", "--dyn-syms", path], capture_output=True, text=True, check=True).stdout
    for line in out.splitlines():
        f = line.split()
        if len(f) >= 8 and f[7] == "_PyEval_EvalFrameDefault" and f[3] == "FUNC":
            return int(f[1], 16)
    raise AssertionError(f"no _PyEval_EvalFrameDefault in {path}")


def mapping_of(pid, addr):
    """The path of the mapping of pid holding addr, and that mapping's executable flag."""
    with open(f"/proc/{pid}/maps") as f:
        for line in f:
            f_ = line.split()
            start, end = (int(x, 16) for x in f_[0].split("-"))
            if start <= addr < end:
                return (f_[5] if len(f_) > 5 else ""), "x" in f_[1]
    return None, False


def wait_status(test, cond, what, timeout=20):
    """The daemon's status once cond(status) holds; test fails with what after timeout seconds."""
    deadline = time.monotonic() + timeout
    while True:
        s = ENV.ctl_json("status")
        if cond(s):
            return s
        if time.monotonic() > deadline:
            test.fail(f"{what}: status {({k: v for k, v in s.items() if k.startswith('python')})}")
        time.sleep(0.2)


class PythonInterpreters(vprof_env.TestCase):
    def spawn(self, argv):
        p = subprocess.Popen(argv, stdin=subprocess.PIPE, text=True)
        ENV.children.append(p)
        return p

    def wait_status(self, cond, what, timeout=20):
        return wait_status(self, cond, what, timeout)

    def test_interpreters(self):
        before = ENV.ctl_json("status")
        self.assertEqual(before["python_targets"], 0)

        # Debian's python3.11, running before the attach.
        py = self.spawn([PYTHON, "-c", SPIN])
        time.sleep(0.5)
        self.assertEqual(ENV.ctl("attach", py.pid).returncode, 0)
        s = self.wait_status(lambda s: s["python_targets"] == 1, "python3.11 not pushed")
        # Once per file: the hostile test's targets may have had it read already.
        self.assertGreaterEqual(s["python_interpreters"], 1)
        interpreters = s["python_interpreters"]
        entry = python_entries()[py.pid]
        # A position-dependent executable: the file's addresses; 3.11's offsets (pycore_frame.h).
        self.assertEqual(entry["eval_start"], eval_loop_symbol(PYTHON))
        self.assertEqual(entry["version_hex"] >> 16, 0x030b)
        self.assertEqual((entry["frame_previous"], entry["frame_instr"], entry["frame_is_entry"]), (48, 56, 68))
        self.assertLess(entry["eval_cold_start"], entry["eval_cold_end"])  # from python3.11-dbg
        self.assertNotEqual(entry["runtime"], 0)

        # The BPF walk of its frames: the spinning thread's chain is spin, Thread.run, _bootstrap_inner, _bootstrap
        # (sum() and range() are C); the main thread waits in readline(), off CPU.
        s = self.wait_status(lambda s: s["python_walks_complete"] - before["python_walks_complete"] >= 20,
                             "no Python walk complete")
        d = {k: s[k] - before[k] for k in ("python_walks_complete", "python_walks_no_tstate",
                                           "python_walks_bad_frame", "python_walks_faulted",
                                           "python_walks_at_depth_limit", "python_frames_walked")}
        print(f"python: walks {d}")
        self.assertEqual(d["python_walks_bad_frame"], 0)
        self.assertEqual(d["python_walks_at_depth_limit"], 0)
        self.assertGreaterEqual(d["python_walks_complete"], 0.9 * (sum(d.values()) - d["python_frames_walked"]))
        self.assertGreaterEqual(d["python_frames_walked"], 3.5 * d["python_walks_complete"])
        self.assertLessEqual(d["python_frames_walked"], 4.5 * d["python_walks_complete"])

        # The walked frames in the records, named by their code objects, each run in place of the evaluation loop's
        # frame that runs it: spin's (called by Thread.run through C), then Thread.run, _bootstrap_inner and
        # _bootstrap's, in caller order.
        thread = {st: c for st, c in folded(self, ENV, py.pid).items() if "start_thread" in st}
        chain = ["Thread._bootstrap", "Thread._bootstrap_inner", "Thread.run", "spin"]

        def python_frames(st):
            return [f for f in st.split(";") if f in chain]
        four = sum(c for st, c in thread.items() if python_frames(st) == chain)
        print(f"python: {four} of {sum(thread.values())} samples of the spinning thread with its 4 Python frames")
        self.assertGreaterEqual(four, 0.8 * sum(thread.values()))
        # ... and counted, as the frames of every sample drained.
        s = ENV.ctl_json("status")
        self.assertGreaterEqual(s["python_frames_recorded"] - before["python_frames_recorded"], 4 * four)
        self.assertLessEqual(s["python_frames_recorded"] - before["python_frames_recorded"],
                             s["python_frames_walked"] - before["python_frames_walked"])
        for st in thread:
            if python_frames(st) == chain:
                self.assertNotIn(EVAL_LOOP, st.split(";"), st)

        # The same interpreter with another build-id: recognized again (another file), pushed.
        other = os.path.join(ENV.tmp, "other", "python3.11")
        os.makedirs(os.path.dirname(other))
        subprocess.run(["python3", FIXTURE, "build-id", PYTHON, other], check=True)
        os.chmod(other, 0o755)
        py2 = self.spawn([other, "-c", SPIN])
        time.sleep(0.5)
        self.assertEqual(ENV.ctl("attach", py2.pid).returncode, 0)
        s = self.wait_status(lambda s: s["python_targets"] == 2, "the other build-id not pushed")
        self.assertEqual(s["python_interpreters"], interpreters + 1)
        self.assertIn(py2.pid, python_entries())
        # ... and its frames walked and named as the original's (its layout from the table and the member table).
        time.sleep(2)
        other_thread = {st: c for st, c in folded(self, ENV, py2.pid).items() if "start_thread" in st}
        other_four = sum(c for st, c in other_thread.items() if python_frames(st) == chain)
        print(f"python: another build-id: {other_four} of {sum(other_thread.values())} samples of the spinning "
              "thread with its 4 Python frames")
        self.assertGreaterEqual(other_four, 0.8 * sum(other_thread.values()))
        self.assertGreater(other_four, 0)

        # A program named python3.11 that is none: counted, no entry, no harm to the others.
        fake = os.path.join(ENV.tmp, "fake", "python3.11")
        os.makedirs(os.path.dirname(fake))
        shutil.copy("/bin/sleep", fake)
        os.chmod(fake, 0o755)
        sleeper = self.spawn([fake, "30"])
        time.sleep(0.3)
        self.assertEqual(ENV.ctl("attach", sleeper.pid).returncode, 0)
        s = self.wait_status(lambda s: s["python_not_interpreters"] >= before["python_not_interpreters"] + 1,
                             "the fake python3.11 not counted")
        self.assertEqual(s["python_targets"], 2)
        self.assertEqual(s["python_unsupported"], before["python_unsupported"])
        self.assertNotIn(sleeper.pid, python_entries())
        # ... and one that runs (vprof-demo named python3.11): profiled as vprof-demo, its native frames only.
        busy_path = os.path.join(ENV.tmp, "fake-busy", "python3.11")
        os.makedirs(os.path.dirname(busy_path))
        shutil.copy(os.environ["VPROF_DEMO"], busy_path)
        busy = ENV.spawn_demo("--seconds", 2, binary=busy_path)
        self.assertEqual(ENV.ctl("attach", busy.pid).returncode, 0)
        ENV.go(busy)
        busy.wait(30)
        functions = ENV.ctl_json("report", busy.pid, "--by", "function")["functions"]
        print(f"python: vprof-demo named python3.11: {[(r['function'], r['module']) for r in functions[:3]]}")
        self.assertEqual((functions[0]["function"], functions[0]["module"]), ("work_alpha", "python3.11"))
        self.assertFalse([r for r in functions if stack_module_is_python(r["module"])])
        self.assertEqual(ENV.ctl_json("status")["python_targets"], 2)
        ENV.ctl("detach", busy.pid)

        # exec(): the interpreter is gone from the new image; its entry goes (the BPF program drops it at the
        # exec; the daemon's count follows when it reads the new image's maps, at its first sample).
        py.stdin.write("exec\n")
        py.stdin.flush()
        s = self.wait_status(lambda s: s["python_targets"] == 1, "the exec()ed target still counted")
        self.assertNotIn(py.pid, python_entries())
        self.assertIn(py2.pid, python_entries())

        # A python3.11 that maps libpython3.11.so (pyenv's, where present: not on CI): the library's load bias added.
        if os.path.exists(PYENV_PYTHON):
            lib = self.spawn([PYENV_PYTHON, "-c", SPIN])
            time.sleep(0.5)
            self.assertEqual(ENV.ctl("attach", lib.pid).returncode, 0)
            self.wait_status(lambda s: s["python_targets"] == 2, "pyenv's python3.11 not pushed")
            entry = python_entries()[lib.pid]
            path, executable = mapping_of(lib.pid, entry["eval_start"])
            self.assertTrue(path.endswith("/libpython3.11.so.1.0") and executable, path)
            self.assertEqual(mapping_of(lib.pid, entry["eval_end"] - 1)[0], path)
            self.assertEqual(ENV.ctl("detach", lib.pid).returncode, 0)
            self.wait_status(lambda s: s["python_targets"] == 1, "pyenv's python3.11 still counted")
            lib.kill()

        # Detach: the entry goes.
        self.assertEqual(ENV.ctl("detach", py2.pid).returncode, 0)
        s = self.wait_status(lambda s: s["python_targets"] == 0, "the detached target still counted")
        self.assertNotIn(py2.pid, python_entries())
        self.assertEqual(s["python_push_failed"], 0)
        text = ENV.ctl("status").stdout
        self.assertIn("interpreters recognized", text)
        print(f"python: status {({k: v for k, v in s.items() if k.startswith('python')})}")
        for p in (py, py2, sleeper):
            ENV.ctl("detach", p.pid)
            p.kill()


class Hostile(vprof_env.TestCase):
    def test_damaged_frame_chains(self):
        """Targets that damage their own frame chains or code objects (tests/workloads/py-hostile-frames.py): each
        damage is counted as its outcome (the walk's, or the daemon's frame it cannot name: [python: unknown]),
        the daemon keeps running, a sound Python target next to them is walked whole, and a native one
        (vprof-demo, attached at the same time) is profiled as it is alone: its hot function, its shares and its
        samples for its CPU time."""
        script = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "workloads", "py-hostile-frames.py")
        before = ENV.ctl_json("status")
        procs = {}
        # Niced: eight spinning targets on two CPUs would leave vprof-demo too few samples for its shares.
        for mode in ("self-loop", "cycle", "wild-code", "not-code", "wild-qualname", "huge-qualname",
                     "huge-linetable"):
            p = subprocess.Popen(["nice", "-n", "19", PYTHON, script, mode], stdout=subprocess.PIPE, text=True)
            ENV.children.append(p)
            self.assertEqual(p.stdout.readline().strip(), "ready", mode)
            procs[mode] = p
        sound = subprocess.Popen(["nice", "-n", "19", PYTHON, "-c", SPIN], stdin=subprocess.PIPE, text=True)
        ENV.children.append(sound)
        truth_path = os.path.join(tempfile.mkdtemp(dir=ENV.tmp), "truth.json")
        demo = ENV.spawn_demo("--seconds", 6, "--report", truth_path)
        time.sleep(0.5)
        for p in list(procs.values()) + [sound, demo]:
            self.assertEqual(ENV.ctl("attach", p.pid).returncode, 0)
        ENV.go(demo)

        def grew(s, key, n=10):
            return s[key] - before[key] >= n
        s = wait_status(self, lambda s: grew(s, "python_walks_bad_frame", 20) and grew(s, "python_walks_faulted") and
                             grew(s, "python_walks_at_depth_limit") and grew(s, "python_walks_complete") and
                             grew(s, "python_frames_unknown", 30),
                             "not every damage counted", timeout=40)
        d = {k: s[k] - before[k] for k in s if k.startswith("python_walks") or k.startswith("python_frames")}
        print(f"python: hostile {d}")
        # Every target still runs (the walk only reads), and the sound one was walked whole.
        for p in list(procs.values()) + [sound]:
            self.assertIsNone(p.poll())
        self.assertEqual(ENV.ctl_json("status")["python_targets"], before["python_targets"] + 8)
        # Each damaged code object is its target's [python: unknown], below its spin() (whose code is sound),
        # as many times as that target's samples through spin().
        for mode in ("wild-qualname", "huge-qualname", "huge-linetable"):
            stacks = folded(self, ENV, procs[mode].pid)
            spinning = sum(c for st, c in stacks.items() if st.endswith(";spin"))
            unknown = sum(c for st, c in stacks.items() if st.endswith(";[python: unknown];spin"))
            print(f"python: hostile {mode}: {unknown} of {spinning} samples in spin() below [python: unknown]")
            self.assertGreater(spinning, 0, mode)
            self.assertEqual(unknown, spinning, mode)
        # The sound one: spin and its three callers of threading.py, no frame unknown.
        stacks = folded(self, ENV, sound.pid)
        chain = ["Thread._bootstrap", "Thread._bootstrap_inner", "Thread.run", "spin"]
        whole = sum(c for st, c in stacks.items() if [f for f in st.split(";") if f in chain] == chain)
        self.assertGreater(whole, 0.8 * sum(c for st, c in stacks.items() if "start_thread" in st))
        self.assertFalse([st for st in stacks if "[python: unknown]" in st])

        # vprof-demo as if alone (test_core's bounds): work_alpha first, each leaf's exclusive share within 3
        # points of its truth (or 3 standard deviations of the sampling), its samples for its CPU time.
        demo.wait(60)
        with open(truth_path) as f:
            truth = json.load(f)
        functions = ENV.ctl_json("report", demo.pid, "--by", "function")
        total = functions["total_samples"]
        rows = {r["function"]: r for r in functions["functions"]}
        self.assertEqual(functions["functions"][0]["function"], "work_alpha")
        expected = truth["cpu_seconds"] * ENV.frequency
        print(f"python: hostile: vprof-demo {total} samples for {expected:.0f} expected; shares " +
              ", ".join(f"{n} {rows[n]['exclusive_percent']:.2f}/{truth['functions'][n]['percent']:.2f}"
                        for n in ("work_alpha", "work_beta", "work_gamma", "work_delta")))
        self.assertLess(abs(total - expected) / expected, 0.15)
        for name in ("work_alpha", "work_beta", "work_gamma", "work_delta"):
            want = truth["functions"][name]["percent"]
            bound = max(3.0, 300 * math.sqrt(want / 100 * (1 - want / 100) / total))
            self.assertLessEqual(abs(rows[name]["exclusive_percent"] - want), bound, name)
        self.assertFalse([r for r in functions["functions"] if stack_module_is_python(r["module"])])

        for p in list(procs.values()) + [sound, demo]:
            ENV.ctl("detach", p.pid)
            p.kill()
        wait_status(self, lambda s: s["python_targets"] == before["python_targets"], "hostile targets still counted")
        self.assertIsNone(ENV.daemon.poll())


PY_MARK = "_[py]"


def stack_module_is_python(module):
    """As vprofctl marks Python frames (client/bus-client-stacks.h)."""
    return module == "[python]" or module.endswith((".py", ".pyw")) or (module.startswith("<") and
                                                                        module.endswith(">"))


def definitions(tree, name):
    """The first lines a code object named name (the last part of its qualified name) of this file may have:
    a def (its first decorator's line if decorated), a class, a lambda or comprehension, the module (line 1)."""
    kinds = {"<lambda>": ast.Lambda, "<listcomp>": ast.ListComp, "<setcomp>": ast.SetComp,
             "<dictcomp>": ast.DictComp, "<genexpr>": ast.GeneratorExp}
    if name == "<module>":
        return {1}
    lines = set()
    for n in ast.walk(tree):
        if kinds.get(name) and isinstance(n, kinds[name]):
            lines.add(n.lineno)
        elif isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)) and n.name == name:
            lines.add(min([n.lineno] + [d.lineno for d in n.decorator_list]))
    return lines


def folded(test, env, pid):
    """report --by stack (folded): {stack: samples}, each Python frame's mark checked and taken off (its module is
    a .py file, or <...> for frozen modules); the native frames keep theirs (_[i], _[k])."""
    stacks = {}
    for line in env.ctl("report", pid, "--by", "stack").stdout.splitlines():
        stack, _, count = line.rpartition(" ")
        frames = stack.split(";")
        for f in frames:
            if f in ("<module>", "outer", "inner", "recursive", "side", "spin", "Thread.run"):
                test.fail(f"{f} without {PY_MARK}: {stack}")
        stack = ";".join(f[:-len(PY_MARK)] if f.endswith(PY_MARK) else f for f in frames)
        stacks[stack] = stacks.get(stack, 0) + int(count)
    return stacks


def listed_samples(listing):
    """go tool pprof -list's flat counts by line (sample counts, -sample_index=samples): {line: flat}."""
    by_line = {}
    for line in listing.splitlines():
        m = re.match(r"\s*(\.|\d+)\s+(\.|\d+)\s+(\d+):", line)
        if m and m.group(1) != ".":
            by_line[int(m.group(3))] = by_line.get(int(m.group(3)), 0) + int(m.group(1))
    return by_line


KNOWN_SPLIT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "workloads", "py-known-split.py")
EVAL_LOOP = "_PyEval_EvalFrameDefault"
UNKNOWN = "[python: unknown]"  # a frame whose code object could not be read (daemon/drain-python.h)


def known_split(test, env, seconds):
    """py-known-split.py run by /usr/bin/python3.11, attached once running: its report (JSON), its folded stacks,
    its truth, its script's real path."""
    p = subprocess.Popen([PYTHON, KNOWN_SPLIT], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    env.children.append(p)
    time.sleep(0.5)
    test.assertEqual(env.ctl("attach", p.pid).returncode, 0)
    time.sleep(seconds)
    report = env.ctl_json("report", p.pid, "--source")
    pprof_path = os.path.join(tempfile.mkdtemp(dir=env.tmp), "profile.pb.gz")
    test.assertEqual(env.ctl("report", p.pid, "--format", "pprof", "-o", pprof_path).returncode, 0)
    report["pprof_path"] = pprof_path
    # The exporter's pprof reads no DWARF (GetFunctionSources): the Python functions' files and lines come with
    # GetProfile's reply, from their code objects.
    exporter = exporter_env.Exporter(env)
    try:
        status, _, body = exporter.get(f"/debug/pprof/profile?seconds=60&target={p.pid}")
    finally:
        exporter.stop()
    test.assertEqual(status, 200, body[:200])
    report["exporter_pprof_path"] = os.path.join(os.path.dirname(pprof_path), "exporter.pb.gz")
    with open(report["exporter_pprof_path"], "wb") as f:
        f.write(body)
    stacks = folded(test, env, p.pid)
    report["json_stacks"] = env.ctl_json("report", p.pid, "--by", "stack")
    svg_path = os.path.join(tempfile.mkdtemp(dir=env.tmp), "flame.svg")
    test.assertEqual(env.ctl("report", p.pid, "--format", "svg", "-o", svg_path).returncode, 0)
    with open(svg_path) as f:
        report["svg"] = f.read()
    p.stdin.write("stop\n")
    p.stdin.flush()
    report["threads"] = env.ctl_json("report", p.pid, "--by", "thread")
    report["top"] = env.ctl("top", p.pid, "--batch", "--iterations", 1).stdout
    report["pid"] = p.pid
    truth = json.loads(p.stdout.readline())
    p.wait(timeout=10)
    env.ctl("detach", p.pid)
    return report, stacks, truth, KNOWN_SPLIT  # co_filename: the path as python3.11 was given it


class Decoded(vprof_env.TestCase):
    def check_functions(self, report, truth, script):
        rows = {r["function"]: r for r in report["functions"] if r["module"] == script}
        for name, line in truth["lines"].items():
            self.assertIn(name, rows, f"{name} not in {sorted(rows)}")
            # Its source: the .py file and its def's line (co_firstlineno), from the code object.
            self.assertEqual(rows[name].get("source"), f"{script}:{line}")
        self.assertIn("<module>", rows)
        return rows

    def test_decoded(self):
        """The Python frames named by their code objects: qualified name, the .py file as their module; each
        evaluation-loop native frame replaced by the run of Python frames it runs."""
        before = ENV.ctl_json("status")
        report, stacks, truth, script = known_split(self, ENV, 4)
        rows = self.check_functions(report, truth, script)
        total = sum(stacks.values())
        for name in ("outer", "inner", "recursive", "side", "<module>"):
            r = rows[name]
            print(f"python: {name:<10} inclusive {r['inclusive_percent']:6.2f}  "
                  f"exclusive {r['exclusive_percent']:6.2f}")
        # Bytecode time is the Python functions' own: the loops run in them.
        self.assertGreater(rows["inner"]["exclusive_percent"], 10)
        # The interpreter's loop is gone from the tables (samples whose walk failed keep it: a few at most).
        loop = [r for r in report["functions"] if r["function"] == EVAL_LOOP]
        self.assertLess(loop[0]["inclusive_percent"] if loop else 0, 5, loop)
        # Caller order, the native frames below: ...;Py_BytesMain;...;<module>;outer;inner.
        nested = sum(c for st, c in stacks.items() if ";<module>;outer;inner" in st and "Py_BytesMain" in
                     st.split(";<module>;")[0])
        print(f"python: {nested} of {total} samples in <module>;outer;inner under Py_BytesMain")
        self.assertGreater(nested, 0.1 * total)
        deep = sum(c for st, c in stacks.items() if ";<module>;" + ";".join(["recursive"] * 5) in st)
        self.assertGreater(deep, 0)
        self.assertGreater(sum(c for st, c in stacks.items() if st.endswith("side;inner") or ";side;inner;" in st), 0)
        s = ENV.ctl_json("status")
        self.assertGreater(s["python_frames_recorded"] - before["python_frames_recorded"], total)
        # None of this live, sound target's frames unknown (the daemon's counter may also grow by the last records
        # of an earlier test's target, drained after its exit: printed, not asserted).
        print(f"python: frames unknown in the daemon meanwhile: "
              f"{s['python_frames_unknown'] - before['python_frames_unknown']}")
        self.assertNotIn(UNKNOWN, [r["function"] for r in report["functions"]])

        # pprof: each Python function with its file, its def line as its start and each sample at the line it ran,
        # so that go tool pprof -lines and -list show them.
        go = shutil.which("go")
        if not go:
            vprof_env.skip_or_fail("needs go (Debian's golang-go) for go tool pprof")
        home = tempfile.mkdtemp(dir=ENV.tmp)
        genv = dict(os.environ, HOME=home, GOCACHE=os.path.join(home, "gocache"), PPROF_TMPDIR=home)

        def pprof(*args, path=report["pprof_path"]):
            r = subprocess.run([go, "tool", "pprof", *args, path], env=genv, capture_output=True, text=True,
                               timeout=120)
            self.assertEqual(r.returncode, 0, r.stderr)
            return r.stdout
        lines = pprof("-top", "-lines", "-nodecount=200")
        print("python: go tool pprof -top -lines:\n" + "\n".join(lines.splitlines()[:12]))
        exported = pprof("-top", "-lines", "-nodecount=200", path=report["exporter_pprof_path"])
        print("python: the exporter's, go tool pprof -top -lines:\n" + "\n".join(exported.splitlines()[:8]))
        # -lines: each function at the lines its samples ran, none before its def (pprof cleans the path).
        for name, line in truth["lines"].items():
            for listing in (lines, exported):
                at = [int(n) for n in re.findall(f" {name} {re.escape(os.path.normpath(script))}:(\\d+)", listing)]
                self.assertTrue(at, name)
                self.assertGreaterEqual(min(at), line, name)
        # top: the same functions, in their .py module.
        print("python: vprofctl top --batch:\n" + "\n".join(report["top"].splitlines()[:12]))
        self.assertTrue(any(line.split()[:2] == ["inner", script] for line in report["top"].splitlines()),
                        report["top"])
        # The marks of Python frames: "python" in the JSON stacks, [python] in the flame graph's titles.
        kinds = {(f["function"], f["python"]) for st in report["json_stacks"]["stacks"] for f in st["frames"]}
        self.assertIn(("inner", True), kinds)
        self.assertIn(("Py_BytesMain", False), kinds)
        self.assertIn(f"inner ({script}) [python]", report["svg"])
        listed = pprof("-list", "^inner$")
        print("python: go tool pprof -list ^inner$:\n" + "\n".join(listed.splitlines()[:12]))
        self.assertIn("def inner(", listed)
        # Each sample on the line its instruction was at (GetProfile's lines): inner's time in its loop, the two
        # lines 3 and 4 after its def, the same from the exporter.
        for path in (report["pprof_path"], report["exporter_pprof_path"]):
            by_line = listed_samples(pprof("-sample_index=samples", "-list", "^inner$", path=path))
            loop = sum(by_line.get(truth["lines"]["inner"] + k, 0) for k in (3, 4))
            print(f"python: inner's samples by line {sorted(by_line.items())}: {loop} in the loop")
            self.assertGreater(sum(by_line.values()), 0)
            self.assertGreaterEqual(loop, 0.8 * sum(by_line.values()), by_line)

    def check_accuracy(self, env, seconds):
        """Every Python function's inclusive percent within 2 points of the truth the workload measured with its
        threads' CPU clocks (or of 3 standard deviations of the sampling, where fewer samples make that more), the
        threads' split the same; the samples through the evaluation loop with Python frames; every name a real
        def of the script at its line (its ast)."""
        report, stacks, truth, script = known_split(self, env, seconds)
        rows = self.check_functions(report, truth, script)
        total = report["total_samples"]
        cpu = sum(truth["threads"].values())
        want = {name: 100 * t / cpu for name, t in truth["functions"].items()}
        want["<module>"] = 100 * truth["threads"]["main"] / cpu
        threads = {r["tid"]: r["inclusive_percent"] for r in report["threads"]["threads"]}
        main = threads.pop(report["pid"], 0.0)
        got = {name: rows[name]["inclusive_percent"] for name in want}
        print(f"python: {env.frequency} Hz, {total} samples, {seconds} s: function vprof truth (inclusive %)")
        worst = 0.0
        for name in sorted(want):
            bound = max(2.0, 300 * math.sqrt(want[name] / 100 * (1 - want[name] / 100) / total))
            print(f"python:   {name:<10} {got[name]:6.2f} {want[name]:6.2f}  (bound {bound:.2f})")
            self.assertLessEqual(abs(got[name] - want[name]), bound, name)
            worst = max(worst, abs(got[name] - want[name]))
        main_truth = 100 * truth["threads"]["main"] / cpu
        print(f"python:   main thread {main:6.2f} {main_truth:6.2f}; worst function {worst:.2f} points")
        self.assertLessEqual(abs(main - main_truth), max(2.0, 300 * math.sqrt(0.25 / total)))
        # Through the loop: a sample whose stack still has _PyEval_EvalFrameDefault ran Python code without
        # its frames (the option is off).
        python = sum(c for st, c in stacks.items() if any(f in rows for f in st.split(";")))
        loop = sum(c for st, c in stacks.items() if EVAL_LOOP in st.split(";"))
        print(f"python:   {python} samples with Python frames, {loop} with the loop's frame left")
        self.assertGreaterEqual(python, 0.95 * (python + loop))
        # Every name a def of the script, at its line.
        with open(script) as f:
            defs = {n.name: n.lineno for n in ast.walk(ast.parse(f.read())) if isinstance(n, ast.FunctionDef)}
        for name, r in rows.items():
            line = 1 if name == "<module>" else defs.get(name.rpartition(".")[2])
            self.assertEqual(r.get("source"), f"{script}:{line}", name)

    def test_compileall(self):
        """A real program as it is: python3.11 -m compileall -f over a copy of stdlib packages (30 passes, some 9 s),
        attached once running: at least 95% of the samples through the evaluation loop carry Python frames, and
        every Python function named is a real def (or class, lambda, comprehension, module) of its file at its line."""
        lib = os.path.join(tempfile.mkdtemp(dir=ENV.tmp), "lib")
        os.makedirs(lib)
        for name in ("email", "json", "asyncio", "unittest", "xml", "http", "logging", "concurrent", "importlib"):
            shutil.copytree(os.path.join("/usr/lib/python3.11", name), os.path.join(lib, name))
        p = subprocess.Popen([PYTHON, "-m", "compileall", "-f", "-q"] + [lib] * 30, stdout=subprocess.DEVNULL)
        ENV.children.append(p)
        time.sleep(0.5)
        self.assertEqual(ENV.ctl("attach", p.pid).returncode, 0)
        time.sleep(4)
        report = ENV.ctl_json("report", p.pid, "--source")
        stacks = folded(self, ENV, p.pid)
        self.assertIsNone(p.poll(), "compileall ended before the report: too fast a machine for this test")
        # Detached before it is killed: the records drained after its exit could not read code objects the
        # daemon had not met yet ([python: unknown]), which the other tests count as none.
        ENV.ctl("detach", p.pid)
        p.kill()
        rows = [r for r in report["functions"] if stack_module_is_python(r["module"])]
        names = {r["function"] for r in rows}
        python = sum(c for st, c in stacks.items() if any(f in names for f in st.split(";")))
        loop = sum(c for st, c in stacks.items() if EVAL_LOOP in st.split(";") and
                   not any(f in names for f in st.split(";")))
        print(f"python: compileall: {report['total_samples']} samples, {python} with Python frames, {loop} through "
              f"the loop without; {len(rows)} Python functions")
        self.assertGreater(python, 0.5 * report["total_samples"])
        self.assertGreaterEqual(python, 0.95 * (python + loop))
        # Each function a definition of its file at its line (3.11: a decorated def's first line is its first
        # decorator's), by the file's ast; a frozen module's (<frozen posixpath>) by the stdlib file it was
        # frozen from.
        checked = 0
        trees = {}
        for r in rows:
            module, name, source = r["module"], r["function"], r.get("source")
            if module == "[python]":
                continue
            self.assertTrue(source and source.startswith(module + ":"), r)
            line = int(source.rpartition(":")[2])
            path = module
            if module.startswith("<frozen "):
                path = os.path.join("/usr/lib/python3.11", *module[8:-1].split(".")) + ".py"
            if path not in trees:
                with open(path, "rb") as f:
                    trees[path] = ast.parse(f.read())
            self.assertIn(line, definitions(trees[path], name.rpartition(".")[2]), r)
            checked += 1
        print(f"python: compileall: {checked} functions checked against their files' ast: "
              f"{sorted((r['function'], r['module']) for r in rows)[:30]}")
        self.assertGreaterEqual(checked, 0.9 * len(rows))

    def test_accuracy_99hz(self):
        self.check_accuracy(ENV, 25)

    def test_accuracy_999hz(self):
        self.check_accuracy(self.start_env(frequency=999), 8)

    def test_interpreter_frames(self):
        """PythonInterpreterFrames=yes keeps the evaluation loop's frames, below the Python frames they run."""
        env = self.start_env(extra_args=["--python-interpreter-frames"])
        report, stacks, truth, script = known_split(self, env, 3)
        self.check_functions(report, truth, script)
        loop = [r for r in report["functions"] if r["function"] == EVAL_LOOP]
        self.assertTrue(loop)
        self.assertGreater(loop[0]["inclusive_percent"], 90)
        # 3.11 runs a Python call from Python in the same activation: <module>, outer and inner are one run, all
        # above (callees of) the loop's frame; the thread's side() is a run of its own, after C's call.
        total = sum(stacks.values())
        below = sum(c for st, c in stacks.items() if f";{EVAL_LOOP};<module>;outer" in st or
                    f";{EVAL_LOOP};side;inner" in st)
        print(f"python: {below} of {total} samples with the loop's frame below its run")
        self.assertGreater(below, 0.3 * total, list(stacks)[:3])


SHAPES = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "workloads", "py-shapes.py")


class Shapes(vprof_env.TestCase):
    def test_generators_coroutines_callbacks(self):
        """Stacks that are not plain calls, in caller order (tests/workloads/py-shapes.py): a generator under the
        frame that resumed it (through C's sum()), a coroutine under the one awaiting it, under asyncio's loop,
        and a key function under the C sort that calls it and that sort's Python caller; every name a real
        definition of its file at its line."""
        p = subprocess.Popen([PYTHON, SHAPES], stdin=subprocess.PIPE, text=True)
        ENV.children.append(p)
        time.sleep(0.5)
        self.assertEqual(ENV.ctl("attach", p.pid).returncode, 0)
        time.sleep(3)
        raw = ENV.ctl("report", p.pid, "--by", "stack").stdout
        report = ENV.ctl_json("report", p.pid, "--source", "-n", "200")
        p.stdin.write("stop\n")
        p.stdin.flush()
        p.wait(timeout=10)
        ENV.ctl("detach", p.pid)
        stacks = {}
        for line in raw.splitlines():
            stack, _, n = line.rpartition(" ")
            stacks[tuple(stack.split(";"))] = int(n)
        total = sum(stacks.values())
        self.assertGreater(total, 100)

        def py(name):
            return name + PY_MARK

        def in_order(frames, *names):
            """names in frames, each after the one before it."""
            at = -1
            for name in names:
                if name not in frames[at + 1:]:
                    return False
                at = frames.index(name, at + 1)
            return True

        shapes = {
            # the generator's own activation (resumed by C's sum()) above its consumer's run
            "generator": (py("numbers"), (py("main"), py("consume"), py("numbers"))),
            # awaited by outer_task; both run by the event loop's Task step (C) from its Python loop
            "coroutine": (py("inner_task"), (py("BaseEventLoop._run_once"), py("outer_task"), py("inner_task"))),
            # the key function called by the C sort, called by sort_by_key
            "callback": (py("sort_key"), (py("sort_by_key"), py("sort_key"))),
        }
        for shape, (inner, order) in shapes.items():
            with_inner = {st: n for st, n in stacks.items() if inner in st}
            right = sum(n for st, n in with_inner.items() if in_order(st, *order))
            got = sum(with_inner.values())
            print(f"python: {shape}: {got} of {total} samples in {inner}, {right} of them in the order "
                  f"{';'.join(order)}")
            self.assertGreater(got, 0.05 * total, shape)
            self.assertGreaterEqual(right, 0.95 * got, (shape, list(with_inner)[:3]))
        # Native frames between a Python caller and the Python function C calls back: the sort's.
        between = [st[st.index(py("sort_by_key")) + 1:st.index(py("sort_key"))] for st in stacks
                   if in_order(st, py("sort_by_key"), py("sort_key"))]
        self.assertTrue(all(f and not f[0].endswith(PY_MARK) for f in between), between[:3])
        self.assertTrue(any("sort" in name for f in between for name in f), between[:3])
        # Every Python function of the script: a definition at its source's line.
        script = os.path.normpath(SHAPES)
        with open(SHAPES) as f:
            tree = ast.parse(f.read())
        rows = [r for r in report["functions"] if r["module"] in (SHAPES, script)]
        self.assertGreaterEqual({r["function"] for r in rows}, {"numbers", "consume", "inner_task", "outer_task",
                                                                 "sort_key", "sort_by_key", "burn", "main"})
        for r in rows:
            line = int(r["source"].rpartition(":")[2])
            self.assertIn(line, definitions(tree, r["function"].rpartition(".")[2]), r)


THREADS = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "workloads", "py-threads.py")


def threads_cpu(pid):
    """{tid: utime + stime in clock ticks} of every thread of pid, from the kernel (/proc/PID/task/TID/stat)."""
    ticks = {}
    for tid in os.listdir(f"/proc/{pid}/task"):
        try:
            with open(f"/proc/{pid}/task/{tid}/stat") as f:
                fields = f.read().rpartition(")")[2].split()
        except FileNotFoundError:
            continue
        ticks[int(tid)] = int(fields[11]) + int(fields[12])  # fields 14 and 15 of stat(5), after the comm
    return ticks


class Threads(vprof_env.TestCase):
    def test_thread_pool(self):
        """A multi-threaded real program (tests/workloads/py-threads.py: a ThreadPoolExecutor of three workers
        running this file's and the stdlib's pure-Python functions, a ticker thread, the main thread feeding them),
        attached once running, at 999 Hz: at least 95% of the samples through the evaluation loop carry Python
        frames, every Python function is a def of its file at its line (stdlib files too), and each
        thread's share of the samples is its share of the CPU time the kernel counted."""
        env = self.start_env(frequency=999)
        before = env.ctl_json("status")
        p = subprocess.Popen([PYTHON, THREADS], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
        env.children.append(p)
        self.assertEqual(p.stdout.readline().strip(), "ready")
        cpu0 = threads_cpu(p.pid)
        self.assertEqual(env.ctl("attach", p.pid).returncode, 0)
        time.sleep(5)
        report = env.ctl_json("report", p.pid, "--source")
        stacks = folded(self, env, p.pid)
        threads = env.ctl_json("report", p.pid, "--by", "thread")["threads"]
        cpu1 = threads_cpu(p.pid)
        after = env.ctl_json("status")
        self.assertIsNone(p.poll())
        env.ctl("detach", p.pid)  # before it ends: see test_compileall
        p.stdin.write("stop\n")
        p.stdin.flush()
        p.wait(timeout=20)

        rows = [r for r in report["functions"] if stack_module_is_python(r["module"])]
        names = {r["function"] for r in rows}
        python = sum(c for st, c in stacks.items() if any(f in names for f in st.split(";")))
        loop = sum(c for st, c in stacks.items() if EVAL_LOOP in st.split(";") and
                   not any(f in names for f in st.split(";")))
        d = {k: after[k] - before[k] for k in after if k.startswith("python_walks") or k.startswith("python_frames")}
        print(f"python: threads: {report['total_samples']} samples, {python} with Python frames, {loop} through the "
              f"loop without; {len(rows)} Python functions; status {d}")
        self.assertGreaterEqual(python, 0.95 * (python + loop))
        self.assertGreater(python, 0.9 * report["total_samples"])
        self.assertNotIn(UNKNOWN, [r["function"] for r in report["functions"]])  # d's counter is the daemon's
        # The pool's machinery and the work, each in its own file: this script's, concurrent.futures' and
        # threading's, fractions' and textwrap's.
        modules = {os.path.basename(r["module"]) for r in rows}
        for f in ("py-threads.py", "thread.py", "threading.py", "fractions.py", "textwrap.py"):
            self.assertIn(f, modules)
        for name in ("checksum", "harmonic", "wrap", "task", "ticker", "_worker", "_WorkItem.run",
                     "Fraction.__new__", "TextWrapper._wrap_chunks"):
            self.assertIn(name, names)
        # Each a definition of its file at its line, by the file's ast.
        trees = {}
        for r in rows:
            module, name, source = r["module"], r["function"], r.get("source")
            if module.startswith("<frozen "):
                module = os.path.join("/usr/lib/python3.11", *module[8:-1].split(".")) + ".py"
            elif module.startswith("<"):
                print(f"python: threads: not checked, no file: {r}")
                continue
            self.assertTrue(source and source.rpartition(":")[0] in (r["module"], module), r)
            if module not in trees:
                with open(module, "rb") as f:
                    trees[module] = ast.parse(f.read())
            self.assertIn(int(source.rpartition(":")[2]), definitions(trees[module], name.rpartition(".")[2]), r)
        print(f"python: threads: {len(rows)} functions checked against their files' ast: "
              f"{sorted(names)[:40]}")

        # The thread split: each thread's share of the samples against its share of the CPU ticks it got
        # while attached (the ticks are 10 ms: some 500 of them in all, half a point).
        ticks = {tid: cpu1[tid] - cpu0.get(tid, 0) for tid in cpu1}
        total_ticks = sum(ticks.values())
        total = report["total_samples"]
        got = {t["tid"]: t["inclusive_percent"] for t in threads}
        self.assertGreaterEqual(len([t for t in ticks if ticks[t] > 0.05 * total_ticks]), 4, ticks)
        print(f"python: threads: tid vprof% cpu% ({total} samples, {total_ticks} ticks)")
        for tid in sorted(ticks):
            want = 100 * ticks[tid] / total_ticks
            bound = max(3.0, 300 * math.sqrt(want / 100 * (1 - want / 100) / total))
            print(f"python:   {tid} {got.get(tid, 0.0):6.2f} {want:6.2f} (bound {bound:.2f})")
            self.assertLessEqual(abs(got.get(tid, 0.0) - want), bound, tid)
        self.assertLessEqual(set(got), set(ticks))


def setUpModule():
    global ENV
    ENV = vprof_env.start_module_env()


if __name__ == "__main__":
    vprof_env.main()
