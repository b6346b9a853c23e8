#!/usr/bin/env python3
# SPDX-License-Identifier: LGPL-2.1-or-later
"""vprof-exporter against a real vprofd: every endpoint's answer checked against vprofctl's for the same target
(one that has exited, so that its counts are frozen), the malformed requests each with its status and its one
line, the limits (connections, the request deadline) and vprofd going away and coming back."""
import json
import os
import re
import shutil
import socket
import subprocess
import sys
import time
import unittest

import vprof_env
from exporter_env import Exporter, read_profile

ENV = None


def setUpModule():
    global ENV
    ENV = vprof_env.start_module_env(frequency=499)


def wait_exited(pid, timeout=30):
    """Until the target has exited and its last second is closed into its windows (a window then counts every
    sample since the attach): from then on its answers are fixed."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        targets = {t["pid"]: t for t in ENV.ctl_json("list")["targets"]}
        if targets.get(pid, {}).get("state") == "exited" and \
                ENV.ctl_json("report", pid, "--window", "600s")["total_samples"] == \
                ENV.ctl_json("report", pid)["total_samples"]:
            return
        time.sleep(0.2)
    raise AssertionError(f"target {pid} did not exit, or its windows never counted all of its samples")


def metrics(text):
    """{(name, labels-string): value} of a Prometheus text answer, every sample line; checks the HELP and TYPE
    of each name."""
    values, typed = {}, set()
    for line in text.splitlines():
        if line.startswith("# TYPE "):
            typed.add(line.split()[2])
            continue
        if line.startswith("#"):
            continue
        m = re.fullmatch(r'([a-z_]+)(\{.*\})? (\d+)', line)
        assert m, f"not a sample line: {line!r}"
        assert m.group(1) in typed, f"{m.group(1)} has no TYPE line"
        values[(m.group(1), m.group(2) or "")] = int(m.group(3))
    return values


class Endpoints(vprof_env.TestCase):
    """One target that ran 2 s and exited: its answers are fixed."""

    @classmethod
    def setUpClass(cls):
        p = ENV.spawn_demo("--seconds", 2)
        r = ENV.ctl("attach", p.pid)
        assert r.returncode == 0, r.stderr
        ENV.go(p)
        p.wait(30)
        cls.pid = p.pid
        wait_exited(p.pid)
        cls.exporter = Exporter(ENV)

    @classmethod
    def tearDownClass(cls):
        problems = cls.exporter.stop()
        ENV.ctl("detach", cls.pid)
        if problems:
            raise AssertionError("\n".join(problems))

    def test_targets(self):
        status, headers, body = self.exporter.get("/targets")
        self.assertEqual(status, 200)
        self.assertEqual(headers["Content-Type"], "application/json")
        self.assertEqual(headers["X-Content-Type-Options"], "nosniff")
        listed = ENV.ctl_json("list")["targets"]
        entries = json.loads(body)
        self.assertEqual(sorted(e["labels"]["__param_target"] for e in entries),
                         sorted(str(t["pid"]) for t in listed))
        mine = [e for e in entries if e["labels"]["__param_target"] == str(self.pid)][0]
        self.assertEqual(mine["targets"], [f"127.0.0.1:{self.exporter.port}"])
        target = [t for t in listed if t["pid"] == self.pid][0]
        self.assertEqual(mine["labels"]["pid"], str(self.pid))
        self.assertEqual(mine["labels"]["comm"], target["command"])
        self.assertEqual(mine["labels"]["state"], "exited")
        self.assertEqual(mine["labels"]["frequency"], str(target["frequency"]))
        print(f"/targets: {body.decode()}")

    def test_metrics(self):
        before = ENV.ctl_json("status")
        status, headers, body = self.exporter.get("/metrics")
        after = ENV.ctl_json("status")
        self.assertEqual(status, 200)
        self.assertEqual(headers["Content-Type"], "text/plain; version=0.0.4; charset=utf-8")
        m = metrics(body.decode())
        # Fixed while the test runs: equal.
        for name, key in (("vprof_frequency_hertz", "frequency"), ("vprof_cpus", "cpus"),
                          ("vprof_targets", "targets"), ("vprof_symbol_cache_size_bytes", "symbol_cache_size")):
            self.assertEqual(m[(name, "")], before[key], name)
            self.assertEqual(before[key], after[key], name)
        # Counting while the test runs (every CPU's samples are seen): between the status before and after.
        for name, key in (("vprof_samples_seen_total", "samples_seen"),
                          ("vprof_samples_discarded_total", "samples_discarded"),
                          ("vprof_samples_kept_total", "samples_kept"),
                          ("vprof_samples_lost_total", "samples_lost"),
                          ("vprof_samples_unclaimed_total", "samples_unclaimed"),
                          ("vprof_stack_errors_total", "stack_errors")):
            self.assertLessEqual(before[key], m[(name, "")], name)
            self.assertLessEqual(m[(name, "")], after[key], name)
        target = [t for t in ENV.ctl_json("list")["targets"] if t["pid"] == self.pid][0]
        key = ("vprof_target_samples_total",
               f'{{target="{self.pid}",pid="{self.pid}",comm="{target["command"]}",state="exited"}}')
        self.assertEqual(m[key], target["samples"])
        self.assertGreater(m[key], 0)
        self.assertIn(("vprof_exporter_requests_total", '{code="200"}'), m)

    def test_index(self):
        status, headers, body = self.exporter.get("/")
        self.assertEqual(status, 200)
        self.assertEqual(headers["Content-Type"], "text/html; charset=utf-8")
        self.assertEqual(headers["Content-Security-Policy"], "default-src 'none'")
        text = body.decode()
        self.assertIn(f"/flamegraph?window=10s&amp;target={self.pid}", text)
        self.assertIn(f"/debug/pprof/profile?seconds=10&amp;target={self.pid}", text)

    def report(self, *args):
        return ENV.ctl_json("report", self.pid, *args)

    def test_pprof_matches_report(self):
        """The pprof of the last 60 s equals `vprofctl report --window 60s`: total samples and hottest function."""
        status, headers, body = self.exporter.get(f"/debug/pprof/profile?seconds=60&target={self.pid}")
        self.assertEqual(status, 200, body)
        self.assertEqual(headers["Content-Type"], "application/octet-stream")
        self.assertEqual(headers["Content-Disposition"], 'attachment; filename="profile"')
        report = self.report("--window", "60s", "--sort", "exclusive")
        types, totals, leaf = read_profile(body)
        self.assertEqual(types[0], ("samples", "count"))
        self.assertEqual(totals[0], report["total_samples"])
        self.assertGreater(totals[0], 0)
        hottest = max(leaf, key=leaf.get)
        self.assertEqual(hottest, report["functions"][0]["function"])
        self.assertEqual(leaf[hottest], report["functions"][0]["exclusive"])
        print(f"pprof: {totals[0]} samples, hottest {hottest} ({leaf[hottest]}), {len(body)} bytes")

    def test_pprof_target_omitted(self):
        """One scrape target attached: ?target= may be left out."""
        if len(ENV.ctl_json("list")["targets"]) != 1:
            self.skipTest("another target is attached")
        status, _, body = self.exporter.get("/debug/pprof/profile?seconds=60")
        self.assertEqual(status, 200, body)
        self.assertEqual(read_profile(body)[1][0], self.report("--window", "60s")["total_samples"])

    def test_go_tool_pprof(self):
        go = shutil.which("go")
        if not go:
            vprof_env.skip_or_fail("needs go (golang-go) for go tool pprof")
        report = self.report("--window", "60s", "--sort", "exclusive")
        url = f"{self.exporter.base}/debug/pprof/profile?seconds=60&target={self.pid}"
        home = os.path.join(ENV.tmp, "gohome")
        os.makedirs(home, exist_ok=True)
        r = subprocess.run([go, "tool", "pprof", "-top", "-sample_index=0", url], capture_output=True, text=True,
                           timeout=300, env=dict(os.environ, HOME=home, PPROF_TMPDIR=home, GOCACHE=home,
                                                 GOFLAGS="-mod=mod", GOTOOLCHAIN="local"))
        self.assertEqual(r.returncode, 0, r.stderr)
        m = re.search(r"of (\d+) total", r.stdout)
        self.assertIsNotNone(m, r.stdout)
        self.assertEqual(int(m.group(1)), report["total_samples"], r.stdout)
        rows = [line.split() for line in r.stdout.splitlines() if re.match(r"\s*\d+\s+\d", line)]
        self.assertEqual(rows[0][-1], report["functions"][0]["function"], r.stdout)
        print(f"go tool pprof -top:\n{r.stdout}")

    def test_flamegraph(self):
        status, headers, body = self.exporter.get(f"/flamegraph?target={self.pid}&window=all")
        self.assertEqual(status, 200, body)
        self.assertEqual(headers["Content-Type"], "text/html; charset=utf-8")
        self.assertIn("script-src 'sha256-", headers["Content-Security-Policy"])
        self.assertIn("default-src 'none'", headers["Content-Security-Policy"])
        hottest = self.report("--sort", "exclusive")["functions"][0]["function"]
        self.assertIn(hottest, body.decode())
        # The target has exited: its page does not reload itself.
        self.assertNotIn("Reloads every", body.decode())

    def test_max_response_bytes(self):
        """An answer past MaxResponseBytes=: 500 naming the limit, never a cut file."""
        _, _, pprof = self.exporter.get(f"/debug/pprof/profile?seconds=60&target={self.pid}")
        small = Exporter(ENV, "--max-response-bytes", 1024)
        try:
            if len(pprof) > 1024:
                status, _, body = small.get(f"/debug/pprof/profile?seconds=60&target={self.pid}")
                self.assertEqual(status, 500)
                self.assertEqual(body.decode(), "the profile is larger than MaxResponseBytes=1024\n")
            status, _, body = small.get(f"/flamegraph?target={self.pid}")
            self.assertEqual(status, 500)
            self.assertEqual(body.decode(), "the flame graph is larger than MaxResponseBytes=1024\n")
            self.assertEqual(small.get("/targets")[0], 200)
        finally:
            self.assertEqual(small.stop(), [])

    def test_flamegraph_in_browser(self):
        """Debian's chromium, headless, loads the page from the exporter and checks it as a user sees it
        (chromium.check_flamegraph_page: the hottest function drawn at its width, a click zooms, the search
        highlights its frames with report's percent); a screenshot in the test artefacts."""
        import chromium
        report = self.report("--sort", "exclusive")
        hottest = report["functions"][0]
        directory = os.environ.get("VPROF_ARTIFACTS") or os.path.join(ENV.tmp, "artifacts")
        os.makedirs(directory, exist_ok=True)
        shot = os.path.join(directory, "exporter-flamegraph.png")
        url = f"{self.exporter.base}/flamegraph?target={self.pid}&window=all"
        result = chromium.check_flamegraph_page(url, hottest["function"], hottest["inclusive_percent"],
                                                screenshot=shot, test=self)
        print(f"exporter's flame graph in chromium: {hottest['function']} {result['hot_width']:.1f} px of "
              f"{result['full_width']:.1f}; {result['matched']}; screenshot {shot}")

    def test_flamegraph_bad_window(self):
        for window, reason in (("0", "invalid window"), ("x", "invalid window"), ("99999999", "invalid window")):
            status, headers, body = self.exporter.get(f"/flamegraph?target={self.pid}&window={window}")
            self.assertEqual(status, 400, window)
            self.assertTrue(body.decode().startswith(reason), body)


class Malformed(vprof_env.TestCase):
    """Each bad request: its status and one line naming the reason; the exporter serves on after each."""

    @classmethod
    def setUpClass(cls):
        p = ENV.spawn_demo("--seconds", 1)
        assert ENV.ctl("attach", p.pid).returncode == 0
        ENV.go(p)
        p.wait(30)
        cls.pid = p.pid
        cls.exporter = Exporter(ENV, "--max-seconds", 30)

    @classmethod
    def tearDownClass(cls):
        problems = cls.exporter.stop()
        ENV.ctl("detach", cls.pid)
        if problems:
            raise AssertionError("\n".join(problems))

    def assert_serving(self):
        self.assertEqual(self.exporter.get("/targets")[0], 200)

    def expect(self, path, status, reason):
        got, headers, body = self.exporter.get(path)
        text = body.decode(errors="replace")
        self.assertEqual(got, status, f"{path}: {text}")
        self.assertEqual(headers["Content-Type"], "text/plain; charset=utf-8", path)
        self.assertEqual(text.count("\n"), 1, f"{path}: not one line: {text!r}")
        self.assertIn(reason, text, path)
        self.assert_serving()
        return text

    def test_seconds(self):
        base = f"/debug/pprof/profile?target={self.pid}&seconds="
        for seconds in ("0", "-1", "1e9", "x", "", "1.5", "%201", "99999999999999999999"):
            self.expect(base + seconds, 400, "invalid seconds")
        self.expect(base + "31", 400, "MaxSeconds=30")
        self.expect(base + "1000000000", 400, "MaxSeconds=30")

    def test_target(self):
        self.expect("/debug/pprof/profile?seconds=1&target=999999", 404, "unknown target: 999999")
        self.expect("/debug/pprof/profile?seconds=1&target=nonsense", 400, "invalid target")
        self.expect("/flamegraph?target=999999", 404, "unknown target: 999999")
        self.expect("/flamegraph?target=missing-unit.service", 404, "unknown target: missing-unit.service")

    def test_paths_and_methods(self):
        self.expect("/nothing", 404, "no such page")
        self.expect("/debug/pprof/heap", 404, "no such page")
        answer = self.exporter.raw(f"POST /targets HTTP/1.1\r\nHost: localhost\r\nContent-Length: 3\r\n"
                                   f"Connection: close\r\n\r\nabc".encode())
        self.assertTrue(answer.startswith(b"HTTP/1.1 405 "), answer)
        self.assertIn(b"Allow: GET, HEAD", answer)
        # A body announced and never sent: answered at once, not waited for.
        answer = self.exporter.raw(b"POST /targets HTTP/1.1\r\nHost: localhost\r\nContent-Length: 1000000\r\n\r\nab")
        self.assertTrue(answer.startswith(b"HTTP/1.1 405 "), answer)
        answer = self.exporter.raw(b"GET /targets HTTP/1.1\r\nHost: localhost\r\nContent-Length: 1000000\r\n\r\nab")
        self.assertTrue(answer.startswith(b"HTTP/1.1 400 "), answer)
        self.assertTrue(answer.endswith(b"a request body is not accepted\n"), answer)
        answer = self.exporter.raw(b"HEAD /targets HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\r\n")
        self.assertTrue(answer.startswith(b"HTTP/1.1 200 "), answer)
        self.assertTrue(answer.endswith(b"\r\n\r\n"), answer)  # no body
        self.assert_serving()

    def test_huge_query(self):
        answer = self.exporter.raw(b"GET /targets?x=" + b"a" * 100000 + b" HTTP/1.1\r\nHost: localhost\r\n\r\n")
        self.assertRegex(answer[:20], rb"^HTTP/1\.1 (414|431) ")
        self.assert_serving()
        self.expect("/targets?x=" + "a" * 5000, 414, "query string too long")

    def test_invalid_utf8(self):
        self.expect("/debug/pprof/profile?seconds=1&target=%ff%fe", 400, "not UTF-8 text")
        self.expect("/targets?x=%00", 400, "not UTF-8 text")
        answer = self.exporter.raw(b"GET /targets?x=\xff\xfe HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\r\n")
        self.assertTrue(answer.startswith(b"HTTP/1.1 400 "), answer)
        self.assert_serving()

    def test_http10(self):
        """Answered, and the connection closed after it (raw() reads until the server closes)."""
        answer = self.exporter.raw(b"GET /targets HTTP/1.0\r\nHost: localhost\r\n\r\n")
        self.assertRegex(answer[:20], rb"^HTTP/1\.[01] 200 ")
        self.assertIn(str(self.pid).encode(), answer)
        # HTTP/1.0 makes the Host header optional; the exporter does not (DNS rebinding): 400, with nothing of it.
        answer = self.exporter.raw(b"GET /targets HTTP/1.0\r\n\r\n")
        self.assertRegex(answer[:20], rb"^HTTP/1\.[01] 400 ")
        self.assertIn(b"expected one Host header, not 0", answer)
        self.assertNotIn(str(self.pid).encode(), answer)

    def test_pipelined(self):
        """Three requests in one write, answered in order on the one connection."""
        answer = self.exporter.raw(b"GET /nothing HTTP/1.1\r\nHost: localhost\r\n\r\n"
                                   b"GET /targets HTTP/1.1\r\nHost: localhost\r\n\r\n"
                                   b"GET /metrics HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\r\n")
        statuses = re.findall(rb"HTTP/1\.1 (\d{3}) ", answer)
        self.assertEqual(statuses, [b"404", b"200", b"200"], answer[:300])
        self.assertLess(answer.index(b"no such page"), answer.index(b"__param_target"))
        self.assertLess(answer.index(b"__param_target"), answer.index(b"# HELP"))

    def test_no_version(self):
        answer = self.exporter.raw(b"GET /targets\r\n\r\n")
        self.assertTrue(answer == b"" or answer.startswith(b"HTTP/1.1 400 "), answer)
        self.assert_serving()

    def test_headers_past_memory_limit(self):
        headers = b"".join(b"X-Filler-%d: " % i + b"b" * 1000 + b"\r\n" for i in range(64))
        answer = self.exporter.raw(b"GET /targets HTTP/1.1\r\nHost: localhost\r\n" + headers + b"\r\n")
        self.assertRegex(answer[:20], rb"^HTTP/1\.1 (431|413|400) ")
        self.assert_serving()


class Limits(vprof_env.TestCase):
    """MaxConnections= and RequestTimeoutSec= on an exporter of their own."""

    def setUp(self):
        self.exporter = Exporter(ENV, "--max-connections", 4, "--request-timeout", 2, "--threads", 2)

    def tearDown(self):
        problems = self.exporter.stop()
        if problems:
            raise AssertionError("\n".join(problems))

    def counter(self, name):
        return metrics(self.exporter.get("/metrics")[2].decode())[(name, "")]

    def test_max_connections(self):
        """Four connections held (each a request begun): a fifth is closed unanswered; once the held ones are cut
        at the deadline, requests are served again."""
        self.exporter.stop()
        self.exporter = Exporter(ENV, "--max-connections", 4, "--request-timeout", 6, "--threads", 2)
        held = []
        for _ in range(4):
            s = socket.create_connection(("127.0.0.1", self.exporter.port), timeout=15)
            s.sendall(b"GET /tar")  # a request begun, never finished
            held.append(s)
        # The held ones count from when a worker thread took them: until then a fifth may still be served.
        refused = False
        for _ in range(8):
            extra = socket.create_connection(("127.0.0.1", self.exporter.port), timeout=10)
            try:
                extra.sendall(b"GET /targets HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\r\n")
                answer = extra.recv(100)
            except ConnectionResetError:
                answer = b""
            extra.close()
            if answer == b"":
                refused = True
                break
            self.assertTrue(answer.startswith(b"HTTP/1.1 200 "), answer)
            time.sleep(0.25)
        self.assertTrue(refused, "a fifth connection was always served")
        for s in held:
            self.assertEqual(s.recv(100), b"")
            s.close()
        # The server closes a cut connection's socket before its worker hands the slot back: on a loaded machine
        # a request right after the EOF may still find the four slots taken (seen once, reset by the server).
        self.assertEqual(vprof_env.wait_for("a slot free again", self.served_again, 5), 200)
        self.assertGreaterEqual(self.counter("vprof_exporter_connections_rejected_total"), 1)
        self.assertEqual(self.counter("vprof_exporter_connections_timed_out_total"), 4)

    def served_again(self):
        try:
            return self.exporter.get("/targets")[0]
        except ConnectionResetError:
            return None

    def test_slow_client(self):
        """A byte a second: cut at RequestTimeoutSec=2, before the request is complete."""
        request = b"GET /targets HTTP/1.1\r\nHost: localhost\r\n\r\n"
        s = socket.create_connection(("127.0.0.1", self.exporter.port), timeout=10)
        start = time.monotonic()
        sent = 0
        cut = None
        try:
            for i in range(len(request)):
                s.sendall(request[i:i + 1])
                sent += 1
                s.settimeout(1.0)
                try:
                    if s.recv(100) == b"":
                        cut = time.monotonic() - start
                        break
                except socket.timeout:
                    pass
        except (BrokenPipeError, ConnectionResetError):
            cut = time.monotonic() - start
        s.close()
        self.assertIsNotNone(cut, "never cut")
        self.assertLess(sent, len(request))
        print(f"slow client: cut after {cut:.1f} s, {sent} of {len(request)} bytes sent")
        self.assertGreaterEqual(cut, 1.9)
        self.assertEqual(self.counter("vprof_exporter_connections_timed_out_total"), 1)


class AllowList(vprof_env.TestCase):
    def test_allow_list(self):
        a = ENV.spawn_demo("--seconds", 1)
        b = ENV.spawn_demo("--seconds", 1)
        for p in (a, b):
            self.assertEqual(ENV.ctl("attach", p.pid).returncode, 0)
            ENV.go(p)
        for p in (a, b):
            p.wait(30)
        exporter = Exporter(ENV, "--allow-targets", f"{a.pid} 999998")
        try:
            entries = json.loads(exporter.get("/targets")[2])
            self.assertEqual([e["labels"]["__param_target"] for e in entries], [str(a.pid)])
            _, _, outside = exporter.get(f"/flamegraph?target={b.pid}")
            _, _, unknown = exporter.get("/flamegraph?target=999997")
            self.assertEqual(outside.decode(), f"unknown target: {b.pid}\n")
            self.assertEqual(unknown.decode(), "unknown target: 999997\n")
            status, _, _ = exporter.get(f"/debug/pprof/profile?seconds=5&target={b.pid}")
            self.assertEqual(status, 404)
            status, _, body = exporter.get(f"/flamegraph?target={a.pid}")
            self.assertEqual(status, 200, body)
            self.assertNotIn(f'pid="{b.pid}"', exporter.get("/metrics")[2].decode())
        finally:
            problems = exporter.stop()
            for p in (a, b):
                ENV.ctl("detach", p.pid)
        self.assertEqual(problems, [])

    def test_target_required(self):
        a = ENV.spawn_demo("--seconds", 1)
        b = ENV.spawn_demo("--seconds", 1)
        for p in (a, b):
            self.assertEqual(ENV.ctl("attach", p.pid).returncode, 0)
            ENV.go(p)
        exporter = Exporter(ENV)
        try:
            status, _, body = exporter.get("/flamegraph")
            self.assertEqual(status, 400)
            self.assertRegex(body.decode(), r"^the target parameter is required: \d+ targets are attached")
        finally:
            problems = exporter.stop()
            for p in (a, b):
                p.wait(30)
                ENV.ctl("detach", p.pid)
        self.assertEqual(problems, [])


class Listening(vprof_env.TestCase):
    """The socket from systemd (sd_listen_fds()), through systemd-socket-activate as systemd would pass it; IPv6;
    the configuration file under the options."""

    def test_socket_activation(self):
        tool = shutil.which("systemd-socket-activate")
        if not tool:
            vprof_env.skip_or_fail("needs systemd-socket-activate (systemd)")
        with socket.socket() as s:
            s.bind(("127.0.0.1", 0))
            port = s.getsockname()[1]
        log = os.path.join(ENV.tmp, "socket-activate.log")
        with open(log, "w") as f:
            # --listen names another port: the passed socket wins.
            p = subprocess.Popen([tool, "-l", f"127.0.0.1:{port}", "-E", f"DBUS_SYSTEM_BUS_ADDRESS={ENV.address}",
                                  os.environ["VPROF_EXPORTER"], "--listen", "127.0.0.1:1"], stdout=f, stderr=f)
        try:
            deadline = time.monotonic() + 10
            while True:
                try:
                    conn = socket.create_connection(("127.0.0.1", port), timeout=10)
                    break
                except ConnectionRefusedError:
                    self.assertLess(time.monotonic(), deadline, "systemd-socket-activate did not listen")
                    time.sleep(0.05)
            with conn:
                # The first connection starts the exporter, which answers it on the socket it was given.
                conn.sendall(b"GET /targets HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\r\n")
                answer = b""
                while chunk := conn.recv(65536):
                    answer += chunk
            self.assertTrue(answer.startswith(b"HTTP/1.1 200 "), answer[:200])
            with open(log) as f:
                text = f.read()
            self.assertIn(f"Listening on 127.0.0.1:{port}", text)
        finally:
            p.terminate()
            self.assertEqual(p.wait(15), 0)

    def test_ipv6(self):
        if not socket.has_ipv6 or not os.path.exists("/proc/net/if_inet6"):
            self.skipTest("no IPv6 on this machine")  # the machine's network, not a missing tool
        exporter = Exporter(ENV, "--listen", "[::1]:0")  # the last --listen wins
        try:
            m = re.search(r"Listening on \[::1\]:(\d+)", exporter.log())
            self.assertIsNotNone(m, exporter.log())
            with socket.create_connection(("::1", int(m.group(1))), timeout=10) as s:
                s.sendall(b"GET /metrics HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\r\n")
                self.assertTrue(s.recv(100).startswith(b"HTTP/1.1 200 "))
        finally:
            self.assertEqual(exporter.stop(), [])

    def test_config_file(self):
        path = os.path.join(ENV.tmp, "exporter.conf")
        with open(path, "w") as f:
            f.write("[Exporter]\nMaxSeconds=7\nThreads=1\n")
        exporter = Exporter(ENV, "--config", path, "--max-seconds", 9)
        try:
            _, _, body = exporter.get("/debug/pprof/profile?seconds=10&target=1")
            self.assertEqual(body.decode(), "invalid seconds: 10 is more than MaxSeconds=9\n")
            self.assertIn("1 threads", exporter.log())
        finally:
            self.assertEqual(exporter.stop(), [])
        with open(path, "w") as f:
            f.write("[Exporter]\nMaxSeconds=0\n")
        r = subprocess.run([os.environ["VPROF_EXPORTER"], "--config", path], capture_output=True, text=True,
                           env=ENV.env, timeout=30)
        self.assertEqual(r.returncode, 1)
        self.assertEqual(r.stderr, f"vprof-exporter: {path}:2: invalid MaxSeconds=0: expected seconds from 1 to "
                                   f"86400.\n")


class LivePage(vprof_env.TestCase):
    def test_live_page_reloads(self):
        """A running target's page reloads itself every 5 s."""
        p = ENV.spawn_demo("--seconds", 30)
        self.assertEqual(ENV.ctl("attach", p.pid).returncode, 0)
        ENV.go(p)
        exporter = Exporter(ENV)
        try:
            time.sleep(1.5)
            status, _, body = exporter.get(f"/flamegraph?target={p.pid}")
            self.assertEqual(status, 200, body)
            self.assertIn("Reloads every 5 s", body.decode())
        finally:
            problems = exporter.stop()
            p.kill()
            p.wait()
            ENV.ctl("detach", p.pid)
        self.assertEqual(problems, [])


class DaemonAway(vprof_env.TestCase):
    """vprofd stopped: 503; started again: served again, on the same exporter."""

    def test_daemon_away(self):
        env = self.start_env()
        exporter = Exporter(env)
        try:
            self.assertEqual(exporter.get("/targets")[0], 200)
            env.daemon.terminate()
            env.daemon.wait(20)
            for path in ("/targets", "/metrics", "/", "/debug/pprof/profile?seconds=1&target=1",
                         "/flamegraph?target=1"):
                status, _, body = exporter.get(path)
                self.assertEqual(status, 503, f"{path}: {body}")
                self.assertTrue(body.decode().startswith("vprofd is not answering"), body)
            env.start_daemon()
            self.assertEqual(exporter.get("/targets")[0], 200)
            self.assertEqual(exporter.get("/metrics")[0], 200)
        finally:
            problems = exporter.stop()
        self.assertEqual(problems, [])


if __name__ == "__main__":
    vprof_env.main()
