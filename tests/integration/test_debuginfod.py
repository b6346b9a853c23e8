#!/usr/bin/env python3
# SPDX-License-Identifier: LGPL-2.1-or-later
"""Debug files downloaded from a debuginfod server, through the real daemon: vprof-demo stripped of its .symtab,
its debug file only in a directory that a real debuginfod server (started here on localhost) serves. And a
server that accepts connections and never answers: queries still answer at once, and the timeout fires."""
import os
import re
import shutil
import socket
import subprocess
import sys
import tempfile
import threading
import time
import urllib.error
import urllib.request

import vprof_env

MODULE = "vprof-demo-stripped"
# Liveness bound of a query while a download hangs: generous, this is not a measure of speed.
LIVENESS_SEC = 10


def build_id(path):
    out = subprocess.run(["readelf", "-n", path], capture_output=True, text=True, check=True).stdout
    return re.search(r"Build ID: ([0-9a-f]+)", out).group(1)


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class DebuginfodServer:
    """debuginfod -F over a directory holding only vprof-demo's debug file."""

    def __init__(self, tmp):
        self.dir = os.path.join(tmp, "served")
        os.makedirs(self.dir)
        shutil.copy(os.environ["VPROF_DEMO_DEBUG"], os.path.join(self.dir, "vprof-demo.debug"))
        self.port = free_port()
        self.log = open(os.path.join(tmp, "debuginfod.log"), "w")
        self.proc = subprocess.Popen(["debuginfod", "-F", self.dir, "-p", str(self.port), "-d",
                                      os.path.join(tmp, "debuginfod.sqlite")],
                                     stdout=self.log, stderr=self.log)
        self.url = f"http://127.0.0.1:{self.port}"

    def wait_indexed(self, bid, timeout=60):
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                raise RuntimeError(f"debuginfod exited with {self.proc.returncode}")
            try:
                with urllib.request.urlopen(f"{self.url}/buildid/{bid}/debuginfo", timeout=5) as r:
                    if r.status == 200:
                        return
            except (urllib.error.URLError, ConnectionError, socket.timeout):
                pass
            time.sleep(0.2)
        raise RuntimeError("debuginfod did not index the debug file")

    def stop(self):
        self.proc.terminate()
        try:
            self.proc.wait(10)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()
        self.log.close()


class SilentServer:
    """Accepts connections, reads the requests and never answers."""

    def __init__(self):
        self.sock = socket.socket()
        self.sock.bind(("127.0.0.1", 0))
        self.sock.listen(16)
        self.url = f"http://127.0.0.1:{self.sock.getsockname()[1]}"
        self.connections = []
        self.thread = threading.Thread(target=self._accept, daemon=True)
        self.thread.start()

    def _accept(self):
        while True:
            try:
                conn, _ = self.sock.accept()
            except OSError:
                return
            self.connections.append(conn)

    def stop(self):
        self.sock.close()
        for c in self.connections:
            c.close()


def start_env(url, timeout_sec):
    env = vprof_env.VprofEnv(extra_args=[f"--debuginfod-urls={url}", f"--debuginfod-timeout={timeout_sec}"])
    # A debug directory of our own: the machine's /usr/lib/debug must not name the demo first. And no proxy
    # between the daemon and localhost.
    env.extra_args.append(f"--debug-directory={os.path.join(env.tmp, 'no-debug')}")
    env.daemon_env.update(CACHE_DIRECTORY=os.path.join(env.tmp, "cache"), NO_PROXY="127.0.0.1",
                          no_proxy="127.0.0.1")
    for k in ("http_proxy", "https_proxy", "HTTP_PROXY", "HTTPS_PROXY", "DEBUGINFOD_URLS"):
        env.daemon_env.pop(k, None)
    env.start()
    return env


def module_symbols(env, pid):
    modules = {m["module"]: m for m in env.ctl_json("report", pid, "--by", "module")["modules"]}
    return modules.get(MODULE, {}).get("symbols") or {}


def wait_for(what, cond, timeout):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        v = cond()
        if v:
            return v
        time.sleep(0.1)
    raise AssertionError(f"timed out after {timeout} s waiting for {what}")


class Downloaded(vprof_env.TestCase):
    def setUp(self):
        self.tmp = tempfile.mkdtemp(prefix="vprof-debuginfod-")
        self.server = DebuginfodServer(self.tmp)
        self.env = None

    def tearDown(self):
        problems = self.env.stop() if self.env else []
        self.server.stop()
        shutil.rmtree(self.tmp, ignore_errors=True)
        self.assertFalse(problems, "\n".join(problems))

    def test_names_from_downloaded_debug_file(self):
        binary = os.environ["VPROF_DEMO_STRIPPED"]
        bid = build_id(binary)
        self.server.wait_indexed(bid)
        self.env = start_env(self.server.url, 10)
        demo = self.env.spawn_demo("--seconds", 6, binary=binary)
        self.assertEqual(self.env.ctl("attach", demo.pid).returncode, 0)
        start = time.monotonic()
        self.env.go(demo)
        quality = wait_for("source debuginfod", lambda: (lambda q: q if q.get("source") == "debuginfod" else None)(
            module_symbols(self.env, demo.pid)), 30)
        named_after = time.monotonic() - start
        demo.wait(60)

        report = self.env.ctl_json("report", demo.pid)
        functions = report["functions"]
        self.assertEqual(functions[0]["function"], "work_alpha", functions[:5])
        self.assertEqual(functions[0]["module"], MODULE)
        names = {r["function"] for r in functions if r["module"] == MODULE}
        for name in ("work_beta", "work_gamma", "run_round", "main"):
            self.assertIn(name, names)

        self.assertEqual(quality["build_id"], bid)
        self.assertTrue(quality["debug_file"].startswith(os.path.join(self.env.tmp, "cache", "debuginfod")),
                        quality)
        self.assertGreater(quality["symbols"], 5)
        self.assertIsNone(quality["debuginfod"])
        text = self.env.ctl("report", demo.pid, "--by", "module").stdout
        self.assertRegex(text, rf"{re.escape(MODULE)}\s.*\sdebuginfod\s")
        log = self.env.log_text()
        self.assertIn(f"Debug file of {binary} (build-id {bid}) from debuginfod", log)
        print(f"\ndebuginfod: names from the downloaded debug file {named_after:.2f} s after the workload "
              f"started; work_alpha {functions[0]['exclusive_percent']:.1f}% of {report['total_samples']} samples",
              end="", file=sys.stderr)


class SilentServerCases(vprof_env.TestCase):
    def setUp(self):
        self.server = SilentServer()
        self.env = None

    def tearDown(self):
        # The daemon must stop at once, a download hanging or not (stop() counts a kill as a problem).
        start = time.monotonic()
        problems = self.env.stop() if self.env else []
        stop_sec = time.monotonic() - start
        self.server.stop()
        self.assertFalse(problems, "\n".join(problems))
        print(f"\ndebuginfod: the daemon stopped in {stop_sec:.2f} s", end="", file=sys.stderr)

    def attach_demo(self, seconds):
        demo = self.env.spawn_demo("--seconds", seconds, binary=os.environ["VPROF_DEMO_STRIPPED"])
        self.assertEqual(self.env.ctl("attach", demo.pid).returncode, 0)
        self.env.go(demo)
        return demo

    def test_queries_answer_while_download_hangs(self):
        self.env = start_env(self.server.url, 60)
        demo = self.attach_demo(8)
        wait_for("a connection to the silent server", lambda: self.server.connections, 10)
        times = {}
        for verb in (["report", demo.pid], ["status"], ["list"], ["report", demo.pid, "--by", "module"]):
            start = time.monotonic()
            r = self.env.ctl(*verb, timeout=LIVENESS_SEC)
            times[verb[0] if len(verb) < 3 else "report --by module"] = time.monotonic() - start
            self.assertEqual(r.returncode, 0, r.stderr)
        quality = module_symbols(self.env, demo.pid)
        self.assertEqual(quality["debuginfod"], "pending", quality)
        self.assertIn(quality["source"], ("dynsym", "none"), quality)
        text = self.env.ctl("report", demo.pid, "--by", "module").stdout
        self.assertIn("debuginfod pending", text)
        self.assertIn("being downloaded from debuginfod", text)
        # Meanwhile the frames are named as without debuginfod: by offset in the module. (Samples come in at
        # 99 Hz, slower on a busy machine: waited for, not counted on.)
        report = wait_for("samples", lambda: (lambda r: r if r["total_samples"] >= 20 else None)(
            self.env.ctl_json("report", demo.pid)), 30)
        names = {r["function"] for r in report["functions"] if r["module"] == MODULE}
        self.assertNotIn("work_alpha", names)
        self.assertTrue(any(n.startswith(MODULE + "+0x") for n in names), names)
        print("\ndebuginfod: while the download hangs: " +
              ", ".join(f"{k} {v * 1000:.0f} ms" for k, v in times.items()), end="", file=sys.stderr)

    def test_timeout_fires_once(self):
        self.env = start_env(self.server.url, 2)
        demo = self.attach_demo(10)
        start = time.monotonic()
        wait_for("a connection to the silent server", lambda: self.server.connections, 10)
        wait_for("debuginfod failed", lambda: module_symbols(self.env, demo.pid).get("debuginfod") == "failed", 15)
        failed_after = time.monotonic() - start
        # Not asked again for later samples of the module.
        time.sleep(2)
        # libc may be asked for too (Debian's has no .symtab): the demo's own line counts.
        lines = [line for line in self.env.log_text().splitlines() if "No debug file of" in line and MODULE in line]
        self.assertEqual(len(lines), 1, lines)
        self.assertIn("no answer within 2 s", lines[0])
        quality = module_symbols(self.env, demo.pid)
        self.assertIn(quality["source"], ("dynsym", "none"), quality)
        text = self.env.ctl("report", demo.pid, "--by", "module").stdout
        self.assertIn("debuginfod failed", text)
        demo.wait(60)
        print(f"\ndebuginfod: reported failed {failed_after:.1f} s after the first connection (timeout 2 s)",
              end="", file=sys.stderr)


def setUpModule():
    if shutil.which("debuginfod") is None:
        # tools/install-deps.sh installs it: a machine that ran it has it.
        vprof_env.skip_or_fail("debuginfod (the server) is not installed")
    vprof_env.probe_module()


if __name__ == "__main__":
    vprof_env.main()
