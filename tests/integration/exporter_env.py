# SPDX-License-Identifier: LGPL-2.1-or-later
"""vprof-exporter started against a VprofEnv's private bus, on 127.0.0.1 and a port the kernel picks; shared by
the exporter's integration test and its load benchmark. The binary comes from $VPROF_EXPORTER."""
import os
import re
import socket
import subprocess
import time
import urllib.error
import urllib.request


class Exporter:
    def __init__(self, env, *args, binary=None):
        self.env = env
        self.log_path = os.path.join(env.tmp, f"exporter-{time.monotonic_ns()}.log")
        cmd = [binary or os.environ["VPROF_EXPORTER"], "--listen", "127.0.0.1:0", *map(str, args)]
        with open(self.log_path, "w") as log:
            self.process = subprocess.Popen(cmd, env=env.env, stdout=log, stderr=log)
        deadline = time.monotonic() + 20
        self.port = None
        while time.monotonic() < deadline and self.port is None:
            if self.process.poll() is not None:
                raise RuntimeError(f"vprof-exporter exited with {self.process.returncode}:\n{self.log()}")
            m = re.search(r"Listening on 127\.0\.0\.1:(\d+)", self.log())
            if m:
                self.port = int(m.group(1))
            else:
                time.sleep(0.05)
        if self.port is None:
            raise RuntimeError("vprof-exporter did not start:\n" + self.log())
        self.base = f"http://127.0.0.1:{self.port}"

    def log(self):
        with open(self.log_path, errors="replace") as f:
            return f.read()

    def get(self, path, timeout=30):
        """(status, headers, body bytes) of GET path."""
        try:
            with urllib.request.urlopen(self.base + path, timeout=timeout) as r:
                return r.status, r.headers, r.read()
        except urllib.error.HTTPError as e:
            return e.code, e.headers, e.read()

    def raw(self, data, timeout=10, read=True):
        """The bytes answered to data sent as is on a new connection, until the server closes it."""
        with socket.create_connection(("127.0.0.1", self.port), timeout=timeout) as s:
            s.sendall(data)
            if not read:
                return b""
            chunks = []
            while True:
                try:
                    b = s.recv(65536)
                except (ConnectionResetError, socket.timeout):
                    break
                if not b:
                    break
                chunks.append(b)
            return b"".join(chunks)

    def vm_hwm_kib(self):
        with open(f"/proc/{self.process.pid}/status") as f:
            for line in f:
                if line.startswith("VmHWM:"):
                    return int(line.split()[1])
        return 0

    def stop(self):
        """SIGTERM; returns the problems: an exit status other than 0, a sanitizer report."""
        problems = []
        if self.process.poll() is None:
            self.process.terminate()
            try:
                self.process.wait(15)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()
                problems.append("vprof-exporter did not stop on SIGTERM within 15 s")
        if self.process.returncode != 0:
            problems.append(f"vprof-exporter exited with {self.process.returncode}")
        log = self.log()
        if "Sanitizer" in log or "runtime error:" in log:
            problems.append("vprof-exporter's log has a sanitizer report")
        if problems:
            problems.append(log)
        return problems
