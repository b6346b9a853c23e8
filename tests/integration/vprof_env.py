# SPDX-License-Identifier: LGPL-2.1-or-later
"""A private system bus and a real vprofd on it, for the integration tests.

Paths come from the environment that meson sets: VPROFD, VPROFCTL, VPROF_DEMO, VPROF_POLICY, VPROF_BUS_CONF_IN.
"""
import json
import os
import pwd
import shutil
import subprocess
import tempfile
import time
import unittest

SKIP = 77  # meson's "skipped" exit code


class BpfUnavailable(Exception):
    pass


class VprofEnv:
    def __init__(self, frequency=99, extra_args=(), extra_env=None, extra_bus_policies=()):
        self.tmp = tempfile.mkdtemp(prefix="vprof-test-")
        self.socket = os.path.join(self.tmp, "system_bus_socket")
        self.address = f"unix:path={self.socket}"
        self.env = dict(os.environ, DBUS_SYSTEM_BUS_ADDRESS=self.address)
        self.frequency = frequency
        self.extra_args = list(extra_args)
        self.daemon_env = dict(self.env, **(extra_env or {}))  # for vprofd only, not for the clients
        self.bus = None
        self.daemon = None
        self.daemon_log = os.path.join(self.tmp, "vprofd.log")
        self.children = []
        self.extra_bus_policies = list(extra_bus_policies)  # more bus policy files, e.g. polkit's
        # Each environment saves its targets in its own directory, not in the machine's /var/lib/vprofd.
        self.state_directory = os.path.join(self.tmp, "state")

    # --- lifecycle -------------------------------------------------------------------------------------------
    def start(self, wait=True):
        with open(os.environ["VPROF_BUS_CONF_IN"]) as f:
            conf = f.read().replace("@SOCKET@", self.socket).replace("@POLICY@", os.environ["VPROF_POLICY"])
        includes = "".join(f"  <include>{p}</include>\n" for p in self.extra_bus_policies)
        conf = conf.replace("</busconfig>", includes + "</busconfig>")
        conf_path = os.path.join(self.tmp, "bus.conf")
        with open(conf_path, "w") as f:
            f.write(conf)
        os.chmod(self.tmp, 0o755)  # the unprivileged test user must reach the socket
        # Its log to a file, not to a pipe that nobody reads: dbus-daemon logs every call its policy rejects and,
        # once the pipe's 64 KiB are full, blocks in write() and the whole bus with it.
        with open(os.path.join(self.tmp, "dbus-daemon.log"), "w") as log:
            self.bus = subprocess.Popen(["dbus-daemon", "--nofork", "--nopidfile", f"--config-file={conf_path}"],
                                        stdout=subprocess.DEVNULL, stderr=log)
        self._wait_for(lambda: os.path.exists(self.socket), 10, "dbus-daemon socket")
        self.start_daemon(wait)
        return self

    def daemon_command(self):
        return [os.environ["VPROFD"], "--frequency", str(self.frequency),
                f"--state-directory={self.state_directory}"] + self.extra_args

    def start_daemon(self, wait=True):
        """Start vprofd; with wait, return once it answers (vprofctl status)."""
        # The child keeps its own copy of the descriptor.
        with open(self.daemon_log, "a") as log:
            self.daemon = subprocess.Popen(self.daemon_command(), env=self.daemon_env, stdout=log, stderr=log)
        if not wait:
            return
        deadline = time.monotonic() + 20
        while time.monotonic() < deadline:
            if self.daemon.poll() is not None:
                text = self.log_text()
                if "Failed to load the BPF program" in text or "Failed to open a" in text:
                    raise BpfUnavailable(text)
                raise RuntimeError(f"vprofd exited with {self.daemon.returncode}:\n{text}")
            if self.ctl("status").returncode == 0:
                return
            time.sleep(0.1)
        raise RuntimeError("vprofd did not come up:\n" + self.log_text())

    def stop(self):
        """Stop everything; returns what went wrong with the daemon itself (a crash, a sanitizer report)."""
        problems = []
        for p in self.children:
            if p.poll() is None:
                p.kill()
                p.wait()
        for p in (self.daemon, self.bus):
            if p and p.poll() is None:
                p.terminate()
                try:
                    p.wait(10)
                except subprocess.TimeoutExpired:
                    p.kill()
                    p.wait()
        if self.daemon:
            log = self.log_text()
            if self.daemon.returncode != 0:
                problems.append(f"vprofd exited with status {self.daemon.returncode} on SIGTERM")
            if "Sanitizer" in log or "runtime error:" in log:
                problems.append("vprofd's log has a sanitizer report")
            if problems:
                problems.append(log)
        shutil.rmtree(self.tmp, ignore_errors=True)
        return problems

    def log_text(self):
        with open(self.daemon_log) as f:
            return f.read()

    @staticmethod
    def _wait_for(cond, timeout, what):
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if cond():
                return
            time.sleep(0.05)
        raise RuntimeError(f"timed out waiting for {what}")

    # --- clients ---------------------------------------------------------------------------------------------
    def public_copy(self, path):
        """A copy of a binary that another user can run: the build tree may sit below a directory only root
        can enter (a clone under /root)."""
        copy = os.path.join(self.tmp, "public-" + os.path.basename(path))
        if not os.path.exists(copy):
            shutil.copy(path, copy)
            os.chmod(copy, 0o755)
        return copy

    def as_user(self, user, cmd):
        return ["setpriv", f"--reuid={user}", f"--regid={primary_gid(user)}", "--clear-groups",
                self.public_copy(cmd[0]), *cmd[1:]]

    def ctl(self, *args, user=None, timeout=30):
        cmd = [os.environ["VPROFCTL"], *map(str, args)]
        if user:
            cmd = self.as_user(user, cmd)
        return subprocess.run(cmd, env=self.env, capture_output=True, text=True, timeout=timeout)

    def ctl_json(self, *args, user=None):
        r = self.ctl("--json", *args, user=user)
        if r.returncode != 0:
            raise AssertionError(f"vprofctl {' '.join(map(str, args))} failed ({r.returncode}): {r.stderr}")
        return json.loads(r.stdout)

    def dbus_send(self, method, *args, interface="org.vprof.Profiler1"):
        cmd = ["dbus-send", "--system", "--print-reply", "--dest=org.vprof.Profiler1", "/org/vprof/Profiler1",
               f"{interface}.{method}", *args]
        return subprocess.run(cmd, env=self.env, capture_output=True, text=True, timeout=30)

    # --- workloads -------------------------------------------------------------------------------------------
    def spawn_demo(self, *args, wait=True, user=None, binary=None):
        """Start vprof-demo (or a copy of it); with wait, it blocks before working until go() so it can be
        attached first."""
        cmd = [binary or os.environ["VPROF_DEMO"], *map(str, args)] + (["--wait-stdin"] if wait else [])
        if user:
            cmd = self.as_user(user, cmd)
        p = subprocess.Popen(cmd, stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
        self.children.append(p)
        if wait:
            line = p.stdout.readline()
            assert line.startswith("ready "), f"vprof-demo said {line!r}"
        return p

    @staticmethod
    def go(p):
        p.stdin.write("go\n")
        p.stdin.flush()


def primary_gid(uid):
    """The primary group of user uid (a UID or a name), for setpriv --regid: never the UID itself taken as a GID,
    which may name another group (the readers' group `vprof`, GID 994 on a machine where the package was installed, let a
    test's "stranger" read root's targets)."""
    return (pwd.getpwnam(uid) if isinstance(uid, str) else pwd.getpwuid(int(uid))).pw_gid


def add_user(name):
    """The UID of a system user made for a test (created if missing; the test removes it with remove_user)."""
    if subprocess.run(["id", "-u", name], capture_output=True).returncode != 0:
        subprocess.run(["useradd", "--system", "--no-create-home", "--shell", "/usr/sbin/nologin", name],
                       check=True)
    return int(subprocess.run(["id", "-u", name], capture_output=True, text=True, check=True).stdout)


def remove_user(name):
    subprocess.run(["userdel", name], capture_output=True)


def daemon_usage(pid):
    """CPU seconds (user + system) and peak RSS in KiB of a running process."""
    with open(f"/proc/{pid}/stat") as f:
        fields = f.read().rsplit(")", 1)[1].split()
    ticks = os.sysconf("SC_CLK_TCK")
    cpu = (int(fields[11]) + int(fields[12])) / ticks
    hwm = 0
    with open(f"/proc/{pid}/status") as f:
        for line in f:
            if line.startswith("VmHWM:"):
                hwm = int(line.split()[1])
    return cpu, hwm


def sanitized(binary):
    """Whether binary was built with AddressSanitizer (tools/test.sh's second build)."""
    r = subprocess.run(["ldd", binary], capture_output=True, text=True)
    return "libasan" in r.stdout


def wait_for(what, cond, timeout=30):
    """cond()'s first true value, asked every 50 ms; an AssertionError naming what after timeout seconds. For
    a wait on something observable, in place of a fixed sleep that must cover the slowest machine."""
    deadline = time.monotonic() + timeout
    while True:
        value = cond()
        if value:
            return value
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out after {timeout} s waiting for {what}")
        time.sleep(0.05)


class MissingInCI(Exception):
    """A prerequisite is missing on a CI machine, which has them all: a failure, not a skip."""


def skip_or_fail(reason):
    """A prerequisite is missing: outside CI the test skips; in CI it fails."""
    if os.environ.get("CI") == "true":
        raise MissingInCI(f"cannot run in CI: {reason}")
    raise unittest.SkipTest(reason)


def require_bpf():
    """Root and kernel BTF, or skip_or_fail()."""
    if os.geteuid() != 0:
        skip_or_fail("needs root (BPF programs and perf events)")
    if not os.path.exists("/sys/kernel/btf/vmlinux"):
        skip_or_fail("needs kernel BTF at /sys/kernel/btf/vmlinux")


def _start(cls=None, **kwargs):
    """A started VprofEnv (or subclass cls); a machine that cannot load the BPF program skip_or_fail()s."""
    require_bpf()
    env = (cls or VprofEnv)(**kwargs)
    try:
        return env.start()
    except BpfUnavailable as e:
        env.stop()
        skip_or_fail(f"BPF is unavailable here:\n{e}")


def _stop_cleanly(env):
    """Stop env; raises when its daemon did not exit cleanly or reported a sanitizer error."""
    problems = env.stop()
    for p in env.children:
        for f in (p.stdin, p.stdout, p.stderr):
            if f:
                f.close()
    if problems:
        raise AssertionError("\n".join(problems))


# --- unittest modules: setUpModule(), the base class, main() ---------------------------------------------------
def start_module_env(cls=None, **kwargs):
    """For setUpModule(): the environment the module's tests share (its ENV; cls: a VprofEnv subclass, kwargs:
    VprofEnv's), stopped after the module's last test. A machine that cannot run it skips the whole module; a
    daemon that did not stop cleanly fails it."""
    env = _start(cls, **kwargs)
    unittest.addModuleCleanup(_stop_cleanly, env)
    return env


def probe_module():
    """For setUpModule() of a module whose tests start environments of their own: one standard start and stop,
    so that a machine that cannot run them skips the module once rather than failing every test."""
    _stop_cleanly(_start())


class TestCase(unittest.TestCase):
    """The base of every integration test case."""

    def start_env(self, cls=None, wait=True, **kwargs):
        """An environment of this test's own (cls: a VprofEnv subclass, kwargs: VprofEnv's), stopped when the
        test ends; the test fails if its daemon did not stop cleanly."""
        env = (cls or VprofEnv)(**kwargs)
        self.addCleanup(_stop_cleanly, env)
        env.start(wait)
        return env


class _TimedResult(unittest.TextTestResult):
    """Notes each test's wall time, so that a slow test shows where its time goes (tests/README.md)."""

    def startTest(self, test):
        self._started = time.monotonic()
        super().startTest(test)

    def stopTest(self, test):
        super().stopTest(test)
        self.durations = getattr(self, "durations", [])
        self.durations.append((time.monotonic() - self._started, test.id()))


class _TimedRunner(unittest.TextTestRunner):
    resultclass = _TimedResult


def _print_durations(result):
    import sys
    durations = sorted(getattr(result, "durations", []), reverse=True)
    if durations:
        print(f"wall time per test ({sum(d for d, _ in durations):.1f} s in all):", file=sys.stderr)
        for seconds, name in durations:
            print(f"  {seconds:6.1f} s  {name.split('.', 1)[-1]}", file=sys.stderr)


def _adopt_orphans():
    """Make this process the reaper of its descendants' orphans (PR_SET_CHILD_SUBREAPER): a workload's children
    outlive it when a test kills it, and hold meson's pipes open (their stderr) until they end."""
    import ctypes
    ctypes.CDLL(None, use_errno=True).prctl(36, 1, 0, 0, 0)


def _kill_leftovers():
    """Kill what the tests left behind, returning how many: meson waits for every process holding the test's
    pipes (a storm's children sleeping 60 s made integration-groups wait 34 s after its last test)."""
    import glob
    import signal
    killed = 0
    for _ in range(10):  # a child's own children come to us as it dies
        pids = set()
        for path in glob.glob(f"/proc/{os.getpid()}/task/*/children"):
            with open(path) as f:
                pids.update(int(x) for x in f.read().split())
        if not pids:
            break
        for pid in pids:
            try:
                os.kill(pid, signal.SIGKILL)
                os.waitpid(pid, 0)
                killed += 1
            except (ProcessLookupError, ChildProcessError):
                pass
    return killed


def main():
    """Run the __main__ module's tests and exit as meson reads it: 0 passed, 1 failed, 77 (skipped) when
    setUpModule() skipped the module."""
    import sys
    _adopt_orphans()
    result = unittest.main(module="__main__", verbosity=2, exit=False, testRunner=_TimedRunner).result
    _print_durations(result)
    left = _kill_leftovers()
    if left:
        print(f"processes left behind by the tests, killed: {left}", file=sys.stderr)
    if result.wasSuccessful() and result.testsRun == 0 and result.skipped:
        sys.exit(SKIP)
    sys.exit(0 if result.wasSuccessful() else 1)


# --- scripts that are not unittest modules (the benchmarks) ------------------------------------------------------
def _exit_on_skip(f, *args, **kwargs):
    """f(), where a skip exits the script with 77 and a prerequisite missing in CI fails it."""
    try:
        return f(*args, **kwargs)
    except unittest.SkipTest as e:
        print(f"SKIP: {e}")
        raise SystemExit(SKIP)
    except MissingInCI as e:
        raise SystemExit(f"FAIL: {e}")


def require_bpf_or_skip():
    _exit_on_skip(require_bpf)


def start_env_or_skip(cls=None, **kwargs):
    """A started VprofEnv (or subclass cls), for scripts and for the tests that start one more environment."""
    return _exit_on_skip(_start, cls, **kwargs)
