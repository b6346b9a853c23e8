# SPDX-License-Identifier: LGPL-2.1-or-later
"""Debian's chromium, headless, driven over the Chrome DevTools Protocol on --remote-debugging-pipe: the
browser reads commands on its file descriptor 3 and writes replies and events on 4, JSON messages ended by a NUL
byte, so no websocket library is needed. One page (a target attached with flatten sessions) per Browser.

    with Browser() as b:
        b.navigate("file:///tmp/f.svg")
        b.evaluate("document.title")

And check_flamegraph_page(), the checks of a flame graph page (client/flamegraph/) that the flame graph and the
exporter tests share.
"""
import base64
import json
import math
import os
import select
import shutil
import struct
import subprocess
import tempfile
import time

CHROMIUM = "chromium"

# The flags of a headless chromium on a machine without network: no sandbox (root), no GPU, and none of the
# connections it makes on its own (they are refused here, and slow it down).
FLAGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
         "--disable-background-networking", "--disable-component-update", "--disable-sync",
         "--disable-extensions", "--disable-default-apps", "--mute-audio", "--hide-scrollbars"]


def chromium_path():
    """The browser's path, or None when it is not installed."""
    return shutil.which(CHROMIUM)


class CdpError(Exception):
    pass


class Browser:
    def __init__(self, width=1220, height=900, timeout=30):
        self.timeout = timeout
        self.width = width
        self.height = height
        self.user_data_dir = tempfile.mkdtemp(prefix="vprof-chromium-")
        self.next_id = 0
        self.buffer = b""
        self.events = []
        self.session = None
        self.proc = None

    # --- the process and the pipe ----------------------------------------------------------------------------
    def start(self):
        path = chromium_path()
        if not path:
            raise FileNotFoundError("chromium is not installed")
        to_browser_r, self.to_browser = os.pipe()
        self.from_browser, from_browser_w = os.pipe()

        def child_fds():
            # Out of the way first, so that neither dup2() below overwrites the other's source.
            a, b = os.dup(to_browser_r), os.dup(from_browser_w)
            os.dup2(a, 3)
            os.dup2(b, 4)

        self.stderr = open(os.path.join(self.user_data_dir, "chromium.log"), "w")
        self.proc = subprocess.Popen(
            [path, *FLAGS, f"--user-data-dir={self.user_data_dir}", "--remote-debugging-pipe",
             f"--window-size={self.width},{self.height}", "about:blank"],
            stdin=subprocess.DEVNULL, stdout=self.stderr, stderr=self.stderr, pass_fds=(3, 4),
            preexec_fn=child_fds)
        os.close(to_browser_r)
        os.close(from_browser_w)
        target = self.call("Target.createTarget", url="about:blank")["targetId"]
        self.session = self.call("Target.attachToTarget", targetId=target, flatten=True)["sessionId"]
        self.call("Page.enable")
        self.call("Runtime.enable")
        self.call("Emulation.setDeviceMetricsOverride", width=self.width, height=self.height,
                  deviceScaleFactor=1, mobile=False)
        return self

    def close(self):
        if self.proc:
            try:
                self.call("Browser.close", session=False)
            except (CdpError, OSError, TimeoutError):
                pass
            try:
                self.proc.wait(timeout=10)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
            self.proc = None
        for fd in (getattr(self, "to_browser", None), getattr(self, "from_browser", None)):
            if fd is not None:
                try:
                    os.close(fd)
                except OSError:
                    pass
        self.to_browser = self.from_browser = None
        if getattr(self, "stderr", None):
            self.stderr.close()
        shutil.rmtree(self.user_data_dir, ignore_errors=True)

    def __enter__(self):
        return self.start()

    def __exit__(self, *exc):
        self.close()

    def log(self):
        try:
            with open(os.path.join(self.user_data_dir, "chromium.log")) as f:
                return f.read()[-4000:]
        except OSError:
            return ""

    # --- messages --------------------------------------------------------------------------------------------
    def _read_message(self, deadline):
        while b"\0" not in self.buffer:
            left = deadline - time.monotonic()
            if left <= 0:
                raise TimeoutError("no message from chromium in time")
            ready, _, _ = select.select([self.from_browser], [], [], left)
            if not ready:
                continue
            chunk = os.read(self.from_browser, 1 << 20)
            if not chunk:
                raise CdpError(f"chromium closed its pipe:\n{self.log()}")
            self.buffer += chunk
        message, self.buffer = self.buffer.split(b"\0", 1)
        return json.loads(message)

    def call(self, method, session=True, **params):
        """Sends a command (to the page's session unless session=False) and returns its result."""
        self.next_id += 1
        message = {"id": self.next_id, "method": method, "params": params}
        if session and self.session:
            message["sessionId"] = self.session
        data = json.dumps(message).encode() + b"\0"
        while data:
            data = data[os.write(self.to_browser, data):]
        deadline = time.monotonic() + self.timeout
        while True:
            reply = self._read_message(deadline)
            if reply.get("id") == self.next_id:
                if "error" in reply:
                    raise CdpError(f"{method}: {reply['error']}")
                return reply.get("result", {})
            if "method" in reply:
                self.events.append(reply)

    def wait_event(self, method, timeout=None):
        """The first event of that name since the last call of this method (those before it are dropped)."""
        deadline = time.monotonic() + (timeout or self.timeout)
        while True:
            for i, e in enumerate(self.events):
                if e["method"] == method:
                    del self.events[:i + 1]
                    return e.get("params", {})
            self.events.clear()
            self.events.append(self._read_message(deadline))

    # --- the page --------------------------------------------------------------------------------------------
    def navigate(self, url):
        """Loads url anew: through about:blank, since a URL that differs from the current one only in its
        fragment would move within the document, without a load."""
        for u in (["about:blank"] if url != "about:blank" else []) + [url]:
            self.events.clear()
            result = self.call("Page.navigate", url=u)
            if result.get("errorText"):
                raise CdpError(f"navigating to {u}: {result['errorText']}")
            self.wait_event("Page.loadEventFired")

    def reload(self):
        self.events.clear()
        self.call("Page.reload")
        self.wait_event("Page.loadEventFired")

    def evaluate(self, expression):
        """The value of a JavaScript expression in the page (promises awaited); an exception fails."""
        result = self.call("Runtime.evaluate", expression=expression, returnByValue=True, awaitPromise=True)
        if "exceptionDetails" in result:
            raise CdpError(f"{expression}: {result['exceptionDetails']}")
        return result["result"].get("value")

    def wait_for(self, expression, timeout=10):
        deadline = time.monotonic() + timeout
        while True:
            try:
                if self.evaluate(expression):
                    return
            except CdpError:
                pass  # the page is between two documents (a reload): ask the next one
            if time.monotonic() > deadline:
                raise TimeoutError(f"the page never had {expression}")
            time.sleep(0.05)

    def click(self, x, y):
        """A real left click at the page's CSS pixel (x, y), as a mouse makes it."""
        self.call("Input.dispatchMouseEvent", type="mouseMoved", x=x, y=y)
        self.call("Input.dispatchMouseEvent", type="mousePressed", x=x, y=y, button="left", clickCount=1)
        self.call("Input.dispatchMouseEvent", type="mouseReleased", x=x, y=y, button="left", clickCount=1)

    def insert_text(self, text):
        self.call("Input.insertText", text=text)

    def screenshot(self, path):
        """A PNG of the viewport into path; returns its width and height, read from the file's header."""
        data = base64.b64decode(self.call("Page.captureScreenshot", format="png")["data"])
        os.makedirs(os.path.dirname(path), exist_ok=True)
        with open(path, "wb") as f:
            f.write(data)
        return png_size(data)


def png_size(data):
    """(width, height) of a PNG, or an AssertionError when data is not one."""
    if data[:8] != b"\x89PNG\r\n\x1a\n" or data[12:16] != b"IHDR":
        raise AssertionError("not a PNG file")
    return struct.unpack(">II", data[16:24])


# --- the flame graph page's checks --------------------------------------------------------------------------------
# Reads the drawn frames of the page: their name, depth, samples, on-screen box and state.
FRAMES_JS = """(() => Array.from(document.querySelectorAll('#flamegraph g.f')).map(g => {
  const r = g.querySelector('rect').getBoundingClientRect();
  return {name: g.getAttribute('data-f'), depth: Number(g.getAttribute('data-d')),
          samples: Number(g.getAttribute('data-n')), key: g.getAttribute('data-k'),
          special: g.classList.contains('sp'), matched: g.classList.contains('m'),
          hidden: getComputedStyle(g).display === 'none',
          x: r.left, y: r.top, width: r.width, height: r.height};
}))()"""

GRAPH_JS = """(() => { const s = document.getElementById('flamegraph');
  const r = s.getBoundingClientRect();
  return {left: r.left, top: r.top, x0: Number(s.getAttribute('data-x0')),
          width: Number(s.getAttribute('data-frames-width')), total: Number(s.getAttribute('data-total')),
          scale: r.width / Number(s.getAttribute('width'))}; })()"""


def check_flamegraph_page(url, hottest_function, hottest_percent, browser=None, screenshot=None, test=None):
    """Loads the flame graph page at url and checks it as a user sees it; returns what it measured.

    hottest_function: a function of the profile (report --json) and hottest_percent its inclusive percent.
    Checks that its widest frame is the widest of its depth's non-root frames or at least as wide as its share
    gives (within a pixel); that a real click on it zooms (the frame then spans the full width); that typing its
    name in the search box highlights exactly the frames whose name matches and that the page's matched percent
    equals hottest_percent (to its two decimals); that the search and the zoom are in the URL fragment and that
    a reload keeps them. screenshot: a path for a PNG of the page as it loaded (and one with "-zoomed" before
    its extension, zoomed and searched), checked to be PNGs of the viewport's size. browser: a started Browser
    to use (without one, a new one for this call). test: a unittest.TestCase whose fail() to use."""
    if browser is None:
        with Browser() as b:
            return check_flamegraph_page(url, hottest_function, hottest_percent, b, screenshot, test)
    t = test
    fail = t.fail if t else _fail
    browser.navigate(url)
    browser.wait_for("document.getElementById('flamegraph') && "
                     "document.getElementById('flamegraph').getAttribute('data-ready') === '1'")
    graph = browser.evaluate(GRAPH_JS)
    frames = browser.evaluate(FRAMES_JS)
    if graph["total"] <= 0:
        fail("the flame graph has no samples")
    full = graph["width"] * graph["scale"]

    mine = [f for f in frames if f["name"] == hottest_function and not f["special"]]
    if not mine:
        fail(f"{hottest_function} is not drawn: {sorted(set(f['name'] for f in frames))[:40]}")
    hot = max(mine, key=lambda f: f["width"])
    share_width = full * hot["samples"] / graph["total"]
    if abs(hot["width"] - share_width) > 1.0:
        fail(f"{hottest_function} is {hot['width']:.1f} px wide for {hot['samples']} of {graph['total']} "
             f"samples: {share_width:.1f} px expected")
    same_depth = [f for f in frames if f["depth"] == hot["depth"] and not f["special"]]
    widest = max(f["width"] for f in same_depth)
    if hot["width"] + 1.0 < widest and hot["width"] + 1.0 < full * hottest_percent / 100:
        fail(f"{hottest_function} ({hot['width']:.1f} px) is neither the widest frame of depth {hot['depth']} "
             f"({widest:.1f} px) nor as wide as its {hottest_percent:.2f}%")

    if screenshot:
        _screenshot(browser, screenshot, fail)

    # A real click in its middle zooms into it.
    browser.click(hot["x"] + hot["width"] / 2, hot["y"] + hot["height"] / 2)
    zoomed = next(f for f in browser.evaluate(FRAMES_JS) if f["key"] == hot["key"])
    if abs(zoomed["width"] - full) > 1.0 or abs(zoomed["x"] - (graph["left"] + graph["x0"] * graph["scale"])) > 1.0:
        fail(f"after the click {hottest_function} spans {zoomed['x']:.1f}+{zoomed['width']:.1f} px, not the "
             f"full {full:.1f} px")
    if f"zoom={hot['key']}" not in browser.evaluate("location.hash"):
        fail(f"the zoom is not in the fragment: {browser.evaluate('location.hash')}")

    # Typing in the search box highlights exactly the frames whose name matches.
    browser.evaluate("document.getElementById('search').focus()")
    browser.insert_text(hottest_function)
    matched = _check_search(browser, hottest_function, hottest_percent, fail)

    # The fragment keeps the search and the zoom across a reload.
    fragment = browser.evaluate("location.hash")
    if "search=" + hottest_function not in fragment:
        fail(f"the search is not in the fragment: {fragment}")
    browser.reload()
    browser.wait_for("document.getElementById('flamegraph').getAttribute('data-ready') === '1'")
    again = next(f for f in browser.evaluate(FRAMES_JS) if f["key"] == hot["key"])
    if abs(again["width"] - full) > 1.0 or not again["matched"]:
        fail(f"a reload lost the zoom or the search: {again}")
    if browser.evaluate("document.getElementById('search').value") != hottest_function:
        fail("a reload lost the search box's text")

    size = None
    if screenshot:
        base, ext = os.path.splitext(screenshot)
        size = _screenshot(browser, base + "-zoomed" + ext, fail)
    return {"hot_width": hot["width"], "share_width": share_width, "full_width": full, "matched": matched,
            "frames": len(frames), "screenshot_size": size}


def _screenshot(browser, path, fail):
    size = browser.screenshot(path)
    if size != (browser.width, browser.height):
        fail(f"the screenshot {path} is {size}, not {(browser.width, browser.height)}")
    print(f"screenshot: {path}")
    return size


def _check_search(browser, term, percent, fail):
    import re
    pattern = re.compile(term)
    frames = browser.evaluate(FRAMES_JS)
    wrong = [f["name"] for f in frames
             if not f["special"] and f["matched"] != bool(pattern.search(f["name"]))]
    if wrong:
        fail(f"the search for {term} highlights wrongly: {wrong[:10]}")
    if any(f["matched"] for f in frames if f["special"]):
        fail("the search highlights the root or the unlisted samples")
    line = browser.evaluate("document.getElementById('matched').textContent")
    shown = float(line.split("Matched: ", 1)[1].split("%", 1)[0])
    if not math.isclose(shown, round(percent, 2), abs_tol=0.0100001):
        fail(f"the page says {line!r}; {term}'s inclusive percent is {percent:.4f}")
    return line


def _fail(message):
    raise AssertionError(message)
