#!/usr/bin/env python3
# SPDX-License-Identifier: LGPL-2.1-or-later
"""vprof-exporter answers each client with the client's rights (issue 24). The exporter runs as the packaged
unit runs it, an unprivileged user with the group vprof as a supplementary group, on the two sockets the
packaged socket unit passes (a TCP socket on 127.0.0.1 and a unix socket of mode 0666, through
systemd-socket-activate). Its clients are real processes of real users: a user outside vprof reads its own
target and nothing of root's (403 without the PID or the command, and no list naming it), on either socket; a
member of vprof by the user database reads everything, as root does. A Host header that is not the exporter's
gets 421. Then a private network namespace with a dummy interface of 192.0.2.1/24 (a documentation address):
the exporter listening there needs a token (401 without it or with a wrong one, each wrong one counted and
logged once a minute per address, 200 with it), and refuses to start without one. Prints its calls as
'exporter-authz:' lines."""
import grp
import json
import os
import shutil
import socket
import subprocess
import sys
import time
import unittest

import vprof_env

ENV = None
GROUP = "vprof"
EXPORTER_USER = "vprof-test-exp"
STRANGER = "vprof-test-stranger"
MEMBER = "vprof-test-member3"
NETNS = "vprof-test-authz"
ADDRESS = "192.0.2.1"  # RFC 5737 documentation range, inside the test's own network namespace only
PYTHON = "/usr/bin/python3"  # the system's: another user cannot reach a python under /root

# A client as a given user: one request on a new connection, the answer as JSON on stdout.
CLIENT = r'''
import json, socket, sys
kind, where, path, host, *headers = sys.argv[1:]
if kind == "unix":
    s = socket.socket(socket.AF_UNIX)
    s.connect(where)
else:
    h, p = where.rsplit(":", 1)
    s = socket.create_connection((h, int(p)), timeout=30)
lines = [f"GET {path} HTTP/1.1"] + ([f"Host: {host}"] if host else []) + ["Connection: close"] + headers
s.sendall(("\r\n".join(lines) + "\r\n\r\n").encode())
data = b""
while chunk := s.recv(65536):
    data += chunk
head, _, body = data.partition(b"\r\n\r\n")
print(json.dumps({"status": int(head.split()[1]) if head else 0, "head": head.decode("latin-1"),
                  "body": body.decode("latin-1")}))
'''


def run_client(prefix, kind, where, path, host="localhost", headers=()):
    r = subprocess.run([*prefix, PYTHON, CLIENT_PATH, kind, where, path, host or "", *headers],
                       capture_output=True, text=True, timeout=60)
    if r.returncode != 0:
        raise AssertionError(f"client failed: {r.stderr}")
    return json.loads(r.stdout)


def as_user(uid, groups=()):
    group_args = [f"--groups={','.join(map(str, groups))}"] if groups else ["--clear-groups"]
    return ["setpriv", f"--reuid={uid}", f"--regid={vprof_env.primary_gid(uid)}", *group_args]


class ExporterAsPackaged(vprof_env.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.rows = []
        cls.roots = ENV.spawn_demo("--seconds", "120")
        cls.theirs = ENV.spawn_demo("--seconds", "120", user=STRANGER_UID)
        for p in (cls.roots, cls.theirs):
            r = ENV.ctl("attach", p.pid)
            assert r.returncode == 0, r.stderr
            ENV.go(p)
        tool = shutil.which("systemd-socket-activate")
        if not tool:
            vprof_env.skip_or_fail("needs systemd-socket-activate (systemd)")
        with socket.socket() as s:
            s.bind(("127.0.0.1", 0))
            cls.port = s.getsockname()[1]
        sockdir = os.path.join(ENV.tmp, "run")
        os.makedirs(sockdir, mode=0o755, exist_ok=True)
        cls.unix = os.path.join(sockdir, "exporter.sock")
        cls.log_path = os.path.join(ENV.tmp, "exporter-authz.log")
        binary = ENV.public_copy(os.environ["VPROF_EXPORTER"])
        with open(cls.log_path, "w") as f:
            cls.activator = subprocess.Popen(
                [tool, "-l", f"127.0.0.1:{cls.port}", "-l", cls.unix, "-E",
                 f"DBUS_SYSTEM_BUS_ADDRESS={ENV.address}", *as_user(EXPORTER_UID, [GID]), binary],
                stdout=f, stderr=f)
        deadline = time.monotonic() + 10
        while not os.path.exists(cls.unix):
            assert time.monotonic() < deadline, "systemd-socket-activate did not listen"
            time.sleep(0.05)
        # As the packaged socket's SocketMode=0666: the peer's user decides, not the right to connect.
        os.chmod(cls.unix, 0o666)
        # Wait for the first samples of both targets.
        time.sleep(2)

    @classmethod
    def tearDownClass(cls):
        for line in cls.rows:
            print(f"\nexporter-authz: {line}", end="", file=sys.stderr)
        cls.activator.terminate()
        status = cls.activator.wait(15)
        for p in (cls.roots, cls.theirs):
            ENV.ctl("detach", p.pid)
            p.kill()
            p.wait()
        assert status == 0, f"the exporter exited with {status}:\n{open(cls.log_path).read()}"

    def get(self, who, prefix, kind, path, host="localhost", headers=()):
        where = self.unix if kind == "unix" else f"127.0.0.1:{self.port}"
        a = run_client(prefix, kind, where, path, host, headers)
        shown = path.replace(str(self.roots.pid), "ROOT'S").replace(str(self.theirs.pid), "THEIRS")
        self.rows.append(f"{who:<12} {kind:<4} {shown:<52} Host: {host or '-':<18} -> {a['status']} "
                         f"{a['body'][:40].strip() if a['status'] != 200 else ''}")
        return a

    def assert_nothing_of_roots(self, a):
        for secret in (str(self.roots.pid), "vprof-demo"):
            self.assertNotIn(secret, a["body"])

    def test_stranger_reads_its_own_only(self):
        stranger = as_user(STRANGER_UID)
        root, theirs = self.roots.pid, self.theirs.pid
        for kind in ("tcp", "unix"):
            for path in (f"/debug/pprof/profile?seconds=5&target={root}", f"/flamegraph?target={root}"):
                a = self.get("not in vprof", stranger, kind, path)
                self.assertEqual((a["status"], a["body"]), (403, "access denied\n"))
            for path in ("/targets", "/metrics", "/"):
                a = self.get("not in vprof", stranger, kind, path)
                self.assertEqual(a["status"], 200, a["body"])
                self.assertIn(str(theirs), a["body"])
                self.assertNotIn(str(root), a["body"])
            a = self.get("not in vprof", stranger, kind, f"/debug/pprof/profile?seconds=5&target={theirs}")
            self.assertEqual(a["status"], 200, a["body"][:200])
            self.assertTrue(a["body"].startswith("\x1f\x8b"))
            a = self.get("not in vprof", stranger, kind, f"/flamegraph?target={theirs}")
            self.assertEqual(a["status"], 200, a["body"][:200])
            # Its only target is the default one.
            a = self.get("not in vprof", stranger, kind, "/debug/pprof/profile?seconds=5")
            self.assertEqual(a["status"], 200, a["body"][:200])

    def test_member_and_root_read_everything(self):
        for who, prefix in (("in vprof", as_user(MEMBER_UID)), ("root", [])):
            for kind in ("tcp", "unix"):
                a = self.get(who, prefix, kind, "/targets")
                self.assertEqual(a["status"], 200, a["body"])
                pids = [t["labels"].get("pid") for t in json.loads(a["body"])]
                self.assertIn(str(self.roots.pid), pids)
                self.assertIn(str(self.theirs.pid), pids)
                a = self.get(who, prefix, kind, f"/debug/pprof/profile?seconds=5&target={self.roots.pid}")
                self.assertEqual(a["status"], 200, a["body"][:200])

    def test_host(self):
        stranger = as_user(STRANGER_UID)
        for kind in ("tcp", "unix"):
            a = self.get("not in vprof", stranger, kind, "/targets", host="attacker.example")
            self.assertEqual(a["status"], 421, a["body"])
            self.assertNotIn(str(self.theirs.pid), a["body"])
            a = self.get("root", [], kind, "/targets", host="attacker.example:80")
            self.assertEqual(a["status"], 421, a["body"])
        a = self.get("root", [], "tcp", "/targets", host=f"127.0.0.1:{self.port}")
        self.assertEqual(a["status"], 200)
        a = self.get("root", [], "tcp", "/targets", host="localhost:1")
        self.assertEqual(a["status"], 421)
        a = self.get("root", [], "tcp", "/targets", host="localhost", headers=["Host: localhost"])
        self.assertEqual(a["status"], 400)
        self.assert_nothing_of_roots(a)


class BeyondLoopback(vprof_env.TestCase):
    """The exporter on 192.0.2.1 in a network namespace of the test's own, its clients there too: their address
    is no loopback one, so they have no user on this machine."""

    @classmethod
    def setUpClass(cls):
        cls.rows = []
        subprocess.run(["ip", "netns", "del", NETNS], capture_output=True)
        # A dummy interface where the kernel has the driver; else the address on the namespace's own lo, where
        # it is still no loopback address to the exporter (it is outside 127.0.0.0/8), which is what counts.
        device = "vprof0"
        if subprocess.run(["ip", "netns", "add", NETNS], capture_output=True).returncode != 0 or \
                subprocess.run(["ip", "-n", NETNS, "link", "set", "lo", "up"], capture_output=True).returncode != 0:
            subprocess.run(["ip", "netns", "del", NETNS], capture_output=True)
            vprof_env.skip_or_fail("cannot make a network namespace (ip netns add)")
        if subprocess.run(["ip", "-n", NETNS, "link", "add", device, "type", "dummy"],
                          capture_output=True).returncode != 0:
            device = "lo"
        cls.rows.append(f"{ADDRESS}/24 on {device} in the network namespace {NETNS}")
        for cmd in (["ip", "-n", NETNS, "addr", "add", f"{ADDRESS}/24", "dev", device],
                    ["ip", "-n", NETNS, "link", "set", device, "up"]):
            r = subprocess.run(cmd, capture_output=True, text=True)
            if r.returncode != 0:
                subprocess.run(["ip", "netns", "del", NETNS], capture_output=True)
                raise AssertionError(f"{' '.join(cmd)}: {r.stderr}")
        cls.target = ENV.spawn_demo("--seconds", "120")
        r = ENV.ctl("attach", cls.target.pid)
        assert r.returncode == 0, r.stderr
        ENV.go(cls.target)
        # The token as systemd's LoadCredential= hands it: a file of the service's user in
        # $CREDENTIALS_DIRECTORY.
        cls.token = "t0ken-" + os.urandom(16).hex()
        cls.credentials = os.path.join(ENV.tmp, "credentials")
        os.makedirs(cls.credentials, mode=0o700, exist_ok=True)
        path = os.path.join(cls.credentials, "bearer-token")
        with open(path, "w") as f:
            f.write(cls.token + "\n")
        os.chmod(path, 0o400)
        for p in (cls.credentials, path):
            os.chown(p, EXPORTER_UID, EXPORTER_UID)
        cls.binary = ENV.public_copy(os.environ["VPROF_EXPORTER"])

    @classmethod
    def tearDownClass(cls):
        for line in cls.rows:
            print(f"\nexporter-authz: {line}", end="", file=sys.stderr)
        ENV.ctl("detach", cls.target.pid)
        cls.target.kill()
        cls.target.wait()
        subprocess.run(["ip", "netns", "del", NETNS], capture_output=True)

    def start(self, *args, credentials=True):
        env = dict(ENV.env)
        if credentials:
            env["CREDENTIALS_DIRECTORY"] = self.credentials
        log = os.path.join(ENV.tmp, f"exporter-netns-{time.monotonic_ns()}.log")
        with open(log, "w") as f:
            p = subprocess.Popen(["ip", "netns", "exec", NETNS, *as_user(EXPORTER_UID, [GID]), self.binary,
                                  "--listen", f"{ADDRESS}:0", *args], env=env, stdout=f, stderr=f)
        return p, log

    def wait_port(self, p, log):
        deadline = time.monotonic() + 20
        while time.monotonic() < deadline:
            self.assertIsNone(p.poll(), open(log).read())
            text = open(log).read()
            if f"Listening on {ADDRESS}:" in text:
                return int(text.split(f"Listening on {ADDRESS}:")[1].split(":")[0].split()[0])
            time.sleep(0.05)
        raise AssertionError("the exporter did not start:\n" + open(log).read())

    def get(self, port, path, headers=(), what=""):
        a = run_client(["ip", "netns", "exec", NETNS], "tcp", f"{ADDRESS}:{port}", path, f"{ADDRESS}:{port}",
                       headers)
        self.rows.append(f"{'192.0.2.1':<12} tcp  {path:<20} {what:<14} -> {a['status']} {a['body'][:50].strip()}")
        return a

    def test_token(self):
        p, log = self.start()
        try:
            port = self.wait_port(p, log)
            a = self.get(port, "/targets", what="no token")
            self.assertEqual(a["status"], 401)
            self.assertIn("WWW-Authenticate: Bearer", a["head"])
            self.assertNotIn(str(self.target.pid), a["body"])
            for i in range(5):
                a = self.get(port, "/targets", [f"Authorization: Bearer wrong-{i}"], what="wrong token")
                self.assertEqual(a["status"], 401)
                self.assertNotIn(str(self.target.pid), a["body"])
            a = self.get(port, "/targets", [f"Authorization: Bearer {self.token}"], what="right token")
            self.assertEqual(a["status"], 200, a["body"])
            self.assertIn(str(self.target.pid), [t["labels"].get("pid") for t in json.loads(a["body"])])
            a = self.get(port, "/metrics", [f"Authorization: Bearer {self.token}"], what="right token")
            self.assertEqual(a["status"], 200, a["body"])
            self.assertIn("vprof_exporter_auth_failures_total 5\n", a["body"])
            self.assertIn('vprof_exporter_requests_total{code="401"} 6\n', a["body"])
            lines = [x for x in open(log).read().splitlines() if "Wrong bearer token" in x]
            self.rows.append(f"log: {len(lines)} line(s) for 5 wrong tokens: {lines}")
            self.assertEqual(len(lines), 1, lines)
            self.assertIn(f"from {ADDRESS} ", lines[0])
        finally:
            p.terminate()
            self.assertEqual(p.wait(15), 0, open(log).read())

    def test_refuses_to_start_without_token(self):
        p, log = self.start(credentials=False)
        self.assertNotEqual(p.wait(20), 0)
        text = open(log).read()
        self.rows.append(f"without a token: exit {p.returncode}: {text.strip()}")
        self.assertIn(f"Refusing to listen on {ADDRESS}:", text)
        self.assertEqual(len(text.strip().splitlines()), 1, text)


CLIENT_PATH = GID = EXPORTER_UID = STRANGER_UID = MEMBER_UID = MADE_GROUP = None


def cleanup():
    for user in (EXPORTER_USER, STRANGER, MEMBER):
        vprof_env.remove_user(user)
    if MADE_GROUP:
        subprocess.run(["groupdel", GROUP], capture_output=True)


def setUpModule():
    global ENV, CLIENT_PATH, GID, EXPORTER_UID, STRANGER_UID, MEMBER_UID, MADE_GROUP
    ENV = vprof_env.start_module_env(frequency=99)
    try:
        grp.getgrnam(GROUP)
        MADE_GROUP = False
    except KeyError:
        subprocess.run(["groupadd", "--system", GROUP], check=True)
        MADE_GROUP = True
    unittest.addModuleCleanup(cleanup)
    GID = grp.getgrnam(GROUP).gr_gid
    EXPORTER_UID = vprof_env.add_user(EXPORTER_USER)
    STRANGER_UID = vprof_env.add_user(STRANGER)
    MEMBER_UID = vprof_env.add_user(MEMBER)
    subprocess.run(["usermod", "--append", "--groups", GROUP, MEMBER], check=True)
    CLIENT_PATH = os.path.join(ENV.tmp, "http-client.py")
    with open(CLIENT_PATH, "w") as f:
        f.write(CLIENT)
    os.chmod(CLIENT_PATH, 0o644)


if __name__ == "__main__":
    vprof_env.main()
