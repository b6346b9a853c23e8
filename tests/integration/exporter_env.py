# SPDX-License-Identifier: LGPL-2.1-or-later
"""vprof-exporter started against a VprofEnv's private bus, on 127.0.0.1 and a port the kernel picks; shared by
the exporter's integration test and its load benchmark. The binary comes from $VPROF_EXPORTER."""
import gzip
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


# --- a minimal reader of profile.proto, to check the pprof answers without a protobuf library --------------------
def _varint(b, i):
    v = shift = 0
    while True:
        c = b[i]
        i += 1
        v |= (c & 0x7f) << shift
        shift += 7
        if c < 0x80:
            return v, i


def _fields(b):
    """(field number, wire type, value) of a message: an int for varints, bytes for length-delimited."""
    i = 0
    while i < len(b):
        key, i = _varint(b, i)
        field, wire = key >> 3, key & 7
        if wire == 0:
            v, i = _varint(b, i)
        elif wire == 2:
            n, i = _varint(b, i)
            v = b[i:i + n]
            i += n
        elif wire == 1:
            v = int.from_bytes(b[i:i + 8], "little")
            i += 8
        elif wire == 5:
            v = int.from_bytes(b[i:i + 4], "little")
            i += 4
        else:
            raise ValueError(f"wire type {wire}")
        yield field, wire, v


def _ints(wire, v):
    if wire == 0:
        return [v]
    out, i = [], 0
    while i < len(v):
        x, i = _varint(v, i)
        out.append(x)
    return out


def read_profile(data, extra=None):
    """(sample types, total of each value, {function name: exclusive samples}) of a gzip'ed profile.proto;
    extra, a dict, gets the period."""
    p = gzip.decompress(data)
    strings, types, samples, functions, locations = [], [], [], {}, {}
    for field, wire, v in _fields(p):
        if field == 12 and extra is not None:
            extra["period"] = v
        if field == 6:
            strings.append(v.decode())
        elif field == 1:
            t = dict((f, x) for f, _, x in _fields(v))
            types.append((t.get(1, 0), t.get(2, 0)))
        elif field == 2:
            locs, vals = [], []
            for f, w, x in _fields(v):
                if f == 1:
                    locs += _ints(w, x)
                elif f == 2:
                    vals += _ints(w, x)
            samples.append((locs, vals))
        elif field == 5:
            fn = dict((f, x) for f, _, x in _fields(v))
            functions[fn.get(1, 0)] = fn.get(2, 0)
        elif field == 4:
            loc = {"lines": []}
            for f, _, x in _fields(v):
                if f == 1:
                    loc["id"] = x
                elif f == 4:
                    loc["lines"].append(dict((g, y) for g, _, y in _fields(x)).get(1, 0))
            locations[loc["id"]] = loc
    types = [(strings[a], strings[b]) for a, b in types]
    totals = [sum(vals[i] for _, vals in samples) for i in range(len(types))]
    leaf = {}
    for locs, vals in samples:
        if not locs:
            continue
        # Leaf first; of a location with inlined lines, the innermost function is the first line.
        name = strings[functions[locations[locs[0]]["lines"][0]]]
        leaf[name] = leaf.get(name, 0) + vals[0]
    return types, totals, leaf
