#!/usr/bin/env python3
# SPDX-License-Identifier: LGPL-2.1-or-later
"""The flame graph in a real browser: vprof-demo profiled until it exits, `vprofctl report PID --format svg -o
FILE`, and Debian's chromium, headless, loading the file and, served over HTTP on 127.0.0.1 with the
Content-Security-Policy of flamegraph.h, the same document. The page checks (chromium.check_flamegraph_page): the
hottest function's frame has the width of its samples, a real click zooms into it, typing its name in the search
box highlights exactly the frames of that name and says its inclusive percent as report --json does, the URL
fragment keeps both across a reload; a screenshot is kept in the build directory's test-artifacts/."""
import http.server
import os
import re
import subprocess
import threading
import time
import xml.etree.ElementTree as ET

import chromium
import vprof_env

ENV = None
WORK = ["work_alpha", "work_beta", "work_gamma", "work_delta"]
SVG = "{http://www.w3.org/2000/svg}"


def artifact(name):
    directory = os.environ.get("VPROF_ARTIFACTS") or os.path.join(ENV.tmp, "artifacts")
    os.makedirs(directory, exist_ok=True)
    return os.path.join(directory, name)


def csp():
    """The policy flamegraph_content_security_policy() returns, from the header the build generated."""
    with open(os.environ["VPROF_FLAMEGRAPH_ASSETS"]) as f:
        return re.search(r'flamegraph_csp\[\] = "([^"]*)"', f.read()).group(1)


class Server(http.server.ThreadingHTTPServer):
    """Serves one document on 127.0.0.1 with the flame graph's policy, as the exporter does."""

    def __init__(self, body, content_type):
        self.body, self.content_type, self.policy = body, content_type, csp()
        super().__init__(("127.0.0.1", 0), Handler)
        self.thread = threading.Thread(target=self.serve_forever, daemon=True)
        self.thread.start()

    def stop(self):
        self.shutdown()
        self.server_close()


class Handler(http.server.BaseHTTPRequestHandler):
    def do_GET(self):
        self.send_response(200)
        self.send_header("Content-Type", self.server.content_type)
        self.send_header("Content-Security-Policy", self.server.policy)
        self.send_header("Content-Length", str(len(self.server.body)))
        self.end_headers()
        self.wfile.write(self.server.body)

    def log_message(self, *args):
        pass


class FlameGraphOfKnownWorkload(vprof_env.TestCase):
    @classmethod
    def setUpClass(cls):
        demo = ENV.spawn_demo("--seconds", 4)
        cls.pid = demo.pid
        r = ENV.ctl("attach", demo.pid)
        assert r.returncode == 0, r.stderr
        ENV.go(demo)
        demo.wait(60)
        time.sleep(1.5)  # its last second closed: the tables do not change any more
        cls.report = ENV.ctl_json("report", demo.pid, "--sort", "inclusive")
        cls.functions = {r["function"]: r for r in cls.report["functions"]}
        # The hottest of the leaves: the frames above it (worker, run_round) span the whole width already.
        cls.hottest = max(WORK, key=lambda f: cls.functions[f]["inclusive"] if f in cls.functions else 0)
        cls.svg_path = os.path.join(ENV.tmp, "flamegraph.svg")
        r = ENV.ctl("report", demo.pid, "--format", "svg", "-o", cls.svg_path)
        assert r.returncode == 0, r.stderr
        with open(cls.svg_path, "rb") as f:
            cls.svg = f.read()
        cls.browser = chromium.Browser().start()

    @classmethod
    def tearDownClass(cls):
        cls.browser.close()

    def test_file_is_svg_of_the_profile(self):
        root = ET.fromstring(self.svg)  # well-formed XML
        self.assertEqual(root.tag, SVG + "svg")
        total = int(root.get("data-total"))
        self.assertEqual(total, self.report["total_samples"])
        frames = [g for g in root.iter(SVG + "g") if "f" in g.get("class", "").split()]
        hot = [g for g in frames if g.get("data-f") == self.hottest]
        self.assertTrue(hot)
        # The one path of the hottest function (worker, run_round) holds its samples, as report counts them.
        self.assertEqual(sum(int(g.get("data-n")) for g in hot), self.functions[self.hottest]["inclusive"])
        self.assertEqual(len(root.findall(SVG + "script")), 1)
        self.assertIn(f"vprof flame graph of {self.pid}", self.svg.decode())

    def test_file_in_browser(self):
        url = "file://" + self.svg_path
        shot = artifact("flamegraph.png")
        result = chromium.check_flamegraph_page(url, self.hottest, self.functions[self.hottest]["inclusive_percent"],
                                                browser=self.browser, screenshot=shot, test=self)
        print(f"{self.hottest}: {result['hot_width']:.1f} px of {result['full_width']:.1f} "
              f"(its share: {result['share_width']:.1f} px); {result['matched']}; {result['frames']} frames; "
              f"screenshot {shot} {result['screenshot_size']}")

    def test_served_under_the_policy(self):
        server = Server(self.svg, "image/svg+xml")
        self.addCleanup(server.stop)
        url = f"http://127.0.0.1:{server.server_address[1]}/flamegraph.svg"
        result = chromium.check_flamegraph_page(url, self.hottest, self.functions[self.hottest]["inclusive_percent"],
                                                browser=self.browser, screenshot=artifact("flamegraph-served.png"),
                                                test=self)
        self.assertTrue(result["matched"].startswith("Matched: "))
        # The policy refused nothing: the script ran (data-ready) and the style applied (the search box's width).
        self.assertEqual(self.browser.evaluate("getComputedStyle(document.getElementById('search')).width"),
                         "280px")

    def html_page(self, refresh):
        folded = ENV.ctl("report", self.pid, "--by", "stack")
        self.assertEqual(folded.returncode, 0, folded.stderr)
        r = subprocess.run([os.environ["VPROF_FLAMEGRAPH_PAGE"], str(self.pid), str(refresh)], input=folded.stdout,
                           capture_output=True, text=True, check=True)
        return r.stdout.encode()

    def test_html_page_under_the_policy(self):
        # The page the exporter serves: the same SVG inline in HTML, under the same policy.
        server = Server(self.html_page(0), "text/html; charset=utf-8")
        self.addCleanup(server.stop)
        url = f"http://127.0.0.1:{server.server_address[1]}/flamegraph"
        chromium.check_flamegraph_page(url, self.hottest, self.functions[self.hottest]["inclusive_percent"],
                                       browser=self.browser, screenshot=artifact("flamegraph-page.png"), test=self)
        self.assertIn(f"vprof flame graph of {self.pid}", self.browser.evaluate("document.title"))
        self.assertIn(f"{self.report['total_samples']} samples",
                      self.browser.evaluate("document.getElementById('summary').textContent"))

    def test_html_page_refresh_keeps_the_fragment(self):
        server = Server(self.html_page(1), "text/html; charset=utf-8")
        self.addCleanup(server.stop)
        self.browser.navigate(f"http://127.0.0.1:{server.server_address[1]}/flamegraph#search=work_beta")
        self.browser.wait_for("document.getElementById('flamegraph').getAttribute('data-ready') === '1'")
        # A mark in this document's window, gone once the page has reloaded itself.
        self.browser.evaluate("window.vprofMark = 1")
        self.browser.wait_for("window.vprofMark === undefined && document.getElementById('flamegraph') && "
                              "document.getElementById('flamegraph').getAttribute('data-ready') === '1'",
                              timeout=15)
        self.assertEqual(self.browser.evaluate("document.getElementById('search').value"), "work_beta")
        self.assertEqual(int(self.browser.evaluate(
            "document.getElementById('matched').getAttribute('data-samples')")),
            self.functions["work_beta"]["inclusive"])

    def test_fragment_from_the_url(self):
        # The search term given in the fragment, a regular expression: every work_ function, once each.
        url = "file://" + self.svg_path + "#search=" + "work_(alpha|beta)"
        self.browser.navigate(url)
        self.browser.wait_for("document.getElementById('flamegraph').getAttribute('data-ready') === '1'")
        expected = sum(self.functions[f]["inclusive"] for f in ("work_alpha", "work_beta") if f in self.functions)
        self.assertEqual(int(self.browser.evaluate(
            "document.getElementById('matched').getAttribute('data-samples')")), expected)

    def test_window_and_errors(self):
        path = os.path.join(ENV.tmp, "window.svg")
        r = ENV.ctl("report", self.pid, "--format", "svg", "-o", path, "--window", "600s")
        self.assertEqual(r.returncode, 0, r.stderr)
        with open(path) as f:
            self.assertIn("the last 600s", f.read())
        r = ENV.ctl("report", self.pid, "--format", "svg", "-o", "/nonexistent/dir/f.svg")
        self.assertNotEqual(r.returncode, 0)
        self.assertEqual(r.stderr.count("\n"), 1, r.stderr)
        self.assertIn("/nonexistent/dir/f.svg", r.stderr)
        r = ENV.ctl("report", "999999", "--format", "svg", "-o", path)
        self.assertNotEqual(r.returncode, 0)
        self.assertEqual(r.stderr.count("\n"), 1, r.stderr)
        # The failed calls left the file written before as it was.
        with open(path) as f:
            self.assertIn("the last 600s", f.read())


def setUpModule():
    global ENV
    if not chromium.chromium_path():
        vprof_env.skip_or_fail("needs chromium (Debian's package chromium)")
    ENV = vprof_env.start_module_env(frequency=999)


if __name__ == "__main__":
    vprof_env.main()
